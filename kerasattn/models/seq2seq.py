"""The baseline: a GRU encoder-decoder with one fixed context vector (Cho et al., 2014).

    c   = h_n                          the state after the sentence's last word n (padding
                                       skipped by the mask)
    s_0 = tanh(W_b c + b_b)
    s_t = GRU([y_{t-1}; c], s_{t-1})   the same c at every step: the bottleneck
    logits_t = W_o s_t + b_o

Everything the decoder knows about the source passes through the `units` numbers of `c`;
the attention models that follow remove this bottleneck.
"""
from __future__ import annotations

import dataclasses

import keras
from keras import ops

from kerasattn.layers import EncoderGRU
from kerasattn.models.common import (
    ConcatContext,
    IncrementalDecoder,
    ModelConfig,
    SourcePaddingMask,
    finish_model,
    model_inputs,
)
from kerasattn.models.registry import register_model


@dataclasses.dataclass
class Seq2SeqConfig(ModelConfig):
    """Hyperparameters of `seq2seq`.

    Attributes:
        embed_dim: source and target embedding size `E`.
        units: GRU state size `u` (encoder and decoder) = size of the context `c`.
        dropout: dropout on the embeddings.
    """

    embed_dim: int = 64
    units: int = 128
    dropout: float = 0.1


class Seq2SeqDecoder(IncrementalDecoder):
    """Incremental decoding: state ``c`` (the fixed context) and ``s`` = s_{t-1}."""

    encoder_outputs = ("encoder_memory", "bridge")

    def __init__(self, model):
        super().__init__(model)
        self.cell = model.get_layer("decoder_gru").cell

    def init_state(self, state, max_length):
        return {"c": state["encoder_memory"], "s": state["bridge"]}

    def step(self, token, state, t):
        y_prev = self.embed_step(token)  # (B, E)
        x = ops.concatenate([y_prev, state["c"]], axis=-1)  # [y_{t-1}; c]
        s_t, _ = self.cell(x, [state["s"]])  # s_t = GRU(x, s_{t-1})
        return self.output_projection(s_t), dict(state, s=s_t), {}  # no attention

    def attention_shapes(self, state, max_length):
        return {}


@register_model("seq2seq", Seq2SeqConfig, Seq2SeqDecoder)
def build_seq2seq(config: Seq2SeqConfig, src_vocab_size: int,
                  tgt_vocab_size: int) -> keras.Model:
    src, tgt = model_inputs()
    src_mask = SourcePaddingMask(name="source_mask")(src)  # (B, S)
    x = keras.layers.Embedding(src_vocab_size, config.embed_dim, name="src_embedding")(src)
    x = keras.layers.Dropout(config.dropout, name="src_dropout")(x)
    _, c = EncoderGRU(config.units, bidirectional=False,
                      name="encoder_gru")(x, mask=src_mask)  # c = h_n: (B, u)
    c = keras.layers.Identity(name="encoder_memory")(c)
    s0 = keras.layers.Dense(config.units, activation="tanh", name="bridge")(c)  # (B, u)
    y = keras.layers.Embedding(tgt_vocab_size, config.embed_dim, name="tgt_embedding")(tgt)
    y = keras.layers.Dropout(config.dropout, name="tgt_dropout")(y)
    y = ConcatContext(name="concat_context")(y, c)  # [y_{t-1}; c]: (B, T, E + u)
    s = keras.layers.GRU(config.units, return_sequences=True,
                         name="decoder_gru")(y, initial_state=s0)  # (B, T, u)
    logits = keras.layers.Dense(tgt_vocab_size, name="output_projection")(s)  # (B, T, V)
    return finish_model("seq2seq", src, tgt, logits)
