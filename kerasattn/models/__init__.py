"""The seven models of the course, from the seq2seq bottleneck to the Transformer.

Each builder returns a functional `keras.Model` named after its registry entry, with inputs
``{"encoder_inputs": (B, S) int32, "decoder_inputs": (B, T) int32}`` and logits `(B, T, V)`:

======================================  ==================================================
``seq2seq``                             GRU encoder-decoder, one fixed context vector
``bahdanau``                            BiGRU encoder, additive attention from s_{t-1}
                                        inside the decoder recurrence
``bahdanau_multihead`` (step 1)         the same recurrence with multi-head attention
``encoder_self_attention`` (step 2)     + Transformer encoder blocks on the GRU outputs
``decoder_self_attention`` (step 3)     decoder: masked self-attn, cross-attn, then a GRU
``transformer_decoder_on_gru`` (step 4) Transformer decoder stack on the GRU encoder
``transformer`` (step 5)                the full Transformer
======================================  ==================================================

``incremental_decoder(model)`` returns the adapter :mod:`kerasattn.decoding` uses.
"""
from kerasattn.models import (  # noqa: F401
                              bahdanau,
                              bahdanau_multihead,
                              decoder_self_attention,
                              encoder_self_attention,
                              seq2seq,
                              transformer,
                              transformer_decoder_on_gru,
)
from kerasattn.models.attention_decoder import AttentionGRUDecoder
from kerasattn.models.common import ConcatContext, IncrementalDecoder, SourcePaddingMask
from kerasattn.models.registry import (
                              MODEL_NAMES,
                              build_model,
                              get_config_class,
                              incremental_decoder,
                              make_config,
)

__all__ = [
    "MODEL_NAMES",
    "AttentionGRUDecoder",
    "ConcatContext",
    "IncrementalDecoder",
    "SourcePaddingMask",
    "build_model",
    "get_config_class",
    "incremental_decoder",
    "make_config",
]
