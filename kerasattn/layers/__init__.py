"""The attention layer library: one concept per module, keras.ops only.

Masks are boolean, True = keep. Every layer is registered for `.keras` serialization
under the package name "kerasattn".
"""
from kerasattn.layers.add_norm import AddNorm
from kerasattn.layers.bahdanau import BahdanauAttention
from kerasattn.layers.decoder_block import TransformerDecoderBlock
from kerasattn.layers.dot_product import scaled_dot_product_attention
from kerasattn.layers.encoder_block import TransformerEncoderBlock
from kerasattn.layers.encoder_gru import EncoderGRU
from kerasattn.layers.feed_forward import PositionwiseFeedForward
from kerasattn.layers.masking import causal_mask, combine_masks, masked_softmax, padding_mask
from kerasattn.layers.multi_head import MultiHeadCross
from kerasattn.layers.positional import PositionalEncoding, RandomPositionShift, positional_encoding

__all__ = [
    "AddNorm",
    "BahdanauAttention",
    "EncoderGRU",
    "MultiHeadCross",
    "PositionalEncoding",
    "PositionwiseFeedForward",
    "RandomPositionShift",
    "TransformerDecoderBlock",
    "TransformerEncoderBlock",
    "causal_mask",
    "combine_masks",
    "masked_softmax",
    "padding_mask",
    "positional_encoding",
    "scaled_dot_product_attention",
]
