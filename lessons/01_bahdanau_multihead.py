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
# # Lesson 01 (step 1): multi-head attention inside a Bahdanau decoder
#
# **What changes.** Only the attention box. The GRU encoder and the GRU decoder loop stay
# exactly as in lesson 00; at each step the decoder still asks "where should I look?" with
# its previous state $s_{t-1}$. But instead of one additive score giving one distribution
# over the source, the query is projected into $h$ smaller subspaces ("heads"), and each head
# aligns on its own:
#
# $$Q_i = s_{t-1} W_q^{(i)}, \quad K_i = H_{\text{enc}} W_k^{(i)}, \quad
#   V_i = H_{\text{enc}} W_v^{(i)},$$
#
# $$\text{head}_i = \operatorname{softmax}\!\left(\frac{Q_i K_i^\top}{\sqrt{d_h}}\right) V_i,
#   \qquad c_t = [\text{head}_1; \dots; \text{head}_h]\, W_o .$$
#
# The context $c_t$ then enters the GRU with $y_{t-1}$, as before.
#
# **Why several heads?** One scalar Bahdanau score per source word gives one alignment. A
# word often needs several kinds of information at once: the French adjective "noire" needs
# the English adjective (which word) *and* the noun (which gender). Separate heads can
# specialise. The scale $1/\sqrt{d_h}$ keeps dot products of $d_h$-dimensional vectors from
# growing with $d_h$ and saturating the softmax.
#
# **Teaching points from the notes.**
# - *Reshaping.* Heads are not a loop: project once to $d_{model}$, then reshape
#   $(B, T, d_{model}) \to (B, T, h, d_h) \to (B, h, T, d_h)$ and let batched matrix
#   products do all heads at once; merge with the inverse reshape before $W_o$.
# - *Dropout on the weights.* Dropout can act on the attention weights $\alpha$ (after the
#   softmax) during training, so that the decoder cannot rely on a single source position:
#   `MultiHeadCross(num_heads, d_model, dropout=p)` does that. The step-1 model trained in
#   this lesson is built with attention dropout 0; its dropout (0.1) acts on the
#   embeddings and on $[s_t; c_t]$ before the output layer. The cell below shows what
#   attention dropout does on its own.
# - *Contrast* with lesson 00's scalar scores: one distribution per step there, $h$ here.

# %%
from kerasattn.course import Lesson, heading, parse_lesson_args

settings = parse_lesson_args(1, "Lesson 01: Bahdanau decoder with multi-head attention")
lesson = Lesson(1, "Bahdanau decoder + multi-head attention", settings)

# %% [markdown]
# ## The head reshaping, on a toy tensor
#
# A batch of 2 sequences of 5 positions with $d_{model} = 8$, split into $h = 4$ heads of
# $d_h = 2$. Splitting and merging are exact inverses.

# %%
import numpy as np
from keras import ops

