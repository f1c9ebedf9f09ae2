#!/usr/bin/env python
"""The kit's models against a plain keras-hub Transformer on a real Tatoeba file.

Prints figures, never asserts. On the current backend (``--backend`` or
``KERAS_BACKEND``), one split of FILE (by source sentence: every translation of a test
source stays in the test split), and the same wall-clock training budget per model:

- each kit model named in ``--models`` is trained with the recipe chosen from the data
  (:func:`kerasattn.training.recipes.prepare`: tokenizer, vocabulary, batch size, learning rate,
  dropout, length cap) through :func:`kerasattn.training.train`;
- ``keras_io`` is the script a reader of the keras-io English-Spanish example writes, with
  no kit code on its path (``benchmarks/keras_io_script.py``: its own word vocabulary,
  sequences padded to one fixed width of ``--keras-io-width`` words, NumPy batches of 64,
  keras-hub's ``TokenAndPositionEmbedding`` + 2 ``TransformerEncoder`` + 2
  ``TransformerDecoder``, AdamW 1e-3, greedy decoding by re-running the model). It trains
  on the same training pairs and is scored on the same test sources and references;
- ``keras_hub`` is the same keras-hub model fed the kit's token ids (same tokenizers, same
  training pairs as the kit's ``transformer``) and the kit's batch iterator, so that row
  compares models and training, not tokenizers. Its batches group pairs by source length,
  each as wide as its longest pair rounded up to 8 (``--baseline-batching source``, the
  default), where the kit's recipe groups them by target length first and, on TensorFlow
  and torch, trims each to its longest pair (see :func:`kerasattn.data.batch_plan`);
  ``--baseline-batching kit`` gives the script the kit's batches too.

Every model then decodes the same distinct test sources greedily (with ``--beam K`` each kit
model is also decoded by beam search, a row of its own: keras-hub's script has greedy
decoding only, so only the greedy rows compare the models); the table gives BLEU
(sacrebleu, against the first reference of each source and against all of them), exact
match, and training throughput: target tokens of the batches trained per second of
training (validation passes excluded for the kit's models and keras-hub's; the keras-io
script times its epochs itself, validation included; the epoch the budget cuts counts the
tokens of the batches it ran). On JAX every run compiles its steps, as a first run does
(``--jax-cache off``, the default); ``--jax-cache DIR`` keeps them in DIR for the next run
with the same DIR (the kit's compilation cache, ``KERASATTN_JAX_CACHE``).

Usage:
    python benchmarks/bench_real_data.py FILE [--budget SECONDS] [--models transformer
        bahdanau keras_hub] [--reverse] [--tokenizer auto|word|subword] [--backend jax]
        [--max-test N] [--beam K] [--baseline-batching source|kit] [--tiny] [--json PATH]
        [--set KEY=VALUE ...] [--jax-cache off|DIR]

On a shared machine the figures are noisy: report them with the machine's load.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's kerasattn
sys.path.insert(0, str(ROOT / "benchmarks"))  # keras_io_script, the baseline beside it

from kerasattn._env import (  # noqa: E402  (no keras yet: the backend is free)
    JAX_CACHE_ENV,
    add_backend_option,
)

BASELINE = "keras_hub"
KERAS_IO = "keras_io"
BASELINE_BATCHING = ("source", "kit")
TINY = dict(d_model=16, num_heads=2, d_ff=32, embed_dim=16, units=16, attention_units=16)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="a manythings.org / Tatoeba file (.txt or .zip)")
    p.add_argument("--budget", type=float, default=120.0,
                   help="training seconds per model (default 120)")
    p.add_argument("--models", nargs="+",
                   default=["transformer", "bahdanau", KERAS_IO, BASELINE],
                   help=f"kit model names, {KERAS_IO!r} (the keras-io script) and/or "
                        f"{BASELINE!r} (keras-hub on the kit's tokens)")
    p.add_argument("--keras-io-width", type=int, default=20,
                   help="the keras-io script's fixed sequence width in words (default 20)")
    p.add_argument("--reverse", action="store_true",
                   help="translate from the other language into English")
    p.add_argument("--tokenizer", choices=("auto", "word", "subword"), default="auto",
                   help="the recipe's choice (auto), or force one")
    add_backend_option(p)
    p.add_argument("--max-test", type=int, default=None,
                   help="score only this many distinct test sources (spread evenly)")
    p.add_argument("--max-train", type=int, default=None,
                   help="train on the first N pairs of the training split only")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--baseline-batching", choices=BASELINE_BATCHING, default="source",
                   help="keras-hub's batches: grouped by source length, widths rounded up "
                        "to 8 (source, the default), or exactly the kit's recipe batching "
                        "(kit)")
    p.add_argument("--beam", type=int, default=1,
                   help="also decode the kit's models by beam search of this width (a row "
                        "of its own; default 1: greedy only)")
    p.add_argument("--tiny", action="store_true",
                   help="tiny models (smoke tests only: the figures mean nothing)")
    p.add_argument("--json", default=None, help="also write the results to this file")
    p.add_argument("--jax-cache", default="off", metavar="DIR",
                   help="JAX's persistent compilation cache: off (the default: every "
                        "compilation paid, as on a first run) or a directory (a run after "
                        "another with the same DIR reads its compiled steps)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a setting of the kit's recipe for an ablation: a keyword "
                        "of training.train (batch_size=32, learning_rate=2e-3), a model "
                        "hyperparameter (model.dropout=0.1), a tokenizer size "
                        "(vocab.vocab_size=4000, for every model and the baseline) or "
                        "anneal=false (repeatable)")
    args = p.parse_args(argv)
    try:
        args.overrides = parse_overrides(args.set)
    except ValueError as err:
        p.error(str(err))
    if args.budget <= 0:
        p.error(f"--budget must be > 0, received {args.budget}")
    if args.beam < 1:
        p.error(f"--beam must be >= 1, received {args.beam}")
    return args


def parse_overrides(items) -> dict:
    """``["batch_size=32", "model.dropout=0.1"]`` -> ``{"batch_size": 32, ...}``."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--set expects KEY=VALUE; received {item!r}")
        try:
            value = json.loads(text.lower() if text.lower() in ("true", "false") else text)
        except json.JSONDecodeError:
            value = text
        out[key.strip()] = value
    return out


