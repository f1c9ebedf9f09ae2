"""The ``kerasattn`` command: lessons, training, translation, the backend demo, grading.

Usage (also ``python -m kerasattn ...``)::

    kerasattn lesson N [--quick] [--data PATH] [--out DIR]
    kerasattn train MODEL [--data PATH] [--epochs N] [--quick] [--out DIR]
    kerasattn translate CHECKPOINT "sentence" [--beam K] [--attention]
    kerasattn backends [--model NAME] [--checkpoint DIR] [--quick]
    kerasattn grade [PATH ...] [--backend ...] [--format ...]

``--backend tensorflow|jax|torch`` works before or after the subcommand. Keras fixes its
backend when it is first imported, so this module imports no keras at the top: it sets
``KERAS_BACKEND`` first, and if keras was already imported with another backend (``main``
called from a running program) it re-runs the command in a fresh process.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BACKENDS = ("tensorflow", "jax", "torch")
_BACKEND_MODULE = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}
_PIP_EXTRA = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}
ROOT = Path(__file__).resolve().parents[1]
# The seven model names, in course order (kept here so `--help` needs no keras import; a
# test checks it equals kerasattn.models.MODEL_NAMES).
MODEL_NAMES = ("seq2seq", "bahdanau", "bahdanau_multihead", "encoder_self_attention",
               "decoder_self_attention", "transformer_decoder_on_gru", "transformer")


class CLIError(Exception):
    """A user-facing error: printed as ``kerasattn: error: ...`` with exit status 2."""


# ---------------------------------------------------------------------------------------
# Backends
# ---------------------------------------------------------------------------------------
def installed_backends() -> list[str]:
    """The Keras backends whose framework can be imported here (without importing it)."""
    return [b for b in BACKENDS if importlib.util.find_spec(_BACKEND_MODULE[b]) is not None]


def check_backend(name: str) -> str:
    """Validate a backend name and that its framework is installed; return the name."""
    if name not in BACKENDS:
        raise CLIError(f"--backend must be one of {', '.join(BACKENDS)}; received {name!r}")
    if importlib.util.find_spec(_BACKEND_MODULE[name]) is None:
        have = ", ".join(installed_backends()) or "none"
        raise CLIError(f"backend {name!r} is not installed (the Python package "
                       f"{_BACKEND_MODULE[name]!r} cannot be imported). Install it with "
                       f"`pip install 'kerasattn[{_PIP_EXTRA[name]}]'`, or pick an installed "
                       f"backend: {have}.")
    return name


def _select_backend(requested: str | None) -> bool:
    """Make ``requested`` the Keras backend of this process.

    Returns True when the command must instead be re-run in a child process (keras was
    already imported here with a different backend).
    """
    if requested is None:
        env = os.environ.get("KERAS_BACKEND")
        if env:
            check_backend(env)
        return False
    check_backend(requested)
    keras_mod = sys.modules.get("keras")
    if keras_mod is not None:
        try:
            current = keras_mod.backend.backend()
        except Exception:  # a half-imported keras: fall back to a fresh process
            current = None
        if current != requested:
            return True
    os.environ["KERAS_BACKEND"] = requested
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return False


def _rerun_in_child(argv: list[str], backend: str) -> int:
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.call([sys.executable, "-m", "kerasattn", *argv], env=env)


# ---------------------------------------------------------------------------------------
# Argument parsing
# ---------------------------------------------------------------------------------------
def _add_backend(p: argparse.ArgumentParser, default=None) -> None:
    p.add_argument("--backend", default=default, metavar="NAME",
                   help="Keras backend: tensorflow, jax or torch (default: $KERAS_BACKEND, "
                        "else Keras's default)")


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``kerasattn`` command."""
    model_names = MODEL_NAMES
    parser = argparse.ArgumentParser(
        prog="kerasattn",
        description="From Bahdanau attention to the Transformer, on TensorFlow, JAX and "
                    "PyTorch.",
        epilog="Example: kerasattn --backend jax lesson 0 --quick")
    _add_backend(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("lesson", help="run a lesson (0-5): train, evaluate, draw its figures")
    p.add_argument("number", type=int, metavar="N", help="lesson number, 0 to 5")
    p.add_argument("--quick", action="store_true",
                   help="tiny settings that finish in well under a minute (for tests)")
    p.add_argument("--data", metavar="PATH",
                   help="a Tatoeba/manythings English<TAB>French file (default: the "
                        "built-in corpus)")
    p.add_argument("--out", metavar="DIR", help="where figures go (default: "
                                                "outputs/lessons/lesson_0N)")
    _add_backend(p, argparse.SUPPRESS)

    p = sub.add_parser("train", help="train one model and save a checkpoint + vocabularies")
    p.add_argument("model", metavar="MODEL", help="one of: " + ", ".join(model_names))
    p.add_argument("--data", metavar="PATH", help="Tatoeba file (default: built-in corpus)")
    p.add_argument("--epochs", type=int, metavar="N", help="maximum epochs (default: the "
                                                           "lesson default for MODEL)")
    p.add_argument("--minutes", type=float, metavar="M",
                   help="training budget in minutes (default: the lessons' budget per model; "
                        "0 = no limit, early stopping decides)")
    p.add_argument("--quick", action="store_true", help="tiny settings (seconds)")
    p.add_argument("--out", metavar="DIR", help="checkpoint directory (default: "
                                                "outputs/checkpoints/MODEL)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    _add_backend(p, argparse.SUPPRESS)

    p = sub.add_parser("translate", help="translate a sentence with a saved checkpoint")
    p.add_argument("checkpoint", metavar="CHECKPOINT",
                   help="a directory written by `kerasattn train`")
    p.add_argument("sentence", help="the English sentence, quoted")
    p.add_argument("--beam", type=int, default=1, metavar="K",
                   help="beam size (1 = greedy, the default)")
    p.add_argument("--attention", action="store_true",
                   help="also print the attention matrix (and save a heatmap PNG)")
    p.add_argument("--plot", metavar="PNG", help="heatmap path for --attention (default: "
                                                 "CHECKPOINT/attention.png)")
    _add_backend(p, argparse.SUPPRESS)

    p = sub.add_parser("backends", help="live demo: one set of weights on every backend")
    p.add_argument("--model", default="transformer", metavar="NAME",
                   help="model to train for the demo (default transformer)")
    p.add_argument("--checkpoint", metavar="DIR",
                   help="use this `kerasattn train` checkpoint instead of training one")
    p.add_argument("--epochs", type=int, metavar="N", help="epochs when training the demo "
                                                           "model")
    p.add_argument("--quick", action="store_true", help="tiny model and data (seconds)")
    p.add_argument("--backends", dest="backend_list", metavar="LIST",
                   help="comma-separated backends to compare (default: every installed one)")
    p.add_argument("--out", metavar="DIR", help="work directory (default: "
                                                "outputs/backends_demo)")
    _add_backend(p, argparse.SUPPRESS)

    p = sub.add_parser("grade", help="grade exercise files (see `kerasattn grade --help`)",
                       add_help=False)
    p.add_argument("grade_args", nargs=argparse.REMAINDER)

    p = sub.add_parser("_backend_worker")  # internal: no help= keeps it out of the list
    p.add_argument("checkpoint")
    p.add_argument("request")
    p.add_argument("result")
    _add_backend(p, argparse.SUPPRESS)
    return parser


def _split_grade(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Everything after ``grade`` goes to the grader untouched (its own --backend too)."""
    head = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "grade":
            return head, argv[i + 1:]
        head.append(a)
        if a == "--backend" and i + 1 < len(argv):
            head.append(argv[i + 1])
            i += 1
        i += 1
    return argv, None


# ---------------------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------------------
def cmd_lesson(args) -> int:
    from kerasattn import lesson_utils

    path = lesson_utils.lesson_path(args.number)
    argv = []
    if args.quick:
        argv.append("--quick")
    if args.data:
        argv += ["--data", args.data]
    if args.out:
        argv += ["--out", args.out]
    return lesson_utils.run_lesson_file(path, argv)


def cmd_train(args) -> int:
    from kerasattn import lesson_utils

    lesson_utils.check_model_name(args.model)
    if args.data:
        lesson_utils.check_data_path(args.data)
    if args.epochs is not None and args.epochs < 1:
        raise CLIError(f"--epochs must be >= 1; received {args.epochs}")
    if args.minutes is not None and args.minutes < 0:
        raise CLIError(f"--minutes must be >= 0; received {args.minutes}")
    out = Path(args.out) if args.out else ROOT / "outputs" / "checkpoints" / args.model
    result = lesson_utils.train_and_save(args.model, out, data=args.data, epochs=args.epochs,
                                         quick=args.quick, seed=args.seed,
                                         minutes=args.minutes)
    print(lesson_utils.format_table(
        ["model", "backend", "epochs", "train time (s)", "tokens/s", "test BLEU",
         "exact match"],
        [[args.model, result["backend"], result["epochs"], f"{result['train_seconds']:.1f}",
          f"{result['tokens_per_second']:,.0f}", f"{result['bleu']:.1f}",
          f"{result['exact_match']:.1%}"]]))
    print(f"\ncheckpoint saved in {out}/ (model.keras, src_vocab.json, tgt_vocab.json, "
          f"meta.json)")
    print(f"try: kerasattn translate {out} \"{result['example_source']}\" --attention")
    return 0


def cmd_translate(args) -> int:
    from kerasattn import lesson_utils

    if args.beam < 1:
        raise CLIError(f"--beam must be >= 1; received {args.beam}")
    ckpt = lesson_utils.load_checkpoint(args.checkpoint)
    res = lesson_utils.translate_sentence(ckpt, args.sentence, beam=args.beam,
                                          attention=args.attention)
    if res["unknown_words"]:
        print(f"note: not in the source vocabulary (read as <unk>): "
              f"{', '.join(res['unknown_words'])}", file=sys.stderr)
    print(res["translation"])
    if args.attention:
        weights = res["attention"]
        if weights is None:
            print(f"(model {ckpt.name!r} has no attention to show: seq2seq reads one fixed "
                  f"context vector)")
            return 0
        print()
        print(lesson_utils.format_attention(weights, res["source_tokens"],
                                            res["target_tokens"], res["attention_label"]))
        plot = Path(args.plot) if args.plot else Path(args.checkpoint) / "attention.png"
        from kerasattn import plots
        plots.attention_heatmap(weights, res["source_tokens"], res["target_tokens"], plot,
                                title=f"{ckpt.name}: {res['attention_label']}")
        print(f"\nheatmap saved to {plot}")
    return 0


def cmd_backends(args) -> int:
    from kerasattn import lesson_utils

    wanted = (args.backend_list.split(",") if args.backend_list else installed_backends())
    wanted = [b.strip() for b in wanted if b.strip()]
    for b in wanted:
        check_backend(b)
    if not wanted:
        raise CLIError("no Keras backend is installed: pip install 'kerasattn[torch]' (or "
                       "[jax], [tensorflow])")
    return lesson_utils.backends_demo(wanted, model=args.model, checkpoint=args.checkpoint,
                                      epochs=args.epochs, quick=args.quick,
                                      out=Path(args.out) if args.out else None)


def cmd_backend_worker(args) -> int:
    from kerasattn import lesson_utils

    return lesson_utils.backend_worker(args.checkpoint, args.request, args.result)


def cmd_grade(grade_args: list[str]) -> int:
    try:
        from kerasattn.grader import main as grader_main
    except ImportError as exc:
        raise CLIError(f"the autograder is not available in this installation ({exc})")
    return int(grader_main(grade_args) or 0)


_COMMANDS = {"lesson": cmd_lesson, "train": cmd_train, "translate": cmd_translate,
             "backends": cmd_backends, "_backend_worker": cmd_backend_worker}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kerasattn`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    head, grade_args = _split_grade(argv)
    try:
        if grade_args is not None:
            # the grader chooses its own backends (it runs every check in a child process)
            pre = argparse.ArgumentParser(prog="kerasattn", add_help=False)
            _add_backend(pre)
            known, extra = pre.parse_known_args(head)
            if extra:
                raise CLIError(f"unexpected arguments before `grade`: {' '.join(extra)}")
            if known.backend and "--backend" not in grade_args:
                grade_args = ["--backend", known.backend, *grade_args]
            return cmd_grade(grade_args)
        parser = build_parser()
        args = parser.parse_args(argv)
        if _select_backend(args.backend):
            return _rerun_in_child(argv, args.backend)
        return _COMMANDS[args.command](args)
    except CLIError as exc:
        print(f"kerasattn: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kerasattn: interrupted", file=sys.stderr)
        return 130
    except (FileNotFoundError, ValueError) as exc:
        # the kit's own errors are written for people: show them without a traceback
        print(f"kerasattn: error: {exc}", file=sys.stderr)
        if os.environ.get("KERASATTN_DEBUG"):
            raise
        return 2
