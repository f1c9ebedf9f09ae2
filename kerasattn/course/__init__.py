"""The course layer: what turns the kit's models, training and decoding into lessons.

Modules (none imports keras at import time, so a lesson can still choose its backend):

* :mod:`~kerasattn.course.options`: the one definition of the lesson / ``train`` options
  and the :class:`Settings` they give.
* :mod:`~kerasattn.course.scripts`: finding and running the lesson scripts.
* :mod:`~kerasattn.course.printing`: tables, attention matrices and headings as text.
* :mod:`~kerasattn.course.data`: a lesson's corpus, vocabularies and arrays.
* :mod:`~kerasattn.course.train`: building and training a model for a lesson.
* :mod:`~kerasattn.course.translate`: translating batches and single sentences.
* :mod:`~kerasattn.course.lesson`: the :class:`Lesson` runner (figures, ``results.json``).
* :mod:`~kerasattn.course.lesson_helpers`: pieces of single lessons (04, 05).
* :mod:`~kerasattn.course.checkpoints`: ``kerasattn train`` / ``translate`` checkpoints.
* :mod:`~kerasattn.course.backends_demo`: ``kerasattn backends``.
"""
from kerasattn.course.checkpoints import (Checkpoint, load_checkpoint, save_checkpoint,
                                          train_and_save, translate_sentence)
from kerasattn.course.data import LessonData, load_data, spread
from kerasattn.course.lesson import Lesson
from kerasattn.course.lesson_helpers import LESSON_OF_MODEL, compare_decoding, evolution_rows
from kerasattn.course.options import Settings, parse_lesson_args
from kerasattn.course.printing import format_attention, format_table, heading
from kerasattn.course.train import Trained, build, model_hparams, train_model
from kerasattn.course.translate import translate_batch, translate_with_attention

__all__ = ["Checkpoint", "LESSON_OF_MODEL", "Lesson", "LessonData", "Settings", "Trained",
           "build", "compare_decoding", "evolution_rows", "format_attention", "format_table",
           "heading", "load_checkpoint", "load_data", "model_hparams", "parse_lesson_args",
           "save_checkpoint", "spread", "train_and_save", "train_model", "translate_batch",
           "translate_sentence", "translate_with_attention"]
