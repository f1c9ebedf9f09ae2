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
from kerasattn.plots._base import CJK_FONTS, DEFAULT_DPI, cjk_font, label_font, save_figure
from kerasattn.plots.attention import (
    attention_heatmap,
    causal_mask_figure,
    positional_encoding_figure,
    self_attention_heads,
)
from kerasattn.plots.coverage import cumulative_attention
from kerasattn.plots.curves import bleu_vs_length, training_curves
from kerasattn.plots.diagrams import (
    ARCHITECTURES,
    architecture_diagram,
    evolution_table_figure,
    evolution_table_markdown,
)

__all__ = [
    "DEFAULT_DPI", "save_figure", "attention_heatmap", "self_attention_heads",
    "positional_encoding_figure",
    "causal_mask_figure", "cumulative_attention", "training_curves", "bleu_vs_length",
    "architecture_diagram",
    "ARCHITECTURES", "evolution_table_figure", "evolution_table_markdown",
    "CJK_FONTS", "cjk_font", "label_font",
]
