"""Shared plumbing of the lessons and the ``kerasattn`` command.

A lesson script stays short and readable because everything that is not the lesson's idea
lives here: argument parsing (and choosing the Keras backend *before* keras is imported),
loading the corpus and building vocabularies, training with the kit's one training path,
scoring BLEU / exact match on the test split, printing sample translations, drawing the
figures, and recording results so lesson 05 can build the evolution table. Checkpoints
(``kerasattn train`` / ``translate``) and the cross-backend demo (``kerasattn backends``)
also live here.

Keras and the kit's model code are imported lazily (inside functions): importing this
module does not fix the backend.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import runpy
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
LESSONS_DIR = ROOT / "lessons"
DEFAULT_OUT = ROOT / "outputs" / "lessons"
BACKENDS = ("tensorflow", "jax", "torch")

# ---------------------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------------------
# Default: the full built-in corpus (10,000 training pairs), the whole test split, at most
# DEFAULT_EPOCHS epochs with early stopping, each model's recommended learning rate and
# batching (kerasattn.training.recommended_training), and DEFAULT_MINUTES of training per
# lesson, split evenly over the lesson's models (lesson 00 trains two). Chosen so that a
# lesson ends within 5 minutes on a 2-core CPU, data, decoding and figures included
# (measured per backend: docs/lessons.md). Quick: a slice of the corpus and tiny models, for
# the tests (seconds); quick numbers mean nothing about quality.
DEFAULT_EPOCHS = 30
DEFAULT_SIZES = dict(train=None, valid=300, test=None)  # None = the whole split
DEFAULT_MINUTES = 4.25      # wall-clock training budget per lesson (split over its models)
QUICK_EPOCHS = 1
QUICK_SIZES = dict(train=64, valid=16, test=6)
QUICK_MAX_DECODE = 8        # quick models never learn <eos>: cap the output length
QUICK_HPARAMS = dict(  # applied only to fields a model's config actually has
    embed_dim=16, units=16, attention_units=16, d_model=16, num_heads=2, d_ff=32,
    num_encoder_blocks=1, num_encoder_layers=1, num_decoder_layers=1, dropout=0.0)


@dataclasses.dataclass
class Settings:
    """What a lesson or ``kerasattn train`` runs with.

    Attributes:
        quick: tiny data and models (tests), else the default budget.
        data: a Tatoeba file path, or None for the built-in corpus.
        out: output directory of this lesson / run.
        epochs: maximum epochs per model (early stopping may end sooner).
        batch_size: pairs per optimizer step.
        seed: random seed (corpus split, initial weights, dropout).
        max_test: evaluate on at most this many test pairs (None = all).
        minutes: training wall-clock budget per model in minutes (None = no limit); training
            stops after the batch that crosses it (the best weights so far are kept).
        train_size: use this many training pairs, spread evenly over the lengths (None =
            all).
        n_models: models the lesson trains (its budget is ``minutes * n_models``).
    """

    quick: bool = False
    data: str | None = None
    out: Path = DEFAULT_OUT
    epochs: int = DEFAULT_EPOCHS
    batch_size: int = 64
    seed: int = 0
    max_test: int | None = None
    minutes: float | None = None
    train_size: int | None = None
    n_models: int = 1

    @property
    def decode_compile(self):
        """Compile the decoding step? Not in quick mode: compiling costs more than it saves
        for a handful of 8-token outputs (and every tiny model would recompile)."""
        return False if self.quick else "auto"

    @property
    def max_decode(self) -> int | None:
        """Output-length cap for decoding (quick mode only; None = from the source)."""
        return QUICK_MAX_DECODE if self.quick else None

    def signature(self) -> dict:
        """The fields that make two runs comparable (same data and budget)."""
        lesson_minutes = None if self.minutes is None else round(self.minutes *
                                                                  self.n_models, 2)
        return dict(quick=self.quick, data=self.data, epochs=self.epochs,
                    batch_size=self.batch_size, seed=self.seed, max_test=self.max_test,
                    lesson_minutes=lesson_minutes, train_size=self.train_size,
                    sizes=dict(QUICK_SIZES if self.quick else DEFAULT_SIZES))


def _backend_from_argv(argv: Sequence[str]) -> str | None:
    for i, a in enumerate(argv):
        if a == "--backend" and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith("--backend="):
            return a.split("=", 1)[1]
    return None


def parse_lesson_args(number: int, description: str, argv: Sequence[str] | None = None,
                      n_models: int = 1) -> Settings:
    """Parse ``[--quick] [--data PATH] [--out DIR] [--epochs N] [--backend B]``.

    Also selects the Keras backend (``--backend`` sets ``KERAS_BACKEND``) when keras has not
    been imported yet. Inside a notebook (unknown ``-f kernel.json`` arguments) the defaults
    are used.

    Args:
        number: the lesson number (for the default output folder).
        description: shown by ``--help``.
        argv: arguments (default ``sys.argv[1:]``).
        n_models: models the lesson trains; the default time budget is split among them.

    Returns:
        The lesson's :class:`Settings`.
    """
    parser = argparse.ArgumentParser(prog=f"lesson {number:02d}", description=description)
    parser.add_argument("--quick", action="store_true",
                        help="tiny data and models: seconds, for tests")
    parser.add_argument("--data", metavar="PATH",
                        help="Tatoeba/manythings English<TAB>French file (default: the "
                             "built-in corpus)")
    parser.add_argument("--out", metavar="DIR",
                        help=f"output folder (default: outputs/lessons/lesson_{number:02d})")
    parser.add_argument("--epochs", type=int, metavar="N",
                        help=f"maximum epochs per model (default {DEFAULT_EPOCHS}, quick "
                             f"{QUICK_EPOCHS})")
    parser.add_argument("--minutes", type=float, metavar="M",
                        help=f"training budget per model in minutes (default "
                             f"{DEFAULT_MINUTES:g} / number of models in the lesson; none "
                             f"in quick mode)")
    parser.add_argument("--train-size", type=int, metavar="N",
                        help=f"training pairs (default: all, quick {QUICK_SIZES['train']})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--backend", metavar="NAME",
                        help="tensorflow, jax or torch (must come before keras is imported)")
    in_notebook = "ipykernel" in sys.modules
    if argv is None:
        argv = [] if in_notebook else sys.argv[1:]
    args, unknown = parser.parse_known_args(list(argv))
    if unknown and not in_notebook:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if args.backend:
        select_backend(args.backend)
    if args.data:
        check_data_path(args.data)
    epochs = args.epochs if args.epochs is not None else (
        QUICK_EPOCHS if args.quick else DEFAULT_EPOCHS)
    if epochs < 1:
        parser.error(f"--epochs must be >= 1; received {epochs}")
    out = Path(args.out) if args.out else DEFAULT_OUT / f"lesson_{number:02d}"
    minutes = args.minutes if args.minutes is not None else (
        None if args.quick else round(DEFAULT_MINUTES / max(1, n_models), 3))
    return Settings(quick=args.quick, data=args.data, out=out, epochs=epochs,
                    batch_size=32 if args.quick else 64, seed=args.seed, minutes=minutes,
                    train_size=args.train_size, n_models=n_models)


def select_backend(name: str) -> None:
    """Set ``KERAS_BACKEND`` (before keras is imported) or fail clearly."""
    from kerasattn.cli import CLIError, check_backend

    try:
        check_backend(name)
    except CLIError as exc:
        raise SystemExit(f"error: {exc}")
    keras_mod = sys.modules.get("keras")
    if keras_mod is not None and keras_mod.backend.backend() != name:
        raise SystemExit(f"error: keras is already imported with backend "
                         f"{keras_mod.backend.backend()!r}; restart and set "
                         f"KERAS_BACKEND={name} before importing keras")
    os.environ["KERAS_BACKEND"] = name
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def check_data_path(path: str) -> Path:
    """A readable corpus file, or a ValueError naming ``--data`` and the path."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"--data: no such file {str(p)!r}. Give a Tatoeba/manythings "
                         f"English<TAB>French file (e.g. fra.txt from "
                         f"https://www.manythings.org/anki/), or leave out --data to use the "
                         f"built-in corpus.")
    return p


