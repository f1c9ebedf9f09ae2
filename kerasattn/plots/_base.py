"""What every figure shares: the Figure factory, PNG saving, fonts for token labels."""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Sequence

from matplotlib.figure import Figure

DEFAULT_DPI = 100

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
    fig = Figure(figsize=figsize, dpi=dpi)
    fig.set_layout_engine("constrained")
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
