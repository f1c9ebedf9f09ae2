"""Training curves and BLEU by sentence length."""
from __future__ import annotations

from typing import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from kerasattn.plots._base import DEFAULT_DPI, _finish, _new_figure


# ---------------------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------------------
def training_curves(histories: Mapping[str, Mapping[str, Sequence[float]]], path=None,
                    metric: str = "loss", title: str | None = None,
                    figsize=(9.0, 3.6), dpi: int = DEFAULT_DPI) -> Figure:
    """Training and validation curves of several models side by side.

    Args:
        histories: ``{model name: history dict}``; each history has ``metric`` and
            ``"val_" + metric`` lists (a ``keras.callbacks.History.history`` works).
        path: PNG output path, or None.
        metric: which key to draw (``"loss"`` by default).
        title: figure title.
        figsize: inches (width, height).
        dpi: pixels per inch.

    Returns:
        The Figure.
    """
    if not histories:
        raise ValueError("training_curves: `histories` is empty; expected at least one model")
    fig = _new_figure(figsize, dpi)
    ax_train, ax_val = fig.subplots(1, 2, sharey=True)
    for name, hist in histories.items():
        train = list(hist.get(metric, []))
        val = list(hist.get("val_" + metric, []))
        if train:
            line, = ax_train.plot(range(1, len(train) + 1), train, marker=".", label=name)
            if val:
                ax_val.plot(range(1, len(val) + 1), val, marker=".", label=name,
                            color=line.get_color())
        elif val:
            ax_val.plot(range(1, len(val) + 1), val, marker=".", label=name)
    for ax, which in ((ax_train, "training"), (ax_val, "validation")):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(f"{which} {metric}", fontsize=10)
        ax.set_xlabel("epoch")
        ax.grid(alpha=0.3)
    ax_train.set_ylabel(metric)
    ax_train.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


def _as_pairs(values) -> tuple[list, list[float]]:
    if isinstance(values, Mapping):
        items = list(values.items())
    else:
        items = [tuple(v)[:2] for v in values]
    labels = [str(k) for k, _ in items]
    scores = [float("nan") if v is None else float(v) for _, v in items]
    return labels, scores


def bleu_vs_length(results: Mapping[str, object], path=None,
                   title: str | None = "BLEU against source sentence length",
                   counts: Sequence[int] | None = None, figsize=(6.4, 4.0),
                   dpi: int = DEFAULT_DPI) -> Figure:
    """BLEU per source-length bucket, one line per model (the shape of Bahdanau's Fig. 2).

    Args:
        results: ``{model name: {bucket label: BLEU}}`` or ``{name: [(label, BLEU), ...]}``;
            every model must use the same buckets in the same order. A None/NaN BLEU (an
            empty bucket) leaves a gap.
        path: PNG output path, or None.
        title: figure title.
        counts: optional test sentences per bucket, shown under the bucket labels.
        figsize: inches (width, height).
        dpi: pixels per inch.

    Returns:
        The Figure.
    """
    if not results:
        raise ValueError("bleu_vs_length: `results` is empty; expected at least one model")
    fig = _new_figure(figsize, dpi)
    ax = fig.subplots()
    labels0 = None
    markers = "osD^v<>"
    for k, (name, values) in enumerate(results.items()):
        labels, scores = _as_pairs(values)
        if labels0 is None:
            labels0 = labels
        elif labels != labels0:
            raise ValueError(f"bleu_vs_length: model {name!r} uses buckets {labels}; "
                             f"expected the same buckets as the first model {labels0}")
        ax.plot(range(len(labels)), scores, marker=markers[k % len(markers)], label=name)
    ticks = list(labels0)
    if counts is not None:
        ticks = [f"{t}\n(n={c})" for t, c in zip(ticks, counts)]
    ax.set_xticks(range(len(ticks)), ticks, fontsize=8)
    ax.set_xlabel("source length (tokens)")
    ax.set_ylabel("BLEU")
    ax.set_ylim(0, 105)
    ax.grid(alpha=0.3)
    ax.legend()
    if title:
        ax.set_title(title, fontsize=10)
    return _finish(fig, path)
