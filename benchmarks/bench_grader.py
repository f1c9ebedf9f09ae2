"""Benchmark: wall time of grading every solution (and every untouched exercise) per backend.

Target: grading every exercise on one backend takes at most 60 s on the course
machine. Run: ``.venv/bin/python benchmarks/bench_grader.py [--backends tensorflow jax torch]``.

Printed per backend: total wall time, the worker's start-up (importing Keras and the
backend once), the number of sandboxed cases (one forked child each), the mean and maximum
case wall time, and the score (the solutions must get full marks). JAX compiles every
eager op in every child; the grader shares compilations through a JAX compilation cache:
"cold" starts from an empty cache, "warm" from one filled by a previous trusted run (what
gradescope/setup.sh does once when the image is built). The run-time guard is part of
every case (kerasattn/grader/guard.py): on JAX and TensorFlow each call of the student's
functions and layer methods runs compiled (``jax.jit`` / ``tf.function``), which makes JAX
faster (one compiled program instead of one compilation per eager op) and adds a trace per
call on TensorFlow. Timings on a shared machine are noisy: the load average is printed
with them.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kerasattn._env import BACKENDS  # noqa: E402
from kerasattn.grader.engine import Grader  # noqa: E402

JOBS = 1


def _run(backend, paths, **kwargs):
    g = Grader([backend], jobs=JOBS, **kwargs)
    t0 = time.monotonic()
    result = g.grade(paths)
    wall = time.monotonic() - t0
    info = result["backend_info"].get(backend, {})
    cases = [w for w in g.case_walls if w[3] is not None]
    mean = sum(w[3] for w in cases) / max(len(cases), 1)
    worst = max(cases, key=lambda w: w[3]) if cases else None
    return {"wall": wall, "startup": info.get("startup_s", float("nan")),
            "cases": len(cases), "mean_case": mean, "worst": worst,
            "score": result["score"], "max": result["max_score"],
            "failing": [(e["exercise"], c["name"], r["message"][:120])
                        for e in result["exercises"] for c in e["checks"]
                        for r in c["results"].values() if r["status"] != "passed"]}


def _line(label, r):
    worst = f"{r['worst'][1]}/{r['worst'][2]} {r['worst'][3]:.2f}s" if r["worst"] else "-"
    print(f"{label:<28} {r['wall']:7.1f} s  start-up {r['startup']:5.1f} s  "
          f"{r['cases']:3d} cases  mean {r['mean_case']:5.2f} s  worst {worst:<40} "
          f"score {r['score']:g}/{r['max']:g}", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    p.add_argument("--skip-exercises", action="store_true")
    p.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                   help="cases graded at the same time (the CLI's default)")
    args = p.parse_args(argv)
    global JOBS
    JOBS = args.jobs
    print(f"load average before: {os.getloadavg()}, cpus: {os.cpu_count()}, jobs: {JOBS}")
    solutions, exercises = [str(ROOT / "solutions")], [str(ROOT / "exercises")]
    totals = {}
    for backend in args.backends:
        if backend == "jax":
            cache = tempfile.mkdtemp(prefix="bench-jax-cache-")
            try:
                cold = _run(backend, solutions, jax_cache=cache, jax_cache_update=True)
                _line("jax solutions (cold cache)", cold)
                warm = _run(backend, solutions, jax_cache=cache)
                _line("jax solutions (warm cache)", warm)
                totals[backend] = (cold, warm)
                r = warm
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        else:
            r = _run(backend, solutions)
            _line(f"{backend} solutions", r)
            totals[backend] = (r, r)
        for ex, name, msg in r["failing"][:10]:
            print(f"    not passing: {ex} / {name}: {msg}")
        if not args.skip_exercises:
            _line(f"{backend} exercises (untouched)", _run(backend, exercises))
    print(f"load average after: {os.getloadavg()}")
    print("\nsummary (target <= 60 s per backend):")
    for backend, (cold, warm) in totals.items():
        verdict = "OK" if cold["wall"] <= 60 else "OVER"
        extra = ""
        if backend == "jax":
            extra = (f"  warm cache {warm['wall']:.1f} s "
                     f"{'OK' if warm['wall'] <= 60 else 'OVER'}")
        print(f"  {backend:<11} {cold['wall']:6.1f} s {verdict}{extra}")


if __name__ == "__main__":
    main()
