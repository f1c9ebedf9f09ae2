"""benchmarks/bench_jax_compile.py: the compile seconds and step milliseconds of each batch
shape on JAX, with arguments checked and named."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import keras
import pytest
from conftest import load_script

from kerasattn._env import JAX_CACHE_ENV

SCRIPT = "benchmarks/bench_jax_compile.py"
ROOT = Path(__file__).resolve().parents[1]


def test_bad_arguments_are_named(capsys):
    bench = load_script(SCRIPT)
    assert bench.parse_args(["--widths", "8x16", "24X8"]).shapes == [(8, 16), (24, 8)]
    assert bench.parse_args([]).jax_cache == "off"
    assert bench.parse_args(["--jax-cache", "/tmp/c"]).jax_cache == "/tmp/c"
    for argv, message in ((["--widths", "16by8"], "received '16by8'"),
                          (["--widths", "0x8"], "received '0x8'"),
                          (["--vocab", "4"], "--vocab must be >= 5 (4 special tokens and a "
                                             "word); received 4"),
                          (["--batch-size", "0"], "--batch-size must be >= 1; received 0")):
        with pytest.raises(SystemExit):
            bench.parse_args(argv)
        assert message in capsys.readouterr().err


def test_one_row_per_shape_on_jax_and_a_clear_refusal_elsewhere(capsys, monkeypatch,
                                                                  tmp_path):
    bench = load_script(SCRIPT)
    # the benchmark sets the first and drops the second (a first run): both restored after
    monkeypatch.setenv(JAX_CACHE_ENV, "")
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "jax_cache_of_the_user"))
    code = bench.main(["--widths", "3x4", "--vocab", "40", "--batch-size", "2"])
    out, err = capsys.readouterr()
    if keras.backend.backend() != "jax":
        assert code == 2 and "measures JAX's compilation" in err
        return
    assert code == 0
    assert os.environ[JAX_CACHE_ENV] == "off"     # the default: a first run
    assert "JAX_COMPILATION_CACHE_DIR" not in os.environ
    # in a process of its own, a JAX cache in the environment is dropped by default, and
    # --jax-cache DIR is the cache used
    for argv, cache in (([], "none"), (["--jax-cache", str(tmp_path / "c")],
                                        str(tmp_path / "c"))):
        env = dict(os.environ, KERAS_BACKEND="jax",
                   JAX_COMPILATION_CACHE_DIR=str(tmp_path / "users_cache"))
        proc = subprocess.run([sys.executable, SCRIPT, "--widths", "3x4", "--vocab", "40",
                               "--batch-size", "2", *argv], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert f"compilation cache: {cache}\n" in proc.stdout
    rows = [line for line in out.splitlines() if line.startswith("| ") and "x" in line
            and "compile" not in line]
    assert [r.split("|")[1].strip() for r in rows] == ["3 x 4"]
    for r in rows:
        compile_s, step_ms = float(r.split("|")[2]), float(r.split("|")[3])
        assert compile_s > 0 and step_ms > 0
