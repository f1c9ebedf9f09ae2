"""The run-time guard (kerasattn/grader/guard.py) on its own, in a fresh process.

The guard installs an audit hook that cannot be removed, so it never runs in the test
process itself: each test starts a small Python process on the current backend that
installs it over a made-up submission and reports what it found.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import keras

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = r'''
import json, os, sys
import numpy as np
import keras
from keras import ops
from kerasattn.grader import guard as G

G.prepare_worker()
SUBMISSION = os.path.abspath("05_made_up.py")   # never written: the code is compiled here
SOURCE = """
import sys
from keras import ops

def through_allowed_layer(x):
    mha = sys.modules["kerasattn.layers"].MultiHeadCross(num_heads=2, d_model=4)
    return mha(x, x)

def direct(x):
    return sys.modules["kerasattn.layers"].scaled_dot_product_attention(x, x, x)[0]

def swallowed(x):
    try:
        return direct(x)
    except Exception:
        return x

def allowed_helper(x):
    return sys.modules["kerasattn.layers"].masked_softmax(x, None)

def numpy_escape(x):
    import numpy
    return ops.convert_to_tensor(numpy.tanh(ops.convert_to_numpy(x)))

def keras_only(x):
    return ops.tanh(x)

def starts_process(x):
    import subprocess
    subprocess.run(["true"])
    return x

def process_swallowed(x):
    try:
        getattr(__import__("o" + "s"), "sys" + "tem")("true")
    except Exception:
        pass
    return x

def process_in_thread(x):
    import subprocess, threading
    thread = threading.Thread(target=subprocess.run, args=(["true"],))
    thread.start()
    thread.join()
    return x

def forks(x):
    import os
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return x

def spawn_context(x):
    import multiprocessing
    process = multiprocessing.get_context("spawn").Process(target=print)
    process.start()
    process.join()
    return x
"""
# The grader's own code (a spec) may start a process: it is not the submission's.
GRADER = """
def grader_helper():
    import subprocess
    return subprocess.run(["true"]).returncode
"""
grader_code = compile(GRADER, "<spec>", "exec")
code = compile(SOURCE, SUBMISSION, "exec")
guard = G.Guard(forbidden=["kerasattn.layers.dot_product",
                           "kerasattn.layers.scaled_dot_product_attention"],
                submission=SUBMISSION, submission_code=code, report_fd=None,
                backend=keras.backend.backend(), extra_grader_codes=[grader_code])
guard.install()
student = {"__name__": "student"}
exec(code, student)
import types
module = types.ModuleType("student")
module.__dict__.update(student)
guard.wrap_student(module)
x = ops.convert_to_tensor(np.random.default_rng(0).normal(size=(1, 3, 4)), "float32")
out = {}
import threading
threading.excepthook = lambda args: None  # the refused thread's GuardError: recorded
grader = {}
exec(grader_code, grader)
for name in ("through_allowed_layer", "allowed_helper", "keras_only", "swallowed",
             "direct", "numpy_escape", "starts_process", "process_swallowed",
             "process_in_thread", "forks", "spawn_context", "grader_helper"):
    guard.findings.clear()
    before = len(guard.findings)
    try:
        if name == "grader_helper":
            assert grader[name]() == 0
        else:
            getattr(module, name)(x)
        error = ""
    except Exception as exc:
        error = type(exc).__name__
    out[name] = {"error": error, "findings": guard.findings[before:]}
guard.finish()
print(json.dumps(out))
'''


def _run():
    env = dict(os.environ, KERAS_BACKEND=keras.backend.backend(), TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_guard_allows_prerequisites_and_catches_uses():
    out = _run()
    # an allowed kit layer may use the forbidden function internally; other helpers work
    for name in ("through_allowed_layer", "allowed_helper", "keras_only"):
        assert out[name] == {"error": "", "findings": []}, (name, out[name])
    # a direct use raises GuardError and is recorded, with the submission's line
    assert out["direct"]["error"] == "GuardError"
    assert "kerasattn.layers.dot_product.scaled_dot_product_attention" in \
        out["direct"]["findings"][0]
    assert "(line 10" in out["direct"]["findings"][0], out["direct"]
    # catching the error does not hide the use
    assert out["swallowed"]["error"] == ""
    assert out["swallowed"]["findings"] and "line 10" in out["swallowed"]["findings"][0]
    # NumPy on a tensor is named, on every backend
    assert out["numpy_escape"]["error"] == "GuardError", out["numpy_escape"]
    assert "leaves keras.ops for NumPy" in out["numpy_escape"]["findings"][0]


def test_guard_refuses_processes_the_submission_starts():
    out = _run()
    start = "exercise 05: your code starts a process ("
    end = "); exercises must compute their answer in the submission itself"
    expected = {  # name: (error, what was refused and where)
        "starts_process": ("GuardError", "subprocess.Popen at line 30"),
        "process_swallowed": ("", "os.system at line 35"),  # caught: still recorded
        "process_in_thread": ("", "subprocess.Popen in a thread it started"),
        "forks": ("GuardError", "os.fork at line 49"),
        # multiprocessing's spawn start method: _posixsubprocess.fork_exec, no audit event
        "spawn_context": ("GuardError", "_posixsubprocess.fork_exec at line 58"),
    }
    for name, (error, what) in expected.items():
        assert out[name]["error"] == error, (name, out[name])
        assert len(out[name]["findings"]) == 1, (name, out[name])
        finding = out[name]["findings"][0]
        assert finding.startswith(start + what) and finding.endswith(end), (name, finding)
    # the grader's (or the kit's) own code may start a process
    assert out["grader_helper"] == {"error": "", "findings": []}, out["grader_helper"]
