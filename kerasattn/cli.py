"""The ``kerasattn`` command: lessons, training, translation, the backend demo, grading.

Usage (also ``python -m kerasattn ...``)::

    kerasattn lesson N [RUN OPTIONS]
    kerasattn train MODEL [RUN OPTIONS]
    kerasattn translate CHECKPOINT "sentence" [--beam K] [--attention]
    kerasattn translate CHECKPOINT --input FILE [--output FILE] [--beam K]
    kerasattn explore CHECKPOINT "sentence" [--beam K] [--out FILE.html]
    kerasattn data fetch LANG [--cache-dir DIR]
    kerasattn backends [--model NAME] [--checkpoint DIR] [--quick]
    kerasattn grade [PATH ...] [--backend ...] [--format ...]
    kerasattn hint EXERCISE [N]
    kerasattn lab [EXERCISE_FILE] [RUN OPTIONS] [--no-grade]
    kerasattn notebook N [N ...] | --all [--out DIR] [--quick] [--options=OPTS] [--pip SPEC]

``--backend tensorflow|jax|torch`` works before or after the subcommand. Keras fixes its
backend when it is first imported, so this module imports no keras at the top: it sets
``KERAS_BACKEND`` first, and if keras was already imported with another backend (``main``
called from a running program) it re-runs the command in a fresh process.

RUN OPTIONS are the same for ``lesson``, ``train``, ``lab`` and ``python lessons/0N_*.py``
(:mod:`kerasattn.course.options`): ``--quick --data --tokenizer --reverse --out --epochs
--minutes --seed --train-size --torch-threads --mixed-precision --backend``. This module
only parses and dispatches; the work is done by :mod:`kerasattn.course` (and
:mod:`kerasattn.grader` for ``grade`` and ``hint``), imported when a command runs.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from kerasattn._env import (
    BACKENDS,
    MODEL_NAMES,
    UsageError,
    add_backend_option,
    check_backend,
    installed_backends,
    keras_backend_in_use,
    select_backend,
)

__all__ = ["main", "build_parser", "BACKENDS", "MODEL_NAMES", "UsageError"]


def _needs_child(requested: str | None) -> bool:
    """Select ``requested`` here, or say the command must run in a fresh process (True):
    keras is already imported in this process with another backend."""
    if requested is not None:
        check_backend(requested)
        current = keras_backend_in_use()
        if current is not None and current != requested:
            return True
    select_backend(requested)
    return False


def _rerun_in_child(argv: list[str], backend: str) -> int:
    env = dict(os.environ, KERAS_BACKEND=backend)
    return subprocess.call([sys.executable, "-m", "kerasattn", *argv], env=env)


# ---------------------------------------------------------------------------------------
# Argument parsing
# ---------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``kerasattn`` command."""
    from kerasattn.course import options  # keras-free: the shared run options
    from kerasattn.course.lab import LAB_MINUTES  # keras-free too

    model_names = MODEL_NAMES
    parser = argparse.ArgumentParser(
        prog="kerasattn",
        description="From Bahdanau attention to the Transformer, on TensorFlow, JAX and "
                    "PyTorch.",
        epilog="Example: kerasattn --backend jax lesson 0 --quick")
    add_backend_option(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("lesson", help="run a lesson (0-6): train, evaluate, draw its figures")
    p.add_argument("number", type=int, metavar="N", help="lesson number, 0 to 6")
    options.add_run_options(p, out_default="./outputs/lessons/lesson_0N",
                            minutes_default=f"{options.DEFAULT_MINUTES:g} per lesson, "
                                            f"split over its models; lesson 6: 3.25 in all "
                                            f"(8 shares), 16 with --data")

    p = sub.add_parser("train", help="train one model and save a checkpoint + vocabularies")
    p.add_argument("model", metavar="MODEL", help="one of: " + ", ".join(model_names))
    options.add_run_options(p, out_default="./outputs/checkpoints/MODEL",
                            minutes_default=f"{options.DEFAULT_MINUTES:g}")
    p.add_argument("--beam", type=int, default=1, metavar="K",
                   help="also score the test split decoded by beam search of width K, a row "
                        "of its own (default 1: greedy only)")

    p = sub.add_parser("translate", help="translate a sentence (or a file) with a saved "
                                          "checkpoint")
    p.add_argument("checkpoint", metavar="CHECKPOINT",
                   help="a directory written by `kerasattn train`")
    p.add_argument("sentence", nargs="?", help="the source sentence, quoted")
    p.add_argument("--input", metavar="FILE",
                   help="translate this UTF-8 file instead, one sentence per line (- reads "
                        "standard input): one line out per line in, in order")
    p.add_argument("--output", metavar="FILE",
                   help="with --input: write the translations here (default: standard "
                        "output)")
    p.add_argument("--beam", type=int, default=1, metavar="K",
                   help="beam size (1 = greedy, the default)")
    p.add_argument("--attention", action="store_true",
                   help="also print the attention matrix (and save a heatmap PNG)")
    p.add_argument("--plot", metavar="PNG", help="heatmap path for --attention (default: "
                                                 "CHECKPOINT/attention.png)")
    add_backend_option(p, default=argparse.SUPPRESS)

    p = sub.add_parser("explore", help="write an interactive attention explorer page (one "
                                        "HTML file, works offline) for one sentence")
    p.add_argument("checkpoint", metavar="CHECKPOINT",
                   help="a directory written by `kerasattn train`")
    p.add_argument("sentence", help="the source sentence, quoted")
    p.add_argument("--beam", type=int, default=1, metavar="K",
                   help="beam size (1 = greedy, the default); the page then shows the beam's "
                        "hypotheses at each step")
    p.add_argument("--out", metavar="FILE.html",
                   help="where to write the page (default: CHECKPOINT/explorer.html)")
    add_backend_option(p, default=argparse.SUPPRESS)

    p = sub.add_parser("data", help="get a real corpus: `kerasattn data fetch LANG`")
    data_sub = p.add_subparsers(dest="data_command", metavar="ACTION")
    data_sub.required = True
    f = data_sub.add_parser("fetch", help="download a manythings.org / Tatoeba corpus into "
                                          "the Keras cache; prints its licence and path")
    f.add_argument("lang", metavar="LANG",
                   help="manythings.org language code paired with English: fra, deu, jpn...")
    f.add_argument("--cache-dir", metavar="DIR",
                   help="cache directory (default: Keras's, ~/.keras)")
    f.add_argument("--url", metavar="URL",
                   help="download from this URL instead (a mirror, or file://; default: "
                        "$KERASATTN_DATA_URL, else manythings.org)")
    add_backend_option(f, default=argparse.SUPPRESS)

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
                                                "./outputs/backends_demo)")
    add_backend_option(p, default=argparse.SUPPRESS)

    p = sub.add_parser("notebook", help="write lessons as Jupyter / Colab notebooks (.ipynb)")
    p.add_argument("numbers", type=int, nargs="*", metavar="N", help="lesson number(s)")
    p.add_argument("--all", action="store_true", help="every lesson")
    p.add_argument("--out", metavar="DIR", help="folder (default: ./outputs/notebooks)")
    p.add_argument("--quick", action="store_true",
                   help="the set-up cell runs the lesson with --quick (tiny, seconds)")
    p.add_argument("--options", default="", metavar="OPTS",
                   help="other lesson options the set-up cell passes, as one string: "
                        "--options=\"--minutes 2 --seed 1\" (default: none)")
    p.add_argument("--pip", metavar="SPEC",
                   help="a pip requirement the set-up cell installs (for Colab), e.g. "
                        "\"kerasattn @ git+https://github.com/OWNER/kerasattn.git\" "
                        "(default: a commented install line)")
    add_backend_option(p, default=argparse.SUPPRESS)

    p = sub.add_parser("grade", help="grade exercise files (see `kerasattn grade --help`)",
                       add_help=False)
    p.add_argument("grade_args", nargs=argparse.REMAINDER)

    p = sub.add_parser("hint", help="print a hint for an exercise; each further N is more "
                                     "explicit")
    p.add_argument("exercise", metavar="EXERCISE",
                   help="the exercise: its number (3 or 03) or its file name")
    p.add_argument("number", nargs="?", type=int, default=1, metavar="N",
                   help="which hint (default 1; the last one comes close to the answer)")
    add_backend_option(p, default=argparse.SUPPRESS)  # accepted anywhere, unused here

    p = sub.add_parser("lab", help="the attention lab: train your exercise-16 model beside "
                                    "seq2seq, draw its attention, write a report")
    p.add_argument("exercise_file", nargs="?", metavar="EXERCISE_FILE",
                   help="your exercise-16 file (default: "
                        "exercises/16_lab_bahdanau_model.py)")
    options.add_run_options(p, out_default="./outputs/lab",
                            minutes_default=f"{LAB_MINUTES / 2:g}: the lab's {LAB_MINUTES:g} "
                                            f"minutes split over its two models")
    p.add_argument("--no-grade", action="store_true",
                   help="train without grading exercise 16 first (grading runs its checks "
                        "in sandboxed processes: tens of seconds)")

    p = sub.add_parser("_backend_worker")  # internal: no help= keeps it out of the list
    p.add_argument("checkpoint")
    p.add_argument("request")
    p.add_argument("result")
    add_backend_option(p, default=argparse.SUPPRESS)
    return parser


