"""`kerasattn notebook`: the lessons as Jupyter / Colab notebooks, and one executed for real.

The fast tests read the written ``.ipynb`` files; the slow one runs a lesson notebook in
quick mode on a real Jupyter kernel (nbclient + ipykernel) and looks for its figures inline.
"""
from __future__ import annotations

import ast
import os
import re
import sys
import types
from pathlib import Path

import jupytext
import keras
import nbformat
import pytest
from conftest import ROOT

from kerasattn import cli
from kerasattn._env import UsageError
from kerasattn.course import notebooks, options, scripts

# the lesson the slow test executes (one model, the fastest lesson in quick mode) and the
# pass that runs it (torch runs this quick lesson several times faster than jax)
EXECUTED_LESSON = 3
RUN_PASS_BACKEND = "torch"


def write(tmp_path, monkeypatch, capsys, *argv) -> list[Path]:
    """Run ``kerasattn notebook ARGV`` in ``tmp_path``; the paths it printed."""
    monkeypatch.chdir(tmp_path)
    assert cli.main(["notebook", *argv]) == 0
    return [tmp_path / line for line in capsys.readouterr().out.split()]


def setup_cell(nb) -> str:
    return nb.cells[1].source


# ---------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------
def test_notebook_command_is_listed(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert "notebook" in capsys.readouterr().out


def test_notebook_keeps_every_lesson_cell_under_a_setup_cell(tmp_path, monkeypatch, capsys):
    [path] = write(tmp_path, monkeypatch, capsys, "3")
    script = scripts.lesson_path(3)
    assert path == tmp_path / "outputs" / "notebooks" / f"{script.stem}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    # the intro (markdown) and the set-up cell (code), then the lesson's cells unchanged
    assert [c.cell_type for c in nb.cells[:2]] == ["markdown", "code"]
    text = script.read_text(encoding="utf-8")
    lesson_cells = nb.cells[2:]
    assert len(lesson_cells) == text.count("\n# %%")
    markdown = [c for c in lesson_cells if c.cell_type == "markdown"]
    assert len(markdown) == text.count("\n# %% [markdown]")
    assert markdown[0].source.startswith("# Lesson 03")
    for cell in markdown:  # the script's comment lines, with the "# " marks removed
        commented = "\n".join(f"# {line}" if line else "#"
                              for line in cell.source.splitlines())
        assert "# %% [markdown]\n" + commented + "\n" in text, cell.source[:200]
    expected = [c.source for c in jupytext.read(script).cells if c.cell_type == "code"]
    assert [c.source for c in lesson_cells if c.cell_type == "code"] == expected
    assert "parse_lesson_args(3" in expected[0]
    # a standalone notebook for a Python 3 kernel, not paired with a .py file
    assert nb.metadata.kernelspec.name == "python3"
    assert "jupytext" not in nb.metadata
    # same lesson, same file
    first = path.read_bytes()
    write(tmp_path, monkeypatch, capsys, "3")
    assert path.read_bytes() == first


def test_all_writes_every_lesson_into_out(tmp_path, monkeypatch, capsys):
    paths = write(tmp_path, monkeypatch, capsys, "--all", "--out", "nbs")
    stems = [p.stem for p in sorted(scripts.lessons_dir().glob("[0-9][0-9]_*.py"))]
    assert len(stems) == 7
    assert paths == [tmp_path / "nbs" / f"{s}.ipynb" for s in stems]
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        assert nb.cells[2].source.startswith(f"# Lesson {p.name[:2]}")
    assert not (tmp_path / "outputs").exists()


def _run_setup_cell(source: str, monkeypatch) -> dict:
    """Execute the set-up cell's Python lines (not its ``%`` magics); the environment."""
    monkeypatch.delenv("KERAS_BACKEND", raising=False)
    monkeypatch.delenv(options.LESSON_ARGS_ENV, raising=False)
    python = "\n".join(line for line in source.splitlines() if not line.startswith("%"))
    exec(compile(python, "setup-cell", "exec"), {})
    return {k: os.environ.get(k) for k in ("KERAS_BACKEND", options.LESSON_ARGS_ENV)}


def test_setup_cell_sets_backend_options_install_and_inline_figures(tmp_path, monkeypatch,
                                                                     capsys):
    backend = keras.backend.backend()
    spec = "kerasattn @ git+https://example.org/kerasattn.git"
    [path] = write(tmp_path, monkeypatch, capsys, "--backend", backend, "1", "--quick",
                   "--options=--seed 2 --minutes 0.5", "--pip", spec)
    source = setup_cell(nbformat.read(path, as_version=4))
    lines = source.splitlines()
    assert lines[0] == f"%pip install --quiet '{spec}'"     # first: Colab installs the kit
    assert "%matplotlib inline" in lines
    env = _run_setup_cell(source, monkeypatch)
    assert env == {"KERAS_BACKEND": backend,
                   options.LESSON_ARGS_ENV: "--quick --seed 2 --minutes 0.5"}


def test_setup_cell_defaults_leave_backend_and_install_to_the_user(tmp_path, monkeypatch,
                                                                   capsys):
    [path] = write(tmp_path, monkeypatch, capsys, "0")
    source = setup_cell(nbformat.read(path, as_version=4))
    assert "# " + notebooks.COLAB_INSTALL in source.splitlines()    # shown, commented out
    assert not any(line.startswith("%pip") for line in source.splitlines())
    assert _run_setup_cell(source, monkeypatch) == {"KERAS_BACKEND": None,
                                                    options.LESSON_ARGS_ENV: ""}


@pytest.mark.parametrize("argv, message", [
    ([], "give lesson number(s) or --all (not both); received none"),
    (["2", "--all"], "give lesson number(s) or --all (not both); received [2] and --all"),
    (["9"], "no lesson 9: N must be one of 0, 1, 2, 3, 4, 5, 6; received 9"),
    (["1", "--out", str(ROOT / "lessons" / "nb")], "--out must be outside the kit's own files"),
    (["1", "--options=--seed '2"], "--options: cannot split"),
])
def test_notebook_command_errors_name_the_argument(argv, message, tmp_path, monkeypatch,
                                                   capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["notebook", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "outputs").exists()
    assert not (ROOT / "lessons" / "nb").exists()


# ---------------------------------------------------------------------------------------
# What the notebooks must show: the answers behind a click, the figures inline
# ---------------------------------------------------------------------------------------
def test_check_your_understanding_answers_render_as_details_blocks():
    """Every ``<details>`` answer sits in one markdown cell, and its body (after a blank
    line) is parsed as Markdown, so the revealed answer shows formatted text and maths."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")
    answers = 0
    for n in notebooks.all_lesson_numbers():
        for cell in notebooks.lesson_notebook(n).cells:
            if cell.cell_type != "markdown" or "<details>" not in cell.source:
                continue
            where = f"lesson {n:02d}, cell {cell.id}"
            assert cell.source.count("<details>") == cell.source.count("</details>"), where
            html = md.render(cell.source)
            blocks = re.findall(r"<details>(.*?)</details>", html, re.S)
            assert len(blocks) == cell.source.count("<details>"), where
            for block in blocks:
                assert "<summary>" in block and "<p>" in block, f"{where}: {block[:200]}"
                answers += 1
    assert answers >= 6, "the lessons end with check-your-understanding answers"


FIGURE_METHODS = ("lesson.figure", "lesson.architecture", "lesson.attention_figure",
                  "lesson.curves")


def _figure_calls(tree: ast.AST):
    """Calls that draw a figure: the Lesson's figure methods and ``plots.*`` (not text)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in FIGURE_METHODS or (name.startswith("plots.")
                                          and not name.endswith("_markdown")):
                yield node


def test_every_lesson_figure_is_its_cells_last_expression():
    """A notebook shows a cell's last expression: a figure drawn anywhere else in a cell
    would be saved but not shown inline."""
    hidden, found = [], 0
    for n in notebooks.all_lesson_numbers():
        for cell in jupytext.read(scripts.lesson_path(n)).cells:
            if cell.cell_type != "code":
                continue
            tree = ast.parse("\n".join(line for line in cell.source.splitlines()
                                       if not line.startswith(("%", "!"))))
            last = tree.body[-1] if tree.body else None
            for call in _figure_calls(tree):
                found += 1
                if not (isinstance(last, ast.Expr) and last.value is call):
                    hidden.append(f"lesson {n:02d}: {ast.unparse(call)[:80]}")
    assert found >= 12
    assert not hidden, "figures a notebook would not show:\n" + "\n".join(hidden)


# ---------------------------------------------------------------------------------------
# Lesson options inside a kernel
# ---------------------------------------------------------------------------------------
@pytest.fixture
def in_kernel(monkeypatch):
    """This process looks like an IPython kernel: ipykernel imported, the kernel's argv."""
    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules.get("ipykernel") or
                        types.ModuleType("ipykernel"))
    monkeypatch.setattr(sys, "argv", ["/venv/lib/ipykernel_launcher.py", "-f",
                                      "/run/jupyter/kernel-1234.json"])
    monkeypatch.delenv(options.LESSON_ARGS_ENV, raising=False)
    return monkeypatch


