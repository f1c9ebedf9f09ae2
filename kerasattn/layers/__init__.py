"""The attention layer library: one concept per module, keras.ops only.

Masks are boolean, True = keep. Every layer is registered for `.keras` serialization
under the package name "kerasattn".
"""
from kerasattn.layers.bahdanau import BahdanauAttention
from kerasattn.layers.dot_product import scaled_dot_product_attention
from kerasattn.layers.masking import causal_mask, combine_masks, masked_softmax, padding_mask
from kerasattn.layers.multi_head import MultiHeadCross

__all__ = [
    "BahdanauAttention",
    "MultiHeadCross",
    "causal_mask",
    "combine_masks",
    "masked_softmax",
    "padding_mask",
    "scaled_dot_product_attention",
]
