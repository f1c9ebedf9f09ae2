"""Figures: every plotting function writes a valid PNG of the size it promises."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from kerasattn import plots

SRC = "the black cat sleeps .".split()
TGT = "le chat noir dort . <eos>".split()


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) read from the PNG header; fails unless the file is a PNG."""
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert data.rstrip(b"\x00")[-8:-4] == b"IEND", f"{path} is truncated"
    return width, height


def expected_pixels(fig) -> tuple[int, int]:
    w, h = fig.get_size_inches() * fig.dpi
    return int(round(w)), int(round(h))


def test_attention_heatmap_single_and_multi_head(tmp_path):
    import matplotlib
    import matplotlib.image

    rng = np.random.default_rng(0)
    single = rng.dirichlet(np.ones(len(SRC)), size=len(TGT))
    fig = plots.attention_heatmap(single, SRC, TGT, tmp_path / "one.png", title="one map")
    # one panel of 0.35 * 6 + 1.2 = 3.3 inches, + 0.8 for the colour bar, + 0.5 for the
    # title, at 100 dpi
    assert png_size(tmp_path / "one.png") == (410, 380)
    (ax,) = [a for a in fig.axes if a.images]
    assert np.array_equal(ax.images[0].get_array(), single)
    assert [t.get_text() for t in ax.get_xticklabels()] == SRC
    assert [t.get_text() for t in ax.get_yticklabels()] == TGT
    assert fig.get_suptitle() == "one map"
    # each cell is written in it, row by row, to 2 decimals
    assert [t.get_text() for t in ax.texts] == [f"{w:.2f}" for w in single.ravel()]
    # and the PNG shows the weights: a point inside cell (r, c), off its centre (where the
    # number is written), has the viridis colour of single[r, c] on a 0-1 scale
    png = matplotlib.image.imread(tmp_path / "one.png")
    viridis = matplotlib.colormaps["viridis"]
    for r in range(len(TGT)):
        for c in range(len(SRC)):
            x, y = ax.transData.transform((c - 0.35, r - 0.35))
            pixel = png[int(png.shape[0] - y), int(x), :3]
            assert np.abs(pixel - viridis(single[r, c])[:3]).max() < 0.02, (r, c)
    # 3 heads, with padding rows/columns beyond the tokens that must be cut off
    multi = rng.dirichlet(np.ones(len(SRC) + 2), size=(3, len(TGT) + 1))
    fig = plots.attention_heatmap(multi, SRC, TGT, tmp_path / "heads.png")
    panels = [a for a in fig.axes if a.images]
    assert len(panels) == 3
    for head, panel in enumerate(panels):
        assert np.array_equal(panel.images[0].get_array(), multi[head, :len(TGT), :len(SRC)])
        assert panel.get_title() == f"head {head + 1}"
    assert [t.get_text() for t in panels[0].get_xticklabels()] == SRC
    assert [t.get_text() for t in panels[0].get_yticklabels()] == TGT
    # three 3.3-inch panels side by side, + 0.8 inch for the colour bar, + 0.1, at 100 dpi
    assert png_size(tmp_path / "heads.png") == (1070, 340)


def test_attention_heatmap_rejects_bad_shapes(tmp_path):
    with pytest.raises(ValueError, match="weights"):
        plots.attention_heatmap(np.zeros(5), SRC, TGT)
    with pytest.raises(ValueError, match="smaller than the token lists"):
        plots.attention_heatmap(np.zeros((2, 2)), SRC, TGT)


def test_positional_encoding_and_causal_mask_sizes(tmp_path):
    pe = np.sin(np.arange(40)[:, None] / (1 + np.arange(16)[None]))
    fig = plots.positional_encoding_figure(pe, tmp_path / "pe.png", dpi=80)
    assert png_size(tmp_path / "pe.png") == (640, 320)
    assert fig.dpi == 80
    mask = np.tril(np.ones((4, 4), dtype=bool))
    fig = plots.causal_mask_figure(mask, ["<bos>", "le", "chat", "noir"], tmp_path / "m.png")
    assert png_size(tmp_path / "m.png") == (440, 400)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("1") == 10 and texts.count("0\n(-inf)") == 6
    with pytest.raises(ValueError, match="tokens"):
        plots.causal_mask_figure(mask, ["a", "b"])


