"""Loader for the Tatoeba / manythings.org bilingual files (``English<TAB>French[<TAB>...]``).

The files at https://www.manythings.org/anki/ have one pair per line, a third column with
the Tatoeba attribution, and French typography (non-breaking spaces before ``!`` and
``?``). This module reads such a file (plain ``.txt`` or the ``.zip`` archive), skips and
counts malformed lines (or raises in strict mode), normalises both sides like the rest of
the kit (:func:`kerasattn.data.normalize`), filters by length, optionally removes
duplicates, and splits deterministically into train / valid / test, keeping every
translation of one source sentence (English, or the other language with ``reverse``) in the
same split.
"""
from __future__ import annotations

import dataclasses
import os
import re
import zipfile
from pathlib import Path

import numpy as np

from kerasattn.data.corpus import Corpus
from kerasattn.data.text import normalize

__all__ = ["load_tatoeba", "read_pairs", "fetch_tatoeba", "tatoeba_url", "resolve_data",
           "LoadReport",
           "TatoebaDownloadError", "DEFAULT_URL", "LICENCE"]

URL_PATTERN = "https://www.manythings.org/anki/{lang}-eng.zip"
DEFAULT_URL = URL_PATTERN.format(lang="fra")
#: Printed whenever a corpus is fetched, and to be kept wherever the data is redistributed.
LICENCE = ("Sentence pairs from the Tatoeba Project (https://tatoeba.org), via "
           "manythings.org, licensed CC-BY 2.0 FR. Attribution: tatoeba.org")
_MEMBER = "fra.txt"
_MAX_BAD_LINES = 10


class TatoebaDownloadError(ConnectionError):
    """The corpus could not be downloaded (no network, blocked, or server error)."""


@dataclasses.dataclass
class LoadReport:
    """What :func:`load_tatoeba` read, skipped and kept.

    Attributes:
        source: the file read.
        lines: lines in the file (blank lines included).
        blank: blank lines (ignored, not an error).
        skipped: malformed lines skipped, per reason (``"no tab"``, ``"empty side"``,
            ``"undecodable bytes"``).
        bad_lines: the first line numbers (1-based) of malformed lines, with their reason.
        too_long: pairs dropped because a side exceeded ``max_length`` tokens.
        duplicates: pairs dropped as duplicates.
        kept: pairs kept (train + valid + test).
    """

    source: str = ""
    lines: int = 0
    blank: int = 0
    skipped: dict = dataclasses.field(default_factory=dict)
    bad_lines: list = dataclasses.field(default_factory=list)
    too_long: int = 0
    duplicates: int = 0
    kept: int = 0

    @property
    def n_skipped(self) -> int:
        return sum(self.skipped.values())

    def summary(self) -> str:
        """One line: read / skipped (with the first bad line numbers) / filtered / kept."""
        text = f"{self.lines} lines read from {self.source}; {self.kept} pairs kept"
        if self.n_skipped:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items()))
            first = ", ".join(str(n) for n, _ in self.bad_lines)
            text += f"; {self.n_skipped} malformed lines skipped ({reasons}; first: line {first})"
        if self.too_long:
            text += f"; {self.too_long} too long"
        if self.duplicates:
            text += f"; {self.duplicates} duplicates removed"
        return text

    def __str__(self) -> str:
        return self.summary()


def _download(url: str, cache_dir: str | None) -> Path:
    import keras

    fname = os.path.basename(url.split("?")[0]) or "fra-eng.zip"
    if cache_dir is not None:  # get_file falls back to /tmp/.keras if it cannot write here
        os.makedirs(os.path.join(os.path.expanduser(cache_dir), "datasets"), exist_ok=True)
    try:
        path = keras.utils.get_file(fname=fname, origin=url, cache_dir=cache_dir,
                                    extract=False)
    except Exception as err:  # keras raises plain Exception subclasses for URL errors
        raise TatoebaDownloadError(
            f"Could not download {url} ({type(err).__name__}: {err}); with no network, "
            f"download {fname} on a connected machine and pass the file with --data PATH "
            "(Python: load_tatoeba(path=...)), or leave out --data to use the built-in "
            "corpus (kerasattn.data.builtin_corpus()), which needs no download.") from None
    return Path(path)


