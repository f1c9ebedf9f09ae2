"""Exercise 05: scaled dot-product attention with masks.

The Transformer's attention (Vaswani et al., 2017):

    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) ; mask) V

Every query is compared with every key by a dot product, scaled by ``1/sqrt(d_k)`` so that
the scores do not grow with the feature size (large scores saturate the softmax and kill
its gradient), normalised over the keys, and used to average the values.

Shapes (symbols): ``...`` any leading axes (batch, heads), ``T_q`` queries, ``T_k`` keys,
``d_k`` query/key size, ``d_v`` value size.

    q       : (..., T_q, d_k)
    k       : (..., T_k, d_k)
    v       : (..., T_k, d_v)
    mask    : bool, broadcastable to (..., T_q, T_k), True = may attend; or None
    out     : (..., T_q, d_v)
    weights : (..., T_q, T_k), each row sums to 1 (or is all zeros if fully masked)

What to fill in: ``scaled_dot_product_attention``.

Hints:
    * ``ops.swapaxes(k, -1, -2)`` transposes only the last two axes (``ops.transpose``
      without axes would reverse *all* axes, batch included).
    * ``d_k`` is ``q.shape[-1]``; divide by its square root.
    * The softmax runs over the *keys*: the last axis of the scores.

What you may use: ``keras.ops`` and the kit's ``masked_softmax`` (exercise 03; imported
below).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``scaled_dot_product_attention``
(``kerasattn.layers.dot_product``) and ``MultiHeadCross`` (``kerasattn.layers.multi_head``),
``keras.ops.dot_product_attention`` (also as ``keras.ops.nn.dot_product_attention``),
``keras.layers.MultiHeadAttention``, ``keras.layers.Attention``; NumPy on tensors; the
solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/05_scaled_dot_product.py --backend all``.
"""
import math

from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03


def scaled_dot_product_attention(q, k, v, mask=None):
    """Scaled dot-product attention.

    Args:
        q: queries `(..., T_q, d_k)`.
        k: keys `(..., T_k, d_k)`.
        v: values `(..., T_k, d_v)`.
        mask: optional boolean mask broadcastable to `(..., T_q, T_k)`, True = keep.

    Returns:
        `(out, weights)`: `(..., T_q, d_v)` and `(..., T_q, T_k)`.
    """
    # BEGIN YOUR CODE
    q, k, v = ops.convert_to_tensor(q), ops.convert_to_tensor(k), ops.convert_to_tensor(v)
    scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    weights = masked_softmax(scores, mask, axis=-1)  # (..., T_q, T_k)
    return ops.matmul(weights, v), weights  # (..., T_q, d_v)
    # END YOUR CODE
