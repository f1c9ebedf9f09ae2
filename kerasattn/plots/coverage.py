"""Coverage: how much attention each source word received over a whole translation."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from kerasattn.plots._base import DEFAULT_DPI, _finish, _new_figure, label_font


def cumulative_attention(series: Mapping[str, Sequence[float]], src_tokens: Sequence[str],
                         path=None, title: str | None = None, low: float = 0.5,
                         high: float = 1.5, figsize=None, dpi: int = DEFAULT_DPI) -> Figure:
    """Bars of the cumulative attention ``sum_t alpha_tj`` per source word, one colour per
    model.

    A source word translated once by one target word gets a total near 1; a total well
    below 1 means the word was (nearly) never read, a likely drop; well above 1, read again
    and again, a likely repetition. Dashed lines mark ``low`` and ``high``.

    Args:
        series: ``{model label: (S,) cumulative attention}``.
        src_tokens: the ``S`` source tokens (x axis).
        path: PNG output path, or None.
        title: figure title.
        low, high: the thresholds drawn (and counted by the lesson).
        figsize: inches (default: wide enough for the tokens).
        dpi: pixels per inch.

    Returns:
        The Figure.
    """
    if not series:
        raise ValueError("cumulative_attention: `series` is empty; expected at least one "
                         "model")
    n = len(src_tokens)
    for label, values in series.items():
        if len(values) != n:
            raise ValueError(f"cumulative_attention: series[{label!r}] has {len(values)} "
                             f"values; expected one per source token ({n})")
    figsize = figsize or (max(6.0, 0.32 * n + 2.0), 4.4)
    fig = _new_figure(figsize, dpi)
    ax = fig.subplots()
    x = np.arange(n)
    width = 0.8 / len(series)
    for i, (label, values) in enumerate(series.items()):
        ax.bar(x + (i - (len(series) - 1) / 2) * width, np.asarray(values, dtype=float),
               width=width, label=label)
    for level in (low, 1.0, high):
        ax.axhline(level, color="black" if level == 1.0 else "grey",
                   linestyle="-" if level == 1.0 else "--", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(list(src_tokens), rotation=90, **label_font(src_tokens))
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_xlabel("source token")
    ax.set_ylabel("sum over the output of alpha_tj")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return _finish(fig, path)
