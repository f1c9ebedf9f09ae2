"""Exercise 11: one incremental decoding step with a key/value cache.

At inference a Transformer decoder generates one token at a time. Re-running attention over
the whole prefix at every step recomputes the keys and values of old tokens again and
again; a *cache* keeps them. At step ``t`` the new token's key and value are written into
slot ``t`` of the cache, and the new query attends to the cached keys ``0 .. t`` only:

    K[:, :, t] <- k_t,   V[:, :, t] <- v_t
    out_t      = softmax(q_t K[:, :, :t+1]^T / sqrt(d_h)) V[:, :, :t+1]

Slots after ``t`` hold no key of this sentence yet (zeros, or stale values from earlier
use): they must be masked out, or the query would give them weight too (exp(0) for a zero
key, anything for a stale one; the grader fills them with random values). Running this
step for t = 0, 1, 2, ... must give exactly the rows of full causal self-attention over
the sequence.

Shapes (symbols): ``B`` batch, ``h`` heads, ``d_h`` head size, ``S_max`` cache length. The
layout is the kit's (``kerasattn.steps``, used by its decoders with self-attention:
``decoder_self_attention``, ``transformer_decoder_on_gru``, ``transformer``): a pair of
head-major tensors, keys and values.

    q_t, k_t, v_t : (B, h, 1, d_h)          the new token's projected query/key/value
    cache         : (K, V), each (B, h, S_max, d_h)
    index         : int                      t, the slot to write (0 <= t < S_max)
    returns       : (out, (K, V)) with out (B, h, 1, d_h) and the updated cache

What to fill in: ``cached_attention_step``.

Hints:
    * ``ops.slice_update`` writes a small tensor into a larger one at given start indices;
      return the *updated* cache.
    * One query against every cache slot gives scores `(B, h, 1, S_max)`: which two axes
      of ``K`` must a matrix product swap?
    * Which slots may the query see? Exercise 07's ``causal_mask`` has an ``offset`` for
      this situation. The slot being written is allowed (the token attends to itself).
    * Scale by ``1 / sqrt(d_h)``.

What you may use: ``keras.ops`` and the kit's ``masked_softmax`` (exercise 03) and
``causal_mask`` (exercise 07), both imported below.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``MultiHeadCross``
(``kerasattn.layers.multi_head``: its ``call`` attends over whole sequences and keeps no
cache; the kit's cached step is ``kerasattn.steps.self_attend_step``, which writes the new
key and value into an ``init_cache`` pair with the layer's own projections),
``TransformerDecoderBlock`` (``kerasattn.layers.decoder_block``), ``kerasattn.models``,
``kerasattn.decoding``, ``kerasattn.steps``, ``keras.layers.MultiHeadAttention``,
``keras_hub`` / ``keras_nlp``;
NumPy on tensors; the solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/11_kv_cache_step.py --backend all``.
"""
import math

from keras import ops

from kerasattn.layers.masking import causal_mask, masked_softmax  # exercises 03, 07


def cached_attention_step(q_t, k_t, v_t, cache, index):
    """Attend one new query to the cached keys/values after writing its own into slot t.

    Args:
        q_t: query `(B, h, 1, d_h)`.
        k_t: key `(B, h, 1, d_h)`.
        v_t: value `(B, h, 1, d_h)`.
        cache: `(K, V)`, each `(B, h, S_max, d_h)`.
        index: the step `t` (int).

    Returns:
        `(out, (K, V))`: `out` `(B, h, 1, d_h)` and the cache with slot `t` written.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("cached_attention_step: fill in the marked region")
    # END YOUR CODE
