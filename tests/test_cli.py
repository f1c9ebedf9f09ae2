"""The `kerasattn` command end to end: every subcommand, errors without tracebacks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import keras
import numpy as np
import pytest

from conftest import ROOT

from kerasattn import cli


def run_cli(*args, timeout=300):
    """Run `python -m kerasattn ARGS` in a child process on this test's backend."""
    env = dict(os.environ, KERAS_BACKEND=keras.backend.backend(), TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, "-m", "kerasattn", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_help_lists_every_subcommand():
    proc = run_cli("--help")
    assert proc.returncode == 0, proc.stderr
    for name in ("lesson", "train", "translate", "backends", "grade"):
        assert name in proc.stdout
    assert "_backend_worker" not in proc.stdout


def test_model_names_match_the_registry():
    from kerasattn.models import MODEL_NAMES

    assert tuple(cli.MODEL_NAMES) == tuple(MODEL_NAMES)


@pytest.mark.parametrize("argv, message", [
    (["--backend", "theano", "lesson", "0"], "--backend must be one of"),
    (["lesson", "7"], "no lesson 7"),
    (["train", "lstm", "--quick"], "MODEL must be one of"),
    (["train", "bahdanau", "--data", "/no/such/fra.txt"], "--data: no such file"),
    (["train", "bahdanau", "--minutes", "-1"], "--minutes must be >= 0; received -1"),
    (["translate", "/no/such/checkpoint", "the cat ."], "CHECKPOINT: no such directory"),
])
def test_clear_errors_without_traceback(capsys, argv, message):
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and "Traceback" not in err


def test_missing_backend_is_named(monkeypatch, capsys):
    real = cli.importlib.util.find_spec
    monkeypatch.setattr(cli.importlib.util, "find_spec",
                        lambda name, *a: None if name == "jax" else real(name, *a))
    rc = cli.main(["--backend", "jax", "lesson", "0", "--quick"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "backend 'jax' is not installed" in err and "kerasattn[jax]" in err
    assert "jax" not in cli.installed_backends()


def test_backend_switch_reruns_in_a_child_process(capfd):
    # keras is already imported here, so another backend must run in a fresh process; the
    # child reaches the lesson lookup and fails there, proving it ran with that backend
    other = next(b for b in cli.installed_backends() if b != keras.backend.backend())
    rc = cli.main(["--backend", other, "lesson", "8"])
    assert rc == 2
    assert "no lesson 8" in capfd.readouterr().err


def test_grade_delegates_to_the_grader(monkeypatch):
    calls = []
    fake = types.ModuleType("kerasattn.grader")
    fake.main = lambda argv: calls.append(list(argv)) or 7
    monkeypatch.setitem(sys.modules, "kerasattn.grader", fake)
    assert cli.main(["grade", "solutions", "--format", "json", "--backend", "all"]) == 7
    assert cli.main(["--backend", "jax", "grade", "exercises"]) == 7
    assert calls == [["solutions", "--format", "json", "--backend", "all"],
                     ["--backend", "jax", "exercises"]]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    out = tmp_path_factory.mktemp("ckpt") / "bahdanau"
    rc = cli.main(["train", "bahdanau", "--quick", "--out", str(out)])
    assert rc == 0
    return out


def test_train_saves_checkpoint_and_vocabularies(checkpoint):
    for f in ("model.keras", "src_vocab.json", "tgt_vocab.json", "meta.json"):
        assert (checkpoint / f).is_file(), f
    meta = json.loads((checkpoint / "meta.json").read_text())
    assert meta["model"] == "bahdanau" and meta["backend"] == keras.backend.backend()
    assert 0.0 <= meta["bleu"] <= 100.0 and meta["history"]["loss"]


def test_translate_prints_translation_and_attention(checkpoint, capsys):
    from kerasattn import lesson_utils

    ck = lesson_utils.load_checkpoint(checkpoint)
    sentence = json.loads((checkpoint / "meta.json").read_text())["example_source"]
    plot = checkpoint / "att.png"
    rc = cli.main(["translate", str(checkpoint), sentence, "--attention", "--plot",
                   str(plot)])
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.splitlines()
    expected = lesson_utils.translate_sentence(ck, sentence)["translation"]
    assert lines[0] == expected
    assert "attention weights" in out
    table_rows = [ln for ln in lines if ln.split()[:1] and ln.split()[0] in
                  expected.split() + ["<eos>"]]
    assert len(table_rows) >= 1
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rc = cli.main(["translate", str(checkpoint), sentence, "--beam", "3"])
    assert rc == 0 and capsys.readouterr().out.strip()


def test_translate_reports_an_incomplete_checkpoint(tmp_path, capsys):
    (tmp_path / "meta.json").write_text("{}")
    assert cli.main(["translate", str(tmp_path), "the cat ."]) == 2
    err = capsys.readouterr().err
    assert "incomplete" in err and "model.keras" in err


def test_backends_demo_same_weights_everywhere(checkpoint, tmp_path):
    backends = cli.installed_backends()
    proc = run_cli("backends", "--checkpoint", str(checkpoint), "--quick", "--out",
                   str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["backends"] == backends and summary["failed"] == []
    assert summary["max_abs_logit_diff"] < 1e-3
    assert summary["same_translations"] is True
    for b in backends:
        assert b in proc.stdout
        logits = np.load(tmp_path / f"logits_{b}.npy")
        assert logits.ndim == 3 and np.isfinite(logits).all()
    assert "max |logit diff|" in proc.stdout
