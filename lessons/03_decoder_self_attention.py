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
# # Lesson 03 (step 3): masked self-attention in the decoder, then a GRU
#
# **What changes.** The decoder. Before anything recurrent happens, the embedded target
# prefix $X$ attends to itself (each word to itself and the words before it), then to the
# encoder, and only then does a GRU run over the result:
#
# $$Y = \operatorname{LayerNorm}\big(X + \operatorname{MHA}(X, X, X, M_{\text{causal}})\big),$$
#
# $$Z = \operatorname{LayerNorm}\big(Y + \operatorname{MHA}(Y, H_{\text{enc}},
#   H_{\text{enc}})\big), \qquad \text{logits} = \operatorname{Dense}(\operatorname{GRU}(Z)).$$
#
# **The causal mask.** Query position $i$ may attend to key position $j$ only if $j \le i$:
#
# $$M_{ij} = \begin{cases} 0 & j \le i \\ -\infty & j > i \end{cases}, \qquad
#   \operatorname{softmax}\!\left(\frac{QK^\top}{\sqrt{d_h}} + M\right).$$
#
# **Why masking is needed even with teacher forcing.** With teacher forcing the whole
# reference is fed at once: the input at position $i+1$ *is* the label at position $i$.
# Without the mask, position $i$ can simply look one step ahead and copy its answer: the
# training loss drops to almost zero (the "100% accuracy" bug reports), and the model has
# learned nothing it can use at inference, where the future does not exist yet. The mask
# lets each training position see only what it will have at inference: the words before it,
# never the ones after. (Those earlier words are the reference in training and the model's
# own outputs at inference: the exposure bias of lessons 00 and 06.)
#
# **GRU state versus self-attention context.** The GRU carries one summary vector from step
# to step; self-attention lets each step look back at every earlier word directly. Here
# both are present: self-attention gathers the history, the GRU still orders it.

# %%
from kerasattn.course import Lesson, heading, parse_lesson_args

settings = parse_lesson_args(3, "Lesson 03: decoder masked self-attention + GRU")
lesson = Lesson(3, "decoder masked self-attention + cross-attention + GRU", settings)

# %% [markdown]
# ## The 4x4 toy mask
#
# Rows are queries (the position being computed), columns are keys. While computing the
# representation of "chat", the decoder may look at `<bos>`, "le" and "chat", never at
# "noir".

# %%
from kerasattn import plots
from kerasattn.layers import causal_mask
import keras

mask = keras.ops.convert_to_numpy(causal_mask(4))                        # (4, 4) bool
print(mask.astype(int))
lesson.figure(plots.causal_mask_figure, "causal_mask_4x4.png", mask,
              ["<bos>", "le", "chat", "noir"])

# %% [markdown]
# ## The mask, tested: changing the future must not change the past
#
# One attention layer over 4 target positions. We change only the last input vector and
# compare the outputs at the first three positions.

# %%
import numpy as np
from kerasattn.layers import MultiHeadCross

keras.utils.set_random_seed(0)
mha = MultiHeadCross(num_heads=2, d_model=8)
x = np.random.default_rng(1).normal(size=(1, 4, 8)).astype("float32")
x_changed = x.copy()
x_changed[0, 3] += 5.0                                                     # a different "noir"
for causal in (True, False):
    a = keras.ops.convert_to_numpy(mha(x, x, use_causal_mask=causal))[0, :3]
    b = keras.ops.convert_to_numpy(mha(x_changed, x_changed, use_causal_mask=causal))[0, :3]
    print(f"use_causal_mask={causal!s:5}: max change at positions 0-2 = "
          f"{np.abs(a - b).max():.2e}")

# %% [markdown]
# ## The model
#
# The course notes' diagram: masked self-attention block, then encoder-decoder attention,
# then the GRU unrolled over time; the encoder on the left is step 2's (a bidirectional GRU
# with one self-attention block on top).

# %%
lesson.architecture("decoder_self_attention")

# %%
model = lesson.train("decoder_self_attention")

# %%
result = lesson.evaluate(model)
heading("sample translations")
lesson.samples(model)

# %% [markdown]
# ## The trained model respects the mask too
#
# Teacher-forced logits for a test pair; then the last target word is replaced by another
# word and the logits at every earlier position are compared.

# %%
from kerasattn.data import make_arrays

