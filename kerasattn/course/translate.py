"""Translating in the course: a lesson's model as a :class:`kerasattn.inference.Translator`
(the kit's one way to translate) with the lesson's data and decoding settings, and the
``kerasattn translate`` command."""
from __future__ import annotations

import sys
from pathlib import Path

from kerasattn.course.data import LessonData
from kerasattn.course.options import Settings


def lesson_translator(model, data: LessonData, settings: Settings, name: str | None = None):
    """A :class:`~kerasattn.inference.Translator` for ``model`` trained on ``data``.

    Its ``meta`` records the languages, the tokenizer and ``settings.decode_defaults``
    (quick mode: short outputs, no compilation), so it decodes exactly as it will once saved
    and reloaded.
    """
    from kerasattn.inference import Translator

    return Translator(model, data.src_vocab, data.tgt_vocab,
                      meta=dict(model=name or model.name, src_lang=data.src_lang,
                                tgt_lang=data.tgt_lang, tokenizer=data.tokenizer,
                                decode=settings.decode_defaults))


def translate_command(checkpoint, sentence: str | None = None, input_path=None,
                      output_path=None, beam: int = 1, attention: bool = False,
                      plot=None) -> int:
    """``kerasattn translate``: one sentence (optionally with its cross-attention, printed
    and drawn), or a file, one translation per line. Returns the exit status."""
    from kerasattn.course.printing import format_attention
    from kerasattn.inference import Translator

    translator = Translator.load(checkpoint)
    if input_path is not None:
        translator.translate_file(input_path, output_path, beam=beam)
        if output_path:
            print(f"translations written to {output_path}", file=sys.stderr)
        return 0
    t = translator.decode([sentence], beam=beam, attention=attention)[0]
    if t.unknown_words:
        print(f"note: not in the source vocabulary (read as <unk>): "
              f"{', '.join(t.unknown_words)}", file=sys.stderr)
    print(t.text)
    if not attention:
        return 0
    weights = t.attention_map("cross")                           # (h, T_out, S)
    if weights is None:
        print(f"(model {translator.name!r} has no attention to show: seq2seq reads one "
              f"fixed context vector)")
        return 0
    if weights.shape[0] == 1:
        weights = weights[0]                                     # (T_out, S)
    label = "cross-attention of the last decoder layer"
    print()
    print(format_attention(weights, t.source_tokens, t.target_tokens, label))
    # the directory the translator loaded (CHECKPOINT may name its model.keras)
    plot = Path(plot) if plot else Path(translator.path) / "attention.png"
    from kerasattn import plots

    plots.attention_heatmap(weights, t.source_tokens, t.target_tokens, plot,
                            title=f"{translator.name}: {label}")
    print(f"\nheatmap saved to {plot}")
    return 0
