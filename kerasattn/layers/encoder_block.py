"""Transformer encoder block (post-norm, Vaswani et al. 2017), step 2 of the course:

    Z  = AddNorm(H, MHA(H, H, H, mask))
    H' = AddNorm(Z, FFN(Z))
"""
from __future__ import annotations

import keras

from kerasattn.layers._checks import check_mask, check_rank, fmt
from kerasattn.layers.add_norm import AddNorm
from kerasattn.layers.feed_forward import PositionwiseFeedForward
from kerasattn.layers.multi_head import MultiHeadCross


@keras.saving.register_keras_serializable(package="kerasattn")
class TransformerEncoderBlock(keras.layers.Layer):
    """Self-attention and feed-forward sublayers, each wrapped in an AddNorm.

    Args:
        d_model: model width (the input's last dimension).
        num_heads: attention heads (must divide `d_model`).
        d_ff: feed-forward hidden width.
        dropout: dropout on the attention weights and on each sublayer output.

    Call arguments:
        x: `(B, T, d_model)`.
        padding_mask: boolean `(B, T)`, True = real token. Defaults to `x`'s Keras mask
            (passed by Keras as `mask`).
        return_attention_scores: also return the weights `(B, h, T, T)`.
        training: enables dropout.

    Returns:
        `(B, T, d_model)`, or `(output, weights)`.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.num_heads, self.d_ff = int(d_model), int(num_heads), int(d_ff)
        self.dropout = float(dropout)
        self.supports_masking = True
        self.attention = MultiHeadCross(self.num_heads, self.d_model, dropout=self.dropout,
                                        name="attention")
        self.add_norm_1 = AddNorm(self.dropout, name="add_norm_1")
        self.ffn = PositionwiseFeedForward(self.d_ff, name="ffn")
        self.add_norm_2 = AddNorm(self.dropout, name="add_norm_2")

    def build(self, x_shape):
        check_rank("TransformerEncoderBlock", "x", x_shape, (3,), "(B, T, d_model)")
        self.attention.build(x_shape, x_shape)
        self.add_norm_1.build(x_shape)
        self.ffn.build(x_shape)
        self.add_norm_2.build(x_shape)
        self.built = True

    def call(self, x, padding_mask=None, return_attention_scores=False, training=None,
             mask=None):
        s = check_rank("TransformerEncoderBlock", "x", x, (3,), "(B, T, d_model)")
        if s[-1] is not None and s[-1] != self.d_model:
            raise ValueError(f"TransformerEncoderBlock: `x` must have d_model="
                             f"{self.d_model} features; received shape {fmt(s)}.")
        padding_mask = mask if padding_mask is None else padding_mask
        check_mask("TransformerEncoderBlock", "padding_mask", padding_mask, s[:2],
                   "(B, T)", f"`x` of shape {fmt(s)}")
        a = self.attention(x, x, query_mask=padding_mask, value_mask=padding_mask,
                           return_attention_scores=return_attention_scores,
                           training=training)
        a, weights = a if return_attention_scores else (a, None)
        z = self.add_norm_1(x, a, training=training)  # Z = LN(H + MHA(H,H,H))
        out = self.add_norm_2(z, self.ffn(z, training=training),
                              training=training)  # H' = LN(Z + FFN(Z))
        return (out, weights) if return_attention_scores else out

    def compute_output_spec(self, x, padding_mask=None, return_attention_scores=False,
                            training=None, mask=None):
        out = keras.KerasTensor(x.shape, dtype=self.compute_dtype)
        if not return_attention_scores:
            return out
        b, t = x.shape[0], x.shape[1]
        return out, keras.KerasTensor((b, self.num_heads, t, t), dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, num_heads=self.num_heads, d_ff=self.d_ff,
                      dropout=self.dropout)
        return config
