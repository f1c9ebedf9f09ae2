"""`kerasattn lab`: the attention lab on a student's exercise-16 file, on the current backend.

The solution runs end to end in quick mode (training, decoding with exercise 25's
greedy_decode or the kit's loop, BLEU, figures, report); an untouched exercise and broken
files stop before training with one paragraph naming the file and the problem; a file
that fails the grader's checks is refused with the grader's feedback.
"""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from conftest import ROOT

from kerasattn import cli
from kerasattn.course import lab

SOLUTION = ROOT / "solutions" / "16_lab_bahdanau_model.py"
EXERCISE = ROOT / "exercises" / "16_lab_bahdanau_model.py"


def _lab(capsys, *argv):
    rc = cli.main(["lab", *map(str, argv)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_the_solution_runs_end_to_end_and_writes_the_report(tmp_path, capsys):
    out = tmp_path / "lab"
    rc, stdout, err = _lab(capsys, SOLUTION, "--quick", "--no-grade", "--out", out)
    assert rc == 0, err
    report = (out / "report.md").read_text(encoding="utf-8")
    record = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for name in ("attention.png", "bleu_vs_length.png", "training_curves.png"):
        assert (out / name).stat().st_size > 1000, name
        assert f"({name})" in report
    assert set(record["models"]) == {"LabModel", "seq2seq"}
    for r in record["models"].values():
        assert 0.0 <= r["bleu"] <= 100.0 and r["epochs"] == 1 and r["params"] > 0
        assert r["train_seconds"] > 0 and len(r["by_length"]) == 4
    # solutions/25_greedy_decoding.py sits beside it: its greedy_decode decodes
    assert "your `greedy_decode` (exercise 25" in record["decoding"]
    assert "| source length (tokens) | test sentences | your LabModel | seq2seq |" in report
    assert "What to look for" in report and "not graded before training" in report
    assert str(out / "report.md") in stdout


@pytest.mark.parametrize("greedy", ["solution", "untouched", "missing"])
def test_decoding_uses_exercise_25_when_it_is_filled_in(tmp_path, greedy):
    """The student's greedy_decode decodes when it works; otherwise the kit's loop calls
    the student's decode_step, and the note for the report says why."""
    from kerasattn.course.options import Settings
    from kerasattn.data import Vocabulary

    folder = ROOT / "solutions"
    if greedy != "solution":
        folder = tmp_path
        shutil.copy(SOLUTION, folder)
        if greedy == "untouched":
            shutil.copy(ROOT / "exercises" / "25_greedy_decoding.py", folder)
    vocab = Vocabulary.build(["a b c d e", "f g h"])
    cls = lab.load_lab_model(folder / SOLUTION.name)
    model = cls(len(vocab), len(vocab), embed_dim=4, units=4, attention_units=4)
    model.build()
    sources = ["a b c", "d e f g h", "b"]
    hyps, used, note = lab.translate_test(lab._Decoder(model, compile_steps=False),
                                          folder / SOLUTION.name, sources, vocab, vocab,
                                          Settings(quick=True))
    assert len(hyps) == 3 and all(isinstance(h, str) for h in hyps)
    if greedy == "solution":
        assert used is not lab.kit_greedy_decode
        assert "your `greedy_decode` (exercise 25" in note
    else:
        assert used is lab.kit_greedy_decode
        assert "the kit's greedy loop calling your `decode_step`" in note
        assert ("not filled in yet" if greedy == "untouched" else "there is no") in note
    # the same translations either way
    kit, _, _ = lab.translate_test(lab._Decoder(model, compile_steps=False), tmp_path / "x.py",
                                   sources, vocab, vocab, Settings(quick=True))
    assert hyps == kit


def test_an_untouched_exercise_asks_to_fill_it_in_first(tmp_path, capsys):
    # grading is on: the stub is caught before the grader starts
    rc, _, err = _lab(capsys, EXERCISE, "--quick", "--out", tmp_path)
    assert rc == 2
    assert "fill in exercise 16 first" in err and f"kerasattn grade {EXERCISE}" in err
    assert "LabModel.encode" in err and "Traceback" not in err
    assert not (tmp_path / "report.md").exists()


def _broken(tmp_path, old, new):
    text = SOLUTION.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / "16_lab_bahdanau_model.py"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


@pytest.mark.parametrize("old, new, expected", [
    ("        return ops.stack(logits, axis=1)  # (B, T, V_tgt)",
     "        return ops.stack(logits, axis=1) +",
     ["line {line}: syntax error"]),
    ("class LabModel(keras.Model):", "class MyModel(keras.Model):",
     ["defines no class `LabModel`"]),
    ("self.embed_dim, self.units = int(embed_dim), int(units)",
     "self.embed_dim, self.units = int(embed_dim), int(units) // 0",
     ["constructing LabModel(", "raised ZeroDivisionError", "(line {line}:"]),
    ("        return ops.stack(logits, axis=1)  # (B, T, V_tgt)",
     "        return ops.stack(logits, axis=0)",
     ["LabModel's call returned logits of shape (4, 2, 13)", "expected (2, 4, 13)"]),
    ("        return h_enc, s_0, source_mask", "        return h_enc, s_0",
     ["LabModel.encode must return (h_enc, s_0, source_mask)", "of 2 values"]),
    ("        return logits_t, s_t, alpha_t", "        return logits_t, s_t, alpha_t[:, :2]",
     ["LabModel.decode_step returned alpha_t of shape (2, 2)", "expected (2, 5)"]),
], ids=["syntax error", "no LabModel", "exception in __init__", "wrong output shape",
        "encode returns 2 values", "attention of the wrong shape"])
def test_a_broken_file_gets_one_clear_paragraph(tmp_path, capsys, old, new, expected):
    path = _broken(tmp_path, old, new)
    line = next(k for k, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if new.strip() in text)
    rc, _, err = _lab(capsys, path, "--quick", "--out", tmp_path / "out")
    assert rc == 2
    assert "Traceback" not in err and str(path) in err
    assert len(err.strip().splitlines()) == 1, err  # one paragraph
    for text in expected:
        assert text.format(line=line) in err, err


def test_a_missing_file_is_named(tmp_path, capsys):
    rc, _, err = _lab(capsys, tmp_path / "nope.py", "--quick")
    assert rc == 2 and "EXERCISE_FILE: no such file" in err and "nope.py" in err


def test_a_file_that_fails_the_grader_is_refused_with_its_feedback(tmp_path, capsys,
                                                                   monkeypatch):
    entry = {"exercise": lab.EXERCISE, "status": "graded", "score": 15.0,
             "max_score": 18.0, "messages": [], "checks": [
                 {"name": "decode_step: attention weights over the source", "results": {
                     "torch": {"status": "failed", "message": "max abs error 0.3\nmatches "
                               "a known mistake: source mask ignored."}}},
                 {"name": "encode: s_0 = tanh(W_s h_1(bwd) + b_s)", "results": {
                     "torch": {"status": "passed", "message": ""}}}]}
    monkeypatch.setattr(lab, "grade_lab_file", lambda path, backend: entry)
    rc, _, err = _lab(capsys, SOLUTION, "--quick", "--out", tmp_path)
    assert rc == 2 and "Traceback" not in err
    assert "does not pass the grader's checks of exercise 16" in err and "(15/18)" in err
    assert "FAIL  decode_step: attention weights over the source: max abs error 0.3" in err
    assert "s_0 = tanh" not in err and "--no-grade" in err
    assert not (tmp_path / "report.md").exists()


@pytest.mark.slow
def test_the_grader_refuses_a_known_mistake(tmp_path):
    import keras

    path = _broken(tmp_path, "memory_mask=source_mask)  # (B, 2u), (B, S)",
                   "memory_mask=None)  # (B, 2u), (B, S)")
    entry = lab.grade_lab_file(path, keras.backend.backend())
    error = lab._grade_failure(path, entry, keras.backend.backend())
    assert error is not None and "source mask ignored" in str(error)
    solution = lab.grade_lab_file(SOLUTION, keras.backend.backend())
    assert lab._grade_failure(SOLUTION, solution, keras.backend.backend()) is None


def test_the_kit_loop_keeps_exercise_25s_contract():
    """The kit's loop (used without exercise 25) decodes as the reference does."""
    from keras import ops

    from kerasattn.reference import greedy_decode as reference_greedy

    rng = np.random.default_rng(0)
    emb, out = rng.normal(size=(7, 5)), rng.normal(size=(5, 7)) * 2
    out[:, 3] += np.linspace(-2, 3, 5)  # <eos> likely after a few steps

    def step_np(tokens, state, t):
        h = np.tanh(emb[np.asarray(tokens)] + state)
        return h @ out, h

    def step(tokens, state, t):
        h = ops.tanh(ops.take(ops.convert_to_tensor(emb, "float32"), tokens, axis=0) + state)
        return ops.matmul(h, ops.convert_to_tensor(out, "float32")), h

    state = rng.normal(size=(3, 5))
    got = lab.kit_greedy_decode(step, ops.convert_to_tensor(state, "float32"), 3, 6)
    want = reference_greedy(step_np, state, 6)
    for key in ("tokens", "lengths", "finished"):
        np.testing.assert_array_equal(np.asarray(ops.convert_to_numpy(got[key])), want[key])
