"""The ``kerasattn`` command (placeholder until the lessons issue fills it in)."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("kerasattn: the command-line interface is being built; see README.md.", file=sys.stderr)
    return 2
