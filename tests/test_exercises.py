"""Exercises, solutions and their check specs, graded through the engine's public API.

On the current backend: every solution scores full marks; known wrong answers (made by
editing a solution) lose points and are named; every untouched exercise imports, raises
NotImplementedError in every check (so no check is passed by the skeleton code), and scores
0 without crashing the grader. One grading run per backend pass covers all of it and the
week-4 exercises of tests/test_exercises_lab.py (tests/course_grading.py).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from course_grading import CHECK_MUTATIONS, EXERCISES, MUTATIONS, SOLUTIONS

from kerasattn.grader.spec import load_spec, spec_paths

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "# BEGIN YOUR CODE", "# END YOUR CODE"


def _regions(text: str) -> list[str]:
    return re.findall(rf"{re.escape(BEGIN)}\n(.*?)\n\s*{re.escape(END)}", text, re.S)


def _outside(text: str) -> str:
    return re.sub(rf"{re.escape(BEGIN)}\n.*?\n(\s*){re.escape(END)}", BEGIN + END, text,
                  flags=re.S)


# ------------------------------------------------------------------- static layout
def test_layout_numbering_and_specs():
    stems = [p.stem for p in EXERCISES]
    assert len(stems) >= 12
    assert [int(s[:2]) for s in stems] == list(range(1, len(stems) + 1))
    assert stems == [p.stem for p in SOLUTIONS]
    assert set(stems) <= set(spec_paths())
    for stem in stems:
        spec = load_spec(spec_paths()[stem])
        assert spec.max_score > 0 and spec.cases and spec.checks


def test_gradescope_readme_states_the_points_the_specs_add_up_to():
    total = sum(load_spec(spec_paths()[p.stem]).max_score for p in EXERCISES)
    text = (ROOT / "gradescope" / "README.md").read_text()
    assert f"The {len(EXERCISES)} exercises are worth {total:g} points in all" in text


@pytest.mark.parametrize("stem", [p.stem for p in EXERCISES])
def test_exercise_matches_solution_outside_the_markers(stem):
    ex = (ROOT / "exercises" / f"{stem}.py").read_text()
    sol = (ROOT / "solutions" / f"{stem}.py").read_text()
    assert _outside(ex) == _outside(sol), "exercise and solution differ outside the markers"
    ex_regions, sol_regions = _regions(ex), _regions(sol)
    assert ex_regions and len(ex_regions) == len(sol_regions)
    for region in ex_regions:
        assert "raise NotImplementedError" in region.splitlines()[0]
    for region in sol_regions:
        assert "NotImplementedError" not in region
    doc = ast.get_docstring(ast.parse(ex))
    assert doc and f"kerasattn grade exercises/{stem}.py --backend all" in doc
    assert "Hints:" in doc and "Shapes (symbols)" in doc
    for text in (ex, sol):
        tree = ast.parse(text)
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import)
                    for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree)
                     if isinstance(n, ast.ImportFrom) and n.module}
        assert not imported & {"torch", "jax", "tensorflow", "solutions", "numpy"}, imported


@pytest.mark.parametrize("stem", [p.stem for p in EXERCISES])
def test_every_known_mistake_differs_from_the_reference(stem):
    """A variant equal to the expected output could never be reported: each must differ."""
    from kerasattn.grader.spec import Compare

    spec = load_spec(spec_paths()[stem])
    for case in spec.cases:
        checks = [c for c in spec.checks if isinstance(c, Compare) and c.case == case.name]
        if not any(c.variants for c in checks):
            continue
        inputs = case.build(np.random.default_rng(case.seed))
        expected = case.expected(dict(inputs))
        for check in checks:
            want = np.asarray(expected[check.expected_key or check.output], dtype=float)
            for variant in check.variants:
                got = np.asarray(variant.fn(dict(inputs)), dtype=float)
                assert got.shape != want.shape or not np.allclose(
                    got, want, atol=check.atol, rtol=check.rtol), (check.name, variant.name)


# --------------------------------------- the engine: solutions, mistakes, exercises
@pytest.fixture(scope="module")
def graded(graded_course):
    """The one grading run of this backend pass (tests/course_grading.py)."""
    return graded_course["backend"], graded_course["result"], graded_course["by_folder"]


def _failures(ex):
    return [(c["name"], r["message"][:500]) for c in ex["checks"]
            for r in c["results"].values() if r["status"] != "passed"]


def test_every_solution_scores_full_marks(graded):
    backend, result, by_folder = graded
    solutions = by_folder["solutions"]
    assert sorted(solutions) == [p.stem for p in SOLUTIONS]
    for stem, ex in solutions.items():
        assert ex["status"] == "graded", (stem, ex["messages"])
        assert ex["max_score"] > 0
        assert ex["score"] == ex["max_score"], (stem, backend, _failures(ex))


@pytest.mark.parametrize("index", range(len(MUTATIONS)), ids=[m[0] for m in MUTATIONS])
def test_known_mistake_loses_points_and_is_named(graded, index):
    stem, _, _, name = MUTATIONS[index]
    ex = graded[2]["mutant"][index]
    assert ex["status"] == "graded", ex["messages"]
    assert 0 <= ex["score"] < ex["max_score"]
    messages = " ".join(m for _, m in _failures(ex))
    assert "matches a known mistake" in messages and name in messages, messages


@pytest.mark.parametrize("mutation", CHECK_MUTATIONS, ids=[m[0] for m in CHECK_MUTATIONS])
def test_a_property_check_catches_its_mistake(graded, mutation):
    stem, _, _, check_name = mutation
    ex = graded[2]["check"][stem]
    assert ex["status"] == "graded", ex["messages"]
    failed = [name for name, _ in _failures(ex)]
    assert check_name in failed, (failed, _failures(ex))
    assert ex["score"] < ex["max_score"]


def test_untouched_exercises_score_zero_with_feedback(graded):
    _, result, by_folder = graded
    exercises = by_folder["exercises"]
    assert sorted(exercises) == [p.stem for p in EXERCISES]
    for stem, ex in exercises.items():
        assert ex["status"] == "graded", (stem, ex["messages"])
        assert ex["score"] == 0.0, stem
        messages = [r["message"] for c in ex["checks"] for r in c["results"].values()]
        # Every check failed because the skeleton raised NotImplementedError, which also
        # shows that the file imported fine.
        assert messages and all("NotImplementedError" in m or "not implemented" in m
                                for m in messages), (stem, messages[:2])
    assert result["score"] == sum(e["score"] for e in result["exercises"])


def test_the_whole_run_is_valid_gradescope_output(graded):
    import json

    from kerasattn.grader import report

    _, result, _ = graded
    payload = json.loads(report.to_gradescope(result))
    assert len(payload["tests"]) == sum(len(e["checks"]) for e in result["exercises"])
    for t in payload["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output", "number"}
        assert t["status"] in ("passed", "failed")
        assert t["status"] == "passed" or t["output"], t     # a failed check says why
        assert 0 <= t["score"] <= t["max_score"] + 1e-9
    assert sum(t["score"] for t in payload["tests"]) == pytest.approx(result["score"], abs=1e-2)


# Exercises 01-14 carry the "What you may use / may NOT use" section; the ones added after
# them state their rules in their own words.
RULED = [p for p in EXERCISES if int(p.stem[:2]) <= 14]


@pytest.mark.parametrize("path", RULED, ids=lambda p: p.stem)
def test_docstring_lists_what_the_exercise_forbids(path):
    """Every name the spec forbids is named in the exercise's "may NOT use" paragraph."""
    from kerasattn.grader.spec import ALWAYS_FORBIDDEN

    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert "What you may use:" in doc and "What you may NOT use" in doc, path.stem
    rules = " ".join(doc.split("What you may NOT use", 1)[1].split("\n\n")[0].split())
    spec = load_spec(spec_paths()[path.stem])
    for name in spec.forbidden:
        last = name.rsplit(".", 1)[-1]
        assert f"``{name}``" in rules or f"``{last}``" in rules, (path.stem, name, rules)
    for name in ALWAYS_FORBIDDEN[1:]:
        assert f"``{name}``" in rules, (path.stem, name)
    assert "NumPy on tensors" in rules and "solutions" in rules


def test_noir_answer_key_matches_the_exercise_inputs():
    """The written answer key of exercise 01 is what NumPy computes from its own numbers."""
    import importlib.util

    path = ROOT / "exercises" / "01_noir_by_hand.py"
    module_spec = importlib.util.spec_from_file_location("_ex01", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    h_enc, s_prev = np.asarray(module.H_ENC), np.asarray(module.S_PREV)
    e = h_enc @ s_prev
    alpha = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
    c = alpha @ h_enc
    doc = module.__doc__.split("Answer key", 1)[1]
    for name, values in (("e", e), ("alpha", alpha), ("c", c)):
        line = next(ln for ln in doc.splitlines() if ln.strip().startswith(f"{name} "))
        written = [float(x) for x in re.findall(r"-?\d+\.\d+", line.split("=", 1)[1])]
        np.testing.assert_allclose(written[:len(values)], values, atol=5e-5, err_msg=name)
