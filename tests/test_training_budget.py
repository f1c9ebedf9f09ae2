"""TimeBudget: stops fit after the batch that crosses the wall-clock budget."""
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


@pytest.mark.parametrize("seconds", [0, -1, "10", None])
def test_bad_budget_names_the_argument(seconds):
    with pytest.raises(ValueError, match=r"`seconds` must be a number > 0; received"):
        TimeBudget(seconds)
