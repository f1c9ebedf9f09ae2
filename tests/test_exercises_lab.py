"""The week-4 exercises: 15 (debugging "the the the"), 16 (the lab model), 18 (coverage).

tests/test_exercises.py checks every solution and every untouched exercise; this file
checks what is particular to these three on the current backend, from the same grading run
(tests/course_grading.py): the broken code of exercise 15 (its ``raise`` lines deleted,
nothing fixed) fails every check, including the tiny training run; known mistakes in
exercises 16 and 18, made by editing the solution, lose points and are named (two of the
six per backend pass, all six over the three passes). The parent-side checks (references
and schedules) need no backend.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from course_grading import LAB_HERE, LAB_MUTATIONS

from kerasattn.grader.spec import load_spec, spec_paths

ROOT = Path(__file__).resolve().parents[1]


def test_every_mutation_still_applies_to_its_solution():
    for stem, old, _, name in LAB_MUTATIONS:
        text = (ROOT / "solutions" / f"{stem}.py").read_text()
        assert text.count(old) == 1, f"mutation {name!r} of {stem} no longer applies: {old!r}"


def _failures(ex):
    return {c["name"]: r["message"] for c in ex["checks"] for r in c["results"].values()
            if r["status"] != "passed"}


@pytest.mark.parametrize("k", LAB_HERE, ids=[LAB_MUTATIONS[k][3] for k in LAB_HERE])
def test_known_mistake_loses_points_and_is_named(graded_course, k):
    stem, _, _, name = LAB_MUTATIONS[k]
    ex = graded_course["by_folder"]["lab"][k]
    assert ex["exercise"] == stem and ex["status"] == "graded", ex["messages"]
    assert 0 <= ex["score"] < ex["max_score"]
    messages = " ".join(_failures(ex).values())
    assert "matches a known mistake" in messages and name in messages, messages


def test_broken_code_of_exercise_15_fails_every_fix_and_the_training_loss(graded_course):
    ex = graded_course["by_folder"]["broken"]["15_debug_the_the_the"]
    assert ex["status"] == "graded", ex["messages"]
    failures = _failures(ex)
    assert not any("not implemented" in m for m in failures.values()), failures
    # Every per-fix check fails; the tiny run's loss stays above the threshold. (The
    # broken run's greedy outputs are only partly wrong, and on some backends right.)
    passed = {c["name"] for c in ex["checks"]} - set(failures)
    assert passed <= {"tiny training run: greedy outputs are right, not one repeated token"}
    loss = [m for name, m in failures.items() if "the loss falls below" in name]
    assert loss and "after 60 steps the loss is" in loss[0], failures


# ------------------------------------------------------------- parent side, no backend
def _spec(stem):
    return load_spec(spec_paths()[stem])


def test_schedules_reference_starts_at_one_and_decays():
    spec = _spec("15_debug_the_the_the")
    case = spec.case("schedule")
    inputs = case.build(np.random.default_rng(0))
    expected = case.expected(inputs)
    linear, sigmoid = expected["linear"], expected["inverse_sigmoid"]
    assert linear[0] == 1.0 and np.all(np.diff(linear) <= 0) and linear[-1] == 0.25
    assert np.all(np.diff(sigmoid) < 0) and 0.9 < sigmoid[0] < 1.0
    check = next(c for c in spec.checks if c.name.startswith("teacher forcing starts"))
    assert check.fn(expected, inputs) is None
    rising = {"linear": linear[::-1], "inverse_sigmoid": sigmoid}
    assert "starts at" in check.fn(rising, inputs)


def test_lab_model_reference_is_causal_and_ignores_source_padding():
    """The float64 reference itself has the properties the grader demands of students."""
    case = _spec("16_lab_bahdanau_model").case("model")
    inputs = case.build(np.random.default_rng(case.seed))
    forward = case.expected.__globals__["_forward"]
    base = forward(inputs, inputs["src"], inputs["dec"])
    padded = forward(inputs, inputs["src_padded"], inputs["dec"])
    future = forward(inputs, inputs["src"], inputs["dec_future"])
    np.testing.assert_allclose(base, padded, atol=1e-12)
    np.testing.assert_allclose(base[:, :2], future[:, :2], atol=1e-12)
    assert np.abs(base[:, 2:] - future[:, 2:]).max() > 1e-3


def test_coverage_reference_loss_is_zero_without_overlap_and_positive_with_it():
    case = _spec("18_coverage").case("loop")
    inputs = case.build(np.random.default_rng(case.seed))
    _, weights, coverages, loss = case.expected.__globals__["_loop"](
        inputs, inputs["queries"], inputs["memory"], inputs["mask"])
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-12)
    assert np.all(np.diff(coverages, axis=1) >= 0) and np.all(coverages[:, 0] == 0)
    assert np.all(loss > 0)  # softmax weights always overlap a little
    loss_case = _spec("18_coverage").case("loss")
    li = loss_case.build(np.random.default_rng(0))
    np.testing.assert_array_equal(
        np.minimum(li["disjoint"], li["disjoint_coverage"]).sum(-1), 0.0)
