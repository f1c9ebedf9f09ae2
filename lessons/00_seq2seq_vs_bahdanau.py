# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 00: the bottleneck and its cure (seq2seq versus Bahdanau attention)
#
# **The baseline.** A sequence-to-sequence model (Sutskever et al., 2014; Cho et al., 2014)
# reads the English sentence $x_1 \dots x_S$ with a recurrent encoder and keeps only its last
# state, $c = h_S$. The decoder starts from $c$ and writes French one word at a time:
#
# $$s_t = f(s_{t-1}, y_{t-1}, c), \qquad p(y_t \mid y_{<t}, x) = g(y_{t-1}, s_t, c).$$
#
# Every detail of the source has to squeeze through the one fixed-size vector $c$. Two
# things go wrong: quality falls as sentences get longer, and sentences longer than any seen
# in training are hard to get right at all.
#
# **The cure (Bahdanau, Cho and Bengio, 2015).** Keep *all* the encoder states. A
# bidirectional GRU gives each source word an annotation $h_j = [\overrightarrow{h}_j;
# \overleftarrow{h}_j]$ that describes the word in its context. Before writing word $t$, the
# decoder scores every annotation against its previous state, turns the scores into weights
# and reads a fresh context vector:
#
# $$e_{tj} = v_a^\top \tanh(W_a s_{t-1} + U_a h_j), \qquad
#   \alpha_{tj} = \frac{\exp e_{tj}}{\sum_k \exp e_{tk}}, \qquad
#   c_t = \sum_j \alpha_{tj} h_j,$$
#
# $$s_t = f(s_{t-1}, [y_{t-1}; c_t]).$$
#
# The score uses $s_{t-1}$, the state *before* step $t$, and it lives inside the recurrence:
# the context feeds the GRU that produces $s_t$. (Luong-style attention, computed after the
# GRU from $s_t$, is a different model.) The weights $\alpha_{t\cdot}$ are a soft alignment:
# we can draw them.
#
# **Padding.** A batch pads its sentences to one width. The forward GRU may run on into the
# padding (its states at the real words are done by then), but the backward GRU must start
# at the last *real* word, or $\overleftarrow{h}_j$ would summarise pad tokens.
# `kerasattn.layers.EncoderGRU` reverses each sentence within its own length before the
# backward pass and reverses the result back, so neither direction reads a pad; the decoder
# then gives the padding weight 0 with the source mask.
#
# This lesson trains both models on the same data with the same budget and compares their
# learning curves, their BLEU on the test split, and their BLEU as a function of sentence
# length (the shape of the paper's Figure 2).

# %%
from kerasattn.course import Lesson, heading, parse_lesson_args

settings = parse_lesson_args(0, "Lesson 00: seq2seq versus Bahdanau attention", n_models=2)
lesson = Lesson(0, "seq2seq versus Bahdanau attention", settings)

# %% [markdown]
# ## Three ways to score, on the lecture's toy example
#
# The score $a(s_{t-1}, h_j)$ can take several forms:
#
# | score | formula | parameters | note |
# |:---|:---|:---|:---|
# | additive (Bahdanau) | $v^\top \tanh(W s + U h)$ | $W, U, v$ | a one-hidden-layer MLP; any sizes |
# | dot (Luong) | $s \cdot h$ | none | needs $\dim s = \dim h$ |
# | general (Luong) | $s^\top W h$ | $W$ | a learned bilinear form |
#
# The lecture's hand computation: the decoder has written "le chat" and is about to write
# "noir"; $s_2 = [0.7, 0.8]$ and the encoder states for "the black cat sat" are
# $h_1 = [0.1, 0.2]$, $h_2 = [0.8, 0.9]$, $h_3 = [0.5, 0.4]$, $h_4 = [0.3, 0.1]$.
# With the dot score, $e = [0.23, 1.28, 0.67, 0.29]$ and the softmax puts the most weight on
# "black". The kit's `BahdanauAttention` layer computes the same numbers (the additive and
# general scores use freshly initialised weights here, so their numbers are arbitrary until
# trained: the point is the mechanics, not the values).

