#!/usr/bin/env python
"""Forward+backward time of our layers against the built-in ones, on the current backend.

Compares, at equal sizes and with the same masks:
  * `kerasattn.layers.MultiHeadCross`        vs `keras.layers.MultiHeadAttention`
  * `kerasattn.layers.TransformerDecoderBlock` vs `keras_hub.layers.TransformerDecoder`
each with dropout 0 and dropout 0.1 in training mode (Keras's layers use a fused attention
kernel at dropout 0; ours always materialise the weights, as the equation reads). One
step = forward, mean-square loss, gradients w.r.t. all trainable weights:
`jax.jit(jax.grad)` on JAX, `tf.function` + GradientTape on
TensorFlow, eager autograd on torch. Ours and theirs are timed in alternating rounds; the
median per-step time is reported. Prints a table; never asserts (target: ratio <= 1.15).

Usage:
    KERAS_BACKEND=jax python benchmarks/bench_layers.py [--batch 32 --length 32
        --d-model 128 --heads 4 --d-ff 512 --rounds 7 --steps 10 --threads 1]

`--threads N` pins the backend's CPU thread pool to N threads (torch.set_num_threads,
TensorFlow intra-op threads, XLA's Eigen pool off for N=1). On a shared, oversubscribed
CPU the default pools spin and make torch timings ~10x slower and very noisy.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _threads_from_argv(argv) -> int:
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return 0


THREADS = _threads_from_argv(sys.argv[1:])
if THREADS == 1:  # must be set before jax is imported
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_cpu_multi_thread_eigen=false").strip()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from keras import ops  # noqa: E402

from kerasattn.layers import MultiHeadCross, TransformerDecoderBlock  # noqa: E402


def make_step(layer, args, kwargs):
    """A function running one forward+backward pass of ``layer(*args, **kwargs)``."""
    backend = keras.backend.backend()
    layer(*args, **kwargs)  # build

    def first(out):
        return out[0] if isinstance(out, (tuple, list)) else out

    if backend == "jax":
        import jax

        non_trainable = [v.value for v in layer.non_trainable_variables]

        def loss(trainable):
            out, _ = layer.stateless_call(trainable, non_trainable, *args, **kwargs)
            return ops.mean(ops.square(first(out)))

        grad = jax.jit(jax.grad(loss))
        trainable = [v.value for v in layer.trainable_variables]
        return lambda: jax.block_until_ready(grad(trainable))
    if backend == "tensorflow":
        import tensorflow as tf

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                out = layer(*args, **kwargs)
                loss = ops.mean(ops.square(first(out)))
            return tape.gradient(loss, layer.trainable_variables)

        return lambda: [g.numpy() for g in step()][:1]

    def torch_step():
        layer.zero_grad(set_to_none=True)
        out = layer(*args, **kwargs)
        ops.mean(ops.square(first(out))).backward()

    return torch_step


def time_pair(step_a, step_b, rounds, steps):
    for _ in range(3):  # warm-up / compile
        step_a()
        step_b()
    times_a, times_b = [], []
    for _ in range(rounds):
        for step, times in ((step_a, times_a), (step_b, times_b)):
            start = time.perf_counter()
            for _ in range(steps):
                step()
            times.append((time.perf_counter() - start) / steps)
    return statistics.median(times_a), statistics.median(times_b)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--length", type=int, default=32)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--d-ff", type=int, default=512)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads for the backend (0 = its default)")
    a = p.parse_args(argv)
    backend = keras.backend.backend()
    if a.threads > 0 and backend == "torch":
        import torch
        torch.set_num_threads(a.threads)
    elif a.threads > 0 and backend == "tensorflow":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(a.threads)
        tf.config.threading.set_inter_op_parallelism_threads(a.threads)

    import keras_hub

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    B, T, D = a.batch, a.length, a.d_model
    x = ops.convert_to_tensor(rng.normal(size=(B, T, D)).astype("float32"))
    enc = ops.convert_to_tensor(rng.normal(size=(B, T, D)).astype("float32"))
    lengths = rng.integers(T // 2, T + 1, size=B)
    pad = ops.convert_to_tensor(np.arange(T)[None, :] < lengths[:, None])  # (B, T) bool

    print(f"backend={backend} keras={keras.__version__} B={B} T=S={T} d_model={D} "
          f"heads={a.heads} d_ff={a.d_ff} rounds={a.rounds}x{a.steps} steps "
          f"threads={a.threads or 'default'}")
    rows = []
    for dropout in (0.0, 0.1):
        training = dropout > 0
        ours = MultiHeadCross(a.heads, D, dropout=dropout)
        theirs = keras.layers.MultiHeadAttention(a.heads, D // a.heads, dropout=dropout)
        t_ours, t_theirs = time_pair(
            make_step(ours, (x, enc), dict(value_mask=pad, training=training)),
            make_step(theirs, (x, enc), dict(value_mask=pad, training=training)),
            a.rounds, a.steps)
        rows.append((f"MultiHeadCross vs MultiHeadAttention, dropout={dropout}",
                     t_ours, t_theirs))

        ours = TransformerDecoderBlock(D, a.heads, a.d_ff, dropout=dropout)
        theirs = keras_hub.layers.TransformerDecoder(a.d_ff, a.heads, dropout=dropout)
        kw = dict(decoder_padding_mask=pad, encoder_padding_mask=pad, training=training)
        t_ours, t_theirs = time_pair(make_step(ours, (x, enc), kw),
                                     make_step(theirs, (x, enc), kw), a.rounds, a.steps)
        rows.append((f"TransformerDecoderBlock vs keras_hub TransformerDecoder, "
                     f"dropout={dropout}", t_ours, t_theirs))

    print(f"{'case':<70} {'ours ms':>8} {'built-in ms':>11} {'ratio':>6}")
    for name, t_o, t_t in rows:
        print(f"{name:<70} {1e3 * t_o:>8.2f} {1e3 * t_t:>11.2f} {t_o / t_t:>6.2f}")


if __name__ == "__main__":
    main()
