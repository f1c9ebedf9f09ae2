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
# Transformer decoder blocks reading the encoder's states $H_{\text{enc}}$ as memory (the
# encoder is step 2's: a bidirectional GRU, then one self-attention block on top):
#
# $$Y_1 = \operatorname{AddNorm}\big(X, \operatorname{MHA}_{\text{mask}}(X, X, X)\big),$$
# $$Y_2 = \operatorname{AddNorm}\big(Y_1, \operatorname{MHA}(Y_1, H_{\text{enc}},
#   H_{\text{enc}})\big),$$
# $$Z = \operatorname{AddNorm}\big(Y_2, \operatorname{FFN}(Y_2)\big),
#   \qquad \operatorname{AddNorm}(x, y) = \operatorname{LayerNorm}(x + y).$$
#
# **Positional encoding.** Attention is blind to order: its weighted sum over keys is the
# same whatever order they come in. In one causal layer the mask tells a position only
# which words precede it, not in what order: permute the prefix and the last position
# still sees the same set of keys. Stacked causal layers recover some order indirectly
# (a second layer's keys depend on what preceded each word), but only weakly. Without a
# GRU, word order must be written into the input. We add
# a fixed pattern to each target embedding:
#
# $$\mathrm{PE}_{(pos, 2i)} = \sin\!\left(\frac{pos}{10000^{2i/d}}\right), \qquad
#   \mathrm{PE}_{(pos, 2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d}}\right).$$
#
# Each pair of dimensions is a clock with its own period, from $2\pi$ up to
# $2\pi \cdot 10000^{(d-2)/d}$ (almost $10000 \cdot 2\pi$ for a large $d$);
# the position is the reading of all the clocks, and $\mathrm{PE}_{pos+k}$ is a fixed linear
# function (a rotation) of $\mathrm{PE}_{pos}$, which makes relative offsets easy to learn.
# Easy to learn is not the same as learned: a decoder that always counted from 0 in
# training has never seen the positions of a test sentence longer than its training
# sentences. So in training on the built-in corpus each target here starts at a random
# position $k \le 32$ (`RandomPositionShift`: SHAPE, shifted absolute position embedding,
# Kiyono et al., 2021; $k = 0$ at inference; on a real file,
# `--data`, the recipe turns the shift off: its test sentences are as long as its training
# ones). Lesson 05 reports measured runs of what the shift buys the full Transformer (and
# shows how to train it without the shift), whose encoder has positions too; this model's
# has none (the GRU reads order), and on this model its effect is not measured.
#
# **Teaching points from the notes.**
# - *Parallel decoding during training.* With teacher forcing and the causal mask, all
#   target positions are computed in one pass: no loop over time in training.
# - *Caching keys and values at inference.* Generation is still one token at a time. A
#   naive decoder re-runs the whole prefix every step: step $t$ recomputes all $t$
#   positions, $O(T^2)$ positions over a $T$-token output, and its self-attention scores
#   $t$ queries against $t$ keys, $t^2$ scores, so $1^2 + 2^2 + \dots + T^2$, $O(T^3)$
#   scores in total. The cached decoder keeps each block's self-attention keys and values
#   and computes only the new position: one query against the cache per step (the kit
#   scores all $T_{max}$ slots and masks those after $t$), $O(T)$ positions and
#   $O(T \cdot T_{max})$ scores in total ($O(T^2)$ when the output nears $T_{max}$). It
#   uses the positional encoding of the new token's true position $t$ (a known bug in
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
# rows $3b \dots 3b+2$), so right after cloning the three beams of a sentence hold equal
# copies. One step later each beam has written its own entry (here the toy step adds a
# tenth of the beam's index), and the copies differ. The search then picks a parent row
# for every new beam: for sentence 0 rows 0, 0, 1 (two continuations of its beam 0, one of
# its beam 1), for sentence 1 rows 5, 3, 3 (its best continuation comes from its beam 2,
# the next two from its beam 0). Reordering gathers those rows: a parent picked twice
# appears twice, and a beam nobody picked (rows 2 and 4) is gone.

