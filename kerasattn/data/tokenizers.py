"""Tokenizers: word level (:class:`~kerasattn.data.Vocabulary`) or subword (SentencePiece).

Both kinds give the ids every model of the kit expects: ``<pad>`` = 0 (masks are
``ids != 0``), ``<unk>`` = 1, ``<bos>`` = 2, ``<eos>`` = 3, and share one interface, so
:func:`kerasattn.data.make_arrays`, :class:`kerasattn.inference.Translator` and the
checkpoints take either:

- ``encode(text, add_bos=False, add_eos=False) -> list[int]``;
- ``decode(ids, strip_special=True) -> str`` (stops at the first ``<eos>``, drops
  ``<pad>`` and ``<bos>``), returning the kit's normalised text, which
  :func:`kerasattn.data.detokenize` turns into ordinary text before BLEU;
- ``len(tokenizer)``, ``save(path)``, and :func:`load_tokenizer` to read either kind back.

The word level splits on spaces: it reads best in attention heatmaps and suits the built-in
corpus, but every word unseen in training becomes ``<unk>``, and a language written without
spaces (Japanese, Chinese) gives one "word" per sentence. The subword tokenizer is a
SentencePiece unigram model (Kudo 2018), the tokenizer keras-hub trains with
``keras_hub.tokenizers.compute_sentence_piece_proto`` and runs with
``keras_hub.tokenizers.SentencePieceTokenizer`` (:meth:`SubwordTokenizer.keras_hub_tokenizer`
gives that layer for a ``tf.data`` pipeline). It learns pieces from raw character sequences,
so it needs no spaces, and it spells a rare word with known pieces instead of ``<unk>``. It
is trained here through the ``sentencepiece`` library that keras-hub calls, to name the
special pieces as the kit does and to keep its training log quiet.
"""
from __future__ import annotations

import base64
import io
import json
import os
import re
from typing import Iterable, Sequence

from kerasattn.data.vocab import SPECIAL_TOKENS, TokenizerBase, Vocabulary

__all__ = ["SubwordTokenizer", "build_tokenizer", "load_tokenizer", "TOKENIZERS"]

TOKENIZERS = ("word", "subword")
_FORMAT = "kerasattn.SubwordTokenizer/1"


def _sentencepiece():
    try:
        import sentencepiece
    except ImportError:  # pragma: no cover - sentencepiece comes with keras-hub
        raise ImportError("the subword tokenizer needs the `sentencepiece` package (installed "
                          "with keras-hub): pip install keras-hub sentencepiece") from None
    return sentencepiece


