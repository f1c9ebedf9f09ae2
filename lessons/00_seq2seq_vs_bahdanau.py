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
# state, $c = h_S$. The decoder starts from $c$ and writes French one word at a time; in the
# form used here (Cho et al.'s recurrence) it also reads $c$ at every step (Sutskever et
# al. pass $c$ only as the decoder's initial state):
#
# $$s_t = f(s_{t-1}, y_{t-1}, c), \qquad p(y_t \mid y_{<t}, x) =
#   \operatorname{softmax}(W_o s_t + b_o).$$
#
# (Cho et al.'s output layer $g(y_{t-1}, s_t, c)$ also reads $y_{t-1}$ and $c$ directly;
# the kit's reads $s_t$ only, which already depends on both.)
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
# **Query, keys and values.** In the vocabulary of the Transformer lessons, the *query* is
# the decoder state $s_{t-1}$ (what the decoder is looking for), the *keys* are the
# annotations $h_j$ (what each source word offers to be matched against) and the *values*
# are the same annotations $h_j$ (what is read out): keys = values = $h_j$. Attention is
# then one formula, whatever the score:
#
# $$c_t = \sum_j \operatorname{softmax}_j\bigl(a(\text{query}, \text{key}_j)\bigr)\,
#   \text{value}_j = \sum_j \operatorname{softmax}_j\bigl(a(s_{t-1}, h_j)\bigr)\, h_j .$$
#
# Lessons 01-05 keep this formula and change what the query, keys and values are and how
# they are scored.
#
# Bahdanau's score $a(s, h) = v_a^\top \tanh(W_a s + U_a h)$ is called *additive*; Luong,
# Pham and Manning (2015) call the same score *concat*, because it can be written
# $v_a^\top \tanh\bigl(W [s; h]\bigr)$ with $W = [W_a \; U_a]$: one dense layer on the
# concatenated query and key.
#
# **Padding.** A batch pads its sentences to one width. The forward GRU may run on into the
# padding (its states at the real words are done by then), but the backward GRU must start
# at the last *real* word, or $\overleftarrow{h}_j$ would summarise pad tokens.
# `kerasattn.layers.EncoderGRU` reverses each sentence within its own length before the
# backward pass and reverses the result back, so no annotation and neither final state
# depends on a pad; the decoder then gives the padding weight 0 with the source mask.
#
# This lesson trains both models on the same data with the same budget and compares their
# learning curves, their BLEU on the test split, and their BLEU as a function of sentence
# length (the shape of the paper's Figure 2). The lesson's minutes are split equally over
# the two.

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
# | additive (Bahdanau), "concat" (Luong) | $v^\top \tanh(W s + U h)$ | $W, U, v$ | a one-hidden-layer MLP; any sizes |
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
# What to look for: the attention model's validation loss falls faster and lower. With a
# long enough budget the baseline's curve flattens while the attention model's keeps
# falling: the baseline is then limited by what fits in $c$. With the default budget the
# baseline is usually still learning when its time runs out (see "The paper's numbers
# beside ours" below); give both more time with `--minutes` to see it flatten.

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
# $\alpha_{tj}$. On a test sentence of medium length the alignment is mostly diagonal:
# English and French put most words in the same order.

# %%
lesson.attention_figure(bahdanau, "attention_bahdanau.png",
                        title="Bahdanau attention (additive score, from s_{t-1})")

# %%
# Every attention weight of this translation, interactive: open the page in any browser
# (it needs no network); in a notebook it shows below.
lesson.explorer(bahdanau, "explorer_bahdanau.html")

# %% [markdown]
# ## A non-monotonic alignment: "the european economic area"
#
# Bahdanau et al. (2015, Figure 3) show the alignment leaving the diagonal where French
# reorders: "the European Economic Area" becomes "la zone économique européenne", the noun
# first and the two adjectives after it in mirror order. The built-in corpus has the same
# rule (`kerasattn/data/lexicon.py`: post-nominal adjectives come out in mirror order), so
# we ask the trained model for a sentence built around that phrase. Its reference
# translation is "leur chat lit la zone économique européenne .". What to look for: an
# anti-diagonal block, "zone" reading "area", "économique" reading "economic" and
# "européenne" reading "european". A model that shows it learned the reordering from
# sentence pairs alone; nobody told it about alignments. (In `--quick` mode the model is
# barely trained and the map is noise.) With `--data FILE` this phrase is not in the
# corpus: the cell draws a second, longer sentence from the real test split instead.

# %%
if lesson.data.real:
    long_pair = lesson.example_sentence(min_len=10, max_len=16)
    figure_name, sentence = "attention_bahdanau_longer.png", long_pair[0]
    title = "Bahdanau attention on a longer real test sentence"
else:
    figure_name = "attention_bahdanau_european_economic_area.png"
    sentence = "their cat reads the european economic area ."
    title = "non-monotonic alignment: the european economic area"
lesson.attention_figure(bahdanau, figure_name, sentence=sentence, title=title)