def check_model_name(name: str) -> str:
    """``name`` if it is one of the seven models, else a clear ValueError."""
    from kerasattn.cli import MODEL_NAMES

    if name not in MODEL_NAMES:
        raise ValueError(f"MODEL must be one of {', '.join(MODEL_NAMES)}; received {name!r}")
    return name


def lesson_path(number: int) -> Path:
    """The lesson script ``lessons/0N_*.py``; a ValueError when there is none."""
    if not 0 <= number <= 9:
        raise ValueError(f"lesson number N must be between 0 and 5; received {number}")
    found = sorted(LESSONS_DIR.glob(f"{number:02d}_*.py"))
    if not found:
        have = sorted(p.name for p in LESSONS_DIR.glob("0*_*.py"))
        raise ValueError(f"no lesson {number} in {LESSONS_DIR} (have: "
                         f"{', '.join(have) or 'none: run from a clone of the repository'})")
    return found[0]


def run_lesson_file(path: Path, argv: list[str]) -> int:
    """Run a lesson script in this process (its ``__main__`` block) with ``argv``."""
    old = sys.argv
    sys.argv = [str(path), *argv]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = old
    return 0


# ---------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------
def format_table(header: Sequence[str], rows: Sequence[Sequence], align: str | None = None
                 ) -> str:
    """A plain-text table with a rule under the header (numbers right-aligned).

    Args:
        header: column titles.
        rows: the rows (values converted with ``str``).
        align: one ``l``/``r`` per column (default: right for numbers, left otherwise).

    Returns:
        The table as text.
    """
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    if align is None:
        def numeric(s):
            return s.replace(",", "").replace(".", "").replace("%", "").replace(
                "-", "").replace("e", "").strip().isdigit()
        align = "".join("r" if rows and all(numeric(str(r[i])) for r in rows) else "l"
                        for i in range(len(header)))
    lines = []
    for k, r in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if a == "r" else c.ljust(w)
                               for c, w, a in zip(r, widths, align)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_attention(weights, src_tokens, tgt_tokens, label: str = "") -> str:
    """An attention matrix as text: rows = generated tokens, columns = source tokens."""
    import numpy as np

    w = np.asarray(weights, dtype=float)
    if w.ndim == 3:  # heads: show their mean, say so
        label = f"{label} (mean over {w.shape[0]} heads)"
        w = w.mean(axis=0)
    w = w[:len(tgt_tokens), :len(src_tokens)]
    rows = [[t] + [f"{v:.2f}" for v in row] for t, row in zip(tgt_tokens, w)]
    head = f"attention weights{': ' + label if label else ''} (rows: generated, "\
           f"columns: source)\n"
    return head + format_table([""] + list(src_tokens), rows,
                               align="l" + "r" * len(src_tokens))


def heading(text: str) -> None:
    """Print a section heading (scripts; notebooks show the markdown cells instead)."""
    print(f"\n== {text} " + "=" * max(0, 70 - len(text)), flush=True)


# ---------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------
@dataclasses.dataclass
class LessonData:
    """A corpus with its vocabularies and model-ready arrays.

    Attributes:
        corpus: the :class:`kerasattn.data.Corpus` (train / valid / test pairs).
        src_vocab, tgt_vocab: word vocabularies built on the training split.
        train, valid: dicts of arrays from ``kerasattn.data.make_arrays``.
        test_pairs: the ``(source, target)`` pairs scored by :meth:`Lesson.evaluate`.
        description: one line saying what the data is.
    """

    corpus: object
    src_vocab: object
    tgt_vocab: object
    train: dict
    valid: dict
    test_pairs: list
    description: str


