"""The Transformer decoder stack shared by steps 4 and 5, and its cached incremental step.

Training (teacher forcing, all positions at once):

    X   = PE(Embed(y_<t))                                   positions 0 .. T-1
    X   = DecoderBlock_l(X, H_enc)  for l = 1..N            (causal self-attention)
    logits = X W_o + b_o

Incremental decoding feeds one token at output position t:

- the token's embedding gets ``PE[t]``, its true position (d2l adds ``PE[0]`` every step);
- each block's self-attention writes the new key/value into a `(B, 2, T_max, h, d_h)`
  cache at index t and attends to cached keys ``0..t`` (the causal mask at step t);
- each block's cross-attention keys/values ``H_enc W_k``, ``H_enc W_v`` are projected once
  per sentence (a cross cache) instead of at every step.
"""
from __future__ import annotations

import keras
from keras import ops

from kerasattn.layers import PositionalEncoding, RandomPositionShift, TransformerDecoderBlock
from kerasattn.models.common import IncrementalDecoder


def random_position_shift(ids, max_position_shift, max_length):
    """SHAPE offsets `(B,)` for a model's positional encodings (0 at inference).

    Raises a ValueError unless `0 <= max_position_shift < max_length`: shifted positions
    `k .. k + T - 1` must stay inside the positional table.
    """
    if not 0 <= max_position_shift < max_length:
        raise ValueError(
            f"`max_position_shift` must be in [0, max_length={max_length}) so that shifted "
            f"positions stay in the positional table (which must also cover the longest "
            f"sentence on top of the shift); received max_position_shift="
            f"{max_position_shift}.")
    return RandomPositionShift(max_position_shift, name="position_shift")(ids)  # k_b: (B,)


def transformer_decoder(tgt, h_enc, src_mask, vocab_size, d_model, num_layers, num_heads,
                        d_ff, dropout=0.0, max_length=512, position_shift=0):
    """Functional builder of the decoder stack.

    Args:
        tgt: decoder input ids `(B, T)` (`<bos> y_1 .. y_{T-1}`).
        h_enc: encoder memory `(B, S, d_enc)`; src_mask: bool `(B, S)`.
        vocab_size: target vocabulary `V`; d_model, num_layers, num_heads, d_ff, dropout:
            as in the paper; max_length: longest target the positional table covers.
        position_shift: start positions, 0 or int `(B,)` (the output of
            `random_position_shift`: random in training, 0 at inference).

    Returns:
        logits `(B, T, V)`.
    """
    x = keras.layers.Embedding(vocab_size, d_model, name="tgt_embedding")(tgt)
    x = PositionalEncoding(max_length=max_length, dropout=dropout, scale_inputs=True,
                           name="tgt_positional_encoding")(
        x, start_index=position_shift)  # sqrt(d) X + PE[k..k+T-1]
    for i in range(num_layers):
        x = TransformerDecoderBlock(d_model, num_heads, d_ff, dropout=dropout,
                                    name=f"decoder_block_{i}")(
            x, h_enc, encoder_padding_mask=src_mask)  # causal self-attn, cross-attn, FFN
    return keras.layers.Dense(vocab_size, name="output_projection")(x)  # (B, T, V)


def init_self_cache(attention, batch, max_length):
    """A zero self-attention cache `(B, 2, T_max, h, d_h)` for a `MultiHeadCross`."""
    return ops.zeros((batch, 2, max_length, attention.num_heads, attention.d_h))


def cross_cache(attention, memory):
    """Keys and values of the encoder memory, projected once: `(B, 2, S, h, d_h)`."""
    k = attention.key_dense(memory)  # H_enc W_k: (B, S, h, d_h)
    v = attention.value_dense(memory)  # H_enc W_v: (B, S, h, d_h)
    return ops.stack([k, v], axis=1)


class TransformerDecoderAdapter(IncrementalDecoder):
    """Incremental decoding with per-layer K/V caches.

    State: ``memory`` `(B, S, d)`, ``mask`` `(B, S)`, and per block ``l``:
    ``self_cache_l`` `(B, 2, T_max, h, d_h)` (written at step t) and ``cross_cache_l``
    `(B, 2, S, h, d_h)` (computed once in :meth:`init_state`).
    """

    encoder_outputs = ("encoder_memory", "source_mask")

    def __init__(self, model):
        super().__init__(model)
        self.positional = model.get_layer("tgt_positional_encoding")
        self.blocks = []
        while True:
            try:
                self.blocks.append(model.get_layer(f"decoder_block_{len(self.blocks)}"))
            except ValueError:
                break

    def init_state(self, state, max_length):
        memory = state["encoder_memory"]
        batch = ops.shape(memory)[0]
        new = {"memory": memory, "mask": state["source_mask"]}
        for i, block in enumerate(self.blocks):
            new[f"self_cache_{i}"] = init_self_cache(block.self_attention, batch, max_length)
            new[f"cross_cache_{i}"] = cross_cache(block.cross_attention, memory)
        return new

    def step(self, token, state, t):
        x = self.positional(self.embed(token), start_index=t)  # Embed(y_{t-1}) + PE[t]
        new_state = dict(state)
        self_w, cross_w = [], []
        for i, block in enumerate(self.blocks):
            a1, w1, cache = block.self_attention(
                x, x, cache=state[f"self_cache_{i}"], cache_update_index=t,
                return_attention_scores=True)  # keys 0..t: (B,1,d), (B,h,1,T_max)
            y1 = block.add_norm_1(x, a1)  # Y1 = LN(X + MHA_mask(X, X, X))
            a2, w2, _ = block.cross_attention(
                y1, state["memory"], value_mask=state["mask"],
                cache=state[f"cross_cache_{i}"],
                return_attention_scores=True)  # (B, 1, d), (B, h, 1, S)
            y2 = block.add_norm_2(y1, a2)  # Y2 = LN(Y1 + MHA(Y1, H_enc, H_enc))
            x = block.add_norm_3(y2, block.ffn(y2))  # Z = LN(Y2 + FFN(Y2))
            new_state[f"self_cache_{i}"] = cache
            self_w.append(w1[:, :, 0, :])
            cross_w.append(w2[:, :, 0, :])
        logits = self.output_projection(x[:, 0, :])  # (B, V)
        attention = {"self": ops.stack(self_w, axis=1),  # (B, L, h, T_max)
                     "cross": ops.stack(cross_w, axis=1)}  # (B, L, h, S)
        return logits, new_state, attention

    def attention_shapes(self, state, max_length):
        layers, heads = len(self.blocks), self.blocks[0].self_attention.num_heads
        return {"self": (layers, heads, max_length),
                "cross": (layers, heads, ops.shape(state["memory"])[1])}
