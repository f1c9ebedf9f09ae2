"""Step 1 of the path: the Bahdanau decoder with multi-head attention.

The recurrence is unchanged (the query is still the previous state s_{t-1} and the context
still enters the GRU input); only the score changes, from one additive score to `h`
scaled dot-product heads in learned subspaces:

    Q_i = s_{t-1} W_q^(i),  K_i = H_enc W_k^(i),  V_i = H_enc W_v^(i)
    head_i = softmax(Q_i K_i^T / sqrt(d_h)) V_i,   c_t = [head_1; ...; head_h] W_o
    s_t = GRU([y_{t-1}; c_t], s_{t-1})
"""
from __future__ import annotations

import dataclasses

import keras

from kerasattn.models.attention_decoder import RecurrentAttentionDecoder
from kerasattn.models.bahdanau import build_recurrent_attention_model
from kerasattn.models.common import ModelConfig
from kerasattn.models.registry import register_model


@dataclasses.dataclass
class BahdanauMultiHeadConfig(ModelConfig):
    """Hyperparameters of `bahdanau_multihead`.

    Attributes:
        embed_dim: embedding size `E`.
        d_model: width of the encoder annotations (`d_model / 2` GRU units per direction)
            and of the multi-head context `c_t`.
        num_heads: attention heads `h` (`d_h = d_model / h`).
        units: decoder GRU state size.
        dropout: dropout on embeddings and before the output layer.
    """

    embed_dim: int = 64
    d_model: int = 128
    num_heads: int = 4
    units: int = 64
    dropout: float = 0.1


@register_model("bahdanau_multihead", BahdanauMultiHeadConfig, RecurrentAttentionDecoder)
def build_bahdanau_multihead(config: BahdanauMultiHeadConfig, src_vocab_size: int,
                             tgt_vocab_size: int) -> keras.Model:
    return build_recurrent_attention_model(
        "bahdanau_multihead", src_vocab_size, tgt_vocab_size, embed_dim=config.embed_dim,
        encoder_units=config.d_model // 2, decoder_units=config.units,
        dropout=config.dropout, attention="multihead", num_heads=config.num_heads,
        d_attention=config.d_model)
