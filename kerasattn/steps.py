"""The layers' equations for one position at a time, on the layers' own weights.

A recurrent decoder (Bahdanau et al. 2015) attends once per output step, in training and
in decoding; a Transformer decoder generating token by token (Vaswani et al. 2017) runs its
blocks on one new position per step against a key/value cache. Inside such a loop Keras's
per-call machinery (nested ``Layer.__call__``, shape checks, mask bookkeeping) costs more
than the arithmetic of one position. The functions here compute what the layers' ``call``
computes at that one position, directly from the layers' weights:

=====================================  ==================================================
:func:`project_memory`                 ``MultiHeadCross`` keys/values of a memory, once
:func:`attend_step`                    ``MultiHeadCross`` with one query per row
:func:`init_cache`                     an empty self-attention K/V cache
:func:`self_attend_step`               causal ``MultiHeadCross`` self-attention at step t
:func:`add_norm_step`                  ``AddNorm`` (no dropout)
:func:`feed_forward_step`              ``PositionwiseFeedForward`` (no dropout)
:func:`positional_step`                ``PositionalEncoding`` at position t
:func:`decoder_block_step`             ``TransformerDecoderBlock`` at position t
=====================================  ==================================================

Each is tested equal to the layer's ``call`` (a causal full pass for the cached ones) on
every backend, with the step index as a Python int (eager loop) and as a tensor (compiled
loop). The K/V cache layout, used by every decoder of the kit and by exercise 11, is a pair
``(K, V)``, each `(B, h, T_max, d_h)` (head-major): step t writes slot t of both.

Masks inside loops are passed as additive softmax terms (:func:`mask_bias`), computed once
per sentence (source padding) or once per step for every layer (:func:`causal_step_bias`).
"""
from __future__ import annotations

import keras
import numpy as np
from keras import ops

from kerasattn.layers._checks import check_rank, fmt
from kerasattn.layers.masking import mask_fill_value, masked_softmax

# -- masks as softmax terms -------------------------------------------------------------


def mask_bias(mask, dtype="float32"):
    """A boolean mask as the additive terms of :func:`biased_softmax`.

    Args:
        mask: boolean tensor, True = keep.
        dtype: float dtype of the scores the terms will be added to.

    Returns:
        `(bias, keep)` shaped like `mask`: `bias` = 0 where kept and
        ``mask_fill_value(dtype)`` elsewhere, `keep` = 1.0 / 0.0.
    """
    mask = ops.cast(mask, "bool")
    bias = ops.where(mask, ops.zeros((), dtype=dtype),
                     ops.full((), mask_fill_value(dtype), dtype=dtype))
    return bias, ops.cast(mask, dtype)


def causal_step_bias(index, max_length, dtype="float32"):
    """:func:`mask_bias` of the causal mask at incremental-decoding step `index`.

    Args:
        index: the step `t`: an int (eager loop: the row is built in NumPy) or a scalar
            int tensor (compiled loop).
        max_length: `T_max`, the width of the key/value cache.
        dtype: float dtype of the attention scores.

    Returns:
        `(bias, keep)`, each `(1, T_max)`: keys `j <= t` kept.
    """
    dtype = keras.backend.standardize_dtype(dtype)
    fill = mask_fill_value(dtype)
    if isinstance(index, (int, np.integer)):
        keep = (np.arange(max_length) <= int(index))[None]  # j <= t: (1, T_max)
        bias = np.where(keep, 0.0, fill).astype("float32")
        # built in float32 and cast by the backend (NumPy has no bfloat16 of its own)
        return (ops.convert_to_tensor(bias, dtype=dtype),
                ops.convert_to_tensor(keep.astype("float32"), dtype=dtype))
    keep = ops.cast(ops.less_equal(ops.arange(max_length, dtype="int32"),
                                   ops.cast(index, "int32")), dtype)[None]  # (1, T_max)
    return (1.0 - keep) * fill, keep  # bias: 0 kept, the filler masked


def biased_softmax(scores, bias, keep, axis=-1):
    """``masked_softmax(scores, mask)`` with the mask given as ``mask_bias(mask)``.

    `softmax(e + bias) * keep`: kept entries see a bias of 0, masked ones the filler
    (weight exactly 0), and `keep` zeroes a fully masked row.
    """
    return ops.multiply(ops.softmax(ops.add(scores, bias), axis=axis), keep)


