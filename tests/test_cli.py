"""The `kerasattn` command: options, errors without tracebacks, train and translate."""
from __future__ import annotations

import json
import re
import sys
import types

import keras
import numpy as np
import pytest

from kerasattn import cli
from kerasattn._env import UsageError
from kerasattn.course import options, scripts


def test_help_lists_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    for name in ("lesson", "train", "translate", "backends", "grade"):
        assert name in out
    assert "_backend_worker" not in out


def test_model_names_match_the_registry():
    from kerasattn.models import MODEL_NAMES

    assert tuple(cli.MODEL_NAMES) == tuple(MODEL_NAMES)


def test_importing_the_command_imports_no_keras_and_no_course_code():
    from conftest import run_in_backend

    res = run_in_backend(keras.backend.backend(), """
        import json, sys
        import kerasattn.cli
        kerasattn.cli.build_parser()
        print(json.dumps(sorted(m for m in sys.modules
                                if m in ("keras", "tensorflow", "jax", "torch")
                                or m.startswith("kerasattn.course.lesson"))))
    """)
    assert res == []


@pytest.mark.parametrize("argv, message", [
    (["--backend", "theano", "lesson", "0"], "--backend must be one of"),
    (["lesson", "7"], "no lesson 7"),
    (["lesson", "0", "--epochs", "0"], "--epochs must be >= 1; received 0"),
    (["lesson", "0", "--train-size", "-3"], "--train-size must be >= 1; received -3"),
    (["lesson", "0", "--torch-threads", "many"], "--torch-threads must be 'auto' or an int"),
    (["lesson", "0", "--data", "/no/such/fra.txt"], "--data: no such file"),
    (["train", "lstm", "--quick"], "MODEL must be one of"),
    (["train", "bahdanau", "--data", "/no/such/fra.txt"], "--data: no such file"),
    (["train", "bahdanau", "--minutes", "-1"], "--minutes must be >= 0; received -1"),
    (["train", "bahdanau", "--beam", "0"], "--beam must be >= 1; received 0"),
    (["translate", "/no/such/checkpoint", "the cat ."], "CHECKPOINT: no such directory"),
    (["translate", "/no/such/checkpoint", "the cat .", "--beam", "0"], "--beam must be >= 1"),
    (["backends", "--backends", "jax,tf"], "--backends: 'tf' is not one of"),
    (["backends", "--model", "lstm"], "--model must be one of"),
    (["lesson", "0", "--tokenizer", "subword"], "--tokenizer needs --data"),
    (["train", "bahdanau", "--seed", "-1"], "--seed must be in [0, 2**32); received -1"),
    (["translate", "/no/such/checkpoint", "the cat .", "--plot", "a.png"],
     "--plot needs --attention"),
    (["translate", "/no/such/checkpoint", "the cat .", "--attention", "--plot", "a.svg"],
     "--plot must name a .png file"),
])
def test_clear_errors_without_traceback(capsys, argv, message):
    rc = cli.main(argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and "Traceback" not in err


def test_train_refuses_an_unusable_out_before_training(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    rc = cli.main(["train", "bahdanau", "--quick", "--out", str(tmp_path / "file")])
    err = capsys.readouterr().err
    assert rc == 2 and "--out: " in err and "is a file, not a folder" in err


def test_a_bad_keras_backend_variable_is_named(monkeypatch, capsys):
    monkeypatch.setenv("KERAS_BACKEND", "pytorch")
    rc = cli.main(["lesson", "0", "--quick"])
    assert rc == 2 and "$KERAS_BACKEND must be one of" in capsys.readouterr().err


def test_missing_backend_is_named(monkeypatch, capsys):
    from kerasattn import _env

    real = _env.importlib.util.find_spec
    monkeypatch.setattr(_env.importlib.util, "find_spec",
                        lambda name, *a: None if name == "jax" else real(name, *a))
    rc = cli.main(["--backend", "jax", "lesson", "0", "--quick"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "backend 'jax' is not installed" in err and "kerasattn[jax]" in err
    assert "jax" not in _env.installed_backends()


ALL_RUN_OPTIONS = ["--quick", "--data", "corpus.txt", "--out", "somewhere", "--epochs", "3",
                   "--minutes", "0.5", "--seed", "7", "--train-size", "40",
                   "--torch-threads", "1"]


def test_lesson_command_and_lesson_script_accept_the_same_options(tmp_path, monkeypatch):
    """`kerasattn lesson N OPTIONS` hands the lesson script exactly the settings that
    `python lessons/0N_*.py OPTIONS` would get."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("KERASATTN_TORCH_THREADS", raising=False)
    (tmp_path / "corpus.txt").write_text("hello .\tbonjour .\n")
    args = cli.build_parser().parse_args(["lesson", "2", *ALL_RUN_OPTIONS])
    forwarded = options.run_options_argv(args)
    direct = options.parse_lesson_args(2, "test", ALL_RUN_OPTIONS, n_models=1)
    via_cli = options.parse_lesson_args(2, "test", forwarded, n_models=1)
    assert via_cli == direct
    assert direct.quick and direct.data == "corpus.txt" and direct.epochs == 3
    assert direct.minutes == 0.5 and direct.seed == 7 and direct.train_size == 40
    assert str(direct.out) == "somewhere"
    import os

    assert os.environ["KERASATTN_TORCH_THREADS"] == "1"


def test_default_settings_split_the_budget_and_write_under_the_current_directory():
    s = options.parse_lesson_args(0, "test", [], n_models=2)
    assert s.out == options.OUTPUTS / "lessons" / "lesson_00" and not s.out.is_absolute()
    assert s.minutes == pytest.approx(options.DEFAULT_MINUTES / 2)
    assert s.epochs == options.DEFAULT_EPOCHS and not s.quick
    quick = options.parse_lesson_args(0, "test", ["--quick"], n_models=2)
    assert quick.minutes is None and quick.epochs == options.QUICK_EPOCHS
    assert options.parse_lesson_args(0, "test", ["--minutes", "0"]).minutes is None


def test_a_lesson_may_give_real_data_a_budget_of_its_own(tmp_path, capsys):
    data = tmp_path / "corpus.txt"
    data.write_text("hello .\tbonjour .\n")
    built_in = options.parse_lesson_args(6, "test", [], n_models=8, lesson_minutes=3.5,
                                         data_minutes=16)
    real = options.parse_lesson_args(6, "test", ["--data", str(data)], n_models=8,
                                     lesson_minutes=3.5, data_minutes=16)
    assert built_in.minutes == round(3.5 / 8, 3) and real.minutes == pytest.approx(2.0)
    given = options.parse_lesson_args(6, "test", ["--data", str(data), "--minutes", "1"],
                                      n_models=8, lesson_minutes=3.5, data_minutes=16)
    assert given.minutes == 1.0                                  # --minutes wins
    with pytest.raises(SystemExit):
        options.parse_lesson_args(6, "test", ["--help"], n_models=8, lesson_minutes=3.5,
                                  data_minutes=16)
    assert "default 0.4375: 3.5 minutes in 8 shares; 2 with --data" in " ".join(
        capsys.readouterr().out.split())


def test_lesson_script_rejects_unknown_options(capsys):
    with pytest.raises(SystemExit) as exc:
        options.parse_lesson_args(0, "test", ["--lr", "3"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --lr 3" in capsys.readouterr().err


def test_every_lesson_script_is_found():
    paths = [scripts.lesson_path(n) for n in range(7)]
    assert [p.name[:2] for p in paths] == ["00", "01", "02", "03", "04", "05", "06"]
    with pytest.raises(UsageError, match="N must be one of 0, 1, 2, 3, 4, 5, 6; received 7"):
        scripts.lesson_path(7)


@pytest.mark.cross_backend
def test_backend_switch_reruns_in_a_child_process(capfd):
    # keras is already imported here, so another backend must run in a fresh process; the
    # child reaches the lesson lookup and fails there, proving it ran
    from kerasattn._env import installed_backends

    other = next(b for b in installed_backends() if b != keras.backend.backend())
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


def test_grade_is_a_subcommand_only_in_the_subcommand_position():
    assert cli._split_grade(["--backend", "jax", "grade", "x.py"]) == (["--backend", "jax"],
                                                                      ["x.py"])
    assert cli._split_grade(["lesson", "0", "--out", "grade"])[1] is None
    assert cli._split_grade(["translate", "CKPT", "grade"])[1] is None


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """`kerasattn train bahdanau --quick --epochs 2` run in an empty working directory."""
    cwd = tmp_path_factory.mktemp("cwd")
    mp = pytest.MonkeyPatch()
    mp.chdir(cwd)
    try:
        rc = cli.main(["train", "bahdanau", "--quick", "--epochs", "2", "--seed", "3"])
    finally:
        mp.undo()
    assert rc == 0
    return cwd, cwd / "outputs" / "checkpoints" / "bahdanau"


def test_train_saves_checkpoint_under_the_current_directory(trained):
    cwd, checkpoint = trained
    assert sorted(p.name for p in checkpoint.iterdir()) == [
        "meta.json", "model.keras", "src_vocab.json", "tgt_vocab.json"]
    meta = json.loads((checkpoint / "meta.json").read_text())
    assert meta["model"] == "bahdanau" and meta["backend"] == keras.backend.backend()
    assert meta["epochs"] == 2 and len(meta["history"]["loss"]) == 2   # --epochs honoured
    assert meta["settings"]["seed"] == 3 and meta["settings"]["quick"] is True


def test_translate_prints_translation_and_attention(trained, capsys):
    _, checkpoint = trained
    meta = json.loads((checkpoint / "meta.json").read_text())
    sentence = meta["example_source"]
    from kerasattn.inference import Translator

    translator = Translator.load(checkpoint)
    plot = checkpoint / "att.png"
    rc = cli.main(["translate", str(checkpoint), sentence, "--attention", "--plot",
                   str(plot)])
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == translator.translate([sentence])[0]            # the Translator's
    translation = translator.translate([sentence], detokenized=False)[0].split()
    assert translation and all(w in translator.tgt_vocab for w in translation)
    # the attention table: a header of source tokens, one row per generated token whose
    # weights form a distribution over the source
    start = next(i for i, ln in enumerate(lines) if ln.startswith("attention weights"))
    assert lines[start + 1].split() == sentence.split()
    rows = [ln.split() for ln in lines[start + 3:] if ln and not ln.startswith("heatmap")]
    assert [r[0] for r in rows] == (translation + ["<eos>"])[:len(rows)]
    weights = np.array([[float(v) for v in r[1:]] for r in rows])
    assert weights.shape[1] == len(sentence.split())
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=0.02 * weights.shape[1])
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # deterministic, and a beam search of width 3 also prints one translation line
    assert cli.main(["translate", str(checkpoint), sentence]) == 0
    assert capsys.readouterr().out.splitlines()[0] == lines[0]
    assert cli.main(["translate", str(checkpoint), sentence, "--beam", "3"]) == 0
    out = capsys.readouterr().out
    # one line; a one-epoch model's best beam may end at once (an empty translation)
    assert re.fullmatch(r"[^\n]*\n", out)
    beam = translator.translate([sentence], beam=3, detokenized=False)[0].split()
    assert out.strip() == translator.translate([sentence], beam=3)[0]
    assert all(w in translator.tgt_vocab for w in beam)


def test_translate_reports_an_incomplete_checkpoint(tmp_path, capsys):
    (tmp_path / "meta.json").write_text("{}")
    assert cli.main(["translate", str(tmp_path), "the cat ."]) == 2
    err = capsys.readouterr().err
    assert "incomplete" in err and "model.keras" in err


@pytest.mark.slow
@pytest.mark.cross_backend
@pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                    reason="starts every backend itself: runs in the tensorflow pass only")
def test_backends_demo_same_weights_everywhere(trained, tmp_path):
    import os
    import subprocess

    from conftest import ROOT

    from kerasattn._env import installed_backends

    _, checkpoint = trained
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "kerasattn", "backends", "--checkpoint",
                           str(checkpoint), "--quick", "--out", str(tmp_path)], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["backends"] == installed_backends() and summary["failed"] == []
    assert summary["max_abs_logit_diff"] < 1e-3
    assert summary["same_translations"] is True
    for b in installed_backends():
        assert b in proc.stdout
        logits = np.load(tmp_path / f"logits_{b}.npy")
        assert logits.ndim == 3 and np.isfinite(logits).all()


def test_lesson_help_states_lesson_06s_own_budget_as_its_script_sets_it(capsys):
    """`kerasattn lesson --help` repeats lesson 06's budget; the script is its one home."""
    code = scripts.lesson_path(6).read_text()
    minutes = re.search(r"lesson_minutes=([\d.]+),", code).group(1)
    data_minutes = re.search(r"data_minutes=([\d.]+)\)", code).group(1)
    shares = re.search(r"n_models=(\d+),", code).group(1)
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["lesson", "6", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"lesson 6: {minutes} in all ({shares} shares), {data_minutes} with --data" in text
