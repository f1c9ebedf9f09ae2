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
#   \operatorname{FFN}(x) = \max(0,\, x W_1 + b_1) W_2 + b_2 .$$
#
# The decoder is unchanged from step 1: it attends to $H'$ instead of $H$.
#
# **Why.** A GRU state mixes information from the words it has read, in order; the further
# apart two words are, the more steps lie between them. Self-attention connects any two
# source words in one step: in "the girls that the old dog sees are happy", the annotation
# of "are" can look directly at "girls", however many words lie between them.
#
# **Teaching points from the notes.**
# - *Residual connection and LayerNorm.* The block adds its input back ($H + \dots$): the
#   sublayer adds a correction to $H$ instead of replacing it, and the gradient reaches $H$
#   through the sum (and the LayerNorm after it).
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
# The course notes' diagram: GRU outputs feed MHA + AddNorm, then FFN + AddNorm; the
# result $H'$ goes to the (unchanged) attention decoder.

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
              title="step 2: training and validation loss")

# %%
lesson.attention_figure(model, "attention_encoder_self_attention.png",
                        title="step 2: decoder attention over H' (per head)")

# %%
# Every attention weight of this translation, interactive: open the page in any browser
# (it needs no network); in a notebook it shows below.
lesson.explorer(model, "explorer_encoder_self_attention.html")

# %% [markdown]
# ## Every head of the encoder's self-attention
#
# Vaswani et al. (2017, Figures 3 and 4) draw the encoder's self-attention heads and find
# some that follow long-distance dependencies and some that resolve pronouns. Our encoder
# block can be asked for its weights: `TransformerEncoderBlock(...)(x,
# return_attention_scores=True)` returns them with its output, shape (B, h, S, S). We run
# the trained model's embedding, its bidirectional GRU and then its block on an English
# sentence with a long-distance link: in "the girls that the old dog sees are happy", the
# verb "are" agrees with "girls", six positions back (five words lie between them), across a
# relative clause (French needs that link too: "les filles que le vieux chien voit sont
# heureuses", where "heureuses" agrees with "filles"). The row of "are" is outlined in every
# head and its strongest key is circled; the colour scale runs up to the largest weight in
# the figure. Remember that the block's input is already the GRU's output, so each position
# carries some context before any head looks at it; heads need not specialise, and in
# `--quick` mode they are untrained. The sentence is made of the built-in corpus's English
# words: on a real file (`--data`) they may be unknown to its vocabulary, and the figure
# then says little.

# %%
import numpy as np

from kerasattn import plots
from kerasattn.inference import tokens_of


def encoder_self_attention_weights(model, sentence, src_vocab, block=0):
    """Weights (h, S, S) of encoder block `block` of a step-2 model on one sentence."""
    # the tokens the vocabulary reads: words, or subword pieces ("▁" starts a word)
    tokens = [t.lstrip("▁") or t for t in tokens_of(src_vocab, sentence)]
    ids = np.array([src_vocab.encode(sentence)], dtype="int32")           # (1, S)
    mask = ids != 0                                                        # (1, S)
    x = model.get_layer("src_embedding")(ids)                              # (1, S, E)
    h_enc = model.get_layer("encoder_birnn")(x, mask=mask)[0]              # (1, S, d_model)
    _, weights = model.get_layer(f"encoder_block_{block}")(
        h_enc, padding_mask=mask, return_attention_scores=True)           # (1, h, S, S)
    return tokens, keras.ops.convert_to_numpy(weights)[0]


sentence = "the girls that the old dog sees are happy ."
tokens, weights = encoder_self_attention_weights(model.model, sentence, lesson.data.src_vocab)
if {"are", "girls"} <= set(tokens):
    for head in range(weights.shape[0]):
        row = weights[head, tokens.index("are")]
        print(f"head {head + 1}: 'are' attends most to {tokens[int(row.argmax())]!r} "
              f"({row.max():.2f}); weight on 'girls' {row[tokens.index('girls')]:.2f}")
