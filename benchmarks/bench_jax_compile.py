#!/usr/bin/env python
"""What a new batch shape costs on JAX: the seconds to compile the train and evaluation
steps of the real-data `transformer`, against the milliseconds of one step once compiled.

Keras on JAX compiles the train step once per input shape (XLA), so batches of many
widths pay compilations that TensorFlow (one shape-generic graph) and torch (eager) do not;
the recipe (``kerasattn.training.recipes.JAX_COMPILE_SECONDS`` and
``JAX_EVAL_COMPILE_SECONDS``) weighs them against the padding that fewer widths cost. The
model is the one the recipe builds for a corpus of
about 11,000 short pairs (2,300 subword pieces a side, ``d_ff`` 512, dropout 0.1, the
moving average of the weights), fed random token ids; one fresh model per run. Prints
figures, never asserts.

Usage:
    python benchmarks/bench_jax_compile.py [--widths 8x8 16x8 8x16 16x16 28x30]
        [--vocab 2300] [--batch-size 64] [--jax-cache off|DIR]
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--widths", nargs="+", default=["8x8", "16x8", "8x16", "16x16", "28x30"],
                   help="batch shapes as SOURCExTARGET widths, in the order compiled")
    p.add_argument("--vocab", type=int, default=2300, help="pieces per side (default 2300)")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--jax-cache", default="off", metavar="DIR",
                   help="the kit's persistent compilation cache (KERASATTN_JAX_CACHE): off "
                        "(the default: every shape compiled) or a directory (run twice with "
                        "the same DIR: the second run reads the compiled steps)")
    args = p.parse_args(argv)
    if args.vocab < 5:
        p.error(f"--vocab must be >= 5 (4 special tokens and a word); received {args.vocab}")
    if args.batch_size < 1:
        p.error(f"--batch-size must be >= 1; received {args.batch_size}")
    shapes = []
    for w in args.widths:
        parts = w.lower().split("x")
        if len(parts) != 2 or not all(s.isdigit() and int(s) > 0 for s in parts):
            p.error(f"--widths takes SOURCExTARGET pairs of positive ints such as 16x8; "
                    f"received {w!r}")
        shapes.append((int(parts[0]), int(parts[1])))
    args.shapes = shapes
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "jax")
    from kerasattn._env import JAX_CACHE_ENV  # no keras, no jax

    os.environ[JAX_CACHE_ENV] = args.jax_cache    # --jax-cache alone decides the cache:
    os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)   # not one given to JAX outside
    import jax
    import keras
    import numpy as np

    from kerasattn import backend_utils, models, training

    if keras.backend.backend() != "jax":
        print(f"this benchmark measures JAX's compilation; KERAS_BACKEND is "
              f"{keras.backend.backend()!r}", file=sys.stderr)
        return 2
    cache = backend_utils.jax_compilation_cache()   # what training.train does first
    model = models.build_model("transformer", src_vocab_size=args.vocab,
                               tgt_vocab_size=args.vocab, dropout=0.1, d_ff=512,
                               max_position_shift=0, max_length=256)
    training.compile_for_translation(model, learning_rate=1e-3, clipnorm=None,
                                     ema_momentum=0.998)
    rng = np.random.default_rng(0)
    b = args.batch_size
    print(f"jax {jax.__version__}, keras {keras.__version__}, batch {b}, "
          f"vocab {args.vocab}, compilation cache: {cache or 'none'}")
    print("| source x target | train: compile s | train: step ms | eval: compile s "
          "| eval: step ms |")
    print("|---|---:|---:|---:|---:|")
    for s, t in args.shapes:
        x = {"encoder_inputs": rng.integers(4, args.vocab, (b, s)).astype("int32"),
             "decoder_inputs": rng.integers(4, args.vocab, (b, t)).astype("int32")}
        y = rng.integers(4, args.vocab, (b, t)).astype("int32")
        row = []
        for call in (model.train_on_batch, model.test_on_batch):
            start = time.perf_counter()
            call(x, y)
            first = time.perf_counter() - start
            start = time.perf_counter()
            for _ in range(5):
                call(x, y)
            step = (time.perf_counter() - start) / 5
            row += [first - step, step * 1000]      # the first call = compile + one step
        print(f"| {s} x {t} | {row[0]:.2f} | {row[1]:.0f} | {row[2]:.2f} | {row[3]:.0f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