def _lang_from_name(name: str) -> str:
    match = re.match(r"([a-z]{3})(?:-eng)?(?=[-_.])", name.lower())
    return match.group(1) if match and match.group(1) != "eng" else "fra"


def tatoeba_url(lang: str) -> str:
    """The manythings.org archive of language ``lang`` paired with English.

    Args:
        lang: a three-letter code as manythings.org names its files (``"fra"``, ``"deu"``,
            ``"jpn"``, ``"spa"``...).

    Returns:
        ``https://www.manythings.org/anki/{lang}-eng.zip``.
    """
    if not isinstance(lang, str) or not lang.isalpha() or not 2 <= len(lang) <= 8:
        raise ValueError(f"lang must be a manythings.org language code such as 'fra', 'deu' "
                         f"or 'jpn'; received {lang!r}")
    return URL_PATTERN.format(lang=lang.lower())


def fetch_tatoeba(lang: str = "fra", url: str | None = None, cache_dir: str | None = None,
                  verbose: bool = True) -> Path:
    """Download (once) the manythings.org / Tatoeba archive for ``lang`` and return its path.

    The archive goes into the Keras cache (``~/.keras/datasets``, or ``cache_dir``) through
    ``keras.utils.get_file``; a second call finds it there and does not download again.
    The licence line (:data:`LICENCE`) is printed when ``verbose``.

    Args:
        lang: manythings.org language code (``"fra"`` for English-French...).
        url: where to download from instead of :func:`tatoeba_url` (a mirror, or a
            ``file://`` URL).
        cache_dir: the cache directory (default: Keras's).
        verbose: print the licence line and where the file is.

    Returns:
        Path of the ``.zip`` archive, ready for :func:`load_tatoeba`.

    Raises:
        TatoebaDownloadError: the download failed; the message says how to use a local
            file (``--data PATH``) or the built-in corpus instead.
    """
    url = url or tatoeba_url(lang)
    path = _download(url, cache_dir)
    if verbose:
        print(LICENCE)
        print(f"corpus: {path}")
    return path


def resolve_data(value: str, cache_dir: str | None = None, verbose: bool = True) -> Path:
    """The file behind a ``--data`` value: an existing path, or a language code to fetch.

    Args:
        value: a path to a manythings/Tatoeba file (``.txt``, ``.zip`` or a directory), or
            a manythings.org language code (``"fra"``, ``"deu"``, ``"jpn"``...) fetched
            with :func:`fetch_tatoeba`.
        cache_dir, verbose: see :func:`fetch_tatoeba`.

    Returns:
        A path for :func:`load_tatoeba`.

    Raises:
        ValueError: ``value`` is neither an existing path nor a language code.
        TatoebaDownloadError: fetching failed.
    """
    if not isinstance(value, (str, os.PathLike)) or not str(value).strip():
        raise ValueError(f"--data must be a file path or a language code such as 'fra'; "
                         f"received {value!r}")
    path = Path(value).expanduser()
    if path.exists():
        return path
    text = str(value)
    if text.isalpha() and 2 <= len(text) <= 8:
        return Path(fetch_tatoeba(text.lower(), cache_dir=cache_dir, verbose=verbose))
    raise ValueError(f"--data: no such file {text!r}, and it is not a language code such as "
                     f"'fra', 'deu' or 'jpn' (those are downloaded from manythings.org)")


