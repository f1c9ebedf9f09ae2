"""Step 5 of the path: the full Transformer (Vaswani et al., 2017).

No recurrence left: the encoder is N blocks of [MHA + AddNorm, FFN + AddNorm] over
``PE(Embed(x))`` (padding masked), the decoder is step 4's stack of masked self-attention,
cross-attention and FFN blocks. Post-norm and sinusoidal positions, as
in the paper.
"""
from __future__ import annotations

import dataclasses

import keras

from kerasattn.models.common import ModelConfig, SourcePaddingMask, finish_model, model_inputs
from kerasattn.models.encoders import transformer_encoder
from kerasattn.models.registry import register_model
from kerasattn.models.transformer_decoder import (
    TransformerDecoderAdapter,
    random_position_shift,
    transformer_decoder,
)


@dataclasses.dataclass
class TransformerConfig(ModelConfig):
    """Hyperparameters of `transformer`.

    Attributes:
        d_model: model width (embeddings, blocks).
        num_heads: heads `h` (`d_h = d_model / h`).
        d_ff: feed-forward hidden size.
        num_encoder_layers: encoder blocks.
        num_decoder_layers: decoder blocks.
        dropout: dropout after positional encoding, on attention weights and sublayers.
        max_length: longest source / target the positional encoding covers.
        max_position_shift: `K` of `RandomPositionShift`: during training every sentence
            starts at a random position in `0..K`, the same in encoder and decoder
            (SHAPE), so test sentences longer than the training ones are not the first
            to use the high positions. 0 = the paper's positions from 0.
    """

    d_model: int = 128
    num_heads: int = 4
    d_ff: int = 256
    num_encoder_layers: int = 2
    num_decoder_layers: int = 2
    dropout: float = 0.1
    max_length: int = 256
    max_position_shift: int = 32


@register_model("transformer", TransformerConfig, TransformerDecoderAdapter)
def build_transformer(config: TransformerConfig, src_vocab_size: int,
                      tgt_vocab_size: int) -> keras.Model:
    src, tgt = model_inputs()
    src_mask = SourcePaddingMask(name="source_mask")(src)  # (B, S)
    shift = random_position_shift(src, config.max_position_shift,
                                  config.max_length)  # k_b: (B,), 0 at inference
    h_enc = transformer_encoder(src, src_mask, src_vocab_size, config.d_model,
                                config.num_encoder_layers, config.num_heads, config.d_ff,
                                dropout=config.dropout, max_length=config.max_length,
                                position_shift=shift)
    logits = transformer_decoder(tgt, h_enc, src_mask, tgt_vocab_size, config.d_model,
                                 config.num_decoder_layers, config.num_heads, config.d_ff,
                                 dropout=config.dropout, max_length=config.max_length,
                                 position_shift=shift)
    return finish_model("transformer", src, tgt, logits)
