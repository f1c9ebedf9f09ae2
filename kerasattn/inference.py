"""Translating raw text with a trained model: many sentences, or a whole file.

:func:`translate_file` is how a user scores the kit on a test set of their own: one
sentence per input line, one translation per output line, in the same order. Each line is
normalised the way the checkpoint's training data was (:func:`kerasattn.data.normalize`
with the source language recorded at training time), the lines are decoded in batches of
similar length (greedy, or beam search with ``beam > 1``), and each translation is
detokenized (:func:`kerasattn.data.detokenize`) into ordinary text. An empty input line
gives an empty output line.
"""
from __future__ import annotations

import os
import sys
from typing import Sequence

from kerasattn.data.text import detokenize, normalize
from kerasattn.training.checkpointing import Translator, load_translator

__all__ = ["translate_texts", "translate_file", "as_translator"]


def as_translator(checkpoint_or_model, src_vocab=None, tgt_vocab=None,
                  src_lang: str | None = None) -> Translator:
    """A Translator from a path, a Translator, or a model.

    Args:
        checkpoint_or_model: a checkpoint directory (or its ``model.keras``), a
            ``Translator``, or a Keras model (then ``src_vocab`` and ``tgt_vocab`` are
            required).
        src_vocab, tgt_vocab: tokenizers for a bare model.
        src_lang: source language for normalisation (overrides the checkpoint's).

    Returns:
        The Translator.
    """
    import keras

    if isinstance(checkpoint_or_model, (str, os.PathLike)):
        tr = load_translator(checkpoint_or_model)
    elif isinstance(checkpoint_or_model, Translator):
        tr = checkpoint_or_model
    elif isinstance(checkpoint_or_model, keras.Model):
        if src_vocab is None or tgt_vocab is None:
            raise ValueError("checkpoint_or_model is a bare model: pass src_vocab and "
                             "tgt_vocab too (the tokenizers it was trained with)")
        tr = Translator(name=checkpoint_or_model.name, model=checkpoint_or_model,
                        src_vocab=src_vocab, tgt_vocab=tgt_vocab, meta={})
    else:
        raise ValueError(f"checkpoint_or_model must be a checkpoint directory, a Translator "
                         f"or a keras.Model; received {type(checkpoint_or_model).__name__}")
    if src_lang is not None:
        tr = Translator(tr.name, tr.model, tr.src_vocab, tr.tgt_vocab,
                        {**tr.meta, "src_lang": src_lang}, tr.path)
    return tr


def translate_texts(checkpoint_or_model, texts: Sequence[str], *, beam: int = 1,
                    batch_size: int = 64, max_length: int | None = None,
                    src_vocab=None, tgt_vocab=None, src_lang: str | None = None,
                    normalized: bool = False, detokenized: bool = True) -> list[str]:
    """Translate raw sentences in batches; one translation per sentence, in order.

    Args:
        checkpoint_or_model: see :func:`as_translator`.
        texts: raw sentences (normalised here unless ``normalized``).
        beam: 1 for greedy decoding, k > 1 for beam search with k hypotheses.
        batch_size: sentences decoded together (sorted by length first).
        max_length: most output tokens; default per sentence, from its length in
            tokens (``1.5 * S + 5``, rounded up to a multiple of 16).
        src_vocab, tgt_vocab, src_lang: see :func:`as_translator`.
        normalized: the texts are already normalised (as in a :class:`Corpus`).
        detokenized: return ordinary text (True) or the kit's normalised tokens (False,
            the form :func:`kerasattn.metrics.corpus_bleu` expects).

    Returns:
        A list of ``len(texts)`` strings; an empty or blank sentence gives ``""``.
    """
    from kerasattn import decoding

    tr = as_translator(checkpoint_or_model, src_vocab, tgt_vocab, src_lang)
    if isinstance(texts, str):
        raise ValueError("texts must be a list of sentences, received a single string")
    for name, value in (("beam", beam), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, received {value!r}")
    sources = [t if normalized else normalize(t, tr.src_lang) for t in texts]
    ids = [tr.src_vocab.encode(s) if s.strip() else [] for s in sources]
    out = [""] * len(sources)
    todo = sorted((i for i in range(len(ids)) if ids[i]), key=lambda i: len(ids[i]))
    for k in range(0, len(todo), batch_size):
        idx = todo[k:k + batch_size]
        # each row's cap depends on its own length only, so a sentence's translation does
        # not depend on the batch it lands in; rounded to multiples of 16 because each
        # distinct (width, max_length) is one compilation on JAX / TensorFlow
        caps = [max_length or -(-(int(1.5 * len(ids[i])) + 5) // 16) * 16 for i in idx]
        _, result = decoding.translate(tr.model, [sources[i] for i in idx], tr.src_vocab,
                                       tr.tgt_vocab, method="greedy" if beam == 1 else "beam",
                                       beam_size=beam, max_length=max(caps),
                                       width_multiple=8, return_result=True)
        for i, cap, tokens in zip(idx, caps, result.token_lists()):
            h = tr.tgt_vocab.decode(list(tokens)[:cap])
            out[i] = detokenize(h) if detokenized else h
    return out


def translate_file(checkpoint_or_model, input_path, output_path=None, *, beam: int = 1,
                   batch_size: int = 64, max_length: int | None = None, src_vocab=None,
                   tgt_vocab=None, src_lang: str | None = None) -> list[str]:
    """Translate a UTF-8 text file, one sentence per line, into one line per translation.

    Args:
        checkpoint_or_model: see :func:`as_translator`.
        input_path: the file to translate (``"-"`` reads standard input).
        output_path: where to write; None writes to standard output.
        beam, batch_size, max_length: see :func:`translate_texts`.
        src_vocab, tgt_vocab, src_lang: see :func:`as_translator`.

    Returns:
        The translations (as written, one per input line).

    Raises:
        ValueError: the input file is missing or not UTF-8 (naming the file and line).
    """
    input_path = os.fspath(input_path)
    if input_path == "-":
        lines = sys.stdin.read().splitlines()
    else:
        if not os.path.isfile(input_path):
            raise ValueError(f"input_path: no such file {input_path!r}; expected a UTF-8 text "
                             f"file with one sentence per line")
        with open(input_path, "rb") as f:
            raw = f.read()
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        lines = []
        for number, line in enumerate(raw.splitlines(), start=1):
            try:
                lines.append(line.decode("utf-8"))
            except UnicodeDecodeError as err:
                raise ValueError(f"{input_path}, line {number}: not UTF-8 (byte {err.start}); "
                                 f"expected a UTF-8 text file") from None
    out = translate_texts(checkpoint_or_model, lines, beam=beam, batch_size=batch_size,
                          max_length=max_length, src_vocab=src_vocab, tgt_vocab=tgt_vocab,
                          src_lang=src_lang)
    text = "".join(line + "\n" for line in out)
    if output_path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        from kerasattn.training.checkpointing import atomic_write

        def write(tmp):
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)

        atomic_write(os.fspath(output_path), write)
    return out

