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
# # Lesson 02 (step 2): a GRU encoder with a self-attention block on top
#
# **What changes.** The encoder. The GRU still reads the sentence, but its outputs $H$ then
# pass through one Transformer encoder block, where every source word attends to every
# other source word:
#
# $$Z = \operatorname{LayerNorm}\big(H + \operatorname{MHA}(H, H, H, \text{mask})\big),$$
#
# $$H' = \operatorname{LayerNorm}\big(Z + \operatorname{FFN}(Z)\big), \qquad
#   \operatorname{FFN}(x) = \sigma(x W_1 + b_1) W_2 + b_2 .$$
#
# The decoder is unchanged from step 1: it attends to $H'$ instead of $H$.
#
# **Why.** A GRU state mixes information from the words it has read, in order; the further
# apart two words are, the more steps lie between them. Self-attention connects any two
# source words in one step: the annotation of "noire" can look directly at "la voiture"
# however far away it is.
#
# **Teaching points from the notes.**
# - *Residual connection and LayerNorm.* The block adds its input back ($H + \dots$): the
#   sublayer only has to learn a correction, and gradients flow through the identity path.
#   LayerNorm rescales each position's vector to zero mean and unit variance, which keeps the
#   scale stable when blocks are stacked.
# - *Valid-length (padding) masking.* Sentences in a batch are padded to the same length.
#   The keys at padded positions must get zero weight, otherwise the real words attend to
#   `<pad>` and the result depends on how much padding the batch happened to have. We show
#   below that with the mask the block's output for the real words does not change when more
#   padding is added.
# - *Compare validation curves* with and without the extra self-attention.

# %%
from kerasattn.course import Lesson, heading, parse_lesson_args

settings = parse_lesson_args(2, "Lesson 02: GRU encoder + self-attention block")
lesson = Lesson(2, "GRU encoder + self-attention block", settings)

# %% [markdown]
# ## Padding must not change the answer
#
# One encoder block, the same 3 real positions, once padded to 4 and once padded to 7. With
# the padding mask the outputs at the real positions agree to rounding error; without it,
# they do not.

# %%
import numpy as np
import keras
from kerasattn.layers import TransformerEncoderBlock

keras.utils.set_random_seed(0)
block = TransformerEncoderBlock(d_model=8, num_heads=2, d_ff=16)
real = np.random.default_rng(0).normal(size=(1, 3, 8)).astype("float32")
short = np.concatenate([real, np.zeros((1, 1, 8), "float32")], axis=1)    # (1, 4, 8)
long = np.concatenate([real, np.zeros((1, 4, 8), "float32")], axis=1)     # (1, 7, 8)
mask_short = np.array([[True] * 3 + [False]])
mask_long = np.array([[True] * 3 + [False] * 4])
with_mask = [keras.ops.convert_to_numpy(block(x, padding_mask=m))[0, :3]
             for x, m in ((short, mask_short), (long, mask_long))]
without = [keras.ops.convert_to_numpy(block(x))[0, :3] for x in (short, long)]
print(f"max difference at the real positions, with the mask:    "
      f"{np.abs(with_mask[0] - with_mask[1]).max():.2e}")
print(f"max difference at the real positions, without the mask: "
      f"{np.abs(without[0] - without[1]).max():.2e}")

# %% [markdown]
# ## The model
#
# The seed's diagram cue: GRU outputs feed MHA + AddNorm, then FFN + AddNorm; the result
# $H'$ goes to the (unchanged) attention decoder.

# %%
lesson.architecture("encoder_self_attention")

# %%
model = lesson.train("encoder_self_attention")

# %%
result = lesson.evaluate(model)
heading("sample translations")
lesson.samples(model)

# %% [markdown]
# ## With and without the extra self-attention
#
# If lessons 00 and 01 ran with the same settings, their curves are drawn here too.

# %%
recorded = lesson.recorded([0, 1])
for name in ("seq2seq", "bahdanau", "bahdanau_multihead"):
    if name in recorded and recorded[name].get("history"):
        lesson.histories[name] = recorded[name]["history"]
lesson.curves(list(lesson.histories), "curves_encoder_self_attention.png",
              title="step 2: validation loss with and without encoder self-attention")

# %%
lesson.attention_figure(model, "attention_encoder_self_attention.png",
                        title="step 2: decoder attention over H' (per head)")

# %%
record = lesson.finish()