def test_curves_and_bleu_vs_length(tmp_path):
    hist = {"seq2seq": {"loss": [3.0, 2.0, 1.5], "val_loss": [3.1, 2.5, 2.3]},
            "bahdanau": {"loss": [3.0, 1.2, 0.4], "val_loss": [3.0, 1.4, 0.6]}}
    fig = plots.training_curves(hist, tmp_path / "c.png")
    assert png_size(tmp_path / "c.png") == (900, 360)
    assert [len(ax.lines) for ax in fig.axes] == [2, 2]
    res = {"seq2seq": {"1-10": 90.0, "11-20": 50.0, "21+": None},
           "bahdanau": [("1-10", 99.0), ("11-20", 98.0), ("21+", 97.0)]}
    fig = plots.bleu_vs_length(res, tmp_path / "b", counts=[5, 6, 7])
    assert png_size(tmp_path / "b.png") == (640, 400)
    assert len(fig.axes[0].lines) == 2
    with pytest.raises(ValueError, match="same buckets"):
        plots.bleu_vs_length({"a": {"x": 1.0}, "b": {"y": 2.0}})


@pytest.mark.parametrize("name", sorted(plots.ARCHITECTURES))
def test_architecture_diagrams(tmp_path, name):
    fig = plots.architecture_diagram(name, tmp_path / f"{name}.png", dpi=60)
    assert png_size(tmp_path / f"{name}.png") == (540, 360)
    labels = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "encoder" in labels and "decoder" in labels


def test_architecture_covers_the_seven_models():
    assert set(plots.ARCHITECTURES) == {
        "seq2seq", "bahdanau", "bahdanau_multihead", "encoder_self_attention",
        "decoder_self_attention", "transformer_decoder_on_gru", "transformer"}
    with pytest.raises(ValueError, match="unknown model name"):
        plots.architecture_diagram("lstm")


def test_evolution_table(tmp_path):
    rows = [dict(model="seq2seq", params=1234, train_seconds=10.0, tokens_per_second=5e3,
                 bleu=40.0, exact_match=0.25),
            dict(model="transformer", params=98765, train_seconds=20.5, bleu=99.0)]
    md = plots.evolution_table_markdown(rows)
    lines = md.strip().splitlines()
    assert len(lines) == 4
    assert "| transformer | 98,765 | 20.5 | - | 99.0 | - |" in lines
    assert "| seq2seq | 1,234 | 10.0 | 5,000 | 40.0 | 25.0% |" in lines
    fig = plots.evolution_table_figure(rows, tmp_path / "t.png")
    assert png_size(tmp_path / "t.png") == expected_pixels(fig) == (900, 320)


def test_label_font_picks_an_installed_cjk_font_for_japanese_labels():
    ja = ["猫", "が", "寝て", "いる"]
    assert plots.label_font(["the", "cat"], available=["DejaVu Sans"]) == {}
    font = plots.label_font(ja, available=["DejaVu Sans", "IPAexGothic", "Noto Sans CJK JP"])
    assert font == {"fontfamily": ["Noto Sans CJK JP", "DejaVu Sans"]}   # preference order
    assert plots.cjk_font(["DejaVu Sans"]) is None


def test_japanese_heatmap_without_a_cjk_font_warns_and_still_draws(tmp_path, monkeypatch):
    from kerasattn.plots import _base

    monkeypatch.setattr(_base, "_warned_no_cjk", False)
    monkeypatch.setattr(_base, "cjk_font", lambda available=None: None)
    with pytest.warns(UserWarning, match="fonts-noto-cjk"):
        fig = plots.attention_heatmap(np.full((2, 3), 1 / 3), ["猫", "が", "寝る"],
                                      ["the", "cat"], path=tmp_path / "ja.png")
    # the smallest panel (2.6 inches) + 0.8 for the colour bar, + 0.1, at 100 dpi
    assert png_size(tmp_path / "ja.png") == (340, 270)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["猫", "が", "寝る"]


# ---------------------------------------------------------------------------------------
# Every figure's text lies inside it
# ---------------------------------------------------------------------------------------
LONG_TITLE = ("a long title that says what the figure shows, which model, which sentence and "
              "which layer, far wider than any narrow figure: it must wrap, not run off the "
              "edges")
LONG_SRC = [f"{w}{i}" for i, w in enumerate(
    ["▁internationalisation", "▁responsibilities", "▁a", "▁extraordinarily", "ing", "."]
    * 4)]                                                               # 24 source tokens
LONG_TGT = [f"{w}{i}" for i, w in enumerate(
    ["▁responsabilités", "▁internationales", "▁extraordinairement", "▁de", "s"] * 4)] + \
    ["<eos>"]                                                            # 21 target tokens


def drawn_texts(fig, monkeypatch) -> list:
    """Every text artist a draw of ``fig`` paints (visible and not empty), found by
    watching ``Text.draw`` during ``fig.canvas.draw()``."""
    from matplotlib.text import Text

    drawn, draw = [], Text.draw

    def spy(self, renderer):
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        return draw(self, renderer)

    with monkeypatch.context() as m:
        m.setattr(Text, "draw", spy)
        fig.canvas.draw()
    return drawn


