#!/usr/bin/env python
"""Training throughput per model and backend, in target tokens per second.

Prints figures, never asserts. For every backend a child process (the backend is fixed when
keras is imported) builds each model with its default hyperparameters on the built-in
corpus vocabularies, compiles it with :func:`kerasattn.training.compile_for_translation`
(the same path as :func:`kerasattn.training.train`) and runs ``model.fit`` on the first
``steps * batch_size`` training pairs, padded to the corpus-wide widths (fixed shapes, so
nothing recompiles). Epoch 1 (compilation, warm-up) is discarded; epochs 2.. are timed.
Throughput = non-pad label tokens / seconds of the timed epochs' training passes.

Usage:
    python benchmarks/bench_training.py [--backends tensorflow,jax,torch]
        [--models transformer,seq2seq] [--steps 8] [--batch-size 64] [--epochs 2]
        [--jit auto|true|false] [--torch-threads auto|none|N] [--bucket]

On a shared machine the numbers are noisy: report them with the machine's load.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
from kerasattn._env import BACKENDS  # noqa: E402


def child(args) -> None:
    """Runs inside one backend's process: prints one JSON line per model."""
    import keras

    from kerasattn import backend_utils, training
    from kerasattn.data import TranslationDataset, Vocabulary, builtin_corpus, make_arrays
    from kerasattn.models import MODEL_NAMES, build_model

    threads = {"auto": "auto", "none": None}.get(args.torch_threads)
    threads = threads if args.torch_threads in ("auto", "none") else int(args.torch_threads)
    corpus = builtin_corpus()
    src_vocab = Vocabulary.build([s for s, _ in corpus.train])
    tgt_vocab = Vocabulary.build([t for _, t in corpus.train])
    full = make_arrays(corpus.train, src_vocab, tgt_vocab)          # corpus-wide widths
    n = args.steps * args.batch_size
    arrays = {k: v[:n] for k, v in full.items()}
    tokens = int((arrays["labels"] != 0).sum())
    jit = {"auto": "auto", "true": True, "false": False}[args.jit]
    models = args.models.split(",") if args.models else list(MODEL_NAMES)
    for name in models:
        keras.utils.set_random_seed(0)
        model = build_model(name, len(src_vocab), len(tgt_vocab))
        training.compile_for_translation(model, label_smoothing=0.1, jit_compile=jit,
                                         steps_per_execution=args.steps_per_execution)
        timer = training.EpochTimer()
        # --bucket: the lessons' batches (training.recommended_training), by source length
        data = TranslationDataset(arrays, batch_size=args.batch_size, shuffle=True, seed=0,
                                  bucket="source" if args.bucket else False)
        start = time.perf_counter()
        try:
            with backend_utils.torch_threads(threads):        # as training.train does
                info = backend_utils.describe_backend()
                model.fit(data, epochs=args.epochs, callbacks=[timer], verbose=0)
        except Exception as e:  # report and go on: a benchmark prints, never asserts
            print(json.dumps({"model": name, "error": f"{type(e).__name__}: {e}"[:300]}),
                  flush=True)
            continue
        wall = time.perf_counter() - start
        timed = timer.seconds[1:]
        print(json.dumps({
            "model": name, "backend": keras.backend.backend(), "params": model.count_params(),
            "jit_compile": model.jit_compile, "first_epoch_s": round(timer.seconds[0], 2),
            "timed_s": round(sum(timed), 2), "tokens_per_s": round(tokens * len(timed)
                                                                 / sum(timed), 1),
            "wall_s": round(wall, 1), "tokens_per_epoch": tokens,
            "shape": [args.batch_size, int(arrays["encoder_inputs"].shape[1]),
                      int(arrays["labels"].shape[1])], **info}), flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backends", default=",".join(BACKENDS))
    p.add_argument("--models", default="", help="comma-separated (default: all seven)")
    p.add_argument("--steps", type=int, default=8, help="batches per epoch")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=2, help="epoch 1 is warm-up")
    p.add_argument("--jit", default="auto", choices=["auto", "true", "false"])
    p.add_argument("--steps-per-execution", type=int, default=1)
    p.add_argument("--torch-threads", default="auto",
                   help="'auto' (what train() does), 'none' (torch's default) or an int")
    p.add_argument("--bucket", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.epochs < 2:
        p.error("--epochs must be >= 2 (epoch 1 is discarded as warm-up)")
    if args.child:
        child(args)
        return 0
    rows = []
    for backend in [b for b in args.backends.split(",") if b]:
        env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
        cmd = [sys.executable, __file__, "--child", *[a for a in (argv or sys.argv[1:])]]
        print(f"--- {backend} (load average {os.getloadavg()[0]:.1f})", flush=True)
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        for line in proc.stdout:
            if line.startswith("{"):
                row = json.loads(line)
                row.setdefault("backend", backend)
                rows.append(row)
                print("   ", line.strip(), flush=True)
        proc.wait()
    print("\nmodel                        " + "".join(f"{b:>12}" for b in BACKENDS)
          + "   torch/jax")
    models = list(dict.fromkeys(r["model"] for r in rows))
    for m in models:
        by = {r["backend"]: r for r in rows if r["model"] == m}
        cells = "".join(f"{by[b]['tokens_per_s']:>12.0f}" if "tokens_per_s" in by.get(b, {})
                        else f"{'-':>12}" for b in BACKENDS)
        ratio = ""
        if "tokens_per_s" in by.get("torch", {}) and "tokens_per_s" in by.get("jax", {}):
            ratio = f"{by['torch']['tokens_per_s'] / by['jax']['tokens_per_s']:>11.2f}"
        print(f"{m:<29}{cells}{ratio}")
    print("(target tokens/s, non-pad labels; epoch 1 excluded; shared machine: noisy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
