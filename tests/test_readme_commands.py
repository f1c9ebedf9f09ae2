"""Every `kerasattn ...` command shown in README.md's ```bash blocks works.

README.md is read when the tests run: every line of a bash block that starts with
``kerasattn `` (after optional ``NAME=value`` environment assignments) is a command. Each is
first parsed by the command's own parser (every pass: fast), then run for real in quick mode
(``--quick`` added where the subcommand takes it) from a scratch working directory, in
README order within two lanes run side by side (the grading and backends-demo commands in
one, the rest in the other), after a quick ``kerasattn train`` for commands that need a
checkpoint.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import keras
import pytest
from conftest import ROOT

from kerasattn import cli

# the commands run end to end in one pass of the suite (they choose their own backends)
RUN_PASS_BACKEND = "torch"


def readme_commands(text: str) -> list[tuple[dict, list[str]]]:
    """``(environment, argv)`` of every ``kerasattn`` line in the bash blocks of ``text``."""
    commands = []
    for block in re.findall(r"^```(?:bash|sh|shell)[^\n]*\n(.*?)^```", text, re.M | re.S):
        for line in block.replace("\\\n", " ").splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            env = {}
            while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
                key, value = words.pop(0).split("=", 1)
                env[key] = value
            if len(words) > 1 and words[0] == "kerasattn":
                commands.append((env, words[1:]))
    return commands


COMMANDS = readme_commands((ROOT / "README.md").read_text(encoding="utf-8"))
SUBCOMMANDS = ("lesson", "train", "translate", "backends", "grade", "data", "notebook")


def subcommand(argv: list[str]) -> str:
    return next((a for a in argv if a in SUBCOMMANDS), "")


def test_readme_shows_commands():
    assert COMMANDS, "README.md shows no `kerasattn ...` command in a ```bash block"
    assert readme_commands("```bash\nKERAS_BACKEND=jax kerasattn lesson 1  # note\n"
                           "pip install x\n```\n") == [({"KERAS_BACKEND": "jax"},
                                                        ["lesson", "1"])]


@pytest.mark.parametrize("env, argv", COMMANDS, ids=[" ".join(a) for _, a in COMMANDS])
def test_readme_command_parses(env, argv):
    if subcommand(argv) == "grade":  # everything after `grade` belongs to the grader
        from kerasattn.grader.cli import build_parser as grader_parser

        grader_parser().parse_args(argv[argv.index("grade") + 1:])
        return
    args = cli.build_parser().parse_args(argv)
    assert args.command == subcommand(argv)


def quick_argv(argv: list[str]) -> list[str]:
    """``argv`` in quick mode: ``--quick`` added where the subcommand has it."""
    takes_quick = {"lesson", "train", "backends"}
    if subcommand(argv) in takes_quick and "--quick" not in argv:
        return [*argv, "--quick"]
    return list(argv)


def _link_repository_paths(argv: list[str], cwd: Path) -> None:
    """Make paths the README gives relative to a clone (exercises/...) exist in ``cwd``."""
    for a in argv:
        first = Path(a).parts[0] if a and not a.startswith("-") else None
        if first and first != "outputs" and (ROOT / first).exists() \
                and not (cwd / first).exists():
            (cwd / first).symlink_to(ROOT / first)


@pytest.mark.slow
@pytest.mark.lesson
@pytest.mark.cross_backend
@pytest.mark.skipif(keras.backend.backend() != RUN_PASS_BACKEND,
                    reason=f"the commands choose their own backends: they run in the "
                           f"{RUN_PASS_BACKEND} pass only")
def test_readme_commands_run_in_quick_mode(tmp_path):
    env0 = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    env0["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env0.get("PYTHONPATH")])])
    trained = set()
    failures = []
    # `kerasattn data fetch LANG` and `--data LANG` download from a local copy of the
    # committed excerpt into a scratch Keras cache (tests never use the network)
    import zipfile

    archive = tmp_path / "jpn-eng.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(ROOT / "tests" / "data" / "jpn-eng-excerpt.txt", "jpn.txt")
    download_env = dict(KERASATTN_DATA_URL=archive.as_uri(),
                        KERAS_HOME=str(tmp_path / "keras_home"))
    def run(env, argv):
        argv = quick_argv(argv)
        _link_repository_paths(argv, tmp_path)
        if subcommand(argv) == "data" or (
                "--data" in argv and not Path(argv[argv.index("--data") + 1]).exists()):
            env = {**download_env, **env}
        if "--input" in argv and not (tmp_path / argv[argv.index("--input") + 1]).exists():
            (tmp_path / argv[argv.index("--input") + 1]).write_text(
                "彼は運が良かった。\n\nthe black cat sleeps .\n", encoding="utf-8")
        if subcommand(argv) == "translate":
            # a checkpoint of the README's own path, made by a quick `kerasattn train`
            ckpt = Path(argv[argv.index("translate") + 1])
            model = ckpt.name if ckpt.parts[:2] == ("outputs", "checkpoints") else "bahdanau"
            if not (tmp_path / ckpt / "meta.json").exists() and ckpt not in trained:
                subprocess.run([sys.executable, "-m", "kerasattn", "train", model, "--quick",
                                "--out", str(ckpt)], cwd=tmp_path, env=env0, check=True,
                               capture_output=True, timeout=900)
                trained.add(ckpt)
        proc = subprocess.run([sys.executable, "-m", "kerasattn", *argv], cwd=tmp_path,
                              env={**env0, **env}, capture_output=True, text=True,
                              timeout=1800)
        if proc.returncode != 0 or "Traceback" in proc.stderr:
            failures.append(f"$ kerasattn {' '.join(argv)} -> exit {proc.returncode}\n"
                            f"{proc.stdout[-1500:]}\n{proc.stderr[-2500:]}")

    # Two lanes on the two cores, each in README order: the commands that start every
    # backend themselves (grading, the backends demo) write nothing the others read.
    own = [c for c in COMMANDS if subcommand(c[1]) in ("grade", "backends")]
    lanes = [[c for c in COMMANDS if c not in own], own]
    with ThreadPoolExecutor(len(lanes)) as pool:
        for done in [pool.submit(lambda lane=lane: [run(*c) for c in lane]) for lane in lanes]:
            done.result()
    assert not failures, "\n\n".join(failures)
    # what the commands wrote went under the working directory
    assert (tmp_path / "outputs").is_dir()
    demo = tmp_path / "outputs" / "backends_demo" / "summary.json"
    if any(subcommand(a) == "backends" for _, a in COMMANDS):
        import json

        summary = json.loads(demo.read_text())
        assert summary["failed"] == [] and summary["same_translations"] is True
        assert summary["max_abs_logit_diff"] < 1e-3
