"""The explorer page: one self-contained HTML file.

The page holds its data and its code: an :class:`~kerasattn.explore.record.AttentionRecord`
as JSON, and the hand-written script and style sheet next to this module
(``explorer.js``, ``explorer.css``), inlined. It loads nothing (no CDN, no font, no
image), so it opens by double-click, offline, and inside a Jupyter or Colab output cell.

Every weight is stored as a 24-bit fixed-point number ``round(w * (2^24 - 1))``, three
bytes, base64-encoded (four characters a weight): the page shows each weight within
``3e-8`` of the model's. The decoder's self-attention is stored as its lower triangle
only (a step sees no later position). On the two-layer Transformer a greedy translation of
31 tokens makes a page of about 120 kB, one at the 64-token output cap about 200 kB, and
beam 4 with every hypothesis about 275 kB (``benchmarks/bench_explorer.py``).
"""
from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import numpy as np

__all__ = ["ExplorerPage", "render", "page_data", "pack", "unpack", "SCALE"]

#: Weights are stored as ``round(w * SCALE)`` in three bytes.
SCALE = 2 ** 24 - 1
_HERE = Path(__file__).parent


def pack(weights) -> str:
    """Weights in ``[0, 1]`` as base64 of 3-byte big-endian integers ``round(w * SCALE)``."""
    w = np.nan_to_num(np.asarray(weights, dtype=np.float64).ravel(), nan=0.0)
    q = np.rint(np.clip(w, 0.0, 1.0) * SCALE).astype(">u4")
    return base64.b64encode(q.view(np.uint8).reshape(-1, 4)[:, 1:].tobytes()).decode("ascii")


def unpack(text: str) -> np.ndarray:
    """The inverse of :func:`pack` (what the page's script computes), float64."""
    b = np.frombuffer(base64.b64decode(text), dtype=np.uint8).reshape(-1, 3).astype(np.int64)
    return ((b[:, 0] << 16) | (b[:, 1] << 8) | b[:, 2]) / SCALE


def _tokens(tokens) -> list:
    return [str(t) for t in tokens]


def _hypothesis(t) -> dict:
    """One hypothesis: its tokens, scores and attention, laid out for the page.

    ``cross`` is stored as ``(L, h, T, S)``, ``self`` as the lower triangles of
    ``(L, h, T, T)`` (row ``i`` holds ``i + 1`` weights).
    """
    out = dict(tokens=_tokens(t.target_tokens), text=t.text, score=float(t.score))
    attention = t.attention or {}
    if attention.get("cross") is not None:
        a = np.transpose(np.asarray(attention["cross"], np.float32), (1, 2, 0, 3))
        out["cross"] = dict(layers=a.shape[0], heads=a.shape[1], data=pack(a))
    if attention.get("self") is not None:
        a = np.transpose(np.asarray(attention["self"], np.float32), (1, 2, 0, 3))
        rows, cols = np.tril_indices(a.shape[2])
        out["self"] = dict(layers=a.shape[0], heads=a.shape[1], data=pack(a[..., rows, cols]))
    return out


def page_data(record) -> dict:
    """The JSON the page reads (see :func:`_hypothesis` for the attention layout)."""
    data = dict(version=1, scale=SCALE, model=record.model, backend=record.backend,
                source=record.source, source_tokens=_tokens(record.source_tokens),
                subword=dict(source=record.source_subword, target=record.target_subword),
                unknown=list(record.unknown), beam=record.beam,
                coverage_in_score=bool(record.coverage_in_score),
                hypotheses=[_hypothesis(t) for t in record.hypotheses], steps=None,
                encoder=None)
    if record.encoder is not None:
        e = np.asarray(record.encoder, np.float32)
        data["encoder"] = dict(layers=e.shape[0], heads=e.shape[1], data=pack(e))
    if record.steps is not None:
        data["steps"] = [[dict(tokens=_tokens(h["target_tokens"]),
                               log_prob=round(float(h["log_prob"]), 6),
                               score=round(float(h["score"]), 6), finished=bool(h["finished"]))
                          for h in kept] for kept in record.steps]
    return data


def _asset(name: str) -> str:
    return (_HERE / name).read_text(encoding="utf-8")


def _escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def render(record) -> "ExplorerPage":
    """The explorer page of ``record`` (an :class:`AttentionRecord`)."""
    data = json.dumps(page_data(record), ensure_ascii=False, separators=(",", ":"))
    uid = hashlib.sha1(data.encode("utf-8")).hexdigest()[:12]
    data = data.replace("</", "<\\/")        # the JSON cannot close its <script> element
    fragment = (f'<div class="kae" id="kae-{uid}">\n<style>\n{_asset("explorer.css")}</style>\n'
                f'<script type="application/json" class="kae-data">{data}</script>\n'
                f'<noscript>The attention explorer needs JavaScript.</noscript>\n'
                f'<script>\n{_asset("explorer.js")}</script>\n</div>\n')
    title = _escape(f"{record.model}: {record.source}")
    return ExplorerPage(fragment, title)


class ExplorerPage:
    """One explorer page: ``html`` (the whole document), ``fragment`` (its ``<div>``, what
    a notebook shows inline), :meth:`save`.

    In a notebook the page is shown inline when it is a cell's value (``_repr_html_``), or
    with ``IPython.display.HTML(page.fragment)``.
    """

    def __init__(self, fragment: str, title: str):
        self.fragment = fragment
        self.title = title

    @property
    def html(self) -> str:
        """The self-contained HTML document."""
        return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                f'<title>attention explorer: {self.title}</title>\n'
                f'<style>body{{margin:12px}}</style>\n</head>\n<body>\n'
                f'{self.fragment}</body>\n</html>\n')

    def _repr_html_(self) -> str:
        return self.fragment

    def __len__(self) -> int:
        """The document's size in bytes (UTF-8)."""
        return len(self.html.encode("utf-8"))

    def save(self, path) -> str:
        """Write the document to ``path`` (atomically; the directory is created);
        returns the path."""
        from kerasattn.files import atomic_write

        path = os.fspath(path)

        def write(tmp):
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(self.html)

        atomic_write(path, write)
        return path
