"""Shared by tests/test_models.py and tests/test_decoding.py: a tiny corpus and the seven
models, each built once and overfitted once per pytest process (``trained_zoo()``).

The corpus: 4 pairs of token ids, target = source reversed with every word id shifted
(so the model must use the source, and attention has a clear pattern). Sources are padded
to different lengths so that the source padding mask matters.
"""
from __future__ import annotations

import functools

import keras
import numpy as np
import pytest

from kerasattn.backend_utils import torch_threads
from kerasattn.metrics import MaskedSparseCategoricalCrossentropy, masked_sparse_ce
from kerasattn.models import build_model

SRC_VOCAB, TGT_VOCAB = 12, 13
PAD, BOS, EOS = 0, 2, 3
SOURCES = [[4, 5, 6], [7, 8, 9, 10], [11, 4], [5, 9, 8, 7, 6]]

# Tiny but complete versions of each model (every component present, dropout off).
TINY = {
    "seq2seq": dict(embed_dim=16, units=32, dropout=0.0),
    "bahdanau": dict(embed_dim=16, units=16, attention_units=16, dropout=0.0),
    "bahdanau_multihead": dict(embed_dim=16, d_model=32, num_heads=2, units=32,
                               dropout=0.0),
    "encoder_self_attention": dict(embed_dim=16, d_model=32, num_heads=2, d_ff=32,
                                   num_encoder_blocks=1, units=32, dropout=0.0),
    "decoder_self_attention": dict(embed_dim=16, d_model=32, num_heads=2, d_ff=32,
                                   num_encoder_blocks=1, units=32, dropout=0.0),
    "transformer_decoder_on_gru": dict(embed_dim=16, d_model=32, num_heads=2, d_ff=32,
                                       num_encoder_blocks=1, num_decoder_layers=2,
                                       dropout=0.0, max_length=16,
                                       max_position_shift=4),
    "transformer": dict(d_model=32, num_heads=2, d_ff=32, num_encoder_layers=1,
                        num_decoder_layers=2, dropout=0.0, max_length=16,
                        max_position_shift=4),
}
STEPS = 100


def target_of(src: list) -> list:
    return [4 + (x - 4 + 3) % 9 for x in reversed(src)]


def arrays() -> dict:
    """Teacher-forcing arrays: encoder_inputs (4, 5), decoder_inputs / labels (4, 6)."""
    n, s, t = len(SOURCES), max(map(len, SOURCES)), max(map(len, SOURCES)) + 1
    enc = np.zeros((n, s), np.int32)
    dec = np.zeros((n, t), np.int32)
    lab = np.zeros((n, t), np.int32)
    for i, src in enumerate(SOURCES):
        y = target_of(src)
        enc[i, :len(src)] = src
        dec[i, :len(y) + 1] = [BOS] + y
        lab[i, :len(y) + 1] = y + [EOS]
    return {"encoder_inputs": enc, "decoder_inputs": dec, "labels": lab}


def logits_of(model, enc, dec) -> np.ndarray:
    """Full teacher-forced pass `(B, T, V)` (``predict_on_batch``: compiled once per shape
    on JAX / TensorFlow, where an eager pass re-traces the GRU loops every call)."""
    return np.asarray(model.predict_on_batch({"encoder_inputs": enc,
                                              "decoder_inputs": dec}))


def masked_loss(model, data) -> float:
    logits = logits_of(model, data["encoder_inputs"], data["decoder_inputs"])
    return float(keras.ops.convert_to_numpy(masked_sparse_ce(data["labels"], logits)))


@functools.lru_cache(maxsize=None)
def untrained(name: str) -> keras.Model:
    keras.utils.set_random_seed(7)
    return build_model(name, SRC_VOCAB, TGT_VOCAB, **TINY[name])


@functools.lru_cache(maxsize=None)
def trained(name: str):
    """``(model, loss_before, loss_after)`` for the overfitted tiny model ``name``."""
    keras.utils.set_random_seed(11)
    model = build_model(name, SRC_VOCAB, TGT_VOCAB, **TINY[name])
    data = arrays()
    before = masked_loss(model, data)
    with torch_threads("auto"):
        return _fit(model, data, before)


def _fit(model, data, before):
    model.compile(optimizer=keras.optimizers.Adam(1e-2, global_clipnorm=1.0),
                  loss=MaskedSparseCategoricalCrossentropy())
    model.optimizer.build(model.trainable_variables)  # else TensorFlow traces fit twice
    # One epoch of STEPS full-batch steps (per-epoch overhead of fit is large on torch).
    rep = lambda a: np.tile(a, (STEPS, 1))  # noqa: E731
    model.fit({"encoder_inputs": rep(data["encoder_inputs"]),
               "decoder_inputs": rep(data["decoder_inputs"])}, rep(data["labels"]),
              batch_size=len(SOURCES), epochs=1, verbose=0, shuffle=False)
    return model, before, masked_loss(model, data)




@pytest.fixture(autouse=True, scope="module")
def _torch_threads():
    """torch's default thread pool spin-waits on a busy machine (a tiny step gets ~20x
    slower at load 10 on 2 cores): use only the idle cores, as training does."""
    with torch_threads("auto"):
        yield

