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
# - *Dropout on the weights.* Dropout is applied to the attention weights $\alpha$ (after the
#   softmax) during training: the decoder cannot rely on a single source position.
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
print("head 1 of position 0 holds features", ops.convert_to_numpy(split)[0, 1, 0],
      "= x[0, 0, 2:4]", x[0, 0, 2:4])
assert np.array_equal(ops.convert_to_numpy(merged), x)

# %% [markdown]
# ## Dropout on the attention weights
#
# With dropout rate $p$, training zeroes some weights and scales the rest by $1/(1-p)$
# (so their expected sum stays 1); at inference nothing is dropped.

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
# The seed's diagram cue: a Bahdanau decoder time step whose query is split into heads that
# attend to the encoder states in parallel, are concatenated, and feed the GRU.

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
recorded = lesson.recorded([0])
if "bahdanau" in recorded:  # lesson 00 ran with the same settings: compare the curves
    lesson.histories["bahdanau (lesson 00)"] = recorded["bahdanau"]["history"]
lesson.curves(list(lesson.histories), "curves_bahdanau_multihead.png",
              title="step 1: training and validation loss")

# %%
record = lesson.finish()
