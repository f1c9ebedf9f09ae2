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
import numpy as np
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


def _large_negative(dtype):
    # Same choice as keras.layers.Softmax: -1e9, or -3e4 where 1e9 overflows (float16).
    return -3e4 if dtype == "float16" else -1e9


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
        return ops.softmax(scores, axis=axis)
    mask = ops.cast(mask, "bool")
    fill = _large_negative(keras.backend.standardize_dtype(scores.dtype))
    filled = ops.where(mask, scores, ops.cast(fill, scores.dtype))  # e_ij or -inf-ish
    weights = ops.softmax(filled, axis=axis)
    # A fully masked row was softmax'ed over equal fillers (uniform): multiplying by the
    # mask zeroes it, and leaves every other row unchanged (its masked entries are ~0).
    return weights * ops.cast(mask, weights.dtype)


def mask_bias(mask, dtype="float32"):
    """A boolean mask as the additive terms of :func:`biased_softmax`, for use in a loop.

    Args:
        mask: boolean tensor, True = keep.
        dtype: float dtype of the scores the terms will be added to.

    Returns:
        `(bias, keep)` shaped like `mask`: `bias` = 0 where kept and the large negative
        filler elsewhere, `keep` = 1.0 / 0.0. A decoder that applies the same source mask
        at every step computes them once per sentence.
    """
    mask = ops.cast(mask, "bool")
    fill = _large_negative(keras.backend.standardize_dtype(dtype))
    bias = ops.where(mask, ops.zeros((), dtype=dtype), ops.full((), fill, dtype=dtype))
    return bias, ops.cast(mask, dtype)


def causal_step_bias(index, max_length, dtype="float32"):
    """``mask_bias`` of the causal mask at incremental-decoding step `index`.

    Args:
        index: the step `t`: an int (eager loop: the row is built in NumPy, no backend op
            but the conversion) or a scalar int tensor (a compiled loop).
        max_length: `T_max`, the width of the key/value cache.
        dtype: float dtype of the attention scores.

    Returns:
        `(bias, keep)`, each `(1, T_max)`: keys `j <= t` kept. Computed once per step and
        shared by every layer of a decoder stack.
    """
    dtype = keras.backend.standardize_dtype(dtype)
    if isinstance(index, (int, np.integer)):
        keep = (np.arange(max_length) <= int(index))[None]  # j <= t: (1, T_max)
        bias = np.where(keep, 0.0, _large_negative(dtype)).astype("float32")
        # built in float32, cast by the backend (NumPy knows bfloat16 only through ml_dtypes)
        return (ops.convert_to_tensor(bias, dtype=dtype),
                ops.convert_to_tensor(keep.astype("float32"), dtype=dtype))
    keep = ops.cast(ops.less_equal(ops.arange(max_length, dtype="int32"),
                                   ops.cast(index, "int32")), dtype)[None]  # (1, T_max)
    return (keep - 1.0) * (-_large_negative(dtype)), keep  # bias: 0 kept, filler masked


def biased_softmax(scores, bias, keep, axis=-1):
    """:func:`masked_softmax` with the mask given as ``mask_bias(mask)``: 3 ops, not 6.

    `softmax(e + bias) * keep`: the kept entries see a bias of 0, the masked ones a large
    negative number (weight exactly 0 after the softmax), and `keep` zeroes a fully masked
    row. Equal to ``masked_softmax(scores, mask, axis)`` (tested).
    """
    return ops.multiply(ops.softmax(ops.add(scores, bias), axis=axis), keep)
