"""The course layer: what turns the kit's models, training and decoding into lessons.

Modules (none imports keras at import time, so a lesson can still choose its backend):

* :mod:`~kerasattn.course.options`: the one definition of the lesson / ``train`` options
  and the :class:`Settings` they give.
* :mod:`~kerasattn.course.scripts`: finding and running the lesson scripts.
* :mod:`~kerasattn.course.printing`: tables, attention matrices and headings as text.
* :mod:`~kerasattn.course.data`: a lesson's corpus, vocabularies and arrays.
* :mod:`~kerasattn.course.train`: building and training a model for a lesson;
  ``kerasattn train`` (train, score, save a checkpoint).
* :mod:`~kerasattn.course.translate`: a lesson's model as a
  :class:`kerasattn.inference.Translator`.
* :mod:`~kerasattn.course.lesson`: the :class:`Lesson` runner (figures, ``results.json``).
* :mod:`~kerasattn.course.lesson_helpers`: pieces of single lessons (04, 05).
* :mod:`~kerasattn.course.lab`: ``kerasattn lab``, the attention lab on the student's own
  exercise-16 model (graded, trained beside ``seq2seq``, decoded, drawn, reported).
* :mod:`~kerasattn.course.backends_demo`: ``kerasattn backends``.
"""
import importlib

_WHERE = {
    "data": ["LessonData", "load_data", "spread"],
    "lesson": ["Lesson"],
    "lesson_helpers": ["LESSON_OF_MODEL", "compare_decoding", "evolution_rows"],
    "options": ["Settings", "parse_lesson_args"],
    "printing": ["format_attention", "format_table", "heading"],
    "train": ["Trained", "build", "model_hparams", "train_model", "train_and_save"],
    "translate": ["lesson_translator"],
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}
__all__ = sorted(_MODULE_OF)


def __getattr__(name):
    # Names are loaded on first use, so `kerasattn --help` (which needs only the options)
    # stays light. None of these modules imports keras at import time.
    if name in _MODULE_OF:
        return getattr(importlib.import_module(f"kerasattn.course.{_MODULE_OF[name]}"), name)
    raise AttributeError(f"module 'kerasattn.course' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