def _softmax(scores, mask=None, bias=None):
    """`biased_softmax` when the terms are given, else `masked_softmax`."""
    if bias is not None:
        return biased_softmax(scores, *bias)
    return masked_softmax(scores, mask)


def _mixed(layer):
    """Whether `layer` computes in another dtype than its weights' (mixed precision)."""
    return layer.compute_dtype != layer.variable_dtype


def _in_compute_dtype(layer, *tensors):
    """`tensors` in `layer`'s compute dtype under a mixed-precision policy (float32
    weights, float16/bfloat16 arithmetic), as its ``call`` computes; unchanged otherwise."""
    if not _mixed(layer):
        return tensors
    return tuple(ops.cast(x, layer.compute_dtype) for x in tensors)


def _kernel_and_bias(attention, dense):
    """`dense`'s kernel and bias (or None) as backend tensors in the compute dtype."""
    # `.value`: the backend tensor, so the einsum and `+` skip keras.ops's variable
    # conversion (on eager torch that conversion costs more than the add)
    if dense.bias is None:
        return _in_compute_dtype(attention, dense.kernel.value) + (None,)
    return _in_compute_dtype(attention, dense.kernel.value, dense.bias.value)


def _project(attention, dense, x):
    """`x W^(i) + b^(i)` for every head, one position: `(B, d_in)` -> `(B, h, d_h)`."""
    kernel, bias = _kernel_and_bias(attention, dense)
    y = ops.einsum("bd,dhk->bhk", x, kernel)  # x W^(i): (B, h, d_h)
    return y if bias is None else y + bias  # + b^(i)


def project_memory(attention, memory):
    """Keys and values of a memory for :func:`attend_step`, projected once per sentence.

    Args:
        attention: a built :class:`~kerasattn.layers.MultiHeadCross`.
        memory: `h_enc`, `(B, S, d_v)`.

    Returns:
        `(K, V)`, each `(B, h, S, d_h)`: `K_i = h_enc W_k^(i) + b_k^(i)`, likewise `V_i`.
        Two tensors rather than one stacked tensor: slicing a stacked tensor inside a
        TensorFlow loop makes every step's gradient scatter into a zero tensor of the
        whole stack.
    """
    k = ops.transpose(attention.key_dense(memory), (0, 2, 1, 3))  # K: (B, h, S, d_h)
    v = ops.transpose(attention.value_dense(memory), (0, 2, 1, 3))  # V: (B, h, S, d_h)
    return k, v


def init_cache(attention, batch, max_length, dtype=None):
    """An empty self-attention cache for :func:`self_attend_step`.

    Args:
        attention: a :class:`~kerasattn.layers.MultiHeadCross`.
        batch: `B`.
        max_length: `T_max`, the most positions the cache holds.
        dtype: the cache dtype (default: the layer's compute dtype).

    Returns:
        `(K, V)`, zeros, each `(B, h, T_max, d_h)`.
    """
    shape = (batch, attention.num_heads, max_length, attention.d_h)
    dtype = dtype or attention.compute_dtype
    return ops.zeros(shape, dtype=dtype), ops.zeros(shape, dtype=dtype)


