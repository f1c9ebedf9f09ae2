"""Step 4 of the path: a Transformer decoder on the GRU (+ self-attention) encoder.

The encoder is step 2's (bidirectional GRU, then self-attention blocks); the recurrent
decoder is gone: stacked decoder blocks with positional encodings decode all target
positions in parallel during training,

    Y1 = AddNorm(X, MHA_mask(X, X, X))
    Y2 = AddNorm(Y1, MHA(Y1, H_enc, H_enc))
    Z  = AddNorm(Y2, FFN(Y2))

and at inference each block caches its keys/values (see
:mod:`kerasattn.models.transformer_decoder`).
"""
from __future__ import annotations

import dataclasses

import keras

from kerasattn.models.common import ModelConfig, SourcePaddingMask, finish_model, model_inputs
from kerasattn.models.encoders import bigru_encoder
from kerasattn.models.registry import register_model
from kerasattn.models.transformer_decoder import (
    TransformerDecoderAdapter,
    random_position_shift,
    transformer_decoder,
)


@dataclasses.dataclass
class TransformerDecoderOnGRUConfig(ModelConfig):
    """Hyperparameters of `transformer_decoder_on_gru`.

    Attributes:
        embed_dim: source embedding size `E`.
        d_model: model width (`d_model / 2` encoder GRU units per direction).
        num_heads: heads `h`.
        d_ff: feed-forward hidden size.
        num_encoder_blocks: self-attention blocks on the GRU outputs.
        num_decoder_layers: Transformer decoder blocks `N`.
        dropout: dropout on embeddings, attention weights and sublayer outputs.
        max_length: longest target the positional encoding covers.
        max_position_shift: `K` of `RandomPositionShift`: during training every target
            starts at a random position in `0..K` (SHAPE, Kiyono et al. 2021), so test
            sentences longer than the training ones are not the first to use the high
            positions. 0 = the
            paper's positions from 0.
    """

    embed_dim: int = 64
    d_model: int = 128
    num_heads: int = 4
    d_ff: int = 256
    num_encoder_blocks: int = 1
    num_decoder_layers: int = 2
    dropout: float = 0.1
    max_length: int = 256
    max_position_shift: int = 32


@register_model("transformer_decoder_on_gru", TransformerDecoderOnGRUConfig,
                TransformerDecoderAdapter)
def build_transformer_decoder_on_gru(config: TransformerDecoderOnGRUConfig,
                                     src_vocab_size: int, tgt_vocab_size: int) -> keras.Model:
    src, tgt = model_inputs()
    src_mask = SourcePaddingMask(name="source_mask")(src)  # (B, S)
    h_enc, _ = bigru_encoder(src, src_mask, src_vocab_size, config.embed_dim,
                             config.d_model // 2, dropout=config.dropout,
                             num_blocks=config.num_encoder_blocks,
                             num_heads=config.num_heads, d_ff=config.d_ff)  # (B, S, d)
    shift = random_position_shift(tgt, config.max_position_shift,
                                  config.max_length)  # k_b: (B,), 0 at inference
    logits = transformer_decoder(tgt, h_enc, src_mask, tgt_vocab_size, config.d_model,
                                 config.num_decoder_layers, config.num_heads, config.d_ff,
                                 dropout=config.dropout, max_length=config.max_length,
                                 position_shift=shift)
    return finish_model("transformer_decoder_on_gru", src, tgt, logits)
