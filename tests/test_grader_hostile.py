"""Hostile and broken submissions get exactly the score they deserve (current backend).

Every fixture in tests/grader_fixtures/<name>/91_fixture_attention.py is graded by the
fixture spec tests/grader_fixtures/specs/91_fixture_attention.py (9 points: weights 2,
output 1, rows sum to 1: 1, masked weights 2, masked keys get 0: 1, projection 1,
gradients 1). The expected score of each is derived in the comment next to it.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import keras
import pytest
from conftest import other_backends  # noqa: F401  (imported for symmetry with other tests)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "grader_fixtures"
SPECS = FIXTURES / "specs"

EXPECTED = {
    "good": 9,               # everything right
    "untouched": 0,          # NotImplementedError everywhere
    "exit_at_import": 0,     # sys.exit(0) at import: nothing can run
    "os_exit": 2,            # os._exit in attention kills its checks; the layer (1+1) is fine
    "infinite_loop": 6,      # loops only with a mask: masked checks (2+1) time out
    "memory_blowup": 7,      # the layer blows the memory limit: projection + gradient lost
    "monkeypatch_numpy": 4,  # unscaled scores: weights/output/masked weights fail (2+1+2)
    "eq_always_true": 2,     # non-array outputs are refused; the layer is fine
    "fake_print": 3,         # softmax over queries: only masked-zero + layer pass (1+2)
    "write_results": 0,      # static check: os.fork (its daemon); nothing runs
    "write_results_now": 7,  # writes the results file, no daemon; no bias: projection and
                             # the gradient of b fail
    "import_solutions": 0,   # static check: the solutions
    "import_reference": 0,   # static check: the grader's reference
    "forbidden_kit": 0,      # static check: keras.ops.dot_product_attention via an alias
    "wrong_shape": 3,        # transposed weights: only output + layer pass (1+2)
    "nan_output": 6,         # NaN on the fully masked row: masked checks (2+1) fail
    "kill_worker": 5,        # kills the worker in the unmasked case (2+1+1 lost); restarted
}
MESSAGES = {
    "untouched": "not implemented yet",
    "exit_at_import": "sys.exit",
    "os_exit": "os._exit",
    "infinite_loop": "time limit exceeded",
    "memory_blowup": "memory limit exceeded",
    "monkeypatch_numpy": "missing 1/sqrt(d_k) scaling",
    "eq_always_true": "not a tensor or array",
    "fake_print": "softmax over the wrong axis",
    "write_results": "exercise 91: your code starts a process (os.fork at line 42; "
                     "os.fork at line 44)",
    "write_results_now": "no gradient reaches b",
    "import_solutions": "may not use the solutions",
    "import_reference": "may not use the grader's float64 reference",
    "forbidden_kit": "keras.ops.dot_product_attention",
    "wrong_shape": "the axes look permuted",
    "nan_output": "NaN",
    "kill_worker": "took the",
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade every fixture once through the real command line, JSON and Gradescope."""
    out_dir = tmp_path_factory.mktemp("grade")
    paths = [str(FIXTURES / name / "91_fixture_attention.py") for name in EXPECTED]
    backend = keras.backend.backend()
    common = [*paths, "--backend", backend, "--spec-dir", str(SPECS), "--timeout", "8",
              "--memory-mb", "400", "--quiet"]
    json_out = out_dir / "results.json"
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "kerasattn", "grade", *common, "--format",
                           "json", "--output", str(json_out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=900,
                          env=dict(os.environ, GRADER_FIXTURE_OUTPUT=str(json_out)))
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, proc.stderr[-3000:]
    time.sleep(2.0)  # the write_results daemon (if it survived) would write every 0.5 s
    text = json_out.read_text()
    return {"result": json.loads(text), "stdout": proc.stdout, "elapsed": elapsed}


def _by_fixture(result):
    return {Path(e["path"]).parent.name: e for e in result["exercises"]}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_hostile_submission_gets_exactly_its_score(graded, name):
    ex = _by_fixture(graded["result"])[name]
    messages = "\n".join(ex["messages"] + [r["message"] for c in ex["checks"]
                                           for r in c["results"].values()])
    assert ex["score"] == EXPECTED[name], (name, ex["score"], messages)
    assert ex["max_score"] == 9
    if name in MESSAGES:
        assert MESSAGES[name] in messages, (name, messages)


def test_results_file_is_the_graders_own(graded):
    result = graded["result"]
    assert result["schema"] == "kerasattn-grade/1"  # not the fake one the submission wrote
    assert result["score"] == sum(EXPECTED.values())
    assert result["max_score"] == 9 * len(EXPECTED)
    assert "TOTAL 9/9" not in graded["stdout"]  # printed fake results never reach the output


