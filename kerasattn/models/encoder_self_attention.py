"""Step 2 of the path: Transformer encoder blocks on top of the GRU encoder.

The decoder is step 1's (GRU with multi-head attention from s_{t-1}); the encoder's GRU
annotations H now pass through self-attention blocks (padding masked):

    Z  = LayerNorm(H + MHA(H, H, H, mask))
    H' = LayerNorm(Z + FFN(Z)),   FFN(x) = relu(x W_1 + b_1) W_2 + b_2
"""
from __future__ import annotations

import dataclasses

import keras

from kerasattn.models.attention_decoder import RecurrentAttentionDecoder
from kerasattn.models.bahdanau import build_recurrent_attention_model
from kerasattn.models.common import ModelConfig
from kerasattn.models.registry import register_model


@dataclasses.dataclass
class EncoderSelfAttentionConfig(ModelConfig):
    """Hyperparameters of `encoder_self_attention`.

    Attributes:
        embed_dim: embedding size `E`.
        d_model: annotation width (`d_model / 2` GRU units per direction), width of the
            encoder blocks and of the decoder's multi-head context.
        num_heads: heads `h` in the encoder blocks and the decoder attention.
        d_ff: hidden size of the blocks' feed-forward network.
        num_encoder_blocks: self-attention blocks on the GRU outputs.
        units: decoder GRU state size.
        dropout: dropout on embeddings, in the blocks and before the output layer.
    """

    embed_dim: int = 64
    d_model: int = 128
    num_heads: int = 4
    d_ff: int = 256
    num_encoder_blocks: int = 1
    units: int = 64
    dropout: float = 0.1


@register_model("encoder_self_attention", EncoderSelfAttentionConfig,
                RecurrentAttentionDecoder)
def build_encoder_self_attention(config: EncoderSelfAttentionConfig, src_vocab_size: int,
                                 tgt_vocab_size: int) -> keras.Model:
    return build_recurrent_attention_model(
        "encoder_self_attention", src_vocab_size, tgt_vocab_size,
        embed_dim=config.embed_dim, encoder_units=config.d_model // 2,
        decoder_units=config.units, dropout=config.dropout, attention="multihead",
        num_heads=config.num_heads, d_attention=config.d_model,
        num_encoder_blocks=config.num_encoder_blocks, d_ff=config.d_ff)