def attend_step(attention, query, memory_kv, memory_mask=None, training=None,
                memory_bias=None):
    """``MultiHeadCross`` for one query vector per row.

        q_i = query W_q^(i) + b_q^(i)
        head_i = softmax(q_i K_i^T / sqrt(d_h) + mask) V_i
        c = [head_1; ...; head_h] W_o + b_o

    Args:
        attention: a built :class:`~kerasattn.layers.MultiHeadCross`.
        query: `(B, d_q)`, e.g. the previous decoder state `s_{t-1}`.
        memory_kv: `(K, V)` from :func:`project_memory` (or a cache), each
            `(B, h, S, d_h)`.
        memory_mask: optional bool `(B, S)` (or `(1, S)`), True = real key.
        training: enables dropout on the weights.
        memory_bias: optional ``mask_bias(memory_mask)``, each `(B, S)` or `(1, S)`;
            replaces `memory_mask`.

    Returns:
        `(context (B, d_model), weights (B, h, S))`; weights before dropout.
    """
    name = attention.name
    check_rank(name, "query", query, (2,), "(B, d_q)")
    if not isinstance(memory_kv, (tuple, list)) or len(memory_kv) != 2:
        raise ValueError(f"{name}: `memory_kv` must be the pair (K, V) returned by "
                         f"project_memory; received {type(memory_kv).__name__}.")
    k, v = memory_kv  # (B, h, S, d_h) each
    check_rank(name, "memory_kv[0]", k, (4,), "(B, h, S, d_h)")
    query, k, v = _in_compute_dtype(attention, query, k, v)
    q = _project(attention, attention.query_dense, query)  # q_i: (B, h, d_h)
    scale = 1.0 / (attention.d_h ** 0.5)  # a Python float: keeps q's dtype
    # The same sums, two spellings: einsum is the faster one on TensorFlow and JAX,
    # broadcast products on eager torch (docs/benchmarks_decoding.md).
    einsum = keras.backend.backend() != "torch"
    scores = (ops.einsum("bhd,bhsd->bhs", q, k) if einsum
              else ops.sum(q[:, :, None, :] * k, axis=-1)) * scale  # q_i K_i^T/sqrt(d_h)
    if memory_bias is not None:
        bias, keep = memory_bias
        memory_bias = (bias[:, None, :], keep[:, None, :])  # (B | 1, 1, S) each
    mask = None if memory_mask is None else memory_mask[:, None, :]  # (B, 1, S)
    weights = _softmax(scores, mask, memory_bias)  # (B, h, S)
    dropped = (attention.dropout_layer(weights, training=training)
               if training and attention.dropout > 0.0 else weights)
    heads = (ops.einsum("bhs,bhsd->bhd", dropped, v) if einsum
             else ops.sum(dropped[..., None] * v, axis=2))  # head_i = alpha_i V_i: (B,h,d_h)
    w_o, b_o = _kernel_and_bias(attention, attention.output_dense)
    context = ops.einsum("bhk,hkd->bd", heads, w_o)  # [head_1; ...; head_h] W_o: (B, d)
    return (context if b_o is None else context + b_o), weights  # + b_o


def self_attend_step(attention, query, cache, index, causal_bias=None):
    """Causal ``MultiHeadCross`` self-attention of position `t` over a K/V cache.

        K[:, :, t] <- x_t W_k + b_k,   V[:, :, t] <- x_t W_v + b_v
        out_t = MHA(x_t, K[:, :, :t+1], V[:, :, :t+1])

    what ``attention(X, X, use_causal_mask=True)`` gives at position `t`. Inference only
    (no dropout).

    Args:
        attention: a built :class:`~kerasattn.layers.MultiHeadCross`.
        query: `x_t`, `(B, d_model)`.
        cache: `(K, V)` from :func:`init_cache` or the previous step, each
            `(B, h, T_max, d_h)`, slots `0..t-1` filled.
        index: `t` (int or scalar int tensor).
        causal_bias: optional ``causal_step_bias(t, T_max)``, each `(1, T_max)`, shared
            by every layer of a stack; computed here when None.

    Returns:
        `(output (B, d_model), weights (B, h, T_max), (K, V))` with slot `t` written.
    """
    name = attention.name
    if not isinstance(cache, (tuple, list)) or len(cache) != 2:
        raise ValueError(f"{name}: `cache` must be the pair (K, V) returned by "
                         f"init_cache; received {type(cache).__name__}.")
    check_rank(name, "query", query, (2,), "(B, d_model)")
    k_cache, v_cache = cache  # (B, h, T_max, d_h) each
    c = check_rank(name, "cache[0]", k_cache, (4,), "(B, h, T_max, d_h)")
    if isinstance(index, int) and c[2] is not None and not 0 <= index < c[2]:
        raise ValueError(f"{name}: `index` must be in [0, T_max={c[2]}) for a cache of "
                         f"shape {fmt(c)}; received index={index}.")
    start = [0, 0, index, 0]
    query, k_cache, v_cache = _in_compute_dtype(attention, query, k_cache, v_cache)
    k_t = _project(attention, attention.key_dense, query)[:, :, None]  # k_t: (B, h, 1, d_h)
    v_t = _project(attention, attention.value_dense, query)[:, :, None]  # (B, h, 1, d_h)
    k_cache = ops.slice_update(k_cache, start, k_t)  # K[:, :, t] = k_t
    v_cache = ops.slice_update(v_cache, start, v_t)  # V[:, :, t] = v_t
    if causal_bias is None:
        causal_bias = causal_step_bias(index, ops.shape(k_cache)[2], k_cache.dtype)
    output, weights = attend_step(attention, query, (k_cache, v_cache),
                                  memory_bias=causal_bias)  # keys j <= t
    return output, weights, (k_cache, v_cache)


# -- the other sublayers ------------------------------------------------------------------