def _pick_file(path: Path) -> Path:
    """``path``, or for a directory the ``.txt`` it holds (``fra.txt`` first)."""
    if not path.exists():
        raise ValueError(f"path: no such file {str(path)!r}; pass a manythings/Tatoeba file "
                         f"(fra.txt or fra-eng.zip) or use kerasattn.data.builtin_corpus()")
    if path.is_dir():
        candidates = sorted(c for c in path.glob("*.txt") if "_about" not in c.name)
        if not candidates:
            raise ValueError(f"path: directory {str(path)!r} holds no .txt file")
        path = next((c for c in candidates if c.name == _MEMBER), candidates[0])
    return path


def _read_bytes(path: Path) -> bytes:
    path = _pick_file(path)
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if n.endswith(".txt") and "_about" not in n]
            if not names:
                raise ValueError(f"path: the archive {str(path)!r} holds no .txt file; "
                                 f"members: {zf.namelist()}")
            name = _MEMBER if _MEMBER in names else names[0]
            return zf.read(name)
    return path.read_bytes()


def read_pairs(data: bytes, source: str = "<bytes>", strict: bool = False,
               swap: bool = False) -> tuple[list[tuple[str, str]], LoadReport]:
    """Parse tab-separated lines into raw ``(english, french)`` pairs.

    Args:
        data: the file's bytes (UTF-8; a BOM is accepted).
        source: name used in messages.
        strict: raise ``ValueError`` naming the line number at the first malformed line
            instead of skipping it.
        swap: return ``(french, english)`` (to translate French into English).

    Returns:
        ``(pairs, report)``: pairs not yet normalised, and a :class:`LoadReport`.
    """
    report = LoadReport(source=source)
    pairs = []
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines = lines[:-1]  # the final newline does not start a line
    report.lines = len(lines)
    for number, raw in enumerate(lines, start=1):
        raw = raw.rstrip(b"\r")
        reason = None
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            reason = f"undecodable bytes (byte {err.start})"
            line = None
        if line is not None:
            if not line.strip():
                report.blank += 1
                continue
            fields = line.split("\t")
            if len(fields) < 2:
                reason = "no tab"
            elif not fields[0].strip() or not fields[1].strip():
                reason = "empty side"
        if reason is not None:
            if strict:
                shown = raw[:80].decode("utf-8", errors="replace")
                raise ValueError(f"{source}, line {number}: malformed line ({reason}): "
                                 f"{shown!r}; expected 'English<TAB>French[<TAB>attribution]' "
                                 f"(pass strict=False to skip such lines)")
            key = reason.split(" (")[0]
            report.skipped[key] = report.skipped.get(key, 0) + 1
            if len(report.bad_lines) < _MAX_BAD_LINES:
                report.bad_lines.append((number, reason))
            continue
        en, fr = fields[0].strip(), fields[1].strip()
        pairs.append((fr, en) if swap else (en, fr))
    return pairs, report


