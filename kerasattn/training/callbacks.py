"""Callbacks of the training loop: epoch timer, wall-clock budget, teacher forcing.

:func:`kerasattn.training.train` adds :class:`EpochTimer` itself; :class:`TimeBudget` and
:class:`TeacherForcingSchedule` are passed by the caller (``callbacks=[...]``,
``teacher_forcing=...``).
"""
from __future__ import annotations

import time

import keras
import numpy as np

__all__ = ["EpochTimer", "TimeBudget", "StepLimit", "TeacherForcingSchedule", "SCHEDULES"]


def _check_positive(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"`{name}` must be a number > 0; received {name}={value!r}.")



class EpochTimer(keras.callbacks.Callback):
    """Wall time of each epoch's training pass (stops when validation starts), and the
    batches it ran (``batches``: fewer than the epoch's when a budget cut it short), read
    from the optimizer's step counter so that no per-batch hook makes JAX and torch wait
    for the device after every step."""

    def __init__(self):
        super().__init__()
        self.seconds = []
        self.batches = []
        self._start = None
        self._step0 = 0

    def _steps(self) -> int:
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None:
            return 0
        return int(keras.ops.convert_to_numpy(optimizer.iterations))

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()
        self._step0 = self._steps()

    def _stop(self):
        if self._start is not None:
            self.seconds.append(time.perf_counter() - self._start)
            self.batches.append(self._steps() - self._step0)
            self._start = None

    def on_test_begin(self, logs=None):
        self._stop()

    def on_epoch_end(self, epoch, logs=None):
        self._stop()



class TimeBudget(keras.callbacks.Callback):
    """Stop ``fit`` after the batch, or the epoch's validation pass, that crosses a budget.

    The clock starts when training starts (first-epoch compilation and validation passes
    count), so two models given the same budget get the same wall time. A budget that
    runs out during an epoch's validation pass starts no further epoch. After ``fit`` the
    callback's ``stopped`` says whether the budget ended training.

    With ``anneal`` the callback also lowers a constant learning rate linearly with the
    clock, from its starting value eta_0 to 0 at the end of the budget (the budget-aware
    linear schedule of Li et al., 2020, "Budgeted training"):

        eta(t) = eta_0 * (1 - t / budget)

    written before a batch whenever it has fallen by 1 % of eta_0 or more (at most about
    100 writes per run).

    Args:
        seconds: the budget, a number > 0.
        anneal: decay the optimizer's learning rate with the clock (it must be a constant
            rate, not a schedule).

    Raises:
        ValueError: at ``fit`` if ``anneal`` is set and the optimizer's learning rate is a
            schedule.
    """

    def __init__(self, seconds: float, anneal: bool = False):
        super().__init__()
        _check_positive("seconds", seconds)
        self.seconds, self.start, self.stopped = float(seconds), None, False
        self.anneal, self.peak, self._written = bool(anneal), None, None
        self.clock = time.perf_counter          # seconds; a test may replace it

    def elapsed(self) -> float:
        """Seconds since training started (0 before it starts)."""
        return 0.0 if self.start is None else self.clock() - self.start

    def on_train_begin(self, logs=None):
        self.start = self.clock()
        if self.anneal and self.peak is None:
            optimizer = self.model.optimizer
            if not isinstance(getattr(optimizer, "_learning_rate", None), keras.Variable):
                raise ValueError(
                    "TimeBudget(anneal=True) needs a constant learning rate; the optimizer "
                    f"of {self.model.name!r} has learning_rate={optimizer._learning_rate!r} "
                    "(a schedule). Train with warmup_steps=None or anneal=False.")
            self.peak = float(keras.ops.convert_to_numpy(optimizer.learning_rate))
            self._written = self.peak

    def on_train_batch_begin(self, batch, logs=None):
        if not self.anneal:
            return
        rate = self.peak * max(0.0, 1.0 - self.elapsed() / self.seconds)
        if self._written - rate >= 0.01 * self.peak:
            # on JAX, reading `self.model` writes fit's state back to the variables
            # first, so the next step starts from them and reads the new rate
            self.model.optimizer.learning_rate.assign(rate)
            self._written = rate

    def on_train_batch_end(self, batch, logs=None):
        self._stop_if_spent()

    def on_epoch_end(self, epoch, logs=None):
        self._stop_if_spent()                 # after validation: no epoch past the budget

    def _stop_if_spent(self):
        if self.elapsed() > self.seconds:
            self.model.stop_training = True
            self.stopped = True