# %% [markdown]
# ## The paper's numbers beside ours
#
# Bahdanau et al. (2015), Table 1: BLEU on the WMT'14 English-to-French test set
# (news-test-2014, 3,003 sentences). The neural models were trained on a 348-million-word
# parallel corpus with a 30,000-word vocabulary, for about five days on a GPU
# (RNNsearch-50* much longer); Moses also used a separate 418-million-word monolingual
# corpus. "-50" means trained on sentences of up to 50 words; "no UNK" scores only the
# sentences without unknown words.
#
# | model (Bahdanau et al. 2015, WMT'14 en-fr) | BLEU, all sentences | BLEU, no UNK |
# |:---|---:|---:|
# | RNNencdec-50 (encoder-decoder, no attention) | 17.82 | 26.71 |
# | RNNsearch-50 (attention) | 26.75 | 34.16 |
# | RNNsearch-50* (attention, trained longer) | 28.45 | 36.15 |
# | Moses (phrase-based statistical MT) | 33.30 | 35.63 |
#
# The next cell prints this run's two models on the kit's built-in corpus. **These are
# different data sets at very different scales: do not compare numbers across the two
# tables**, only the pattern. Here the vocabulary has a few hundred words, every source has
# exactly one correct translation (a perfect model scores 100), and each model trains for
# about two minutes on a CPU. What carries over is the direction and the reason:
# attention beats the fixed context, and the gap grows with sentence length up to the
# training lengths (beyond them, on sentences longer than any seen in training, the
# attention model loses some BLEU too, so the gap can narrow, but it stays far ahead).
#
# Our gap is much larger than the paper's, and harder compression is not the reason. By the
# ratio of question 8 below, the paper's RNNencdec-50 squeezes harder than our `seq2seq`: up
# to 50 training words of 620-dimensional embeddings into a 1,000-number state, 31,000
# numbers into 1,000 (31 : 1), against at most 30 training words of 64 dimensions into 128
# numbers here (15 : 1; 20 : 1 for the 40-word test sentences). Two
# other things make the difference. *Training time*: each model here trains for about
# two minutes, against about five days in the paper. The attention model can read each
# source word's annotation directly and learns the corpus within that time; the baseline
# must first learn to pack a whole sentence into $c$, which takes far longer, and has got
# only part of the way when the budget ends. *The data*: the built-in corpus is synthetic, a
# few hundred words and regular rules with exactly one correct translation per sentence, so
# a model that has learned the rules scores close to 100. Real news text has rare and
# unknown words and many acceptable translations scored against a single reference, which
# holds down every model's BLEU, and the gap between them with it.
#
# With `--data FILE` the table is for your corpus, and adds BLEU against every reference
# of each distinct test source (Tatoeba often has several translations of one sentence).

# %%
if lesson.data.real:
    print(format_table(["this run: " + str(settings.data), "BLEU", "BLEU, one ref / source",
                        "BLEU, all refs / source"],
                       [[r["model"], f"{r['bleu']:.1f}", f"{r['bleu_single']:.1f}",
                         f"{r['bleu_multi']:.1f}"] for r in (r_seq, r_att)]))
else:
    print(format_table(["this run: built-in corpus, test split", "BLEU", "exact match"],
                       [[r["model"], f"{r['bleu']:.1f}", f"{r['exact_match']:.1%}"]
                        for r in (r_seq, r_att)]))

# %% [markdown]
# ## What goes wrong when data or training is short
#
# With all 10,000 training pairs the attention model learns this corpus almost perfectly.
# Lesson 06 takes a tenth of them and shows three classic additions at work where the
# base model makes mistakes: scheduled sampling against exposure bias, coverage against
# repeated and dropped words, and back-translation, which turns French-only text into
# extra training pairs.

