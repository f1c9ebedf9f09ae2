"""Word-level vocabularies with reserved special tokens, saved as JSON."""
from __future__ import annotations

import json
import os
from collections import Counter
from typing import Iterable, Sequence

__all__ = ["Vocabulary", "SPECIAL_TOKENS", "TokenizerBase"]

#: Reserved tokens, in id order: ``<pad>`` must be 0 (masks are ``ids != 0``).
SPECIAL_TOKENS = ("<pad>", "<unk>", "<bos>", "<eos>")
_FORMAT = "kerasattn.Vocabulary/1"


class TokenizerBase:
    """What the word and the subword tokenizer share: the special ids, ``encode`` with
    ``<bos>``/``<eos>``, the range check of ``id_to_token`` and crash-safe JSON files.

    A subclass defines ``__len__``, ``_ids(text) -> list[int]`` (a normalised sentence to
    ids, without specials), ``_token(index) -> str`` (an id known to be in range) and
    ``to_json() -> dict``.
    """

    PAD, UNK, BOS, EOS = 0, 1, 2, 3

    def __repr__(self) -> str:
        return f"{type(self).__name__}(size={len(self)})"

    def id_to_token(self, index: int) -> str:
        if not 0 <= int(index) < len(self):
            raise ValueError(f"index must be in [0, {len(self)}), received {index}")
        return self._token(int(index))

    def encode(self, text: str, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Map a normalised sentence to ids (what is not in the vocabulary -> ``<unk>`` = 1).

        Args:
            text: a normalised sentence (see :func:`kerasattn.data.normalize`).
            add_bos, add_eos: prepend ``<bos>`` / append ``<eos>``.

        Returns:
            A list of ints.
        """
        if not isinstance(text, str):
            raise ValueError(f"text must be a str, received {type(text).__name__}")
        return [self.BOS] * add_bos + self._ids(text) + [self.EOS] * add_eos

    def save(self, path: str | os.PathLike) -> None:
        """Write :meth:`to_json` as UTF-8 JSON, to a temporary file renamed over ``path``
        (a crash never leaves half a file)."""
        path = os.fspath(path)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, ensure_ascii=False, indent=0)
        os.replace(tmp, path)


class Vocabulary(TokenizerBase):
    """A word <-> id mapping with ``<pad>`` = 0, ``<unk>`` = 1, ``<bos>`` = 2, ``<eos>`` = 3.

    Texts are normalised strings (see :func:`kerasattn.data.normalize`); tokens are what
    ``str.split()`` gives. Words are ordered by decreasing frequency, then alphabetically,
    so building twice from the same texts gives the same ids.

    Example::

        vocab = Vocabulary.build(["the cat .", "the dog ."])
        vocab.encode("the cat .")            # [5, 6, 4]: "." (2) sorts before "the" (2)
        vocab.decode([5, 6, 4, vocab.EOS, 0])  # "the cat ."
    """

    def __init__(self, tokens: Sequence[str]):
        """Args:
            tokens: the ordinary words, in id order (ids start at 4); must not contain the
                special tokens or duplicates.
        """
        tokens = list(tokens)
        bad = [t for t in tokens if not isinstance(t, str) or not t or t.split() != [t]]
        if bad:
            raise ValueError(f"tokens must be non-empty strings without whitespace; "
                             f"received {bad[:5]!r}")
        clash = sorted(set(tokens) & set(SPECIAL_TOKENS))
        if clash:
            raise ValueError(f"tokens must not contain the reserved tokens {SPECIAL_TOKENS}; "
                             f"received {clash}")
        if len(set(tokens)) != len(tokens):
            dup = [t for t, c in Counter(tokens).items() if c > 1]
            raise ValueError(f"tokens must be unique; duplicates: {dup[:5]!r}")
        self._itos = list(SPECIAL_TOKENS) + tokens
        self._stoi = {t: i for i, t in enumerate(self._itos)}

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, texts: Iterable[str], min_freq: int = 1,
              max_size: int | None = None) -> "Vocabulary":
        """Build a vocabulary from normalised texts.

        Args:
            texts: sentences (whitespace-separated tokens).
            min_freq: keep words seen at least this often (rarer ones become ``<unk>``).
            max_size: optional cap on the total size, special tokens included.

        Returns:
            The :class:`Vocabulary`.
        """
        if isinstance(texts, str):
            raise ValueError("texts must be an iterable of sentences, received a single "
                             "string; wrap it in a list")
        if not isinstance(min_freq, int) or min_freq < 1:
            raise ValueError(f"min_freq must be an int >= 1, received {min_freq!r}")
        if max_size is not None and (not isinstance(max_size, int)
                                     or max_size < len(SPECIAL_TOKENS)):
            raise ValueError(f"max_size must be None or an int >= {len(SPECIAL_TOKENS)}, "
                             f"received {max_size!r}")
        counts = Counter(w for text in texts for w in text.split())
        for special in SPECIAL_TOKENS:
            counts.pop(special, None)
        words = sorted((w for w, c in counts.items() if c >= min_freq),
                       key=lambda w: (-counts[w], w))
        if max_size is not None:
            words = words[:max_size - len(SPECIAL_TOKENS)]
        return cls(words)

    # ------------------------------------------------------------------ mapping
    def __len__(self) -> int:
        return len(self._itos)

    def __contains__(self, token: str) -> bool:
        return token in self._stoi

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocabulary) and self._itos == other._itos

    @property
    def tokens(self) -> list[str]:
        """All tokens in id order (specials first)."""
        return list(self._itos)

    def token_to_id(self, token: str) -> int:
        return self._stoi.get(token, self.UNK)

    def _token(self, index: int) -> str:
        return self._itos[index]

    def _ids(self, text: str) -> list[int]:
        return [self._stoi.get(w, self.UNK) for w in text.split()]

    def decode(self, ids: Iterable[int], strip_special: bool = True) -> str:
        """Map ids back to a sentence.

        Args:
            ids: a sequence of ints (list, NumPy array or tensor converted to NumPy).
            strip_special: stop at the first ``<eos>`` and drop ``<pad>`` and ``<bos>``
                (``<unk>`` is kept, it stands for a real word). With ``False`` every token
                is written out.

        Returns:
            The space-separated tokens.
        """
        out = []
        for i in ids:
            i = int(i)
            if strip_special:
                if i == self.EOS:
                    break
                if i in (self.PAD, self.BOS):
                    continue
            out.append(self.id_to_token(i))
        return " ".join(out)

    # ------------------------------------------------------------------ files
    def to_json(self) -> dict:
        return {"format": _FORMAT, "specials": list(SPECIAL_TOKENS),
                "tokens": self._itos[len(SPECIAL_TOKENS):]}

    @classmethod
    def from_json(cls, data: dict) -> "Vocabulary":
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            got = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"not a kerasattn vocabulary: expected format {_FORMAT!r}, "
                             f"received {got!r}")
        if tuple(data.get("specials", ())) != SPECIAL_TOKENS:
            raise ValueError(f"vocabulary specials must be {SPECIAL_TOKENS}, received "
                             f"{data.get('specials')!r}")
        return cls(data["tokens"])

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Vocabulary":
        """Read a vocabulary written by :meth:`save`."""
        path = os.fspath(path)
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except FileNotFoundError:
            raise ValueError(f"path: no vocabulary file at {path!r}") from None
        except json.JSONDecodeError as e:
            raise ValueError(f"path: {path!r} is not valid JSON ({e})") from None
        return cls.from_json(data)