def test_gradescope_output_always_valid(tmp_path):
    """Gradescope format: valid results.json, even when the spec folder is broken."""
    spec_dir = tmp_path / "specs"
    spec_dir.mkdir()
    (spec_dir / "91_fixture_attention.py").write_text("raise RuntimeError('broken spec')\n")
    out = tmp_path / "results" / "results.json"
    from kerasattn.grader import main

    rc = main([str(FIXTURES / "good" / "91_fixture_attention.py"), "--spec-dir", str(spec_dir),
               "--format", "gradescope", "--output", str(out), "--quiet",
               "--backend", keras.backend.backend()])
    assert rc == 0
    payload = json.loads(out.read_text())
    assert payload["tests"] and payload["tests"][0]["score"] == 0
    assert "broken spec" in payload["tests"][0]["output"]


def test_backend_specific_call_is_named():
    """torch-only code: passes on torch, fails elsewhere, and the torch call is named."""
    from kerasattn.grader.engine import Grader

    current = keras.backend.backend()
    backends = [current, "torch"] if current != "torch" else ["torch", "tensorflow"]
    path = FIXTURES / "backend_specific" / "91_fixture_attention.py"
    result = Grader(backends, spec_dir=SPECS, timeout=90, jobs=2).grade([path])
    ex = result["exercises"][0]
    rows = {c["name"]: c["results"] for c in ex["checks"]}
    other = backends[1] if backends[0] == "torch" else backends[0]
    assert rows["weights"]["torch"]["status"] == "passed"
    assert rows["weights"][other]["status"] == "failed"
    assert rows["projection output"][other]["status"] == "passed"
    note = rows["weights"][other]["message"]
    assert "on torch but fail" in note and "torch.softmax" in note and "line 13" in note, note
    assert ex["score"] == pytest.approx(9 / 2 + 2 / 2)


# ---------------------------------------------------------------- run-time guard routes
# Exercise 05 answered without doing it, each by a route an import statement does not show.
# Every check of exercise 05 depends on the student's function, so each deserves 0 / 10,
# with the message naming what was used (or the NumPy escape) on every failed check.
ROUTES = {
    "ex05_sys_modules": "uses the kit's own `kerasattn.layers.dot_product."
                        "scaled_dot_product_attention` (line 14",
    "ex05_dunder_import": "uses the kit's own `kerasattn.layers.dot_product."
                          "scaled_dot_product_attention` (line 13",
    "ex05_builtins_import": "uses the kit's own `kerasattn.layers.dot_product."
                            "scaled_dot_product_attention`",
    "ex05_import_module": "uses the kit's own `kerasattn.layers.dot_product."
                          "scaled_dot_product_attention` (line 14",
    "ex05_getattr_modules": "uses the kit's own `kerasattn.layers.dot_product."
                            "scaled_dot_product_attention` (line 15",
    "ex05_path_load": "reads the source of `kerasattn.layers.dot_product`",
    "ex05_exec_source": "reads the source of `kerasattn.layers.dot_product`",
    "ex05_exec_pasted": "runs a copy of the kit's own `kerasattn.layers.dot_product."
                        "scaled_dot_product_attention`",
    "ex05_numpy": "leaves keras.ops for NumPy at line 7",
    # another process reads the solution (refused statically when visible, else at run time)
    "ex05_subprocess_run": "exercise 05: your code starts a process (import subprocess at "
                           "line 3; subprocess.run at line 18); exercises must compute their "
                           "answer in the submission itself",
    "ex05_subprocess_hidden": "exercise 05: your code starts a process (subprocess.Popen at "
                              "line 20: proc = runner.run(",
    "ex05_os_system_hidden": "exercise 05: your code starts a process (os.system at line 18",
    "ex05_ctypes_system_hidden": "exercise 05: your code calls native code through ctypes "
                                 "(ctypes.dlopen at line 18",
    "ex05_fork_exec_hidden": "exercise 05: your code starts a process (os.fork at line 20",
    "ex05_process_pool_hidden": "exercise 05: your code starts a process "
                                "(_posixsubprocess.fork_exec at line 22",
    # exercise 04: context_vector written (2 points), the layer inherited from the kit's
    # class found through sys.modules; every layer check (8 points) fails
    "ex04_subclass": "uses the kit's own `kerasattn.layers.bahdanau.BahdanauAttention.",
}
ROUTE_FILES = {name: "04_bahdanau_attention.py" if name.startswith("ex04") else
               "05_scaled_dot_product.py" for name in ROUTES}
ROUTE_SCORES = {name: 2 if name == "ex04_subclass" else 0 for name in ROUTES}


def _kit_function_source() -> str:
    import re

    kit = (ROOT / "kerasattn" / "layers" / "dot_product.py").read_text()
    return re.search(r"^def scaled_dot_product_attention.*?^    return out, weights\n", kit,
                     re.DOTALL | re.MULTILINE).group(0)


