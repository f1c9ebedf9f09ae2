#!/usr/bin/env python
"""Decode time per sentence, with and without the incremental cache, for every model.

Prints a Markdown table (never asserts). For each model (default hyperparameters, random
weights: the time of a step does not depend on the weights) and each output length N, the
decoder runs exactly N greedy steps (no early `<eos>`, so every run does the same work):

- cached: the model's incremental step (GRU state / K/V caches);
- uncached: the full model re-run at every step on the tokens so far (compiled: on a fixed
  `(B, N)` buffer; eager: on the exact prefix), as the TensorFlow tutorial decodes.

Both run the way :func:`kerasattn.decoding.greedy_decode` runs them: on JAX and TensorFlow
the whole loop is one compiled call (:func:`kerasattn.decoding.search.greedy_loop`:
jax.jit / tf.function of an ``ops.while_loop``); on torch a Python loop of eager steps.
``--python-loop`` times the per-step loop (one compiled step per token, argmax on the host)
on JAX / TensorFlow too, as :class:`kerasattn.decoding.Stepper` (beam search) runs it.

Times are the median of ``--repeats`` runs after one warm-up run (compilation excluded).
Target: cached >= 5x faster than uncached at 64 tokens for the Transformer decoders.

Usage:
    KERAS_BACKEND=jax python benchmarks/bench_decoding.py [--models a,b] [--lengths 16,32,64]
        [--batch 1] [--src-length 16] [--repeats 3] [--vocab 1000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from kerasattn.backend_utils import (
    resolve_compile,  # noqa: E402
    torch_threads,  # noqa: E402
)
from kerasattn.decoding import Stepper  # noqa: E402
from kerasattn.decoding.search import greedy_loop  # noqa: E402
from kerasattn.models import MODEL_NAMES, build_model  # noqa: E402


def run(model, src, n_tokens, cache, python_loop=False):
    """N greedy steps; returns seconds."""
    start = time.perf_counter()
    if resolve_compile("auto") and not python_loop:
        greedy_loop(model, n_tokens, cache=cache, stop_at_eos=False)(src)
        return time.perf_counter() - start
    stepper = Stepper(model, n_tokens, cache=cache)
    stepper.start(src)
    token = np.full(len(src), 2, np.int32)  # <bos>
    for t in range(n_tokens):
        logits, _ = stepper.step(token, t)
        token = logits.argmax(-1).astype(np.int32)
    return time.perf_counter() - start


def measure(model, src, n_tokens, cache, repeats, python_loop=False):
    run(model, src, n_tokens, cache, python_loop)  # warm-up: traces / compiles
    return statistics.median(run(model, src, n_tokens, cache, python_loop)
                             for _ in range(repeats))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(MODEL_NAMES))
    parser.add_argument("--lengths", default="16,32,64")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--src-length", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--threads", default="auto",
                        help="torch intra-op threads: a number, or 'auto' = what "
                             "KERASATTN_TORCH_THREADS says (unset: torch's default)")
    parser.add_argument("--python-loop", action="store_true",
                        help="JAX / TensorFlow: time the per-step Python loop instead of "
                             "the compiled whole loop")
    args = parser.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    lengths = [int(n) for n in args.lengths.split(",")]
    rng = np.random.default_rng(0)
    src = rng.integers(4, args.vocab, size=(args.batch, args.src_length)).astype(np.int32)
    threads = args.threads if args.threads == "auto" else int(args.threads)
    try:
        load = f"{os.getloadavg()[0]:.1f}"
    except OSError:
        load = "n/a"
    print(f"backend={keras.backend.backend()} compile={resolve_compile('auto')} "
          f"batch={args.batch} src_length={args.src_length} vocab={args.vocab} "
          f"repeats={args.repeats} load_avg_1min={load} "
          f"loop={'python' if args.python_loop or not resolve_compile('auto') else 'compiled'}")
    print("\n| model | tokens | cached ms/sentence | uncached ms/sentence | speed-up |")
    print("| --- | ---: | ---: | ---: | ---: |")
    with torch_threads(threads):
        for name in models:
            keras.utils.set_random_seed(0)
            model = build_model(name, args.vocab, args.vocab, max_length=max(lengths)) \
                if name in ("transformer", "transformer_decoder_on_gru") \
                else build_model(name, args.vocab, args.vocab)
            for n in lengths:
                cached = measure(model, src, n, True, args.repeats, args.python_loop)
                uncached = measure(model, src, n, False, args.repeats, args.python_loop)
                per = 1000.0 / args.batch
                print(f"| {name} | {n} | {cached * per:.1f} | {uncached * per:.1f} | "
                      f"{uncached / cached:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