class SubwordTokenizer(TokenizerBase):
    """A SentencePiece model with the kit's special ids (``<pad>`` 0 ... ``<eos>`` 3).

    Build one with :meth:`build` on the training split's normalised sentences of ONE side
    (source and target each get their own).

    Example::

        tok = SubwordTokenizer.build([t for _, t in corpus.train], vocab_size=4000)
        ids = tok.encode("私は猫が好きです。", add_eos=True)
        tok.decode(ids)   # "私は猫が好きです。"

    Args:
        proto: the serialized SentencePiece model (bytes).
    """

    def __init__(self, proto: bytes):
        if not isinstance(proto, (bytes, bytearray)) or not proto:
            raise ValueError(f"proto must be the non-empty bytes of a SentencePiece model, "
                             f"received {type(proto).__name__}")
        spm = _sentencepiece()
        self.proto = bytes(proto)
        self._sp = spm.SentencePieceProcessor(model_proto=self.proto)
        specials = tuple(self._sp.id_to_piece(i) for i in range(len(SPECIAL_TOKENS)))
        if specials != SPECIAL_TOKENS:
            raise ValueError(f"the SentencePiece model must have the special pieces "
                             f"{SPECIAL_TOKENS} at ids 0-3, received {specials}")

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, texts: Iterable[str], vocab_size: int = 4000, model_type: str = "unigram",
              character_coverage: float = 0.9995) -> "SubwordTokenizer":
        """Train a SentencePiece model on normalised sentences.

        Args:
            texts: the training split's sentences of one side (never valid or test).
            vocab_size: int >= 8, pieces including the 4 special ones; a soft limit (a
                small corpus gets fewer pieces; one whose characters alone outnumber it,
                as a few hundred Japanese sentences do, gets one piece per character and
                a few more).
            model_type: ``"unigram"`` (default) or ``"bpe"``.
            character_coverage: share of characters the pieces must cover (rarer ones
                become ``<unk>``): 0.9995 suits Japanese and Chinese, 1.0 small alphabets.

        Returns:
            The :class:`SubwordTokenizer`.
        """
        if isinstance(texts, str):
            raise ValueError("texts must be an iterable of sentences, received a single "
                             "string; wrap it in a list")
        if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 8:
            raise ValueError(f"vocab_size must be an int >= 8, received {vocab_size!r}")
        if model_type not in ("unigram", "bpe"):
            raise ValueError(f"model_type must be 'unigram' or 'bpe', received {model_type!r}")
        if not 0.9 <= character_coverage <= 1.0:
            raise ValueError(f"character_coverage must be in [0.9, 1], received "
                             f"{character_coverage!r}")
        texts = [t for t in texts if isinstance(t, str) and t.strip()]
        if not texts:
            raise ValueError("texts holds no non-empty sentence: nothing to train on")
        spm = _sentencepiece()
        for _ in range(2):
            writer = io.BytesIO()
            try:
                spm.SentencePieceTrainer.train(
                    sentence_iterator=iter(texts), model_writer=writer,
                    vocab_size=vocab_size, model_type=model_type,
                    character_coverage=character_coverage, hard_vocab_limit=False,
                    normalization_rule_name="identity", pad_id=0, unk_id=1, bos_id=2,
                    eos_id=3, pad_piece=SPECIAL_TOKENS[0], unk_piece=SPECIAL_TOKENS[1],
                    bos_piece=SPECIAL_TOKENS[2], eos_piece=SPECIAL_TOKENS[3], num_threads=1,
                    minloglevel=2)
                break
            except RuntimeError as err:
                # every covered character must be a piece: a small corpus of a language
                # with thousands of characters needs more pieces than asked for
                need = re.search(r"smaller than required_chars\. \d+ vs (\d+)", str(err))
                if need is None:
                    raise
                vocab_size = int(need.group(1)) + len(SPECIAL_TOKENS) + 16
        return cls(writer.getvalue())

    # ------------------------------------------------------------------ mapping
    def __len__(self) -> int:
        return int(self._sp.get_piece_size())

    def __eq__(self, other) -> bool:
        return isinstance(other, SubwordTokenizer) and self.proto == other.proto

    @property
    def tokens(self) -> list[str]:
        """All pieces in id order (specials first; ``▁`` marks the start of a word)."""
        return [self._sp.id_to_piece(i) for i in range(len(self))]

    def token_to_id(self, token: str) -> int:
        return int(self._sp.piece_to_id(token))

    def _token(self, index: int) -> str:
        return self._sp.id_to_piece(index)

    def _ids(self, text: str) -> list[int]:
        return list(self._sp.encode(text, out_type=int))

    def pieces(self, text: str) -> list[str]:
        """The pieces of ``text`` (the labels of an attention heatmap)."""
        return [self.id_to_token(i) for i in self.encode(text)]

    def decode(self, ids: Iterable[int], strip_special: bool = True) -> str:
        """Map piece ids back to the normalised sentence.

        Args:
            ids: a sequence of ints.
            strip_special: stop at the first ``<eos>`` and drop ``<pad>`` and ``<bos>``
                (``<unk>`` is written as ``<unk>``). With ``False`` every piece is written
                out, space-separated.

        Returns:
            The sentence.
        """
        ids = [int(i) for i in ids]
        if not strip_special:
            return " ".join(self.id_to_token(i) for i in ids)
        out, text = [], []
        for i in ids:
            if i == self.EOS:
                break
            if i in (self.PAD, self.BOS):
                continue
            self.id_to_token(i)                      # range check with a clear message
            if i == self.UNK:
                text.append(self._sp.decode(out))
                text.append(SPECIAL_TOKENS[1])
                out = []
            else:
                out.append(i)
        text.append(self._sp.decode(out))
        return " ".join(" ".join(text).split())

    def keras_hub_tokenizer(self):
        """This model as a ``keras_hub.tokenizers.SentencePieceTokenizer`` layer (same ids),
        for a ``tf.data`` pipeline or a model that tokenizes raw strings."""
        import keras_hub

        return keras_hub.tokenizers.SentencePieceTokenizer(proto=self.proto)

    # ------------------------------------------------------------------ files
    def to_json(self) -> dict:
        return {"format": _FORMAT, "specials": list(SPECIAL_TOKENS),
                "proto": base64.b64encode(self.proto).decode("ascii")}

    @classmethod
    def from_json(cls, data: dict) -> "SubwordTokenizer":
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            got = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"not a kerasattn subword tokenizer: expected format "
                             f"{_FORMAT!r}, received {got!r}")
        return cls(base64.b64decode(data["proto"]))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "SubwordTokenizer":
        """Read a tokenizer written by :meth:`save`."""
        return load_tokenizer(path, expect=cls)


def build_tokenizer(kind: str, texts: Sequence[str], *, min_freq: int = 1,
                    max_size: int | None = None, vocab_size: int = 4000):
    """Build a tokenizer of ``kind`` on the training sentences of one side.

    Args:
        kind: ``"word"`` (a :class:`~kerasattn.data.Vocabulary`) or ``"subword"`` (a
            :class:`SubwordTokenizer`).
        texts: normalised training sentences (never valid or test).
        min_freq, max_size: word level: see :meth:`Vocabulary.build`.
        vocab_size: subword level: see :meth:`SubwordTokenizer.build`.

    Returns:
        The tokenizer.
    """
    if kind == "word":
        return Vocabulary.build(texts, min_freq=min_freq, max_size=max_size)
    if kind == "subword":
        return SubwordTokenizer.build(texts, vocab_size=vocab_size)
    raise ValueError(f"tokenizer kind must be one of {TOKENIZERS}, received {kind!r}")


def load_tokenizer(path: str | os.PathLike, expect=None):
    """Read a tokenizer file written by either kind's ``save``.

    Args:
        path: the JSON file.
        expect: optional class the file must hold.

    Returns:
        A :class:`~kerasattn.data.Vocabulary` or a :class:`SubwordTokenizer`.
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ValueError(f"path: no tokenizer file at {path!r}") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"path: {path!r} is not valid JSON ({e})") from None
    fmt = data.get("format") if isinstance(data, dict) else None
    cls = SubwordTokenizer if fmt == _FORMAT else Vocabulary
    if expect is not None and cls is not expect:
        raise ValueError(f"path: {path!r} holds a {cls.__name__}, expected a "
                         f"{expect.__name__}")
    return cls.from_json(data)


def tokenizer_kind(tokenizer) -> str:
    """``"word"`` or ``"subword"``."""
    if isinstance(tokenizer, SubwordTokenizer):
        return "subword"
    if isinstance(tokenizer, Vocabulary):
        return "word"
    raise ValueError(f"tokenizer must be a Vocabulary or a SubwordTokenizer, received "
                     f"{type(tokenizer).__name__}")
