"""Reading what a sandboxed child left behind, and scoring it against the reference.

The child writes an ``.npz`` of numeric arrays and a short status file; nothing else is
trusted. :func:`_load_outputs` opens only regular files within a size limit and loads the
arrays with ``allow_pickle=False``; :func:`_failure_message` turns an exit code, a signal
or a timeout into a sentence; :func:`_evaluate` scores one check (a comparison with the
float64 reference, a gradient check or a property) for one backend.
"""
from __future__ import annotations

import json
import os
import re
import zipfile

import numpy as np

from kerasattn.grader import compare as cmp
from kerasattn.grader.spec import Compare, GradientCheck, Property, is_key_bias

MAX_OUTPUT_BYTES = 64 * 2**20



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
    text, _, _ = cmp.error_report(got, exp, check.atol, check.rtol)
    lines = [text + f" (tolerance atol={check.atol:g}, rtol={check.rtol:g})"]
    named = match_variants()
    lines += named or cmp.generic_variants(got, exp, check.atol, check.rtol)
    return False, "\n".join(lines)


def _gradients(check: GradientCheck, outputs) -> tuple[bool, str]:
    grads = {k[len(check.prefix):]: v for k, v in outputs.items() if k.startswith(check.prefix)}
    if not grads:
        return False, "no trainable weights reported a gradient (does the layer have weights?)"
    bad = sorted(k for k, g in grads.items() if not np.all(np.isfinite(g)))
    zero = sorted(k for k, g in grads.items()
                  if np.all(np.isfinite(g)) and not np.any(g) and not is_key_bias(k))
    msgs = []
    if bad:
        msgs.append(f"non-finite gradient for {', '.join(bad)}")
    if zero:
        msgs.append(f"no gradient reaches {', '.join(zero)} (the weight is unused, or the "
                    "path to it is cut: a stop_gradient, a conversion to NumPy, an argmax?)")
    return not msgs, "; ".join(msgs)
