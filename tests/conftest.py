"""Shared test fixtures.

The suite runs once per backend (``tools/test_all_backends.py`` sets ``KERAS_BACKEND``);
every test runs on whichever backend this process has. Cross-backend tests start a child
process per other backend with :func:`run_in_backend`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

# kerasattn first: importing it keeps TensorFlow's start-up messages out of the test output
from kerasattn._env import BACKENDS, MODEL_NAMES  # noqa: E402,F401,I001  (re-exported to the tests)
from kerasattn._env import JAX_CACHE_ENV, fast_xla_compile  # noqa: E402

# the suite never writes the kit's JAX cache into the user's ~/.cache (tests and their child
# processes; tools/test_all_backends.py gives the JAX pass a cache of its own, which the kit
# uses as it is)
os.environ.setdefault(JAX_CACHE_ENV, "off")

import keras  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def backend() -> str:
    return keras.backend.backend()


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.set_random_seed(1234)
    yield


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """On JAX, drop every compiled program after each test module.

    Each program XLA compiles for the CPU keeps memory mappings of its own code for as
    long as a jit cache holds it. One pytest process runs the whole suite: without this the
    JAX pass exceeds Linux's limit of 65,530 mappings per process (`vm.max_map_count`) about
    80 % of the way through, and XLA's next compile fails with a segmentation fault. Three
    test files (test_decoding, test_layers_blocks, test_translator) end with 22,646
    mappings without this and 1,537 with it, in the same time. Programs still in use are
    compiled again when next called.
    """
    yield
    if keras.backend.backend() == "jax":
        import gc

        import jax

        jax.clear_caches()
        gc.collect()


def run_in_backend(backend: str, code: str, timeout: float = 300,
                   env: dict | None = None) -> dict:
    """Run ``code`` in a fresh Python process on ``backend``.

    The code must print one JSON object on its last stdout line; it is returned parsed.
    ``env``: variables to set in the child (a value of None removes the variable).
    """
    overrides = env or {}
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    env.update({k: v for k, v in overrides.items() if v is not None})
    for key in [k for k, v in overrides.items() if v is None]:
        env.pop(key, None)
    if backend == "jax":   # as in the JAX pass (tools/test_all_backends.py): tiny shapes
        fast_xla_compile(env)
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(f"child process on {backend} failed (rc={proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    last = [line for line in proc.stdout.splitlines() if line.strip()][-1]
    return json.loads(last)


def load_script(path: str):
    """A script of the project (``"benchmarks/bench_real_data.py"``, ``"tools/..."``) loaded
    as a module: benchmarks/ and tools/ are no packages."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def other_backends() -> list[str]:
    return [b for b in BACKENDS if b != keras.backend.backend()]


def to_numpy(x) -> np.ndarray:
    return np.asarray(keras.ops.convert_to_numpy(x))


def pytest_collection_modifyitems(config, items):
    """Mark tests that start processes on the other backends (they call `other_backends()`)
    as ``cross_backend``, so the fast loop
    (``-m "not slow and not lesson and not cross_backend"``) leaves them out."""
    import inspect

    for item in items:
        fn = getattr(item, "function", None)
        try:
            source = inspect.getsource(fn) if fn is not None else ""
        except (OSError, TypeError):
            continue
        if "other_backends(" in source:
            item.add_marker(pytest.mark.cross_backend)


def grad(fn, *args):
    """Gradients of the scalar ``fn(*args)`` w.r.t. every arg, on the current backend."""
    backend = keras.backend.backend()
    if backend == "jax":
        import jax
        return [np.asarray(g) for g in jax.grad(fn, argnums=tuple(range(len(args))))(*args)]
    if backend == "tensorflow":
        import tensorflow as tf
        xs = [tf.constant(a) for a in args]
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = fn(*xs)
        return [g.numpy() for g in tape.gradient(y, xs)]
    import torch
    xs = [torch.tensor(np.asarray(a), requires_grad=True) for a in args]
    fn(*xs).backward()
    return [x.grad.numpy() for x in xs]


@pytest.fixture(params=MODEL_NAMES)
def model_name(request):
    """Each of the seven models of the kit, by name."""
    return request.param


@pytest.fixture(scope="session")
def graded_course(tmp_path_factory):
    """One grading run of this backend pass, shared by the exercise tests
    (:func:`course_grading.grade_course`)."""
    from course_grading import grade_course

    return grade_course(tmp_path_factory)
