"""The sandbox worker: a fork server on one backend.

Started by the grader (``python -m kerasattn.grader.worker``) with ``KERAS_BACKEND`` set, it
imports NumPy and Keras once, then serves requests on a private control pipe: for each case
it ``os.fork()``s a child that starts a new session, drops the control pipe, redirects its
output to a log file, sets resource limits (``RLIMIT_DATA`` for memory — ``RLIMIT_AS`` breaks
JAX and TensorFlow, which reserve gigabytes of address space — plus file-size, core and CPU
backstops), blocks the forbidden imports, loads the spec and the submission by path, runs the
case and writes its raw outputs as float64 arrays to an ``.npz`` (no pickles). The worker
watches the child's wall time and resident memory and kills its whole process group on
overrun. It never scores anything: the parent validates the ``.npz`` and decides.

Control protocol (JSON lines): parent -> worker ``{"op": "run", ...}``; worker -> parent
``{"event": "started", "pid": ...}`` then ``{"event": "done", "rc": ..., "signal": ...,
"killed": null|"timeout"|"memory", "wall": ..., "peak_rss_mb": ...}``.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time

#: Written by the child when it finished; never trusted beyond a few short strings.
META_NAME = "meta.json"


def _status_kb(pid: int | str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _group_rss_kb(pgid: int) -> int:
    """Resident memory of every process in the session/process group ``pgid``."""
    total = 0
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0
    for p in pids:
        try:
            if os.getpgid(int(p)) == pgid:
                total += _status_kb(p, "VmRSS")
        except OSError:
            continue
    return total


# ---------------------------------------------------------------------------- child side
class _ForbiddenImportBlocker:
    """A ``sys.meta_path`` finder refusing forbidden modules imported by the submission."""

    def __init__(self, forbidden, submission_file, solutions_dir, guard=None):
        self.guard = guard
        self.forbidden = tuple(forbidden)
        self.submission_file = os.path.realpath(submission_file)
        self.solutions_dir = os.path.realpath(solutions_dir) if solutions_dir else None

    def _from_submission(self) -> bool:
        if self.guard is not None and self.guard.active:
            return self.guard._walk(sys._getframe(2), "student") is not None
        frame = sys._getframe(2)
        while frame is not None:
            filename = frame.f_code.co_filename
            if not (filename.startswith("<frozen importlib")
                    or f"{os.sep}importlib{os.sep}" in filename):
                return os.path.realpath(filename) == self.submission_file
            frame = frame.f_back
        return False

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "solutions" or fullname.startswith("solutions."):
            if self.solutions_dir is not None:
                if self.guard is not None:
                    self.guard.record(f"imports {fullname!r}: a submission may not use the "
                                      "solutions")
                raise ImportError(f"the grader blocks importing {fullname!r}: a submission "
                                  "may not use the solutions")
        for name in self.forbidden:
            if fullname == name or fullname.startswith(name + "."):
                if self._from_submission():
                    msg = (f"the grader blocks importing {fullname!r}: this exercise asks "
                           "you to write it yourself")
                    if self.guard is not None:
                        self.guard.record(msg)
                    raise ImportError(msg)
        return None


def _where(tb, submission_file) -> str:
    """The last traceback line inside the submission, as 'line N: code'."""
    import traceback

    target = os.path.realpath(submission_file)
    found = ""
    for frame in traceback.extract_tb(tb):
        if os.path.realpath(frame.filename) == target:
            found = f"line {frame.lineno}: {(frame.line or '').strip()}"
    return found


def _to_float64(value):
    import numpy as np

    if isinstance(value, np.ndarray):
        array = value
    elif isinstance(value, (bool, int, float, np.generic)):
        array = np.asarray(value)
    else:
        import keras

        if not (keras.ops.is_tensor(value) or isinstance(value, (list, tuple))):
            raise TypeError(f"an output is a {type(value).__name__}, not a tensor or array")
        array = keras.ops.convert_to_numpy(value)
    array = np.array(array, copy=True)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"an output has dtype {array.dtype}, not a number")
    return np.ascontiguousarray(array.astype(np.float64))


def _child(req: dict, log_fd: int) -> None:
    """Run one case in the forked child. Never returns."""
    out_dir = req["out_dir"]
    meta = {"ok": False}
    t0 = time.monotonic()
    times = {}
    try:
        os.setsid()
        for fd in (0,):
            os.dup2(os.open(os.devnull, os.O_RDONLY), fd)
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.chdir(out_dir)
        _set_limits(req)
        import resource  # noqa: F401  (already imported by _set_limits)

        import numpy as np

        from kerasattn.grader.spec import load_spec

        spec = load_spec(req["spec_path"])
        case = spec.case(req["case"])
        with np.load(os.path.join(out_dir, "inputs.npz"), allow_pickle=False) as data:
            inputs = {k: data[k] for k in data.files}
        inputs.update(req.get("scalars", {}))
        code_error = None
        try:
            with open(req["submission"], "rb") as f:
                code = compile(f.read(), req["submission"], "exec", dont_inherit=True)
        except (SyntaxError, ValueError, OSError) as exc:
            code, code_error = None, exc
        uid = req.get("uid")
        if uid is not None:  # from here on, the submission cannot touch the grader's files
            os.setgroups([])
            os.setgid(req["gid"])
            os.setuid(uid)
        from kerasattn.grader import guard as guard_mod

        spec_module = sys.modules.get("_kerasattn_spec_" + os.path.basename(spec.path)[:-3])
        guard = None
        if code is not None:
            guard = guard_mod.Guard(
                forbidden=req["forbidden"], submission=req["submission"],
                submission_code=code, report_fd=req.get("report_fd"),
                allow_numpy=bool(req.get("allow_numpy")), backend=req.get("backend", ""),
                skeleton=req.get("skeleton"), solutions_dir=req.get("solutions_dir"),
                extra_grader_codes=guard_mod.module_codes(spec_module))
        sys.meta_path.insert(0, _ForbiddenImportBlocker(req["forbidden"], req["submission"],
                                                        req.get("solutions_dir"), guard))
        import types

        mod_name = "submission_" + os.path.basename(req["submission"])[:-3]
        student = types.ModuleType(mod_name)
        student.__file__ = req["submission"]
        sys.modules[mod_name] = student
        stage = "import"
        times["setup"] = time.monotonic() - t0
        try:
            if code_error is not None:
                raise code_error
            guard.install()
            exec(code, student.__dict__)  # noqa: S102 - running the submission is the point
            guard.wrap_student(student)
            times["import"] = time.monotonic() - t0
            stage = "run"
            outputs = case.run(student, inputs)
            guard.finish()
            times["run"] = time.monotonic() - t0
            stage = "outputs"
            if not isinstance(outputs, dict):
                raise TypeError(f"the spec's run() returned {type(outputs).__name__}")
            arrays = {str(k): _to_float64(v) for k, v in outputs.items()}
        except BaseException as exc:  # noqa: BLE001 - SystemExit and friends included
            chain, e = [], exc
            while e is not None and len(chain) < 10:
                chain.append(type(e).__name__)
                e = e.__cause__ or e.__context__
            etype = "MemoryError" if "MemoryError" in chain or any(
                "MemoryError" in c for c in chain) else type(exc).__name__
            meta = {"ok": False, "stage": stage, "error_type": etype,
                    "error": str(exc)[:2000],
                    "where": _where(exc.__traceback__, req["submission"])}
            if not isinstance(exc, Exception):
                meta["error"] = (f"{type(exc).__name__}({exc}) raised during {stage}"
                                 )[:2000]
        else:
            tmp = os.path.join(out_dir, "outputs.tmp.npz")
            np.savez(tmp, **arrays)
            os.replace(tmp, os.path.join(out_dir, "outputs.npz"))
            times["save"] = time.monotonic() - t0
            meta = {"ok": True, "times": times}
    except BaseException as exc:  # noqa: BLE001
        meta = {"ok": False, "stage": "setup", "error_type": type(exc).__name__,
                "error": str(exc)[:2000], "where": ""}
    try:
        with open(os.path.join(out_dir, META_NAME), "w") as f:
            json.dump(meta, f)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


def _set_limits(req: dict) -> None:
    import resource

    mem = int(req["memory_mb"]) * 2**20
    data_now = _status_kb("self", "VmData") * 1024
    # RLIMIT_DATA counts private writable mappings (heap, anonymous mmap) since Linux 4.7.
    resource.setrlimit(resource.RLIMIT_DATA, (data_now + mem, data_now + mem))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 2**20, 64 * 2**20))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = int(req["timeout"] * 4) + 10  # a backstop; the worker enforces wall time
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))


# --------------------------------------------------------------------------- worker side
def _run(req: dict, ctl_out) -> None:
    log_fd = os.open(os.path.join(req["out_dir"], "log.txt"),
                     os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    if req.get("uid") is not None:
        os.fchown(log_fd, req["uid"], req["gid"])
    base_rss = _status_kb("self", "VmRSS")
    report_r, report_w = os.pipe()  # the child's findings; it cannot take them back
    os.set_blocking(report_w, False)
    os.set_blocking(report_r, False)
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(_CTL_IN)
            os.close(_CTL_OUT)
            os.close(report_r)
        except OSError:
            pass
        _child(dict(req, report_fd=report_w), log_fd)
    os.close(log_fd)
    os.close(report_w)
    findings = bytearray()
    _send(ctl_out, {"event": "started", "pid": pid})
    killed = None
    peak = 0
    limit_kb = base_rss + int(req["memory_mb"]) * 1024 + 256 * 1024
    status = None
    delay = 0.005
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        findings += _drain(report_r, len(findings))
        if done:
            break
        rss = _group_rss_kb(pid)
        peak = max(peak, rss)
        if rss > limit_kb:
            killed = "memory"
        elif time.monotonic() - start > req["timeout"]:
            killed = "timeout"
        if killed:
            _killpg(pid)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(delay)
        delay = min(delay * 1.5, 0.05)
    wall = time.monotonic() - start
    _killpg(pid)  # stragglers the submission started
    _kill_descendants()
    findings += _drain(report_r, len(findings))
    os.close(report_r)
    rc = os.waitstatus_to_exitcode(status) if status is not None else None
    lines = [ln for ln in findings.decode("utf-8", "replace").splitlines() if ln.strip()]
    _send(ctl_out, {"event": "done", "rc": rc, "killed": killed, "wall": wall,
                    "peak_rss_mb": (peak - 0) / 1024.0, "findings": lines[:20]})


def _drain(fd: int, have: int, limit: int = 32768) -> bytes:
    """What the child wrote to the findings pipe so far (bounded; never blocks)."""
    out = b""
    while have + len(out) < limit:
        try:
            chunk = os.read(fd, 4096)
        except (BlockingIOError, OSError):
            break
        if not chunk:
            break
        out += chunk
    return out[:max(0, limit - have)]


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(p))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _kill_descendants() -> None:
    """Kill every process left over from a case, daemonised ones included.

    The worker is a child subreaper (``PR_SET_CHILD_SUBREAPER``), so a grandchild that
    escapes with ``setsid()`` + double fork is re-parented to the worker, not to init,
    and is found here.
    """
    for _ in range(20):
        pids = _descendants(os.getpid())
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                time.sleep(0.01)


def _become_subreaper() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def _send(ctl_out, obj) -> None:
    ctl_out.write(json.dumps(obj) + "\n")
    ctl_out.flush()


_CTL_IN = _CTL_OUT = -1


def serve() -> None:
    """Import the backend once, then fork one child per request."""
    global _CTL_IN, _CTL_OUT
    _CTL_IN, _CTL_OUT = os.dup(0), os.dup(1)
    _become_subreaper()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray prints during imports must not reach the control pipe
    ctl_in = os.fdopen(_CTL_IN, "r")
    ctl_out = os.fdopen(_CTL_OUT, "w")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    t0 = time.monotonic()
    import keras
    import keras.ops  # noqa: F401
    import numpy  # noqa: F401

    import kerasattn.grader.childtools  # noqa: F401
    import kerasattn.grader.spec  # noqa: F401
    from kerasattn.grader import guard

    guard.prepare_worker()  # the whole kit, imported once; children never re-load it

    _send(ctl_out, {"event": "ready", "backend": keras.backend.backend(),
                    "keras": keras.__version__, "import_s": time.monotonic() - t0})
    for line in ctl_in:
        req = json.loads(line)
        if req.get("op") == "quit":
            break
        if req.get("op") == "run":
            _run(req, ctl_out)
    os._exit(0)


if __name__ == "__main__":
    serve()
