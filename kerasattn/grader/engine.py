"""The grading engine (parent process): discovery, sandboxed runs, scoring, diagnosis.

Only this process decides scores. Student code runs in children forked by a per-backend
worker (:mod:`kerasattn.grader.worker`); from a child the parent accepts exactly one thing,
an ``.npz`` of numeric arrays that it loads with ``allow_pickle=False`` and validates
(size, dtype, shape, finiteness) before comparing it with the float64 reference it computed
itself. The child's short status file is read only for its error strings.
"""
from __future__ import annotations

import json
import os
import queue
import re
import secrets
import selectors
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kerasattn._env import JAX_CACHE_ENV, fast_xla_compile
from kerasattn.grader.outcomes import (
    _clean_error,
    _evaluate,
    _failure_message,
    _load_outputs,
    _log_tail,
    _read_meta,
    _scalar_ok,
)
from kerasattn.grader.spec import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT,
    load_spec,
    spec_paths,
)
from kerasattn.grader.static_check import check_source

KIT_ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS_DIR = KIT_ROOT / "solutions"
EXERCISES_DIR = KIT_ROOT / "exercises"
SCHEMA = "kerasattn-grade/1"


class WorkerDied(RuntimeError):
    """The backend worker exited or stopped answering (the submission may have killed it)."""