# %%
import numpy as np
import keras
from kerasattn.layers import BahdanauAttention
from kerasattn.course import format_table

s2 = np.array([[0.7, 0.8]], dtype="float32")                             # (B=1, d)
H = np.array([[[0.1, 0.2], [0.8, 0.9], [0.5, 0.4], [0.3, 0.1]]], dtype="float32")  # (1, 4, d)
words = ["the", "black", "cat", "sat"]
keras.utils.set_random_seed(0)
rows = []
for score in ("dot", "general", "additive"):
    layer = BahdanauAttention(units=4 if score == "additive" else None, score=score)
    context, alpha = layer(s2, H)                                         # (1, d), (1, 4)
    alpha = keras.ops.convert_to_numpy(alpha)[0]
    rows.append([score] + [f"{a:.3f}" for a in alpha] + [words[int(alpha.argmax())]])
print(format_table(["score"] + [f"alpha({w})" for w in words] + ["most weight"], rows))
dot_e = H[0] @ s2[0]
print("dot scores by hand:", np.round(dot_e, 2), "-> softmax:",
      np.round(np.exp(dot_e) / np.exp(dot_e).sum(), 3))

# %% [markdown]
# ## The two architectures
#
# Left, the encoder; right, the decoder. In seq2seq the only path from source to target is
# the single vector $c$. In Bahdanau's model the decoder reads all annotations at every step,
# through the attention box, using its previous state $s_{t-1}$.

# %%
lesson.architecture("seq2seq")

# %%
lesson.architecture("bahdanau")

# %% [markdown]
# ## Train both, same data, same budget
#
# Training uses teacher forcing: the decoder input is `<bos> y` and the label is `y <eos>`;
# the loss ignores padding. Early stopping watches the validation loss and keeps the best
# weights.

# %%
seq2seq = lesson.train("seq2seq")
bahdanau = lesson.train("bahdanau")

# %% [markdown]
# ## Learning curves with and without attention
#
# What to look for: given enough training, the attention model's validation loss keeps
# falling after the baseline's has flattened, because the baseline is limited by what fits
# in $c$, not by training time. (The default budget is a few minutes of CPU; if the curves
# are still falling together when it runs out, give them more with `--minutes`.)

# %%
lesson.curves(["seq2seq", "bahdanau"], "curves_with_without_attention.png",
              title="training and validation loss: seq2seq vs Bahdanau")

# %% [markdown]
# ## BLEU and exact match on the test split
#
# Corpus BLEU (sacrebleu, 0-100) on the detokenised test sentences, and the share of test
# sentences translated exactly. Every source in the built-in corpus has one correct
# translation, so a perfect model scores 100.

# %%
r_seq = lesson.evaluate(seq2seq)
r_att = lesson.evaluate(bahdanau)
heading("sample translations: seq2seq")
lesson.samples(seq2seq)
heading("sample translations: bahdanau")
lesson.samples(bahdanau)

# %% [markdown]
# ## BLEU against sentence length (the paper's Figure 2)
#
# The test split includes sentences longer than any seen in training. In the paper (and in
# a run trained long enough) the baseline's BLEU falls as the source gets longer while the
# attention model's stays up. Compare your figure with that shape.

# %%
from kerasattn import plots

lesson.figure(plots.bleu_vs_length, "bleu_vs_length.png",
              {"seq2seq (fixed context)": [(b["label"], b["bleu"]) for b in r_seq["by_length"]],
               "bahdanau (attention)": [(b["label"], b["bleu"]) for b in r_att["by_length"]]},
              counts=[b["n"] for b in r_seq["by_length"]])

# %% [markdown]
# ## Where does the decoder look?
#
# Each row is one generated French word; each column an English word; the colour is
# $\alpha_{tj}$. The alignment is mostly diagonal, but where French puts the adjective after
# the noun ("the black cat" -> "le chat noir") the bright cells leave the diagonal: the
# model learned the reordering without ever being told about alignments.

# %%
lesson.attention_figure(bahdanau, "attention_bahdanau.png",
                        title="Bahdanau attention (additive score, from s_{t-1})")

# %%
record = lesson.finish()
