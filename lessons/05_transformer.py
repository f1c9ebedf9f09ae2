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
# # Lesson 05 (step 5): the full Transformer, and the road so far
#
# **What changes.** The last recurrence goes. The encoder becomes a stack of $N$ blocks,
# each [self-attention + AddNorm, FFN + AddNorm], with positional encodings added to the
# source embeddings; the decoder is the stack from lesson 04. Every position of the source
# is processed at once, and so is every position of the target during training.
#
# $$Z = \operatorname{AddNorm}\big(X, \operatorname{MHA}(X, X, X, \text{pad mask})\big),
#   \qquad H' = \operatorname{AddNorm}\big(Z, \operatorname{FFN}(Z)\big) \quad (\times N).$$
#
# **Receptive fields.** A convolution of width $k$ widens its reach by $(k - 1)/2$ words
# on each side per layer; a recurrent network reaches a word $d$ positions away through $d$
# steps. One self-attention layer connects every pair of positions directly, at a cost of
# $O(T^2)$ scores.
#
# **Masks.** Only the decoder's self-attention is causal. The encoder sees the whole
# sentence (it is given in full at inference too), and cross-attention may look at every
# real source word: those use padding masks only.
#
# **Training versus inference.** Training runs all target positions in parallel under
# teacher forcing; inference still generates one token at a time (with the K/V cache of
# lesson 04), feeding back its own predictions.
#
# **Regularisation once the model is all attention.** With no recurrence to slow it down,
# the model fits the training set fast and becomes over-confident. The course notes
# suggest three remedies:
# - *label smoothing* ($\epsilon = 0.1$) trains against a target that puts $1-\epsilon$ on
#   the right word and spreads $\epsilon$ over the vocabulary, which penalises
#   over-confident logits and usually improves BLEU even though perplexity gets worse;
# - *AdamW weight decay* shrinks weights directly (decoupled from the adaptive gradient
#   scaling, which is why AdamW and not Adam + L2);
# - *higher dropout* in the attention and feed-forward sublayers.
#
# What this kit does on the built-in corpus: **every** model of the course, from `seq2seq`
# on, already trains with label smoothing 0.1, AdamW with weight decay 1e-4 and gradient
# clipping at norm 1 (the defaults of `kerasattn.training.train`), so step 5 adds none of
# them. The Transformer's
# dropout is 0.1 (after the positional encoding, on the attention weights and on each
# sublayer's output), the rate of the paper's base model and the same rate as the other
# models: the higher dropout the notes suggest is not applied. What steps 4 and 5 do add
# is a learning-rate *warmup* (200 steps up to the peak rate, then decay as
# $1/\sqrt{\text{step}}$) with batches of 32, because the post-norm stack is unstable with
# large early steps, and the paper's Adam settings $\beta_2 = 0.98$, $\epsilon = 10^{-9}$
# (section 5.3; the other models keep Keras's defaults). This lesson does not measure a
# with/without comparison; to see one, train again with
# `lesson.train("transformer", label_smoothing=0.0)` or with
# `model_kwargs={"dropout": 0.3}` and compare the BLEU. On a real file (`--data`) the
# recipe printed by `lesson.train` decides instead, from the file's size and the budget: a
# constant learning rate without warmup (and Keras's Adam settings), with the batch size,
# dropout and label smoothing set by the number of pairs and of passes the budget allows.

# %%
from kerasattn.course import Lesson, heading, parse_lesson_args

settings = parse_lesson_args(5, "Lesson 05: the full Transformer and the evolution table")
lesson = Lesson(5, "the full Transformer, and the evolution table", settings)

# %% [markdown]
# ## Label smoothing, by hand
#
# The smoothed target for a vocabulary of 5 words when the right word is number 2.

# %%
import numpy as np

V, eps, right = 5, 0.1, 2
target = np.full(V, eps / V)
target[right] += 1 - eps
print("one-hot :", np.eye(V)[right])
print("smoothed:", np.round(target, 3), " sum =", target.sum())

# %% [markdown]
# ## The model
#
# The canonical figure: stacked encoder and decoder blocks joined by cross-attention.

# %%
lesson.architecture("transformer")

# %%
model = lesson.train("transformer")  # built-in corpus: label smoothing 0.1, weight decay 1e-4

# %%
result = lesson.evaluate(model)
heading("sample translations")
lesson.samples(model)

