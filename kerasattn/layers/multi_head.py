"""Multi-head attention with per-head projections and a key/value cache.

For head i = 1..h (d_h = d_model / h):

    Q_i = X_q W_q^(i) + b_q^(i),  K_i = X_k W_k^(i) + b_k^(i),  V_i = X_v W_v^(i) + b_v^(i)
    head_i = softmax(Q_i K_i^T / sqrt(d_h) + mask) V_i
    MHA(X_q, X_k, X_v) = [head_1; ...; head_h] W_o + b_o

Weight layout (the same as ``keras.layers.MultiHeadAttention``, so weights copy across):
query/key/value kernels `(d_in, h, d_h)` with biases `(h, d_h)`, output kernel
`(h, d_h, d_model)` with bias `(d_model,)`.
"""
from __future__ import annotations

import keras
from keras import ops

from kerasattn.layers._checks import check_dim, check_mask, check_rank, fmt, static_shape
from kerasattn.layers.dot_product import scaled_dot_product_attention
from kerasattn.layers.masking import (biased_softmax, causal_mask, combine_masks,
                                      masked_softmax)


@keras.saving.register_keras_serializable(package="kerasattn")
class MultiHeadCross(keras.layers.Layer):
    """Multi-head (cross- or self-) attention, returning the weights on request.

    Args:
        num_heads: number of heads `h`.
        d_model: model width; each head has `d_h = d_model // h` dimensions and the
            output has `d_model` features. Must be divisible by `num_heads`.
        dropout: dropout rate on the attention weights.
        use_bias: whether the four projections have biases.

    Call arguments:
        query: `(B, T_q, d_q)`.
        value: `(B, T_k, d_v)`.
        key: `(B, T_k, d_k)`; defaults to `value`.
        query_mask: boolean `(B, T_q)`, True = real query position. Padded query rows
            attend to nothing and get a zero context (output = output bias).
        value_mask: boolean `(B, T_k)` (with a cache: `(B, S_max)`), True = real key.
        attention_mask: boolean `(B, T_q, T_k)` (with a cache: `(B, T_q, S_max)`).
        use_causal_mask: mask out keys after each query (`j <= i`).
        cache: optional `(B, 2, S_max, h, d_h)` tensor of projected keys and values.
            With `cache_update_index` the new keys/values of this call are written at
            that index and queries at absolute positions `cache_update_index + i` attend
            to cached keys `j <= cache_update_index + i` (incremental self-attention
            decoding). Without it the cached keys/values are used as they are
            (precomputed cross-attention memory) and `key`/`value` are ignored.
        cache_update_index: int or scalar int tensor (works under `jit`).
        return_attention_scores: also return the weights `(B, h, T_q, T_k)`.
        training: enables dropout.

    Returns:
        `output` `(B, T_q, d_model)`; `(output, weights)` with
        `return_attention_scores`; with a cache `(output, cache)` or
        `(output, weights, cache)`.
    """

    def __init__(self, num_heads, d_model, dropout=0.0, use_bias=True, **kwargs):
        super().__init__(**kwargs)
        if int(num_heads) <= 0 or int(d_model) % int(num_heads) != 0:
            raise ValueError(
                f"MultiHeadCross: `d_model` must be a positive multiple of `num_heads`; "
                f"received d_model={d_model}, num_heads={num_heads}.")
        self.num_heads = int(num_heads)
        self.d_model = int(d_model)
        self.d_h = self.d_model // self.num_heads
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        self.supports_masking = True
        h, d_h = self.num_heads, self.d_h
        bias = "hk" if use_bias else None
        self.query_dense = keras.layers.EinsumDense(
            "btd,dhk->bthk", output_shape=(None, h, d_h), bias_axes=bias, name="query")
        self.key_dense = keras.layers.EinsumDense(
            "btd,dhk->bthk", output_shape=(None, h, d_h), bias_axes=bias, name="key")
        self.value_dense = keras.layers.EinsumDense(
            "btd,dhk->bthk", output_shape=(None, h, d_h), bias_axes=bias, name="value")
        self.output_dense = keras.layers.EinsumDense(
            "bthk,hkd->btd", output_shape=(None, self.d_model),
            bias_axes="d" if use_bias else None, name="attention_output")
        for dense in (self.query_dense, self.key_dense, self.value_dense):
            dense.supports_masking = True  # position-wise: a padding mask stays valid
        self.dropout_layer = keras.layers.Dropout(self.dropout)

    def build(self, query_shape, value_shape, key_shape=None):
        key_shape = value_shape if key_shape is None else key_shape
        check_rank("MultiHeadCross", "query", query_shape, (3,), "(B, T_q, d_q)")
        check_rank("MultiHeadCross", "value", value_shape, (3,), "(B, T_k, d_v)")
        check_rank("MultiHeadCross", "key", key_shape, (3,), "(B, T_k, d_k)")
        self.query_dense.build(query_shape)
        self.key_dense.build(key_shape)
        self.value_dense.build(value_shape)
        self.output_dense.build(tuple(query_shape[:-1]) + (self.num_heads, self.d_h))
        self.built = True

    # -- shape checks ---------------------------------------------------------------
    def _check_inputs(self, query, value, key, query_mask, value_mask, attention_mask,
                      cache, cache_update_index):
        name = "MultiHeadCross"
        q = check_rank(name, "query", query, (3,), "(B, T_q, d_q)")
        v = check_rank(name, "value", value, (3,), "(B, T_k, d_v)")
        k = check_rank(name, "key", key, (3,), "(B, T_k, d_k)")
        check_dim(name, "value", v, 0, "query", q, 0, "the batch size B")
        check_dim(name, "key", k, 0, "value", v, 0, "the batch size B")
        if cache is None:
            check_dim(name, "key", k, 1, "value", v, 1, "the key length T_k")
            if cache_update_index is not None:
                raise ValueError(
                    f"{name}: `cache_update_index` is only meaningful with a `cache`; "
                    f"received cache=None, cache_update_index={cache_update_index}.")
            t_k = v[1]
        else:
            want = (q[0], 2, None, self.num_heads, self.d_h)
            c = static_shape(cache)
            if len(c) != 5 or not all(a is None or b is None or a == b
                                      for a, b in zip(c, want)):
                raise ValueError(
                    f"{name}: `cache` must have shape (B, 2, S_max, h, d_h) = {fmt(want)}; "
                    f"received `cache` with shape {fmt(c)}.")
            t_k = c[2]
        check_mask(name, "query_mask", query_mask, (q[0], q[1]), "(B, T_q)",
                   f"`query` of shape {fmt(q)}")
        against = (f"`value` of shape {fmt(v)}" if cache is None
                   else f"`cache` of shape {fmt(static_shape(cache))} (S_max keys)")
        check_mask(name, "value_mask", value_mask, (v[0], t_k),
                   "(B, T_k)" if cache is None else "(B, S_max)", against)
        check_mask(name, "attention_mask", attention_mask, (q[0], q[1], t_k),
                   "(B, T_q, T_k)" if cache is None else "(B, T_q, S_max)",
                   f"`query` of shape {fmt(q)} and {against}")

    def call(self, query, value, key=None, query_mask=None, value_mask=None,
             attention_mask=None, use_causal_mask=False, cache=None,
             cache_update_index=None, return_attention_scores=False, training=None):
        if key is None:
            key = value
        self._check_inputs(query, value, key, query_mask, value_mask, attention_mask,
                           cache, cache_update_index)

        q = self.query_dense(query)  # (B, T_q, h, d_h)
        if cache is None:
            k = self.key_dense(key)  # (B, T_k, h, d_h)
            v = self.value_dense(value)  # (B, T_k, h, d_h)
        elif cache_update_index is None:
            k, v = cache[:, 0, ...], cache[:, 1, ...]  # (B, S_max, h, d_h) each
        else:
            start = [0, cache_update_index, 0, 0]
            k = ops.slice_update(cache[:, 0, ...], start, self.key_dense(key))
            v = ops.slice_update(cache[:, 1, ...], start, self.value_dense(value))
            cache = ops.stack((k, v), axis=1)  # (B, 2, S_max, h, d_h)

        t_q, t_k = ops.shape(q)[1], ops.shape(k)[1]
        causal = None
        if cache is not None and cache_update_index is not None:
            causal = causal_mask(t_q, t_k, offset=cache_update_index)  # (T_q, S_max)
        elif use_causal_mask:
            causal = causal_mask(t_q, t_k)  # (T_q, T_k)
        mask = combine_masks(
            None if query_mask is None else query_mask[:, None, :, None],  # (B,1,T_q,1)
            None if value_mask is None else value_mask[:, None, None, :],  # (B,1,1,T_k)
            None if attention_mask is None else attention_mask[:, None],  # (B,1,T_q,T_k)
            None if causal is None else causal[None, None])  # (1, 1, T_q, T_k)

        use_dropout = self.dropout > 0.0 and training
        if return_attention_scores or use_dropout:
            out, weights = scaled_dot_product_attention(
                ops.transpose(q, (0, 2, 1, 3)),  # (B, h, T_q, d_h)
                ops.transpose(k, (0, 2, 1, 3)),  # (B, h, T_k, d_h)
                ops.transpose(v, (0, 2, 1, 3)),  # (B, h, T_k, d_h)
                mask=mask, dropout=self.dropout_layer, training=training)
            out = ops.transpose(out, (0, 2, 1, 3))  # (B, T_q, h, d_h)
        else:
            out, weights = self._fused_attention(q, k, v, mask), None
        output = self.output_dense(out)  # (B, T_q, d_model)

        result = (output,)
        if return_attention_scores:
            result += (weights,)
        if cache is not None:
            result += (cache,)
        return result[0] if len(result) == 1 else result

    # -- one query per row: recurrent decoders and incremental decoding ------------------
    #
    # The methods below are the same math as `call` for a single query position, written
    # with the projection kernels directly (no nested `Layer.__call__`, no transposes of
    # the memory, no mask algebra). They run once per time step inside a recurrence or a
    # decoding loop, where Keras's per-call machinery costs more than the arithmetic:
    # measured on eager torch at batch 1, a transformer decoding step through `call` (~50
    # nested layer calls) took 14 ms, through these paths 4.5-5.4 ms
    # (docs/benchmarks_decoding.md, "Session 7"). Tested equal to `call`.

    def _project(self, dense, x):
        """`x W + b` per head for one position: `(B, d_in)` -> `(B, h, d_h)`."""
        # `.value` here too: einsum on the backend tensor skips a conversion per call
        y = ops.einsum("bd,dhk->bhk", x, dense.kernel.value)  # x W^(i): (B, h, d_h)
        # `.value`: the backend tensor, so `+` is the backend's own add (on eager torch a
        # variable operand would route through keras.ops and its per-call overhead)
        return y if dense.bias is None else y + dense.bias.value  # + b^(i)

    def project_memory(self, memory):
        """Keys and values of a memory, projected once, head-major: `((B, h, S, d_h),) * 2`.

        For :meth:`attend_step`: a decoder attends to the same `h_enc` at every step, so
        `K = h_enc W_k` and `V = h_enc W_v` are computed (and laid out per head) once per
        sentence instead of once per step. They stay two tensors, not one stacked tensor:
        slicing a stacked tensor inside a TensorFlow loop makes every step's gradient
        scatter into a zero tensor of the full stacked size (measured: bahdanau_multihead
        training step 193 -> 91 ms on TensorFlow, B=64, T=24; torch unchanged).

        Args:
            memory: `(B, S, d_v)`.

        Returns:
            `(K, V)`, each `(B, h, S, d_h)`.
        """
        k = ops.transpose(self.key_dense(memory), (0, 2, 1, 3))  # K: (B, h, S, d_h)
        v = ops.transpose(self.value_dense(memory), (0, 2, 1, 3))  # V: (B, h, S, d_h)
        return k, v

    def init_cache(self, batch, max_length, dtype=None):
        """An empty self-attention cache for :meth:`self_attend_step`.

        Args:
            batch: `B`; max_length: `T_max`, the most positions the cache holds.

        Returns:
            `(K, V)`, zeros, each `(B, h, T_max, d_h)`.
        """
        shape = (batch, self.num_heads, max_length, self.d_h)
        dtype = dtype or self.compute_dtype
        return ops.zeros(shape, dtype=dtype), ops.zeros(shape, dtype=dtype)

    def attend_step(self, query, memory_kv, memory_mask=None, training=None,
                    memory_bias=None):
        """One query vector per row: the same math as ``call`` with a single query.

        `c = [head_1; ...; head_h] W_o + b_o` with `head_i = softmax(q_i K_i^T / sqrt(d_h))
        V_i`, `q_i = query W_q^(i) + b_q^(i)`.

        Args:
            query: `(B, d_q)`, e.g. the previous decoder state `s_{t-1}`.
            memory_kv: `(K, V)` from :meth:`project_memory`, each `(B, h, S, d_h)`.
            memory_mask: optional bool `(B, S)` (or `(1, S)`), True = real source token.
            training: enables dropout on the weights.
            memory_bias: optional `mask_bias(memory_mask)`, `(bias, keep)` each `(B, S)`,
                computed once per sentence; used instead of `memory_mask` when given.

        Returns:
            `(context (B, d_model), weights (B, h, S))`; weights before dropout.
        """
        check_rank(self.name, "query", query, (2,), "(B, d_q)")
        if not isinstance(memory_kv, (tuple, list)) or len(memory_kv) != 2:
            raise ValueError(f"{self.name}: `memory_kv` must be the pair (K, V) returned by "
                             f"project_memory; received {type(memory_kv).__name__}.")
        k, v = memory_kv  # (B, h, S, d_h) each
        check_rank(self.name, "memory_kv[0]", k, (4,), "(B, h, S, d_h)")
        q = self._project(self.query_dense, query)  # q_i: (B, h, d_h)
        scale = 1.0 / (self.d_h ** 0.5)  # a Python float: keeps q's dtype, no cast op
        # Same math, two spellings: einsum is faster in TensorFlow's loop (96 vs 103-130 ms
        # per bahdanau_multihead training step), broadcast products in eager torch (163 vs
        # 202 ms), equal on JAX (B=64, T=24).
        einsum = keras.backend.backend() != "torch"
        scores = (ops.einsum("bhd,bhsd->bhs", q, k) if einsum
                  else ops.sum(q[:, :, None, :] * k, axis=-1)) * scale  # q_i K_i^T/sqrt(d_h): (B,h,S)
        if memory_bias is not None:
            bias, keep = memory_bias
            weights = biased_softmax(scores, bias[:, None, :], keep[:, None, :])  # (B, h, S)
        else:
            mask = None if memory_mask is None else memory_mask[:, None, :]  # (B, 1, S)
            weights = masked_softmax(scores, mask)  # (B, h, S)
        dropped = (self.dropout_layer(weights, training=training)
                   if training and self.dropout > 0.0 else weights)
        heads = (ops.einsum("bhs,bhsd->bhd", dropped, v) if einsum
                 else ops.sum(dropped[..., None] * v, axis=2))  # head_i = alpha_i V_i: (B,h,d_h)
        context = ops.einsum("bhk,hkd->bd", heads,
                             self.output_dense.kernel.value)  # [head_1..h] W_o: (B, d_model)
        if self.output_dense.bias is not None:
            context = context + self.output_dense.bias.value  # + b_o
        return context, weights

    def self_attend_step(self, query, cache, index, causal_bias=None):
        """Causal self-attention of the newest position `t` over a key/value cache.

        The query's own key `k_t = x_t W_k + b_k` and value `v_t` are written at slot `t`
        of the cache, then `x_t` attends to slots `0..t` (the causal mask at step t): the
        same result as `call(..., use_causal_mask=True)` gives at position `t`.
        Inference only (no dropout).

        Args:
            query: `x_t` `(B, d_model)`.
            cache: `(K, V)` from :meth:`init_cache` or a previous step, each
                `(B, h, T_max, d_h)`, slots `0..t-1` filled.
            index: `t` (int or scalar int tensor; works under `jit`).
            causal_bias: optional `mask_bias(j <= t)`, `(bias, keep)` each `(1, T_max)`:
                the causal mask at step `t`, computed once per step for every layer
                (``causal_step_bias``); computed here when None.

        Returns:
            `(output (B, d_model), weights (B, h, T_max), (K, V))` with slot `t` written.
        """
        if not isinstance(cache, (tuple, list)) or len(cache) != 2:
            raise ValueError(f"{self.name}: `cache` must be the pair (K, V) returned by "
                             f"init_cache; received {type(cache).__name__}.")
        check_rank(self.name, "query", query, (2,), "(B, d_model)")
        k_cache, v_cache = cache  # (B, h, T_max, d_h) each
        c = check_rank(self.name, "cache[0]", k_cache, (4,), "(B, h, T_max, d_h)")
        if isinstance(index, int) and c[2] is not None and not 0 <= index < c[2]:
            raise ValueError(f"{self.name}: `index` must be in [0, T_max={c[2]}) for a "
                             f"cache of shape {fmt(c)}; received index={index}.")
        start = [0, 0, index, 0]
        k_cache = ops.slice_update(
            k_cache, start, self._project(self.key_dense, query)[:, :, None])  # K[:, :, t]
        v_cache = ops.slice_update(
            v_cache, start, self._project(self.value_dense, query)[:, :, None])  # V[:, :, t]
        if causal_bias is None:
            t_max = ops.shape(k_cache)[2]
            causal = ops.less_equal(ops.arange(t_max, dtype="int32"),
                                    ops.cast(index, "int32"))[None]  # j <= t: (1, T_max)
            output, weights = self.attend_step(query, (k_cache, v_cache), causal)
        else:
            output, weights = self.attend_step(query, (k_cache, v_cache),
                                               memory_bias=causal_bias)
        return output, weights, (k_cache, v_cache)

    def _fused_attention(self, q, k, v, mask):
        """The same math through the backend's fused kernel (no weights, no dropout).

        Fused kernels disagree on fully masked rows (uniform average, or NaN on torch), so
        such rows are unmasked for the kernel and their output is set to zero afterwards:
        the kit's rule "a fully masked row gives zeros" holds on both paths.
        """
        if mask is None:
            return ops.dot_product_attention(q, k, v)  # (B, T_q, h, d_h)
        mask = ops.broadcast_to(mask, (ops.shape(q)[0], 1, ops.shape(q)[1],
                                       ops.shape(k)[1]))  # (B, 1, T_q, T_k)
        any_key = ops.any(mask, axis=-1, keepdims=True)  # (B, 1, T_q, 1)
        safe = ops.logical_or(mask, ops.logical_not(any_key))
        out = ops.dot_product_attention(q, k, v, mask=safe)  # (B, T_q, h, d_h)
        keep = ops.transpose(any_key, (0, 2, 1, 3))  # (B, T_q, 1, 1)
        return out * ops.cast(keep, out.dtype)

    def compute_output_spec(self, query, value, key=None, query_mask=None, value_mask=None,
                            attention_mask=None, use_causal_mask=False, cache=None,
                            cache_update_index=None, return_attention_scores=False,
                            training=None):
        # Shapes only (functional models): no symbolic tracing of `call`.
        b, t_q = query.shape[0], query.shape[1]
        t_k = value.shape[1] if cache is None else cache.shape[2]
        result = (keras.KerasTensor((b, t_q, self.d_model), dtype=self.compute_dtype),)
        if return_attention_scores:
            result += (keras.KerasTensor((b, self.num_heads, t_q, t_k),
                                         dtype=self.compute_dtype),)
        if cache is not None:
            result += (keras.KerasTensor(cache.shape, dtype=cache.dtype),)
        return result[0] if len(result) == 1 else result

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, d_model=self.d_model,
                      dropout=self.dropout, use_bias=self.use_bias)
        return config
