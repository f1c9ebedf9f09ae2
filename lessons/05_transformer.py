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
# **Receptive fields.** A convolution sees $k$ neighbours per layer; a recurrent network
# reaches a word $d$ positions away through $d$ steps. One self-attention layer connects
# every pair of positions directly, at a cost of $O(T^2)$ scores.
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
# the model fits the training set fast and becomes over-confident:
# - *label smoothing* ($\epsilon = 0.1$) trains against a target that puts $1-\epsilon$ on
#   the right word and spreads $\epsilon$ over the vocabulary, which penalises
#   over-confident logits and usually improves BLEU even though perplexity gets worse;
# - *AdamW weight decay* shrinks weights directly (decoupled from the adaptive gradient
#   scaling, which is why AdamW and not Adam + L2);
# - *dropout* on attention weights and on each sublayer's output, and a *warmup* of the
#   learning rate, because the post-norm stack is unstable with large early steps.

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
model = lesson.train("transformer", label_smoothing=0.1, weight_decay=1e-4)

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
# positional encodings $PE_{31..}$ it never trained with, in combinations it never saw: on
# our corpus it scored BLEU 97-100 up to 30 words and 56-60 on 31-40 words, on every
# backend (docs/lessons.md).
#
# The fix used here is SHAPE (Kiyono et al., 2021), `kerasattn.layers.RandomPositionShift`:
# during training every sentence pair starts at a random position $k \in \{0..K\}$
# ($K$ = `max_position_shift` = 32), the same $k$ for source and target. Because
# $PE_{p+k}$ is $PE_p$ rotated by a fixed angle per frequency, dot products between
# positions depend on their distance only, so nothing the model needs is lost; what it can
# no longer do is memorise absolute positions, and positions 31-72 are no longer new at
# test time. At inference $k = 0$. Measured on torch with the lesson's budget: BLEU on
# 31-40 words 60 -> 94, on the whole test split 83.5 -> 95.0. Set `max_position_shift=0`
# (`lesson.train("transformer", model_kwargs={"max_position_shift": 0})`) to see the
# failure yourself. Attention is not the whole story: how a model represents *position*
# decides how it generalises in length.

# %%
heading("BLEU by source length (31+ = longer than any training sentence)")
for b in result["by_length"]:
    bleu = "-" if b["bleu"] is None else f"{b['bleu']:5.1f}"
    print(f"{b['label']:>6} words: BLEU {bleu} ({b['n']} sentences)")

# %%
lesson.attention_figure(model, "attention_cross_transformer.png",
                        title="step 5: cross-attention of the last decoder block")

# %% [markdown]
# ## The evolution table: every model, the same data, the same budget
#
# All seven models are trained on the same corpus with the same budget (the same number of
# minutes, early stopping, each model's recommended learning rate). Each row comes from the
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
              title=f"from Bahdanau to the Transformer ({lesson.backend}, same data and "
                    f"budget)")

# %%
record = lesson.finish()
