"""The one definition of the lesson and training options, and the :class:`Settings` they give.

``kerasattn lesson N``, ``python lessons/0N_*.py`` and ``kerasattn train`` all add their
options with :func:`add_run_options` and turn them into :class:`Settings` with
:func:`settings_from_args`, so every option works the same everywhere::

    --quick  --data PATH|LANG  --tokenizer auto|word|subword  --reverse  --out DIR
    --epochs N  --minutes M  --seed S  --train-size N  --torch-threads auto|N
    --mixed-precision [auto|mixed_float16|mixed_bfloat16]  --backend NAME

Keras is not imported here: ``--backend`` must take effect before it is.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Sequence

from kerasattn._env import (
    UsageError,
    add_backend_option,
    check_model_name,
    select_backend,
)

__all__ = ["Settings", "add_run_options", "settings_from_args", "parse_lesson_args",
           "run_options_argv", "check_data_path", "check_model_name", "OUTPUTS",
           "lesson_out_dir", "checkpoint_dir", "LESSON_ARGS_ENV", "MIXED_PRECISION"]

# Default: the full built-in corpus (10,000 training pairs), the whole test split, at most
# DEFAULT_EPOCHS epochs with early stopping, each model's recommended learning rate and
# batching (kerasattn.training.recommended_training), and DEFAULT_MINUTES of training per
# lesson, split evenly over the lesson's models (lesson 00 trains two; lesson 06 sets its own).
# Chosen so that a lesson ends within 5 minutes on a 2-core CPU, data, decoding and figures
# included, also beside one other CPU-bound process (measured per backend: docs/lessons.md).
# Quick: a slice of the corpus and tiny models, for the tests (seconds); quick numbers mean
# nothing about quality.
DEFAULT_EPOCHS = 30
DEFAULT_SIZES = dict(train=None, valid=300, test=None)  # None = the whole split
DEFAULT_MINUTES = 4.0       # wall-clock training budget per lesson (split over its models)
QUICK_EPOCHS = 1
QUICK_SIZES = dict(train=64, valid=16, test=6)
QUICK_MAX_DECODE = 8        # quick models never learn <eos>: cap the output length
QUICK_HPARAMS = dict(  # applied only to fields a model's config actually has
    embed_dim=16, units=16, attention_units=16, d_model=16, num_heads=2, d_ff=32,
    num_encoder_blocks=1, num_encoder_layers=1, num_decoder_layers=1, dropout=0.0)

LESSON_ARGS_ENV = "KERASATTN_LESSON_ARGS"
"""Inside a notebook, the lesson's options as one command-line string (e.g. ``--quick``):
the kernel's own ``sys.argv`` (``-f kernel.json``) is not the lesson's."""

OUTPUTS = Path("outputs")
"""Root of everything the kit writes, relative to the current directory."""


def lesson_out_dir(number: int) -> Path:
    """Default output folder of lesson ``number``: ``./outputs/lessons/lesson_0N``."""
    return OUTPUTS / "lessons" / f"lesson_{number:02d}"


def checkpoint_dir(model: str) -> Path:
    """Default checkpoint folder of ``kerasattn train MODEL``: ``./outputs/checkpoints/MODEL``."""
    return OUTPUTS / "checkpoints" / model


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
        minutes: training wall-clock budget per model in minutes (None or 0 = no limit);
            training stops after the batch, or the validation pass, that crosses it (the
            best weights so far are kept where early stopping is on).
        train_size: use this many training pairs, spread evenly over the lengths (None =
            all).
        n_models: models the lesson trains (its budget is ``minutes * n_models``).
        tokenizer: with ``data``, ``"auto"`` (the data-driven recipe chooses), ``"word"`` or
            ``"subword"``; the built-in corpus always uses words.
        reverse: with ``data``, translate from the other language into English.
        mixed_precision: None (float32), ``"auto"`` (``mixed_float16`` on a GPU,
            ``mixed_bfloat16`` on a CPU), ``"mixed_float16"`` or ``"mixed_bfloat16"``.
        minutes_per_model: ``minutes`` was given per model (``--minutes``): runs are
            compared by that per-model budget; otherwise by the lesson's whole budget
            (``minutes * n_models``: lesson 00 splits its four minutes over two models).
    """

    quick: bool = False
    data: str | None = None
    out: Path = OUTPUTS / "lessons"
    epochs: int = DEFAULT_EPOCHS
    batch_size: int = 64
    seed: int = 0
    max_test: int | None = None
    minutes: float | None = None
    train_size: int | None = None
    n_models: int = 1
    tokenizer: str = "auto"
    reverse: bool = False
    mixed_precision: str | None = None
    minutes_per_model: bool = False

    @property
    def decode_compile(self):
        """Compile the decoding step? Not in quick mode: compiling costs more than it saves
        for a handful of 8-token outputs (and every tiny model would recompile)."""
        return False if self.quick else "auto"

    @property
    def max_decode(self) -> int | None:
        """Output-length cap for decoding (quick mode only; None = from the source)."""
        return QUICK_MAX_DECODE if self.quick else None

    @property
    def decode_defaults(self) -> dict:
        """What a translator trained with these settings decodes with by default
        (``meta["decode"]`` of :class:`kerasattn.inference.Translator`)."""
        return dict(max_length=self.max_decode, compile=self.decode_compile)

    def signature(self) -> dict:
        """The fields that make two runs comparable (same data and budget)."""
        lesson_minutes = None if self.minutes is None else round(self.minutes *
                                                                  self.n_models, 2)
        sig = dict(quick=self.quick, data=self.data, epochs=self.epochs,
                   batch_size=self.batch_size, seed=self.seed, max_test=self.max_test,
                   lesson_minutes=lesson_minutes, train_size=self.train_size,
                   sizes=dict(QUICK_SIZES if self.quick else DEFAULT_SIZES))
        if self.minutes_per_model:  # `--minutes M`: every lesson's models got M each
            del sig["lesson_minutes"]
            sig["minutes_per_model"] = self.minutes
        # listed only when set, so runs on the built-in corpus keep their records
        for name, default in (("tokenizer", "auto"), ("reverse", False),
                              ("mixed_precision", None)):
            if getattr(self, name) != default:
                sig[name] = getattr(self, name)
        return sig