class StepLimit(keras.callbacks.Callback):
    """Count the training steps (batches) of ``fit``; with ``max_steps``, stop after that many.

    Two runs compared at the same amount of training should match in steps, not epochs: a
    run that a :class:`TimeBudget` stops mid-epoch still counts that epoch. Count the steps
    of one run with ``StepLimit()`` and give the other ``StepLimit(counted.steps)``. The
    count runs on across several ``fit`` calls of one object. It counts the batch ends
    Keras reports: one per step with ``steps_per_execution=1``, the training default.

    Args:
        max_steps: stop after this many training steps (an int >= 1), or None to count
            only.

    Attributes:
        steps: training steps run so far.
        stopped: whether the limit ended training.
    """

    def __init__(self, max_steps: int | None = None):
        super().__init__()
        if max_steps is not None and (isinstance(max_steps, bool) or
                                      not isinstance(max_steps, (int, np.integer)) or
                                      max_steps < 1):
            raise ValueError(f"`max_steps` must be an int >= 1 or None; received "
                             f"max_steps={max_steps!r}.")
        self.max_steps = None if max_steps is None else int(max_steps)
        self.steps = 0
        self.stopped = False

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1
        if self.max_steps is not None and self.steps >= self.max_steps:
            self.model.stop_training = True
            self.stopped = True


SCHEDULES = ("constant", "linear", "inverse_sigmoid")