class Worker:
    """Parent-side handle on a fork-server worker for one backend."""

    def __init__(self, backend: str, scratch: str, startup_timeout: float = 180.0,
                 jax_cache: str | None = None):
        self.backend = backend
        self.jax_cache = jax_cache
        self.scratch = scratch
        self.startup_timeout = startup_timeout
        self.proc = None
        self.info = {}
        self.starts = 0

    def environment(self) -> dict:
        """The worker's environment: the caller's, less anything secret, with the backend,
        the kit on the path, and JAX's compilation cache only where this run owns it."""
        secret = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|API_KEY|AUTH", re.I)
        env = {k: v for k, v in os.environ.items() if not secret.search(k)}
        env.update(KERAS_BACKEND=self.backend, TF_CPP_MIN_LOG_LEVEL="3",
                   PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0",
                   PYTHONPATH=os.pathsep.join(
                       [str(KIT_ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(
                           os.pathsep) if p]))
        env.pop("PYTHONSTARTUP", None)
        if self.backend == "jax":
            # Tiny shapes: XLA's compile time dominates, not run time. Skipping the expensive
            # LLVM passes compiles each eager op about a quarter faster (measured).
            fast_xla_compile(env)
        # JAX runs what it reads from a compilation cache: the kit's own cache
        # (backend_utils.jax_compilation_cache) stays off in a worker, so a submission
        # never writes one that a later run would trust
        env[JAX_CACHE_ENV] = "off"
        if not self.jax_cache:   # only a trusted run's own cache, never one from the caller
            for key in [k for k in env if k.startswith(("JAX_COMPILATION_CACHE",
                                                        "JAX_PERSISTENT_CACHE"))]:
                env.pop(key)
        if self.backend == "jax" and self.jax_cache:
            # XLA compiles every eager op on first use, in every forked child: a compilation
            # cache on disk shares the work between the children of this run.
            # ENABLE_XLA_CACHES=none: otherwise the cache folder's path is part of every key,
            # and a cache copied to another folder never hits.
            env.update(JAX_COMPILATION_CACHE_DIR=self.jax_cache,
                       JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES="none",
                       JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                       JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
        return env

    def start(self) -> None:
        env = self.environment()
        self.errlog = open(os.path.join(self.scratch, f"worker-{self.backend}.log"), "ab")
        t0 = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-m", "kerasattn.grader.worker"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.errlog, cwd=self.scratch, env=env,
                                     start_new_session=True)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        self._buf = b""
        msg = self._read(self.startup_timeout)
        if msg.get("event") != "ready":
            raise WorkerDied(f"worker for {self.backend} did not start: {msg}")
        self.info = dict(msg, startup_s=time.monotonic() - t0)
        self.starts += 1

    def _read(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not self._sel.select(left):
                raise WorkerDied(f"the {self.backend} worker did not answer in {timeout:.0f} s")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise WorkerDied(f"the {self.backend} worker exited "
                                 f"(rc={self.proc.poll()})")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError as exc:
            raise WorkerDied(f"garbled answer from the {self.backend} worker") from exc

    def run(self, request: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        child = None
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
            started = self._read(30.0)
            child = started.get("pid")
            return self._read(request["timeout"] + 30.0)
        except (WorkerDied, OSError) as exc:
            if child:
                try:
                    os.killpg(int(child), 9)
                except (OSError, ValueError):
                    pass
            self.close()
            raise WorkerDied(str(exc)) from exc

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except OSError:
                    pass
            self.errlog.close()
            self.proc = None


@dataclass
class Submission:
    stem: str
    path: Path | None
    spec_path: Path | None
    #: the path named on the command line when it does not exist (``path`` is then None)
    missing: Path | None = None


def discover(paths, spec_dir=None) -> list[Submission]:
    """Pair each submitted file with its spec by file stem.

    A folder yields one entry per spec (missing files are "not submitted"); a file yields
    one entry (with no spec when its stem matches none).
    """
    specs = spec_paths(spec_dir)
    found: list[Submission] = []
    seen = set()

    def add(sub):
        key = (sub.stem, str(sub.path.resolve()) if sub.path else None)
        if key not in seen:
            seen.add(key)
            found.append(sub)

    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for stem, spec in specs.items():
                f = p / f"{stem}.py"
                add(Submission(stem, f if f.is_file() else None, spec))
        elif p.suffix == ".py" and p.stem in specs:
            add(Submission(p.stem, p if p.is_file() else None, specs[p.stem],
                           None if p.is_file() else p))
        else:
            add(Submission(p.stem if p.suffix == ".py" else p.name, p, None))
    return found


class Grader:
    """Grade submissions on one or more backends (see :func:`grade`)."""

    def __init__(self, backends, spec_dir=None, timeout=None, memory_mb=None,
                 sandbox_user=None, progress=None, jax_cache=None, jax_cache_update=False,
                 jobs=1):
        """See :func:`kerasattn.grader.cli.build_parser` for the arguments.

        ``jax_cache``: a folder of JAX compilation-cache entries made by grading trusted
        code (the solutions); it is copied into this run's scratch folder so submissions
        never write to it. ``jax_cache_update`` copies the run's entries back (only for
        trusted runs such as ``kerasattn grade solutions`` in Gradescope's setup.sh).
        ``jobs``: sandboxed cases run at the same time (one worker each).
        """
        self.backends = list(backends)
        self.jobs = int(jobs)
        self.jax_cache = jax_cache
        self.jax_cache_update = jax_cache_update
        self.spec_dir = spec_dir
        self.timeout = timeout
        self.memory_mb = memory_mb
        self.progress = progress or (lambda msg: None)
        self.case_walls = []
        self.uid = self.gid = None
        if sandbox_user:
            import pwd

            pw = pwd.getpwnam(sandbox_user)
            self.uid, self.gid = pw.pw_uid, pw.pw_gid

    def grade(self, paths) -> dict:
        t0 = time.monotonic()
        scratch = tempfile.mkdtemp(prefix="kerasattn-grade-")
        if self.uid is not None:
            os.chmod(scratch, 0o711)
        try:
            return self._grade(paths, scratch, t0)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _grade(self, paths, scratch, t0) -> dict:
        n_b = len(self.backends)
        exercises = []
        prepared = []
        for sub in discover(paths, self.spec_dir):
            ex = {"exercise": sub.stem, "title": "", "path": str(sub.path or ""),
                  "status": "graded", "score": 0.0, "max_score": 0.0, "messages": [],
                  "backend_notes": [], "checks": []}
            exercises.append(ex)
            if sub.spec_path is None:
                ex["status"] = "no_spec"
                if sub.path is not None and not sub.path.exists():
                    ex["messages"].append(f"{sub.path} does not exist")
                else:
                    ex["messages"].append(
                        f"no checks exist for {sub.path}: its file name must be one of the "
                        "exercises (e.g. 05_scaled_dot_product.py)")
                continue
            try:
                spec = load_spec(sub.spec_path)
            except Exception as exc:  # noqa: BLE001
                ex["status"] = "spec_error"
                ex["messages"].append(f"grader error: spec {sub.spec_path.name} failed to "
                                      f"load: {type(exc).__name__}: {exc}")
                continue
            ex["title"] = spec.title
            ex["max_score"] = spec.max_score
            ex["checks"] = [{"name": c.name, "case": c.case, "points": float(c.points),
                             "hidden": c.hidden, "kind": type(c).__name__, "results": {}}
                            for c in spec.checks]
            static = None
            if sub.path is None:
                ex["status"] = "not_submitted"
                failure = f"{sub.stem}.py was not submitted"
                if sub.missing is not None:
                    failure = (f"{sub.missing} does not exist (looked for "
                               f"{sub.missing.resolve()}): check the path, or run the "
                               "command from the folder that holds `exercises/`")
                ex["messages"].append(failure)
            else:
                source = sub.path.read_bytes().decode("utf-8", "replace")
                static = check_source(source, spec.all_forbidden, sub.path.name)
                failure = None if static.ok else static.message(sub.path.name)
                if failure:
                    ex["status"] = "static_error"
                    ex["messages"].append(failure)
            ex["_static"] = static
            if failure:
                for c, row in zip(spec.checks, ex["checks"]):
                    for b in self.backends:
                        row["results"][b] = _evaluate(c, None, None, None, failure, n_b)
                continue
            prepared.append((sub, spec, ex, self._prepare(spec, scratch, ex)))

        for b in self.backends:
            self._run_backend(b, prepared, scratch, n_b)

        for ex in exercises:
            static = ex.pop("_static", None)
            self._cross_backend_notes(ex, static)
            # points x (backends passed / backends), rounded: 3 x (1/3) must give 1, not 0.999..
            ex["score"] = round(sum(
                row["points"] * sum(r["status"] == "passed" for r in row["results"].values())
                / max(n_b, 1) for row in ex["checks"]), 6)
        return {"schema": SCHEMA, "backends": self.backends,
                "score": round(sum(e["score"] for e in exercises), 6),
                "max_score": float(sum(e["max_score"] for e in exercises)),
                "execution_time": time.monotonic() - t0,
                "backend_info": getattr(self, "_info", {}), "exercises": exercises}

    def _prepare(self, spec, scratch, ex) -> dict:
        """Inputs (seeded) and float64 expected outputs of every case, once for all backends."""
        cases = {}
        for case in spec.cases:
            entry = {"case": case, "error": None}
            try:
                inputs = case.build(np.random.default_rng(case.seed))
                arrays = {k: np.asarray(v) for k, v in inputs.items() if not _scalar_ok(v)}
                scalars = {k: v for k, v in inputs.items() if _scalar_ok(v)}
                for k, a in arrays.items():
                    if a.dtype.kind not in "biuf":
                        raise TypeError(f"input {k!r} has dtype {a.dtype}")
                d = os.path.join(scratch, f"in-{secrets.token_hex(8)}")
                os.makedirs(d)
                np.savez(os.path.join(d, "inputs.npz"), **arrays)
                entry.update(inputs=dict(inputs), input_path=os.path.join(d, "inputs.npz"),
                             scalars=scalars)
                entry["expected"] = case.expected(dict(inputs)) if case.expected else {}
            except Exception as exc:  # noqa: BLE001
                entry["error"] = (f"grader error: case {case.name!r} of spec {spec.exercise} "
                                  f"failed in the grader: {type(exc).__name__}: {exc}")
                ex["messages"].append(entry["error"])
            cases[case.name] = entry
        return cases

    def _run_backend(self, backend, prepared, scratch, n_b) -> None:
        if not prepared:
            return
        cache = None
        if backend == "jax":
            cache = os.path.join(scratch, "jax-cache")
            if self.jax_cache and os.path.isdir(self.jax_cache):
                shutil.copytree(self.jax_cache, cache, dirs_exist_ok=True)
            os.makedirs(cache, exist_ok=True)
            if self.uid is not None:
                for root, dirs, files in os.walk(cache):
                    for name in [root] + [os.path.join(root, f) for f in dirs + files]:
                        os.chown(name, self.uid, self.gid)
        jobs = max(1, min(self.jobs, sum(len(cases) for *_, cases in prepared)))
        workers = [Worker(backend, scratch, jax_cache=cache) for _ in range(jobs)]
        info = {"cases": 0, "worker_starts": 0, "jobs": jobs}
        t0 = time.monotonic()
        try:
            errors = []

            def start(w):
                try:
                    w.start()
                except Exception as exc:  # noqa: BLE001
                    errors.append(exc)

            threads = [threading.Thread(target=start, args=(w,)) for w in workers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                for sub, spec, ex, cases in prepared:
                    for c, row in zip(spec.checks, ex["checks"]):
                        row["results"][backend] = _evaluate(
                            c, None, None, None, f"grader error: the {backend} backend did "
                            f"not start ({errors[0]})", n_b)
                info["error"] = str(errors[0])
                return
            info.update(keras=workers[0].info.get("keras"),
                        startup_s=round(max(w.info.get("startup_s", 0.0) for w in workers), 3))
            tasks = queue.Queue()
            todo = [(sub, spec, ex, name, entry) for sub, spec, ex, cases in prepared
                    for name, entry in cases.items()]
            # cases that declare a longer time limit (the big models) start first, so the
            # slowest one does not start last (results are scored in order below anyway)
            todo.sort(key=lambda t: -float(t[4]["case"].timeout or DEFAULT_TIMEOUT))
            for task in todo:
                tasks.put(task)
            outcomes = {}

            def drain(w):
                while True:
                    try:
                        sub, spec, ex, name, entry = tasks.get_nowait()
                    except queue.Empty:
                        return
                    self.progress(f"[{backend}] {spec.exercise} / {name}")
                    outcomes[id(entry)] = self._run_case(w, backend, sub, spec, entry, scratch)

            threads = [threading.Thread(target=drain, args=(w,)) for w in workers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            for sub, spec, ex, cases in prepared:  # scoring: in order, in this thread
                for name, entry in cases.items():
                    outputs, failure = outcomes[id(entry)]
                    info["cases"] += 1
                    if failure and entry.get("_where"):
                        ex.setdefault("_where", {}).setdefault(backend, entry["_where"])
                    for c, row in zip(spec.checks, ex["checks"]):
                        if c.case == name:
                            row["results"][backend] = _evaluate(
                                c, outputs, entry.get("inputs"), entry.get("expected"),
                                failure, n_b)
        finally:
            info["worker_starts"] = sum(w.starts for w in workers)
            for w in workers:
                w.close()
            if cache and self.jax_cache and self.jax_cache_update:
                shutil.copytree(cache, self.jax_cache, dirs_exist_ok=True)
            info["grading_s"] = round(time.monotonic() - t0, 3)
            self._info = getattr(self, "_info", {})
            self._info[backend] = info

    def _run_case(self, worker, backend, sub, spec, entry, scratch):
        entry.pop("_where", None)
        if entry["error"]:
            return None, entry["error"]
        case = entry["case"]
        timeout = float(self.timeout or case.timeout or DEFAULT_TIMEOUT)
        if self.timeout and case.timeout:
            timeout = min(float(self.timeout), float(case.timeout))
        memory_mb = int(self.memory_mb or case.memory_mb or DEFAULT_MEMORY_MB)
        out_dir = os.path.join(scratch, f"run-{secrets.token_hex(8)}")
        os.makedirs(out_dir)
        shutil.copy(entry["input_path"], os.path.join(out_dir, "inputs.npz"))
        if self.uid is not None:
            os.chown(out_dir, self.uid, self.gid)
        request = {"op": "run", "spec_path": spec.path, "case": case.name,
                   "submission": str(Path(sub.path).resolve()), "out_dir": out_dir,
                   "scalars": entry["scalars"], "forbidden": list(spec.all_forbidden),
                   "solutions_dir": str(SOLUTIONS_DIR), "timeout": timeout,
                   "backend": backend, "allow_numpy": bool(getattr(spec, "allow_numpy", False)),
                   "skeleton": str(EXERCISES_DIR / f"{spec.exercise}.py"),
                   "memory_mb": memory_mb, "uid": self.uid, "gid": self.gid}
        try:
            outcome = worker.run(request)
        except Exception as exc:  # noqa: BLE001 - WorkerDied, or a failed restart
            worker.close()
            shutil.rmtree(out_dir, ignore_errors=True)
            return None, (f"the submission's process took the {backend} grading worker down "
                          f"({exc}); the worker was restarted for the next check")
        meta = _read_meta(os.path.join(out_dir, "meta.json"))
        self.case_walls.append((backend, spec.exercise, case.name, outcome.get("wall"),
                                meta.get("times")))
        log = _log_tail(os.path.join(out_dir, "log.txt"))
        failure = None
        outputs = None
        findings = [str(f)[:600] for f in (outcome.get("findings") or [])][:5]
        if findings:  # the run-time guard caught the kit's answer, a copy, or NumPy
            failure = ("the grader caught the submission at run time: "
                       + "; ".join(_clean_error(f) for f in findings))
            entry["_where"] = meta.get("where", "")
        elif outcome.get("killed") or not meta.get("ok"):
            failure = _failure_message(outcome, meta, timeout, memory_mb, log)
            entry["_where"] = meta.get("where", "")
        else:
            try:
                outputs = _load_outputs(os.path.join(out_dir, "outputs.npz"))
            except Exception as exc:  # noqa: BLE001
                failure = f"the outputs could not be read safely: {exc}"
        shutil.rmtree(out_dir, ignore_errors=True)
        return outputs, failure

    def _cross_backend_notes(self, ex, static) -> None:
        """One note per pattern 'passes on A, fails on B', naming the backend-specific code."""
        where = ex.pop("_where", {})
        if len(self.backends) < 2:
            return
        groups: dict[tuple, list] = {}
        for row in ex["checks"]:
            passed = tuple(b for b, r in row["results"].items() if r["status"] == "passed")
            failed = tuple(b for b, r in row["results"].items() if r["status"] != "passed")
            if passed and failed:
                groups.setdefault((passed, failed), []).append(row)
        for (passed, failed), rows in groups.items():
            names = ", ".join(f"'{r['name']}'" for r in rows)
            note = (f"{names} pass{'es' if len(rows) == 1 else ''} on {', '.join(passed)} but "
                    f"fail{'s' if len(rows) == 1 else ''} on {', '.join(failed)}: "
                    "backend-specific code.")
            lines = {where[b] for b in failed if where.get(b)}
            if lines:
                note += f" On {', '.join(failed)} it fails at {'; '.join(sorted(lines))}."
            if static is not None and static.backend_calls:
                calls = "; ".join(f"line {ln}: {name} ({bk}-only)"
                                  for ln, name, bk in static.backend_calls[:5])
                note += f" Backend-native calls: {calls}. Use keras.ops instead."
            elif not lines:
                note += (" Look for NumPy calls on tensors, Python control flow on tensor "
                         "values, or dtype differences (float64 vs float32).")
            for row in rows:
                for b in failed:
                    row["results"][b]["message"] += "\n" + note
            ex["backend_notes"].append(note)


def grade(paths, backends=("tensorflow",), **kwargs) -> dict:
    """Grade ``paths`` (files or folders) on ``backends``; returns the results dict."""
    return Grader(backends, **kwargs).grade(paths)
