"""Tiny models and data for the training tests (a helper module, not tests; kept
independent of kerasattn.models).

`tiny_bag` (no recurrence) keeps XLA / tf.function compile time low in the many short
training runs; `tiny_gru` (a recurrent encoder-decoder) is what the data-parallel check
trains.
"""
from __future__ import annotations

import keras
import numpy as np

BOS, EOS = 2, 3


def tiny_pairs(n=8, s=6, t=5, vocab=12, seed=0):
    """Random int pairs with ragged lengths: make_arrays-style dict of int32 arrays.

    The target is a fixed function of the source (reverse, then +1 mod), so it is learnable.
    """
    rng = np.random.default_rng(seed)
    enc = np.zeros((n, s), "int32")
    dec = np.zeros((n, t), "int32")
    lab = np.zeros((n, t), "int32")
    for i in range(n):
        length = int(rng.integers(2, min(s, t - 1) + 1))
        x = rng.integers(4, vocab, length)
        y = (x[::-1] - 4 + 1) % (vocab - 4) + 4
        enc[i, :length] = x
        dec[i, :length + 1] = [BOS, *y]
        lab[i, :length + 1] = [*y, EOS]
    return {"encoder_inputs": enc, "decoder_inputs": dec, "labels": lab}


def tiny_inputs(n=3, s=6, t=5, seed=0):
    """The model inputs of :func:`tiny_pairs` (no labels)."""
    data = tiny_pairs(n=n, s=s, t=t, seed=seed)
    return {k: data[k] for k in ("encoder_inputs", "decoder_inputs")}


def tiny_gru(src_vocab=12, tgt_vocab=12, d=16, dropout=0.0):
    """Embedding + GRU encoder, GRU decoder started from the encoder state, Dense logits."""
    enc_in = keras.Input((None,), dtype="int32", name="encoder_inputs")
    dec_in = keras.Input((None,), dtype="int32", name="decoder_inputs")
    e = keras.layers.Embedding(src_vocab, d, mask_zero=True)(enc_in)
    _, h = keras.layers.GRU(d, return_state=True)(e)
    y = keras.layers.Embedding(tgt_vocab, d)(dec_in)
    y = keras.layers.GRU(d, return_sequences=True)(y, initial_state=h)
    y = keras.layers.Dropout(dropout)(y)
    logits = keras.layers.Dense(tgt_vocab)(y)
    return keras.Model({"encoder_inputs": enc_in, "decoder_inputs": dec_in}, logits)


def tiny_bag(src_vocab=12, tgt_vocab=12, d=16, dropout=0.0):
    """No recurrence (fast to compile on JAX / TensorFlow): logits at step t from the
    embedding of decoder token t plus the mean embedding of the source."""
    enc_in = keras.Input((None,), dtype="int32", name="encoder_inputs")
    dec_in = keras.Input((None,), dtype="int32", name="decoder_inputs")
    src = keras.layers.GlobalAveragePooling1D()(
        keras.layers.Embedding(src_vocab, d, mask_zero=True)(enc_in))       # (B, d)
    y = keras.layers.Embedding(tgt_vocab, d)(dec_in)                         # (B, T, d)
    y = keras.layers.Dense(2 * d, activation="relu")(y + src[:, None, :])
    y = keras.layers.Dropout(dropout)(y)
    logits = keras.layers.Dense(tgt_vocab)(y)
    return keras.Model({"encoder_inputs": enc_in, "decoder_inputs": dec_in}, logits)