# %%
import numpy as np
from kerasattn.models.common import IncrementalDecoder

state = {"cache": np.array([[1.0], [2.0]], "float32")}                    # (B=2, 1)
cloned = IncrementalDecoder.repeat(state, 3)                                # (6, 1)
print("cloned rows    ", keras.ops.convert_to_numpy(cloned["cache"]).ravel())
beam_index = np.tile(np.arange(3, dtype="float32"), 2)[:, None]            # (6, 1): 0 1 2 0 1 2
stepped = {"cache": keras.ops.convert_to_numpy(cloned["cache"]) + 0.1 * beam_index}
print("after one step ", stepped["cache"].ravel())
picked = IncrementalDecoder.reorder(stepped, np.array([0, 0, 1, 5, 3, 3]))  # parents
print("after reorder  ", keras.ops.convert_to_numpy(picked["cache"]).ravel())

# %% [markdown]
# ## The model
#
# The course notes' diagram: the encoder on the left (step 2's bidirectional GRU with one
# self-attention block on top), the Transformer decoder stack on the right, positional
# encodings added before the decoder's attention blocks.

# %%
lesson.architecture("transformer_decoder_on_gru")

# %%
model = lesson.train("transformer_decoder_on_gru")

# %%
result = lesson.evaluate(model)
heading("sample translations")
lesson.samples(model)

# %% [markdown]
# ## Beam search and its length penalty
#
# A translation's log-probability $\log P(y \mid x) = \sum_{t=1}^{L} \log p(y_t \mid y_{<t}, x)$
# adds one negative term per token, so ranking by it alone favours short translations. The
# kit's beam search (`kerasattn.decoding.beam_search`, behind `Translator.translate(...,
# beam=4)` and the comparison below) divides it by the length penalty of Wu et al.
# (2016, section 7):
#
# $$\mathrm{score}(y) = \frac{\log P(y \mid x)}{\mathrm{lp}(L)}, \qquad
#   \mathrm{lp}(L) = \left(\frac{5 + L}{5 + 1}\right)^{\alpha}, \qquad \alpha = 0.6,$$
#
# where $L$ counts the generated tokens, `<eos>` included. $\alpha = 0.6$ is the kit's
# default (`alpha=0.6, length_penalty_kind="gnmt"`), the value Vaswani et al. (2017) use
# with this penalty; $\alpha = 0$ ranks by the raw log-probability, and a larger $\alpha$
# favours longer outputs. At each step the live beams are kept by their raw
# log-probability; the penalty ranks the finished hypotheses, and the best score wins.
#
# Exercise 12 uses the simpler power form $\mathrm{lp}(L) = L^{\alpha}$
# (`length_penalty_kind="power"`) and ranks every candidate with it at every step. Both
# penalties are 1 at $L = 1$. Their ratio $((5 + L)/(6L))^{\alpha}$ only tends to
# $6^{-\alpha}$ as $L$ grows (0.44 at $L = 10$, 0.39 at 20, 0.37 at 40 for
# $\alpha = 0.6$), so even at this course's lengths the two can rank hypotheses of
# different lengths differently: $((5 + L)/6)^{\alpha}$ grows more slowly, so it pushes
# towards longer outputs less than $L^{\alpha}$ does. The cell
# prints both penalties, and the scores of a 3-token hypothesis with log-probability -2.0
# against an 8-token one with -3.0: the raw log-probability and the kit's penalty prefer
# the short one, $L^{0.6}$ the long one.

# %%
from kerasattn.course import format_table
from kerasattn.decoding import length_penalty

lengths = [1, 2, 3, 5, 8, 10, 20, 40]
print(format_table(["L"] + [str(n) for n in lengths],
                   [["((5 + L) / 6)^0.6 (the kit)"] +
                    [f"{length_penalty(n, 0.6, 'gnmt'):.2f}" for n in lengths],
                    ["L^0.6 (exercise 12's form)"] +
                    [f"{length_penalty(n, 0.6, 'power'):.2f}" for n in lengths]]))
