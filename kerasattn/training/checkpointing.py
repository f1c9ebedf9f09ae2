"""Crash-safe training checkpoints.

One concept: a checkpoint file is either the old one or the new one, never half of each
(every file is written by :func:`kerasattn.files.atomic_write`; a crash leaves at worst a
stray ``.tmp-*`` file, which :func:`kerasattn.files.clean_stale_temp_files` removes when
training starts again).

Files written by :class:`TrainingCheckpoint` in ``checkpoint_dir``:
- ``last.ckpt.npz``: everything needed to resume (model weights, dropout seed states,
  optimizer variables, the early-stopping state with its best weights, the epoch counter and
  the history so far) in ONE file, so the pieces can never come from different epochs;
- ``best.weights.h5``: the weights with the lowest monitored loss so far (``val_loss``, or
  ``loss`` without validation data), in the Keras
  format (``model.load_weights(path)``). Both hold the weights being trained: with
  ``ema_momentum`` their moving average is among the optimizer variables of
  ``last.ckpt.npz``, and the model :func:`kerasattn.training.train` returns ends on it.

A finished model is saved for translation by :meth:`kerasattn.inference.Translator.save`
(the kit's one checkpoint format for trained models).
"""
from __future__ import annotations

import io
import json
import os

import keras
import numpy as np

from kerasattn.files import atomic_write

LAST_CHECKPOINT = "last.ckpt.npz"
BEST_WEIGHTS = "best.weights.h5"
_FORMAT_VERSION = 1


def _seed_state_variables(model: keras.Model) -> list:
    """The dropout (and other random layers') ``SeedGenerator`` states of ``model``."""
    return [v for v in model.variables if v.name == "seed_generator_state"]


def save_training_state(path: str, model: keras.Model, meta: dict | None = None,
                        extra_weights: list | None = None) -> str:
    """Atomically save model weights, seed states, optimizer variables and ``meta``.

    Args:
        path: target ``.npz`` file.
        model: a compiled model (its optimizer variables are saved if built).
        meta: JSON-serializable dict (epoch, early-stopping state, history...).
        extra_weights: optional list of arrays stored alongside (e.g. the best weights).

    Returns:
        ``path``.
    """
    arrays = {}
    for i, w in enumerate(model.get_weights()):
        arrays[f"model/{i:05d}"] = np.asarray(w)
    for i, v in enumerate(_seed_state_variables(model)):
        arrays[f"seed/{i:05d}"] = np.asarray(keras.ops.convert_to_numpy(v))
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and getattr(optimizer, "built", False):
        for i, v in enumerate(optimizer.variables):
            arrays[f"optimizer/{i:05d}"] = np.asarray(keras.ops.convert_to_numpy(v))
    for i, w in enumerate(extra_weights or []):
        arrays[f"extra/{i:05d}"] = np.asarray(w)
    header = {"format_version": _FORMAT_VERSION, "backend": keras.backend.backend(),
              "meta": meta or {}}
    arrays["header"] = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)

    def write(tmp):
        buf = io.BytesIO()
        np.savez(buf, **arrays)
        with open(tmp, "wb") as f:
            f.write(buf.getvalue())

    return atomic_write(path, write)


def _group(data, prefix: str) -> list[np.ndarray]:
    keys = sorted(k for k in data.files if k.startswith(prefix + "/"))
    return [data[k] for k in keys]


def load_training_state(path: str, model: keras.Model) -> tuple[dict, list[np.ndarray]]:
    """Restore what :func:`save_training_state` wrote into ``model`` (and its optimizer).

    The model must have the same architecture; if it is compiled, its optimizer is built
    and its variables restored too.

    Args:
        path: a ``.npz`` written by :func:`save_training_state`.
        model: the model to restore into.

    Returns:
        ``(meta, extra_weights)``.
    """
    with np.load(path, allow_pickle=False) as data:
        header = json.loads(bytes(data["header"]).decode("utf-8"))
        weights = _group(data, "model")
        seeds = _group(data, "seed")
        opt = _group(data, "optimizer")
        extra = _group(data, "extra")
    current = model.get_weights()
    if len(weights) != len(current) or any(a.shape != b.shape
                                           for a, b in zip(weights, current)):
        raise ValueError(
            f"load_training_state: checkpoint {path!r} does not match the model: expected "
            f"{len(current)} weights with shapes {[tuple(w.shape) for w in current][:6]}..., "
            f"received {len(weights)} with shapes {[tuple(w.shape) for w in weights][:6]}...")
    model.set_weights(weights)
    seed_vars = _seed_state_variables(model)
    if len(seed_vars) == len(seeds):
        for v, s in zip(seed_vars, seeds):
            v.assign(s)
    optimizer = getattr(model, "optimizer", None)
    if opt and optimizer is not None:
        if not optimizer.built:
            optimizer.build(model.trainable_variables)
        if len(optimizer.variables) != len(opt):
            raise ValueError(
                f"load_training_state: checkpoint {path!r} holds {len(opt)} optimizer "
                f"variables; the model's optimizer has {len(optimizer.variables)}. Compile "
                "with the same optimizer settings before resuming.")
        for v, value in zip(optimizer.variables, opt):
            v.assign(value)
    return header["meta"], extra


