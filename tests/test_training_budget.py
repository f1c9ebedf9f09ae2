"""TimeBudget: stops fit after the batch (or the validation pass) that crosses the
wall-clock budget, and with ``anneal`` lowers the learning rate linearly to 0 at the
budget."""
from __future__ import annotations

import time

import pytest

from kerasattn.training import TimeBudget


class _Model:
    stop_training = False


def test_stops_after_the_batch_that_crosses_the_budget():
    budget = TimeBudget(60)
    budget.set_model(_Model())
    budget.on_train_begin()
    budget.on_train_batch_end(0)
    assert not budget.model.stop_training and not budget.stopped
    budget.start = time.perf_counter() - 61                      # a minute later
    budget.on_train_batch_end(1)
    assert budget.model.stop_training and budget.stopped


def test_a_budget_spent_in_validation_starts_no_further_epoch():
    import keras
    import numpy as np

    tick = _Tick()

    class Clock(keras.callbacks.Callback):
        """Each training batch takes 1 s, each validation pass 5 s."""

        def on_train_batch_end(self, batch, logs=None):
            tick.now += 1.0

        def on_test_end(self, logs=None):
            tick.now += 5.0

    class Epochs(keras.callbacks.Callback):
        begun = 0

        def on_epoch_begin(self, epoch, logs=None):
            Epochs.begun += 1

    budget = TimeBudget(6)          # 4 batches (4 s) + validation (5 s) = 9 s > 6 s
    budget.clock = tick
    model = _linear_model(keras.optimizers.SGD(learning_rate=0.1))
    x, y = np.ones((4, 1), "float32"), np.zeros((4, 1), "float32")
    model.fit(x, y, batch_size=1, epochs=3, shuffle=False, verbose=0,
              validation_data=(x, y), callbacks=[Clock(), Epochs(), budget])
    assert Epochs.begun == 1 and budget.stopped and budget.elapsed() == 9.0


@pytest.mark.parametrize("seconds", [0, -1, "10", None])
def test_bad_budget_names_the_argument(seconds):
    with pytest.raises(ValueError, match=r"`seconds` must be a number > 0; received"):
        TimeBudget(seconds)


class _Tick:
    """A clock the test moves by hand."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def _linear_model(optimizer):
    import keras

    model = keras.Sequential([keras.Input((1,)),
                              keras.layers.Dense(1, use_bias=False,
                                                 kernel_initializer="zeros")])
    # loss = mean(w * 1): its gradient with respect to w is 1 at every step, so plain SGD
    # moves w by exactly -eta_t per step and w ends at -(sum of the rates used)
    model.compile(optimizer=optimizer, loss=lambda y, p: keras.ops.mean(p))
    return model


def test_anneal_lowers_the_rate_linearly_and_each_step_uses_it():
    import keras
    import numpy as np

    tick = _Tick()

    class Advance(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            tick.now += 1.0

    budget = TimeBudget(10, anneal=True)
    budget.clock = tick
    model = _linear_model(keras.optimizers.SGD(learning_rate=1.0))
    model.fit(np.ones((20, 1), "float32"), np.zeros((20, 1), "float32"), batch_size=1,
              epochs=1, shuffle=False, verbose=0, callbacks=[Advance(), budget])
    # batch i starts at t = i + 1 s: eta = 1 - t / 10 = 0.9, 0.8, ..., 0.1, 0, and the
    # batch that starts after the 10 s budget (t = 11) is the last one
    w = float(keras.ops.convert_to_numpy(model.layers[0].kernel)[0, 0])
    np.testing.assert_allclose(w, -4.5, atol=1e-5)
    assert budget.stopped and budget.peak == 1.0
    np.testing.assert_allclose(float(keras.ops.convert_to_numpy(
        model.optimizer.learning_rate)), 0.0, atol=1e-7)


def test_without_anneal_the_rate_stays():
    import keras
    import numpy as np

    budget = TimeBudget(60)
    model = _linear_model(keras.optimizers.SGD(learning_rate=0.5))
    model.fit(np.ones((4, 1), "float32"), np.zeros((4, 1), "float32"), batch_size=1,
              epochs=1, shuffle=False, verbose=0, callbacks=[budget])
    w = float(keras.ops.convert_to_numpy(model.layers[0].kernel)[0, 0])
    np.testing.assert_allclose(w, -2.0, atol=1e-6)
    assert not budget.stopped


def test_anneal_refuses_a_learning_rate_schedule():
    import keras
    import numpy as np

    schedule = keras.optimizers.schedules.ExponentialDecay(1.0, 10, 0.5)
    model = _linear_model(keras.optimizers.SGD(learning_rate=schedule))
    with pytest.raises(ValueError, match="needs a constant learning rate"):
        model.fit(np.ones((2, 1), "float32"), np.zeros((2, 1), "float32"), epochs=1,
                  verbose=0, callbacks=[TimeBudget(60, anneal=True)])


def test_step_limit_counts_a_run_the_budget_cut_mid_epoch_and_stops_another_there():
    """StepLimit() counts a run that a TimeBudget stopped mid-epoch (validation and early
    stopping in the loop); StepLimit(n) then stops another run after exactly n steps, in
    the same epoch; one counter keeps counting across fit calls."""
    import keras
    import numpy as np

    from kerasattn.training import StepLimit

    tick = _Tick()

    class Clock(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            tick.now += 1.0                                      # 1 s per training step

    x, y = np.ones((8, 1), "float32"), np.zeros((8, 1), "float32")
    budget = TimeBudget(5.5)                                     # crossed by step 6
    budget.clock = tick
    counted = StepLimit()

    def fit(model, callbacks, epochs=5):
        stop = keras.callbacks.EarlyStopping(patience=3)
        return model.fit(x, y, batch_size=2, epochs=epochs, shuffle=False, verbose=0,
                         validation_data=(x, y), callbacks=[stop, *callbacks])

    history = fit(_linear_model(keras.optimizers.SGD(learning_rate=0.1)),
                  [Clock(), counted, budget])
    assert budget.stopped and counted.steps == 6 and not counted.stopped
    assert len(history.epoch) == 2                      # 4 steps, then 2 of the second epoch
    limit = StepLimit(counted.steps)
    other = fit(_linear_model(keras.optimizers.SGD(learning_rate=0.1)), [limit])
    assert limit.stopped and limit.steps == 6 and len(other.epoch) == len(history.epoch)
    fit(_linear_model(keras.optimizers.SGD(learning_rate=0.1)), [counted], epochs=1)
    assert counted.steps == 6 + 4                       # the count runs on across fit calls


@pytest.mark.parametrize("max_steps", [0, -3, 2.5, "4", True])
def test_bad_step_limit_names_the_argument(max_steps):
    from kerasattn.training import StepLimit

    with pytest.raises(ValueError, match=r"`max_steps` must be an int >= 1 or None; received "
                                         r"max_steps="):
        StepLimit(max_steps)