hypotheses = {"short (L = 3, log P = -2.0)": (3, -2.0), "long (L = 8, log P = -3.0)": (8, -3.0)}
print(format_table(["hypothesis", "alpha = 0", "((5 + L) / 6)^0.6", "L^0.6"],
                   [[name, f"{logp:.3f}", f"{logp / length_penalty(n, 0.6, 'gnmt'):.3f}",
                     f"{logp / length_penalty(n, 0.6, 'power'):.3f}"]
                    for name, (n, logp) in hypotheses.items()]))

# %% [markdown]
# ## Cached versus uncached decoding, greedy versus beam
#
# The same sentences decoded three ways. Cached and uncached greedy decoding must produce
# the same words (only the time differs); beam search (beam 4, the length penalty above)
# may find a sentence with a higher score.

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
# Every attention weight of this translation, interactive: open the page in any browser
# (it needs no network); in a notebook it shows below.
lesson.explorer(model, "explorer_transformer_decoder_on_gru.html")

# %% [markdown]
# ## Check your understanding
#
# **1.** What are the first two values of the positional encoding at position 0, and at
# position 1?
#
# <details><summary>Answer</summary>
#
# At position 0 every sine is 0 and every cosine is 1: [0, 1, 0, 1, ...]. At position 1
# the first pair has frequency 1: $\sin 1 = 0.8415$ and $\cos 1 = 0.5403$.
#
# </details>
#
# **2.** In the 64-dimensional figure above, which pair of dimensions repeats fastest and
# which slowest? Give both wavelengths in positions.
#
# <details><summary>Answer</summary>
#
# Pair $i$ has wavelength $2\pi \cdot 10000^{2i/d}$. The first pair ($i = 0$):
# $2\pi \approx 6.28$ positions. The last pair ($i = 31$, $d = 64$):
# $2\pi \cdot 10000^{62/64} \approx 47{,}117$ positions, far longer than any sentence, so
# it changes almost linearly with the position.
#
# </details>
#
# **3.** Greedy decoding of a 64-token translation without a cache re-runs the decoder
# on the whole prefix at every step. How many target positions does it process in total,
# and how many with the K/V cache?
#
# <details><summary>Answer</summary>
#
# Without the cache: 1 + 2 + ... + 64 = 2,080 positions (it grows as $T^2 / 2$). With the
# cache each step processes only the new position: 64. The answer is the same either way;
# only the work differs.
#
# </details>
#
# **4.** A batch of 2 sentences is decoded with beam size 4. How many rows does each
# cached state have during the search? Why must the cache be reordered after every step?
#
# <details><summary>Answer</summary>
#
# 2 × 4 = 8 rows: each sentence's state is cloned once per beam. After a step, the best 4
# continuations of a sentence may come from any of its 4 hypotheses, for example all from
# the same one; each surviving beam must carry on with the keys and values of the
# hypothesis it extends, so the rows are gathered by parent index.
#
# </details>
#
# **5.** In training, how many passes through the decoder stack does a batch of 20-word
# targets take? At inference, for one 20-word translation?
#
# <details><summary>Answer</summary>
#
# Training: one pass; teacher forcing and the causal mask let every position be computed
# at once. Inference: 21 steps, one per generated token (20 words and `<eos>`), each
# needing the previous output.
#
# </details>

# %% [markdown]
# ## Next: your exercises
#
# - 08 `positional_encoding`: the sinusoidal positions.
# - 10 `decoder_block`: the Transformer decoder block.
# - 11 `kv_cache_step`: one decoding step with a key/value cache.
# - 12 `beam_search_step`: one step of beam search with a length penalty.
# - 13 `assemble_step4_model`: the step-4 model from kit layers.
#
# Check each one with `kerasattn grade exercises/NN_*.py` (hints: `kerasattn hint NN`).

# %%
record = lesson.finish()
