"""Transformer decoder block (post-norm, as in the seeds' step 4):

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
            mask. With a cache it masks the current queries only (cached keys are the
            tokens generated so far).
        encoder_padding_mask: boolean `(B, S)`; defaults to `encoder_sequence`'s mask.
        self_attention_cache: `(B, 2, T_max, h, d_h)` self-attention keys/values.
        self_attention_cache_update_index: position of `decoder_sequence[:, 0]`
            (int or scalar tensor; works under `jit`).
        use_causal_mask: causal self-attention (always on with a cache).
        return_attention_scores: also return `(self_weights (B, h, T, T or T_max),
            cross_weights (B, h, T, S))`.
        training: enables dropout.

    Returns:
        `output` `(B, T, d_model)`, then the updated cache if one was given, then the two
        weight tensors if requested.
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
             encoder_padding_mask=None, self_attention_cache=None,
             self_attention_cache_update_index=None, use_causal_mask=True,
             return_attention_scores=False, training=None, decoder_sequence_mask=None,
             encoder_sequence_mask=None):
        name = "TransformerDecoderBlock"
        x = check_rank(name, "decoder_sequence", decoder_sequence, (3,), "(B, T, d_model)")
        h = check_rank(name, "encoder_sequence", encoder_sequence, (3,), "(B, S, d_enc)")
        if x[-1] is not None and x[-1] != self.d_model:
            raise ValueError(f"{name}: `decoder_sequence` must have d_model={self.d_model} "
                             f"features; received shape {fmt(x)}.")
        check_dim(name, "encoder_sequence", h, 0, "decoder_sequence", x, 0,
                  "the batch size B")
        if (self_attention_cache is None) != (self_attention_cache_update_index is None):
            raise ValueError(f"{name}: pass `self_attention_cache` and "
                             "`self_attention_cache_update_index` together; received "
                             f"cache={'None' if self_attention_cache is None else 'tensor'}"
                             f", index={self_attention_cache_update_index}.")
        # Explicit masks win; otherwise the Keras masks carried by the inputs.
        dec_mask = (decoder_sequence_mask if decoder_padding_mask is None
                    else decoder_padding_mask)
        enc_mask = (encoder_sequence_mask if encoder_padding_mask is None
                    else encoder_padding_mask)
        check_mask(name, "decoder_padding_mask", dec_mask, x[:2], "(B, T)",
                   f"`decoder_sequence` of shape {fmt(x)}")
        check_mask(name, "encoder_padding_mask", enc_mask, h[:2], "(B, S)",
                   f"`encoder_sequence` of shape {fmt(h)}")

        X = decoder_sequence
        cached = self_attention_cache is not None
        a1 = self.self_attention(
            X, X, query_mask=dec_mask, value_mask=None if cached else dec_mask,
            use_causal_mask=use_causal_mask, cache=self_attention_cache,
            cache_update_index=self_attention_cache_update_index,
            return_attention_scores=return_attention_scores, training=training)
        a1 = a1 if isinstance(a1, (tuple, list)) else (a1,)
        cache = a1[-1] if cached else None
        self_weights = a1[1] if return_attention_scores else None
        y1 = self.add_norm_1(X, a1[0], training=training)  # Y1 = LN(X + MHA_mask(X,X,X))

        a2 = self.cross_attention(y1, encoder_sequence, query_mask=dec_mask,
                                  value_mask=enc_mask,
                                  return_attention_scores=return_attention_scores,
                                  training=training)
        a2, cross_weights = a2 if return_attention_scores else (a2, None)
        y2 = self.add_norm_2(y1, a2, training=training)  # Y2 = LN(Y1 + MHA(Y1,H,H))
        z = self.add_norm_3(y2, self.ffn(y2, training=training),
                            training=training)  # Z = LN(Y2 + FFN(Y2))

        result = (z,)
        if cached:
            result += (cache,)
        if return_attention_scores:
            result += (self_weights, cross_weights)
        return result[0] if len(result) == 1 else result

    def decode_step(self, x, self_attention_cache, encoder_memory, index,
                    encoder_padding_mask=None, self_attention_bias=None,
                    encoder_padding_bias=None):
        """One incremental decoding step for the newest position `t` (inference only).

        The same math as ``call`` at position `t` of a causal pass (tested equal), through
        the layers' single-position fast paths: no nested `Layer.__call__`, no dropout.

        Args:
            x: `x_t` `(B, d_model)`, the block input at position `t`.
            self_attention_cache: `(K, V)`, each `(B, h, T_max, d_h)`, slots `0..t-1`
                filled (``self_attention.init_cache`` at `t = 0`).
            encoder_memory: `(K, V)` = ``cross_attention.project_memory(H_enc)``, each
                `(B, h, S, d_h)`, projected once per sentence.
            index: `t` (int or scalar int tensor).
            encoder_padding_mask: bool `(B, S)`, True = real source token.
            self_attention_bias: optional `(bias, keep)` of the causal mask at step `t`,
                each `(1, T_max)` (``masking.causal_step_bias``), computed once per step
                and shared by every layer of the stack.
            encoder_padding_bias: optional ``mask_bias(encoder_padding_mask)``, computed once
                per sentence; replaces `encoder_padding_mask`.

        Returns:
            `(z (B, d_model), self_attention_cache, self_weights (B, h, T_max),
            cross_weights (B, h, S))`.
        """
        a1, self_weights, cache = self.self_attention.self_attend_step(
            x, self_attention_cache, index,
            causal_bias=self_attention_bias)  # MHA_mask(X, X, X) at t, keys 0..t
        y1 = self.add_norm_1.decode_step(x, a1)  # Y1 = LN(X + MHA_mask(X, X, X))
        a2, cross_weights = self.cross_attention.attend_step(
            y1, encoder_memory, memory_mask=encoder_padding_mask,
            memory_bias=encoder_padding_bias)  # MHA(Y1, H_enc, H_enc)
        y2 = self.add_norm_2.decode_step(y1, a2)  # Y2 = LN(Y1 + MHA(Y1, H, H))
        z = self.add_norm_3.decode_step(y2, self.ffn.decode_step(y2))  # Z = LN(Y2 + FFN(Y2))
        return z, cache, self_weights, cross_weights

    def compute_output_spec(self, decoder_sequence, encoder_sequence,
                            decoder_padding_mask=None, encoder_padding_mask=None,
                            self_attention_cache=None,
                            self_attention_cache_update_index=None, use_causal_mask=True,
                            return_attention_scores=False, training=None,
                            decoder_sequence_mask=None, encoder_sequence_mask=None):
        # Shapes only (functional models): no symbolic tracing of `call`.
        b, t = decoder_sequence.shape[0], decoder_sequence.shape[1]
        result = (keras.KerasTensor(decoder_sequence.shape, dtype=self.compute_dtype),)
        t_self = t
        if self_attention_cache is not None:
            result += (keras.KerasTensor(self_attention_cache.shape,
                                         dtype=self_attention_cache.dtype),)
            t_self = self_attention_cache.shape[2]
        if return_attention_scores:
            h, s = self.num_heads, encoder_sequence.shape[1]
            result += (keras.KerasTensor((b, h, t, t_self), dtype=self.compute_dtype),
                       keras.KerasTensor((b, h, t, s), dtype=self.compute_dtype))
        return result[0] if len(result) == 1 else result

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, num_heads=self.num_heads, d_ff=self.d_ff,
                      dropout=self.dropout)
        return config