MIXED_PRECISION = ("auto", "mixed_float16", "mixed_bfloat16")


def check_data_path(path: str) -> Path | str:
    """A ``--data`` value: an existing corpus file (a Path), or a manythings.org language
    code such as ``"fra"`` (returned as it is: fetched when the data is loaded).

    Raises:
        UsageError: neither (naming ``--data``, the value and the built-in corpus).
    """
    p = Path(path).expanduser()
    if p.exists():
        return p
    text = str(path)
    if text.isalpha() and 2 <= len(text) <= 8:
        return text.lower()
    raise UsageError(f"--data: no such file {text!r}, and it is not a language code such as "
                     f"'fra' or 'jpn'. Give a Tatoeba/manythings file (e.g. fra.txt or "
                     f"fra-eng.zip from https://www.manythings.org/anki/, or fetch one with "
                     f"`kerasattn data fetch fra`), or leave out --data to use the built-in "
                     f"corpus.")


# (flags, argparse keywords) of every run option, in the order --help lists them
_RUN_OPTIONS = [
    ("--quick", dict(action="store_true",
                     help="tiny data and models: seconds, for tests (results mean nothing)")),
    ("--data", dict(metavar="PATH|LANG",
                    help="a Tatoeba/manythings file (.txt or .zip), or a manythings.org "
                         "language code such as fra or jpn (downloaded once); default: the "
                         "built-in corpus")),
    ("--tokenizer", dict(choices=("auto", "word", "subword"), default="auto",
                         help="tokens of a --data corpus: auto (chosen from the data), word, "
                              "or subword (SentencePiece); default auto")),
    ("--reverse", dict(action="store_true",
                       help="with --data: translate from the other language into English")),
    ("--out", dict(metavar="DIR", help="output folder (default: {out})")),
    ("--epochs", dict(type=int, metavar="N",
                      help=f"maximum epochs per model (default {DEFAULT_EPOCHS}, quick "
                           f"{QUICK_EPOCHS}); early stopping may end sooner")),
    ("--minutes", dict(type=float, metavar="M",
                       help="training budget in minutes per model (lesson 6: per share of "
                            "its budget) (default {minutes}; "
                            "0 = no limit; none in quick mode)")),
    ("--seed", dict(type=int, default=0, metavar="S",
                    help="random seed: corpus split, initial weights, dropout (default 0)")),
    ("--train-size", dict(type=int, metavar="N",
                          help=f"training pairs (default: all, quick {QUICK_SIZES['train']})")),
    ("--torch-threads", dict(metavar="auto|N",
                             help="torch backend: intra-op threads for training and decoding "
                                  "(default auto: the cores other processes leave idle, "
                                  "counted once at the start; N: a fixed count)")),
    ("--mixed-precision", dict(nargs="?", const="auto", metavar="POLICY",
                               help="train with a Keras mixed-precision policy: "
                                    "mixed_float16 or mixed_bfloat16 (no value: float16 on "
                                    "a GPU, bfloat16 on a CPU); default float32")),
]


