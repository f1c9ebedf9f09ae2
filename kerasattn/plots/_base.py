"""What every figure shares: the Figure factory, PNG saving, fonts for token labels."""
from __future__ import annotations

import os
import textwrap
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.text import Text

DEFAULT_DPI = 100

#: Pixels :func:`fit_text` leaves between a title it wraps, or a text it makes room for,
#: and the figure's edge.
EDGE_PAD = 4
#: Smallest font size (points) a title is shrunk to when one of its words is wider than
#: the room it has.
MIN_TITLE_FONTSIZE = 6.0

def save_figure(fig: Figure, path: str | os.PathLike | None) -> Path | None:
    """Save ``fig`` as a PNG at ``fig.dpi`` (parent folders created); return the path.

    Args:
        fig: the figure to save.
        path: output file (``.png`` appended when it has no suffix) or None (no file).

    Returns:
        The saved path, or None when ``path`` is None.
    """
    if path is None:
        return None
    path = Path(path)
    if path.suffix == "":
        path = path.with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=fig.dpi, format="png")
    return path


def _new_figure(figsize: tuple[float, float], dpi: int) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)     # a canvas that draws: text is measured with it (fit_text)
    fig.set_layout_engine("constrained")
    return fig


def _finish(fig: Figure, path) -> Figure:
    """Fit the figure's text inside it (:func:`fit_text`), then save it when ``path``."""
    fit_text(fig)
    save_figure(fig, path)
    return fig


# ---------------------------------------------------------------------------------------
# Text that fits
# ---------------------------------------------------------------------------------------
def drawn_texts(fig: Figure) -> list[Text]:
    """The text artists a draw of ``fig`` shows (visible, not empty).

    Figure texts (the suptitle among them) and legends; per visible axes its titles, texts,
    legend and table cells and, when its axis lines are on, the axis labels and the tick
    labels of the ticks inside the view limits (those are the ticks matplotlib draws).
    """
    found: list[Text] = list(fig.texts)
    for legend in fig.legends:
        found += legend.get_texts()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        found += [ax.title, ax._left_title, ax._right_title, *ax.texts]
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            found += [legend.get_title(), *legend.get_texts()]
        for table in ax.tables:
            found += [cell.get_text() for cell in table.get_celld().values()]
        if not ax.axison:
            continue
        for axis in (ax.xaxis, ax.yaxis):
            if not axis.get_visible():
                continue
            found += [axis.label, axis.offsetText]
            for tick in axis._update_ticks():      # the ticks a draw shows
                found += [tick.label1, tick.label2]
    return [t for t in found if t.get_visible() and t.get_text().strip()]


def _overflow(fig: Figure, renderer) -> tuple[float, float, float, float]:
    """Pixels by which the drawn texts pass the figure's (left, right, bottom, top) edges."""
    width, height = fig.bbox.width, fig.bbox.height
    left = right = bottom = top = 0.0
    for text in drawn_texts(fig):
        box = text.get_window_extent(renderer)
        left, right = max(left, -box.x0), max(right, box.x1 - width)
        bottom, top = max(bottom, -box.y0), max(top, box.y1 - height)
    return left, right, bottom, top


def _titles(fig: Figure) -> list[tuple[Text, object]]:
    """The titles to wrap: the suptitle (room: the figure) and each axes' centre title
    (room: its axes, at least half the figure)."""
    found = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text().strip():
        found.append((suptitle, None))
    for ax in fig.axes:
        if ax.get_visible() and ax.title.get_text().strip():
            found.append((ax.title, ax))
    return found


def _width(text: Text, renderer) -> float:
    return text.get_window_extent(renderer).width


def wrap_text(text: Text, max_width: float, renderer,
              min_fontsize: float = MIN_TITLE_FONTSIZE) -> int:
    """Break ``text`` into lines (at spaces) no wider than ``max_width`` pixels.

    When one word alone is wider, the font shrinks (down to ``min_fontsize``) and, past
    that, the word is broken. Text holding mathtext (``$``) is only shrunk. Returns the
    number of lines added.

    Args:
        text: the artist, changed in place.
        max_width: the room, in display pixels.
        renderer: the figure's renderer (``fig.canvas.get_renderer()``).
        min_fontsize: the smallest font size, in points.
    """
    if _width(text, renderer) <= max_width:
        return 0
    original = text.get_text()
    lines_before = original.count("\n") + 1
    if "$" not in original:
        paragraphs = original.split("\n")
        longest = max(len(p) for p in paragraphs)
        chars = int(longest * max_width / _width(text, renderer))
        while chars >= 8:
            text.set_text("\n".join(textwrap.fill(p, chars, break_long_words=False)
                                    for p in paragraphs))
            if _width(text, renderer) <= max_width:
                return text.get_text().count("\n") + 1 - lines_before
            chars -= 1
        chars = max(8, chars)
    while text.get_fontsize() > min_fontsize and _width(text, renderer) > max_width:
        text.set_fontsize(max(min_fontsize, text.get_fontsize() * 0.9))
    if _width(text, renderer) > max_width and "$" not in original:
        while chars > 1 and _width(text, renderer) > max_width:
            text.set_text("\n".join(textwrap.fill(p, chars, break_long_words=True)
                                    for p in original.split("\n")))
            chars -= 1
    return text.get_text().count("\n") + 1 - lines_before