# %% [markdown]
# ## Longer than anything seen in training
#
# The test split holds sentences of 31-40 source words; no training sentence has more than
# 30. The recurrent models carry position implicitly in their state and degrade gently on
# those. A Transformer trained the paper's way, positions always counted from 0, meets
# source positional encodings $PE_{30..}$ its encoder never trained with (training targets
# reach 34 words, so the decoder has seen a few more), in combinations it never saw: on
# our corpus it scored BLEU 97-100 up to 30 words and 56-60 on 31-40 words, on every
# backend (docs/lessons.md).
#
# The fix used here on the built-in corpus is SHAPE (Kiyono et al., 2021),
# `kerasattn.layers.RandomPositionShift` (on a real file, `--data`, the recipe turns it
# off: its test sentences are as long as its training ones): during training every
# sentence pair starts at a random position $k \in \{0..K\}$
# ($K$ = `max_position_shift` = 32); the kit draws one $k$ per sentence pair and shares it
# between source and target, which keeps their relative alignment. Because
# $PE_{p+k}$ is $PE_p$ rotated by a fixed angle per frequency, the dot product of two
# encodings depends only on their distance, which the model still sees; what it can no
# longer do is rely on absolute positions, and the positions of a 40-word test sentence
# are no longer new at test time. At inference $k = 0$.
#
# It is a trade-off, not a free gain. Measured once per backend (TensorFlow / JAX / torch):
# without the shift with nothing else running, a 4.25-minute budget and a peak learning
# rate of 1e-3 (those runs are kept in this table only; docs/lessons.md gives their
# ranges); with it, this lesson's recorded runs (beside another busy process; by length in
# docs/lessons.md):
#
# | test sentences | BLEU without the shift | BLEU with the shift |
# |:---|:---|:---|
# | 31-40 words (200, longer than any training sentence) | 57.6 / 55.9 / 60.1 | 96.3 / 93.6 / 97.2 |
# | whole test split (1,200) | 81.7 / 81.1 / 83.5 | 97.4 / 94.5 / 97.4 |
# | 1-10 words | 99.4 / 99.7 / 99.7 | 98.9 / 98.5 / 99.5 |
# | 11-20 words | 98.2 / 99.2 / 99.0 | 98.4 / 95.8 / 98.1 |
# | 21-30 words | 96.8 / 97.9 / 97.2 | 97.2 / 93.7 / 96.7 |
#
# The long sentences gain 37-39 BLEU. The shorter buckets change by less than 1 BLEU on
# TensorFlow and torch, which fit 7 and 8 epochs in the budget; on JAX, which fits 5, they
# lose 1.2-4.2 BLEU. The columns differ in learning rate, budget and machine load as well
# as in the shift, so the table does not isolate the shift's cost on short sentences; its
# gain on long ones is far larger than those differences. Set `max_position_shift=0`
# (`lesson.train("transformer", model_kwargs={"max_position_shift": 0})`) to see the
# failure on long sentences yourself. Attention is not the whole story: how a model
# represents *position* decides how it generalises in length.

# %%
heading("BLEU by source length" + ("" if lesson.data.real else
                                   " (31+ = longer than any training sentence)"))
for b in result["by_length"]:
    bleu = "-" if b["bleu"] is None else f"{b['bleu']:5.1f}"
    print(f"{b['label']:>6} words: BLEU {bleu} ({b['n']} sentences)")

# %%
lesson.attention_figure(model, "attention_cross_transformer.png",
                        title="step 5: cross-attention of the last decoder block")

# %%
# Every attention weight of this translation, interactive: open the page in any browser
# (it needs no network); in a notebook it shows below.
lesson.explorer(model, "explorer_transformer.html")

# %% [markdown]
# ## The paper's numbers beside ours
#
# Vaswani et al. (2017), Table 2: BLEU on the WMT 2014 newstest2014 test sets and the
# estimated training cost in floating-point operations. English-German: 4.5 million
# sentence pairs; English-French: 36 million sentences. The base model trained for 12
# hours and the big model for 3.5 days, on 8 P100 GPUs. The paper gives one training cost
# per Transformer model, the same for both language pairs.
#
# | model (Vaswani et al. 2017) | BLEU en-de | BLEU en-fr | FLOPs en-de | FLOPs en-fr |
# |:---|---:|---:|---:|---:|
# | GNMT + RL (Wu et al. 2016) | 24.6 | 39.92 | 2.3e19 | 1.4e20 |
# | ConvS2S (Gehring et al. 2017) | 25.16 | 40.46 | 9.6e18 | 1.5e20 |
# | MoE (Shazeer et al. 2017) | 26.03 | 40.56 | 2.0e19 | 1.2e20 |
# | Transformer (base) | 27.3 | 38.1 | 3.3e18 | 3.3e18 |
# | Transformer (big) | 28.4 | 41.8 | 2.3e19 | 2.3e19 |
#
# The next cell prints this run's Transformer on the kit's built-in English-French corpus
# (or on your file, with `--data`; the sentences below describe the built-in one).
# **Different data, different scale: the numbers do not compare across the tables.** Our
# corpus has a few hundred words and one correct translation per sentence, and the model
# (its parameter count is printed below; the paper's base model has 65 million) trains
# for about four minutes on a CPU. The paper's point about cost is that a self-attention
# layer needs a constant number of sequential operations where a recurrent layer needs
# one per position (their Table 1), which pays off on hardware that runs many operations
# at once. On a 2-core CPU with models this small it does not show: in the kit's measured
# runs (the results table of the README and of docs/lessons.md, one run per lesson and
# backend, generated from the lessons' `results.json` files) the Transformer trains at
# fewer target tokens per second (batches of 32) than `bahdanau` (batches of 64). The
# tokens/s column of the evolution table below gives the figures for your machine.

# %%
from kerasattn import plots

