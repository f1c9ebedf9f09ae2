"""Bahdanau attention (Bahdanau, Cho and Bengio, 2015).

Encoder: a bidirectional GRU, annotations ``h_j = [h_j(fwd); h_j(bwd)]`` `(B, S, 2u)`.
Decoder: :class:`~kerasattn.models.attention_decoder.AttentionGRUDecoder` with the additive
score; at each step the context is computed from the previous state s_{t-1} and enters the
GRU input:

    s_0 = tanh(W_s h_1(bwd) + b_s)     (the paper writes no bias; the kit's bridge has one)
    e_tj = v^T tanh(W_q s_{t-1} + W_k h_j),  alpha_t = masked_softmax(e_t),  c_t = sum alpha h
    s_t = GRU([y_{t-1}; c_t], s_{t-1}),      logits_t = W_o [s_t; c_t] + b_o

With ``output_units`` set, the vocabulary projection is factorized through a narrower
vector (rank ``output_units``, as models that project to the embedding size before the
output embedding do; Press and Wolf, 2017):

    t_t = W_t [s_t; c_t] + b_t,               logits_t = W_o t_t + b_o

On a real corpus the projection to thousands of tokens is most of the model's arithmetic
(`[s_t; c_t]` is `3u` wide): through `t_t` of `u` units it costs about a third. `t_t` is
linear (the paper's deep output is a maxout): on ``jpn-eng.txt``, Japanese to English, after
one pass over 16,000 training pairs on torch, the validation token accuracy is 0.32 with a
linear `t_t`, 0.09 with a tanh on it and 0.31 without `t_t` (one run each).
"""
from __future__ import annotations

import dataclasses

import keras

from kerasattn.models.attention_decoder import AttentionGRUDecoder, RecurrentAttentionDecoder
from kerasattn.models.common import ModelConfig, SourcePaddingMask, finish_model, model_inputs
from kerasattn.models.encoders import bigru_encoder
from kerasattn.models.registry import register_model


@dataclasses.dataclass
class BahdanauConfig(ModelConfig):
    """Hyperparameters of `bahdanau`.

    Attributes:
        embed_dim: embedding size `E` (source and target).
        units: GRU units `u`: per encoder direction (annotations are `2u` wide) and in
            the decoder.
        attention_units: hidden size of the additive score.
        dropout: dropout on the embeddings and on `[s_t; c_t]` before the output layer.
        scheduled_sampling: build the decoder for scheduled sampling (Bengio et al.,
            2015; see ``train(..., teacher_forcing=...)``).
        coverage: coverage attention (Tu et al., 2016; See et al., 2017).
        coverage_loss_weight: weight of the coverage loss (with ``coverage`` only).
        output_units: width of `t_t`, the linear bottleneck before the vocabulary
            projection, or None (the logits come straight from `[s_t; c_t]`).
    """

    embed_dim: int = 64
    units: int = 64
    attention_units: int = 64
    dropout: float = 0.1
    scheduled_sampling: bool = False
    coverage: bool = False
    coverage_loss_weight: float = 0.0
    output_units: int | None = None


def build_recurrent_attention_model(name, src_vocab_size, tgt_vocab_size, *, embed_dim,
                                    encoder_units, decoder_units, dropout,
                                    attention="additive", attention_units=None,
                                    num_heads=1, d_attention=None, num_encoder_blocks=0,
                                    d_ff=None, scheduled_sampling=False,
                                    coverage=False, coverage_loss_weight=0.0,
                                    output_units=None) -> keras.Model:
    """Bidirectional-GRU encoder (+ optional self-attention blocks) and a Bahdanau decoder.

    Shared by `bahdanau`, `bahdanau_multihead` (multi-head attention in the decoder) and
    `encoder_self_attention` (plus Transformer encoder blocks on the GRU outputs).
    """
    src, tgt = model_inputs()
    src_mask = SourcePaddingMask(name="source_mask")(src)  # (B, S)
    h_enc, h_bwd = bigru_encoder(src, src_mask, src_vocab_size, embed_dim, encoder_units,
                                 dropout=dropout, num_blocks=num_encoder_blocks,
                                 num_heads=num_heads, d_ff=d_ff)  # (B, S, 2u), (B, u)
    s0 = keras.layers.Dense(decoder_units, activation="tanh", name="bridge")(h_bwd)
    embedding = keras.layers.Embedding(tgt_vocab_size, embed_dim, name="tgt_embedding")
    y = keras.layers.Dropout(dropout, name="tgt_dropout")(embedding(tgt))
    decoder = AttentionGRUDecoder(decoder_units, attention=attention,
                                  attention_units=attention_units, num_heads=num_heads,
                                  d_attention=d_attention,
                                  scheduled_sampling=scheduled_sampling, coverage=coverage,
                                  coverage_loss_weight=coverage_loss_weight,
                                  name="attention_decoder")
    projection = keras.layers.Dense(tgt_vocab_size, name="output_projection")
    bottleneck = (None if output_units is None else
                  keras.layers.Dense(output_units, name="output_bottleneck"))
    decoder.attach_feedback(embedding, projection, bottleneck)  # scheduled sampling
    # the coverage loss counts the real target steps only
    tgt_mask = (SourcePaddingMask(name="target_mask")(tgt)  # (B, T)
                if coverage and coverage_loss_weight > 0.0 else None)
    o = decoder(y, h_enc, s0, memory_mask=src_mask,
                target_mask=tgt_mask)  # [s_t; c_t]: (B, T, u + C)
    o = keras.layers.Dropout(dropout, name="output_dropout")(o)
    if bottleneck is not None:
        o = bottleneck(o)  # t_t = W_t [s_t; c_t] + b_t: (B, T, output_units)
    logits = projection(o)  # (B, T, V)
    return finish_model(name, src, tgt, logits)


@register_model("bahdanau", BahdanauConfig, RecurrentAttentionDecoder)
def build_bahdanau(config: BahdanauConfig, src_vocab_size: int,
                   tgt_vocab_size: int) -> keras.Model:
    return build_recurrent_attention_model(
        "bahdanau", src_vocab_size, tgt_vocab_size, embed_dim=config.embed_dim,
        encoder_units=config.units, decoder_units=config.units, dropout=config.dropout,
        attention="additive", attention_units=config.attention_units,
        scheduled_sampling=config.scheduled_sampling, coverage=config.coverage,
        coverage_loss_weight=config.coverage_loss_weight, output_units=config.output_units)