else:  # a subword vocabulary may cut a word into pieces
    print(f"this vocabulary reads the sentence as {tokens}")
lesson.figure(plots.self_attention_heads, "encoder_self_attention_heads.png", weights,
              tokens, focus="are" if "are" in tokens else None,
              title="step 2: every head of the encoder block"
              + (" (row: 'are')" if "are" in tokens else ""))

# %% [markdown]
# ## Check your understanding
#
# **1.** In a GRU, how many recurrent steps separate the first and the twentieth word of a
# sentence? In one self-attention layer?
#
# <details><summary>Answer</summary>
#
# 19 steps in the GRU: the first word reaches the twentieth only through 19 state
# updates, each of which may blur it. In self-attention the twentieth word attends to the
# first directly: 1 step, whatever the distance.
#
# </details>
#
# **2.** For a sentence of 20 words, how many attention weights does the step-2 encoder
# block compute (4 heads)? How does that number grow with the sentence length?
#
# <details><summary>Answer</summary>
#
# Each head scores every word against every word: 20 × 20 = 400 weights per head,
# 4 × 400 = 1,600 in total. It grows with the square of the length ($h S^2$): the price of
# connecting every pair.
#
# </details>
#
# **3.** LayerNorm (before its learned scale and shift) maps the vector [1, 2, 3, 4] to
# what? (Use the population variance and ignore the small $\epsilon$.)
#
# <details><summary>Answer</summary>
#
# Mean 2.5, variance 1.25, standard deviation 1.118: [-1.342, -0.447, 0.447, 1.342].
# Each position's vector gets zero mean and unit variance, whatever the scale of the
# sublayer that produced it.
#
# </details>
#
# **4.** Why is the block written $\operatorname{LayerNorm}(H + \operatorname{MHA}(H))$
# and not $\operatorname{LayerNorm}(\operatorname{MHA}(H))$?
#
# <details><summary>Answer</summary>
#
# The residual keeps the GRU's annotations in the sum, so the sublayer adds a correction
# to them instead of replacing them, and the gradient reaches the GRU through the sum (and
# the LayerNorm) even when the attention's gradient is small. Without it, the block's
# output would depend on $H$ only through the attention. (The post-norm block is not the
# identity even with a zero sublayer, since it returns $\operatorname{LayerNorm}(H)$; the
# pre-norm form $H + \operatorname{MHA}(\operatorname{LayerNorm}(H))$ keeps a pure
# identity path.)
#
# </details>
#
# **5.** Without the padding mask, a real word's output changed when more padding was
# added (the check near the top of this lesson). Why? And with the mask, what is the
# difference?
#
# <details><summary>Answer</summary>
#
# Without the mask the pad positions are keys like any other: they take a share of every
# softmax, and more padding takes a bigger share. With the mask their scores are replaced by
# a very large negative number (standing in for $-\infty$) before the softmax, so they get
# weight 0 and the output at the real positions is the same up to float rounding.
#
# </details>
#
# **6.** How many weights does the step-2 encoder block have ($d_{model} = 128$, 4 heads,
# $d_{ff} = 256$, biases everywhere, two LayerNorms)?
#
# <details><summary>Answer</summary>
#
# Attention: 4 × (128 × 128 + 128) = 66,048. Feed-forward: (128 × 256 + 256) +
# (256 × 128 + 128) = 65,920. LayerNorms: 2 × (128 + 128) = 512. Total 132,480.
#
# </details>

# %% [markdown]
# ## Next: your exercises
#
# - 09 `add_norm`: layer normalisation and the post-norm residual.
# - 20 `encoder_block`: self-attention and the position-wise feed-forward network.
#
# Check each one with `kerasattn grade exercises/NN_*.py` (hints: `kerasattn hint NN`).

# %%
record = lesson.finish()
