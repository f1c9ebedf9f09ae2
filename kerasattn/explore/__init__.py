"""The attention explorer: every attention weight of one translation, in one HTML file.

:func:`explore` translates a sentence with the kit's :class:`~kerasattn.inference.Translator`
and returns an :class:`ExplorerPage`: a self-contained page (its data, script and style
inline; it loads nothing) with

- the source and the translation, as the model's tokens (subword pieces marked);
- a head view (lines between tokens, weight as opacity; hover a token to isolate its links,
  click to pin it) and a model view (a grid of small heatmaps, layer by head; click one to
  enlarge it) for the cross-attention, the decoder's masked self-attention and the
  encoder's self-attention, where the model has them;
- a step view: the alignment of every decoding step and the coverage (the attention each
  source token has received so far), and with a beam, the hypotheses the beam kept at each
  step with their scores; any finished hypothesis can be selected and explored;
- export of the current view as SVG or PNG.

Command line: ``kerasattn explore CHECKPOINT "sentence" [--beam K] [--out FILE.html]``.
"""
from __future__ import annotations

from kerasattn.explore.page import ExplorerPage, page_data, render
from kerasattn.explore.record import AttentionRecord, collect, encoder_self_attention

__all__ = ["explore", "collect", "render", "page_data", "encoder_self_attention",
           "AttentionRecord", "ExplorerPage"]


def explore(model_or_translator, sentence: str, *, beam: int = 1, out=None, src_vocab=None,
            tgt_vocab=None, **decode_kwargs) -> ExplorerPage:
    """The attention explorer page of ``sentence``'s translation.

    Args:
        model_or_translator: a :class:`~kerasattn.inference.Translator`, or one of the kit's
            Keras models with ``src_vocab`` and ``tgt_vocab``.
        sentence: the raw source sentence.
        beam: 1 for greedy decoding, ``k > 1`` for beam search.
        out: also write the page to this ``.html`` file.
        src_vocab, tgt_vocab: the tokenizers, when a model is given.
        **decode_kwargs: passed to :meth:`~kerasattn.inference.Translator.decode`.

    Returns:
        An :class:`ExplorerPage` (``.html``, ``.save(path)``; shown inline in a notebook).

    Raises:
        ValueError: a model without its tokenizers, or an empty sentence.
    """
    from kerasattn.inference import Translator

    translator = model_or_translator
    if not isinstance(translator, Translator):
        if src_vocab is None or tgt_vocab is None:
            raise ValueError("explore: a model needs src_vocab and tgt_vocab (the tokenizers "
                             "it was trained with); or pass a Translator")
        translator = Translator(model_or_translator, src_vocab, tgt_vocab)
    page = render(collect(translator, sentence, beam=beam, **decode_kwargs))
    if out is not None:
        page.save(out)
    return page
