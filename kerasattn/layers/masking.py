"""Masks for attention: padding, causal, combining them, and a masked softmax.

Convention for the whole kit: masks are boolean and ``True`` means *keep* (a real token,
an allowed key). Token id 0 is ``<pad>``.

The masked softmax is

    alpha_ij = exp(e_ij) [m_ij] / sum_k exp(e_ik) [m_ik]

and a row with no allowed key at all (every ``m_ik`` False) gives a row of zeros: no NaN
(0/0) and no uniform average over the padding (the d2l ``masked_softmax`` trap).
"""
from __future__ import annotations

import keras
from keras import ops


def padding_mask(token_ids, pad_id: int = 0):
    """Boolean mask of real tokens.

    Args:
        token_ids: integer tensor `(B, T)`.
        pad_id: id of the padding token.

    Returns:
        Boolean tensor `(B, T)`, True where `token_ids != pad_id`.
    """
    return ops.not_equal(token_ids, pad_id)


def causal_mask(query_length, key_length=None, offset=0):
    """Causal (look-ahead) mask: query ``i`` may see key ``j`` iff ``j <= i + offset``.

    Args:
        query_length: `T_q` (int).
        key_length: `T_k` (int); defaults to `query_length`.
        offset: absolute position of query 0 (int or scalar tensor; a tensor works under
            `jit`). Used in incremental decoding, where the queries are the newest tokens.

    Returns:
        Boolean tensor `(T_q, T_k)`, lower-triangular for `offset=0`.
    """
    if key_length is None:
        key_length = query_length
    i = ops.expand_dims(ops.arange(query_length, dtype="int32"), 1)  # (T_q, 1)
    j = ops.expand_dims(ops.arange(key_length, dtype="int32"), 0)  # (1, T_k)
    return ops.less_equal(j, i + ops.cast(offset, "int32"))  # (T_q, T_k)


def combine_masks(*masks):
    """Logical AND of masks with broadcasting; ``None`` masks are ignored.

    Returns:
        The combined boolean mask, or None when every mask is None.
    """
    out = None
    for m in masks:
        if m is None:
            continue
        m = ops.cast(m, "bool")
        out = m if out is None else ops.logical_and(out, m)
    return out


# The largest finite value of each float dtype Keras computes in (float64 uses float32's,
# so the filler stays finite where a backend computes float64 requests in float32).
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": 3.4028234663852886e38}


def mask_fill_value(dtype="float32"):
    """The score given to masked entries before the softmax: finite in `dtype`.

    Half the most negative finite value of `dtype` (of float32 for float64 requests, so
    the filler stays finite where a backend computes float64 in float32): -32752 in
    float16, about -1.7e38 otherwise. Far below any real score, so `exp(fill - max_j e_j)`
    is exactly 0, yet a real score can still be added to it without overflowing to `-inf` (a fixed
    -1e9 overflows float16).

    Args:
        dtype: a float dtype name (e.g. ``"bfloat16"`` under ``mixed_bfloat16``).

    Returns:
        A Python float.
    """
    dtype = keras.backend.standardize_dtype(dtype)
    if dtype not in _FLOAT_MAX:
        raise ValueError(f"mask_fill_value: `dtype` must be one of {tuple(_FLOAT_MAX)}; "
                         f"received dtype={dtype!r}.")
    return -0.5 * _FLOAT_MAX[dtype]


def _softmax(x, axis):
    """``ops.softmax``; over an axis of size 1 (a single key) the weight is 1, where
    ``ops.softmax`` would warn that the result is constant."""
    if x.shape[axis] == 1:
        return ops.ones_like(x)
    return ops.softmax(x, axis=axis)


def masked_softmax(scores, mask=None, axis=-1):
    """Softmax over ``axis`` restricted to ``mask``; a fully masked row gives zeros.

    Args:
        scores: float tensor, e.g. `(B, T_q, T_k)` or `(B, h, T_q, T_k)`.
        mask: boolean tensor broadcastable to `scores`, True = keep; None = no mask.
        axis: the axis normalised over (the keys).

    Returns:
        Tensor shaped like `scores`: rows sum to 1 over the kept entries, masked entries
        are exactly 0, fully masked rows are all 0.
    """
    if mask is None:
        return _softmax(scores, axis)
    mask = ops.cast(mask, "bool")
    fill = ops.full((), mask_fill_value(scores.dtype), dtype=scores.dtype)
    filled = ops.where(mask, scores, fill)  # e_ij where kept, the finite filler elsewhere
    weights = _softmax(filled, axis)
    # A fully masked row was softmax'ed over equal fillers (uniform): multiplying by the
    # mask zeroes it, and leaves every other row unchanged (its masked entries are 0).
    return weights * ops.cast(mask, weights.dtype)
