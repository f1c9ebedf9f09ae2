"""Learning-rate schedules for training the kit's models.

One concept: the Transformer warmup schedule of Vaswani et al. (2017), section 5.3,

    lrate = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5),

a linear warmup for ``warmup_steps`` optimizer steps followed by an inverse-square-root
decay. At ``step = warmup_steps`` both branches meet at the peak
``(d_model * warmup_steps)^-0.5``, so the same curve can be written with the peak as the
only scale:

    lrate = peak * min(step / warmup_steps, sqrt(warmup_steps / step)).

The kit uses the second form (``peak_learning_rate`` is what a student tunes);
:meth:`TransformerSchedule.from_d_model` gives the paper's peak.
"""
from __future__ import annotations

import math

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kerasattn")
class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """Linear warmup then inverse-square-root decay (the "Noam" schedule).

    Keras optimizers call the schedule with their iteration counter, which is 0 for the
    first update; the paper counts steps from 1, so ``step = iterations + 1`` (the first
    update uses ``peak / warmup_steps``, never 0).

    Args:
        peak_learning_rate: float > 0, the rate reached at ``step == warmup_steps``.
        warmup_steps: int >= 1, length of the linear warmup in optimizer steps.

    Call arguments:
        step: scalar int, the optimizer's iteration counter (0-based).

    Returns:
        Scalar float32 learning rate.
    """

    def __init__(self, peak_learning_rate: float = 1e-3, warmup_steps: int = 4000):
        if not (isinstance(peak_learning_rate, (int, float)) and peak_learning_rate > 0
                and math.isfinite(peak_learning_rate)):
            raise ValueError("TransformerSchedule: `peak_learning_rate` must be a finite "
                             f"float > 0; received peak_learning_rate={peak_learning_rate!r}.")
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) \
                or warmup_steps < 1:
            raise ValueError("TransformerSchedule: `warmup_steps` must be an int >= 1; "
                             f"received warmup_steps={warmup_steps!r}.")
        self.peak_learning_rate = float(peak_learning_rate)
        self.warmup_steps = int(warmup_steps)

    @classmethod
    def from_d_model(cls, d_model: int, warmup_steps: int = 4000) -> "TransformerSchedule":
        """The paper's schedule: peak ``(d_model * warmup_steps)^-0.5``."""
        if isinstance(d_model, bool) or not isinstance(d_model, int) or d_model < 1:
            raise ValueError("TransformerSchedule.from_d_model: `d_model` must be an int "
                             f">= 1; received d_model={d_model!r}.")
        if isinstance(warmup_steps, bool) or not isinstance(warmup_steps, int) \
                or warmup_steps < 1:
            raise ValueError("TransformerSchedule.from_d_model: `warmup_steps` must be an int "
                             f">= 1; received warmup_steps={warmup_steps!r}.")
        return cls((d_model * warmup_steps) ** -0.5, warmup_steps)

    def __call__(self, step):
        step = ops.cast(step, "float32") + 1.0               # paper counts from 1
        warmup = ops.cast(self.warmup_steps, "float32")
        # lrate = peak * min(step / warmup, sqrt(warmup / step))
        return self.peak_learning_rate * ops.minimum(step / warmup,
                                                     ops.sqrt(warmup / step))

    def get_config(self) -> dict:
        return {"peak_learning_rate": self.peak_learning_rate,
                "warmup_steps": self.warmup_steps}