print(f"this run, {'the real file' if lesson.data.real else 'built-in corpus'}, test split:")
print(plots.evolution_table_markdown([result]))

# %% [markdown]
# ## The evolution table: every model, the same data, the same lesson budget
#
# All seven models train on the same corpus with each model's recommended learning rate,
# early stopping, and a wall-clock budget per *lesson*: by default 4 minutes of training.
# Lessons 01-05 give it all to their one model; lesson 00 splits it equally over its two
# (about 2 minutes each for `seq2seq` and `bahdanau`), and early stopping may end any model
# sooner. Each row comes from the
# lesson that trains the model (its `results.json`, same settings and backend): run lessons
# 00-04 first to fill the table; a model not yet measured shows its parameter count only.
# Parameter counts, training time, training throughput (target tokens per second), and test
# BLEU.

# %%
from kerasattn.course import evolution_rows
from kerasattn import plots

rows = evolution_rows(lesson)
print(plots.evolution_table_markdown(rows))
(lesson.out / "evolution_table.md").write_text(plots.evolution_table_markdown(rows))
lesson.figure(plots.evolution_table_figure, "evolution_table.png", rows,
              title=f"from Bahdanau to the Transformer ({lesson.backend}, same data, "
                    f"same lesson budget)")

# %% [markdown]
# ## Check your understanding
#
# **1.** Which of the Transformer's three kinds of attention use the causal mask, and
# which only a padding mask?
#
# <details><summary>Answer</summary>
#
# Only the decoder's self-attention is causal. The encoder's self-attention sees the
# whole source (it is given in full at inference too), and the cross-attention may look
# at every real source word; both use the source padding mask.
#
# </details>
#
# **2.** Two words are 40 positions apart. How many layers of a convolution with kernel
# size 3 are needed before one can influence the other? How many recurrent steps? How
# many self-attention layers?
#
# <details><summary>Answer</summary>
#
# Each kernel-3 layer widens the reach by one word on each side, so 40 layers; a
# recurrent network needs 40 steps; one self-attention layer connects them directly, at a
# cost of $O(T^2)$ scores.
#
# </details>
#
# **3.** With label smoothing $\epsilon = 0.1$ and a vocabulary of 5 words, what target
# does the loss use for the right word and for each of the others? (As in the cell above,
# $\epsilon$ is spread over the whole vocabulary.)
#
# <details><summary>Answer</summary>
#
# Right word: $1 - \epsilon + \epsilon / V$ = 0.9 + 0.02 = 0.92; each other word:
# $\epsilon / V$ = 0.02. The five targets sum to 1. The kit's loss,
# `kerasattn.metrics.masked_sparse_ce(..., label_smoothing=0.1)`, is the cross-entropy
# against exactly this target.
#
# </details>
#
# **4.** Which of label smoothing, weight decay and the higher dropout the course notes
# suggest does step 5 add to the training of the earlier models?
#
# <details><summary>Answer</summary>
#
# None, on the built-in corpus. Every model of the course trains with label smoothing 0.1
# and AdamW weight decay 1e-4, and the Transformer's dropout is 0.1 like the others'. What
# the Transformer models (steps 4 and 5) add is the warmup schedule, smaller batches and
# the paper's Adam settings ($\beta_2 = 0.98$, $\epsilon = 10^{-9}$). On a real file the
# recipe sets all of these from the file's size and the budget.
#
# </details>
#
# **5.** Training sources have at most 30 words and the random position shift draws
# $k \in \{0, \dots, 32\}$. Counting positions from 0, what is the highest source position
# seen in training? Does a 40-word test sentence (decoded with $k = 0$) need a position
# never trained? And without the shift?
#
# <details><summary>Answer</summary>
#
# With the shift: 32 + 29 = 61, so the positions 0-39 of a 40-word sentence have all been
# trained. Without it, training only ever uses positions 0-29, and positions 30-39 are new
# at test time: the long-sentence failure measured above.
#
# </details>
#
# **6.** Training runs all target positions in parallel. Why can inference not do the
# same?
#
# <details><summary>Answer</summary>
#
# In training the whole reference is known, so with the causal mask every position is
# computed at once. At inference the input at position $t$ is the word the model itself
# wrote at $t - 1$, which does not exist until step $t - 1$ has run: generation is one
# token at a time, sped up by the K/V cache of lesson 04.
#
# </details>

# %% [markdown]
# ## Next: your exercises
#
# - 24 `warmup_schedule`: the Transformer's learning-rate schedule (warm-up, then
#   1/sqrt(step)).
# - 22 `assemble_transformer`: the full step-5 model, checked on a copy task.
# - 23 `label_smoothed_loss`: a masked, label-smoothed cross-entropy, a variant of the
#   kit's training loss that leaves `<pad>` out of the smoothing.
#
# Check each one with `kerasattn grade exercises/NN_*.py` (hints: `kerasattn hint NN`).
# `exercises/README.md` lists every exercise with its lesson. Then lesson 06
# (`kerasattn lesson 6`): exposure bias, coverage and back-translation.

# %%
record = lesson.finish()