def apply_overrides(recipe, overrides: dict) -> bool:
    """Change ``recipe`` (a :class:`~kerasattn.training.recipes.Recipe`) in place, noting
    each change.

    Returns:
        Whether the budget anneals the learning rate (``anneal=true``; off by default).
    """
    anneal = False
    for key, value in overrides.items():
        if key == "anneal":
            anneal = bool(value)
        elif key.startswith("model."):
            recipe.model_kwargs[key[len("model."):]] = value
        else:
            recipe.train[key] = value
        recipe.reasons[f"override {key}"] = f"--set {key}={value!r}"
    return anneal


def baseline_model(src_size: int, tgt_size: int, max_length: int, tiny: bool = False):
    """The keras-hub script's model: inputs and logits as the kit's models."""
    import keras
    import keras_hub

    d_model, heads, ffn = (16, 2, 32) if tiny else (128, 4, 256)
    src = keras.Input(shape=(None,), dtype="int32", name="encoder_inputs")
    tgt = keras.Input(shape=(None,), dtype="int32", name="decoder_inputs")
    x = keras_hub.layers.TokenAndPositionEmbedding(src_size, max_length, d_model,
                                                   mask_zero=True)(src)
    for _ in range(2):
        x = keras_hub.layers.TransformerEncoder(ffn, heads, dropout=0.1)(x)
    y = keras_hub.layers.TokenAndPositionEmbedding(tgt_size, max_length, d_model,
                                                   mask_zero=True)(tgt)
    for _ in range(2):
        y = keras_hub.layers.TransformerDecoder(ffn, heads, dropout=0.1)(y, x)
    logits = keras.layers.Dense(tgt_size)(y)
    return keras.Model({"encoder_inputs": src, "decoder_inputs": tgt}, logits,
                       name=BASELINE)