def load_tatoeba(path: str | os.PathLike | None = None, url: str = DEFAULT_URL,
                 max_length: int | None = 30, dedupe: bool | str = True, seed: int = 0,
                 strict: bool = False, valid_fraction: float = 0.05,
                 test_fraction: float = 0.05, max_pairs: int | None = None,
                 reverse: bool = False, cache_dir: str | None = None,
                 lang: str | None = None) -> Corpus:
    """Load a manythings.org / Tatoeba file (English-French by default) as a Corpus.

    Args:
        path: local ``fra.txt``, ``fra-eng.zip`` or a directory holding the ``.txt``; when
            ``None`` the archive is downloaded from ``url`` with ``keras.utils.get_file``
            (cached under ``~/.keras/datasets`` or ``cache_dir``).
        url: where to download from.
        max_length: drop pairs with a side longer than this many tokens (after
            normalisation); ``None`` keeps all.
        dedupe: ``True`` or ``"pair"`` drops repeated identical pairs; ``"source"`` keeps
            only the first translation of each source sentence; ``False`` keeps all.
        seed: seed of the deterministic split.
        strict: raise ``ValueError`` with the line number at the first malformed line.
        valid_fraction, test_fraction: share of source sentences in valid and test.
        max_pairs: keep only the first ``max_pairs`` usable pairs of the file (they are
            ordered from short to long).
        reverse: translate from the other language into English instead of from English.
        cache_dir: download cache directory.
        lang: the other language's manythings.org code (``"fra"``, ``"jpn"``...), which
            decides its normalisation (French elisions are split only for ``"fra"``);
            default: read from the file name (``jpn-eng.zip``, ``jpn.txt``,
            ``jpn-eng-sample.txt``; for a directory, the ``.txt`` it reads), else ``"fra"``.

    Returns:
        The corpus; ``corpus.report`` (also ``corpus.info["report"]``) is the
        :class:`LoadReport`.

    Raises:
        TatoebaDownloadError: the download failed (the message names the local-path
            option and the built-in corpus).
        ValueError: missing file, malformed line in strict mode, bad argument, or no pair
            left after parsing and filtering.
    """
    if dedupe not in (True, False, "pair", "source"):
        raise ValueError(f"dedupe must be True, False, 'pair' or 'source', received {dedupe!r}")
    for name, frac in (("valid_fraction", valid_fraction), ("test_fraction", test_fraction)):
        if not 0.0 <= frac < 1.0:
            raise ValueError(f"{name} must be in [0, 1), received {frac}")
    if valid_fraction + test_fraction >= 1.0:
        raise ValueError(f"valid_fraction + test_fraction must be < 1, received "
                         f"{valid_fraction} + {test_fraction}")
    if max_length is not None and (not isinstance(max_length, int) or max_length < 1):
        raise ValueError(f"max_length must be None or an int >= 1, received {max_length!r}")
    file = _pick_file(Path(path) if path is not None else _download(url, cache_dir))
    raw_pairs, report = read_pairs(_read_bytes(file), source=str(file), strict=strict,
                                   swap=reverse)
    lang = lang or _lang_from_name(file.name)
    other = "fr" if lang == "fra" else lang
    src_lang, tgt_lang = (other, "en") if reverse else ("en", other)
    pairs, seen = [], set()
    for en, fr in raw_pairs:
        s, t = normalize(en, src_lang), normalize(fr, tgt_lang)
        if max_length is not None and (len(s.split()) > max_length
                                       or len(t.split()) > max_length):
            report.too_long += 1
            continue
        if dedupe:
            key = s if dedupe == "source" else (s, t)
            if key in seen:
                report.duplicates += 1
                continue
            seen.add(key)
        pairs.append((s, t))
        if max_pairs is not None and len(pairs) >= max_pairs:
            break
    if not pairs:
        raise ValueError(f"no usable sentence pairs in {str(file)!r}: {report.summary()}"
                         + (f" (max_length={max_length} filtered {report.too_long})"
                            if report.too_long else "")
                         + "; expected lines 'English<TAB>French[<TAB>attribution]'")
    # split by source sentence: one source sentence (English, or the other language with
    # `reverse`) never lands in two splits
    sources = sorted({s for s, _ in pairs})
    order = np.random.default_rng(seed).permutation(len(sources))
    n_test = int(round(test_fraction * len(sources)))
    n_valid = int(round(valid_fraction * len(sources)))
    which = {}
    for rank, k in enumerate(order):
        which[sources[k]] = "test" if rank < n_test else (
            "valid" if rank < n_test + n_valid else "train")
    splits = {"train": [], "valid": [], "test": []}
    for p in pairs:
        splits[which[p[0]]].append(p)
    report.kept = len(pairs)
    corpus = Corpus(train=splits["train"], valid=splits["valid"], test=splits["test"],
                    info=dict(source=str(file), max_length=max_length, dedupe=dedupe,
                              seed=seed, reverse=reverse, lang=lang,
                              src_lang=src_lang, tgt_lang=tgt_lang, report=report))
    corpus.report = report
    return corpus
