"""`kerasattn hint EXERCISE [N]`: tiered hints, stored beside each exercise's checks."""
from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from pathlib import Path

import pytest
from course_grading import EXERCISES

from kerasattn import cli
from kerasattn.grader import hints
from kerasattn.grader.spec import spec_paths


def _flat(text: str) -> str:
    return " ".join(text.split())


def _hints(stem: str) -> list[str]:
    return hints.hints_of(spec_paths()[stem])


def _without_comments(code: str) -> str:
    lines = code.splitlines()
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col].rstrip()
    return "\n".join(lines)


def _solution_code(exercise: Path) -> set[str]:
    """The code of the solution's student regions, whitespace-normalised, comments dropped:
    every line, and every simple statement and the expression it assigns or returns, that
    has 20 characters or more."""
    text = (exercise.parents[1] / "solutions" / exercise.name).read_text()
    found = set()
    for region in re.findall(r"# BEGIN YOUR CODE\n(.*?)\n\s*# END YOUR CODE", text, re.S):
        code = _without_comments(textwrap.dedent(region))
        found.update(_flat(line) for line in code.splitlines())
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.stmt) and not hasattr(node, "body"):
                for part in (node, getattr(node, "value", None)):
                    if part is not None:
                        found.add(_flat(ast.get_source_segment(code, part)))
    return {piece for piece in found if len(piece) >= 20}


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.stem)
def test_every_exercise_has_at_least_two_hints(path):
    found = _hints(path.stem)
    assert len(found) >= 2, f"{path.stem}: give its spec a HINTS list of 2 or more hints"
    assert len(set(found)) == len(found), path.stem
    assert all(len(h.split()) >= 8 for h in found), path.stem


@pytest.mark.parametrize("path", EXERCISES, ids=lambda p: p.stem)
def test_no_hint_copies_a_line_of_its_solution(path):
    """Hints name the steps, the equations and the API; they never hand over solution code."""
    code = _solution_code(path)
    assert code, f"{path.stem}: no solution code found between the markers"
    found = [_flat(h) for h in _hints(path.stem)]
    copied = [f"hint {n} copies {piece!r}" for piece in sorted(code)
              for n, hint in enumerate(found, 1) if piece in hint]
    copied += [f"the hints together copy {piece!r}" for piece in sorted(code)
               if piece in " ".join(found) and not any(piece in hint for hint in found)]
    assert not copied, f"{path.stem}: " + "; ".join(copied)


def test_hint_3_2_prints_the_second_hint(capsys):
    first, second = _hints("03_masked_softmax")[:2]
    assert cli.main(["hint", "3", "2"]) == 0
    out = _flat(capsys.readouterr().out)
    assert _flat(second) in out and _flat(first) not in out
    assert f"hint 2 of {len(_hints('03_masked_softmax'))}" in out
    assert "kerasattn hint 3 3" in out  # where the next, more explicit hint is


def test_hint_accepts_the_backend_option_like_every_subcommand(capsys):
    import keras

    assert cli.main(["hint", "5", "--backend", keras.backend.backend()]) == 0
    assert "hint 1 of" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["3", "03", "03_masked_softmax",
                                  "exercises/03_masked_softmax.py"])
def test_the_first_hint_by_default_whatever_the_exercise_is_called(capsys, name):
    assert cli.main(["hint", name]) == 0
    assert _flat(_hints("03_masked_softmax")[0]) in _flat(capsys.readouterr().out)


def test_the_last_hint_says_it_is_the_last(capsys):
    count = len(_hints("26_bleu_statistics"))
    assert cli.main(["hint", "26", str(count)]) == 0
    out = _flat(capsys.readouterr().out)
    assert "last hint" in out and "kerasattn grade exercises/26_bleu_statistics.py" in out


@pytest.mark.parametrize("name", ["99", "0", "softmax"])
def test_an_unknown_exercise_names_the_valid_range(capsys, name):
    assert cli.main(["hint", name]) == 2
    err = capsys.readouterr().err
    numbers = sorted(hints.exercise_numbers())
    assert f"no exercise {name!r}" in err
    assert f"{numbers[0]:02d}" in err and f"{numbers[-1]:02d}" in err


@pytest.mark.parametrize("n", ["0", "9"])
def test_an_unknown_hint_number_names_the_valid_range(capsys, n):
    count = len(_hints("03_masked_softmax"))
    assert cli.main(["hint", "3", n]) == 2
    assert f"choose N from 1 to {count}; received {n}" in capsys.readouterr().err