# %% [markdown]
# ## Check your understanding
#
# Try each question before opening its answer.
#
# **1.** In a basic encoder-decoder, what is the context vector? (a) the average of the
# word embeddings; (b) the encoder's final hidden state; (c) the sum of all hidden states;
# (d) a random initialisation.
#
# <details><summary>Answer</summary>
#
# (b). In this kit's `seq2seq` it is the GRU encoder's state at the last real word,
# $c = h_S$: `units` = 128 numbers, whatever the sentence length.
#
# </details>
#
# **2.** Why use two separate networks, an encoder and a decoder?
#
# <details><summary>Answer</summary>
#
# They do different jobs: one reads a sentence in one language, the other writes a
# sentence in another, one word at a time, conditioned on what it has written so far. They
# have different vocabularies and different inputs, so each gets its own weights.
#
# </details>
#
# **3.** What does teacher forcing mean?
#
# <details><summary>Answer</summary>
#
# In training the decoder is fed the *true* previous word, not its own prediction: here
# the decoder input is `<bos> y` and the label is `y <eos>`. Training is faster and more
# stable, and all positions are scored in one pass. The price: at inference the decoder
# feeds back its own predictions, a situation it never met in training, so an early
# mistake can push it off course (exposure bias).
#
# </details>
#
# **4.** What is the key limitation of the basic seq2seq model? (a) it is too slow to
# train; (b) the information bottleneck; (c) it cannot handle grammar; (d) it needs
# parallel data.
#
# <details><summary>Answer</summary>
#
# (b). The whole source must pass through one fixed-size vector, the same size for a
# 3-word and a 40-word sentence. This lesson's BLEU-against-length figure shows the
# consequence.
#
# </details>
#
# **5.** What does attention compute at each decoder step?
#
# <details><summary>Answer</summary>
#
# A weighted sum of the encoder states, $c_t = \sum_j \alpha_{tj} h_j$, with weights from
# a softmax over the scores $e_{tj} = a(s_{t-1}, h_j)$: a fresh context for every word.
#
# </details>
#
# **6.** Why does attention help with long sentences? (a) it is faster; (b) it uses less
# memory; (c) the decoder has direct access to every source word; (d) a better
# vocabulary.
#
# <details><summary>Answer</summary>
#
# (c). Nothing has to be squeezed into one vector: the annotations grow with the sentence
# and the decoder picks what it needs at each step.
#
# </details>
#
# **7.** Why does Bahdanau's encoder read the sentence in both directions?
#
# <details><summary>Answer</summary>
#
# A forward GRU's state at word $j$ has seen only the words up to $j$. Concatenating a
# backward GRU's state, which has read from the end of the sentence back to $j$, gives
# each annotation $h_j$ the context on both sides of its word, which is what the decoder
# needs when it aligns to that one word.
#
# </details>
#
# **8. The compression ratio.** The course notes count the numbers that must fit into the
# context vector: a sentence of $n$ words with $d$-dimensional embeddings holds $n \cdot d$
# numbers. (a) A 20-word sentence, 100-dimensional embeddings, a 256-number context: what
# is the ratio? (b) This lesson's `seq2seq` has 64-dimensional embeddings and a 128-number
# context, and the longest test sentences have 40 words: what is the ratio for them, and
# for a 5-word sentence? (c) How many numbers does the `bahdanau` model keep for the
# decoder to read from a 40-word sentence?
#
# <details><summary>Answer</summary>
#
# (a) 20 × 100 = 2,000 numbers into 256: ratio 7.8 : 1 (about 8 : 1).
# (b) 40 × 64 = 2,560 numbers into 128: ratio 20 : 1. A 5-word sentence: 320 into 128,
# ratio 2.5 : 1. The longer the sentence, the harsher the squeeze: the shape of the
# BLEU-against-length figure.
# (c) One annotation of 2 × 64 = 128 numbers per word: 40 × 128 = 5,120 numbers. The
# memory grows with the sentence; no fixed-size bottleneck is left.
#
# </details>
#
# **9. "The black cat", encoded and decoded.** Walk through how `seq2seq` translates "the
# black cat" into "le chat noir": which states does the encoder compute, what does the
# decoder start from, what does it read and write at each step, and how many decoder steps
# are there? Then: what changes with attention at the step that writes "noir"?
#
# <details><summary>Answer</summary>
#
# Encoder: $h_1 = \mathrm{GRU}(x_{the}, h_0)$, $h_2 = \mathrm{GRU}(x_{black}, h_1)$,
# $h_3 = \mathrm{GRU}(x_{cat}, h_2)$; the context is $c = h_3$, which has read all three
# words. Decoder: $s_0 = \tanh(W_b c)$; step 1 reads `<bos>` (and $c$) and writes "le";
# step 2 reads "le" and writes "chat"; step 3 reads "chat" and writes "noir"; step 4 reads
# "noir" and writes `<eos>`: 4 decoder steps for 3 words, the same $c$ at every step.
# With attention, step 3 scores $s_2$ (the state after "le chat") against $h_1, h_2, h_3$
# and reads $c_3 = \sum_j \alpha_{3j} h_j$ with most of the weight on $h_2$, "black": the
# adjective is found where it is, although French writes it after the noun.
#
# </details>
#
# **10.** In the lecture's example at the top of this lesson ($s_2 = [0.7, 0.8]$, and
# $h_1 \dots h_4$ for "the black cat sat"), compute the dot-score weights $\alpha$ and the
# context $c$ by hand.
#
# <details><summary>Answer</summary>
#
# e = [0.23, 1.28, 0.67, 0.29];
# α = [0.1545, 0.4415, 0.2399, 0.1641], most weight on "black";
# c = [0.5378, 0.5406].
#
# </details>

# %% [markdown]
# ## Next: your exercises
#
# Check each one with `kerasattn grade exercises/NN_*.py` (hints: `kerasattn hint NN`).
#
# - 01 `noir_by_hand`: scores, softmax and context for the lecture's example, by hand.
# - 02 `additive_score`: the additive (concat) score $v^\top \tanh(W s + U h)$.
# - 03 `masked_softmax`: a softmax that gives padding no weight.
# - 04 `bahdanau_attention`: the context vector and a Bahdanau attention layer.
# - 16 `lab_bahdanau_model`: the attention lab model, encoder to output layer.
# - 25 `greedy_decoding` and 26 `bleu_statistics`: the decoding loop and the score of this lesson.

# %%
record = lesson.finish()
