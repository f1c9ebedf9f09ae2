"""``kerasattn grade [PATH ...] --backend B --format F [--output FILE]``."""
from __future__ import annotations

import argparse
import os
import sys
import time

from kerasattn._env import (
    BACKENDS,
    UsageError,
    add_backend_option,
    check_backend,
    default_backend,
    installed_backends,
)
from kerasattn.grader.spec import DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kerasattn grade",
        description="Grade exercise files against the float64 references, each check in a "
                    "sandboxed process, on one or every Keras backend.")
    p.add_argument("paths", nargs="*", default=None, metavar="PATH",
                   help="exercise files or folders (default: ./exercises)")
    add_backend_option(p, allow_all=True)
    p.add_argument("--format", default="text", choices=["text", "json", "gradescope"])
    p.add_argument("--output", default=None, help="write the results here (default: stdout)")
    p.add_argument("--timeout", type=float, default=None,
                   help=f"cap on each check's wall time in seconds (default: the spec's, "
                        f"else {DEFAULT_TIMEOUT:g})")
    p.add_argument("--memory-mb", type=int, default=None,
                   help=f"memory each check may allocate (default: the spec's, else "
                        f"{DEFAULT_MEMORY_MB})")
    p.add_argument("--spec-dir", default=None, help="folder of check specs (default: the kit's)")
    p.add_argument("--sandbox-user", default=None,
                   help="run student code as this user (the grader must run as root)")
    p.add_argument("--jax-cache", default=None, metavar="DIR",
                   help="start JAX's compilation cache from a copy of DIR (copied per run; "
                        "submissions never write to DIR)")
    p.add_argument("--jax-cache-update", action="store_true",
                   help="copy this run's JAX compilations back into --jax-cache (only for "
                        "trusted code, e.g. grading the solutions when building an image)")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="cases run at the same time, one worker process each (default: "
                        "min(2, CPUs); each worker holds the framework in memory)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``kerasattn grade``. Returns 0 when results were written."""
    from kerasattn.grader import report
    from kerasattn.grader.engine import Grader

    args = build_parser().parse_args(argv)
    if args.backend not in (None, "all", *BACKENDS):
        print(f"kerasattn grade: error: --backend must be one of {', '.join(BACKENDS)} or "
              f"all; received {args.backend!r}", file=sys.stderr)
        return 2
    try:  # the same check, and the same error, as every other command of the kit
        if args.backend == "all":
            # "all" is every installed backend: a student who installed one framework is
            # graded on it, not failed on the two that cannot start
            backends = installed_backends()
            skipped = [b for b in BACKENDS if b not in backends]
            if not backends:
                raise UsageError("--backend all: no backend is installed; install one with "
                                 "`pip install 'kerasattn[jax]'` (or tensorflow, torch)")
            if skipped:
                print(f"kerasattn grade: --backend all grades on {', '.join(backends)}; "
                      f"not installed here: {', '.join(skipped)} (install with `pip "
                      f"install 'kerasattn[{skipped[0]}]'`). A course's grader runs all "
                      "three.", file=sys.stderr)
        else:
            backends = [check_backend(args.backend) if args.backend else default_backend()]
    except UsageError as exc:
        print(f"kerasattn grade: error: {exc}", file=sys.stderr)
        return 2
    paths = args.paths or ["exercises"]
    progress = None if args.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    t0 = time.monotonic()
    try:
        grader = Grader(backends, spec_dir=args.spec_dir, timeout=args.timeout,
                        memory_mb=args.memory_mb, sandbox_user=args.sandbox_user,
                        progress=progress, jax_cache=args.jax_cache,
                        jax_cache_update=args.jax_cache_update, jobs=args.jobs)
        result = grader.grade(paths)
        text = report.WRITERS[args.format](result)
    except Exception as exc:  # noqa: BLE001 - the results file must always be valid
        result = report.failure_result(backends, f"{type(exc).__name__}: {exc}",
                                       time.monotonic() - t0)
        text = report.WRITERS[args.format](result)
    if args.output:
        report.write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
