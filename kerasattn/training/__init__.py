"""The training path: everything that fits a model, from the data's recipe to its last epoch.

Modules:

* :mod:`~kerasattn.training.fit`: :func:`train` (masked loss, AdamW, early stopping,
  checkpoints, resume, seeds) and :func:`compile_for_translation`; the one way the kit fits
  any of its seven models.
* :mod:`~kerasattn.training.recipes`: settings chosen from the data (tokenizer, sizes,
  dropout, batching), each decision with its reason; :func:`~kerasattn.training.recipes.
  train_on_corpus` runs a recipe end to end.
* :mod:`~kerasattn.training.callbacks`: epoch timer, wall-clock budget, teacher-forcing
  schedule (scheduled sampling).
* :mod:`~kerasattn.training.schedules`: the Transformer's warm-up learning-rate schedule.
* :mod:`~kerasattn.training.checkpointing`: crash-safe training state and resume.
* :mod:`~kerasattn.training.distribution`: data parallelism over local devices.

The names of :mod:`~kerasattn.training.fit` are available here (``from kerasattn.training
import train``); they are loaded on first use, so importing a submodule such as
``recipes`` does not import the whole training path.
"""
import importlib

_FIT_NAMES = ("INPUT_KEYS", "LABEL_KEY", "RECOMMENDED_TRAINING", "recommended_training",
              "make_optimizer", "compile_for_translation", "seed_everything", "TrainResult",
              "train", "EpochTimer", "TimeBudget", "StepLimit", "TeacherForcingSchedule",
              "SCHEDULES", "DISTRIBUTIONS", "data_parallel")
__all__ = list(_FIT_NAMES)


def __getattr__(name):
    if name in _FIT_NAMES:
        return getattr(importlib.import_module("kerasattn.training.fit"), name)
    raise AttributeError(f"module 'kerasattn.training' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
