"""Encoder stacks shared by the models (functional-API builders).

- :func:`bigru_encoder`: embedding -> bidirectional GRU -> (optionally) Transformer
  encoder blocks on the GRU outputs (step 2 of the path). The source padding mask is passed
  explicitly to the GRU (:class:`~kerasattn.layers.EncoderGRU`: each direction reads only
  the real words) and to every block.
- :func:`transformer_encoder`: embedding -> positional encoding -> Transformer encoder
  blocks (step 5).

Both end in an ``Identity`` layer named ``encoder_memory`` so decoding can fetch `h_enc`.
"""
from __future__ import annotations

import keras

from kerasattn.layers import EncoderGRU, PositionalEncoding, TransformerEncoderBlock


def bigru_encoder(src, src_mask, vocab_size, embed_dim, units, dropout=0.0,
                  num_blocks=0, num_heads=4, d_ff=None):
    """Bidirectional GRU encoder, optionally followed by self-attention blocks.

    Args:
        src: source ids `(B, S)`; src_mask: bool `(B, S)`.
        vocab_size: source vocabulary size.
        embed_dim: embedding size `E`; units: GRU units per direction `u`.
        dropout: dropout on the embeddings and inside the blocks.
        num_blocks: number of `TransformerEncoderBlock`s on the GRU outputs
            (`d_model = 2u`).
        num_heads, d_ff: block hyperparameters.

    Returns:
        `(h_enc (B, S, 2u), h_backward (B, u))`: the annotations
        `h_j = [h_j(forward); h_j(backward)]` and the backward GRU's final state (it has
        read the whole sentence, ending at its first word).
    """
    x = keras.layers.Embedding(vocab_size, embed_dim, name="src_embedding")(src)
    x = keras.layers.Dropout(dropout, name="src_dropout")(x)
    birnn = EncoderGRU(units, bidirectional=True, name="encoder_birnn")
    h_enc, _, h_backward = birnn(x, mask=src_mask)  # (B, S, 2u), (B, u), (B, u)
    for i in range(num_blocks):
        h_enc = TransformerEncoderBlock(2 * units, num_heads, d_ff or 4 * units,
                                        dropout=dropout,
                                        name=f"encoder_block_{i}")(h_enc,
                                                                   padding_mask=src_mask)
    h_enc = keras.layers.Identity(name="encoder_memory")(h_enc)
    return h_enc, h_backward


def transformer_encoder(src, src_mask, vocab_size, d_model, num_layers, num_heads, d_ff,
                        dropout=0.0, max_length=512, position_shift=0):
    """Transformer encoder: `H = Block_N(... Block_1(PE(Embed(src))))`.

    Args:
        src: source ids `(B, S)`; src_mask: bool `(B, S)`.
        vocab_size, d_model, num_layers, num_heads, d_ff, dropout: as in the paper.
        max_length: longest source the positional table covers.
        position_shift: start positions, 0 or int `(B,)` (the output of
            `random_position_shift`: random in training, 0 at inference).

    Returns:
        `h_enc` `(B, S, d_model)`.
    """
    x = keras.layers.Embedding(vocab_size, d_model, name="src_embedding")(src)
    x = PositionalEncoding(max_length=max_length, dropout=dropout, scale_inputs=True,
                           name="src_positional_encoding")(
        x, start_index=position_shift)  # sqrt(d) X + PE[k..k+S-1]
    for i in range(num_layers):
        x = TransformerEncoderBlock(d_model, num_heads, d_ff, dropout=dropout,
                                    name=f"encoder_block_{i}")(x, padding_mask=src_mask)
    return keras.layers.Identity(name="encoder_memory")(x)
