"""Figures for the lessons: attention heatmaps, masks, encodings, curves, diagrams, tables.

Every function builds a :class:`matplotlib.figure.Figure`, saves it as a PNG when ``path``
is given, and returns the Figure, so a notebook cell shows it inline and a script leaves a
file behind. Figures are created with ``matplotlib.figure.Figure`` (not ``pyplot``): no GUI
window opens, nothing accumulates in pyplot's figure registry, saving works without a
display, and importing this module leaves matplotlib's backend choice alone.

PNG files are saved at exactly ``figsize * dpi`` pixels (no ``bbox_inches="tight"``); layout
uses matplotlib's constrained layout engine so labels still fit.

This module only draws: it takes NumPy arrays and plain Python data and imports no Keras
backend, so the lessons decide what to compute and the figures stay backend independent.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.ticker import MaxNLocator

DEFAULT_DPI = 100

__all__ = [
    "DEFAULT_DPI", "save_figure", "attention_heatmap", "self_attention_heads",
    "positional_encoding_figure",
    "causal_mask_figure", "training_curves", "bleu_vs_length", "architecture_diagram",
    "ARCHITECTURES", "evolution_table_figure", "evolution_table_markdown",
]


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


# ---------------------------------------------------------------------------------------
# Attention heatmaps
# ---------------------------------------------------------------------------------------
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
    fig = _new_figure((cols * panel_size + 0.8, rows * panel_size + (0.5 if title else 0.1)),
                      dpi)
    if annotate is None:
        annotate = n_q * n_k <= 100 and heads <= 2
    axes = fig.subplots(rows, cols, squeeze=False)
    image = None
    for i, ax in enumerate(axes.flat):
        if i >= heads:
            ax.set_axis_off()
            continue
        image = ax.imshow(w[i], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
        ax.set_xticks(range(n_k), src_tokens, rotation=90, fontsize=8)
        ax.set_yticks(range(n_q), tgt_tokens, fontsize=8)
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
    save_figure(fig, path)
    return fig


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
    fig = _new_figure((cols * panel_size + 0.8, rows * panel_size + (0.5 if title else 0.1)),
                      dpi)
    axes = fig.subplots(rows, cols, squeeze=False)
    image = None
    for i, ax in enumerate(axes.flat):
        if i >= heads:
            ax.set_axis_off()
            continue
        image = ax.imshow(w[i], cmap="viridis", vmin=0.0, vmax=vmax, aspect="auto")
        ax.set_xticks(range(n), tokens, rotation=90, fontsize=8)
        ax.set_yticks(range(n), tokens, fontsize=8)
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
    save_figure(fig, path)
    return fig


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
    ax_img.set_xlabel("dimension i of d_model")
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
    save_figure(fig, path)
    return fig


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
    ax.set_xticks(range(n_k), k_labels)
    ax.set_yticks(range(n_q), q_labels)
    ax.set_xlabel("key j (attended to)")
    ax.set_ylabel("query i (being computed)")
    ax.xaxis.set_label_position("top")
    ax.xaxis.tick_top()
    if title:
        ax.set_title(title, fontsize=9, pad=28)
    save_figure(fig, path)
    return fig


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
    save_figure(fig, path)
    return fig


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
    save_figure(fig, path)
    return fig


# ---------------------------------------------------------------------------------------
# Architecture diagrams
# ---------------------------------------------------------------------------------------
# Each diagram: an encoder column and a decoder column, listed bottom to top. A box is
# (label, kind); kinds pick colours. "repeat" = (first, last, text) brackets blocks that
# repeat N times. "memory" = index of the encoder box whose output the decoder reads,
# "reads" = decoder box indices that read it; "loop" = decoder boxes with a recurrence.
_COLORS = {
    "io": "#eeeeee", "embed": "#fde2c8", "rnn": "#c8e0fd", "attn": "#f9c9c9",
    "norm": "#fff3b0", "ffn": "#d4f0c8", "out": "#e3d4f5", "pe": "#ffffff",
}

ARCHITECTURES: dict[str, dict] = {
    "seq2seq": dict(
        title="seq2seq: GRU encoder-decoder with one fixed context vector",
        encoder=[("source tokens x_1..x_S", "io"), ("Embedding", "embed"),
                 ("GRU encoder", "rnn"), ("final state c = h_S\n(the bottleneck)", "rnn")],
        decoder=[("y_{t-1} (teacher forcing)", "io"), ("Embedding", "embed"),
                 ("GRU decoder\ns_0 = c, s_t = GRU(s_{t-1}, y_{t-1})", "rnn"),
                 ("Dense -> logits p(y_t)", "out")],
        memory=3, reads=[2], memory_label="c (one vector)", loop=[2]),
    "bahdanau": dict(
        title="bahdanau: additive attention inside the recurrence",
        encoder=[("source tokens x_1..x_S", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU\nh_j = [fwd h_j; bwd h_j]", "rnn")],
        decoder=[("y_{t-1}", "io"), ("Embedding", "embed"),
                 ("additive score e_tj = v^T tanh(W s_{t-1} + U h_j)\n"
                  "a_t = softmax(e_t), c_t = sum_j a_tj h_j", "attn"),
                 ("GRU step s_t = f(s_{t-1}, [y_{t-1}; c_t])", "rnn"),
                 ("Dense -> logits p(y_t)", "out")],
        memory=2, reads=[2], memory_label="h_1..h_S", loop=[3]),
    "bahdanau_multihead": dict(
        title="step 1: Bahdanau decoder with multi-head attention",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU -> H_enc", "rnn")],
        decoder=[("y_{t-1}", "io"), ("Embedding", "embed"),
                 ("query s_{t-1} -> split into h heads\n(B, d) -> (B, h, 1, d_h)", "attn"),
                 ("head_i = softmax(Q_i K_i^T / sqrt(d_h)) V_i\nin parallel over heads",
                  "attn"),
                 ("concat heads, W_o -> context c_t", "attn"),
                 ("GRU step on [y_{t-1}; c_t]", "rnn"), ("Dense -> logits", "out")],
        memory=2, reads=[3], memory_label="K_i, V_i from H_enc", loop=[5]),
    "encoder_self_attention": dict(
        title="step 2: GRU encoder + self-attention block",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU -> H", "rnn"),
                 ("Z = LayerNorm(H + MHA(H, H, H, pad mask))", "attn"),
                 ("H' = LayerNorm(Z + FFN(Z))", "ffn")],
        decoder=[("y_{t-1}", "io"), ("Embedding", "embed"),
                 ("attention over H' (query s_{t-1})", "attn"),
                 ("GRU step on [y_{t-1}; c_t]", "rnn"), ("Dense -> logits", "out")],
        memory=4, reads=[2], memory_label="H'", loop=[3], repeat=("enc", 3, 4, "x N")),
    "decoder_self_attention": dict(
        title="step 3: decoder masked self-attention + cross-attention, then GRU",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU -> H_enc", "rnn")],
        decoder=[("y_{<t} (shifted right)", "io"), ("Embedding -> X", "embed"),
                 ("Y = LayerNorm(X + MHA(X, X, X, M_causal))", "attn"),
                 ("Z = LayerNorm(Y + MHA(Y, H_enc, H_enc))", "attn"),
                 ("GRU over Z (unrolled over t)", "rnn"), ("Dense -> logits", "out")],
        memory=2, reads=[3], memory_label="H_enc", loop=[4]),
    "transformer_decoder_on_gru": dict(
        title="step 4: Transformer decoder stack on a GRU encoder",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU -> H_enc", "rnn")],
        decoder=[("y_{<t} (shifted right)", "io"), ("Embedding", "embed"),
                 ("+ positional encoding", "pe"),
                 ("Y1 = AddNorm(X, MHA_mask(X, X, X))", "attn"),
                 ("Y2 = AddNorm(Y1, MHA(Y1, H_enc, H_enc))", "attn"),
                 ("Z = AddNorm(Y2, FFN(Y2))", "ffn"), ("Dense -> logits", "out")],
        memory=2, reads=[4], memory_label="H_enc (K/V cached once)",
        repeat=("dec", 3, 5, "x N")),
    "transformer": dict(
        title="step 5: the full Transformer",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("+ positional encoding", "pe"),
                 ("AddNorm(X, MHA(X, X, X, pad mask))", "attn"),
                 ("AddNorm(Z, FFN(Z))", "ffn")],
        decoder=[("y_{<t} (shifted right)", "io"), ("Embedding", "embed"),
                 ("+ positional encoding", "pe"),
                 ("AddNorm(X, MHA_mask(X, X, X))", "attn"),
                 ("AddNorm(Y1, MHA(Y1, H_enc, H_enc))", "attn"),
                 ("AddNorm(Y2, FFN(Y2))", "ffn"), ("Dense -> logits", "out")],
        memory=4, reads=[4], memory_label="H_enc", repeat=[("enc", 3, 4, "x N"),
                                                            ("dec", 3, 5, "x N")]),
}


def architecture_diagram(name: str, path=None, figsize=(9.0, 6.0),
                         dpi: int = DEFAULT_DPI) -> Figure:
    """Boxes-and-arrows diagram of one of the seven models (encoder left, decoder right).

    Follows the course notes' diagrams: where attention sits, what the decoder reads from the
    encoder, which blocks repeat, where positional encodings are added.

    Args:
        name: one of :data:`ARCHITECTURES` (the seven model names).
        path: PNG output path, or None.
        figsize: inches (width, height).
        dpi: pixels per inch.

    Returns:
        The Figure.
    """
    if name not in ARCHITECTURES:
        raise ValueError(f"architecture_diagram: unknown model name {name!r}; expected one of "
                         f"{sorted(ARCHITECTURES)}")
    spec = ARCHITECTURES[name]
    fig = _new_figure(figsize, dpi)
    ax = fig.subplots()
    ax.set_xlim(0, 10)
    n_rows = max(len(spec["encoder"]), len(spec["decoder"]))
    ax.set_ylim(-0.3, n_rows + 0.2)
    ax.set_axis_off()
    box_w, box_h = 3.9, 0.62
    centers = {"enc": 2.4, "dec": 7.4}

    def draw_column(side):
        boxes = spec["encoder" if side == "enc" else "decoder"]
        positions = []
        for i, (label, kind) in enumerate(boxes):
            x, y = centers[side], i + 0.3
            ax.add_patch(FancyBboxPatch((x - box_w / 2, y - box_h / 2), box_w, box_h,
                                        boxstyle="round,pad=0.02,rounding_size=0.08",
                                        facecolor=_COLORS[kind], edgecolor="black",
                                        linewidth=0.8,
                                        linestyle="--" if kind == "pe" else "-"))
            ax.text(x, y, label, ha="center", va="center", fontsize=7.5)
            if i > 0:
                ax.add_patch(FancyArrowPatch((x, y - 1 + box_h / 2), (x, y - box_h / 2),
                                             arrowstyle="-|>", mutation_scale=10, lw=0.8))
            positions.append((x, y))
        return positions

    enc_pos = draw_column("enc")
    dec_pos = draw_column("dec")
    ax.text(centers["enc"], n_rows - 0.05, "encoder", ha="center", fontsize=10,
            fontweight="bold")
    ax.text(centers["dec"], n_rows - 0.05, "decoder", ha="center", fontsize=10,
            fontweight="bold")
    mx, my = enc_pos[spec["memory"]]
    for r in spec["reads"]:
        dx, dy = dec_pos[r]
        ax.add_patch(FancyArrowPatch((mx + box_w / 2, my), (dx - box_w / 2, dy),
                                     arrowstyle="-|>", mutation_scale=12, lw=1.4,
                                     color="firebrick", connectionstyle="arc3,rad=-0.15"))
        ax.text((mx + dx) / 2, (my + dy) / 2 + 0.28, spec["memory_label"], ha="center",
                fontsize=7.5, color="firebrick")
    for r in spec.get("loop", []):
        dx, dy = dec_pos[r]
        ax.add_patch(FancyArrowPatch((dx + box_w / 2, dy + 0.12), (dx + box_w / 2, dy - 0.12),
                                     arrowstyle="-|>", mutation_scale=9, lw=1.0,
                                     color="navy", connectionstyle="arc3,rad=-2.2"))
        ax.text(dx + box_w / 2 + 0.42, dy, "s_{t-1}", fontsize=7, color="navy", va="center")
    repeats = spec.get("repeat", [])
    if repeats and isinstance(repeats, tuple):
        repeats = [repeats]
    for side, first, last, text in repeats:
        pos = enc_pos if side == "enc" else dec_pos
        x0 = pos[first][0] - box_w / 2 - 0.15
        y0, y1 = pos[first][1] - box_h / 2 - 0.1, pos[last][1] + box_h / 2 + 0.1
        ax.add_patch(FancyBboxPatch((x0, y0), box_w + 0.3, y1 - y0,
                                    boxstyle="round,pad=0.0,rounding_size=0.1",
                                    facecolor="none", edgecolor="gray", lw=1.0, ls=":"))
        tx = x0 - 0.1 if side == "enc" else x0 + box_w + 0.4
        ax.text(tx, (y0 + y1) / 2, text, ha="right" if side == "enc" else "left",
                va="center", fontsize=9, color="gray")
    ax.set_title(spec["title"], fontsize=11)
    save_figure(fig, path)
    return fig


# ---------------------------------------------------------------------------------------
# The evolution table
# ---------------------------------------------------------------------------------------
_TABLE_COLUMNS = (
    ("model", "model", "{}"),
    ("params", "parameters", "{:,}"),
    ("train_seconds", "train time (s)", "{:.1f}"),
    ("tokens_per_second", "tokens/s", "{:,.0f}"),
    ("bleu", "BLEU", "{:.1f}"),
    ("exact_match", "exact match", "{:.1%}"),
)


def _table_cells(rows: Sequence[Mapping]) -> tuple[list[str], list[list[str]]]:
    cols = [c for c in _TABLE_COLUMNS if any(c[0] in r for r in rows)]
    header = [c[1] for c in cols]
    body = []
    for r in rows:
        cells = []
        for key, _, fmt in cols:
            v = r.get(key)
            cells.append("-" if v is None else fmt.format(v))
        body.append(cells)
    return header, body


def evolution_table_markdown(rows: Sequence[Mapping]) -> str:
    """The evolution table as a Markdown pipe table.

    Args:
        rows: one dict per model with keys among ``model, params, train_seconds,
            tokens_per_second, bleu, exact_match`` (missing -> ``-``).

    Returns:
        The Markdown text (header, separator, one line per model).
    """
    if not rows:
        raise ValueError("evolution_table_markdown: `rows` is empty")
    header, body = _table_cells(rows)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join([":---"] + ["---:"] * (len(header) - 1)) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines) + "\n"


def evolution_table_figure(rows: Sequence[Mapping], path=None,
                           title: str | None = "From Bahdanau to the Transformer: "
                                               "same data, same budget",
                           figsize=(9.0, 3.2), dpi: int = DEFAULT_DPI) -> Figure:
    """The evolution table drawn as a figure (same columns as the Markdown version).

    Args:
        rows: see :func:`evolution_table_markdown`.
        path: PNG output path, or None.
        title: figure title.
        figsize: inches (width, height).
        dpi: pixels per inch.

    Returns:
        The Figure.
    """
    if not rows:
        raise ValueError("evolution_table_figure: `rows` is empty")
    header, body = _table_cells(rows)
    fig = _new_figure(figsize, dpi)
    ax = fig.subplots()
    ax.set_axis_off()
    table = ax.table(cellText=body, colLabels=header, loc="center", cellLoc="right",
                     colLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.scale(1.0, 1.4)
    for (r, c), cell in table.get_celld().items():
        if r == 0:
            cell.set_facecolor("#dde6f3")
            cell.set_text_props(fontweight="bold")
        if c == 0:
            cell.set_text_props(ha="left")
    if title:
        ax.set_title(title, fontsize=11)
    save_figure(fig, path)
    return fig
