"""Tiered hints for the exercises: ``kerasattn hint EXERCISE [N]``.

Each exercise's check spec (``kerasattn/grader/specs/NN_name.py``) holds its hints beside
its checks, as ``HINTS = ["...", "...", ...]``: hint 1 points the way, each later hint says
more, and the last one comes close to the answer. They are read from the spec's source
(``ast.literal_eval``, nothing is imported), so asking for a hint loads no framework.
"""
from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

from kerasattn._env import UsageError
from kerasattn.grader.spec import spec_paths

__all__ = ["exercise_numbers", "hints_of", "find_exercise", "hint_text"]


def _assigned(path: Path, name: str):
    """The AST node assigned to ``name`` at the top of a module, or None."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name
                                                for t in node.targets):
            return node.value
    return None


def hints_of(path) -> list[str]:
    """The ``HINTS`` list of a spec file (``[]`` if it has none).

    Raises:
        ValueError: ``HINTS`` is not a literal list of non-empty strings.
    """
    node = _assigned(path, "HINTS")
    if node is None:
        return []
    try:
        hints = ast.literal_eval(node)
    except ValueError as exc:
        raise ValueError(f"{path}: HINTS must be a literal list of strings ({exc})") from None
    if not isinstance(hints, list) or not all(isinstance(h, str) and h.strip() for h in hints):
        raise ValueError(f"{path}: HINTS must be a list of non-empty strings")
    return hints


def _title(path) -> str:
    """The ``title=`` of the spec's ``Spec(...)`` call, or the file stem."""
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Spec":
            for kw in node.keywords:
                if kw.arg == "title" and isinstance(kw.value, ast.Constant):
                    return str(kw.value.value)
    return Path(path).stem


def exercise_numbers(spec_dir=None) -> dict[int, Path]:
    """``{number: spec path}`` of every exercise with a check spec."""
    return {int(stem[:2]): path for stem, path in spec_paths(spec_dir).items()
            if re.fullmatch(r"\d\d_\w+", stem)}


def _ranges(numbers) -> str:
    """``[1, 2, 3, 5]`` -> ``"01-03, 05"``."""
    runs, numbers = [], sorted(numbers)
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a:02d}" if a == b else f"{a:02d}-{b:02d}" for a, b in runs)


def find_exercise(name: str, spec_dir=None) -> Path:
    """The spec of exercise ``name``: ``3``, ``03``, ``03_masked_softmax`` or a file path.

    Raises:
        UsageError: no such exercise (the message names the valid numbers).
    """
    known = exercise_numbers(spec_dir)
    match = re.match(r"(\d+)", Path(str(name)).name)
    if match and int(match.group(1)) in known:
        return known[int(match.group(1))]
    raise UsageError(f"no exercise {name!r}: the exercises are {_ranges(known)} (give the "
                     f"number, e.g. `kerasattn hint {min(known)}`)")


def hint_text(exercise: str, n: int = 1, spec_dir=None) -> str:
    """Hint ``n`` (1-based) of an exercise, as printed by ``kerasattn hint``.

    Raises:
        UsageError: unknown exercise, an exercise without hints, or ``n`` out of range
            (the message names the valid range).
    """
    path = find_exercise(exercise, spec_dir)
    stem, hints = path.stem, hints_of(path)
    number = int(stem[:2])
    if not hints:
        raise UsageError(f"exercise {number:02d} ({stem}) has no hints yet")
    if not 1 <= n <= len(hints):
        raise UsageError(f"exercise {number:02d} has {len(hints)} hints: choose N from 1 to "
                         f"{len(hints)}; received {n}")
    body = textwrap.fill(" ".join(hints[n - 1].split()), width=88, initial_indent="  ",
                         subsequent_indent="  ", break_on_hyphens=False)
    if n < len(hints):
        after = f"A more explicit hint: kerasattn hint {number} {n + 1}"
    else:
        after = (f"This is the last hint. Check your work: kerasattn grade "
                 f"exercises/{stem}.py --backend all")
    return f"Exercise {number:02d} ({_title(path)}), hint {n} of {len(hints)}\n\n{body}\n\n{after}"