def add_run_options(parser: argparse.ArgumentParser, out_default: str,
                    minutes_default: str, backend: bool = True) -> None:
    """Add the run options (see the module docstring) to ``parser``.

    Args:
        parser: the parser (or subparser) to extend.
        out_default: how ``--help`` describes the default output folder.
        minutes_default: how ``--help`` describes the default training budget.
        backend: also add ``--backend`` (default: ``$KERAS_BACKEND``).
    """
    for flag, kwargs in _RUN_OPTIONS:
        kwargs = dict(kwargs)
        kwargs["help"] = kwargs["help"].format(out=out_default, minutes=minutes_default)
        parser.add_argument(flag, **kwargs)
    if backend:
        add_backend_option(parser, default=argparse.SUPPRESS)


def run_options_argv(args: argparse.Namespace) -> list[str]:
    """The run options of parsed ``args`` back as command-line arguments (non-defaults)."""
    argv = []
    for flag, kwargs in _RUN_OPTIONS:
        value = getattr(args, flag[2:].replace("-", "_"), None)
        if kwargs.get("action") == "store_true":
            argv += [flag] if value else []
        elif value is not None and value != kwargs.get("default"):
            argv += [flag, str(value)]
    return argv


def settings_from_args(args: argparse.Namespace, out: Path, n_models: int = 1,
                       lesson_minutes: float = DEFAULT_MINUTES,
                       data_minutes: float | None = None) -> Settings:
    """Check the parsed run options and turn them into :class:`Settings`.

    Also applies ``--torch-threads`` (through ``KERASATTN_TORCH_THREADS``, read when torch
    trains or decodes).

    Args:
        args: parsed by a parser extended with :func:`add_run_options`.
        out: the output folder when ``--out`` is not given.
        n_models: models the run trains; the default budget is split among them.
        lesson_minutes: the default training budget of the whole run, in minutes.
        data_minutes: the default budget of the whole run on a real file (``--data``), if
            it differs from ``lesson_minutes``.

    Raises:
        UsageError: an option value out of range, or a missing ``--data`` file.
    """
    if args.data:
        check_data_path(args.data)
    if args.reverse and not args.data:
        raise UsageError("--reverse needs --data (the built-in corpus is English to French "
                         "only)")
    if getattr(args, "tokenizer", "auto") != "auto" and not args.data:
        raise UsageError(f"--tokenizer needs --data (the built-in corpus uses word tokens); "
                         f"received {args.tokenizer!r}")
    if not 0 <= getattr(args, "seed", 0) < 2 ** 32:
        raise UsageError(f"--seed must be in [0, 2**32); received {args.seed}")
    if args.mixed_precision is not None and args.mixed_precision not in MIXED_PRECISION:
        raise UsageError(f"--mixed-precision must be one of {', '.join(MIXED_PRECISION)}; "
                         f"received {args.mixed_precision!r}")
    for name in ("epochs", "train_size"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be >= 1; received {value}")
    if args.minutes is not None and args.minutes < 0:
        raise UsageError(f"--minutes must be >= 0; received {args.minutes:g}")
    threads = args.torch_threads
    if threads is not None:
        if threads != "auto" and not (threads.isdigit() and int(threads) >= 1):
            raise UsageError(f"--torch-threads must be 'auto' or an int >= 1; received "
                             f"{threads!r}")
        os.environ["KERASATTN_TORCH_THREADS"] = threads
    elif not os.environ.get("KERASATTN_TORCH_THREADS"):
        # default: the idle cores, counted once. torch's own default (one spin-waiting
        # thread per core) fights any other busy process for the same cores.
        os.environ["KERASATTN_TORCH_THREADS"] = "auto"
    epochs = args.epochs if args.epochs is not None else (
        QUICK_EPOCHS if args.quick else DEFAULT_EPOCHS)
    if args.data and data_minutes:
        lesson_minutes = data_minutes
    minutes = args.minutes if args.minutes is not None else (
        None if args.quick else round(lesson_minutes / max(1, n_models), 3))
    return Settings(quick=args.quick, data=args.data, out=Path(args.out) if args.out else out,
                    epochs=epochs, batch_size=32 if args.quick else 64, seed=args.seed,
                    minutes=minutes or None, train_size=args.train_size, n_models=n_models,
                    tokenizer=args.tokenizer, reverse=args.reverse,
                    mixed_precision=args.mixed_precision,
                    minutes_per_model=args.minutes is not None)


def in_notebook() -> bool:
    """True inside an IPython kernel (Jupyter, Colab), whose ``sys.argv`` is the kernel's
    (``-f kernel.json``); False when ``sys.argv`` names a lesson script, as when
    ``kerasattn.cli.main(["lesson", ...])`` runs one from a notebook."""
    return "ipykernel" in sys.modules and not re.fullmatch(r"\d\d_\w+\.py",
                                                            Path(sys.argv[0]).name)


def notebook_argv() -> list[str]:
    """The lesson options of a notebook: ``$KERASATTN_LESSON_ARGS`` split like a shell.

    Raises:
        UsageError: the value does not split (an unclosed quote), naming the variable.
    """
    value = os.environ.get(LESSON_ARGS_ENV, "")
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise UsageError(f"{LESSON_ARGS_ENV} must be lesson options like '--quick'; "
                         f"received {value!r} ({exc})") from None


def parse_lesson_args(number: int, description: str, argv: Sequence[str] | None = None,
                      n_models: int = 1, lesson_minutes: float = DEFAULT_MINUTES,
                      data_minutes: float | None = None) -> Settings:
    """Parse a lesson's options (see the module docstring); select the Keras backend.

    ``--backend`` sets ``KERAS_BACKEND``, so call this before keras is imported. Inside a
    notebook (an IPython kernel, whose ``sys.argv`` holds its own ``-f kernel.json``) the
    options are read from the environment variable ``KERASATTN_LESSON_ARGS`` instead (e.g.
    ``"--quick"``; unset or empty: the defaults), which a lesson notebook's set-up cell sets.

    Args:
        number: the lesson number (for the default output folder).
        description: shown by ``--help``.
        argv: arguments (default ``sys.argv[1:]``, in a notebook
            ``$KERASATTN_LESSON_ARGS``).
        n_models: models the lesson trains; the default time budget is split among them.
        lesson_minutes: the lesson's default training budget in minutes (a lesson with
            more decoding work than training gives less than :data:`DEFAULT_MINUTES`).
        data_minutes: the default budget on a real file (``--data``), for a lesson whose
            models need longer on real sentences than on the built-in corpus.

    Returns:
        The lesson's :class:`Settings`.
    """
    parser = argparse.ArgumentParser(prog=f"lesson {number:02d}", description=description)
    per_model = f"{lesson_minutes / max(1, n_models):g}"
    if n_models > 1:
        per_model += f": {lesson_minutes:g} minutes in {n_models} shares"
    if data_minutes:
        per_model += f"; {data_minutes / max(1, n_models):g} with --data"
    add_run_options(parser, out_default=str(lesson_out_dir(number)), minutes_default=per_model)
    if argv is None:
        argv = notebook_argv() if in_notebook() else sys.argv[1:]
    args = parser.parse_args(list(argv))
    try:
        select_backend(getattr(args, "backend", None))
        return settings_from_args(args, lesson_out_dir(number), n_models=n_models,
                                  lesson_minutes=lesson_minutes, data_minutes=data_minutes)
    except UsageError as exc:
        parser.error(str(exc))
