"""The one way to use a trained model: :class:`Translator`.

A translator is a model with the two tokenizers it was trained with and what training
recorded about it (``meta``). It is saved and loaded as one checkpoint directory, the kit's
only format for a trained model::

    CHECKPOINT/
      model.keras       the Keras model (architecture + weights)
      src_vocab.json    source tokenizer (word vocabulary or SentencePiece model)
      tgt_vocab.json    target tokenizer
      meta.json         written last: a directory with meta.json is complete

and it translates raw text, a list of sentences or a whole file, greedily or by beam search,
with the attention weights the decoder actually used when asked for them. The command line
(``kerasattn train`` / ``translate``), the lessons, the benchmarks and the backends demo all
translate through it.

A sentence's translation does not depend on the sentences decoded beside it: sentences are
decoded in batches of similar length, every batch holds sentences of one output cap only
(``max_length``, by default ``1.5 S + 5`` tokens for a source of ``S`` tokens, rounded up to
a multiple of 16), and the source padding is masked. ``tests/test_translator.py`` checks
that a sentence translates the same alone and in any batch, greedy and beam, on every
backend.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import sys
import warnings
import zipfile
from typing import Sequence

import numpy as np

from kerasattn.data.text import detokenize, normalize
from kerasattn.files import atomic_write

__all__ = ["Translator", "Translation", "output_cap", "tokens_of", "MODEL_FILE",
           "SRC_VOCAB_FILE", "TGT_VOCAB_FILE", "META_FILE", "CHECKPOINT_FILES"]

MODEL_FILE = "model.keras"
SRC_VOCAB_FILE = "src_vocab.json"
TGT_VOCAB_FILE = "tgt_vocab.json"
META_FILE = "meta.json"
#: The files of a checkpoint directory, ``meta.json`` (written last) at the end.
CHECKPOINT_FILES = (MODEL_FILE, SRC_VOCAB_FILE, TGT_VOCAB_FILE, META_FILE)

#: Source widths are padded to a multiple of this, output caps to a multiple of
#: ``_CAP_MULTIPLE``: each distinct (width, cap) is one compilation on JAX / TensorFlow.
_WIDTH_MULTIPLE = 8
_CAP_MULTIPLE = 16


def output_cap(source_tokens: int) -> int:
    """The default output cap for a source of ``source_tokens`` tokens.

    ``1.5 S + 5`` tokens (``<eos>`` included), rounded up to a multiple of 16.
    """
    return -(-(int(1.5 * source_tokens) + 5) // _CAP_MULTIPLE) * _CAP_MULTIPLE


def tokens_of(vocab, text: str) -> list[str]:
    """The tokens ``vocab`` reads ``text`` as: its words, or its subword pieces."""
    pieces = getattr(vocab, "pieces", None)
    return pieces(text) if pieces is not None else text.split()


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, received {value!r}")
    return int(value)


@dataclasses.dataclass
class Translation:
    """One sentence decoded by :meth:`Translator.decode`.

    Attributes:
        source: the source as the model read it (normalised).
        text: the translation (ordinary text, or the kit's normalised tokens when decoded
            with ``detokenized=False``).
        source_tokens: the source's tokens (words, or subword pieces).
        target_tokens: the generated tokens, ``"<eos>"`` last when the decoder produced it.
        score: the length-normalised log-probability of the output (see
            :mod:`kerasattn.decoding.search`).
        attention: ``{"cross": (T_out, L, h, S), "self": (T_out, L, h, T_out)}``, the
            weights the decoder used at each output step (``T_out = len(target_tokens)``,
            ``L`` layers, ``h`` heads); ``"self"`` only for decoders with self-attention;
            None for ``seq2seq`` or when not asked for.
        unknown_words: source words outside a word vocabulary (empty for subword tokens).
        hypotheses: beam search with ``trace=True``: the finished hypotheses, best first
            (this translation first), each a :class:`Translation`; else None.
        steps: beam search with ``trace=True``: per output step, the hypotheses the beam
            kept, best first, each a dict ``target_tokens``, ``log_prob``, ``score``,
            ``finished``; else None.
    """

    source: str
    text: str
    source_tokens: list
    target_tokens: list
    score: float
    attention: dict | None = None
    unknown_words: list = dataclasses.field(default_factory=list)
    hypotheses: list | None = None
    steps: list | None = None

    def attention_map(self, kind: str = "cross", layer: int = -1) -> np.ndarray | None:
        """One layer of the attention as ``(h, T_out, K)`` (None if the model has none)."""
        if not self.attention or self.attention.get(kind) is None:
            return None
        a = np.asarray(self.attention[kind], dtype=float)       # (T_out, L, h, K)
        return np.transpose(a[:, layer], (1, 0, 2))              # (h, T_out, K)


class Translator:
    """A trained model with its tokenizers: load, save, translate.

    Args:
        model: the Keras model (one of the kit's seven).
        src_vocab, tgt_vocab: the tokenizers of each side
            (:class:`~kerasattn.data.Vocabulary` or :class:`~kerasattn.data.SubwordTokenizer`).
        meta: what training recorded (JSON-serialisable). Read here: ``"model"`` (the
            name), ``"src_lang"`` (the language the source side is normalised as, ``"en"``
            when absent), ``"decode"`` (defaults of :meth:`decode`: ``max_length``,
            ``compile``).
        path: the directory it was loaded from (None if built in memory).

    Raises:
        ValueError: ``model`` is not a Keras model or a tokenizer has no ``encode``.
    """

    def __init__(self, model, src_vocab, tgt_vocab, meta: dict | None = None,
                 path: str | None = None):
        import keras

        if not isinstance(model, keras.Model):
            raise ValueError(f"model must be a keras.Model; received {type(model).__name__}")
        for name, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
            if not (hasattr(vocab, "encode") and hasattr(vocab, "decode")):
                raise ValueError(f"{name} must be a tokenizer with encode() and decode() "
                                 f"(a Vocabulary or a SubwordTokenizer); received "
                                 f"{type(vocab).__name__}")
        self.model = model
        self.src_vocab = src_vocab
        self.tgt_vocab = tgt_vocab
        self.meta = dict(meta or {})
        self.path = None if path is None else os.fspath(path)

    def __repr__(self):
        return (f"Translator({self.name!r}, src_lang={self.src_lang!r}, "
                f"vocabularies {len(self.src_vocab)} / {len(self.tgt_vocab)}"
                + (f", path={self.path!r})" if self.path else ")"))

    @property
    def name(self) -> str:
        return str(self.meta.get("model", self.model.name))

    @property
    def src_lang(self) -> str:
        return str(self.meta.get("src_lang", "en"))

    def _table_length(self, side: str) -> int | None:
        from kerasattn.layers import PositionalEncoding

        tables = [layer.max_length for layer in self.model._flatten_layers()
                  if isinstance(layer, PositionalEncoding) and layer.name.startswith(side)]
        return min(tables) if tables else None

    @functools.cached_property
    def max_source_tokens(self) -> int | None:
        """The longest source the encoder's positional table covers (None: no table, as in
        the GRU encoders); :meth:`decode` translates the first this many tokens of a longer
        source, with a warning."""
        return self._table_length("src_")

    @functools.cached_property
    def max_target_tokens(self) -> int | None:
        """The longest output the decoder's positional table covers (None: no table);
        :meth:`decode` caps outputs there."""
        return self._table_length("tgt_")

    @property
    def decode_defaults(self) -> dict:
        """``meta["decode"]``: the checkpoint's own defaults for :meth:`decode`."""
        return dict(self.meta.get("decode") or {})

    # ------------------------------------------------------------------ checkpoints
    def save(self, directory, meta: dict | None = None) -> str:
        """Write the checkpoint directory (created if missing); returns its path.

        Every file is written atomically and ``meta.json`` last (an existing one is removed
        first), so a directory with a ``meta.json`` is complete, an interrupted save never
        leaves a half-written file, and an interrupted re-save never leaves a new model
        beside old vocabularies that :meth:`load` would accept.

        Args:
            directory: where to write.
            meta: replaces ``self.meta`` first (None keeps it).
        """
        if meta is not None:
            self.meta = dict(meta)
        self.meta.setdefault("model", self.model.name)
        directory = os.fspath(directory)
        os.makedirs(directory, exist_ok=True)
        if os.path.exists(os.path.join(directory, META_FILE)):
            os.remove(os.path.join(directory, META_FILE))  # incomplete until rewritten
        atomic_write(os.path.join(directory, MODEL_FILE), self.model.save)
        atomic_write(os.path.join(directory, SRC_VOCAB_FILE), self.src_vocab.save)
        atomic_write(os.path.join(directory, TGT_VOCAB_FILE), self.tgt_vocab.save)

        def write_meta(tmp):
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(self.meta, f, indent=1, ensure_ascii=False)

        atomic_write(os.path.join(directory, META_FILE), write_meta)
        self.path = directory
        return directory

    @classmethod
    def load(cls, directory) -> "Translator":
        """Load a checkpoint directory written by :meth:`save` (or ``kerasattn train``).

        Args:
            directory: the directory, or its ``model.keras`` file.

        Raises:
            ValueError: the directory or one of its files is missing (naming what is
                missing), ``meta.json`` is not valid JSON, or ``model.keras`` cannot be
                loaded (truncated, corrupt).
        """
        import keras

        import kerasattn.metrics  # noqa: F401  (registers the kit's loss and metrics)
        import kerasattn.models  # noqa: F401  (registers the kit's layers for loading)
        from kerasattn.data.tokenizers import load_tokenizer

        directory = os.fspath(directory)
        if os.path.isfile(directory) and directory.endswith(".keras"):
            directory = os.path.dirname(directory) or "."
        if os.path.isfile(directory):
            raise ValueError(f"CHECKPOINT: {directory!r} is a file, not a directory (expected "
                             f"a checkpoint directory or its {MODEL_FILE})")
        if not os.path.isdir(directory):
            raise ValueError(f"CHECKPOINT: no such directory {directory!r}; create one with "
                             f"`kerasattn train MODEL --out {directory}`")
        missing = [f for f in CHECKPOINT_FILES
                   if not os.path.isfile(os.path.join(directory, f))]
        if missing:
            raise ValueError(f"CHECKPOINT {directory!r} is incomplete: missing "
                             f"{', '.join(missing)} (expected the files "
                             f"{', '.join(CHECKPOINT_FILES)} written by `kerasattn train` "
                             f"or Translator.save)")
        meta_path = os.path.join(directory, META_FILE)
        try:
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        except (ValueError, UnicodeDecodeError) as err:
            raise ValueError(f"CHECKPOINT {directory!r}: {META_FILE} is not valid JSON "
                             f"({err})") from None
        model_path = os.path.join(directory, MODEL_FILE)
        if not zipfile.is_zipfile(model_path):
            raise ValueError(f"CHECKPOINT {directory!r}: {MODEL_FILE} is not a complete .keras "
                             f"archive (truncated or corrupt, {os.path.getsize(model_path)} "
                             "bytes); save it again with `kerasattn train` or Translator.save")
        try:
            model = keras.saving.load_model(model_path, compile=False)
        except Exception as err:
            raise ValueError(f"CHECKPOINT {directory!r}: cannot load {MODEL_FILE} "
                             f"({type(err).__name__}: {err})") from err
        return cls(model, load_tokenizer(os.path.join(directory, SRC_VOCAB_FILE)),
                   load_tokenizer(os.path.join(directory, TGT_VOCAB_FILE)), meta=meta,
                   path=directory)

    # ------------------------------------------------------------------ translating
    def translate(self, texts: Sequence[str], **kwargs) -> list[str]:
        """Translate sentences; one string per sentence, in order.

        Args:
            texts: raw sentences (a blank one gives ``""``).
            **kwargs: see :meth:`decode`.

        Returns:
            ``len(texts)`` translations.
        """
        return [t.text for t in self.decode(texts, **kwargs)]

    def decode(self, texts: Sequence[str], *, beam: int = 1, max_length: int | None = None,
               batch_size: int = 128, normalized: bool = False, detokenized: bool = True,
               attention: bool = False, cache: bool = True, compile=None,
               progress: bool = False, **search_kwargs) -> list[Translation]:
        """Decode sentences in batches of similar length; one :class:`Translation` each.

        Args:
            texts: raw sentences, normalised here as the training data was (with the
                checkpoint's ``src_lang``) unless ``normalized``.
            beam: 1 for greedy decoding, ``k > 1`` for beam search with ``k`` hypotheses.
            max_length: the most output tokens (``<eos>`` included) for every sentence;
                None: the checkpoint's ``meta["decode"]["max_length"]`` if set, else
                :func:`output_cap` of each sentence's own length.
            batch_size: sentences decoded together.
            normalized: the texts are already normalised (as in a :class:`Corpus`).
            detokenized: ordinary text (True) or the kit's normalised tokens (False, the
                form :func:`kerasattn.metrics.corpus_bleu` scores against a corpus).
            attention: keep the attention weights of every output step.
            cache: incremental decoding (True) or re-running the model on each prefix.
            compile: "auto", True or False (see :mod:`kerasattn.backend_utils`); None: the
                checkpoint's ``meta["decode"]["compile"]``, else "auto".
            progress: a progress bar over the batches.
            **search_kwargs: passed to the search (``alpha``, ``length_penalty_kind``,
                ``coverage_penalty``, ``trace``...: :func:`kerasattn.decoding.beam_search`).

        Returns:
            A list of ``len(texts)`` :class:`Translation`; a blank sentence gives an empty
            one.

        Raises:
            ValueError: ``texts`` is a single string, or ``beam`` / ``batch_size`` /
                ``max_length`` is not a positive int (naming the argument and the value).
        """
        from kerasattn import decoding

        if isinstance(texts, str):
            raise ValueError("texts must be a list of sentences, received a single string "
                             f"{texts[:40]!r}")
        beam = _positive_int("beam", beam)
        batch_size = _positive_int("batch_size", batch_size)
        defaults = self.decode_defaults
        if max_length is None:
            max_length = defaults.get("max_length")
        if max_length is not None:
            max_length = _positive_int("max_length", max_length)
        if compile is None:
            compile = defaults.get("compile", "auto")
        sources = [t if normalized else normalize(t, self.src_lang) for t in texts]
        ids = [self.src_vocab.encode(s) if s.strip() else [] for s in sources]
        limit, out_limit = self.max_source_tokens, self.max_target_tokens
        if limit is not None and any(len(i) > limit for i in ids):
            cut = [k for k, i in enumerate(ids) if len(i) > limit]
            warnings.warn(f"texts[{', '.join(map(str, cut[:5]))}{', ...' if len(cut) > 5 else ''}"
                          f"] longer than the {limit} source tokens this model's positional "
                          f"table covers (max_length={limit}): only the first {limit} "
                          f"tokens are translated", stacklevel=2)
            ids = [i[:limit] for i in ids]
        out = [Translation(source=s, text="", source_tokens=[], target_tokens=[],
                           score=0.0) for s in sources]
        caps = [max_length or output_cap(len(i)) for i in ids]
        if out_limit is not None:
            caps = [min(c, out_limit) for c in caps]
        # one output cap per batch (a beam's result depends on its cap), similar lengths
        todo = sorted((i for i in range(len(ids)) if ids[i]),
                      key=lambda i: (caps[i], len(ids[i])))
        batches, start = [], 0
        for k in range(1, len(todo) + 1):
            if k == len(todo) or k - start == batch_size or caps[todo[k]] != caps[todo[start]]:
                batches.append(todo[start:k])
                start = k
        if progress and len(batches) > 1:
            from tqdm import tqdm
            batches = tqdm(batches, desc="decoding", unit="batch", leave=False)
        for idx in batches:
            # padded to a multiple of 8 (fewer shapes to compile); the padding is masked
            width = -(-max(len(ids[i]) for i in idx) // _WIDTH_MULTIPLE) * _WIDTH_MULTIPLE
            if limit is not None:
                width = min(width, limit)
            src = np.zeros((len(idx), width), dtype=np.int32)           # (B, S)
            for row, i in enumerate(idx):
                src[row, :len(ids[i])] = ids[i]
            if beam == 1:
                result = decoding.greedy_decode(self.model, src, max_length=caps[idx[0]],
                                                cache=cache, compile=compile, **search_kwargs)
            else:
                result = decoding.beam_search(self.model, src, beam_size=beam,
                                              max_length=caps[idx[0]], cache=cache,
                                              compile=compile, **search_kwargs)
            for row, (i, tokens) in enumerate(zip(idx, result.token_lists())):
                out[i] = self._translation(sources[i], ids[i], tokens, result, row, attention,
                                           detokenized)
        return out

    def _translation(self, source, source_ids, tokens, result, row, attention, detokenized):
        n = int(result.lengths[row])                 # generated ids, <eos> included
        text = self.tgt_vocab.decode(tokens)
        target = [self.tgt_vocab.id_to_token(int(t)) for t in tokens]
        if n > len(target):                          # the decoder ended with <eos>
            target.append("<eos>")
        if hasattr(self.src_vocab, "pieces"):                   # subword pieces
            src_tokens = [self.src_vocab.id_to_token(int(t)) for t in source_ids]
        else:                                                    # words (<unk> ones too)
            src_tokens = source.split()[:len(source_ids)]
        rec = None
        if attention and result.attention:
            rec = {}
            for name, a in result.attention.items():
                a = np.asarray(a[row, :n])                       # (T_out, L, h, K)
                rec[name] = a[..., :len(source_ids)] if name == "cross" else a
        unknown = ([] if hasattr(self.src_vocab, "pieces")
                   else [w for w in source.split() if w not in self.src_vocab])
        out = Translation(source=source, text=detokenize(text) if detokenized else text,
                          source_tokens=src_tokens, target_tokens=target,
                          score=float(result.scores[row]), attention=rec,
                          unknown_words=unknown)
        if result.steps is not None:                # beam search with trace=True
            out.hypotheses = [self._hypothesis(out, h, len(source_ids), attention,
                                               detokenized) for h in result.hypotheses[row]]
            out.steps = [[dict(target_tokens=self._target_tokens(h["tokens"]),
                               log_prob=h["log_prob"], score=h["score"],
                               finished=h["finished"]) for h in kept]
                         for kept in result.steps[row]]
        return out

    def _target_tokens(self, ids) -> list:
        return [self.tgt_vocab.id_to_token(int(t)) for t in ids]

    def _hypothesis(self, best, h, n_source, attention, detokenized) -> Translation:
        """One finished beam hypothesis as a :class:`Translation` of the same source."""
        ids = [int(t) for t in h.tokens]
        n = len(ids)
        text = self.tgt_vocab.decode(ids[:-1] if h.finished else ids)
        rec = {name: np.asarray(a[:n])[..., :n_source if name == "cross" else n]
               for name, a in h.attention.items()} if attention else None
        return dataclasses.replace(best, text=detokenize(text) if detokenized else text,
                                   target_tokens=self._target_tokens(ids), score=h.score,
                                   attention=rec or None)

    def translate_file(self, input_path, output_path=None, **kwargs) -> list[str]:
        """Translate a UTF-8 text file, one sentence per line, into one line per sentence.

        Args:
            input_path: the file (``"-"`` reads standard input). A UTF-8 byte-order mark
                is skipped; an empty line gives an empty line.
            output_path: where to write (atomically); None writes to standard output.
            **kwargs: see :meth:`decode`.

        Returns:
            The translations, as written.

        Raises:
            ValueError: the input file is missing or not UTF-8 (naming the file and line).
        """
        input_path = os.fspath(input_path)
        if input_path == "-":  # the bytes, split and decoded exactly as a file's
            stdin = getattr(sys.stdin, "buffer", None)
            raw = stdin.read() if stdin is not None else sys.stdin.read().encode("utf-8")
            name = "<stdin>"
        else:
            if not os.path.isfile(input_path):
                raise ValueError(f"input_path (--input): no such file {input_path!r}; expected "
                                 f"a UTF-8 text file with one sentence per line")
            with open(input_path, "rb") as f:
                raw = f.read()
            name = input_path
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        lines = []
        # bytes.splitlines splits at \n, \r and \r\n only (str.splitlines would also split
        # inside a line at a form feed or U+2028): one line out per line in
        for number, line in enumerate(raw.splitlines(), start=1):
            try:
                lines.append(line.decode("utf-8"))
            except UnicodeDecodeError as err:
                raise ValueError(f"{name}, line {number}: not UTF-8 (byte "
                                 f"{err.start}); expected a UTF-8 text file") from None
        out = self.translate(lines, **kwargs)
        text = "".join(line + "\n" for line in out)
        if output_path is None:
            sys.stdout.write(text)
            sys.stdout.flush()
        else:
            def write(tmp):
                with open(tmp, "w", encoding="utf-8") as f:
                    f.write(text)

            atomic_write(os.fspath(output_path), write)
        return out