def load_data(settings: Settings) -> LessonData:
    """Load the built-in corpus (or ``settings.data``), build vocabularies and arrays."""
    from kerasattn import data as kdata

    if settings.data:
        corpus = kdata.load_tatoeba(path=str(check_data_path(settings.data)),
                                    seed=settings.seed)
        report = getattr(corpus, "report", None)
        what = f"Tatoeba file {settings.data}"
        if report is not None:
            what += f" ({report.summary()})"
    else:
        corpus = kdata.builtin_corpus(seed=settings.seed)
        what = "the built-in English-French corpus"
    train_pairs, valid_pairs, test_pairs = corpus.train, corpus.valid, corpus.test
    sizes = QUICK_SIZES if settings.quick else DEFAULT_SIZES
    n_train = settings.train_size or sizes["train"] or len(train_pairs)
    train_pairs = _spread(train_pairs, n_train)
    valid_pairs = _spread(valid_pairs, sizes["valid"] or len(valid_pairs))
    test_pairs = _spread(test_pairs, sizes["test"] or len(test_pairs))
    if settings.max_test is not None:
        test_pairs = _spread(test_pairs, settings.max_test)
    what += (f" ({len(train_pairs):,} training pairs, {len(valid_pairs):,} validation, "
             f"{len(test_pairs):,} test)")
    # vocabularies from the whole training split (never valid/test), even when training on
    # a slice of it, so test words are known
    src_vocab = kdata.Vocabulary.build([s for s, _ in corpus.train])
    tgt_vocab = kdata.Vocabulary.build([t for _, t in corpus.train])
    train = kdata.make_arrays(train_pairs, src_vocab, tgt_vocab)
    valid = kdata.make_arrays(valid_pairs, src_vocab, tgt_vocab)
    return LessonData(corpus=corpus, src_vocab=src_vocab, tgt_vocab=tgt_vocab, train=train,
                      valid=valid, test_pairs=list(test_pairs), description=what)


def _spread(pairs, n):
    """``n`` pairs evenly spread over ``pairs`` (keeps the length mix of a sorted split)."""
    pairs = list(pairs)
    if n >= len(pairs):
        return pairs
    step = len(pairs) / n
    return [pairs[int(i * step)] for i in range(n)]


# ---------------------------------------------------------------------------------------
# Models, training, decoding
# ---------------------------------------------------------------------------------------
@dataclasses.dataclass
class Trained:
    """A trained model and how its training went."""

    name: str
    model: object
    history: dict
    train_seconds: float
    tokens_per_second: float | None
    epochs_run: int
    params: int
    hparams: dict
    torch_threads: int | None = None  # intra-op threads torch trained with (else None)


def model_hparams(name: str, quick: bool, **overrides) -> dict:
    """Hyperparameters for ``name``: the model's defaults, shrunk in quick mode."""
    import dataclasses as dc

    from kerasattn.models import registry

    fields = {f.name for f in dc.fields(registry.get_config_class(name))}
    hp = {k: v for k, v in QUICK_HPARAMS.items() if k in fields} if quick else {}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(f"hyperparameter(s) {unknown} are not fields of model {name!r}; "
                         f"expected some of {sorted(fields)}")
    hp.update(overrides)
    return hp


def build(name: str, data: LessonData, quick: bool = False, **hparams):
    """``kerasattn.models.build_model`` with the vocabulary sizes of ``data``."""
    from kerasattn.models import build_model

    hp = model_hparams(name, quick, **hparams)
    return build_model(name, len(data.src_vocab), len(data.tgt_vocab), **hp), hp