class TrainingCheckpoint(keras.callbacks.Callback):
    """Write crash-safe checkpoints at the end of every epoch.

    Must come after the ``early_stopping`` callback in the callback list, so the state it
    saves includes this epoch's early-stopping update.

    Args:
        checkpoint_dir: directory for ``last.ckpt.npz`` and ``best.weights.h5``.
        early_stopping: optional :class:`ResumableEarlyStopping` whose state is saved.
        monitor: the quantity that decides the best weights (lower is better).
        resume_meta: the ``meta`` of the checkpoint training resumes from (best value and
            history so far), or None for a fresh run.
    """

    def __init__(self, checkpoint_dir: str, early_stopping=None, monitor: str = "val_loss",
                 resume_meta: dict | None = None):
        super().__init__()
        self.checkpoint_dir = os.fspath(checkpoint_dir)
        self.early_stopping = early_stopping
        self.monitor = monitor
        resume_meta = resume_meta or {}
        self.best = float(resume_meta.get("best", float("inf")))
        self.history: dict[str, list] = {k: list(v) for k, v in
                                         resume_meta.get("history", {}).items()}

    @property
    def last_path(self) -> str:
        return os.path.join(self.checkpoint_dir, LAST_CHECKPOINT)

    @property
    def best_path(self) -> str:
        return os.path.join(self.checkpoint_dir, BEST_WEIGHTS)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        for k, v in logs.items():
            self.history.setdefault(k, []).append(float(v))
        value = logs.get(self.monitor, logs.get("loss"))
        if value is not None and float(value) < self.best:
            self.best = float(value)
            atomic_write(self.best_path, self.model.save_weights)
        # Only early stopping's decision ends a run for good: a time budget or a step limit
        # also sets `stop_training`, and such a run can be resumed.
        early_stopped = bool(self.early_stopping is not None
                             and self.early_stopping.stopped_epoch > 0)
        meta = {"epoch": epoch + 1, "best": self.best, "history": self.history,
                "early_stopped": early_stopped}
        extra = None
        if self.early_stopping is not None:
            meta["early_stopping"] = self.early_stopping.get_state()
            extra = self.early_stopping.best_weights
        save_training_state(self.last_path, self.model, meta, extra_weights=extra)


class ResumableEarlyStopping(keras.callbacks.EarlyStopping):
    """``keras.callbacks.EarlyStopping`` whose progress can be saved and restored.

    Monitors ``monitor`` (default ``val_loss``; lower is better) and always restores the
    best weights at the end of training, whether or not it stopped early.

    Args:
        patience: epochs without improvement before stopping.
        monitor: the quantity to monitor.
        verbose: 0 or 1.
    """

    def __init__(self, patience: int, monitor: str = "val_loss", verbose: int = 0):
        super().__init__(monitor=monitor, patience=patience, mode="min",
                         restore_best_weights=True, verbose=verbose)
        self._resume_state = None

    def get_state(self) -> dict:
        best = self.best
        return {"best": None if best is None or not np.isfinite(best) else float(best),
                "wait": int(self.wait), "best_epoch": self.best_epoch,
                "has_best_weights": self.best_weights is not None}

    def set_state(self, state: dict, best_weights: list | None) -> None:
        """Restore ``state`` (from :meth:`get_state`) at the next ``on_train_begin``."""
        self._resume_state = (dict(state), best_weights)

    def on_train_begin(self, logs=None):
        super().on_train_begin(logs)            # resets wait / best / best_weights
        if self._resume_state is not None:
            state, best_weights = self._resume_state
            if state.get("best") is not None:
                self.best = state["best"]
            self.wait = state.get("wait", 0)
            self.best_epoch = state.get("best_epoch") or 0
            if state.get("has_best_weights") and best_weights:
                self.best_weights = [np.asarray(w) for w in best_weights]
