"""The week-4 exercises: 15 (debugging "the the the"), 16 (the lab model), 18 (coverage).

tests/test_exercises.py grades every solution and every untouched exercise; this file
checks what is particular to these three on the current backend, in one grading run:
the broken code of exercise 15 (its ``raise`` lines deleted, nothing fixed) fails every
check, including the tiny training run; known mistakes in exercises 16 and 18, made by
editing the solution, lose points and are named. The grader names a known mistake in the
parent, from the outputs: each backend pass grades two of the six mistakes, a different two
per backend, so the three passes together cover all six. The parent-side checks
(references and schedules) need no backend.
"""
from __future__ import annotations

import re
from pathlib import Path

import keras
import numpy as np
import pytest

from kerasattn._env import BACKENDS
from kerasattn.grader import grade
from kerasattn.grader.spec import load_spec, spec_paths

ROOT = Path(__file__).resolve().parents[1]

# (stem, old, new, name of the known mistake the grader must report)
MUTATIONS = [
    ("16_lab_bahdanau_model", "memory_mask=source_mask)  # (B, 2u), (B, S)",
     "memory_mask=None)  # (B, 2u), (B, S)",
     "source mask ignored"),
    ("16_lab_bahdanau_model", "h_enc, _, h_bwd = self.encoder(", "h_enc, h_bwd, _ = self.encoder(",
     "s_0 from the forward GRU's final state"),
    ("16_lab_bahdanau_model", "[self.tgt_embedding(y_prev), c_t]",
     "[c_t, self.tgt_embedding(y_prev)]", "GRU input ordered [c_t; y_{t-1}]"),
    ("18_coverage", "loss = loss + coverage_loss(alpha, coverage)",
     "loss = loss + coverage_loss(alpha, coverage + alpha)",
     "loss computed after adding the step's own weights"),
    ("18_coverage", "wc = coverage[:, :, None] * self.w_c", "wc = 0.0 * self.w_c",
     "coverage term missing"),
    ("18_coverage", "ops.minimum(weights, coverage)", "ops.maximum(weights, coverage)",
     "max instead of min"),
]


#: the mutations this backend's pass grades (k % 3 == the backend's index)
HERE = [k for k in range(len(MUTATIONS))
        if k % len(BACKENDS) == BACKENDS.index(keras.backend.backend())]


def _broken_15(text: str) -> str:
    """Exercise 15 with its ``raise`` lines deleted: the student's code, bugs and all."""
    return re.sub(r' *raise NotImplementedError\(\n *"[^"]*"\)\n', "", text)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    files = []
    for k in HERE:
        stem, old, new, _ = MUTATIONS[k]
        text = (ROOT / "solutions" / f"{stem}.py").read_text()
        assert text.count(old) == 1, f"mutation of {stem} no longer applies: {old!r}"
        path = tmp_path_factory.mktemp(f"mutant{k}") / f"{stem}.py"
        path.write_text(text.replace(old, new))
        files.append(path)
    broken = _broken_15((ROOT / "exercises" / "15_debug_the_the_the.py").read_text())
    assert "raise NotImplementedError" not in broken
    path = tmp_path_factory.mktemp("broken") / "15_debug_the_the_the.py"
    path.write_text(broken)
    files.append(path)
    result = grade(files, backends=(keras.backend.backend(),))
    return {Path(ex["path"]).parent.name: ex for ex in result["exercises"]}


def test_every_mutation_still_applies_to_its_solution():
    for stem, old, _, name in MUTATIONS:
        text = (ROOT / "solutions" / f"{stem}.py").read_text()
        assert text.count(old) == 1, f"mutation {name!r} of {stem} no longer applies: {old!r}"


def _failures(ex):
    return {c["name"]: r["message"] for c in ex["checks"] for r in c["results"].values()
            if r["status"] != "passed"}


@pytest.mark.parametrize("k", HERE, ids=[MUTATIONS[k][3] for k in HERE])
def test_known_mistake_loses_points_and_is_named(graded, k):
    stem, _, _, name = MUTATIONS[k]
    ex = next(e for folder, e in graded.items() if folder.startswith(f"mutant{k}"))
    assert ex["exercise"] == stem and ex["status"] == "graded", ex["messages"]
    assert 0 <= ex["score"] < ex["max_score"]
    messages = " ".join(_failures(ex).values())
    assert "matches a known mistake" in messages and name in messages, messages


def test_broken_code_of_exercise_15_fails_every_fix_and_the_training_loss(graded):
    ex = next(e for folder, e in graded.items() if folder.startswith("broken"))
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
