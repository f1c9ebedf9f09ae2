"""The lessons as Jupyter notebooks: ``kerasattn notebook N`` and ``make notebooks``.

Each lesson script (``lessons/0N_*.py``, jupytext percent format) is read with jupytext:
every ``# %%`` block becomes a code cell and every ``# %% [markdown]`` block a markdown
cell, so the prose, the equations and the "Check your understanding" answers (HTML
``<details>`` blocks, revealed with a click) show as in the script. Two cells are put in
front: how to run the notebook (Jupyter or Google Colab), and a set-up cell that installs
the kit on Colab when asked, chooses the Keras backend and the lesson's run options
(through ``KERASATTN_LESSON_ARGS``, read by
:func:`~kerasattn.course.options.parse_lesson_args` inside a notebook) and turns on inline
figures.

Keras is not imported here.
"""
from __future__ import annotations

import shlex
from pathlib import Path
from typing import Iterable

from kerasattn._env import BACKENDS, UsageError
from kerasattn.course import scripts
from kerasattn.course.options import LESSON_ARGS_ENV, OUTPUTS

__all__ = ["DEFAULT_OUT", "COLAB_INSTALL", "lesson_notebook", "write_notebooks"]

DEFAULT_OUT = OUTPUTS / "notebooks"
"""Default folder of the notebooks: ``./outputs/notebooks`` under the current directory."""

COLAB_INSTALL = '%pip install "kerasattn @ git+https://github.com/OWNER/kerasattn.git"'
"""The install line the set-up cell shows (commented out) when no ``--pip`` spec is given:
replace OWNER with the account that hosts the course's copy of the kit."""

_INTRO = """\
**Running this notebook.** Run the cells in order, top to bottom. The next cell sets the
Keras backend (`tensorflow`, `jax` or `torch`) and the lesson's options, the same options as
`kerasattn lesson {number} --help`: `--quick` runs in seconds with tiny models (its numbers
mean nothing about quality); with no options the lesson trains for its default budget of a
few minutes on a CPU. Edit the cell, then restart the kernel to change the backend (Keras
fixes it when it is first imported).

**In Google Colab** (or a Jupyter without the kit), install the kit first with the
`%pip install` line of the next cell (uncomment it if it is commented out, with the address
of the course's copy of the kit), then restart when Colab asks. The figures show
inline and are also saved under `./outputs/lessons/lesson_{number:02d}/`."""


def _setup_source(backend: str | None, options: str, pip_spec: str | None) -> str:
    if pip_spec:
        install = f"%pip install --quiet {shlex.quote(pip_spec)}"
    else:
        install = (f"# Colab, or a Jupyter without the kit: uncomment and run once\n"
                   f"# {COLAB_INSTALL}")
    if backend:
        backend_line = f'os.environ["KERAS_BACKEND"] = "{backend}"'
    else:
        backend_line = ('# os.environ["KERAS_BACKEND"] = "jax"  # default: $KERAS_BACKEND, '
                        'else Keras\'s own (tensorflow)')
    return "\n".join([
        install,
        "import os",
        "",
        f"# The Keras backend, one of {', '.join(BACKENDS)}: set before keras is imported.",
        backend_line,
        "# The lesson's options, as on the command line: e.g. \"--quick\" (seconds, tiny",
        "# models) or \"--minutes 2 --seed 1\"; empty = the default budget.",
        f"os.environ[{LESSON_ARGS_ENV!r}] = {options!r}",
        "",
        "%matplotlib inline",
    ])


def lesson_notebook(number: int, backend: str | None = None, options: str = "",
                    pip_spec: str | None = None):
    """Lesson ``number`` as a notebook (an :class:`nbformat.NotebookNode`, version 4).

    Args:
        number: the lesson number.
        backend: the Keras backend the set-up cell selects (None: the kernel's
            ``$KERAS_BACKEND``, else Keras's default).
        options: the lesson's run options the set-up cell passes, as one command-line
            string (e.g. ``"--quick"``).
        pip_spec: a pip requirement the set-up cell installs (e.g. ``"kerasattn @
            git+https://..."``); None leaves a commented install line.

    Returns:
        The notebook: the intro and set-up cells, then one cell per lesson cell.

    Raises:
        UsageError: no such lesson, an unknown backend, or ``options`` that do not parse.
    """
    import jupytext
    import nbformat

    if backend is not None and backend not in BACKENDS:  # only written into a cell: the
        # backend need not be installed here (the notebook may run on Colab)
        raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}; received "
                         f"{backend!r}")
    try:
        shlex.split(options)
    except ValueError as exc:
        raise UsageError(f"--options: cannot split {options!r} into arguments ({exc})")
    path = scripts.lesson_path(number)
    nb = jupytext.read(path, fmt="py:percent")
    # the notebook stands alone: no pairing with a .py file next to it
    nb.metadata.pop("jupytext", None)
    nb.metadata.setdefault("kernelspec", {"display_name": "Python 3", "language": "python",
                                          "name": "python3"})
    nb.metadata.setdefault("language_info", {"name": "python"})
    head = [nbformat.v4.new_markdown_cell(_INTRO.format(number=number)),
            nbformat.v4.new_code_cell(_setup_source(backend, options, pip_spec))]
    nb.cells = head + list(nb.cells)
    nb.nbformat, nb.nbformat_minor = 4, 5
    for i, cell in enumerate(nb.cells):  # stable ids: the same lesson gives the same file
        cell["id"] = f"lesson{number:02d}-cell{i:03d}"
    nbformat.validate(nb)
    return nb


def _check_out_dir(out: Path) -> Path:
    """``out``, unless it is inside the installed package or the lesson folder."""
    resolved = out.resolve()
    for forbidden in (Path(__file__).resolve().parents[1], scripts.lessons_dir().resolve()):
        if resolved == forbidden or forbidden in resolved.parents:
            raise UsageError(f"--out must be outside the kit's own files; received {out} "
                             f"(inside {forbidden})")
    return out


def write_notebooks(numbers: Iterable[int], out: Path | None = None, **kwargs) -> list[Path]:
    """Write ``0N_*.ipynb`` for each lesson in ``numbers`` into ``out``.

    Args:
        numbers: lesson numbers.
        out: the folder (created if needed; default :data:`DEFAULT_OUT`).
        **kwargs: ``backend``, ``options``, ``pip_spec`` of :func:`lesson_notebook`.

    Returns:
        The paths written, in the order of ``numbers``.
    """
    import nbformat

    out = _check_out_dir(Path(out) if out is not None else DEFAULT_OUT)
    notebooks = [(scripts.lesson_path(n), lesson_notebook(n, **kwargs)) for n in numbers]
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for script, nb in notebooks:
        target = out / (script.stem + ".ipynb")
        nbformat.write(nb, str(target))
        written.append(target)
    return written


def all_lesson_numbers() -> list[int]:
    """The numbers of every lesson script."""
    return sorted(int(p.name[:2]) for p in scripts.lessons_dir().glob("[0-9][0-9]_*.py"))
