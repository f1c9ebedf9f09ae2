"""The Transformer decoder stack shared by steps 4 and 5, and its cached incremental step.

Training (teacher forcing, all positions at once):

    X   = sqrt(d_model) Embed(y_<t) + PE[k .. k+T-1]        (k = 0 at inference; random
                                                            in 0..K while training, SHAPE)
    X   = DecoderBlock_l(X, H_enc)  for l = 1..N            (causal self-attention)
    logits = X W_o + b_o

Incremental decoding feeds one token at output position t:

- the token's embedding gets ``PE[t]``, its true position (d2l adds ``PE[0]`` every step);
- each block's self-attention writes the new key/value into slot t of its cache, a pair
  `(K, V)` of `(B, h, T_max, d_h)` tensors, and attends to cached keys ``0..t`` (the
  causal mask at step t);
- each block's cross-attention keys/values ``H_enc W_k``, ``H_enc W_v`` are projected once
  per sentence (a cross cache) instead of at every step.
"""
from __future__ import annotations

import keras
from keras import ops

from kerasattn import steps
from kerasattn.layers import PositionalEncoding, RandomPositionShift, TransformerDecoderBlock
from kerasattn.models.common import IncrementalDecoder


def random_position_shift(ids, max_position_shift, max_length):
    """SHAPE (Kiyono et al. 2021) offsets `(B,)` for a model's positional encodings (0 at
    inference).

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


class TransformerDecoderAdapter(IncrementalDecoder):
    """Incremental decoding with per-layer K/V caches.

    State: ``mask`` `(B, S)`, and per block ``l``: ``self_keys_l``, ``self_values_l``
    `(B, h, T_max, d_h)` (slot t written at step t) and ``cross_keys_l``,
    ``cross_values_l`` `(B, h, S, d_h)` (projected once in :meth:`init_state`). The masks
    as softmax terms: ``mask_bias`` / ``mask_keep`` `(B, S)`, the source padding, computed
    once per sentence; the causal mask of step t is computed once per step
    (``causal_step_bias``) and shared by every block.
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
        new = {"mask": state["source_mask"]}
        new["mask_bias"], new["mask_keep"] = steps.mask_bias(state["source_mask"],
                                                             memory.dtype)  # (B, S) each
        for i, block in enumerate(self.blocks):
            k, v = steps.init_cache(block.self_attention, batch, max_length,
                                    memory.dtype)  # (B, h, T_max, d_h) each
            new[f"self_keys_{i}"], new[f"self_values_{i}"] = k, v
            k, v = steps.project_memory(block.cross_attention,
                                        memory)  # H_enc W_k, H_enc W_v: (B, h, S, d_h)
            new[f"cross_keys_{i}"], new[f"cross_values_{i}"] = k, v
        return new

    def step(self, token, state, t):
        x = steps.positional_step(self.positional, self.embed_step(token),
                                  t)  # sqrt(d) Embed(y_{t-1}) + PE[t]: (B, d_model)
        new_state = dict(state)
        self_w, cross_w = [], []
        keys = state["self_keys_0"]  # (B, h, T_max, d_h)
        # ops.shape, as in steps.decoder_block_step: T_max is symbolic once a compiled step
        # has seen several cache widths
        causal = steps.causal_step_bias(t, ops.shape(keys)[2], keys.dtype)  # (1, T_max)
        padding = (state["mask_bias"], state["mask_keep"])  # (B, S) each
        for i, block in enumerate(self.blocks):
            x, (k, v), w1, w2 = steps.decoder_block_step(
                block, x, (state[f"self_keys_{i}"], state[f"self_values_{i}"]),
                (state[f"cross_keys_{i}"], state[f"cross_values_{i}"]), t,
                self_attention_bias=causal,
                encoder_padding_bias=padding)  # (B, d); keys 0..t; (B, h, T_max|S)
            new_state[f"self_keys_{i}"], new_state[f"self_values_{i}"] = k, v
            self_w.append(w1)
            cross_w.append(w2)
        logits = self.output_projection.call(x)  # (B, V)
        attention = {"self": ops.stack(self_w, axis=1),  # (B, L, h, T_max)
                     "cross": ops.stack(cross_w, axis=1)}  # (B, L, h, S)
        return logits, new_state, attention

    def attention_shapes(self, state, max_length):
        layers, heads = len(self.blocks), self.blocks[0].self_attention.num_heads
        return {"self": (layers, heads, max_length),
                "cross": (layers, heads, ops.shape(state["mask"])[1])}
