"""The debugging exercises 14, 15 and 17 start from a symptom their own run shows.

Each exercise's ``python exercises/NN_....py`` trains a tiny model on the student's code
(:mod:`kerasattn.course.symptoms`). On the current backend: the broken code (the exercise
with its ``raise`` lines deleted, nothing fixed) shows the symptom the docstring describes,
a half-repaired one still shows one, and the solution shows none; an untouched exercise's
run says to delete the ``raise`` lines; the docstrings open with the symptom, and the
where-to-look / what-to-compare / fix guidance is in the hints.
"""
from __future__ import annotations

import ast
import importlib.util
import math
import re
import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

from kerasattn.course import symptoms
from kerasattn.grader import hints
from kerasattn.grader.spec import spec_paths

ROOT = Path(__file__).resolve().parents[1]
STEMS = ["14_debug_uniform_attention", "15_debug_the_the_the", "17_debug_look_ahead_leak"]


def _without_raise(text: str) -> str:
    """The exercise with its ``raise`` lines deleted: the student's code, bugs and all."""
    out = re.sub(r' *raise NotImplementedError\(\n *"[^"]*"\)\n', "", text)
    assert "raise NotImplementedError" not in out
    return out


def _load(tmp_path, stem: str, kind: str, edits=()):
    """Load ``kind`` ("exercise": untouched, "broken": raise lines deleted, "solution")
    of an exercise as a module, after the textual ``edits`` (old, new)."""
    folder = "solutions" if kind == "solution" else "exercises"
    text = (ROOT / folder / f"{stem}.py").read_text()
    if kind == "broken":
        text = _without_raise(text)
    for old, new in edits:
        assert text.count(old) == 1, f"edit of {stem} no longer applies: {old!r}"
        text = text.replace(old, new)
    path = tmp_path / kind / f"{stem}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"_{kind}_{stem[:2]}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------- the exercise files
