#!/usr/bin/env python
"""Run every benchmark (``benchmarks/bench_*.py``) and print its figures (``make bench``).

Each benchmark prints its own table; this runner starts them one after the other, once per
backend for the benchmarks that measure the current backend, and ends with a summary of
what ran, for how long, and whether it succeeded. By default every benchmark runs in a
short mode (few repeats, a few models and lengths: minutes in all); ``--full`` runs them
with their own defaults. Timings on a shared machine are noisy: the load average is printed.

Usage:
    python tools/run_benchmarks.py [--backends tensorflow,jax,torch] [--only layers,decoding]
        [--full]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's kerasattn

from kerasattn._env import BACKENDS, installed_backends  # noqa: E402

# Benchmarks that take --backends themselves (they start one process per backend); the
# others measure the backend of their own process and run once per backend.
SELF_DISPATCHING = {"training", "grader"}

# Short-mode arguments per benchmark (a benchmark not listed runs with its defaults).
SHORT_ARGS = {
    "layers": ["--batch", "8", "--length", "16", "--rounds", "3", "--steps", "3"],
    "decoding": ["--models", "bahdanau,transformer", "--lengths", "64", "--repeats", "1"],
    "training": ["--models", "seq2seq,transformer", "--steps", "4", "--epochs", "2"],
    "grader": ["--skip-exercises"],
    "cross_entropy": ["--widths", "8,16", "--vocab", "2000", "--rounds", "2", "--steps", "2"],
    # short mode: the committed Tatoeba excerpt and tiny models (checks the pipeline; the
    # figures mean something only with a real file: `bench_real_data.py FILE --budget 240`)
    "real_data": [str(ROOT / "tests" / "data" / "jpn-eng-excerpt.txt"), "--reverse", "--tiny",
                  "--budget", "20"],
    "real_throughput": [str(ROOT / "tests" / "data" / "jpn-eng-excerpt.txt"), "--reverse",
                        "--tiny", "--rounds", "2"],
}


def benchmark_scripts() -> dict[str, Path]:
    """``{short name: path}`` of every ``benchmarks/bench_*.py``, sorted by name."""
    return {p.stem[len("bench_"):]: p for p in sorted((ROOT / "benchmarks").glob("bench_*.py"))}


def command(name: str, path: Path, backends: list[str], full: bool) -> list[list[str]]:
    """The command lines that run benchmark ``name`` (one per backend unless it dispatches)."""
    args = [] if full else SHORT_ARGS.get(name, [])
    if name == "grader":
        return [[sys.executable, str(path), "--backends", *backends, *args]]
    if name in SELF_DISPATCHING:
        return [[sys.executable, str(path), "--backends", ",".join(backends), *args]]
    return [[sys.executable, str(path), *args, f"KERAS_BACKEND={b}"] for b in backends]


def run(cmd: list[str]) -> tuple[int, float]:
    """Run one benchmark command (a trailing ``KERAS_BACKEND=b`` sets the backend)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    if cmd[-1].startswith("KERAS_BACKEND="):
        env["KERAS_BACKEND"] = cmd[-1].split("=", 1)[1]
        cmd = cmd[:-1]
    label = f"KERAS_BACKEND={env['KERAS_BACKEND']} " if "KERAS_BACKEND" in env else ""
    print(f"\n$ {label}{' '.join(Path(c).name if c == sys.executable else c for c in cmd)}",
          flush=True)
    start = time.perf_counter()
    rc = subprocess.call(cmd, cwd=ROOT, env=env)
    return rc, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    scripts = benchmark_scripts()
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default=",".join(installed_backends()),
                        help="comma-separated backends (default: every installed one)")
    parser.add_argument("--only", default=",".join(scripts),
                        help=f"comma-separated benchmarks (default: all: {', '.join(scripts)})")
    parser.add_argument("--full", action="store_true",
                        help="each benchmark's own (long) defaults instead of the short mode")
    args = parser.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown or not backends:
        parser.error(f"--backends: expected some of {', '.join(BACKENDS)}; received "
                     f"{args.backends!r}")
    only = [n.strip() for n in args.only.split(",") if n.strip()]
    missing = sorted(set(only) - set(scripts))
    if missing:
        parser.error(f"--only: no benchmark named {', '.join(missing)}; expected some of "
                     f"{', '.join(scripts)}")
    try:
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    print(f"benchmarks: {', '.join(only)} | backends: {', '.join(backends)} | mode: "
          f"{'full' if args.full else 'short'} | cpus: {os.cpu_count()} | load: {load}")
    summary = []
    for name in only:
        for cmd in command(name, scripts[name], backends, args.full):
            backend = cmd[-1].split("=", 1)[1] if cmd[-1].startswith("KERAS_BACKEND=") \
                else ",".join(backends)
            rc, seconds = run(cmd)
            summary.append((name, backend, rc, seconds))
    print("\n=== benchmarks ===", flush=True)
    print(f"{'benchmark':<10} {'backends':<24} {'result':<7} {'seconds':>8}")
    for name, backend, rc, seconds in summary:
        print(f"{name:<10} {backend:<24} {'ok' if rc == 0 else f'rc={rc}':<7} {seconds:>8.1f}")
    return 0 if all(rc == 0 for _, _, rc, _ in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
