"""A regular (non-editable) install works: `kerasattn lesson 0` from the built wheel.

The wheel is built from a copy of the sources, installed with ``--no-deps`` into a fresh venv
that reuses this interpreter's installed dependencies (a ``.pth`` file), and run from an empty
working directory. It must import kerasattn from the venv, find the lessons it ships, and
write its outputs under that directory.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import keras
import pytest
from conftest import ROOT

# backend-independent and slow (wheel build + a lesson): one pass of the suite is enough
INSTALL_PASS_BACKEND = "torch"


def _run(cmd, **kwargs):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, **kwargs)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


@pytest.mark.slow
@pytest.mark.lesson
@pytest.mark.skipif(keras.backend.backend() != INSTALL_PASS_BACKEND,
                    reason=f"backend-independent: runs in the {INSTALL_PASS_BACKEND} pass only")
def test_lesson_runs_from_an_installed_wheel(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("kerasattn", "lessons"):
        shutil.copytree(ROOT / name, src / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, src / name)
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
          "--quiet", str(src), "-w", str(wheels)], cwd=tmp_path)
    (wheel,) = wheels.glob("kerasattn-*.whl")

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False, symlinks=True)
    py = env_dir / "bin" / "python"
    site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
                     ).stdout.strip())
    # the dependencies already installed here, but not the editable kerasattn: its .pth /
    # finder files stay out, and the wheel's copy comes first on sys.path
    (site / "_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps",
          "--no-index", "--quiet", str(wheel)])

    cwd = tmp_path / "work"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["KERAS_BACKEND"] = keras.backend.backend()
    where = _run([str(py), "-c", "import kerasattn; print(kerasattn.__file__)"], cwd=cwd,
                 env=env).stdout.strip()
    assert Path(where).is_relative_to(site), f"kerasattn imported from {where}, not the venv"
    proc = _run([str(env_dir / "bin" / "kerasattn"), "lesson", "0", "--quick"], cwd=cwd,
                env=env)
    out = cwd / "outputs" / "lessons" / "lesson_00"
    record = json.loads((out / "results.json").read_text())
    assert record["settings"]["quick"] is True
    assert (out / "bleu_vs_length.png").is_file() and "lesson 00 finished" in proc.stdout
    assert not list(site.glob("kerasattn/outputs")) and not (site / "outputs").exists()