def test_lesson_in_a_kernel_ignores_the_kernel_argv_and_reads_its_options(in_kernel):
    assert options.in_notebook()
    s = options.parse_lesson_args(3, "test")
    assert not s.quick and s.epochs == options.DEFAULT_EPOCHS and s.seed == 0
    in_kernel.setenv(options.LESSON_ARGS_ENV, "--quick --seed 3 --out 'my figs'")
    s = options.parse_lesson_args(3, "test")
    assert s.quick and s.seed == 3 and s.out == Path("my figs")


def test_lesson_in_a_kernel_rejects_bad_options(in_kernel, capsys):
    in_kernel.setenv(options.LESSON_ARGS_ENV, "--lr 3")
    with pytest.raises(SystemExit) as exc:
        options.parse_lesson_args(3, "test")
    assert exc.value.code == 2
    assert "unrecognized arguments: --lr 3" in capsys.readouterr().err
    in_kernel.setenv(options.LESSON_ARGS_ENV, "--seed '3")
    with pytest.raises(UsageError, match="KERASATTN_LESSON_ARGS must be lesson options"):
        options.parse_lesson_args(3, "test")


def test_lesson_run_from_a_kernel_by_the_command_reads_its_argv(in_kernel):
    """``kerasattn.cli.main(["lesson", ...])`` inside a notebook: the options given there."""
    in_kernel.setenv(options.LESSON_ARGS_ENV, "--seed 5")
    in_kernel.setattr(sys, "argv", [str(scripts.lesson_path(3)), "--quick", "--seed", "4"])
    assert not options.in_notebook()
    s = options.parse_lesson_args(3, "test")
    assert s.quick and s.seed == 4