def _split_grade(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """Everything after ``grade`` goes to the grader untouched (its own --backend too)."""
    head = []
    i = 0
    while i < len(argv):  # only the subcommand position: skip global options, stop at the
        a = argv[i]       # first other word (``lesson 0 --out grade`` is not the grader)
        if a == "grade":
            return head, argv[i + 1:]
        head.append(a)
        if a == "--backend" and i + 1 < len(argv):
            head.append(argv[i + 1])
            i += 1
        elif not a.startswith("-"):
            break
        i += 1
    return argv, None


# ---------------------------------------------------------------------------------------
# Subcommands
# ---------------------------------------------------------------------------------------
def _check_writable_dir(path, flag: str) -> None:
    """Create the folder ``path`` (the value of ``flag``) or say why it cannot be used."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag}: {str(path)!r} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag}: cannot create the folder {str(path)!r} ({exc.strerror})")
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{flag}: the folder {str(path)!r} is not writable")


def cmd_lesson(args) -> int:
    from kerasattn.course import options, scripts

    path = scripts.lesson_path(args.number)
    options.settings_from_args(args, options.lesson_out_dir(args.number))  # checks values
    return scripts.run_lesson_file(path, options.run_options_argv(args))


def cmd_train(args) -> int:
    from kerasattn.course import options
    from kerasattn.course.printing import format_table
    from kerasattn.course.train import train_and_save

    options.check_model_name(args.model)
    if args.beam < 1:
        raise UsageError(f"--beam must be >= 1; received {args.beam}")
    settings = options.settings_from_args(args, options.checkpoint_dir(args.model))
    out = settings.out
    _check_writable_dir(out, "--out")  # before training, not after minutes of it
    result = train_and_save(args.model, settings, beam=args.beam)
    scored = [(args.model, result)]
    if "beam" in result:
        scored.append((f"{args.model} + beam {args.beam}", result["beam"]))
    print(format_table(
        ["model", "backend", "epochs", "train time (s)", "tokens/s", "test BLEU",
         "exact match"],
        [[label, result["backend"], result["epochs"], f"{result['train_seconds']:.1f}",
          f"{result['tokens_per_second']:,.0f}", f"{r['bleu']:.1f}", f"{r['exact_match']:.1%}"]
         for label, r in scored]))
    for label, r in scored:
        if "bleu_multi" in r:
            print(f"\n{label}: {result['test_sources']} distinct test sources: BLEU "
                  f"{r['bleu_single']:.1f} against one reference, {r['bleu_multi']:.1f} "
                  f"against all of each source's references (sacrebleu, tokenize="
                  f"{result['bleu_tokenize']})")
    print(f"\ncheckpoint saved in {out}/ (model.keras, src_vocab.json, tgt_vocab.json, "
          f"meta.json; {result['tokenizer']} tokens)")
    print(f"try: kerasattn translate {out} \"{result['example_source']}\" --attention")
    return 0


def cmd_translate(args) -> int:
    from kerasattn.course.translate import translate_command

    if args.beam < 1:
        raise UsageError(f"--beam must be >= 1; received {args.beam}")
    if (args.sentence is None) == (args.input is None):
        raise UsageError("translate: give either a quoted sentence or --input FILE; received "
                         + ("both" if args.input else "neither"))
    if args.output and args.input is None:
        raise UsageError("--output needs --input FILE")
    if args.input is not None and args.attention:
        raise UsageError("--attention works on one sentence, not with --input")
    if args.sentence is not None and not args.sentence.strip():
        raise UsageError("translate: expected a non-empty sentence; received an empty string")
    if args.plot and not args.attention:
        raise UsageError("--plot needs --attention (it names the attention heatmap)")
    if args.plot and Path(args.plot).suffix.lower() != ".png":
        raise UsageError(f"--plot must name a .png file; received {args.plot!r}")
    return translate_command(args.checkpoint, sentence=args.sentence, input_path=args.input,
                             output_path=args.output, beam=args.beam,
                             attention=args.attention, plot=args.plot)


def cmd_explore(args) -> int:
    from kerasattn.course.explore import explore_command

    if args.beam < 1:
        raise UsageError(f"--beam must be >= 1; received {args.beam}")
    if not args.sentence.strip():
        raise UsageError("explore: expected a non-empty sentence; received an empty string")
    return explore_command(args.checkpoint, args.sentence, beam=args.beam, out=args.out)


def cmd_data(args) -> int:
    from kerasattn.course.data import fetch_command

    return fetch_command(args.lang, url=args.url, cache_dir=args.cache_dir)


def cmd_backends(args) -> int:
    from kerasattn.course.backends_demo import backends_demo

    wanted = (args.backend_list.split(",") if args.backend_list else installed_backends())
    wanted = [b.strip() for b in wanted if b.strip()]
    for b in wanted:
        if b not in BACKENDS:
            raise UsageError(f"--backends: {b!r} is not one of {', '.join(BACKENDS)} "
                             f"(received {args.backend_list!r})")
        check_backend(b)
    if not wanted:
        raise UsageError("no Keras backend is installed: pip install 'kerasattn[torch]' (or "
                       "[jax], [tensorflow])")
    return backends_demo(wanted, model=args.model, checkpoint=args.checkpoint,
                         epochs=args.epochs, quick=args.quick,
                         out=Path(args.out) if args.out else None)


def cmd_backend_worker(args) -> int:
    from kerasattn.course.backends_demo import backend_worker

    return backend_worker(args.checkpoint, args.request, args.result)


def cmd_notebook(args) -> int:
    from kerasattn.course import notebooks

    if args.all == bool(args.numbers):
        raise UsageError(f"give lesson number(s) or --all (not both); received "
                         f"{args.numbers or 'none'}{' and --all' if args.all else ''}")
    numbers = notebooks.all_lesson_numbers() if args.all else args.numbers
    # the set-up cell selects a backend only when --backend is given ($KERAS_BACKEND is not)
    written = notebooks.write_notebooks(numbers, Path(args.out) if args.out else None,
                                        backend=args.backend,
                                        options=" ".join(filter(None, [
                                            "--quick" if args.quick else "", args.options])),
                                        pip_spec=args.pip)
    for path in written:
        print(path)
    return 0


def cmd_lab(args) -> int:
    from kerasattn.course.lab import lab_command

    return lab_command(args)


def cmd_hint(args) -> int:
    from kerasattn.grader.hints import hint_text

    print(hint_text(args.exercise, args.number))
    return 0


def cmd_grade(grade_args: list[str]) -> int:
    try:
        from kerasattn.grader import main as grader_main
    except ImportError as exc:
        raise UsageError(f"the autograder is not available in this installation ({exc})")
    return int(grader_main(grade_args) or 0)


_COMMANDS = {"lesson": cmd_lesson, "train": cmd_train, "translate": cmd_translate,
             "backends": cmd_backends, "notebook": cmd_notebook, "data": cmd_data,
             "hint": cmd_hint, "explore": cmd_explore, "lab": cmd_lab,
             "_backend_worker": cmd_backend_worker}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``kerasattn`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    head, grade_args = _split_grade(argv)
    try:
        if grade_args is not None:
            # the grader chooses its own backends (it runs every check in a child process)
            pre = argparse.ArgumentParser(prog="kerasattn", add_help=False)
            add_backend_option(pre)
            known, extra = pre.parse_known_args(head)
            if extra:
                raise UsageError(f"unexpected arguments before `grade`: {' '.join(extra)}")
            if known.backend and "--backend" not in grade_args:
                grade_args = ["--backend", known.backend, *grade_args]
            return cmd_grade(grade_args)
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command in ("notebook", "hint"):  # never import keras: a name is enough
            if args.backend is not None and args.backend not in BACKENDS:
                raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}; received "
                                 f"{args.backend!r}")
            return _COMMANDS[args.command](args)
        if _needs_child(args.backend):
            return _rerun_in_child(argv, args.backend)
        return _COMMANDS[args.command](args)
    except UsageError as exc:
        print(f"kerasattn: error: {exc}", file=sys.stderr)
        if os.environ.get("KERASATTN_DEBUG"):
            raise
        return 2
    except KeyboardInterrupt:
        print("kerasattn: interrupted", file=sys.stderr)
        return 130
    except (OSError, ValueError) as exc:
        # the kit's own errors are written for people, and an OSError names its file: show
        # them without a traceback
        print(f"kerasattn: error: {exc}", file=sys.stderr)
        if os.environ.get("KERASATTN_DEBUG"):
            raise
        return 2
