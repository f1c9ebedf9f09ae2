"""Finding and running the lesson scripts (``lessons/0N_*.py``).

In a clone the scripts are in ``lessons/`` next to the package; an installed wheel ships
them inside the package (``kerasattn/lessons/``).
"""
from __future__ import annotations

import runpy
import sys
from pathlib import Path

from kerasattn._env import UsageError

_PACKAGE = Path(__file__).resolve().parents[1]


def lessons_dir() -> Path:
    """The folder holding the lesson scripts (installed package data, else the clone's)."""
    for candidate in (_PACKAGE / "lessons", _PACKAGE.parent / "lessons"):
        if any(candidate.glob("0[0-9]_*.py")):
            return candidate
    raise UsageError(f"the lesson scripts are missing from this installation (looked in "
                     f"{_PACKAGE / 'lessons'} and {_PACKAGE.parent / 'lessons'}); reinstall "
                     f"kerasattn")


def lesson_path(number: int) -> Path:
    """The lesson script ``0N_*.py``; a :class:`UsageError` when there is none."""
    folder = lessons_dir()
    found = sorted(folder.glob(f"{number:02d}_*.py")) if 0 <= number <= 99 else []
    if not found:
        have = sorted(int(p.name[:2]) for p in folder.glob("[0-9][0-9]_*.py"))
        raise UsageError(f"no lesson {number}: N must be one of "
                         f"{', '.join(map(str, have))}; received {number}")
    return found[0]


def run_lesson_file(path: Path, argv: list[str]) -> int:
    """Run a lesson script in this process (as ``__main__``) with ``argv``; its exit code."""
    old = sys.argv
    sys.argv = [str(path), *argv]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = old
    return 0