# ---------------------------------------------------------------------------------------
# One lesson notebook executed on a real Jupyter kernel
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.lesson
@pytest.mark.skipif(keras.backend.backend() != RUN_PASS_BACKEND,
                    reason=f"the notebook's kernel is a separate process with its own "
                           f"backend ({RUN_PASS_BACKEND}): it runs in the {RUN_PASS_BACKEND} "
                           f"pass only")
def test_lesson_notebook_runs_on_a_jupyter_kernel_with_figures_inline(tmp_path, monkeypatch,
                                                                      capsys):
    from nbclient import NotebookClient

    [path] = write(tmp_path, monkeypatch, capsys, "--backend", RUN_PASS_BACKEND,
                   str(EXECUTED_LESSON), "--quick")
    nb = nbformat.read(path, as_version=4)
    # the kernel imports this checkout's kerasattn and inherits the environment
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    monkeypatch.delenv(options.LESSON_ARGS_ENV, raising=False)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    nbformat.write(nb, tmp_path / "executed.ipynb")  # kept in tmp_path for a failing run

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, errors
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "Traceback" not in text
    # the set-up cell's options reached the lesson (its header names backend, device, mode)
    assert re.search(rf"backend: {RUN_PASS_BACKEND} on \S+ \| mode: quick", text), text[:300]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    saved = sorted((tmp_path / "outputs" / "lessons" / f"lesson_{EXECUTED_LESSON:02d}")
                   .glob("*.png"))
    assert len(saved) >= 3
    assert len(images) == len(saved), (len(images), [p.name for p in saved])
    for image in images:
        assert isinstance(image.data["image/png"], str) and len(image.data["image/png"]) > 1000
    assert (tmp_path / "outputs" / "lessons" / f"lesson_{EXECUTED_LESSON:02d}" /
            "results.json").is_file()


def test_make_notebooks_and_the_declared_dependencies():
    """`make notebooks` runs a command this parser accepts; jupytext is a core dependency
    (`kerasattn notebook` needs it), nbclient and ipykernel are in the dev extra (this test
    file needs them)."""
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^notebooks:.*\n\t(.+)$", make, re.M)
    assert recipe, "Makefile has no `notebooks` target"
    words = recipe.group(1).split()
    assert words[0] == "$(VENV)/bin/kerasattn"
    args = cli.build_parser().parse_args(words[1:])
    assert args.command == "notebook" and args.all
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    core = re.search(r"^dependencies = \[(.*?)^\]", pyproject, re.M | re.S).group(1)
    dev = re.search(r"^dev = \[(.*)\]$", pyproject, re.M).group(1)
    assert '"jupytext>=' in core
    assert '"nbclient>=' in dev and '"ipykernel>=' in dev
