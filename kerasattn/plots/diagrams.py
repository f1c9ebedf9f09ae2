"""Architecture diagrams of the seven models and the evolution table."""
from __future__ import annotations

from typing import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from kerasattn.plots._base import DEFAULT_DPI, _finish, _new_figure

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
                 ("GRU decoder\ns_0 = tanh(W_b c), s_t = GRU([y_{t-1}; c], s_{t-1})", "rnn"),
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
                 ("Dense on [s_t; c_t] -> logits p(y_t)", "out")],
        memory=2, reads=[2], memory_label="h_1..h_S", loop=[3]),
    "bahdanau_multihead": dict(
        title="step 1: Bahdanau decoder with multi-head attention",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU -> H_enc", "rnn")],
        decoder=[("y_{t-1}", "io"), ("Embedding", "embed"),
                 ("Q = s_{t-1} W_q, split into h heads\n(B, d_model) -> (B, h, 1, d_h)",
                  "attn"),
                 ("head_i = softmax(Q_i K_i^T / sqrt(d_h)) V_i\nin parallel over heads",
                  "attn"),
                 ("concat heads, W_o -> context c_t", "attn"),
                 ("GRU step on [y_{t-1}; c_t]", "rnn"), ("Dense on [s_t; c_t] -> logits", "out")],
        memory=2, reads=[3], memory_label="K_i, V_i from H_enc", loop=[5]),
    "encoder_self_attention": dict(
        title="step 2: GRU encoder + self-attention block",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU -> H", "rnn"),
                 ("Z = LayerNorm(H + MHA(H, H, H, pad mask))", "attn"),
                 ("H' = LayerNorm(Z + FFN(Z))", "ffn")],
        decoder=[("y_{t-1}", "io"), ("Embedding", "embed"),
                 ("attention over H' (query s_{t-1})", "attn"),
                 ("GRU step on [y_{t-1}; c_t]", "rnn"), ("Dense on [s_t; c_t] -> logits", "out")],
        memory=4, reads=[2], memory_label="H'", loop=[3], repeat=("enc", 3, 4, "N = 1")),
    "decoder_self_attention": dict(
        title="step 3: decoder masked self-attention + cross-attention, then GRU",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU -> H", "rnn"),
                 ("Z = LayerNorm(H + MHA(H, H, H, pad mask))", "attn"),
                 ("H_enc = LayerNorm(Z + FFN(Z))", "ffn")],
        decoder=[("y_{<t} (shifted right)", "io"), ("Embedding -> X", "embed"),
                 ("Y = LayerNorm(X + MHA(X, X, X, M_causal))", "attn"),
                 ("Z = LayerNorm(Y + MHA(Y, H_enc, H_enc))", "attn"),
                 ("GRU over Z (unrolled over t)", "rnn"), ("Dense -> logits", "out")],
        memory=4, reads=[3], memory_label="H_enc", loop=[4],
        repeat=("enc", 3, 4, "N = 1")),
    "transformer_decoder_on_gru": dict(
        title="step 4: Transformer decoder stack on a GRU encoder",
        encoder=[("source tokens x", "io"), ("Embedding", "embed"),
                 ("bidirectional GRU -> H", "rnn"),
                 ("Z = LayerNorm(H + MHA(H, H, H, pad mask))", "attn"),
                 ("H_enc = LayerNorm(Z + FFN(Z))", "ffn")],
        decoder=[("y_{<t} (shifted right)", "io"), ("Embedding", "embed"),
                 ("+ positional encoding", "pe"),
                 ("Y1 = AddNorm(X, MHA_mask(X, X, X))", "attn"),
                 ("Y2 = AddNorm(Y1, MHA(Y1, H_enc, H_enc))", "attn"),
                 ("Z = AddNorm(Y2, FFN(Y2))", "ffn"), ("Dense -> logits", "out")],
        memory=4, reads=[4], memory_label="H_enc (K/V cached once)",
        repeat=[("enc", 3, 4, "N = 1"), ("dec", 3, 5, "N = 2")]),
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
        memory=4, reads=[4], memory_label="H_enc", repeat=[("enc", 3, 4, "N = 2"),
                                                            ("dec", 3, 5, "N = 2")]),
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
    return _finish(fig, path)


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
                                               "same data, same lesson budget",
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
    return _finish(fig, path)