arr = make_arrays(lesson.data.test_pairs[:1], lesson.data.src_vocab, lesson.data.tgt_vocab)
x1 = {"encoder_inputs": arr["encoder_inputs"], "decoder_inputs": arr["decoder_inputs"]}
n = int((arr["decoder_inputs"][0] != 0).sum())                            # real positions
x2 = {k: v.copy() for k, v in x1.items()}
x2["decoder_inputs"][0, n - 1] = 4 + (x2["decoder_inputs"][0, n - 1] - 3) % (
    len(lesson.data.tgt_vocab) - 4)                                      # another real word
l1 = keras.ops.convert_to_numpy(model.model(x1, training=False))
l2 = keras.ops.convert_to_numpy(model.model(x2, training=False))
print(f"max logit change at positions 0..{n - 2} after changing position {n - 1}: "
      f"{np.abs(l1[0, :n - 1] - l2[0, :n - 1]).max():.2e}")

# %% [markdown]
# ## Where it looks
#
# Cross-attention (decoder over the English sentence) and the decoder's self-attention over
# its own prefix: the upper triangle of the self-attention map is zero, by construction.

# %%
lesson.attention_figure(model, "attention_cross_decoder_self_attention.png", kind="cross",
                        title="step 3: cross-attention (per head)")

# %%
lesson.attention_figure(model, "attention_self_decoder_self_attention.png", kind="self",
                        title="step 3: masked decoder self-attention (per head)")

# %%
# Every attention weight of this translation, interactive: open the page in any browser
# (it needs no network); in a notebook it shows below.
lesson.explorer(model, "explorer_decoder_self_attention.html")

# %% [markdown]
# ## Check your understanding
#
# **1.** In the 4 × 4 causal mask above, how many (query, key) pairs may attend, and how
# many are blocked? For a target of 20 tokens?
#
# <details><summary>Answer</summary>
#
# Query $i$ sees keys $0 \dots i$: 1 + 2 + 3 + 4 = 10 allowed pairs and 6 blocked. For
# 20 tokens: 20 × 21 / 2 = 210 allowed of 400, 190 blocked.
#
# </details>
#
# **2.** The model trains with teacher forcing, so the true previous words are given
# anyway. Why is the causal mask still needed?
#
# <details><summary>Answer</summary>
#
# Because the whole reference is fed at once: the decoder input at position $i + 1$ is the
# label at position $i$. Without the mask position $i$ can read its own answer one step
# ahead, the training loss falls to almost nothing, and the model has learned to copy, not
# to translate; at inference the future is not there to copy.
#
# </details>
#
# **3.** How is the mask applied: to the weights after the softmax, or to the scores
# before it? Why?
#
# <details><summary>Answer</summary>
#
# To the scores: where $j > i$ the score becomes $-\infty$ (in practice it is replaced by a
# very large negative number), so the softmax gives those keys exactly 0 and the remaining
# weights still sum to 1. Zeroing weights after the softmax would leave rows that no longer
# sum to 1.
#
# </details>
#
# **4.** (The symptom of exercise 14, which goes with lesson 01.) After training, every attention weight is
# about $1/n$ on an $n$-word source and the translations are poor. What would you check?
#
# <details><summary>Answer</summary>
#
# Uniform weights mean the scores are (nearly) equal across keys. Check the score
# function: does it really combine the query with each key (not, say, the query with
# itself, or a key-independent term)? Are the scores scaled down to almost nothing (dividing
# by $d$ instead of $\sqrt{d_h}$, tiny initial weights)? Is the softmax taken over the key
# axis? Is a mask blocking everything but a constant? Printing the raw scores of one
# sentence usually shows which.
#
# </details>
#
# **5.** In this model the decoder GRU runs *after* the two attentions. What does the
# cross-attention query at step $t$ know about how far the translation has got?
#
# <details><summary>Answer</summary>
#
# Only what the masked self-attention gathered from the earlier words: there are no
# position encodings in step 3 and the GRU state comes later, so the query is a function
# of the set of earlier words and the current one. After a repeated phrase it can return
# to the same source word, which is why this model sometimes loops on very long sentences.
# Steps 4 and 5 add positions to the decoder.
#
# </details>

# %% [markdown]
# ## Next: your exercises
#
# - 07 `causal_mask`: the look-ahead mask, with an offset for decoding.
# - 21 `self_attention_gru_decoder`: masked self-attention and cross-attention feeding a GRU.
# - 17 `debug_look_ahead_leak`: a loss too good to be true.
#
# Check each one with `kerasattn grade exercises/NN_*.py` (hints: `kerasattn hint NN`).

# %%
record = lesson.finish()
