"""Tests of the autograder: diagnosis, static checks, writers, and real grading runs.

The grading runs use the current backend only (one worker each); the full
``--backend all`` run is benchmarks/bench_grader.py.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kerasattn.grader import compare, properties, report
from kerasattn.grader.engine import discover
from kerasattn.grader.outcomes import _load_outputs
from kerasattn.grader.spec import Case, Compare, Property, Spec
from kerasattn.grader.static_check import check_source

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "grader_fixtures"


# ------------------------------------------------------------------- diagnosis (parent)
def test_shape_mismatch_names_the_axis():
    msg = compare.describe_shape_mismatch((2, 3, 5), (2, 3, 4))
    assert "axis 2 has size 5, expected 4" in msg
    assert "permuted" in compare.describe_shape_mismatch((2, 4, 3), (2, 3, 4))
    assert "axis 1 (size 3) is missing" in compare.describe_shape_mismatch((2, 4), (2, 3, 4))
    assert "extra axis 0" in compare.describe_shape_mismatch((1, 2, 3, 4), (2, 3, 4))


def test_error_report_gives_worst_index_and_errors():
    expected = np.full((2, 3), 2.0)
    got = expected.copy()
    got[1, 2] = 5.0
    got[0, 0] = 2.5
    text, max_abs, max_rel = compare.error_report(got, expected)
    assert "at index (1, 2) (got 5, expected 2)" in text, text
    assert max_abs == pytest.approx(3.0) and max_rel == pytest.approx(1.5)
    assert "2 of 6 entries differ" in text
    # with a tolerance, only the entries beyond it are counted (float32 round-off is not)
    got[0, 1] = 2.0 + 1e-6
    assert "3 of 6 entries differ" in compare.error_report(got, expected)[0]
    assert "2 of 6 entries differ" in compare.error_report(got, expected, 1e-4, 1e-3)[0]


def test_generic_variants_name_constant_factor_and_transpose():
    rng = np.random.default_rng(0)
    e = rng.standard_normal((2, 3, 3))
    assert any("constant factor" in m for m in compare.generic_variants(2.0 * e, e, 1e-6, 1e-6))
    assert any("swapped" in m
               for m in compare.generic_variants(np.swapaxes(e, -1, -2), e, 1e-6, 1e-6))
    assert compare.generic_variants(e, e, 1e-6, 1e-6) == []


def test_properties_detect_violations():
    w = np.full((1, 2, 2), 0.5)
    assert properties.rows_sum_to_one("w")({"w": w}, {}) is None
    assert "sum to 1" in properties.rows_sum_to_one("w")({"w": w * 1.5}, {})
    assert "future key 1" in properties.causal("w")({"w": w}, {})
    tri = np.array([[[1.0, 0.0], [0.5, 0.5]]])
    assert properties.causal("w")({"w": tri}, {}) is None
    mask = np.array([[True, False]])
    assert "masked position" in properties.zero_where_masked("w", "m")({"w": w}, {"m": mask})
    nan = np.array([[[1.0, np.nan], [1.0, 0.0]]])
    assert properties.zero_where_masked("w", "m")({"w": nan}, {"m": mask}) is not None
    same = properties.same_where("a", "b", "keep")
    keep = np.array([[True, False]])
    a, b = np.zeros((1, 2, 3)), np.zeros((1, 2, 3))
    b[0, 1] = 9.0
    assert same({"a": a, "b": b}, {"keep": keep}) is None
    assert "changed the output" in same({"a": a, "b": b}, {"keep": ~keep})


# -------------------------------------------------------------------------- static check
FORBIDDEN = ("kerasattn.layers.dot_product", "kerasattn.layers.scaled_dot_product_attention",
             "keras.ops.dot_product_attention", "solutions", "kerasattn.reference")


@pytest.mark.parametrize("source, needle", [
    ("from kerasattn.layers.dot_product import scaled_dot_product_attention",
     "kerasattn.layers.dot_product"),
    ("from kerasattn.layers import scaled_dot_product_attention as f",
     "kerasattn.layers.scaled_dot_product_attention"),
    ("import kerasattn.layers.dot_product as d", "kerasattn.layers.dot_product"),
    ("from keras import ops as K\ny = K.dot_product_attention(1, 2, 3)",
     "keras.ops.dot_product_attention"),
    ("import keras\ny = keras.ops.dot_product_attention(1, 2, 3)",
     "keras.ops.dot_product_attention"),
    ("m = __import__('solutions.x')", "solutions.x"),
    ("import importlib\nm = importlib.import_module('kerasattn.reference')",
     "kerasattn.reference"),
    ("src = open('../solutions/05_x.py').read()", "solutions/05_x.py"),
    ("from kerasattn import reference", "kerasattn.reference"),
    ("import gc\nobjs = gc.get_objects()", "gc"),
    ("import ctypes", "ctypes"),
    ("def f(): pass\nf.__code__ = (lambda: 1).__code__", "__code__"),
    ("import sys\nsys.setprofile(None)", "sys.setprofile"),
    ("from sys import _getframe", "sys._getframe"),
    ("g = globals()['__kerasattn_guard__']", "__kerasattn_guard__"),
    ("x = getattr(f, '__closure__')", "__closure__"),
])
def test_static_check_flags_forbidden_names(source, needle):
    rep = check_source(source, FORBIDDEN, "sub.py")
    assert not rep.ok
    assert any(needle in name for _, name, _ in rep.forbidden), rep.forbidden
    assert "sub.py line" in rep.message("sub.py")


def test_static_check_allows_prerequisites_and_lists_backend_calls():
    src = ("import torch\nfrom keras import ops\n"
           "from kerasattn.layers.masking import masked_softmax\n"
           "def f(x):\n    return torch.softmax(x, -1) + ops.softmax(x)\n")
    rep = check_source(src, FORBIDDEN, "sub.py")
    assert rep.ok, rep.forbidden
    assert (5, "torch.softmax", "torch") in rep.backend_calls
    assert check_source("print('compare with solutions/05.py later')\n", FORBIDDEN).ok
    bad = check_source("def f(:\n", FORBIDDEN, "sub.py")
    assert not bad.ok and "SyntaxError line 1" in bad.message("sub.py")


# ----------------------------------------------------------------- specs and validation
def test_spec_rejects_unknown_case_and_duplicates():
    case = Case("a", build=lambda rng: {}, run=lambda s, i: {})
    with pytest.raises(ValueError, match="unknown case 'b'"):
        Spec("x", "t", [case], [Compare("c", case="b", output="o", points=1)])
    with pytest.raises(ValueError, match="duplicate check name"):
        Spec("x", "t", [case], [Property("c", case="a", points=1, fn=lambda o, i: None)] * 2)


def test_load_outputs_refuses_pickles_and_strings(tmp_path):
    good = tmp_path / "good.npz"
    np.savez(good, a=np.arange(3.0), b=np.array([True, False]))
    out = _load_outputs(str(good))
    assert out["a"].dtype == np.float64 and out["b"].tolist() == [1.0, 0.0]
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, a=np.array([object()], dtype=object))
    with pytest.raises(ValueError):
        _load_outputs(str(pickled))
    text = tmp_path / "text.npz"
    np.savez(text, a=np.array(["9/9"]))
    with pytest.raises(ValueError, match="not a numeric array"):
        _load_outputs(str(text))
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"PK\x03\x04 not a zip")
    with pytest.raises((ValueError, zipfile.BadZipFile, OSError)):
        _load_outputs(str(junk))


def test_discover_pairs_files_by_stem(tmp_path):
    (tmp_path / "91_fixture_attention.py").write_text("x = 1\n")
    (tmp_path / "notes.py").write_text("x = 1\n")
    subs = discover([tmp_path, tmp_path / "notes.py"], FIXTURES / "specs")
    assert [(s.stem, s.spec_path is not None) for s in subs] == [
        ("91_fixture_attention", True), ("notes", False)]


def _gradescope_ok(payload: dict) -> None:
    assert isinstance(payload["tests"], list) and payload["tests"]
    for t in payload["tests"]:
        assert set(t) >= {"name", "score", "max_score", "status", "output", "number"}
        assert t["status"] in ("passed", "failed")
        assert 0 <= t["score"] <= t["max_score"] + 1e-9
        assert t["visibility"] in ("hidden", "after_due_date", "after_published", "visible")


def test_gradescope_total_is_exact_when_points_split_over_three_backends():
    backends = ["tensorflow", "jax", "torch"]
    rows = [{"name": f"check {i}", "points": 1, "hidden": False,
             "results": {b: {"score": 1 / 3, "max_score": 1 / 3, "status": "passed",
                             "message": ""} for b in backends}} for i in range(10)]
    result = {"backends": backends, "score": 10.0, "max_score": 10.0, "execution_time": 1.0,
              "exercises": [{"exercise": "05_x", "status": "graded", "messages": [],
                             "backend_notes": [], "checks": rows}]}
    payload = json.loads(report.to_gradescope(result))
    _gradescope_ok(payload)
    assert sum(t["score"] for t in payload["tests"]) < 10.0  # rows rounded to 0.3333
    assert payload["score"] == 10.0  # the total Gradescope shows is the engine's


def test_failure_result_is_valid_gradescope():
    res = report.failure_result(["jax"], "boom", 1.0)
    payload = json.loads(report.to_gradescope(res))
    assert payload["score"] == 0.0 and "boom" in payload["tests"][0]["output"]
    assert "grading failed" in report.to_text(res) or "boom" in report.to_text(res)


def test_gradient_check_exempts_only_the_key_bias():
    from kerasattn.grader.outcomes import _gradients
    from kerasattn.grader.spec import GradientCheck

    check = GradientCheck("every weight receives a gradient", case="c", points=1)
    ok = {"grad/block/self_attention/key_dense/bias": np.zeros(4),
          "grad/block/self_attention/key_dense/kernel": np.ones((4, 4))}
    assert _gradients(check, ok) == (True, "")
    passed, message = _gradients(check, {**ok, "grad/block/value_dense/bias": np.zeros(4)})
    assert not passed and "value_dense/bias" in message and "key_dense" not in message
    passed, message = _gradients(check, {"grad/key_bias": np.array([np.nan])})
    assert not passed and "non-finite" in message


def test_the_key_bias_rule_knows_the_kits_own_weight_names():
    from kerasattn.grader.childtools import _names
    from kerasattn.grader.spec import is_key_bias
    from kerasattn.layers import MultiHeadCross

    layer = MultiHeadCross(num_heads=2, d_model=8)
    x = np.zeros((1, 3, 8), "float32")
    layer(x, x)
    exempt = [n for n in _names(layer) if is_key_bias(n)]
    assert exempt == [v.path for v in layer.key_dense.weights if v.name == "bias"], exempt
    assert is_key_bias("decoder/key_bias") and not is_key_bias("monkey/bias")


def test_a_missing_file_named_on_the_command_line_says_where_it_looked(tmp_path):
    from kerasattn.grader.engine import grade

    gone = tmp_path / "typo" / "91_fixture_attention.py"
    res = grade([gone], backends=("jax",), spec_dir=FIXTURES / "specs")
    text = report.to_text(res)
    assert "does not exist" in text and str(gone.resolve()) in text, text
    (ex,) = res["exercises"]
    assert ex["status"] == "not_submitted" and ex["score"] == 0
