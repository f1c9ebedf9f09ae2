"""Attention heatmaps, self-attention heads, the positional encoding and the causal mask."""
from __future__ import annotations

from typing import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from kerasattn.plots._base import DEFAULT_DPI, _finish, _is_cjk, _new_figure, label_font


# ---------------------------------------------------------------------------------------
# Attention heatmaps
# ---------------------------------------------------------------------------------------
def _tick_fontsize(panel_size: float, n_tokens: int) -> float:
    """Tick-label font size (points): 8, smaller when many tokens share a panel side (no
    less than 5), so neighbouring labels do not overlap."""
    return float(np.clip(0.8 * 72.0 * (panel_size - 1.2) / max(n_tokens, 1), 5.0, 8.0))


def _label_excess(tokens: Sequence[str], fontsize: float) -> float:
    """Inches by which the longest token label passes 0.9 inch (what a panel's margin
    holds, about 13 characters at 8 points), estimated at 0.62 em per character (1 em for
    a CJK character)."""
    ems = max((sum(1.0 if _is_cjk(ch) else 0.62 for ch in str(t)) for t in tokens),
              default=0.0)
    return max(0.0, ems * fontsize / 72.0 - 0.9)


def attention_heatmap(weights, src_tokens: Sequence[str], tgt_tokens: Sequence[str],
                      path=None, title: str | None = None, max_cols: int = 4,
                      panel_size: float | None = None, dpi: int = DEFAULT_DPI,
                      annotate: bool | None = None, xlabel: str = "source") -> Figure:
    """Heatmap of attention weights, rows = target tokens, columns = source tokens.

    Args:
        weights: array ``(T_q, T_k)`` (one map) or ``(h, T_q, T_k)`` (one panel per head).
            Extra rows/columns beyond the token lists (padding) are cut off.
        src_tokens: the ``T_k`` source tokens (x axis, columns).
        tgt_tokens: the ``T_q`` target tokens (y axis, rows), i.e. the token *generated* at
            each step.
        path: PNG output path, or None.
        title: figure title.
        max_cols: panels per row for multi-head maps.
        panel_size: inches per panel side (default grows with the token count).
        dpi: pixels per inch.
        annotate: write each weight in its cell (default: when the map is small).
        xlabel: x-axis label (e.g. "decoder input (earlier outputs)" for self-attention).

    Returns:
        The Figure.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 2:
        w = w[None]
    if w.ndim != 3:
        raise ValueError(f"attention_heatmap: `weights` must be (T_q, T_k) or (h, T_q, T_k); "
                         f"received shape {w.shape}")
    src_tokens, tgt_tokens = list(src_tokens), list(tgt_tokens)
    n_q, n_k = len(tgt_tokens), len(src_tokens)
    if n_q == 0 or n_k == 0:
        raise ValueError(f"attention_heatmap: need at least one source and one target token; "
                         f"received {n_k} source and {n_q} target tokens")
    if w.shape[1] < n_q or w.shape[2] < n_k:
        raise ValueError(f"attention_heatmap: `weights` shape {w.shape} is smaller than the "
                         f"token lists (T_q={n_q}, T_k={n_k})")
    w = w[:, :n_q, :n_k]
    heads = w.shape[0]
    cols = min(heads, max_cols)
    rows = int(np.ceil(heads / cols))
    if panel_size is None:
        panel_size = float(np.clip(0.35 * max(n_q, n_k) + 1.2, 2.6, 7.0))
    fontsize = _tick_fontsize(panel_size, max(n_q, n_k))
    # room for tick labels longer than the panel's margin holds: source
    # labels stand upright below each row of panels, target labels beside each panel
    extra_w = cols * _label_excess(tgt_tokens, fontsize)
    extra_h = rows * _label_excess(src_tokens, fontsize)
    fig = _new_figure((cols * panel_size + 0.8 + extra_w,
                       rows * panel_size + (0.5 if title else 0.1) + extra_h), dpi)
    if annotate is None:
        annotate = n_q * n_k <= 100 and heads <= 2
    axes = fig.subplots(rows, cols, squeeze=False)
    image = None
    for i, ax in enumerate(axes.flat):
        if i >= heads:
            ax.set_axis_off()
            continue
        image = ax.imshow(w[i], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_xticks(range(n_k), src_tokens, rotation=90, fontsize=fontsize,
                      **label_font(src_tokens))
        ax.set_yticks(range(n_q), tgt_tokens, fontsize=fontsize, **label_font(tgt_tokens))
        if heads > 1:
            ax.set_title(f"head {i + 1}", fontsize=9)
        if i % cols == 0:
            ax.set_ylabel("target (generated)")
        ax.set_xlabel(xlabel)
        if annotate:
            for r in range(n_q):
                for c in range(n_k):
                    ax.text(c, r, f"{w[i, r, c]:.2f}", ha="center", va="center", fontsize=6,
                            color="black" if w[i, r, c] > 0.6 else "white")
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


def self_attention_heads(weights, tokens: Sequence[str], path=None, title: str | None = None,
                         focus: int | str | None = None, max_cols: int = 4,
                         panel_size: float | None = None, vmax: float | None = None,
                         dpi: int = DEFAULT_DPI) -> Figure:
    """Every head of one self-attention layer over one sentence, one panel per head.

    Rows are the words being re-represented (queries), columns the words they read (keys);
    both are the same sentence. Optionally one query word is singled out: its row is
    outlined in every panel and its strongest key in each head is marked, the view of
    Vaswani et al. (2017), Figures 3 and 4, where heads follow a long-distance dependency
    or resolve a pronoun.

    Args:
        weights: array ``(h, T, T)``, or ``(1, h, T, T)`` (a batch of one). Rows and columns
            beyond the ``T`` tokens (padding) are cut off.
        tokens: the ``T`` tokens of the sentence.
        path: PNG output path, or None.
        title: figure title.
        focus: index or token of the query word to single out, or None.
        max_cols: panels per row.
        panel_size: inches per panel side (default grows with the sentence length).
        vmax: weight drawn in the brightest colour (default: the largest weight shown, so
            the spread-out weights of self-attention over a whole sentence stay visible;
            the colour bar says the scale).
        dpi: pixels per inch.

    Returns:
        The Figure.
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 4 and w.shape[0] == 1:
        w = w[0]
    if w.ndim != 3 or w.shape[1] != w.shape[2]:
        raise ValueError(f"self_attention_heads: `weights` must be (h, T, T) or (1, h, T, T); "
                         f"received shape {np.asarray(weights).shape}")
    tokens = list(tokens)
    n = len(tokens)
    if n == 0 or w.shape[1] < n:
        raise ValueError(f"self_attention_heads: need 1 to {w.shape[1]} tokens for weights of "
                         f"shape {w.shape}; received {n}")
    w = w[:, :n, :n]
    if isinstance(focus, str):
        if focus not in tokens:
            raise ValueError(f"self_attention_heads: `focus` must be one of the tokens "
                             f"{tokens}; received {focus!r}")
        focus = tokens.index(focus)
    if focus is not None and not 0 <= int(focus) < n:
        raise ValueError(f"self_attention_heads: `focus` must be an index in [0, {n}); "
                         f"received {focus!r}")
    if vmax is None:
        vmax = float(w.max()) if w.max() > 0 else 1.0
    heads = w.shape[0]
    cols = min(heads, max_cols)
    rows = int(np.ceil(heads / cols))
    if panel_size is None:
        panel_size = float(np.clip(0.3 * n + 1.2, 2.6, 6.0))
    fontsize = _tick_fontsize(panel_size, n)
    excess = _label_excess(tokens, fontsize)
    fig = _new_figure((cols * (panel_size + excess) + 0.8,
                       rows * (panel_size + excess) + (0.5 if title else 0.1)), dpi)
    axes = fig.subplots(rows, cols, squeeze=False)
    image = None
    for i, ax in enumerate(axes.flat):
        if i >= heads:
            ax.set_axis_off()
            continue
        image = ax.imshow(w[i], cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto")
        ax.set_xticks(range(n), tokens, rotation=90, fontsize=fontsize, **label_font(tokens))
        ax.set_yticks(range(n), tokens, fontsize=fontsize, **label_font(tokens))
        ax.set_title(f"head {i + 1}", fontsize=9)
        if i % cols == 0:
            ax.set_ylabel("query (word being encoded)")
        ax.set_xlabel("key (word attended to)")
        if focus is not None:
            f = int(focus)
            ax.add_patch(Rectangle((-0.5, f - 0.5), n, 1.0, fill=False, edgecolor="red",
                                   linewidth=1.5))
            j = int(np.argmax(w[i, f]))
            ax.plot([j], [f], marker="o", markersize=5, markerfacecolor="none",
                    markeredgecolor="white")
    if image is not None:
        fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


# ---------------------------------------------------------------------------------------
# Positional encoding and causal mask
# ---------------------------------------------------------------------------------------
def positional_encoding_figure(pe, path=None, title: str | None = None,
                               figsize=(8.0, 4.0), dpi: int = DEFAULT_DPI) -> Figure:
    """The positional-encoding matrix ``PE (T, d_model)`` as an image plus a few columns.

    Left: the whole matrix (positions down, dimensions across; even columns are
    ``sin(pos / 10000^(2i/d))``, odd columns the matching ``cos``). Right: four dimensions
    as curves over position, showing the wavelengths grow with the dimension index.

    Args:
        pe: array ``(T, d_model)``.
        path: PNG output path, or None.
        title: figure title.
        figsize: inches (width, height).
        dpi: pixels per inch.

    Returns:
        The Figure.
    """
    pe = np.asarray(pe, dtype=np.float64)
    if pe.ndim != 2:
        raise ValueError(f"positional_encoding_figure: `pe` must be (T, d_model); "
                         f"received shape {pe.shape}")
    length, d_model = pe.shape
    fig = _new_figure(figsize, dpi)
    ax_img, ax_lines = fig.subplots(1, 2, width_ratios=[1.3, 1.0])
    image = ax_img.imshow(pe, cmap="RdBu", vmin=-1, vmax=1, aspect="auto",
                          interpolation="nearest")
    ax_img.set_xlabel("column j (pair i = j // 2)")
    ax_img.set_ylabel("position pos")
    ax_img.set_title(f"PE matrix ({length} x {d_model})", fontsize=10)
    fig.colorbar(image, ax=ax_img, shrink=0.8)
    dims = sorted({0, 1, min(4, d_model - 1), min(d_model // 2, d_model - 1)})
    for d in dims:
        kind = "sin" if d % 2 == 0 else "cos"
        ax_lines.plot(np.arange(length), pe[:, d], label=f"dim {d} ({kind})")
    ax_lines.set_xlabel("position pos")
    ax_lines.set_ylabel("PE value")
    ax_lines.legend(fontsize=7, loc="lower left")
    ax_lines.set_title("columns as functions of position", fontsize=10)
    if title:
        fig.suptitle(title)
    return _finish(fig, path)


def causal_mask_figure(mask, tokens: Sequence[str] | None = None, path=None,
                       title: str | None = "causal mask: query i may see keys j <= i",
                       figsize=(4.4, 4.0), dpi: int = DEFAULT_DPI) -> Figure:
    """A small labelled boolean mask (the course notes' 4x4 example): 1 = may attend, 0 = blocked.

    Blocked cells are also labelled ``-inf``: the score added before the softmax.

    Args:
        mask: boolean/0-1 array ``(T_q, T_k)``, True = keep.
        tokens: labels for the positions (default ``pos 0 .. pos T-1``); used for both axes
            when the mask is square, otherwise for the query axis only.
        path: PNG output path, or None.
        title: figure title.
        figsize: inches (width, height).
        dpi: pixels per inch.

    Returns:
        The Figure.
    """
    m = np.asarray(mask).astype(bool)
    if m.ndim != 2:
        raise ValueError(f"causal_mask_figure: `mask` must be (T_q, T_k); received shape "
                         f"{m.shape}")
    n_q, n_k = m.shape
    q_labels = list(tokens) if tokens is not None else [f"pos {i}" for i in range(n_q)]
    k_labels = (list(tokens) if tokens is not None and n_q == n_k
                else [f"pos {j}" for j in range(n_k)])
    if len(q_labels) != n_q:
        raise ValueError(f"causal_mask_figure: `tokens` must have {n_q} entries; received "
                         f"{len(q_labels)}")
    fig = _new_figure(figsize, dpi)
    ax = fig.subplots()
    ax.imshow(m.astype(float), cmap="Greens", vmin=-0.2, vmax=2.0)
    for i in range(n_q):
        for j in range(n_k):
            ax.text(j, i, "1" if m[i, j] else "0\n(-inf)", ha="center", va="center",
                    fontsize=10 if m[i, j] else 8, color="black" if m[i, j] else "dimgray")
    # labels wider than a column stand upright so that neighbours do not overlap
    upright = max(len(str(label)) for label in k_labels) > 6
    ax.set_xticks(range(n_k), k_labels, rotation=90 if upright else 0,
                  **label_font(k_labels))
    ax.set_yticks(range(n_q), q_labels, **label_font(q_labels))
    ax.set_xlabel("key j (attended to)")
    ax.set_ylabel("query i (being computed)")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    if title:
        ax.set_title(title, fontsize=9, pad=28)
    return _finish(fig, path)