def add_norm_step(add_norm, x, y):
    """``AddNorm`` at inference: `LayerNorm(x + y)`, `(B, d_model)`."""
    if _mixed(add_norm):  # the layer call casts the float32 gamma, beta
        x, y = _in_compute_dtype(add_norm, x, y)
        return add_norm.layer_norm(x + y)  # LN(x + y): (B, d_model)
    return add_norm.layer_norm.call(x + y)  # LN(x + y): (B, d_model)


def feed_forward_step(ffn, x):
    """``PositionwiseFeedForward`` at inference: `act(x W1 + b1) W2 + b2`, `(B, d_model)`."""
    if _mixed(ffn):  # the layer calls cast the float32 weights
        return ffn.dense_2(ffn.dense_1(x))  # (B, d_model)
    return ffn.dense_2.call(ffn.dense_1.call(x))  # (B, d_model)


def positional_step(positional, x, index):
    """``PositionalEncoding`` of one position: `c x + PE[t]`, `(B, d)` -> `(B, d)`.

    What ``positional(x[:, None], start_index=t)`` gives (no dropout): the token sits at
    its true position `t`.

    Args:
        positional: a built :class:`~kerasattn.layers.PositionalEncoding`.
        x: the embedding `(B, d_model)`.
        index: `t` (int or scalar int tensor).
    """
    table = positional.table  # (max_length, d_model), NumPy
    dtype = positional.compute_dtype
    if isinstance(index, (int, np.integer)):  # eager loop: one row of the constant
        if not 0 <= index < positional.max_length:
            raise ValueError(f"PositionalEncoding: `index` must be in [0, max_length="
                             f"{positional.max_length}); received index={index}.")
        pe = ops.convert_to_tensor(table[int(index)], dtype=dtype)  # PE[t]: (d_model,)
    else:  # traced step: index the table inside the graph
        pe = ops.take(ops.convert_to_tensor(table, dtype=dtype),
                      ops.cast(index, "int32"), axis=0)  # PE[t]: (d_model,)
    x = ops.convert_to_tensor(x, dtype=dtype)
    if positional.scale_inputs:
        x = x * ops.cast(np.sqrt(positional.d_model), x.dtype)  # sqrt(d_model) Embed(y)
    return x + pe  # (B, d_model)


def decoder_block_step(block, x, self_attention_cache, encoder_memory, index,
                       encoder_padding_mask=None, self_attention_bias=None,
                       encoder_padding_bias=None):
    """``TransformerDecoderBlock`` at the newest position `t` (inference only).

        Y1 = AddNorm(X, MHA_mask(X, X, X))        keys 0..t from the cache
        Y2 = AddNorm(Y1, MHA(Y1, H_enc, H_enc))
        Z  = AddNorm(Y2, FFN(Y2))

    Args:
        block: a built :class:`~kerasattn.layers.TransformerDecoderBlock`.
        x: `x_t` `(B, d_model)`, the block input at position `t`.
        self_attention_cache: `(K, V)`, each `(B, h, T_max, d_h)`, slots `0..t-1` filled.
        encoder_memory: ``project_memory(block.cross_attention, H_enc)``, each
            `(B, h, S, d_h)`.
        index: `t` (int or scalar int tensor).
        encoder_padding_mask: bool `(B, S)`, True = real source token.
        self_attention_bias: optional ``causal_step_bias(t, T_max)``, shared by the stack.
        encoder_padding_bias: optional ``mask_bias(encoder_padding_mask)``; replaces
            `encoder_padding_mask`.

    Returns:
        `(z (B, d_model), self_attention_cache, self_weights (B, h, T_max),
        cross_weights (B, h, S))`.
    """
    a1, self_weights, cache = self_attend_step(
        block.self_attention, x, self_attention_cache, index,
        causal_bias=self_attention_bias)  # MHA_mask(X, X, X) at t
    y1 = add_norm_step(block.add_norm_1, x, a1)  # Y1 = LN(X + MHA_mask(X, X, X))
    a2, cross_weights = attend_step(
        block.cross_attention, y1, encoder_memory, memory_mask=encoder_padding_mask,
        memory_bias=encoder_padding_bias)  # MHA(Y1, H_enc, H_enc)
    y2 = add_norm_step(block.add_norm_2, y1, a2)  # Y2 = LN(Y1 + MHA(Y1, H, H))
    z = add_norm_step(block.add_norm_3, y2, feed_forward_step(block.ffn, y2))  # Z
    return z, cache, self_weights, cross_weights
