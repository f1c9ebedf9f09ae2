"""Arrays and batches for teacher forcing.

For a target sentence ``y = y_1 ... y_n`` the decoder is fed ``<bos> y_1 ... y_n`` and
must predict ``y_1 ... y_n <eos>``: at step ``t`` it sees the true previous word (teacher
forcing) and is scored on the next one. Everything is padded with ``<pad>`` = 0 at the end,
so a mask is simply ``ids != 0``.

The batches feed ``model.fit`` on every backend without tf.data:
:class:`kerasattn.data.dataset.TranslationDataset` is a ``keras.utils.PyDataset`` over
:func:`batch_plan` that yields ``({"encoder_inputs": (B, S), "decoder_inputs": (B, T)},
labels (B, T))`` NumPy int32 batches. This module itself does not import keras.
"""
from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from kerasattn.data.vocab import Vocabulary

__all__ = ["encode_batch", "make_arrays", "batch_plan", "batch_iterator", "INPUT_KEYS",
           "LABEL_KEY"]

INPUT_KEYS = ("encoder_inputs", "decoder_inputs")
LABEL_KEY = "labels"


def encode_batch(texts: Sequence[str], vocab: Vocabulary, max_len: int | None = None,
                 add_bos: bool = False, add_eos: bool = False, truncate: bool = False,
                 name: str = "texts") -> np.ndarray:
    """Encode sentences into one right-padded int32 array.

    Args:
        texts: N normalised sentences.
        vocab: the :class:`Vocabulary`.
        max_len: width of the result; default the longest encoded sentence.
        add_bos, add_eos: add ``<bos>`` / ``<eos>`` to every sentence.
        truncate: cut sentences longer than ``max_len`` instead of raising.
        name: argument name used in error messages.

    Returns:
        ``(N, max_len)`` int32 array, padded with 0.
    """
    if isinstance(texts, str):
        raise ValueError(f"{name} must be a list of sentences, received a single string")
    seqs = [vocab.encode(t, add_bos=add_bos, add_eos=add_eos) for t in texts]
    return _pad(seqs, max_len, truncate, name, "max_len")


def _pad(seqs, max_len, truncate, name, len_name):
    if not seqs:
        raise ValueError(f"{name} is empty: nothing to encode")
    longest = max(len(s) for s in seqs)
    width = longest if max_len is None else int(max_len)
    if width < 1:
        raise ValueError(f"{len_name} must be >= 1, received {max_len}")
    if longest > width and not truncate:
        i = max(range(len(seqs)), key=lambda k: len(seqs[k]))
        raise ValueError(f"{name}[{i}] has {len(seqs[i])} ids, more than "
                         f"{len_name}={width}; raise {len_name} or pass truncate=True")
    out = np.zeros((len(seqs), width), dtype="int32")
    for i, s in enumerate(seqs):
        s = s[:width]
        out[i, :len(s)] = s
    return out