class TeacherForcingSchedule(keras.callbacks.Callback):
    """The teacher-forcing ratio of scheduled sampling (Bengio et al., 2015), as a callback.

    At training step (or epoch) ``i`` the ratio is

        constant         eps_i = ratio
        linear           eps_i = max(min_ratio, 1 - (1 - min_ratio) i / decay_steps)
        inverse sigmoid  eps_i = k / (k + exp(i / k))                      (k >= 1)

    Before each batch (``per="step"``) or epoch (``per="epoch"``) the callback writes
    eps_i into the decoder's ``teacher_forcing_ratio`` variable; the decoder then reads the
    gold previous token with probability eps_i and its own previous prediction otherwise.
    ``i`` counts from 0 at the first ``fit`` of this object (``initial_epoch`` for
    ``per="epoch"``). ``values`` records the ratio used for each step or epoch.

    With ``budget_seconds`` the linear schedule spans a wall-clock training budget instead
    of a count of steps: ``i / decay_steps`` is replaced by the share of the budget spent
    when the batch starts (``elapsed / budget_seconds``, at most 1), so the ratio reaches
    ``min_ratio`` when the budget (:class:`TimeBudget`) ends training, however many steps a
    machine fits in it.

    Args:
        kind: "constant", "linear" or "inverse_sigmoid".
        ratio: the constant ratio in [0, 1] (constant only).
        decay_steps: steps (or epochs) of the linear decay, > 0 (linear only).
        min_ratio: the floor of the linear decay, in [0, 1].
        k: the inverse-sigmoid constant, >= 1 (larger decays later).
        per: "step" or "epoch".
        budget_seconds: decay over this many seconds of training instead of
            ``decay_steps`` (linear only, per step).
        clock: the clock of ``budget_seconds`` (``time.perf_counter``, as
            :class:`TimeBudget`; tests pass a fake).
    """

    def __init__(self, kind="linear", *, ratio=1.0, decay_steps=1000, min_ratio=0.0,
                 k=100.0, per="step", budget_seconds=None, clock=time.perf_counter):
        super().__init__()
        if budget_seconds is not None:
            _check_positive("budget_seconds", budget_seconds)
            if kind != "linear" or per != "step":
                raise ValueError("TeacherForcingSchedule: `budget_seconds` needs "
                                 f"kind='linear' and per='step'; received kind={kind!r}, "
                                 f"per={per!r}.")
        self.budget_seconds, self._clock, self._start = budget_seconds, clock, None
        if kind not in SCHEDULES:
            raise ValueError(f"TeacherForcingSchedule: `kind` must be one of {SCHEDULES}; "
                             f"received kind={kind!r}.")
        if per not in ("step", "epoch"):
            raise ValueError("TeacherForcingSchedule: `per` must be 'step' or 'epoch'; "
                             f"received per={per!r}.")
        for name, value in (("ratio", ratio), ("min_ratio", min_ratio)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                    0.0 <= value <= 1.0):
                raise ValueError(f"TeacherForcingSchedule: `{name}` must be a number in "
                                 f"[0, 1]; received {name}={value!r}.")
        if kind == "linear" and not (isinstance(decay_steps, (int, float)) and
                                     not isinstance(decay_steps, bool) and decay_steps > 0):
            raise ValueError("TeacherForcingSchedule: `decay_steps` must be > 0; received "
                             f"decay_steps={decay_steps!r}.")
        if kind == "inverse_sigmoid" and not (isinstance(k, (int, float)) and
                                              not isinstance(k, bool) and k >= 1):
            raise ValueError("TeacherForcingSchedule: `k` must be a number >= 1; received "
                             f"k={k!r}.")
        self.kind, self.per = kind, per
        self.ratio, self.decay_steps = float(ratio), float(decay_steps)
        self.min_ratio, self.k = float(min_ratio), float(k)
        self.step, self.values, self._last = 0, [], None

    @classmethod
    def parse(cls, spec):
        """A schedule from a ratio or a spec string.

        Forms: a number ``p`` or ``"constant:p"``; ``"linear:DECAY_STEPS[:MIN_RATIO]"``;
        ``"inverse_sigmoid:K"``; each optionally followed by ``"@epoch"`` (per epoch
        instead of per step). Example: ``"linear:500:0.5"`` decays from 1 to 0.5 over 500
        steps.
        """
        if isinstance(spec, (int, float)) and not isinstance(spec, bool):
            return cls("constant", ratio=float(spec))
        bad = ValueError(
            "`teacher_forcing` must be a TeacherForcingSchedule, a ratio in [0, 1] or a "
            "spec 'constant:P', 'linear:DECAY_STEPS[:MIN_RATIO]' or 'inverse_sigmoid:K' "
            f"(optionally ending in '@epoch'); received teacher_forcing={spec!r}.")
        if not isinstance(spec, str):
            raise bad
        body, _, per = spec.partition("@")
        kind, *args = body.strip().split(":")
        try:
            nums = [float(a) for a in args]
        except ValueError:
            raise bad from None
        per = per or "step"
        if kind == "constant" and len(nums) == 1:
            return cls("constant", ratio=nums[0], per=per)
        if kind == "linear" and len(nums) in (1, 2):
            return cls("linear", decay_steps=nums[0],
                       min_ratio=nums[1] if len(nums) == 2 else 0.0, per=per)
        if kind == "inverse_sigmoid" and len(nums) == 1:
            return cls("inverse_sigmoid", k=nums[0], per=per)
        raise bad

    def value(self, i):
        """eps_i for step (or epoch) ``i`` >= 0 (with ``budget_seconds``: for the share
        ``i`` in [0, 1] of the budget spent)."""
        if self.kind == "constant":
            return self.ratio
        if self.kind == "linear":
            progress = min(i, 1.0) if self.budget_seconds else i / self.decay_steps
            return max(self.min_ratio, 1.0 - (1.0 - self.min_ratio) * progress)
        return self.k / (self.k + float(np.exp(min(i / self.k, 700.0))))

    @staticmethod
    def decoder_of(model):
        """The model's decoder built for scheduled sampling (a ValueError otherwise)."""
        for layer in model.layers:
            if getattr(layer, "scheduled_sampling", False):
                return layer
        raise ValueError(
            "`teacher_forcing` needs a model whose recurrent decoder was built with "
            "scheduled_sampling=True (e.g. build_model('bahdanau', ..., "
            f"scheduled_sampling=True)); model {model.name!r} has none.")

    def set_model(self, model):
        super().set_model(model)
        decoder = self.decoder_of(model)
        if decoder._feedback is None:                # e.g. a model loaded from .keras
            from kerasattn.models.attention_decoder import feedback_layers

            decoder.attach_feedback(*feedback_layers(model))
        self._variable = decoder.teacher_forcing_ratio

    def _set(self, i):
        p = self.value(i)
        self.values.append(p)
        if p != self._last:
            if keras.backend.backend() == "jax":
                # fit holds the variables' values in its own state during an epoch:
                # write them back so the next step reads the new ratio
                self.model.jax_state_sync()
            self._variable.assign(p)
            self._last = p

    def on_epoch_begin(self, epoch, logs=None):
        if self.per == "epoch":
            self._set(epoch)

    def on_train_begin(self, logs=None):
        if self._start is None:
            self._start = self._clock()

    def on_train_batch_begin(self, batch, logs=None):
        if self.per == "step":
            if self.budget_seconds:
                self._set((self._clock() - self._start) / self.budget_seconds)
            else:
                self._set(self.step)
            self.step += 1
