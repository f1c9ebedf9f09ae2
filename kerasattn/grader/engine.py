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
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kerasattn.grader import compare as cmp
from kerasattn.grader.spec import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT,
    Compare,
    GradientCheck,
    Property,
    load_spec,
    spec_paths,
)
from kerasattn.grader.static_check import check_source

BACKENDS = ("tensorflow", "jax", "torch")
KIT_ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS_DIR = KIT_ROOT / "solutions"
EXERCISES_DIR = KIT_ROOT / "exercises"
MAX_OUTPUT_BYTES = 64 * 2**20
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

    def start(self) -> None:
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
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0"
                                " --xla_llvm_disable_expensive_passes=true").strip()
        if self.backend == "jax" and self.jax_cache:
            # XLA compiles every eager op on first use, in every forked child: a compilation
            # cache on disk shares the work between the children of this run.
            # ENABLE_XLA_CACHES=none: otherwise the cache folder's path is part of every key,
            # and a cache copied to another folder never hits.
            env.update(JAX_COMPILATION_CACHE_DIR=self.jax_cache,
                       JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES="none",
                       JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                       JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
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
            add(Submission(p.stem, p if p.is_file() else None, specs[p.stem]))
        else:
            add(Submission(p.stem if p.suffix == ".py" else p.name, p, None))
    return found


def _scalar_ok(v) -> bool:
    return isinstance(v, (bool, int, float, str)) and not isinstance(v, np.generic)


def _open_regular(path: str, limit: int):
    """Open a file the child wrote, refusing symlinks and special files (the sandbox user
    owns the folder and could point a name at a file only the grader may read)."""
    import io
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit or st.st_nlink != 1:
            return None  # (a hard link could also point at a private file)
        return io.BytesIO(f.read(limit + 1))


def _load_outputs(path: str) -> dict:
    """Load and validate the child's ``.npz``: numeric arrays only, bounded size."""
    buf = _open_regular(path, MAX_OUTPUT_BYTES)
    if buf is None:
        raise ValueError("no valid outputs file was written")
    with zipfile.ZipFile(buf) as z:
        if sum(i.file_size for i in z.infolist()) > MAX_OUTPUT_BYTES:
            raise ValueError("outputs too large")
    buf.seek(0)
    out = {}
    with np.load(buf, allow_pickle=False) as data:
        for key in data.files:
            a = data[key]
            if not isinstance(a, np.ndarray) or a.dtype.kind not in "biuf":
                raise ValueError(f"output {key!r} is not a numeric array")
            out[key] = np.asarray(a, dtype=np.float64)
    return out


def _read_meta(path: str) -> dict:
    buf = _open_regular(path, 20000)
    if buf is None:
        return {}
    try:
        raw = json.loads(buf.read().decode("utf-8", "replace"))
    except ValueError:
        return {}
    if not isinstance(raw, dict):
        return {}
    meta = {"ok": raw.get("ok") is True}
    times = raw.get("times")
    if isinstance(times, dict):
        meta["times"] = {str(k)[:20]: round(float(v), 3) for k, v in list(times.items())[:8]
                         if isinstance(v, (int, float))}
    for key in ("stage", "error_type", "error", "where"):
        v = raw.get(key)
        if isinstance(v, str):
            meta[key] = v[:1500]
    return meta


def _log_tail(path: str, n: int = 4) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    import stat

    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return ""
        f.seek(max(0, st.st_size - 4000))
        text = f.read(4000).decode("utf-8", "replace")
    lines = [ln for ln in text.splitlines() if ln.strip()][-n:]
    return "\n".join("  | " + ln[:200] for ln in lines)


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _clean_error(text: str) -> str:
    """Strip colour codes and Keras's 'Exception encountered when calling' wrapper."""
    text = _ANSI.sub("", text)
    if "Exception encountered when calling" in text:
        body = text.split("\n", 1)[1] if "\n" in text else text
        body = body.split("Arguments received by", 1)[0]
        text = " ".join(line.strip() for line in body.splitlines() if line.strip()) or text
    return text.strip()


def _failure_message(outcome: dict, meta: dict, timeout: float, memory_mb: int,
                     log: str) -> str:
    killed = outcome.get("killed")
    if killed == "timeout":
        return f"time limit exceeded: still running after {timeout:g} s (an infinite loop?)"
    if killed == "memory":
        return (f"memory limit exceeded: used more than {memory_mb} MB beyond the grader's "
                "own memory")
    if meta.get("error_type"):
        etype, where = meta["error_type"], meta.get("where", "")
        err = _clean_error(meta.get("error", ""))
        at = f" at {where}" if where else ""
        stage = meta.get("stage", "")
        if etype == "NotImplementedError":
            return f"not implemented yet: {err}" + (f" ({where})" if where else "")
        if etype == "MemoryError" or "Unable to allocate" in err:
            return f"memory limit exceeded ({memory_mb} MB): MemoryError{at}"
        if etype == "SystemExit":
            return (f"the submission called sys.exit({err}) during {stage}"
                    + (f" ({where})" if where else "") + ": nothing to grade (remove the exit)")
        if etype == "KeyboardInterrupt":
            return f"the submission raised KeyboardInterrupt{at}"
        if stage == "import":
            return f"importing the submission failed: {etype}: {err}{at}"
        if stage == "setup":
            return f"the sandbox could not run this case: {etype}: {err}"
        return f"{etype}: {err}{at}"
    rc = outcome.get("rc")
    if isinstance(rc, int) and rc < 0:
        msg = f"the submission's process was killed by signal {-rc}"
        if -rc == 24 or -rc == 9:
            msg += " (CPU-time limit?)"
        elif -rc == 25:
            msg += " (file-size limit: printing or writing too much?)"
    else:
        msg = (f"the submission's process ended (exit code {rc}) before returning any output: "
               "os._exit(), or a crash the grader could not catch")
    return msg + (f"\n  last output:\n{log}" if log else "")


def _evaluate(check, outputs, inputs, expected, failure, n_backends) -> dict:
    share = check.points / n_backends
    res = {"status": "failed", "score": 0.0, "max_score": share, "message": ""}
    if failure is not None:
        res["message"] = failure
        return res
    try:
        if isinstance(check, Compare):
            ok, msg = _compare(check, outputs, inputs, expected)
        elif isinstance(check, Property):
            try:
                msg = check.fn(outputs, inputs)
            except KeyError:
                raise
            except Exception as exc:  # noqa: BLE001 - usually a wrong output shape
                msg = f"could not check this property on your outputs: {exc}"
            if msg is not None and not isinstance(msg, str):
                msg = str(msg)
            ok = msg is None
            msg = msg or ""
        elif isinstance(check, GradientCheck):
            ok, msg = _gradients(check, outputs)
        else:
            ok, msg = False, f"unknown check type {type(check).__name__}"
    except KeyError as exc:
        ok, msg = False, f"missing output: {exc}"
    except Exception as exc:  # noqa: BLE001 - a spec bug must not stop grading
        ok, msg = False, f"grader error in this check: {type(exc).__name__}: {exc}"
        res["status"] = "error"
    if ok:
        res.update(status="passed", score=share)
    elif res["status"] != "error":
        res["status"] = "failed"
    res["message"] = msg
    if check.hidden and msg:
        res["message"] = "hidden check: the details are not shown"
    return res


def _compare(check: Compare, outputs, inputs, expected) -> tuple[bool, str]:
    key = check.expected_key or check.output
    if check.output not in outputs:
        return False, f"no output {check.output!r}"
    got, exp = outputs[check.output], np.asarray(expected[key], dtype=np.float64)
    variants = []
    for v in check.variants:
        try:
            variants.append((v, np.asarray(v.fn(inputs), dtype=np.float64)))
        except Exception as exc:  # noqa: BLE001
            variants.append((v, None))
            del exc

    def match_variants():
        names = [f"matches a known mistake: {v.name}." + (f" {v.hint}" if v.hint else "")
                 for v, arr in variants
                 if arr is not None and not cmp.close(arr, exp, check.atol, check.rtol)
                 and cmp.close(got, arr, check.atol, check.rtol)]
        return names

    if got.shape != exp.shape:
        lines = [cmp.describe_shape_mismatch(got.shape, exp.shape)]
        lines += match_variants() or cmp.generic_variants(got, exp, check.atol, check.rtol)[:1]
        return False, "\n".join(lines)
    bad = cmp.check_finite(got)
    if bad:
        return False, bad
    if cmp.close(got, exp, check.atol, check.rtol):
        return True, ""
    text, _, _ = cmp.error_report(got, exp)
    lines = [text + f" (tolerance atol={check.atol:g}, rtol={check.rtol:g})"]
    named = match_variants()
    lines += named or cmp.generic_variants(got, exp, check.atol, check.rtol)
    return False, "\n".join(lines)


def _gradients(check: GradientCheck, outputs) -> tuple[bool, str]:
    grads = {k[len(check.prefix):]: v for k, v in outputs.items() if k.startswith(check.prefix)}
    if not grads:
        return False, "no trainable weights reported a gradient (does the layer have weights?)"
    bad = sorted(k for k, g in grads.items() if not np.all(np.isfinite(g)))
    zero = sorted(k for k, g in grads.items() if np.all(np.isfinite(g)) and not np.any(g))
    msgs = []
    if bad:
        msgs.append(f"non-finite gradient for {', '.join(bad)}")
    if zero:
        msgs.append(f"no gradient reaches {', '.join(zero)} (the weight is unused, or the "
                    "path to it is cut: a stop_gradient, a conversion to NumPy, an argmax?)")
    return not msgs, "; ".join(msgs)


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