@pytest.fixture(scope="module")
def graded_routes(tmp_path_factory):
    """Every route fixture and the solution, graded once with the kit's own specs."""
    tmp = tmp_path_factory.mktemp("routes")
    out = tmp / "routes.json"
    paths = [str(FIXTURES / name / ROUTE_FILES[name]) for name in ROUTES]
    pasted = tmp / "ex05_exec_pasted" / "05_scaled_dot_product.py"  # today's kit source
    pasted.parent.mkdir()
    pasted.write_text((FIXTURES / "ex05_exec_pasted" / "05_scaled_dot_product.py").read_text()
                      .replace("KIT_SOURCE\n", _kit_function_source()))
    paths[list(ROUTES).index("ex05_exec_pasted")] = str(pasted)
    paths.append(str(ROOT / "solutions" / "05_scaled_dot_product.py"))
    proc = subprocess.run([sys.executable, "-m", "kerasattn", "grade", *paths, "--backend",
                           keras.backend.backend(), "--format", "json", "--output", str(out),
                           "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {Path(e["path"]).parent.name: e for e in json.loads(out.read_text())["exercises"]}


@pytest.mark.parametrize("name", list(ROUTES))
def test_kit_answer_or_numpy_scores_zero_and_is_named(graded_routes, name):
    ex = graded_routes[name]
    failed = [r["message"] for c in ex["checks"] for r in c["results"].values()
              if r["status"] != "passed"]
    assert ex["max_score"] == 10
    assert ex["score"] == ROUTE_SCORES[name], (name, failed)
    assert failed and all(ROUTES[name] in m for m in failed), (name, failed)


def test_solution_graded_with_the_routes_keeps_full_marks(graded_routes):
    """The guard lets the solution use the allowed prerequisite (masked_softmax)."""
    ex = graded_routes["solutions"]
    assert ex["score"] == ex["max_score"] == 10, ex


def test_guard_catches_a_copy_written_into_the_submission(tmp_path):
    """A verbatim copy of the kit's function pasted into the file (not exec'd) is named."""
    from kerasattn.grader.engine import Grader

    body = _kit_function_source()
    sub = tmp_path / "05_scaled_dot_product.py"
    sub.write_text("from keras import ops\n\nfrom kerasattn.layers._checks import check_dim, "
                   "check_rank, dims_match, fmt, static_shape\nfrom kerasattn.layers.masking "
                   "import masked_softmax\n\n\n" + body)
    result = Grader([keras.backend.backend()], timeout=120).grade([sub])
    ex = result["exercises"][0]
    messages = [r["message"] for c in ex["checks"] for r in c["results"].values()]
    assert ex["score"] == 0, messages
    assert all("contains a copy of the kit's own `kerasattn.layers.dot_product."
               "scaled_dot_product_attention` (line 7)" in m for m in messages), messages


@pytest.mark.parametrize("source, needle", [
    ("import subprocess\nsubprocess.run(['ls'])", "subprocess.run at line 2"),
    ("import subprocess as sp\nsp.check_output('ls')", "subprocess.check_output at line 2"),
    ("from subprocess import Popen\nPopen(['ls'])", "from subprocess import Popen at line 1"),
    ("import os\nos.system('ls')", "os.system at line 2"),
    ("import os as o\npid = o.fork()", "os.fork at line 2"),
    ("from os import system\nsystem('ls')", "from os import system at line 1"),
    ("from os import execv as run\nrun('/bin/sh', ['sh'])", "os.execv at line 2"),
    ("from os import *\nforkpty()", "os.forkpty at line 2"),
    ("import os\nos.spawnlp(os.P_WAIT, 'ls', 'ls')", "os.spawnlp at line 2"),
    ("import os\nos.posix_spawnp('ls', ['ls'], {})", "os.posix_spawnp at line 2"),
    ("import os\nos.popen('ls').read()", "os.popen at line 2"),
    ("import os\nrun = getattr(os, 'system')\nrun('ls')", "os.system at line 3"),
    ("m = __import__('subprocess')", "__import__('subprocess') at line 1"),
    ("import importlib\nm = importlib.import_module('multiprocessing')",
     "importlib.import_module('multiprocessing') at line 2"),
    ("o = __import__('os')\no.system('ls')", "os.system at line 2"),
    ("import multiprocessing as mp\nmp.Process(target=print).start()",
     "multiprocessing.Process"),
    ("from concurrent.futures import ProcessPoolExecutor",
     "from concurrent.futures import ProcessPoolExecutor at line 1"),
    ("import pty\npty.spawn('sh')", "pty.spawn at line 2"),
])
def test_static_check_refuses_process_creation(source, needle):
    from kerasattn.grader.static_check import check_source

    rep = check_source(source, (), "05_scaled_dot_product.py")
    assert not rep.ok
    message = rep.message("05_scaled_dot_product.py")
    assert message.startswith("exercise 05: your code starts a process ("), message
    assert needle in message, message
    assert message.endswith("exercises must compute their answer in the submission itself")


def test_static_check_allows_what_starts_no_process():
    from kerasattn.grader.static_check import check_source

    source = ("import os\nimport concurrent.futures as cf\nimport threading\n"
              "path = os.path.join(os.getcwd(), 'x')\nsystem = 'unix'\nfork = len\n"
              "pool = cf.ThreadPoolExecutor(2)\nos.environ.get('HOME')\n")
    assert check_source(source, (), "05_scaled_dot_product.py").ok
