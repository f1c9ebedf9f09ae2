"""Step 3 of the path: masked self-attention and cross-attention before a GRU decoder.

The encoder is step 2's. The decoder first lets every target position attend to its own
history (causal mask), then to the encoder, and a GRU runs over the result:

    Y = LayerNorm(X + MHA(X, X, X, M_causal))           X = Embed(y_<t)
    Z = LayerNorm(Y + MHA(Y, H_enc, H_enc))             padding of the source masked
    s_t = GRU(z_t, s_{t-1}),   logits_t = W_o s_t + b_o

No positional encoding yet: the causal mask and the GRU that follows carry the order (step 4
adds positions when the GRU goes away). Incremental decoding caches the self-attention
keys/values (written at step t) and projects the cross-attention keys/values once.
"""
from __future__ import annotations

import dataclasses

import keras
from keras import ops

from kerasattn import steps
from kerasattn.layers import AddNorm, MultiHeadCross
from kerasattn.models.common import (
    IncrementalDecoder,
    ModelConfig,
    SourcePaddingMask,
    finish_model,
    model_inputs,
)
from kerasattn.models.encoders import bigru_encoder
from kerasattn.models.registry import register_model


@dataclasses.dataclass
class DecoderSelfAttentionConfig(ModelConfig):
    """Hyperparameters of `decoder_self_attention`.

    Attributes:
        embed_dim: source embedding size `E`.
        d_model: width of the annotations (`d_model / 2` GRU units per direction), of
            the target embeddings and of both decoder attentions.
        num_heads: heads `h`.
        d_ff: feed-forward size of the encoder blocks.
        num_encoder_blocks: self-attention blocks on the encoder GRU outputs.
        units: decoder GRU state size.
        dropout: dropout on embeddings, attention weights and sublayer outputs.
    """

    embed_dim: int = 64
    d_model: int = 128
    num_heads: int = 4
    d_ff: int = 256
    num_encoder_blocks: int = 1
    units: int = 64
    dropout: float = 0.1


class DecoderSelfAttentionAdapter(IncrementalDecoder):
    """State: ``mask``, ``s`` = s_{t-1}, the self-attention cache ``self_keys``,
    ``self_values`` `(B, h, T_max, d_h)` and the projected memory ``cross_keys``,
    ``cross_values`` `(B, h, S, d_h)`."""

    encoder_outputs = ("encoder_memory", "source_mask", "bridge")

    def __init__(self, model):
        super().__init__(model)
        self.self_attention = model.get_layer("decoder_self_attention")
        self.add_norm_1 = model.get_layer("decoder_add_norm_1")
        self.cross_attention = model.get_layer("decoder_cross_attention")
        self.add_norm_2 = model.get_layer("decoder_add_norm_2")
        self.cell = model.get_layer("decoder_gru").cell

    def init_state(self, state, max_length):
        memory = state["encoder_memory"]
        batch = ops.shape(memory)[0]
        k_self, v_self = steps.init_cache(self.self_attention, batch, max_length,
                                          memory.dtype)  # (B, h, T_max, d_h) each
        k_mem, v_mem = steps.project_memory(self.cross_attention,
                                            memory)  # H_enc W_k, H_enc W_v: (B, h, S, d_h)
        return {"mask": state["source_mask"], "s": state["bridge"],
                "self_keys": k_self, "self_values": v_self,
                "cross_keys": k_mem, "cross_values": v_mem}

    def step(self, token, state, t):
        x = self.embed_step(token)  # (B, d)
        a1, w1, (k, v) = steps.self_attend_step(
            self.self_attention, x, (state["self_keys"], state["self_values"]),
            t)  # MHA(X, X, X, M_causal) at t, keys 0..t; (B, h, T_max)
        y = steps.add_norm_step(self.add_norm_1, x, a1)  # Y = LN(X + MHA(X, X, X, M_causal))
        a2, w2 = steps.attend_step(
            self.cross_attention, y, (state["cross_keys"], state["cross_values"]),
            memory_mask=state["mask"])  # MHA(Y, H_enc, H_enc): (B, d), (B, h, S)
        z = steps.add_norm_step(self.add_norm_2, y, a2)  # Z = LN(Y + MHA(Y, H_enc, H_enc))
        s_t, _ = self.cell(z, [state["s"]])  # s_t = GRU(z_t, s_{t-1})
        logits = self.output_projection.call(s_t)  # (B, V)
        attention = {"self": w1[:, None],  # (B, 1, h, T_max)
                     "cross": w2[:, None]}  # (B, 1, h, S)
        return logits, dict(state, s=s_t, self_keys=k, self_values=v), attention

    def attention_shapes(self, state, max_length):
        return {"self": (1, self.self_attention.num_heads, max_length),
                "cross": (1, self.cross_attention.num_heads,
                          ops.shape(state["mask"])[1])}


@register_model("decoder_self_attention", DecoderSelfAttentionConfig,
                DecoderSelfAttentionAdapter)
def build_decoder_self_attention(config: DecoderSelfAttentionConfig, src_vocab_size: int,
                                 tgt_vocab_size: int) -> keras.Model:
    src, tgt = model_inputs()
    src_mask = SourcePaddingMask(name="source_mask")(src)  # (B, S)
    h_enc, h_bwd = bigru_encoder(src, src_mask, src_vocab_size, config.embed_dim,
                                 config.d_model // 2, dropout=config.dropout,
                                 num_blocks=config.num_encoder_blocks,
                                 num_heads=config.num_heads, d_ff=config.d_ff)
    s0 = keras.layers.Dense(config.units, activation="tanh", name="bridge")(h_bwd)
    x = keras.layers.Embedding(tgt_vocab_size, config.d_model, name="tgt_embedding")(tgt)
    x = keras.layers.Dropout(config.dropout, name="tgt_dropout")(x)  # X: (B, T, d)
    a1 = MultiHeadCross(config.num_heads, config.d_model, dropout=config.dropout,
                        name="decoder_self_attention")(x, x, use_causal_mask=True)
    y = AddNorm(config.dropout, name="decoder_add_norm_1")(x, a1)  # Y = LN(X + MHA_mask)
    a2 = MultiHeadCross(config.num_heads, config.d_model, dropout=config.dropout,
                        name="decoder_cross_attention")(y, h_enc, value_mask=src_mask)
    z = AddNorm(config.dropout, name="decoder_add_norm_2")(y, a2)  # Z = LN(Y + MHA(Y,H,H))
    s = keras.layers.GRU(config.units, return_sequences=True,
                         name="decoder_gru")(z, initial_state=s0)  # (B, T, u)
    s = keras.layers.Dropout(config.dropout, name="output_dropout")(s)
    logits = keras.layers.Dense(tgt_vocab_size, name="output_projection")(s)  # (B, T, V)
    return finish_model("decoder_self_attention", src, tgt, logits)
