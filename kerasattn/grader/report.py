"""Result writers: plain text, JSON, and Gradescope ``results.json``."""
from __future__ import annotations

import json
import os
import tempfile


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x != int(x) else str(int(x))


def to_text(result: dict) -> str:
    lines = []
    backends = result["backends"]
    for ex in result["exercises"]:
        head = f"{ex['exercise']}  {ex.get('title', '')}".rstrip()
        lines.append(f"{head:<62} {_fmt(ex['score'])}/{_fmt(ex['max_score'])}")
        for msg in ex["messages"]:
            lines += ["  ! " + m for m in msg.splitlines()]
        notes = set(ex.get("backend_notes", []))
        last = None
        for row in ex["checks"]:
            results = [(b, row["results"][b]) for b in backends if b in row["results"]]
            if not results:
                continue
            pts = _fmt(row["points"])
            groups = {}  # same status and message on several backends -> one entry
            for b, r in results:
                msg = "\n".join(m for m in r["message"].splitlines() if m not in notes)
                groups.setdefault((r["status"], msg), []).append(b)
            for (status, msg), bs in groups.items():
                tag = {"passed": "PASS", "failed": "FAIL"}.get(status, "ERR ")
                where = f"[{', '.join(bs)}] " if len(backends) > 1 else ""
                lines.append(f"  {tag}  {where}{row['name']} ({pts})")
                if status != "passed" and msg and ex["status"] not in ("static_error",
                                                                        "not_submitted"):
                    if msg == last:
                        lines.append("        (same as above)")
                    else:
                        lines += ["        " + m for m in msg.splitlines()]
                    last = msg
        for note in ex.get("backend_notes", []):
            lines.append("  note: " + note)
        lines.append("")
    lines.append(f"TOTAL {_fmt(result['score'])}/{_fmt(result['max_score'])} on "
                 f"{', '.join(backends)} ({result['execution_time']:.1f} s)")
    return "\n".join(lines) + "\n"


def to_json(result: dict) -> str:
    return json.dumps(result, indent=2, sort_keys=False) + "\n"


def to_gradescope(result: dict) -> str:
    tests = []
    for i, ex in enumerate(result["exercises"], 1):
        for j, row in enumerate(ex["checks"], 1):
            for k, b in enumerate(result["backends"], 1):
                r = row["results"].get(b)
                if r is None:
                    continue
                out = r["message"]
                if ex["status"] == "static_error":
                    out = "\n".join(ex["messages"])
                tests.append({
                    "name": f"{ex['exercise']} [{b}] {row['name']}",
                    "number": f"{i}.{j}.{k}",
                    "score": round(r["score"], 4),
                    "max_score": round(r["max_score"], 4),
                    "status": "passed" if r["status"] == "passed" else "failed",
                    "output": out,
                    "tags": [ex["exercise"], b],
                    "visibility": "after_published" if row.get("hidden") else "visible",
                })
        if not ex["checks"]:
            tests.append({"name": f"{ex['exercise']}", "number": f"{i}.0", "score": 0,
                          "max_score": 0, "status": "failed",
                          "output": "\n".join(ex["messages"]), "visibility": "visible"})
    notes = [n for ex in result["exercises"] for n in ex["backend_notes"]]
    summary = (f"Graded on {', '.join(result['backends'])}: {result['score']:.2f}/"
               f"{result['max_score']:.2f}.")
    if notes:
        summary += "\n\nBackend-specific code:\n" + "\n".join("- " + n for n in notes)
    payload = {"execution_time": round(result["execution_time"], 2), "output": summary,
               "visibility": "visible", "stdout_visibility": "hidden", "tests": tests,
               "extra_data": {"backend_info": result.get("backend_info", {})}}
    # The total is the engine's, not Gradescope's sum of the rows: each row is rounded to 4
    # decimals, and three rows of 1/3 point would add up to 0.9999.
    payload["score"] = 0.0 if result.get("grader_error") else round(result["score"], 4)
    return json.dumps(payload, indent=2) + "\n"


WRITERS = {"text": to_text, "json": to_json, "gradescope": to_gradescope}


def failure_result(backends, error: str, elapsed: float) -> dict:
    """A valid (score 0) result when grading itself failed."""
    return {"schema": "kerasattn-grade/1", "backends": list(backends), "score": 0.0,
            "max_score": 0.0, "execution_time": elapsed, "backend_info": {},
            "grader_error": error,
            "exercises": [{"exercise": "grader", "title": "grading failed", "path": "",
                           "status": "grader_error", "score": 0.0, "max_score": 0.0,
                           "messages": [f"the grader failed: {error}"],
                           "backend_notes": [], "checks": []}]}


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and ``os.replace``."""
    directory = os.path.dirname(os.path.abspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".results-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
