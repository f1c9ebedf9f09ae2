"""Exercise 24: the Transformer's warm-up learning-rate schedule.

Vaswani et al. (2017, section 5.3) train the Transformer with Adam and a learning rate that
changes at every optimizer step:

    lrate(step) = d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)     step = 1, 2, ...

During the first ``warmup_steps`` steps the second term is the smaller one: the rate grows
linearly from almost 0 (the warm-up: Adam's moment estimates are still noisy, and large
early updates can derail the attention layers). After that the first term is the smaller
one and the rate decays as ``1 / sqrt(step)``. The two meet at ``step = warmup_steps``, the
peak ``(d_model * warmup_steps)^-0.5``: with the paper's ``d_model = 512`` and
``warmup_steps = 4000``, about 7e-4.

A Keras optimizer calls its schedule with its iteration counter, which is 0 at the first
update, while the paper counts steps from 1: the schedule must use
``step = iteration + 1``. (At ``step = 0`` the warm-up term is 0: the first update would
not move the weights at all.)

Shapes (symbols): ``...`` any shape.

    transformer_learning_rate(step (...) 1-based, d_model, warmup_steps) -> (...) float32
    WarmupSchedule(d_model, warmup_steps)(iteration) -> scalar float32
                                          iteration: the optimizer's counter, 0-based

What to fill in: ``transformer_learning_rate`` and ``WarmupSchedule.__call__``
(``__init__`` and ``get_config`` are written for you). The grader also hands your schedule
to ``keras.optimizers.SGD`` and checks the size of its first updates.

Hints:
    * Cast the steps to float32 before taking powers: an integer step to the power -0.5
      is not what you want.
    * ``ops.minimum`` is elementwise, so one expression serves a single step and a whole
      array of steps.
    * ``__call__`` receives the optimizer's iteration counter (an int tensor or variable);
      turn it into the paper's step, then reuse ``transformer_learning_rate``.

What you may use: ``keras.ops`` and ``keras.optimizers.schedules.LearningRateSchedule``
(the base class, below).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's training code (``kerasattn.training``,
whose ``schedules`` module holds the kit's ``TransformerSchedule``), ``keras_hub`` /
``keras_nlp``; NumPy on tensors; the solutions, ``kerasattn.reference`` and
``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/24_warmup_schedule.py --backend all``.
"""
import keras
from keras import ops


def transformer_learning_rate(step, d_model, warmup_steps):
    """``d_model^-0.5 * min(step^-0.5, step * warmup_steps^-1.5)`` for 1-based steps.

    Args:
        step: int or float tensor of any shape, every entry >= 1.
        d_model: the model width (int).
        warmup_steps: the length of the warm-up (int >= 1).

    Returns:
        Float32 tensor with the shape of ``step``.
    """
    # BEGIN YOUR CODE
    step = ops.cast(step, "float32")
    warm_up = step * warmup_steps ** -1.5  # grows linearly
    decay = ops.power(step, -0.5)  # falls as 1 / sqrt(step)
    return d_model ** -0.5 * ops.minimum(decay, warm_up)
    # END YOUR CODE


class WarmupSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """The Transformer schedule as a Keras learning-rate schedule.

    Args:
        d_model: the model width.
        warmup_steps: the length of the warm-up in optimizer steps.

    Call arguments:
        iteration: the optimizer's iteration counter (scalar int, 0 at the first update).

    Returns:
        Scalar float32: the rate of the paper's ``step = iteration + 1``.
    """

    def __init__(self, d_model, warmup_steps=4000):
        self.d_model = int(d_model)
        self.warmup_steps = int(warmup_steps)

    def __call__(self, iteration):
        # BEGIN YOUR CODE
        step = ops.cast(iteration, "float32") + 1.0  # the paper counts from 1
        return transformer_learning_rate(step, self.d_model, self.warmup_steps)
        # END YOUR CODE

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps}