B, T, d_model, h = 2, 5, 8, 4
x = np.arange(B * T * d_model, dtype="float32").reshape(B, T, d_model)
split = ops.transpose(ops.reshape(x, (B, T, h, d_model // h)), (0, 2, 1, 3))  # (B, h, T, d_h)
merged = ops.reshape(ops.transpose(split, (0, 2, 1, 3)), (B, T, d_model))     # (B, T, d_model)
print("x", tuple(x.shape), "-> heads", tuple(split.shape), "-> merged", tuple(merged.shape))
print("the second head (index 1) of position 0 holds features",
      ops.convert_to_numpy(split)[0, 1, 0], "= x[0, 0, 2:4]", x[0, 0, 2:4])
assert np.array_equal(ops.convert_to_numpy(merged), x)

# %% [markdown]
# ## Dropout on the attention weights
#
# With dropout rate $p$, training zeroes some weights and scales the rest by $1/(1-p)$
# (so their expected sum stays 1); at inference nothing is dropped. (A demonstration of the
# mechanism: the model below does not use it.)

# %%
import keras

scores = np.array([[2.0, 1.5, 1.0, 0.8, 0.5, 0.3, 0.1, 0.0]], "float32")   # (1, T_k)
alpha = ops.softmax(ops.convert_to_tensor(scores))
drop = keras.layers.Dropout(0.5, seed=3)
print("alpha            ", np.round(ops.convert_to_numpy(alpha), 3))
print("dropped (train)  ", np.round(ops.convert_to_numpy(drop(alpha, training=True)), 3))
print("inference        ", np.round(ops.convert_to_numpy(drop(alpha, training=False)), 3))

# %% [markdown]
# ## The model
#
# The course notes' diagram: a Bahdanau decoder time step whose query is split into heads
# that attend to the encoder states in parallel, are concatenated, and feed the GRU.

# %%
lesson.architecture("bahdanau_multihead")

# %%
model = lesson.train("bahdanau_multihead")

# %%
result = lesson.evaluate(model)
heading("sample translations")
lesson.samples(model)

# %% [markdown]
# ## One heatmap per head
#
# Each panel is one head's alignment for the same sentence. Heads need not agree: some
# follow the word being translated, others look at a neighbour (the noun an adjective agrees
# with, the end of the sentence).

# %%
lesson.attention_figure(model, "attention_heads_bahdanau_multihead.png",
                        title="step 1: each head's attention over the source")

# %%
# Every attention weight of this translation, interactive: open the page in any browser
# (it needs no network); in a notebook it shows below.
lesson.explorer(model, "explorer_bahdanau_multihead.html")

# %%
recorded = lesson.recorded([0])
if "bahdanau" in recorded:  # lesson 00 ran with the same settings: compare the curves
    lesson.histories["bahdanau (lesson 00)"] = recorded["bahdanau"]["history"]
lesson.curves(list(lesson.histories), "curves_bahdanau_multihead.png",
              title="step 1: training and validation loss")

# %% [markdown]
# ## Check your understanding
#
# **1.** The step-1 model has $d_{model} = 128$ and $h = 4$ heads. A batch of 64 sentences
# of 20 source words gives projected keys of shape (64, 20, 128). What shape do they have
# after the head split, and what is $d_h$?
#
# <details><summary>Answer</summary>
#
# $d_h = 128 / 4 = 32$; the keys become (64, 20, 4, 32) after the reshape and
# (64, 4, 20, 32) after the transpose: (B, h, T, d_h). Merging the heads is the inverse,
# back to (64, 20, 128).
#
# </details>
#
# **2.** Why divide the scores by $\sqrt{d_h}$? If the entries of $q$ and $k$ are
# independent with mean 0 and variance 1, what is the standard deviation of $q \cdot k$
# for $d_h = 32$, before and after the scaling?
#
# <details><summary>Answer</summary>
#
# $q \cdot k$ is a sum of $d_h$ products of variance 1, so its variance is $d_h$: standard
# deviation $\sqrt{32} \approx 5.66$ before the scaling and 1 after it. Without the scaling
# the scores grow with $d_h$, the softmax saturates on one key, and its gradients vanish.
#
# </details>
#
# **3.** How many weights does the step-1 attention box have? Its query is the decoder
# state $s_{t-1}$ (64 numbers), its keys and values are the encoder annotations (128
# numbers), $d_{model} = 128$, and each of the four projections has a bias.
#
# <details><summary>Answer</summary>
#
# $W_q$: 64 × 128 + 128 = 8,320; $W_k$, $W_v$ and $W_o$: 128 × 128 + 128 = 16,512 each.
# Total 8,320 + 3 × 16,512 = 57,856 weights. The number of heads does not change it: the
# heads split the same 128 columns.
#
# </details>
#
# **4.** With attention dropout $p = 0.5$, what happens to a weight that is kept in
# training, and what happens at inference? Is dropout on the attention weights used by
# the step-1 model trained in this lesson?
#
# <details><summary>Answer</summary>
#
# A kept weight is multiplied by $1 / (1 - p) = 2$, so the expected sum of the weights
# stays 1; at inference nothing is dropped or scaled. The step-1 model here trains with
# attention dropout 0: its dropout of 0.1 acts on the embeddings and before the output
# layer.
#
# </details>
#
# **5.** One additive Bahdanau score gives one distribution over the source per decoder
# step. How many does the step-1 decoder compute per step, and why can that help?
#
# <details><summary>Answer</summary>
#
# One per head, 4 here. Each head projects the query and the keys into its own subspace,
# so different heads can look for different things at the same step: the word being
# translated, the noun an adjective agrees with, the end of a clause.
#
# </details>

# %% [markdown]
# ## Next: your exercises
#
# - 05 `scaled_dot_product`: $\mathrm{softmax}(QK^\top/\sqrt{d_k})V$ with masks.
# - 06 `split_merge_heads`: $(B, T, d_{model}) \to (B, h, T, d_h)$ and back.
# - 19 `multihead_decoder_step`: the step-1 decoder step, heads over $h_j$ from $s_{t-1}$.
# - 14 `debug_uniform_attention`: attention weights that stay uniform.
#
# Check each one with `kerasattn grade exercises/NN_*.py` (hints: `kerasattn hint NN`).

# %%
record = lesson.finish()