@pytest.mark.parametrize("stem", STEMS)
def test_an_untouched_exercise_run_asks_for_the_raise_lines_to_go(stem, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [f"{stem}.py"])
    runpy.run_path(str(ROOT / "exercises" / f"{stem}.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "still starts with `raise NotImplementedError`" in out, out
    assert "Delete the `raise` statement of every marked region" in out


@pytest.mark.parametrize("stem", STEMS)
def test_the_docstring_opens_with_the_symptom_and_the_hints_go_where_to_look_compare_fix(
        stem):
    doc = ast.get_docstring(ast.parse((ROOT / "exercises" / f"{stem}.py").read_text()))
    number = int(stem[:2])
    opening = doc.split("\n\n")[1]
    assert opening.startswith("A student's"), opening
    # the symptom as the run prints it, pasted right after the opening paragraph
    printed = doc.split("\n\n", 2)[2]
    assert printed.startswith("    Training the "), printed[:200]
    for n in (1, 2, 3):
        assert f"kerasattn hint {number}" + (f" {n}" if n > 1 else "") in doc
    found = hints.hints_of(spec_paths()[stem])
    assert len(found) == 3
    for hint, tier in zip(found, ("Where to look:", "What to compare:", "The fix:")):
        assert hint.startswith(tier), (stem, hint[:40])


# ---------------------------------------------------------------- exercise 14
def _uniform(module, png=None):
    return symptoms.uniform_attention(module.GeneralAttention, verbose=False, png=png)


def test_14_broken_layer_learns_nothing_and_attends_uniformly(tmp_path):
    out = _uniform(_load(tmp_path, STEMS[0], "broken"), png=tmp_path / "heatmap.png")
    assert (tmp_path / "heatmap.png").stat().st_size > 0
    assert np.ptp(out["losses"]) < 1e-6           # the loss does not move
    assert out["w_change"] == 0.0                 # nor does W
    assert out["row_spread"] < 1e-3               # every row is flat over the real words
    np.testing.assert_allclose(out["row_sums"], 1.25, atol=1e-4)  # 5 words x 1/4
    assert out["right_words"] == 0


@pytest.mark.parametrize("fixed, edit", [
    ("scale", ("scale = 1 // math", "scale = 1 / math")),
    ("axis", ("mask, axis=1)", "mask, axis=-1)")),
], ids=["scale fixed, axis not", "axis fixed, scale not"])
def test_14_one_fix_of_two_still_shows_a_symptom(tmp_path, fixed, edit):
    out = _uniform(_load(tmp_path, STEMS[0], "broken", [edit]))
    if fixed == "scale":   # the weights learn, but the rows do not sum to 1
        assert out["w_change"] > 0.1
        assert np.abs(out["row_sums"] - 1.0).max() > 0.05, out["row_sums"]
    else:                  # rows sum to 1, but they stay flat and W does not move
        np.testing.assert_allclose(out["row_sums"], 1.0, atol=1e-4)
        assert out["w_change"] == 0.0 and out["row_spread"] < 1e-3


def test_14_solution_learns_where_to_look(tmp_path):
    out = _uniform(_load(tmp_path, STEMS[0], "solution"))
    assert out["losses"][-1] < 0.2 * out["losses"][0]
    assert out["w_change"] > 0.1
    np.testing.assert_allclose(out["row_sums"], 1.0, atol=1e-4)
    assert out["right_words"] == 4 and out["row_spread"] > 0.5


# ---------------------------------------------------------------- exercise 15
def _translate(module):
    return symptoms.the_the_the(module.make_initializer, module.attention_scores,
                                module.teacher_forcing_ratio, module.next_decoder_inputs,
                                verbose=False)


def test_15_broken_translator_stays_above_a_blind_guess_and_stutters(tmp_path):
    out = _translate(_load(tmp_path, STEMS[1], "broken"))
    guess = math.log(10)  # a uniform guess over the 10 words the model can write
    assert out["losses"][0] > 4 * guess            # starts far above it
    assert min(out["losses"][-5:]) > guess         # and is still above it at the end
    assert out["ratios"][0] < out["ratios"][-1]    # the logged teacher forcing rises
    assert out["accuracy"] < 0.6
    assert out["stutter"] > 0.05                   # "the dog dog"
    assert out["different"] < out["sources"]       # different sentences, one translation


def test_15_solution_translates(tmp_path):
    out = _translate(_load(tmp_path, STEMS[1], "solution"))
    assert out["losses"][-1] < 0.01
    assert out["ratios"][0] == 1.0 and out["ratios"][-1] < out["ratios"][0]
    assert out["accuracy"] == 1.0 and out["stutter"] == 0.0
    assert out["different"] == out["sources"]


# ---------------------------------------------------------------- exercise 17
FLOOR_17 = math.log(6) / 5  # the first word after <bos> is one of six: 5 labels a sentence
ARRAYS_17 = ("decoder_inputs = labels\n",
             'decoder_inputs = ops.concatenate([ops.full((n, 1), bos_id, "int32"), targets], '
             "axis=1)\n")
CAUSAL_17 = ("a = self.self_attention(x, x, query_mask=padding, value_mask=padding)",
             "a = self.self_attention(x, x, query_mask=padding, value_mask=padding, "
             "use_causal_mask=True)")


def _leak(module):
    return symptoms.look_ahead_leak(module.make_teacher_forcing_arrays, module.TinyDecoder,
                                    verbose=False)


@pytest.mark.parametrize("edits", [(), (CAUSAL_17,), (ARRAYS_17,)],
                         ids=["both bugs", "arrays bug only", "causal-mask bug only"])
def test_17_broken_decoder_beats_the_honest_loss_and_fails_on_its_own(tmp_path, edits):
    out = _leak(_load(tmp_path, STEMS[2], "broken", edits))
    assert out["losses"][-1] < 0.25 * FLOOR_17     # too good to be true
    assert out["teacher_forced"] >= 0.95
    gap = out["teacher_forced"] - out["free_running"]
    assert gap >= (0.75 if edits != (ARRAYS_17,) else 0.1), out
    if edits != (ARRAYS_17,):                      # reading its input: one word, repeated
        assert sum(len(set(t.split())) == 1 for t in out["outputs"]) >= 4, out["outputs"]


def test_17_solution_loss_stops_at_the_honest_floor_and_both_accuracies_agree(tmp_path):
    out = _leak(_load(tmp_path, STEMS[2], "solution"))
    assert out["losses"][-1] > 0.9 * FLOOR_17
    assert out["teacher_forced"] == 1.0 and out["free_running"] == 1.0
