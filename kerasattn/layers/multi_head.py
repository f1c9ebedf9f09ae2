"""Multi-head attention (Vaswani et al. 2017) with per-head projections.

For head i = 1..h (d_h = d_model / h):

    Q_i = X_q W_q^(i) + b_q^(i),  K_i = X_k W_k^(i) + b_k^(i),  V_i = X_v W_v^(i) + b_v^(i)
    head_i = masked_softmax(Q_i K_i^T / sqrt(d_h), M) V_i     (M boolean, True = keep)
    MHA(X_q, X_k, X_v) = [head_1; ...; head_h] W_o + b_o

Weight layout (the same as ``keras.layers.MultiHeadAttention``, so weights copy across):
query/key/value kernels `(d_in, h, d_h)` with biases `(h, d_h)`, output kernel
`(h, d_h, d_model)` with bias `(d_model,)`.
"""
from __future__ import annotations

import keras
from keras import ops

from kerasattn.layers._checks import check_dim, check_mask, check_rank, fmt
from kerasattn.layers.dot_product import scaled_dot_product_attention
from kerasattn.layers.masking import causal_mask, combine_masks


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
        query: `X_q` `(B, T_q, d_q)`.
        value: `X_v` `(B, T_k, d_v)`.
        key: `X_k` `(B, T_k, d_k)`; defaults to `value`.
        query_mask: boolean `(B, T_q)`, True = real query position. Padded query rows
            attend to nothing and get a zero context (output = output bias).
        value_mask: boolean `(B, T_k)`, True = real key.
        attention_mask: boolean `(B, T_q, T_k)`, True = query i may see key j.
        use_causal_mask: mask out keys after each query (`j <= i`).
        return_attention_scores: also return the weights `(B, h, T_q, T_k)`.
        training: enables dropout.

    Returns:
        `output` `(B, T_q, d_model)`, or `(output, weights)` with
        `return_attention_scores`.
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

    def _check_inputs(self, query, value, key, query_mask, value_mask, attention_mask):
        name = "MultiHeadCross"
        q = check_rank(name, "query", query, (3,), "(B, T_q, d_q)")
        v = check_rank(name, "value", value, (3,), "(B, T_k, d_v)")
        k = check_rank(name, "key", key, (3,), "(B, T_k, d_k)")
        check_dim(name, "value", v, 0, "query", q, 0, "the batch size B")
        check_dim(name, "key", k, 0, "value", v, 0, "the batch size B")
        check_dim(name, "key", k, 1, "value", v, 1, "the key length T_k")
        check_mask(name, "query_mask", query_mask, (q[0], q[1]), "(B, T_q)",
                   f"`query` of shape {fmt(q)}")
        check_mask(name, "value_mask", value_mask, (v[0], v[1]), "(B, T_k)",
                   f"`value` of shape {fmt(v)}")
        check_mask(name, "attention_mask", attention_mask, (q[0], q[1], v[1]),
                   "(B, T_q, T_k)", f"`query` of shape {fmt(q)} and `value` of shape "
                   f"{fmt(v)}")

    def split_heads(self, dense, x):
        """`x W^(i) + b^(i)` for every head `i`: `(B, T, d_in)` -> `(B, h, T, d_h)`."""
        return ops.transpose(dense(x), (0, 2, 1, 3))  # (B, T, h, d_h) -> (B, h, T, d_h)

    def call(self, query, value, key=None, query_mask=None, value_mask=None,
             attention_mask=None, use_causal_mask=False, return_attention_scores=False,
             training=None):
        key = value if key is None else key
        self._check_inputs(query, value, key, query_mask, value_mask, attention_mask)
        q = self.split_heads(self.query_dense, query)  # Q_i = X_q W_q^(i): (B, h, T_q, d_h)
        k = self.split_heads(self.key_dense, key)  # K_i = X_k W_k^(i): (B, h, T_k, d_h)
        v = self.split_heads(self.value_dense, value)  # V_i = X_v W_v^(i): (B, h, T_k, d_h)

        t_q, t_k = ops.shape(query)[1], ops.shape(key)[1]
        mask = combine_masks(  # True = keep, broadcast to (B, h, T_q, T_k)
            None if query_mask is None else query_mask[:, None, :, None],  # (B,1,T_q,1)
            None if value_mask is None else value_mask[:, None, None, :],  # (B,1,1,T_k)
            None if attention_mask is None else attention_mask[:, None],  # (B,1,T_q,T_k)
            causal_mask(t_q, t_k)[None, None] if use_causal_mask else None)  # (1,1,T_q,T_k)

        heads, weights = scaled_dot_product_attention(
            q, k, v, mask=mask, dropout=self.dropout_layer,
            training=training)  # head_i = softmax(Q_i K_i^T / sqrt(d_h)) V_i: (B,h,T_q,d_h)
        heads = ops.transpose(heads, (0, 2, 1, 3))  # [head_1; ...; head_h]: (B, T_q, h, d_h)
        output = self.output_dense(heads)  # [head_1; ...; head_h] W_o + b_o: (B, T_q, d)
        return (output, weights) if return_attention_scores else output

    def compute_output_spec(self, query, value, key=None, query_mask=None, value_mask=None,
                            attention_mask=None, use_causal_mask=False,
                            return_attention_scores=False, training=None):
        # Shapes only (functional models): no symbolic tracing of `call`.
        b, t_q, t_k = query.shape[0], query.shape[1], value.shape[1]
        output = keras.KerasTensor((b, t_q, self.d_model), dtype=self.compute_dtype)
        if not return_attention_scores:
            return output
        return output, keras.KerasTensor((b, self.num_heads, t_q, t_k),
                                         dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(num_heads=self.num_heads, d_model=self.d_model,
                      dropout=self.dropout, use_bias=self.use_bias)
        return config
