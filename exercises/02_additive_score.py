"""Exercise 02: the additive (Bahdanau) score.

Bahdanau et al. (2015) score how well decoder state ``s_{t-1}`` matches encoder state
``h_i`` with a one-hidden-layer network instead of a dot product:

    e_{t,i} = v^T tanh(W_q s_{t-1} + W_k h_i)

The query and key are first projected into a common space of ``u`` units (so they may have
different sizes), added, squashed by ``tanh``, and reduced to one number by ``v``.

Shapes (symbols): ``B`` batch, ``T`` source length, ``d_q`` decoder state size, ``d_k``
encoder state size, ``u`` attention units.

    s_prev : (B, d_q)     decoder state s_{t-1}
    h_enc  : (B, T, d_k)  encoder states h_1 .. h_T
    W_q    : (d_q, u)     query projection (row-vector convention: s_prev @ W_q)
    W_k    : (d_k, u)     key projection
    v      : (u,)         scoring vector
    returns: (B, T)       one score per source position

What to fill in: ``additive_score``.

Hints:
    * Project once, not once per pair: ``s_prev @ W_q`` is `(B, u)`, ``h_enc @ W_k`` is
      `(B, T, u)`. Insert a length-1 time axis in the query (``ops.expand_dims`` or
      ``[:, None, :]``) so that broadcasting adds it to every source position.
    * ``tanh`` goes *between* the sum and ``v``; without it the score is linear.
    * A `(B, T, u)` tensor times a `(u,)` vector with ``ops.matmul`` gives `(B, T)`.

What you may use: ``keras.ops``.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): anything in ``kerasattn.layers`` (its
``BahdanauAttention`` computes this score); NumPy on tensors; the solutions,
``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/02_additive_score.py --backend all``.
"""
from keras import ops


def additive_score(s_prev, h_enc, W_q, W_k, v):
    """Additive attention scores ``e = v^T tanh(W_q s + W_k h)``.

    Args:
        s_prev: decoder state `(B, d_q)`.
        h_enc: encoder states `(B, T, d_k)`.
        W_q: query projection `(d_q, u)`.
        W_k: key projection `(d_k, u)`.
        v: scoring vector `(u,)`.

    Returns:
        Scores `(B, T)`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("additive_score: fill in the marked region")
    # END YOUR CODE
