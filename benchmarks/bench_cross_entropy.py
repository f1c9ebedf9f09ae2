#!/usr/bin/env python
"""Time the three routes of the masked cross-entropy, loss and gradient, on this backend.

`kerasattn.metrics.masked_token_ce` computes the same per-token loss three ways
(`kernel="gather"`, `"sparse"`, `"dense"`); `kerasattn.backend_utils.cross_entropy_kernel`
picks one per backend and label smoothing from these timings. One step = the masked mean
loss of logits `(B, T, V)` and its gradient with respect to the logits:
`jax.jit(jax.value_and_grad)` on JAX, `tf.function(reduce_retracing=True)` + GradientTape on
TensorFlow (batches of several widths, so the graph is the shape-generic one `fit` runs on
real data), eager autograd on torch. Prints the median milliseconds per step and the
route the kit chooses; never asserts.

Usage:
    KERAS_BACKEND=tensorflow python benchmarks/bench_cross_entropy.py [--batch 64
        --widths 8,16,24 --vocab 7900 --rounds 5 --steps 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import keras  # noqa: E402
import numpy as np  # noqa: E402

from kerasattn import backend_utils, metrics  # noqa: E402


def make_step(kernel: str, eps: float):
    """A function ``step(labels, logits)`` running the loss and its gradient once."""
    backend = keras.backend.backend()

    def loss(logits, labels):
        per_token = metrics.masked_token_ce(labels, logits, eps, kernel=kernel)  # (B, T)
        w = keras.ops.cast(keras.ops.not_equal(labels, 0), per_token.dtype)
        return keras.ops.sum(per_token * w) / keras.ops.maximum(keras.ops.sum(w), 1.0)

    if backend == "jax":
        import jax

        grad = jax.jit(jax.value_and_grad(loss))
        return lambda labels, logits: jax.block_until_ready(grad(logits, labels))
    if backend == "tensorflow":
        import tensorflow as tf

        @tf.function(reduce_retracing=True)
        def tf_step(labels, logits):
            with tf.GradientTape() as tape:
                tape.watch(logits)
                value = loss(logits, labels)
            return value, tape.gradient(value, logits)

        return lambda labels, logits: [t.numpy() for t in tf_step(labels, logits)]

    def torch_step(labels, logits):
        logits = logits.detach().requires_grad_(True)
        loss(logits, labels).backward()
        return logits.grad

    return torch_step


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--widths", default="8,16,24", help="target widths T, comma-separated")
    p.add_argument("--vocab", type=int, default=7900)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=5)
    a = p.parse_args(argv)
    rng = np.random.default_rng(0)
    batches = []
    for width in (int(w) for w in a.widths.split(",")):
        labels = rng.integers(1, a.vocab, (a.batch, width)).astype("int32")
        labels[:, width // 2:][rng.random((a.batch, width - width // 2)) < 0.5] = 0  # padding
        logits = rng.normal(size=(a.batch, width, a.vocab)).astype("float32")
        batches.append((keras.ops.convert_to_tensor(labels),
                        keras.ops.convert_to_tensor(logits)))
    backend = keras.backend.backend()
    print(f"{backend}: loss + gradient of (B={a.batch}, T in {{{a.widths}}}, V={a.vocab}) "
          f"logits, median ms per batch over {a.rounds} rounds")
    print("| label smoothing | gather | sparse | dense | kit's choice |")
    print("|---:|---:|---:|---:|---|")
    for eps in (0.0, 0.1):
        cells = []
        for kernel in metrics.CE_KERNELS:
            step = make_step(kernel, eps)
            for labels, logits in batches:  # compile every width
                step(labels, logits)
            times = []
            for _ in range(a.rounds):
                start = time.perf_counter()
                for _ in range(a.steps):
                    for labels, logits in batches:
                        step(labels, logits)
                times.append((time.perf_counter() - start) / (a.steps * len(batches)))
            cells.append(f"{1000 * statistics.median(times):.1f}")
        print(f"| {eps} | {' | '.join(cells)} | {backend_utils.cross_entropy_kernel(eps)} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
