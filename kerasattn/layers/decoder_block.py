"""Transformer decoder block (post-norm, Vaswani et al. 2017), step 4 of the course:

    Y1 = AddNorm(X, MHA_mask(X, X, X))           masked (causal) self-attention
    Y2 = AddNorm(Y1, MHA(Y1, H_enc, H_enc))      cross-attention to the encoder
    Z  = AddNorm(Y2, FFN(Y2))
"""
from __future__ import annotations

import keras

from kerasattn.layers._checks import check_dim, check_mask, check_rank, fmt
from kerasattn.layers.add_norm import AddNorm
from kerasattn.layers.feed_forward import PositionwiseFeedForward
from kerasattn.layers.multi_head import MultiHeadCross


@keras.saving.register_keras_serializable(package="kerasattn")
class TransformerDecoderBlock(keras.layers.Layer):
    """Masked self-attention, cross-attention and feed-forward, each with an AddNorm.

    Args:
        d_model: model width (the decoder input's last dimension).
        num_heads: attention heads (must divide `d_model`).
        d_ff: feed-forward hidden width.
        dropout: dropout on the attention weights and on each sublayer output.

    Call arguments:
        decoder_sequence: `X` `(B, T, d_model)`.
        encoder_sequence: `H_enc` `(B, S, d_enc)`.
        decoder_padding_mask: boolean `(B, T)`; defaults to `decoder_sequence`'s Keras
            mask.
        encoder_padding_mask: boolean `(B, S)`; defaults to `encoder_sequence`'s Keras
            mask.
        use_causal_mask: causal self-attention (query `i` sees keys `j <= i`).
        return_attention_scores: also return `(self_weights (B, h, T, T),
            cross_weights (B, h, T, S))`.
        training: enables dropout.

    Returns:
        `Z` `(B, T, d_model)`, or `(Z, self_weights, cross_weights)`.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.num_heads, self.d_ff = int(d_model), int(num_heads), int(d_ff)
        self.dropout = float(dropout)
        self.supports_masking = True
        self.self_attention = MultiHeadCross(self.num_heads, self.d_model,
                                             dropout=self.dropout, name="self_attention")
        self.add_norm_1 = AddNorm(self.dropout, name="add_norm_1")
        self.cross_attention = MultiHeadCross(self.num_heads, self.d_model,
                                              dropout=self.dropout, name="cross_attention")
        self.add_norm_2 = AddNorm(self.dropout, name="add_norm_2")
        self.ffn = PositionwiseFeedForward(self.d_ff, name="ffn")
        self.add_norm_3 = AddNorm(self.dropout, name="add_norm_3")

    def build(self, decoder_sequence_shape, encoder_sequence_shape):
        x = decoder_sequence_shape
        check_rank("TransformerDecoderBlock", "decoder_sequence", x, (3,), "(B, T, d_model)")
        check_rank("TransformerDecoderBlock", "encoder_sequence", encoder_sequence_shape,
                   (3,), "(B, S, d_enc)")
        self.self_attention.build(x, x)
        self.add_norm_1.build(x)
        self.cross_attention.build(x, encoder_sequence_shape)
        self.add_norm_2.build(x)
        self.ffn.build(x)
        self.add_norm_3.build(x)
        self.built = True

    def call(self, decoder_sequence, encoder_sequence, decoder_padding_mask=None,
             encoder_padding_mask=None, use_causal_mask=True, return_attention_scores=False,
             training=None, decoder_sequence_mask=None, encoder_sequence_mask=None):
        name = "TransformerDecoderBlock"
        x = check_rank(name, "decoder_sequence", decoder_sequence, (3,), "(B, T, d_model)")
        h = check_rank(name, "encoder_sequence", encoder_sequence, (3,), "(B, S, d_enc)")
        if x[-1] is not None and x[-1] != self.d_model:
            raise ValueError(f"{name}: `decoder_sequence` must have d_model={self.d_model} "
                             f"features; received shape {fmt(x)}.")
        check_dim(name, "encoder_sequence", h, 0, "decoder_sequence", x, 0,
                  "the batch size B")
        # Explicit masks win; otherwise the Keras masks carried by the inputs.
        dec_mask = (decoder_sequence_mask if decoder_padding_mask is None
                    else decoder_padding_mask)
        enc_mask = (encoder_sequence_mask if encoder_padding_mask is None
                    else encoder_padding_mask)
        check_mask(name, "decoder_padding_mask", dec_mask, x[:2], "(B, T)",
                   f"`decoder_sequence` of shape {fmt(x)}")
        check_mask(name, "encoder_padding_mask", enc_mask, h[:2], "(B, S)",
                   f"`encoder_sequence` of shape {fmt(h)}")

        X, H = decoder_sequence, encoder_sequence  # (B, T, d_model), (B, S, d_enc)
        a1, self_weights = self.self_attention(
            X, X, query_mask=dec_mask, value_mask=dec_mask, use_causal_mask=use_causal_mask,
            return_attention_scores=True, training=training)  # MHA_mask(X, X, X)
        y1 = self.add_norm_1(X, a1, training=training)  # Y1 = LN(X + MHA_mask(X, X, X))
        a2, cross_weights = self.cross_attention(
            y1, H, query_mask=dec_mask, value_mask=enc_mask, return_attention_scores=True,
            training=training)  # MHA(Y1, H_enc, H_enc)
        y2 = self.add_norm_2(y1, a2, training=training)  # Y2 = LN(Y1 + MHA(Y1, H, H))
        z = self.add_norm_3(y2, self.ffn(y2, training=training),
                            training=training)  # Z = LN(Y2 + FFN(Y2)): (B, T, d_model)
        return (z, self_weights, cross_weights) if return_attention_scores else z

    def compute_output_spec(self, decoder_sequence, encoder_sequence,
                            decoder_padding_mask=None, encoder_padding_mask=None,
                            use_causal_mask=True, return_attention_scores=False,
                            training=None, decoder_sequence_mask=None,
                            encoder_sequence_mask=None):
        # Shapes only (functional models): no symbolic tracing of `call`.
        z = keras.KerasTensor(decoder_sequence.shape, dtype=self.compute_dtype)
        if not return_attention_scores:
            return z
        b, t = decoder_sequence.shape[0], decoder_sequence.shape[1]
        h, s = self.num_heads, encoder_sequence.shape[1]
        return (z, keras.KerasTensor((b, h, t, t), dtype=self.compute_dtype),
                keras.KerasTensor((b, h, t, s), dtype=self.compute_dtype))

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, num_heads=self.num_heads, d_ff=self.d_ff,
                      dropout=self.dropout)
        return config