def baseline_greedy(model, sources, src_vocab, tgt_vocab, batch_size=128):
    """Greedy decoding by re-running the whole model on the prefix (no cache), with fixed
    shapes per batch so each width compiles once."""
    import numpy as np

    ids = [src_vocab.encode(s) for s in sources]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    out = [""] * len(ids)
    for k in range(0, len(order), batch_size):
        idx = order[k:k + batch_size]
        width = -(-max(len(ids[i]) for i in idx) // 8) * 8
        limit = -(-(int(1.5 * width) + 5) // 16) * 16
        src = np.zeros((len(idx), width), "int32")
        for r, i in enumerate(idx):
            src[r, :len(ids[i])] = ids[i]
        dec = np.zeros((len(idx), limit), "int32")
        dec[:, 0] = tgt_vocab.BOS
        done = np.zeros(len(idx), bool)
        for t in range(limit - 1):
            logits = model.predict_on_batch({"encoder_inputs": src, "decoder_inputs": dec})
            nxt = np.asarray(logits)[:, t].argmax(-1)
            nxt[done] = 0
            dec[:, t + 1] = nxt
            done |= nxt == tgt_vocab.EOS
            if done.all():
                break
        for r, i in enumerate(idx):
            out[i] = tgt_vocab.decode(dec[r, 1:])
    return out


def recipe_key(name: str) -> str:
    """The kit model whose recipe (tokens, split) a model name trains with."""
    return "transformer" if name in (BASELINE, KERAS_IO) else name


def compiled_baseline(prepared, seed, tiny):
    """The keras-hub script's model for ``prepared``'s vocabularies, compiled as the script."""
    import keras

    keras.utils.set_random_seed(seed)
    width = max(prepared.train["encoder_inputs"].shape[1],
                prepared.train["labels"].shape[1])
    model = baseline_model(len(prepared.src_vocab), len(prepared.tgt_vocab),
                           max(256, 2 * width), tiny)
    model.compile(optimizer=keras.optimizers.AdamW(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                  ignore_class=0))
    return model


def kit_model(name, prepared, model_kwargs, tiny):
    """The kit's ``name`` with ``model_kwargs`` (made tiny with ``tiny``)."""
    from kerasattn.models import build_model

    hp = dict(model_kwargs)
    if tiny:
        import dataclasses

        from kerasattn.models import registry

        fields = {f.name for f in dataclasses.fields(registry.get_config_class(name))}
        hp.update({k: v for k, v in TINY.items() if k in fields})
    return build_model(name, len(prepared.src_vocab), len(prepared.tgt_vocab), **hp)


def baseline_batching(recipe, mode: str = "source") -> dict:
    """``bucket`` and ``pad_multiple`` of the keras-hub script's batches.

    ``"source"``: pairs grouped by source length, each batch as wide as its longest pair
    rounded up to a multiple of 8 (when the kit's recipe groups pairs at all): the batching
    every keras-hub row of docs/data.md is measured with. ``"kit"``: exactly the kit's
    recipe batching, so that the two rows compare models and optimisation only.
    """
    if mode not in BASELINE_BATCHING:
        raise ValueError(f"baseline batching must be one of {BASELINE_BATCHING}, received "
                         f"{mode!r}")
    if mode == "kit":
        return kit_batching(recipe)
    return dict(bucket="source" if recipe.train["bucket"] else False, pad_multiple=8)


def kit_batching(recipe) -> dict:
    """``bucket`` and ``pad_multiple`` of the kit's batches under ``recipe``."""
    return dict(bucket=recipe.train["bucket"], pad_multiple=recipe.train.get("pad_multiple", 8))


def real_token_share(arrays, batch_size: int, batching: dict,
                     seed: int = 0) -> tuple[float, float]:
    """Shares of the source and target positions of one epoch's batches that are real
    tokens (not padding), with ``batching`` (``bucket``, ``pad_multiple``)."""
    from kerasattn.data import batch_iterator

    real = cells = 0
    src_real = src_cells = 0
    for x, y in batch_iterator(arrays, batch_size, shuffle=True, seed=seed, **batching):
        real, cells = real + int((y != 0).sum()), cells + y.size
        enc = x["encoder_inputs"]
        src_real, src_cells = src_real + int((enc != 0).sum()), src_cells + enc.size
    return src_real / src_cells, real / cells


def train_baseline(prepared, budget, seed, tiny, batching):
    from kerasattn import training
    from kerasattn.data import TranslationDataset

    model = compiled_baseline(prepared, seed, tiny)
    bucket = batching["bucket"]
    data = TranslationDataset(prepared.train, batch_size=64, shuffle=True, seed=seed,
                              **batching)
    valid = TranslationDataset(prepared.valid, batch_size=64, shuffle=False, **batching)
    timer, stop = training.EpochTimer(), _CountingBudget(budget)
    model.fit(data, validation_data=valid, epochs=1000, callbacks=[timer, stop], verbose=0)
    return model, dict(epochs=len(timer.seconds), train_seconds=float(sum(timer.seconds)),
                       **_timing(prepared.train, 64, seed, bucket, timer, stop),
                       params=int(model.count_params()))


def _timing(arrays, batch_size, seed, bucket, timer, stop) -> dict:
    """``tokens_per_second`` and the training seconds of every epoch (``epoch_seconds``)."""
    seconds = float(sum(timer.seconds))
    tokens = tokens_trained(arrays, batch_size, seed, bucket, len(timer.seconds), stop)
    return dict(tokens_per_second=tokens / seconds if seconds > 0 else None,
                tokens_trained=tokens, epoch_seconds=[round(t, 1) for t in timer.seconds])


def tokens_trained(arrays, batch_size, seed, bucket, epochs_begun, stop) -> int:
    """Target tokens (labels that are not padding) of the batches trained.

    Every finished epoch counts all of them; the epoch the budget cut counts the tokens of
    the batches it ran, read from that epoch's batch plan (``TranslationDataset`` shuffles
    epoch ``e`` with seed ``seed + e``). Bucketed batches hold very different numbers of
    tokens, so the share of batches run is not the share of tokens.
    """
    import numpy as np

    from kerasattn.data import TranslationDataset

    per_epoch = int(np.sum(arrays["labels"] != 0))
    full = epochs_begun - (1 if stop.stopped else 0)
    done = per_epoch * full
    ran = getattr(stop, "batches_last_epoch", 0) if stop.stopped else 0
    if ran:
        plan = TranslationDataset(arrays, batch_size=batch_size, shuffle=True,
                                  seed=seed + full, bucket=bucket)
        done += sum(int(np.sum(plan[i][1] != 0)) for i in range(ran))
    return done


class _CountingBudget:
    """Wrap ``TimeBudget`` to count the batches of the epoch the budget cuts."""

    def __new__(cls, seconds, anneal=False):
        from kerasattn import training

        class Counting(training.TimeBudget):
            def on_epoch_begin(self, epoch, logs=None):
                self.batches_last_epoch = 0

            def on_train_batch_end(self, batch, logs=None):
                self.batches_last_epoch = batch + 1
                super().on_train_batch_end(batch, logs)

        return Counting(seconds, anneal=anneal)


def run(args) -> list[dict]:
    import warnings

    import keras

    from kerasattn import metrics, training
    from kerasattn.data import load_tatoeba
    from kerasattn.inference import Translator
    from kerasattn.training import recipes

    # keras-hub's embedding passes its mask to layers that take it explicitly
    warnings.filterwarnings("ignore", message=".*does not support masking.*")
    backend = keras.backend.backend()
    corpus = load_tatoeba(args.file, reverse=args.reverse, seed=args.seed, max_length=None)
    if args.max_train:
        corpus.train = corpus.train[:args.max_train]
    print(f"{backend}: {corpus!r} ({corpus.report.summary()})", flush=True)
    args.corpus_sizes = dict(train=len(corpus.train), valid=len(corpus.valid),
                             test=len(corpus.test))
    tokenizer = None if args.tokenizer == "auto" else args.tokenizer
    vocab_overrides = {k[len("vocab."):]: v for k, v in args.overrides.items()
                       if k.startswith("vocab.")}
    args.overrides = {k: v for k, v in args.overrides.items() if not k.startswith("vocab.")}
    rows, prepared_cache = [], {}

    def prepared_for(name):
        key = recipe_key(name)
        if key not in prepared_cache:
            start = time.perf_counter()
            prepared_cache[key] = recipes.prepare(corpus, key, backend, tokenizer,
                                                  budget_seconds=args.budget,
                                                  vocab=vocab_overrides or None)
            p = prepared_cache[key]
            if args.max_test:
                step = max(1, len(p.test_sources) // args.max_test)
                p.test_sources = p.test_sources[::step][:args.max_test]
                p.test_references = p.test_references[::step][:args.max_test]
            print(p.recipe.describe(), f"\n  (prepared in {time.perf_counter() - start:.1f} s)",
                  flush=True)
            for label, batch_size, batching in (
                    ("the kit's batches", p.recipe.train["batch_size"], kit_batching(p.recipe)),
                    ("keras-hub's batches", 64,
                     baseline_batching(p.recipe, args.baseline_batching))):
                src_share, tgt_share = real_token_share(p.train, batch_size, batching,
                                                        args.seed)
                print(f"  {label}: {100 * src_share:.1f} % of the source and "
                      f"{100 * tgt_share:.1f} % of the target positions are real tokens",
                      flush=True)
        return prepared_cache[key]

    bleu_tok = recipes.bleu_tokenize_for(corpus.info.get("tgt_lang"))
    for name in args.models:
        p = prepared_for(name)
        if name == KERAS_IO:
            import keras_io_script

            hyps, stats = keras_io_script.train_and_translate(
                list(corpus.train), list(corpus.valid) or list(corpus.train[:1]),
                p.test_sources, args.budget, args.seed, args.keras_io_width, args.tiny)
            start = time.perf_counter() - stats.pop("decode_seconds")
        elif name == BASELINE:
            model, stats = train_baseline(p, args.budget, args.seed, args.tiny,
                                          baseline_batching(p.recipe, args.baseline_batching))
            start = time.perf_counter()
            hyps = baseline_greedy(model, p.test_sources, p.src_vocab, p.tgt_vocab)
        else:
            recipe = copy.deepcopy(p.recipe)
            anneal = apply_overrides(recipe, args.overrides)
            if args.overrides:
                print(f"  {name}: {list(recipe.reasons.values())[-len(args.overrides):]}",
                      flush=True)
            if {"bucket", "pad_multiple", "batch_size"} & set(args.overrides):
                src_share, tgt_share = real_token_share(
                    p.train, recipe.train["batch_size"], kit_batching(recipe), args.seed)
                print(f"  {name}'s batches with the overrides: {100 * src_share:.1f} % of the "
                      f"source and {100 * tgt_share:.1f} % of the target positions are real "
                      "tokens", flush=True)
            keras.utils.set_random_seed(args.seed)
            model = kit_model(name, p, recipe.model_kwargs, args.tiny)
            stop = _CountingBudget(args.budget, anneal)
            timer = training.EpochTimer()
            result = training.train(model, p.train, p.valid, seed=args.seed,
                                    callbacks=[timer, stop], **recipe.train)
            stats = dict(epochs=result.epochs_run, train_seconds=result.train_seconds,
                         best_epoch=result.best_epoch,
                         history={k: [round(float(v), 4) for v in vals]
                                  for k, vals in result.history.items()},
                         **_timing(p.train, recipe.train["batch_size"], args.seed,
                                   recipe.train["bucket"], timer, stop),
                         params=int(model.count_params()),
                         recipe=dict(train=dict(recipe.train), model=dict(recipe.model_kwargs),
                                     anneal=anneal))
            start = time.perf_counter()
            translator = Translator(model, p.src_vocab, p.tgt_vocab)
            hyps = translator.translate(p.test_sources, normalized=True, detokenized=False)
        decodings = [(name, hyps, time.perf_counter() - start)]
        if name not in (BASELINE, KERAS_IO) and args.beam > 1:
            start = time.perf_counter()
            hyps = translator.translate(p.test_sources, normalized=True, detokenized=False,
                                        beam=args.beam)
            decodings.append((f"{name} + beam {args.beam}", hyps,
                              time.perf_counter() - start))
        for label, hyps, decode_seconds in decodings:
            scores = metrics.evaluate_grouped(hyps, p.test_references, tokenize=bleu_tok)
            row = {**dict(backend=backend, model=label, tokenizer=p.recipe.tokenizer,
                          src_vocab=len(p.src_vocab), tgt_vocab=len(p.tgt_vocab),
                          decode_seconds=decode_seconds), **stats, **scores,
                   "examples": [(s, h) for s, h in zip(p.test_sources[:3], hyps[:3])]}
            rows.append(row)
            print(f"  {label}: BLEU {row['bleu_single']:.1f} (multi-ref "
                  f"{row['bleu_multi']:.1f}), {row['epochs']} epochs, "
                  f"{row['tokens_per_second'] or 0:,.0f} tok/s (training seconds per epoch: "
                  f"{row['epoch_seconds']}; decoded in {decode_seconds:.0f} s)", flush=True)
    return rows


def format_table(rows) -> str:
    head = ("backend", "model", "tokens", "params", "epochs", "train s", "tok/s",
            "BLEU 1-ref", "BLEU multi-ref", "exact 1-ref", "exact any-ref")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join([
            r["backend"], r["model"], f"{r['tokenizer']} {r['src_vocab']}/{r['tgt_vocab']}",
            f"{r['params']:,}", str(r["epochs"]), f"{r['train_seconds']:.0f}",
            f"{r['tokens_per_second'] or 0:,.0f}", f"{r['bleu_single']:.1f}",
            f"{r['bleu_multi']:.1f}", f"{100 * r['exact_match_single']:.1f} %",
            f"{100 * r['exact_match_multi']:.1f} %"]) + " |")
    return "\n".join(lines)


def select_backend(backend: str | None) -> None:
    """Make ``backend`` the Keras backend (checked, as by every command of the kit) and
    quiet TensorFlow's start-up."""
    from kerasattn._env import UsageError, quiet_tensorflow
    from kerasattn._env import select_backend as select

    try:
        select(backend)
    except UsageError as exc:
        raise SystemExit(f"error: {exc}") from None
    quiet_tensorflow()   # before keras imports TensorFlow


def machine() -> str:
    """The CPU model and core count, as the records name the machine."""
    import os
    import platform

    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores"


def record(argv, args, corpus_sizes: dict, rows: list[dict]) -> dict:
    """What ``--json`` writes: the command (file named by its base name), the seed, the
    corpus's split sizes, the compilation cache JAX used (``jax_cache``: None on a first run
    and on the other backends), the machine and the rows. ``tools/real_data_table.py``
    reads it."""
    words, skip = [], False
    for a in argv:
        if skip or a == "--json" or a.startswith("--json="):   # where it wrote, not what
            skip = a == "--json" and not skip
            continue
        words.append(a if a != args.file else Path(args.file).name)
    jax = sys.modules.get("jax") if sys.modules["keras"].backend.backend() == "jax" else None
    return dict(command="python benchmarks/bench_real_data.py " + " ".join(words),
                file=Path(args.file).name, reverse=args.reverse, seed=args.seed,
                budget=args.budget,
                # the compilation cache JAX read and wrote (None: every step compiled)
                jax_cache=jax.config.jax_compilation_cache_dir if jax else None,
                corpus=corpus_sizes, machine=machine(), rows=rows)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    select_backend(args.backend)
    os.environ[JAX_CACHE_ENV] = args.jax_cache    # --jax-cache alone decides the cache:
    os.environ.pop("JAX_COMPILATION_CACHE_DIR", None)   # not one given to JAX outside
    rows = run(args)
    print(format_table(rows))
    if args.json:
        out = record(argv, args, args.corpus_sizes, rows)
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
