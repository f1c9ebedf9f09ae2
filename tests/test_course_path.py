"""The path through the course: every lesson names its exercises, every exercise belongs to
exactly one lesson, and the README's "Start here" table and exercises/README.md say the same."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def lesson_exercises() -> dict[int, list[str]]:
    """lesson number -> the exercise numbers its "Next: your exercises" cell lists."""
    out = {}
    for path in sorted((ROOT / "lessons").glob("0[0-6]_*.py")):
        text = path.read_text(encoding="utf-8")
        assert "# ## Next: your exercises" in text, f"{path.name} names no exercises"
        cell = text.split("# ## Next: your exercises", 1)[1].split("# %%\n", 1)[0]
        named = re.findall(r"^# - (\d\d) `(\w+)`(?: and (\d\d) `(\w+)`)?", cell, re.M)
        numbers = []
        for a, name_a, b, name_b in named:
            for number, name in ((a, name_a), (b, name_b)):
                if number:
                    assert (ROOT / "exercises" / f"{number}_{name}.py").is_file(), \
                        f"{path.name} names exercises/{number}_{name}.py, which does not exist"
                    numbers.append(number)
        out[int(path.name[:2])] = numbers
    return out


def test_every_exercise_belongs_to_exactly_one_lesson():
    named = [n for numbers in lesson_exercises().values() for n in numbers]
    existing = sorted(p.name[:2] for p in (ROOT / "exercises").glob("[0-9][0-9]_*.py"))
    assert sorted(named) == existing, "each exercise must be named by exactly one lesson"


def test_readme_start_here_table_matches_the_lessons():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Start here (students)", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d\d) [^|]+\| ([^|]+) \|$", section, re.M)
    table = {int(lesson): re.findall(r"\d\d", cells) for lesson, cells in rows}
    assert table == lesson_exercises()


def test_exercises_readme_gives_each_exercise_its_lesson():
    text = (ROOT / "exercises" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d\d) \| (\d\d) \| `(\d\d)_\w+\.py` \|", text, re.M)
    assert rows, "exercises/README.md has no `| # | lesson | file |` table"
    by_lesson = {}
    for number, lesson, file_number in rows:
        assert number == file_number
        by_lesson.setdefault(int(lesson), []).append(number)
    expected = {k: sorted(v) for k, v in lesson_exercises().items()}
    assert {k: sorted(v) for k, v in by_lesson.items()} == expected
