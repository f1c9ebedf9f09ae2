"""The kerasattn autograder: sandboxed, multi-backend, with explained numerical feedback.

``kerasattn grade`` calls :func:`main`; :func:`grade` is the Python API. See
docs/GRADER_FORMAT.md (exercise and spec format) and docs/grading.md (instructors).
"""
from __future__ import annotations


def main(argv=None) -> int:
    """``kerasattn grade [PATH ...] --backend ... --format ... [--output FILE]``."""
    from kerasattn.grader.cli import main as _main

    return _main(argv)


def grade(paths, backends=("tensorflow",), **kwargs) -> dict:
    """Grade files/folders on the given backends; returns the results dict."""
    from kerasattn.grader.engine import grade as _grade

    return _grade(paths, backends, **kwargs)