def assert_text_inside(fig, monkeypatch, min_texts: int = 1) -> None:
    texts = drawn_texts(fig, monkeypatch)
    assert len(texts) >= min_texts
    renderer = fig.canvas.get_renderer()
    outside = []
    for text in texts:
        box = text.get_window_extent(renderer)
        if (box.x0 < fig.bbox.x0 - 0.01 or box.y0 < fig.bbox.y0 - 0.01
                or box.x1 > fig.bbox.x1 + 0.01 or box.y1 > fig.bbox.y1 + 0.01):
            outside.append((text.get_text(), box.bounds))
    assert not outside, f"text outside the figure {fig.bbox.bounds}: {outside}"


def _weights(heads, n_q=len(LONG_TGT), n_k=len(LONG_SRC)):
    return np.random.default_rng(0).dirichlet(np.ones(n_k), size=(heads, n_q))


FIT_CASES = {
    "heatmap, one head": lambda path: plots.attention_heatmap(
        _weights(1), LONG_SRC, LONG_TGT, path, title=LONG_TITLE),
    "heatmap, four heads": lambda path: plots.attention_heatmap(
        _weights(4), LONG_SRC, LONG_TGT, path, title=LONG_TITLE),
    "heatmap, small and annotated": lambda path: plots.attention_heatmap(
        _weights(1, 3, 4), ["▁the", "▁extraordinarily", "▁long", "."],
        ["▁la", "▁extraordinairement", "<eos>"], path, title=LONG_TITLE),
    "self-attention heads": lambda path: plots.self_attention_heads(
        _weights(4, len(LONG_SRC)), LONG_SRC, path, title=LONG_TITLE, focus=3),
    "bleu vs length": lambda path: plots.bleu_vs_length(
        {"bahdanau_multihead (attention, beam 4)": {"1-10": 30.0, "11-20": 20.0, "21+": 9.0},
         "seq2seq (fixed context vector)": {"1-10": 25.0, "11-20": 10.0, "21+": 2.0}},
        path, title=LONG_TITLE, counts=[120, 80, 7]),
    "training curves": lambda path: plots.training_curves(
        {"transformer_decoder_on_gru": {"loss": [3.0, 2.0], "val_loss": [3.2, 2.5]}}, path,
        title=LONG_TITLE),
    "positional encoding": lambda path: plots.positional_encoding_figure(
        np.sin(np.arange(40)[:, None] / (1 + np.arange(16)[None])), path, title=LONG_TITLE),
    "causal mask": lambda path: plots.causal_mask_figure(
        np.tril(np.ones((4, 4), bool)), ["<bos>", "▁extraordinairement", "▁de", "s"], path,
        title=LONG_TITLE),
    "evolution table": lambda path: plots.evolution_table_figure(
        [dict(model="transformer_decoder_on_gru", params=123456, train_seconds=12.5,
              bleu=12.0)], path, title=LONG_TITLE),
    **{f"architecture {name}": (lambda path, name=name: plots.architecture_diagram(name, path))
       for name in sorted(plots.ARCHITECTURES)},
}


@pytest.mark.parametrize("case", sorted(FIT_CASES))
def test_every_text_of_a_figure_lies_inside_it(case, tmp_path, monkeypatch):
    """Long titles, 20+ long subword tokens: drawn with matplotlib's renderer, every text
    artist's window extent lies inside the figure; titles wrap (not shrink below 6 pt);
    the saved PNG is the figure's size."""
    fig = FIT_CASES[case](tmp_path / "f.png")
    assert_text_inside(fig, monkeypatch, min_texts=3)
    assert png_size(tmp_path / "f.png") == expected_pixels(fig)
    titles = [t for t in [fig._suptitle, *(ax.title for ax in fig.axes)]
              if t is not None and t.get_text().startswith("a long title")]
    if "architecture" not in case:
        (title,) = titles
        assert title.get_fontsize() >= 6
        if fig.get_size_inches()[0] < 12:      # too narrow for the title on one line
            assert "\n" in title.get_text()
        assert " ".join(title.get_text().split()) == LONG_TITLE   # wrapped at spaces only


def test_heatmap_grows_with_the_tokens_and_keeps_a_small_map_as_it_was():
    small = plots.attention_heatmap(_weights(1, 6, 5), SRC, TGT, title="one map")
    big = plots.attention_heatmap(_weights(1), LONG_SRC, LONG_TGT, title="one map")
    assert tuple(small.get_size_inches()) == pytest.approx((4.1, 3.8))   # as sized
    width, height = big.get_size_inches()
    assert width > 7.0 and height > 7.0          # a 7-inch panel, + room for long labels
    (ax,) = [a for a in big.axes if a.images]
    assert [t.get_text() for t in ax.get_xticklabels()] == LONG_SRC    # whole, not cut
