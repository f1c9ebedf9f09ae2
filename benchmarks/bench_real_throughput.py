#!/usr/bin/env python
"""Training speed of the kit's models and the keras-hub script on a real file, epoch by
epoch in turn.

`bench_real_data.py` trains each model once, one after the other, so on a machine whose
speed drifts over minutes (a shared or virtual CPU) a budget run can move one model's
tokens/s and not the other's. Here each round trains one epoch of every model in turn (the
models are built once; their training continues from round to round), and the table gives
the median seconds per epoch over the rounds after the first (which compiles the steps) and
the tokens/s that follow. Same split, recipe, token ids, batches and optimizer settings as
`bench_real_data.py`; validation is left out. Prints figures, never asserts.

Usage:
    python benchmarks/bench_real_throughput.py FILE [--models transformer keras_hub]
        [--reverse] [--rounds 3] [--max-train N] [--budget 240] [--backend B]
"""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench_real_data():
    spec = importlib.util.spec_from_file_location("bench_real_data",
                                                  ROOT / "benchmarks" / "bench_real_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="a manythings.org / Tatoeba file (.txt or .zip)")
    p.add_argument("--models", nargs="+", default=["transformer", "keras_hub"],
                   help="kit model names and/or 'keras_hub'")
    p.add_argument("--reverse", action="store_true",
                   help="translate from the other language into English")
    p.add_argument("--rounds", type=int, default=3,
                   help="epochs per model, in turn (the first compiles; default 3)")
    p.add_argument("--max-train", type=int, default=None,
                   help="train on the first N pairs of the training split only")
    p.add_argument("--budget", type=float, default=240.0,
                   help="the budget the recipe is chosen for (default 240 s)")
    p.add_argument("--backend", choices=("tensorflow", "jax", "torch"), default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tiny", action="store_true",
                   help="tiny models (smoke tests only: the figures mean nothing)")
    args = p.parse_args(argv)
    if args.rounds < 2:
        p.error(f"--rounds must be >= 2 (the first compiles), received {args.rounds}")
    return args


def build(name, prepared, bench, seed, tiny):
    """``(model, dataset)`` of one model, compiled as its budget run compiles it."""
    import keras

    from kerasattn import training
    from kerasattn.data import TranslationDataset
    from kerasattn.models import build_model

    keras.utils.set_random_seed(seed)
    if name == bench.BASELINE:
        width = max(prepared.train["encoder_inputs"].shape[1],
                    prepared.train["labels"].shape[1])
        model = bench.baseline_model(len(prepared.src_vocab), len(prepared.tgt_vocab),
                                     max(256, 2 * width), tiny)
        model.compile(optimizer=keras.optimizers.AdamW(1e-3),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                      ignore_class=0))
        batch_size = 64
    else:
        hp = dict(prepared.recipe.model_kwargs)
        if tiny:
            hp.update(bench.TINY)
            hp = {k: v for k, v in hp.items() if k in _fields(name)}
        model = build_model(name, len(prepared.src_vocab), len(prepared.tgt_vocab), **hp)
        wanted = inspect.signature(training.compile_for_translation).parameters
        training.compile_for_translation(
            model, **{k: v for k, v in prepared.recipe.train.items() if k in wanted})
        batch_size = prepared.recipe.train["batch_size"]
    data = TranslationDataset(prepared.train, batch_size=batch_size, shuffle=True, seed=seed,
                              bucket=prepared.recipe.train["bucket"])
    return model, data


def _fields(name):
    import dataclasses

    from kerasattn.models import registry

    return {f.name for f in dataclasses.fields(registry.get_config_class(name))}


def run(args) -> list[dict]:
    import warnings

    import keras
    import numpy as np

    from kerasattn import backend_utils, recipes, training
    from kerasattn.data import load_tatoeba

    # keras-hub's embedding passes its mask to layers that take it explicitly
    warnings.filterwarnings("ignore", message=".*does not support masking.*")
    bench = _bench_real_data()
    corpus = load_tatoeba(args.file, reverse=args.reverse, seed=args.seed, max_length=None)
    if args.max_train:
        corpus.train = corpus.train[:args.max_train]
    prepared = {}
    for name in args.models:
        key = "transformer" if name == bench.BASELINE else name
        if key not in prepared:
            prepared[key] = recipes.prepare(corpus, key, keras.backend.backend(), None,
                                            budget_seconds=args.budget)
    runs = {name: build(name, prepared["transformer" if name == bench.BASELINE else name],
                        bench, args.seed, args.tiny) for name in args.models}
    seconds = {name: [] for name in args.models}
    with backend_utils.torch_threads("auto"):
        for r in range(args.rounds):
            for name, (model, data) in runs.items():
                timer = training.EpochTimer()
                model.fit(data, epochs=1, callbacks=[timer], verbose=0)
                seconds[name].append(timer.seconds[0])
                print(f"  round {r + 1}: {name} {timer.seconds[0]:.1f} s", flush=True)
    rows = []
    for name, (model, data) in runs.items():
        p = prepared["transformer" if name == bench.BASELINE else name]
        tokens = int(np.sum(p.train["labels"] != 0))
        median = statistics.median(seconds[name][1:])
        rows.append(dict(backend=keras.backend.backend(), model=name, batches=len(data),
                         tokens=tokens, first=seconds[name][0], median=median,
                         tokens_per_second=tokens / median, seconds=seconds[name]))
    return rows


def format_table(rows) -> str:
    base = next((r for r in rows if r["model"] == "keras_hub"), None)
    lines = ["| backend | model | batches | first epoch s | median epoch s | tok/s | "
             "tok/s vs keras-hub |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = f"{r['tokens_per_second'] / base['tokens_per_second']:.2f}x" if base else "-"
        lines.append(f"| {r['backend']} | {r['model']} | {r['batches']} | {r['first']:.1f} | "
                     f"{r['median']:.1f} | {r['tokens_per_second']:,.0f} | {ratio} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.backend:
        if "keras" in sys.modules and os.environ.get("KERAS_BACKEND") != args.backend:
            raise SystemExit("--backend must be chosen before keras is imported")
        os.environ["KERAS_BACKEND"] = args.backend
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.path.insert(0, str(ROOT))
    from kerasattn._env import quiet_tensorflow

    quiet_tensorflow()
    start = time.perf_counter()
    rows = run(args)
    print(format_table(rows))
    print(f"({time.perf_counter() - start:.0f} s in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