def TimeBudget(seconds: float):
    """A Keras callback that stops ``fit`` after the batch that crosses ``seconds``."""
    import keras

    class _TimeBudget(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.seconds, self.start, self.stopped = float(seconds), None, False

        def on_train_begin(self, logs=None):
            self.start = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            if time.perf_counter() - self.start > self.seconds:
                self.model.stop_training = True
                self.stopped = True

    return _TimeBudget()


def train_model(name: str, data: LessonData, settings: Settings, verbose: int | None = None,
                model_kwargs: dict | None = None, **train_kwargs) -> Trained:
    """Build and train model ``name`` on ``data`` with the kit's training path.

    Args:
        name: one of the seven model names.
        data: from :func:`load_data`.
        settings: epochs, batch size, seed, quick.
        verbose: Keras progress output (default: a progress bar per epoch, none when quick).
        model_kwargs: hyperparameter overrides for ``build_model``.
        **train_kwargs: extra arguments of ``kerasattn.training.train`` (label smoothing,
            weight decay, warmup...).

    Returns:
        A :class:`Trained`.
    """
    import keras

    from kerasattn import training

    keras.utils.set_random_seed(settings.seed)
    model, hp = build(name, data, quick=settings.quick, **(model_kwargs or {}))
    if verbose is None:
        verbose = 0 if settings.quick else (1 if sys.stdout.isatty() else 2)
    kwargs = dict(epochs=settings.epochs, batch_size=settings.batch_size, seed=settings.seed,
                  verbose=verbose)
    if not settings.quick:  # quick: one shape per model (compiling costs more than it saves)
        kwargs.update(training.recommended_training(name))
    kwargs.update(train_kwargs)
    if settings.minutes:
        kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + [
            TimeBudget(60.0 * settings.minutes)]
    start = time.perf_counter()
    result = training.train(model, data.train, data.valid, **kwargs)
    wall = time.perf_counter() - start
    return Trained(name=name, model=model, history=result.history,
                   train_seconds=float(result.train_seconds or wall),
                   tokens_per_second=result.tokens_per_second, epochs_run=result.epochs_run,
                   params=int(model.count_params()), hparams=hp,
                   torch_threads=result.torch_threads)


def translate_batch(model, sources: Sequence[str], src_vocab, tgt_vocab, beam: int = 1,
                    max_length: int | None = None, attention: bool = False,
                    cache: bool = True, chunk: int = 128, progress: bool = False,
                    compile="auto"):
    """Translate normalised ``sources``; returns ``(translations, attention_or_None)``.

    Sentences are decoded in chunks of similar length (greedy when ``beam == 1``, else beam
    search). With ``attention=True`` the second value is a list with one dict per sentence,
    ``{"cross": (T_out, L, h, S), "self": (T_out, L, h, T_out)}``: the weights the decoder
    actually used (see :class:`kerasattn.decoding.DecodeResult`).
    """
    import numpy as np

    from kerasattn import decoding

    sources = list(sources)
    if not sources:
        return [], ([] if attention else None)
    order = sorted(range(len(sources)), key=lambda i: len(sources[i].split()))
    texts = [None] * len(sources)
    atts = [None] * len(sources)
    starts = range(0, len(order), chunk)
    if progress and len(starts) > 1:
        from tqdm import tqdm
        starts = tqdm(starts, desc="decoding", unit="batch", leave=False)
    for k in starts:
        idx = order[k:k + chunk]
        batch = [sources[i] for i in idx]
        longest = max(len(s.split()) for s in batch)
        # Output cap and source width rounded up to multiples of 16 and 8: each distinct
        # (S, max_length) is one compilation of the decoding loop on JAX / TensorFlow.
        limit = max_length or -(-(int(1.5 * longest) + 5) // 16) * 16
        out, result = decoding.translate(
            model, batch, src_vocab, tgt_vocab, method="greedy" if beam == 1 else "beam",
            beam_size=beam, max_length=limit, return_result=True, cache=cache,
            compile=compile, width_multiple=8)
        for j, i in enumerate(idx):
            texts[i] = out[j]
            if attention:
                n = int(result.lengths[j])
                s_len = len(sources[i].split())
                rec = {}
                for name, a in (result.attention or {}).items():
                    a = np.asarray(a[j, :n])                     # (T_out, L, h, K)
                    rec[name] = a[..., :s_len] if name == "cross" else a
                atts[i] = rec or None
    return texts, (atts if attention else None)


def _attention_record(att, layer: int = -1, kind: str = "cross"):
    """Pick one layer of the captured attention of one sentence -> ``(h, T_out, K)``.

    Accepts a dict ``{"cross": (T_out, L, h, K), "self": ...}`` (what the decoders capture
    per step, stacked over steps), or an array of one of the shapes ``(T_out, K)``,
    ``(h, T_out, K)``, ``(T_out, L, h, K)``.
    """
    import numpy as np

    if att is None:
        return None
    if isinstance(att, dict):
        if kind not in att or att[kind] is None:
            return None
        att = att[kind]
    a = np.asarray(att, dtype=float)
    if a.ndim == 2:
        return a[None]
    if a.ndim == 3:
        return a
    if a.ndim == 4:
        return np.transpose(a[:, layer], (1, 0, 2))  # (T, h, K) -> (h, T, K)
    raise ValueError(f"unexpected attention shape {a.shape}")


# ---------------------------------------------------------------------------------------
# The lesson object
# ---------------------------------------------------------------------------------------
class Lesson:
    """Runs one lesson: data, training, scoring, figures and the record of results.

    Args:
        number: the lesson number (0-5).
        title: shown in the header.
        settings: from :func:`parse_lesson_args`.
    """

    def __init__(self, number: int, title: str, settings: Settings):
        import keras

        self.number, self.title, self.settings = number, title, settings
        self.backend = keras.backend.backend()
        self.out = Path(settings.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.figures: list[Path] = []
        self.results: dict[str, dict] = {}
        self.histories: dict[str, dict] = {}
        self._data = None
        self._start = time.perf_counter()
        mode = "quick (tiny, for tests)" if settings.quick else "default"
        print(f"Lesson {number:02d}: {title}\nbackend: {self.backend} | mode: {mode} | "
              f"epochs: {settings.epochs} | figures -> {self.out}/", flush=True)

    # -- data --------------------------------------------------------------------------
    @property
    def data(self) -> LessonData:
        if self._data is None:
            self._data = load_data(self.settings)
            d = self._data
            print(f"data: {d.description}; vocabularies {len(d.src_vocab)} (en) / "
                  f"{len(d.tgt_vocab)} (fr)", flush=True)
        return self._data

    # -- training and scoring ------------------------------------------------------------
    def train(self, name: str, model_kwargs: dict | None = None, **train_kwargs) -> Trained:
        """Build and train ``name``; print the time and parameter count."""
        heading(f"training {name}")
        t = train_model(name, self.data, self.settings, model_kwargs=model_kwargs,
                        **train_kwargs)
        self.histories[name] = t.history
        tps = f"{t.tokens_per_second:,.0f} target tokens/s" if t.tokens_per_second else ""
        threads = f" (torch: {t.torch_threads} threads)" if t.torch_threads else ""
        print(f"{name}: {t.params:,} parameters, {t.epochs_run} epochs in "
              f"{t.train_seconds:.1f} s {tps}{threads}", flush=True)
        return t

    def evaluate(self, trained: Trained, beam: int = 1) -> dict:
        """BLEU and exact match on the test split (greedy unless ``beam`` > 1)."""
        from kerasattn import metrics

        d = self.data
        srcs = [s for s, _ in d.test_pairs]
        refs = [t for _, t in d.test_pairs]
        start = time.perf_counter()
        hyps, _ = translate_batch(trained.model, srcs, d.src_vocab, d.tgt_vocab, beam=beam,
                                  max_length=self.settings.max_decode,
                                  compile=self.settings.decode_compile,
                                  progress=not self.settings.quick)
        decode_seconds = time.perf_counter() - start
        res = dict(model=trained.name, params=trained.params,
                   train_seconds=trained.train_seconds,
                   tokens_per_second=trained.tokens_per_second,
                   epochs=trained.epochs_run, torch_threads=trained.torch_threads,
                   bleu=float(metrics.corpus_bleu(hyps, refs)),
                   exact_match=float(metrics.exact_match(hyps, refs)),
                   decode_seconds=decode_seconds, backend=self.backend,
                   n_test=len(refs))
        res["by_length"] = bleu_by_length(srcs, hyps, refs)
        res["_hyps"] = hyps
        self.results[trained.name] = res
        print(f"{trained.name}: test BLEU {res['bleu']:.1f}, exact match "
              f"{res['exact_match']:.1%} on {len(refs)} sentences (decoded in "
              f"{decode_seconds:.1f} s)", flush=True)
        return res

    def samples(self, trained: Trained, n: int = 5) -> None:
        """Print ``n`` test translations next to their references (short to long)."""
        res = self.results.get(trained.name)
        pairs = self.data.test_pairs
        idx = _spread(sorted(range(len(pairs)), key=lambda i: len(pairs[i][0].split())), n)
        if res is None:
            hyps, _ = translate_batch(trained.model, [pairs[i][0] for i in idx],
                                      self.data.src_vocab, self.data.tgt_vocab,
                                      max_length=self.settings.max_decode,
                                  compile=self.settings.decode_compile)
        else:
            hyps = [res["_hyps"][i] for i in idx]
        rows = []
        for i, h in zip(idx, hyps):
            src, ref = pairs[i]
            rows.append([_clip(src), _clip(ref), ("= " if h == ref else "x ") + _clip(h)])
        print(format_table(["source", "reference", f"{trained.name} (= exact)"], rows,
                           align="lll"))

    # -- figures -------------------------------------------------------------------------
    def _path(self, fname: str) -> Path:
        path = self.out / fname
        self.figures.append(path)
        return path

    def example_sentence(self, min_len: int = 6, max_len: int = 12) -> tuple[str, str]:
        """A test pair of medium length with a reordering (adjective after noun) if any."""
        pairs = self.data.test_pairs
        mid = [p for p in pairs if min_len <= len(p[0].split()) <= max_len] or pairs
        return mid[0]

    def attention_figure(self, trained: Trained, fname: str, sentence: str | None = None,
                         kind: str = "cross", layer: int = -1, title: str | None = None):
        """Heatmap of the attention ``trained`` uses when translating ``sentence``."""
        from kerasattn import plots

        if sentence is None:
            sentence = self.example_sentence()[0]
        rec = translate_with_attention(trained.model, sentence, self.data.src_vocab,
                                       self.data.tgt_vocab,
                                       max_length=self.settings.max_decode,
                                  compile=self.settings.decode_compile)
        w = _attention_record(rec["attention"], layer=layer, kind=kind)
        if w is None:
            print(f"{trained.name} has no {kind}-attention to draw")
            return None
        keys = rec["source_tokens"] if kind == "cross" else \
            ["<bos>"] + rec["target_tokens"][:-1]
        label = title or f"{trained.name}: {kind}-attention" + (
            f", layer {layer % w.shape[0] + 1}" if False else "")
        return plots.attention_heatmap(
            w, keys, rec["target_tokens"], self._path(fname), title=label,
            xlabel="source" if kind == "cross" else "decoder input (earlier outputs)")

    def architecture(self, name: str):
        """The architecture diagram of model ``name``."""
        from kerasattn import plots

        return plots.architecture_diagram(name, self._path(f"architecture_{name}.png"))

    def curves(self, names: Sequence[str], fname: str, title: str | None = None):
        """Training / validation loss of the models ``names`` trained (or recorded)."""
        from kerasattn import plots

        hist = {n: self.histories[n] for n in names if n in self.histories}
        return plots.training_curves(hist, self._path(fname), title=title)

    def figure(self, fn, fname: str, *args, **kwargs):
        """Call a :mod:`kerasattn.plots` function with this lesson's output path."""
        return fn(*args, path=self._path(fname), **kwargs)

    # -- records -------------------------------------------------------------------------
    def recorded(self, lesson_numbers: Sequence[int] = range(6)) -> dict[str, dict]:
        """Results of other lessons run with the same settings and backend (for reuse)."""
        found = {}
        parent = self.out.parent
        for k in lesson_numbers:
            f = parent / f"lesson_{k:02d}" / "results.json"
            if not f.exists():
                continue
            rec = json.loads(f.read_text())
            if rec.get("settings") == self.settings.signature() and \
                    rec.get("backend") == self.backend:
                for name, r in rec.get("models", {}).items():
                    found[name] = r
        return found

    def finish(self) -> dict:
        """Print the results table and the figures; write ``results.json``."""
        heading("summary")
        if self.results:
            print(format_table(
                ["model", "params", "epochs", "train s", "tokens/s", "BLEU", "exact"],
                [[r["model"], f"{r['params']:,}", r["epochs"], f"{r['train_seconds']:.1f}",
                  f"{r['tokens_per_second']:,.0f}" if r.get("tokens_per_second") else "-",
                  f"{r['bleu']:.1f}", f"{r['exact_match']:.1%}"]
                 for r in self.results.values()]))
        record = dict(lesson=self.number, backend=self.backend,
                      settings=self.settings.signature(),
                      wall_seconds=time.perf_counter() - self._start,
                      python=platform.python_version(),
                      models={k: {**{kk: vv for kk, vv in v.items() if not kk.startswith("_")},
                                  "history": self.histories.get(k)}
                              for k, v in self.results.items()},
                      figures=[str(p.name) for p in self.figures])
        (self.out / "results.json").write_text(json.dumps(record, indent=1))
        print(f"\nfigures written to {self.out}/:")
        for p in self.figures:
            print(f"  {p.name}")
        print(f"lesson {self.number:02d} finished in {record['wall_seconds']:.0f} s "
              f"on {self.backend}")
        return record


def _clip(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[:n - 3] + "..."


def bleu_by_length(srcs, hyps, refs, edges=(0, 10, 20, 30, 1000)) -> dict:
    """Corpus BLEU per source-length bucket ``{label: (BLEU or None, count)}``."""
    from kerasattn import metrics

    out = {}
    for lo, hi in zip(edges[:-1], edges[1:]):
        idx = [i for i, s in enumerate(srcs) if lo < len(s.split()) <= hi]
        label = f"{lo + 1}-{hi}" if hi < 1000 else f"{lo + 1}+"
        if idx:
            out[label] = (float(metrics.corpus_bleu([hyps[i] for i in idx],
                                                    [refs[i] for i in idx])), len(idx))
        else:
            out[label] = (None, 0)
    return out


def translate_with_attention(model, sentence: str, src_vocab, tgt_vocab, beam: int = 1,
                             max_length: int | None = None, compile="auto") -> dict:
    """Translate one sentence and capture its attention.

    Returns:
        dict(translation, source_tokens, target_tokens, attention, unknown_words).
    """
    from kerasattn.data.text import normalize

    norm = normalize(sentence)
    src_tokens = norm.split()
    unknown = [w for w in src_tokens if w not in src_vocab]
    hyps, att = translate_batch(model, [norm], src_vocab, tgt_vocab, beam=beam,
                                attention=True, max_length=max_length, compile=compile)
    translation = hyps[0]
    tgt_tokens = translation.split()
    rec = att[0] if att else None
    n_out = next(iter(rec.values())).shape[0] if rec else len(tgt_tokens) + 1
    if len(tgt_tokens) < n_out:          # the decoder ended with <eos>
        tgt_tokens = tgt_tokens + ["<eos>"]
    tgt_tokens = tgt_tokens[:n_out]
    return dict(translation=translation, source_tokens=src_tokens,
                target_tokens=tgt_tokens, attention=att[0] if att else None,
                unknown_words=unknown)


# ---------------------------------------------------------------------------------------
# Checkpoints: `kerasattn train` and `kerasattn translate`
# ---------------------------------------------------------------------------------------
MODEL_FILE, SRC_VOCAB_FILE, TGT_VOCAB_FILE, META_FILE = (
    "model.keras", "src_vocab.json", "tgt_vocab.json", "meta.json")


@dataclasses.dataclass
class Checkpoint:
    """A loaded ``kerasattn train`` checkpoint."""

    name: str
    model: object
    src_vocab: object
    tgt_vocab: object
    meta: dict
    path: Path


def save_checkpoint(directory, model, src_vocab, tgt_vocab, meta: dict) -> Path:
    """Write ``model.keras``, both vocabularies and ``meta.json`` into ``directory``.

    Every file is written atomically (temporary file + rename), and ``meta.json`` last, so a
    directory with a ``meta.json`` is complete.
    """
    from kerasattn.checkpointing import atomic_write

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    atomic_write(str(d / MODEL_FILE), lambda tmp: model.save(tmp))
    atomic_write(str(d / SRC_VOCAB_FILE), lambda tmp: src_vocab.save(tmp))
    atomic_write(str(d / TGT_VOCAB_FILE), lambda tmp: tgt_vocab.save(tmp))
    atomic_write(str(d / META_FILE), lambda tmp: Path(tmp).write_text(
        json.dumps(meta, indent=1)))
    return d


def load_checkpoint(directory) -> Checkpoint:
    """Load a checkpoint directory written by :func:`save_checkpoint`.

    Raises:
        ValueError: the directory or one of its files is missing (names what is missing).
    """
    import keras

    import kerasattn.metrics  # noqa: F401  (registers the kit's loss and metrics)
    import kerasattn.models  # noqa: F401  (registers the kit's layers for loading)
    from kerasattn.data import Vocabulary

    d = Path(directory)
    if d.is_file() and d.suffix == ".keras":
        d = d.parent
    if not d.is_dir():
        raise ValueError(f"CHECKPOINT: no such directory {str(d)!r}; create one with "
                         f"`kerasattn train MODEL --out {d}`")
    missing = [f for f in (MODEL_FILE, SRC_VOCAB_FILE, TGT_VOCAB_FILE, META_FILE)
               if not (d / f).is_file()]
    if missing:
        raise ValueError(f"CHECKPOINT {str(d)!r} is incomplete: missing {', '.join(missing)} "
                         f"(expected the files written by `kerasattn train`)")
    meta = json.loads((d / META_FILE).read_text())
    model = keras.saving.load_model(d / MODEL_FILE, compile=False)  # inference only
    return Checkpoint(name=meta.get("model", model.name), model=model,
                      src_vocab=Vocabulary.load(str(d / SRC_VOCAB_FILE)),
                      tgt_vocab=Vocabulary.load(str(d / TGT_VOCAB_FILE)), meta=meta, path=d)


def train_and_save(name: str, out, data: str | None = None, epochs: int | None = None,
                   quick: bool = False, seed: int = 0, minutes: float | None = None) -> dict:
    """``kerasattn train``: train ``name``, score it on the test split, save a checkpoint.

    Default training is a one-model lesson's (:data:`DEFAULT_MINUTES`, recommended learning
    rate and batching); ``minutes=0`` removes the time limit.
    """
    import keras

    check_model_name(name)
    if minutes is None:
        minutes = None if quick else DEFAULT_MINUTES
    settings = Settings(quick=quick, data=data, out=Path(out),
                        epochs=epochs or (QUICK_EPOCHS if quick else DEFAULT_EPOCHS),
                        batch_size=32 if quick else 64, seed=seed, minutes=minutes or None)
    d = load_data(settings)
    print(f"data: {d.description}; vocabularies {len(d.src_vocab)} / {len(d.tgt_vocab)}",
          flush=True)
    trained = train_model(name, d, settings)
    from kerasattn import metrics

    srcs = [s for s, _ in d.test_pairs]
    refs = [t for _, t in d.test_pairs]
    hyps, _ = translate_batch(trained.model, srcs, d.src_vocab, d.tgt_vocab,
                              max_length=settings.max_decode,
                              compile=settings.decode_compile)
    result = dict(model=name, backend=keras.backend.backend(), epochs=trained.epochs_run,
                  train_seconds=trained.train_seconds,
                  tokens_per_second=trained.tokens_per_second or 0.0,
                  params=trained.params, hparams=trained.hparams,
                  bleu=float(metrics.corpus_bleu(hyps, refs)),
                  exact_match=float(metrics.exact_match(hyps, refs)),
                  settings=settings.signature(), example_source=srcs[0],
                  history=trained.history,
                  # a fixed sample of test pairs: the backend demo scores these everywhere
                  samples=[list(p) for p in _spread(d.test_pairs, 32)])
    save_checkpoint(out, trained.model, d.src_vocab, d.tgt_vocab, result)
    return result


def translate_sentence(ckpt: Checkpoint, sentence: str, beam: int = 1,
                       attention: bool = False) -> dict:
    """``kerasattn translate``: one sentence, optionally with its cross-attention."""
    if not sentence.strip():
        raise ValueError("sentence: expected a non-empty sentence; received an empty string")
    quick = bool(ckpt.meta.get("settings", {}).get("quick"))
    rec = translate_with_attention(ckpt.model, sentence, ckpt.src_vocab, ckpt.tgt_vocab,
                                   beam=beam, max_length=QUICK_MAX_DECODE if quick else None,
                                   compile=False if quick else "auto")
    w = _attention_record(rec["attention"], kind="cross") if attention else None
    if w is not None and w.shape[0] == 1:
        w = w[0]
    rec["attention"] = w
    rec["attention_label"] = "cross-attention of the last decoder layer"
    return rec


# ---------------------------------------------------------------------------------------
# `kerasattn backends`: one set of weights on every backend
# ---------------------------------------------------------------------------------------
def _child_env(backend: str) -> dict:
    return dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3",
                PYTHONWARNINGS="ignore")


def backends_demo(backends: Sequence[str], model: str = "transformer",
                  checkpoint: str | None = None, epochs: int | None = None,
                  quick: bool = False, out: Path | None = None) -> int:
    """Train once (or reuse ``checkpoint``), then run the SAME weights on each backend.

    Each backend runs in its own process (keras fixes its backend at import): it loads the
    ``.keras`` file, computes teacher-forced logits on a fixed batch of test pairs, and
    greedily translates a few sentences. This process compares the logits (max absolute
    difference against the first backend) and the translations, and prints each backend's
    times.
    """
    import numpy as np

    out = Path(out) if out else ROOT / "outputs" / "backends_demo"
    out.mkdir(parents=True, exist_ok=True)
    if checkpoint is None:
        check_model_name(model)
        ckpt_dir = out / f"checkpoint_{model}"
        heading(f"1. training {model} once, on {backends[0]}")
        cmd = [sys.executable, "-m", "kerasattn", "--backend", backends[0], "train", model,
               "--out", str(ckpt_dir)]
        if quick:
            cmd.append("--quick")
        if epochs:
            cmd += ["--epochs", str(epochs)]
        rc = subprocess.call(cmd, env=_child_env(backends[0]))
        if rc != 0:
            print(f"kerasattn: error: training on {backends[0]} failed (exit {rc})",
                  file=sys.stderr)
            return rc
    else:
        ckpt_dir = Path(checkpoint)
        if not (ckpt_dir / META_FILE).is_file():
            raise ValueError(f"--checkpoint: {str(ckpt_dir)!r} is not a `kerasattn train` "
                             f"checkpoint directory (no {META_FILE})")
    meta = json.loads((ckpt_dir / META_FILE).read_text())
    request = out / "request.json"
    request.write_text(json.dumps(dict(n_pairs=4 if quick else 32, n_sentences=2 if quick
                                       else 6)))
    heading(f"2. the same weights ({ckpt_dir / MODEL_FILE}) on {len(backends)} backends")
    results = {}
    try:
        from tqdm import tqdm
        bar = tqdm(backends, desc="backends", unit="backend", leave=False)
    except ImportError:  # pragma: no cover
        bar = backends
    for b in bar:
        res_path = out / f"result_{b}.json"
        if res_path.exists():
            res_path.unlink()
        cmd = [sys.executable, "-m", "kerasattn", "--backend", b, "_backend_worker",
               str(ckpt_dir), str(request), str(res_path)]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=_child_env(b), capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0 or not res_path.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            results[b] = dict(error="\n    ".join(tail) or f"exit {proc.returncode}")
            continue
        r = json.loads(res_path.read_text())
        r["process_seconds"] = wall
        r["logits"] = np.load(out / f"logits_{b}.npy")
        results[b] = r
    ok = [b for b in backends if "error" not in results[b]]
    rows = []
    ref = results[ok[0]] if ok else None
    for b in backends:
        r = results[b]
        if "error" in r:
            rows.append([b, "FAILED", "-", "-", "-", "-", "-"])
            continue
        diff = float(np.max(np.abs(r["logits"] - ref["logits"])))
        same = sum(x == y for x, y in zip(r["translations"], ref["translations"]))
        rows.append([b, r["version"], f"{r['load_seconds']:.2f}",
                     f"{r['forward_seconds']:.3f}",
                     f"{1000 * r['translate_seconds'] / len(r['translations']):.0f}",
                     f"{diff:.2e}", f"{same}/{len(r['translations'])}"])
    print(f"model: {meta.get('model')} trained on {meta.get('backend')} "
          f"(test BLEU {meta.get('bleu', float('nan')):.1f}); reference backend for "
          f"differences: {ok[0] if ok else '-'}")
    print(format_table(["backend", "framework", "load s", "logits s", "ms/sentence",
                        "max |logit diff|", "same translations"], rows, align="llrrrrr"))
    if ok:
        heading("3. translations")
        srcs = ref["sources"]
        for i, s in enumerate(srcs):
            print(f"en: {s}")
            for b in ok:
                print(f"  {b:<10} {results[b]['translations'][i]}")
    for b in backends:
        if "error" in results[b]:
            print(f"\n{b} failed:\n    {results[b]['error']}", file=sys.stderr)
    if not ok:
        return 1
    worst = max(float(np.max(np.abs(results[b]["logits"] - ref["logits"]))) for b in ok)
    all_same = all(results[b]["translations"] == ref["translations"] for b in ok)
    summary = dict(backends=ok, failed=[b for b in backends if b not in ok],
                   max_abs_logit_diff=worst, same_translations=all_same,
                   model=meta.get("model"))
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"\nmax |logit difference| across backends: {worst:.2e}; identical "
          f"translations: {'yes' if all_same else 'NO'}")
    return 0 if len(ok) == len(backends) else 1


def backend_worker(checkpoint: str, request: str, result: str) -> int:
    """Child side of :func:`backends_demo`: load, score, translate, write JSON + logits."""
    import importlib

    import keras
    import numpy as np

    from kerasattn import data as kdata

    backend = keras.backend.backend()
    framework = importlib.import_module(backend)
    req = json.loads(Path(request).read_text())
    start = time.perf_counter()
    ckpt = load_checkpoint(checkpoint)
    load_seconds = time.perf_counter() - start
    s = ckpt.meta.get("settings", {})
    settings = Settings(quick=bool(s.get("quick")), data=s.get("data"),
                        seed=int(s.get("seed", 0)))
    if ckpt.meta.get("samples"):
        test_pairs = [tuple(p) for p in ckpt.meta["samples"]]
    else:  # an older checkpoint: regenerate its test split
        test_pairs = load_data(settings).test_pairs
    pairs = _spread(test_pairs, req["n_pairs"])
    arrays = kdata.make_arrays(pairs, ckpt.src_vocab, ckpt.tgt_vocab)
    x = {"encoder_inputs": arrays["encoder_inputs"], "decoder_inputs": arrays["decoder_inputs"]}
    start = time.perf_counter()  # a direct (eager) call: no predict-loop compilation
    logits = np.asarray(keras.ops.convert_to_numpy(ckpt.model(x, training=False)),
                        dtype=np.float32)
    forward_seconds = time.perf_counter() - start
    srcs = [p[0] for p in _spread(test_pairs, req["n_sentences"])]
    cap = settings.max_decode
    if not settings.quick:  # warm-up (decoder compilation) outside the timing
        translate_batch(ckpt.model, srcs[:1], ckpt.src_vocab, ckpt.tgt_vocab, max_length=cap)
    start = time.perf_counter()
    hyps, _ = translate_batch(ckpt.model, srcs, ckpt.src_vocab, ckpt.tgt_vocab, max_length=cap,
                              compile=settings.decode_compile)
    translate_seconds = time.perf_counter() - start
    out = Path(result)
    np.save(out.parent / f"logits_{backend}.npy", logits)
    out.write_text(json.dumps(dict(
        backend=backend, version=f"{backend} {framework.__version__}",
        load_seconds=load_seconds, forward_seconds=forward_seconds,
        translate_seconds=translate_seconds, sources=srcs, translations=list(hyps))))
    return 0


# ---------------------------------------------------------------------------------------
# Lesson 04 and 05 helpers
# ---------------------------------------------------------------------------------------
def compare_decoding(lesson: Lesson, trained: Trained, n_sentences: int = 8, beam: int = 4
                     ) -> list[dict]:
    """Decode test sentences greedily with and without the cache, and with a beam.

    Prints a timing table and the sentences where beam search differs from greedy.
    """
    d = lesson.data
    srcs = [s for s, _ in _spread(sorted(d.test_pairs, key=lambda p: len(p[0].split())),
                                  n_sentences)]
    runs = []
    outputs = {}
    cap = dict(max_length=lesson.settings.max_decode,
               compile=lesson.settings.decode_compile)
    for label, kwargs in (("greedy, K/V cache", dict(beam=1, cache=True, **cap)),
                          ("greedy, no cache", dict(beam=1, cache=False, **cap)),
                          (f"beam {beam}, cache", dict(beam=beam, cache=True, **cap))):
        # Warm-up on the same batch: compilation (JAX / TensorFlow: one per batch shape)
        # is not part of the comparison.
        translate_batch(trained.model, srcs, d.src_vocab, d.tgt_vocab, **kwargs)
        start = time.perf_counter()
        hyps, _ = translate_batch(trained.model, srcs, d.src_vocab, d.tgt_vocab, **kwargs)
        seconds = time.perf_counter() - start
        outputs[label] = hyps
        runs.append(dict(decoder=label, seconds=seconds, ms_per_sentence=1000 * seconds /
                         len(srcs)))
    ref = outputs["greedy, K/V cache"]
    print(format_table(["decoder", "total s", "ms/sentence", "same as cached greedy"],
                       [[r["decoder"], f"{r['seconds']:.2f}", f"{r['ms_per_sentence']:.0f}",
                         f"{sum(a == b for a, b in zip(outputs[r['decoder']], ref))}/"
                         f"{len(ref)}"] for r in runs]))
    beam_label = f"beam {beam}, cache"
    diff = [(s, g, b) for s, g, b in zip(srcs, ref, outputs[beam_label]) if g != b]
    print(f"beam search changed {len(diff)} of {len(srcs)} translations")
    for s, g, b in diff[:3]:
        print(f"  en:     {s}\n  greedy: {g}\n  beam:   {b}")
    return runs


LESSON_OF_MODEL = {"seq2seq": 0, "bahdanau": 0, "bahdanau_multihead": 1,
                   "encoder_self_attention": 2, "decoder_self_attention": 3,
                   "transformer_decoder_on_gru": 4, "transformer": 5}


def evolution_rows(lesson: Lesson, train_missing: bool | None = None) -> list[dict]:
    """One row per model for the evolution table.

    Each model's row comes from the lesson that trains it (its ``results.json``, when it was
    run with the same settings on the same backend). A model with no such record is trained
    now when ``train_missing`` (default: in quick mode only, where it takes seconds);
    otherwise its row has the parameter count only, and the lesson to run is printed
    (training all seven here would take the budget seven times).

    Args:
        lesson: the running lesson (05).
        train_missing: train models that no earlier lesson recorded (None: quick mode only).

    Returns:
        A list of dicts with keys ``model, params, train_seconds, tokens_per_second, bleu,
        exact_match`` (missing figures are None).
    """
    from kerasattn.cli import MODEL_NAMES

    if train_missing is None:
        train_missing = lesson.settings.quick
    recorded = lesson.recorded(range(5))
    rows, missing = [], []
    for name in MODEL_NAMES:
        if name in lesson.results:
            r = lesson.results[name]
        elif name in recorded:
            r = recorded[name]
            print(f"{name}: result recorded by lesson {LESSON_OF_MODEL[name]:02d}")
        elif train_missing:
            r = lesson.evaluate(lesson.train(name))
        else:
            model, _ = build(name, lesson.data, quick=lesson.settings.quick)
            r = dict(model=name, params=int(model.count_params()))
            missing.append(name)
        rows.append({k: r.get(k) for k in ("model", "params", "train_seconds",
                                            "tokens_per_second", "bleu", "exact_match")})
    if missing:
        lessons = sorted({LESSON_OF_MODEL[n] for n in missing} - {lesson.number})
        print(f"not yet measured with these settings on {lesson.backend}: "
              f"{', '.join(missing)}. Run "
              + ", ".join(f"`kerasattn lesson {k}`" for k in lessons)
              + " (same options and backend), then this lesson again, to fill their rows.")
    return rows