def make_arrays(pairs: Sequence[tuple[str, str]], src_vocab: Vocabulary,
                tgt_vocab: Vocabulary, max_src_len: int | None = None,
                max_tgt_len: int | None = None, truncate: bool = False) -> dict:
    """Teacher-forcing arrays for a list of sentence pairs.

    Args:
        pairs: ``(source, target)`` normalised sentences.
        src_vocab, tgt_vocab: vocabularies of each side.
        max_src_len: width S of ``encoder_inputs`` (default: longest source).
        max_tgt_len: width T of ``decoder_inputs`` and ``labels``, which are one longer than
            the target sentence (default: longest target + 1).
        truncate: cut longer sentences instead of raising ``ValueError`` (a cut label row
            loses its ``<eos>``).

    Returns:
        dict with ``encoder_inputs`` (N, S) = source ids, ``decoder_inputs`` (N, T) =
        ``<bos> y``, ``labels`` (N, T) = ``y <eos>``; all int32, padded with 0.
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs is empty: need at least one (source, target) pair")
    bad = [i for i, p in enumerate(pairs)
           if not (isinstance(p, (tuple, list)) and len(p) == 2
                   and isinstance(p[0], str) and isinstance(p[1], str))]
    if bad:
        raise ValueError(f"pairs must be (source: str, target: str) tuples; pairs[{bad[0]}] "
                         f"is {pairs[bad[0]]!r}")
    src = encode_batch([s for s, _ in pairs], src_vocab, max_src_len, truncate=truncate,
                       name="pairs (source side)")
    ys = [tgt_vocab.encode(t) for _, t in pairs]
    dec_in = _pad([[Vocabulary.BOS] + y for y in ys], max_tgt_len, truncate,
                  "pairs (target side)", "max_tgt_len")
    labels = _pad([y + [Vocabulary.EOS] for y in ys], dec_in.shape[1], True,
                  "pairs (target side)", "max_tgt_len")
    return {"encoder_inputs": src, "decoder_inputs": dec_in, "labels": labels}


def _check_arrays(arrays: dict) -> int:
    if not isinstance(arrays, dict):
        raise ValueError(f"arrays must be the dict of make_arrays, received "
                         f"{type(arrays).__name__}")
    missing = [k for k in (*INPUT_KEYS, LABEL_KEY) if k not in arrays]
    if missing:
        raise ValueError(f"arrays is missing keys {missing}; expected {[*INPUT_KEYS, LABEL_KEY]}"
                         f", received {sorted(arrays)}")
    n = {k: np.shape(arrays[k])[0] for k in (*INPUT_KEYS, LABEL_KEY)}
    if len(set(n.values())) != 1:
        raise ValueError(f"arrays must have the same number of rows, received {n}")
    if np.shape(arrays["decoder_inputs"]) != np.shape(arrays[LABEL_KEY]):
        raise ValueError(f"decoder_inputs and labels must have the same shape, received "
                         f"{np.shape(arrays['decoder_inputs'])} and "
                         f"{np.shape(arrays[LABEL_KEY])}")
    return n[LABEL_KEY]


#: ``bucket`` values of :func:`batch_plan`: True is ``"target"``.
BUCKET_KEYS = ("target", "source")


def check_bucket(bucket) -> str | None:
    """``bucket`` as its sort key (``"target"``, ``"source"``) or None; raises if invalid."""
    if bucket is False or bucket is None:
        return None
    if bucket is True:
        return "target"
    if bucket in BUCKET_KEYS:
        return bucket
    raise ValueError(f"bucket must be False, True or one of {BUCKET_KEYS}, received "
                     f"{bucket!r}")


def batch_plan(arrays: dict, batch_size: int, shuffle: bool = True, seed: int = 0,
               bucket: bool | str = False, drop_remainder: bool = False) -> list[np.ndarray]:
    """The row indices of every batch of one epoch.

    Args:
        arrays: dict from :func:`make_arrays`.
        batch_size: rows per batch.
        shuffle: shuffle rows (and, with ``bucket``, the order of the batches).
        seed: seed of the shuffle (use a different one per epoch).
        bucket: group pairs of similar length into the same batch (less padding):
            ``True`` or ``"target"`` sorts by target length, then source length;
            ``"source"`` by source length only; ``False`` keeps the shuffled order. The
            target side carries most of the work (the decoder and the output layer over
            the whole vocabulary), so ``"target"`` pads it least: on ``jpn-eng.txt``
            (English to Japanese, batches of 64 trimmed to their longest pair) 99.8 % of
            the target positions and 94 % of the source positions are real tokens,
            against 57 % and 99.8 % with ``"source"``.
        drop_remainder: drop the last, smaller batch.

    Returns:
        A list of int arrays of row indices.
    """
    n = _check_arrays(arrays)
    key = check_bucket(bucket)
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, received {batch_size!r}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(n) if shuffle else np.arange(n)
    if key is not None:
        src_len = (np.asarray(arrays["encoder_inputs"]) != 0).sum(axis=1)[order]
        tgt_len = (np.asarray(arrays[LABEL_KEY]) != 0).sum(axis=1)[order]
        # np.lexsort is stable and sorts by its LAST key first
        order = order[np.lexsort((src_len, tgt_len)) if key == "target"
                      else np.argsort(src_len, kind="stable")]
    batches = [order[i:i + batch_size] for i in range(0, n, batch_size)]
    if drop_remainder and batches and len(batches[-1]) < batch_size:
        batches = batches[:-1]
    if key is not None and shuffle:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def _trimmed_widths(enc, dec, labels, pad_multiple: int) -> tuple[int, int]:
    """Source and target widths of one batch: its longest row, rounded up to a multiple."""
    def width(a):
        used = int((a != 0).any(axis=0).nonzero()[0].max(initial=-1)) + 1
        return min(a.shape[1], max(1, -(-used // pad_multiple) * pad_multiple))
    return width(enc), max(width(dec), width(labels))


def _take(arrays: dict, idx: np.ndarray, trim: bool, pad_multiple: int):
    x = {k: np.asarray(arrays[k])[idx] for k in INPUT_KEYS}
    y = np.asarray(arrays[LABEL_KEY])[idx]
    if trim:
        s, t = _trimmed_widths(x["encoder_inputs"], x["decoder_inputs"], y, pad_multiple)
        x = {"encoder_inputs": x["encoder_inputs"][:, :s],
             "decoder_inputs": x["decoder_inputs"][:, :t]}
        y = y[:, :t]
    return x, y


def batch_iterator(arrays: dict, batch_size: int = 64, shuffle: bool = True, seed: int = 0,
                   bucket: bool | str = False, pad_multiple: int = 8,
                   drop_remainder: bool = False) -> Iterator[tuple[dict, np.ndarray]]:
    """Yield one epoch of ``(inputs, labels)`` NumPy batches.

    Args:
        arrays: dict from :func:`make_arrays`.
        batch_size, shuffle, seed, bucket, drop_remainder: see :func:`batch_plan`.
        pad_multiple: with ``bucket``, each batch is trimmed to its own longest row rounded
            up to a multiple of this (few distinct shapes, so few recompilations on JAX and
            TensorFlow). Without ``bucket`` batches keep the full width.

    Yields:
        ``({"encoder_inputs": (B, S), "decoder_inputs": (B, T)}, labels (B, T))``.
    """
    if not isinstance(pad_multiple, (int, np.integer)) or pad_multiple < 1:
        raise ValueError(f"pad_multiple must be an int >= 1, received {pad_multiple!r}")
    for idx in batch_plan(arrays, batch_size, shuffle, seed, bucket, drop_remainder):
        yield _take(arrays, idx, bucket, pad_multiple)
