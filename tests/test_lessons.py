"""Every lesson runs in quick mode and writes its figures (valid PNGs of the promised size).

Lessons run in this process (on the test's backend) through the same entry point as
`kerasattn lesson N`. They share one output root, as they would for a student, so lesson 05
reuses the results lessons 00-04 recorded with the same settings instead of retraining.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import keras
import numpy as np
import pytest

from kerasattn._env import MODEL_NAMES
from kerasattn.course import Lesson, Settings, evolution_rows

pytestmark = pytest.mark.lesson

EXPECTED_FIGURES = {
    0: ["architecture_seq2seq.png", "architecture_bahdanau.png",
        "curves_with_without_attention.png", "bleu_vs_length.png", "attention_bahdanau.png",
        "attention_bahdanau_european_economic_area.png"],
    1: ["architecture_bahdanau_multihead.png", "attention_heads_bahdanau_multihead.png",
        "curves_bahdanau_multihead.png"],
    2: ["architecture_encoder_self_attention.png", "curves_encoder_self_attention.png",
        "attention_encoder_self_attention.png", "encoder_self_attention_heads.png"],
    3: ["causal_mask_4x4.png", "architecture_decoder_self_attention.png",
        "attention_cross_decoder_self_attention.png",
        "attention_self_decoder_self_attention.png"],
    4: ["positional_encoding.png", "architecture_transformer_decoder_on_gru.png",
        "attention_cross_transformer_decoder_on_gru.png",
        "attention_self_transformer_decoder_on_gru.png"],
    5: ["architecture_transformer.png", "attention_cross_transformer.png",
        "evolution_table.png"],
    6: ["curves_scheduled_sampling.png", "cumulative_attention.png",
        "bleu_vs_length_backtranslation.png"],
}
FIXED_SIZES = {"causal_mask_4x4.png": (440, 400), "positional_encoding.png": (800, 400),
               "evolution_table.png": (900, 320), "bleu_vs_length.png": (640, 400)}


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    assert data[-8:-4] == b"IEND", f"{path.name} is truncated"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def out_root(tmp_path_factory):
    return tmp_path_factory.mktemp("lessons")


@pytest.mark.slow
@pytest.mark.parametrize("number", range(7))
def test_lesson_quick_writes_its_figures(number, out_root, capsys):
    from kerasattn import cli

    out = out_root / f"lesson_{number:02d}"
    rc = cli.main(["lesson", str(number), "--quick", "--out", str(out)])
    printed = capsys.readouterr().out
    assert rc == 0, printed[-3000:]
    record = json.loads((out / "results.json").read_text())
    assert record["backend"] == keras.backend.backend()
    assert record["settings"]["quick"] is True
    for name in EXPECTED_FIGURES[number]:
        path = out / name
        assert path.is_file(), f"lesson {number} did not write {name}"
        width, height = png_size(path)
        assert width >= 200 and height >= 150
        if name in FIXED_SIZES:
            assert (width, height) == FIXED_SIZES[name], name
        assert name in record["figures"]
        assert name in printed  # the lesson says where its figures are
    assert record["models"], "the lesson recorded no model"
    if number == 6:   # the tables lesson 06 prints are kept in its record
        kept = record["measurements"]
        assert set(kept["coverage, long test sentences"]) == {
            "teacher forcing, greedy", "teacher forcing, beam 4",
            "teacher forcing, beam 4 + coverage penalty 0.2", "coverage, greedy"}
        steps = kept["training steps"]   # coverage trains the plain continuation's steps
        assert 1 <= steps["coverage"] <= steps["teacher forcing"]
        drops = [v for k, v in kept.items() if k.startswith("after one wrong word")]
        assert len(drops) == 2 and all(0 <= d["corrupted"] <= 1 for d in drops)
    for model, r in record["models"].items():
        assert r["params"] > 0 and len(r["history"]["loss"]) == r["epochs"]
        assert r["n_test"] == 6   # quick mode scores the 6 quick test pairs
        buckets = r["by_length"]
        assert [b["label"] for b in buckets] == ["1-10", "11-20", "21-30", "31+"]
        assert sum(b["n"] for b in buckets) == r["n_test"]
        assert all((b["bleu"] is None) == (b["n"] == 0) for b in buckets)


@pytest.mark.slow
def test_lesson_05_evolution_table_has_all_seven_models(out_root):
    table = (out_root / "lesson_05" / "evolution_table.md").read_text().splitlines()
    names = [line.split("|")[1].strip() for line in table[2:]]
    assert names == list(MODEL_NAMES)


def test_lesson_record_keeps_json_and_names_what_is_not(tmp_path):
    lesson = Lesson(6, "records", Settings(quick=True, out=tmp_path / "lesson_06"))
    lesson.record("drop", {"clean": 0.9, "corrupted": 0.8})
    assert lesson.measurements == {"drop": {"clean": 0.9, "corrupted": 0.8}}
    with pytest.raises(ValueError, match=r"Lesson.record\('bad', ...\).*ndarray"):
        lesson.record("bad", np.zeros(2))


def test_evolution_rows_default_mode_does_not_train_unmeasured_models(tmp_path, capsys):
    """Lesson 05 in default mode must not train the seven models itself (7x the budget):
    rows of models no lesson recorded carry the parameter count only, and it says which
    lessons to run."""
    settings = Settings(quick=True, out=tmp_path / "lesson_05")
    lesson = Lesson(5, "evolution rows", settings)
    rows = evolution_rows(lesson, train_missing=False)
    printed = capsys.readouterr().out
    assert [r["model"] for r in rows] == list(MODEL_NAMES)
    assert all(r["params"] > 0 and r["bleu"] is None for r in rows)
    assert "kerasattn lesson 0" in printed and "kerasattn lesson 4" in printed
    assert "lesson 5" not in printed.split("Run", 1)[-1]   # lesson 05 is this one
    assert not lesson.results                             # nothing was trained


NOISE = ("oneDNN", "cuInit", "absl::InitializeLog", "cpu_feature_guard", "cudart_stub")


@pytest.mark.slow
@pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                    reason="checks TensorFlow's start-up messages: tensorflow pass only (the "
                           "options themselves are checked on every backend in test_cli.py)")
def test_lesson_script_takes_every_option_and_writes_under_the_current_directory(tmp_path):
    """`python lessons/01_*.py OPTIONS` run from an empty directory: the options reach the
    lesson, outputs land in ./outputs/lessons/lesson_01, and TensorFlow prints none of its
    start-up messages."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, KERAS_BACKEND=keras.backend.backend(), PYTHONPATH=str(ROOT))
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)   # the kit must quiet TensorFlow by itself
    script = next((ROOT / "lessons").glob("01_*.py"))
    proc = subprocess.run([sys.executable, str(script), "--quick", "--epochs", "2",
                           "--seed", "5", "--train-size", "32", "--minutes", "3"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    record = json.loads((tmp_path / "outputs" / "lessons" / "lesson_01" / "results.json")
                        .read_text())
    assert record["settings"]["seed"] == 5 and record["settings"]["train_size"] == 32
    # `--minutes` is per model: records compare by it (lesson 00 splits its default budget)
    assert record["settings"]["epochs"] == 2 and record["settings"]["minutes_per_model"] == 3
    assert all(r["epochs"] == 2 for r in record["models"].values())
    noise = [line for line in proc.stderr.splitlines() if any(n in line for n in NOISE)]
    assert not noise, "\n".join(noise)
