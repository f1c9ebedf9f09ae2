"""A lesson's model as a :class:`kerasattn.inference.Translator` (the kit's one way to
translate), with the lesson's data and decoding settings."""
from __future__ import annotations

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
