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
# # Lesson 04 (step 4): a Transformer decoder on a GRU encoder
#
# **What changes.** The decoder loses its recurrence entirely. It becomes a stack of $N$
# Transformer decoder blocks reading the GRU encoder's states as memory:
#
# $$Y_1 = \operatorname{AddNorm}\big(X, \operatorname{MHA}_{\text{mask}}(X, X, X)\big),$$
# $$Y_2 = \operatorname{AddNorm}\big(Y_1, \operatorname{MHA}(Y_1, H_{\text{enc}},
#   H_{\text{enc}})\big),$$
# $$Z = \operatorname{AddNorm}\big(Y_2, \operatorname{FFN}(Y_2)\big),
#   \qquad \operatorname{AddNorm}(x, y) = \operatorname{LayerNorm}(x + y).$$
#
# **Positional encoding.** Attention is blind to order: permute the prefix and every
# position gets the same set of keys. Without a GRU, word order must be written into the
# input. We add a fixed pattern to each target embedding:
#
# $$\mathrm{PE}_{(pos, 2i)} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right), \qquad
#   \mathrm{PE}_{(pos, 2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right).$$
#
# Each pair of dimensions is a clock with its own period, from $2\pi$ to $10000 \cdot 2\pi$;
# the position is the reading of all the clocks, and $\mathrm{PE}_{pos+k}$ is a fixed linear
# function (a rotation) of $\mathrm{PE}_{pos}$, which makes relative offsets easy to learn.
# Easy to learn is not the same as learned: a decoder that always counted from 0 in
# training has never seen the positions of a test sentence longer than its training
# sentences. So in training each target here starts at a random position $k \le 32$
# (`RandomPositionShift`, SHAPE; $k = 0$ at inference): lesson 05 measures what it buys.
#
# **Teaching points from the notes.**
# - *Parallel decoding during training.* With teacher forcing and the causal mask, all
#   target positions are computed in one pass: no loop over time in training.
# - *Caching keys and values at inference.* Generation is still one token at a time. A
#   naive decoder re-runs the whole prefix every step ($O(T^2)$ work in total); the cached
#   decoder keeps each block's self-attention keys and values, computes only the new
#   position, and uses the positional encoding of its true position $t$ (a known bug in
#   teaching code encodes every generated token at position 0).
# - *Clone-state for beam search.* Beam search keeps $k$ hypotheses per sentence. Their
#   decoding states (the K/V caches) are *cloned* when the beam starts (one copy per beam)
#   and *reordered* after every step, because the best $k$ continuations may all come from
#   the same parent hypothesis.

# %%
from kerasattn.course import Lesson, heading, parse_lesson_args

settings = parse_lesson_args(4, "Lesson 04: Transformer decoder on a GRU encoder")
lesson = Lesson(4, "Transformer decoder stack on a GRU encoder", settings)

# %% [markdown]
# ## The positional-encoding matrix
#
# Positions down, dimensions across. Low dimensions oscillate fast, high ones slowly.

# %%
import keras
from kerasattn import plots
from kerasattn.layers import positional_encoding

pe = keras.ops.convert_to_numpy(positional_encoding(64, 64))               # (T, d_model)
lesson.figure(plots.positional_encoding_figure, "positional_encoding.png", pe,
              title="sinusoidal positional encoding, 64 positions x 64 dimensions")

# %% [markdown]
# ## State cloning and reordering, on a toy cache
#
# Two sentences, beam size 3: every state tensor's batch rows are repeated (row $b$ becomes
# rows $3b \dots 3b+2$); after a step, beam $i$ continues from whichever row the search
# picked for it.

# %%
import numpy as np
from kerasattn.models.common import IncrementalDecoder

state = {"cache": np.array([[1.0], [2.0]], "float32")}                    # (B=2, 1)
cloned = IncrementalDecoder.repeat(state, 3)                                # (6, 1)
print("cloned rows   ", keras.ops.convert_to_numpy(cloned["cache"]).ravel())
picked = IncrementalDecoder.reorder(cloned, np.array([0, 0, 1, 5, 3, 3]))  # parents
print("after reorder ", keras.ops.convert_to_numpy(picked["cache"]).ravel())

# %% [markdown]
# ## The model
#
# The seed's diagram cue: GRU encoder on the left, Transformer decoder stack on the right,
# positional encodings added before the attention blocks.

# %%
lesson.architecture("transformer_decoder_on_gru")

# %%
model = lesson.train("transformer_decoder_on_gru")

# %%
result = lesson.evaluate(model)
heading("sample translations")
lesson.samples(model)

# %% [markdown]
# ## Cached versus uncached decoding, greedy versus beam
#
# The same sentences decoded three ways. Cached and uncached greedy decoding must produce
# the same words (only the time differs); beam search may find a higher-scoring sentence.

# %%
from kerasattn.course import compare_decoding

compare_decoding(lesson, model, n_sentences=2 if settings.quick else 16, beam=4)

# %%
lesson.attention_figure(model, "attention_cross_transformer_decoder_on_gru.png",
                        title="step 4: cross-attention of the last decoder block")

# %%
lesson.attention_figure(model, "attention_self_transformer_decoder_on_gru.png", kind="self",
                        title="step 4: masked self-attention of the last decoder block")

# %%
record = lesson.finish()
