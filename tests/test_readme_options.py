"""README.md's table of lesson options ("Options of every lesson") is the parser's.

Every option of ``kerasattn lesson``, ``kerasattn train`` and a lesson script
(:func:`kerasattn.course.options.parse_lesson_args`) has a row, every row names an option
they have, and each row writes the option's argument as the parser takes it (its metavar,
or its choices joined by ``|``; in brackets when the value is optional; nothing for a
flag).
"""
from __future__ import annotations

import argparse
import re

import pytest
from conftest import ROOT

from kerasattn import cli
from kerasattn.course import options

TABLE_HEADING = "Options of every lesson"


def readme_option_rows(text: str) -> dict[str, str]:
    """``{"--flag": "--flag ARG"}`` from the first column of the table after the heading."""
    after = text.split(TABLE_HEADING, 1)[1]
    table = re.search(r"^\|.*?(?=^[^|])", after, re.M | re.S).group(0)
    rows = {}
    for line in table.splitlines()[2:]:                 # below the header and the rule
        cell = line.split(" | ")[0].lstrip("| ").strip()
        spelled = re.fullmatch(r"`([^`]+)`", cell).group(1).replace("\\|", "|")
        flag = spelled.split()[0]
        assert flag not in rows, f"README.md lists {flag} twice"
        rows[flag] = spelled
    return rows


def spelled(action: argparse.Action) -> str:
    """How the table should write ``action``: ``--flag``, ``--flag ARG``, ``--flag [ARG]``."""
    flag = max(action.option_strings, key=len)
    if action.nargs == 0:
        return flag
    arg = action.metavar or "|".join(action.choices or ()) or action.dest.upper()
    return f"{flag} [{arg}]" if action.nargs == "?" else f"{flag} {arg}"


def subcommand_options(name: str) -> dict[str, str]:
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {max(a.option_strings, key=len): spelled(a)
            for a in sub.choices[name]._actions
            if a.option_strings and not isinstance(a, argparse._HelpAction)}


README_ROWS = readme_option_rows((ROOT / "README.md").read_text(encoding="utf-8"))


def test_the_table_is_read():
    assert readme_option_rows("x\n\nOptions of every lesson, with ...:\n\n| option | meaning |\n"
                              "| --- | --- |\n| `--quick` | tiny |\n| `--data PATH\\|LANG` | "
                              "a file |\n\nOutputs go...\n") == {
        "--quick": "--quick", "--data": "--data PATH|LANG"}
    assert "--quick" in README_ROWS and "--backend" in README_ROWS


TRAIN_ONLY = {"--beam": "--beam K"}
"""Options of ``kerasattn train`` alone, named in README.md's sentence under the table."""


def test_the_options_of_train_alone_are_named_under_the_table():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    train = subcommand_options("train")
    assert set(train) - set(subcommand_options("lesson")) == set(TRAIN_ONLY)
    for flag, spelled_as in TRAIN_ONLY.items():
        assert train[flag] == spelled_as
        assert f"`kerasattn train` takes one more option: `{spelled_as}`" in text


@pytest.mark.parametrize("command", ["lesson", "train"])
def test_readme_table_lists_exactly_the_options_of(command):
    parser_options = {k: v for k, v in subcommand_options(command).items()
                      if k not in TRAIN_ONLY}
    missing = sorted(set(parser_options) - set(README_ROWS))
    unknown = sorted(set(README_ROWS) - set(parser_options))
    assert not missing, f"`kerasattn {command}` options missing from README.md's table: " \
                        f"{missing}"
    assert not unknown, f"README.md's table lists options `kerasattn {command}` does not " \
                        f"have: {unknown}"
    wrong = {flag: (README_ROWS[flag], want) for flag, want in parser_options.items()
             if README_ROWS[flag] != want}
    assert not wrong, f"README.md writes these options otherwise than the parser " \
                      f"(README, parser): {wrong}"


def test_readme_table_lists_exactly_the_options_of_a_lesson_script(capsys):
    with pytest.raises(SystemExit) as exit_:
        options.parse_lesson_args(0, "lesson 00", ["--help"])
    assert exit_.value.code == 0
    flags = set(re.findall(r"^  (--[a-z][a-z-]*)", capsys.readouterr().out, re.M))
    assert flags - {"--help"} == set(README_ROWS)