def fit_text(fig: Figure, rounds: int = 5) -> Figure:
    """Make every drawn text of ``fig`` lie inside it.

    Titles wider than their room wrap (or shrink, see :func:`wrap_text`) and the figure
    grows by the height of the lines added; any text still past an edge (long tick labels,
    labels beside a diagram) makes the figure grow by the overflow, and the constrained
    layout places everything again. A figure whose text already fits keeps its size.

    Args:
        fig: a figure made with a drawing canvas (every figure of :mod:`kerasattn.plots`).
        rounds: layout passes at most.

    Returns:
        ``fig``.
    """
    canvas = fig.canvas
    if not hasattr(canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(fig)
    for _ in range(rounds):
        with warnings.catch_warnings():   # saving the figure warns of a missing glyph
            warnings.filterwarnings("ignore", message="Glyph .* missing from font")
            canvas.draw()
        renderer = canvas.get_renderer()
        width = fig.bbox.width
        added = 0.0
        for title, ax in _titles(fig):
            if ax is None:
                room = width - 2 * EDGE_PAD
            else:
                box, own = ax.get_window_extent(renderer), title.get_window_extent(renderer)
                centre = (own.x0 + own.x1) / 2
                room = min(max(box.width, width / 2),
                           2 * min(centre, width - centre) - 2 * EDGE_PAD)
            lines = wrap_text(title, room, renderer)
            if lines:
                added = max(added, lines * title.get_fontsize() * 1.25 / 72.0)
        if added:
            w, h = fig.get_size_inches()
            fig.set_size_inches(w, h + added)
            continue
        left, right, bottom, top = _overflow(fig, renderer)
        if max(left, right, bottom, top) <= 0.0:
            break
        w, h = fig.get_size_inches()
        grow_w = left + right + (2 * EDGE_PAD if left + right > 0 else 0)
        grow_h = bottom + top + (2 * EDGE_PAD if bottom + top > 0 else 0)
        fig.set_size_inches(w + grow_w / fig.dpi, h + grow_h / fig.dpi)
    # whole pixels, so the saved PNG is exactly figsize * dpi
    w, h = fig.get_size_inches() * fig.dpi
    if abs(w - round(w)) > 1e-6 or abs(h - round(h)) > 1e-6:
        fig.set_size_inches(np.ceil(w - 1e-6) / fig.dpi, np.ceil(h - 1e-6) / fig.dpi)
    return fig


#: Fonts with Japanese / Chinese / Korean glyphs, in order of preference. Matplotlib's
#: default font (DejaVu Sans) has none, so such labels would draw as empty boxes.
CJK_FONTS = ("Noto Sans CJK JP", "Noto Sans JP", "Noto Sans CJK SC", "Source Han Sans JP",
             "Source Han Sans", "IPAexGothic", "IPAGothic", "TakaoGothic", "VL Gothic",
             "Hiragino Sans", "Hiragino Maru Gothic Pro", "Yu Gothic", "MS Gothic",
             "Meiryo", "Microsoft YaHei", "SimHei", "WenQuanYi Zen Hei", "Droid Sans Fallback",
             "Arial Unicode MS")
_warned_no_cjk = False


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF
            or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF or 0xAC00 <= o <= 0xD7AF
            or 0x3000 <= o <= 0x303F)


def cjk_font(available: Sequence[str] | None = None) -> str | None:
    """The first installed font of :data:`CJK_FONTS`, or None.

    Args:
        available: font family names to choose from (default: the fonts matplotlib finds
            on this machine).
    """
    if available is None:
        from matplotlib import font_manager

        available = {f.name for f in font_manager.fontManager.ttflist}
    available = set(available)
    return next((name for name in CJK_FONTS if name in available), None)


def label_font(labels: Sequence[str], available: Sequence[str] | None = None) -> dict:
    """Font keyword arguments for tick labels: a CJK font when a label needs one.

    Returns ``{}`` for labels matplotlib's default font draws, ``{"fontfamily": [font,
    "DejaVu Sans"]}`` when a label holds CJK characters and a CJK font is installed, and
    ``{}`` with a one-time warning naming the fonts to install otherwise.
    """
    global _warned_no_cjk
    if not any(_is_cjk(ch) for label in labels for ch in str(label)):
        return {}
    font = cjk_font(available)
    if font is not None:
        return {"fontfamily": [font, "DejaVu Sans"]}
    if not _warned_no_cjk:
        _warned_no_cjk = True
        warnings.warn("the figure's labels hold Japanese/Chinese/Korean characters and no "
                      "font with those glyphs is installed, so they draw as boxes; install "
                      "one (for example `apt install fonts-noto-cjk`) and restart Python",
                      stacklevel=3)
    return {}
