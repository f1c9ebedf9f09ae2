#!/usr/bin/env python
"""Training speed of the kit's models and the keras-hub script on a real file, epoch by
epoch in turn.

`bench_real_data.py` trains each model once, one after the other, so on a machine whose
speed drifts over minutes (a shared or virtual CPU) a budget run can move one model's
tokens/s and not the other's. Here each round trains one epoch of every model in turn (the
models are built once; their training continues from round to round), and the table gives
the median seconds per epoch over the rounds after the first (which compiles the steps) and
the tokens/s that follow. The ratio to keras-hub is also taken round by round (each model's
epoch against the keras-hub epoch of the same round, minutes apart at most) and the median
of those ratios printed: drift between rounds moves both epochs of a round alike. Same
split, recipe, token ids, batches (also keras-hub's, ``--baseline-batching``) and optimizer
settings as `bench_real_data.py`; validation is left out. Prints figures, never asserts.

Usage:
    python benchmarks/bench_real_throughput.py FILE [--models transformer keras_hub]
        [--reverse] [--rounds 3] [--max-train N] [--budget 240] [--backend B]
        [--baseline-batching source|kit]
"""
from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_real_data as real_data  # noqa: E402  (imports no backend)


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
    real_data.add_backend_option(p)
    p.add_argument("--baseline-batching", choices=real_data.BASELINE_BATCHING,
                   default="source", help="keras-hub's batches (see bench_real_data.py)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tiny", action="store_true",
                   help="tiny models (smoke tests only: the figures mean nothing)")
    args = p.parse_args(argv)
    if args.rounds < 2:
        p.error(f"--rounds must be >= 2 (the first compiles), received {args.rounds}")
    return args


def build(name, prepared, seed, tiny, baseline_batching="source"):
    """``(model, dataset)`` of one model, compiled as its budget run compiles it."""
    import keras

    from kerasattn import training
    from kerasattn.data import TranslationDataset

    if name == real_data.BASELINE:
        model, batch_size = real_data.compiled_baseline(prepared, seed, tiny), 64
        batching = real_data.baseline_batching(prepared.recipe, baseline_batching)
    else:
        keras.utils.set_random_seed(seed)
        model = real_data.kit_model(name, prepared, prepared.recipe.model_kwargs, tiny)
        wanted = inspect.signature(training.compile_for_translation).parameters
        training.compile_for_translation(
            model, **{k: v for k, v in prepared.recipe.train.items() if k in wanted})
        batch_size = prepared.recipe.train["batch_size"]
        batching = real_data.kit_batching(prepared.recipe)
    data = TranslationDataset(prepared.train, batch_size=batch_size, shuffle=True, seed=seed,
                              **batching)
    return model, data


def run(args) -> list[dict]:
    import warnings

    import keras
    import numpy as np

    from kerasattn import backend_utils, training
    from kerasattn.data import load_tatoeba
    from kerasattn.training import recipes

    # keras-hub's embedding passes its mask to layers that take it explicitly
    warnings.filterwarnings("ignore", message=".*does not support masking.*")
    corpus = load_tatoeba(args.file, reverse=args.reverse, seed=args.seed, max_length=None)
    if args.max_train:
        corpus.train = corpus.train[:args.max_train]
    prepared = {}
    for key in dict.fromkeys(map(real_data.recipe_key, args.models)):
        prepared[key] = recipes.prepare(corpus, key, keras.backend.backend(), None,
                                        budget_seconds=args.budget)
    runs = {name: build(name, prepared[real_data.recipe_key(name)], args.seed, args.tiny,
                        args.baseline_batching)
            for name in args.models}
    seconds = {name: [] for name in args.models}
    with backend_utils.torch_threads("auto"):
        for r in range(args.rounds):
            for name, (model, data) in runs.items():
                timer = training.EpochTimer()
                model.fit(data, epochs=1, callbacks=[timer], verbose=0)
                seconds[name].append(timer.seconds[0])
                print(f"  round {r + 1}: {name} {timer.seconds[0]:.1f} s", flush=True)
    rows = []
    base = real_data.BASELINE if real_data.BASELINE in runs else None
    for name, (model, data) in runs.items():
        p = prepared[real_data.recipe_key(name)]
        tokens = int(np.sum(p.train["labels"] != 0))
        median = statistics.median(seconds[name][1:])
        rows.append(dict(backend=keras.backend.backend(), model=name, batches=len(data),
                         tokens=tokens, first=seconds[name][0], median=median,
                         tokens_per_second=tokens / median, seconds=seconds[name]))
    if base is not None:
        by_name = {r["model"]: r for r in rows}
        for r in rows:
            r["paired_ratio"] = paired_ratio(r, by_name[base])
    return rows


def paired_ratio(row: dict, base: dict) -> float:
    """Median over the rounds after the first of ``row``'s tokens/s over ``base``'s, each
    round's two epochs compared with each other."""
    ratios = [(row["tokens"] / s) / (base["tokens"] / b)
              for s, b in zip(row["seconds"][1:], base["seconds"][1:])]
    return statistics.median(ratios)


def format_table(rows) -> str:
    base = next((r for r in rows if r["model"] == real_data.BASELINE), None)
    lines = ["| backend | model | batches | first epoch s | median epoch s | tok/s | "
             "tok/s vs keras-hub | round by round |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = f"{r['tokens_per_second'] / base['tokens_per_second']:.2f}x" if base else "-"
        paired = f"{r['paired_ratio']:.2f}x" if "paired_ratio" in r else "-"
        lines.append(f"| {r['backend']} | {r['model']} | {r['batches']} | {r['first']:.1f} | "
                     f"{r['median']:.1f} | {r['tokens_per_second']:,.0f} | {ratio} | {paired} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    real_data.select_backend(args.backend)
    start = time.perf_counter()
    rows = run(args)
    print(format_table(rows))
    print(f"({time.perf_counter() - start:.0f} s in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
