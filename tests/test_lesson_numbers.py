"""Every number the lessons and their docs state about the kit is computed from the kit.

The prose of the lessons (the ``# %% [markdown]`` cells of ``lessons/0N_*.py``),
``docs/lessons.md`` and ``README.md`` states facts about the kit in numbers: the training
budget, the corpus split, the models' sizes, the training settings, the measured BLEU,
epochs, tokens/s and wall times. Two tables keep those numbers honest:

- ``CLAIMS``: one entry per statement, ``(file, what, phrase, truth)``. ``phrase`` is the
  text as the prose writes it, each stated number replaced by ``{}`` (a numeral, a range
  ``a-b``, a percentage) or ``{w}`` (words: "three", "a minute and a half"); ``truth()``
  computes the same numbers from the kit and formats them the way the prose does. Every
  occurrence of the phrase must state the computed numbers. The sources: the options of
  ``kerasattn.course.options`` (budget, split, quick settings), the models' config defaults
  (``kerasattn.models.registry.get_config_class``), ``kerasattn.training.
  recommended_training`` and ``train``'s defaults, the built-in corpus, the lessons' own code
  cells (toy tensors, beam sizes), and for measured figures the generated results table of
  docs/lessons.md (``tools/results_table.py``) and the records it is generated from
  (``docs/measured/lessons/``, BLEU by source length).
- ``ALLOWED``: numbers the prose states that are not facts about the kit, each with its
  reason: the papers' figures, worked toy examples, quiz arithmetic (recomputed by
  ``tests/test_lesson_content.py``), values a reader is invited to try, and one-off
  measurements that no record keeps.

The coverage guard scans the prose for numbers next to kit-fact words (minutes, seconds,
epochs, pairs, sentences, words, tokens, units, dimensions, heads, layers, blocks, batches,
learning rate, warm-up, dropout, smoothing, BLEU, %, parameters, runs, cores) and fails
on any that neither a claim nor an allowlist entry covers, so a new number cannot slip in
unchecked. References to a lesson, step, exercise, question, table, figure or year are
not kit facts and are skipped.

Rounding rules, as the prose uses them:

- a training time in words (:func:`about_minutes`): to the nearest half minute below two
  minutes ("a minute and a half"), to the nearest minute from two minutes on ("four
  minutes"); a per-run budget in digits keeps one decimal ("1.4 minutes");
- a measured range in whole numbers (:func:`whole_range`): the smallest and the largest
  value, each rounded half up to an integer ("BLEU 92-99"); with one decimal, the values as
  the table prints them ("8.9-13.2");
- a total time in minutes (the lesson runs of ``make results``, each taking the mean
  measured lesson wall time): to the nearest ten minutes.

Where the prose describes the measured runs (their budget, lesson 00's runs in them), the
truth is the records' settings, not the current defaults. Lesson 00's claims and allowlist
are in their own block at the end of the tables. ``NOT_COVERED`` lists the lessons without
a claims table; every other lesson file must be in ``FILES``.
"""
from __future__ import annotations

import argparse
import inspect
import json
import re
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path
from typing import Callable, NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEASURED = ROOT / "docs" / "measured" / "lessons"
DOCS = "docs/lessons.md"
README = "README.md"


def lesson_file(number: int) -> str:
    (path,) = (ROOT / "lessons").glob(f"{number:02d}_*.py")
    return str(path.relative_to(ROOT))


L0, L1, L2, L3, L4, L5, L6 = (lesson_file(n) for n in range(7))
FILES = (L0, L1, L2, L3, L4, L5, L6, DOCS, README)
NOT_COVERED: dict[str, str] = {}


# ------------------------------------------------------------------------------ the texts
def _cells(path: Path, markdown: bool) -> list[str]:
    """The markdown cells (comment markers removed) or the code cells of a lesson."""
    cells, current = [], None
    for line in path.read_text().splitlines():
        if line.startswith("# %%"):
            current = [] if ("[markdown]" in line) == markdown else None
            if current is not None:
                cells.append(current)
        elif current is not None:
            current.append(re.sub(r"^# ?", "", line) if markdown else line)
    return ["\n".join(c) for c in cells]


@cache
def prose_lines(file: str) -> str:
    """The prose of ``file``, line breaks kept: a lesson's markdown cells; a Markdown
    document without its fenced code, comments and generated results table."""
    path = ROOT / file
    if file.endswith(".py"):
        return _without_list_numbers("\n\n".join(_cells(path, markdown=True)))
    text = path.read_text()
    text = re.sub(r"<!-- results-table: begin.*?<!-- results-table: end -->", "\n\n", text,
                  flags=re.DOTALL)
    text = re.sub(r"^```.*?^```", "\n\n", text, flags=re.DOTALL | re.MULTILINE)
    return _without_list_numbers(re.sub(r"<!--.*?-->", " ", text, flags=re.DOTALL))


def _without_list_numbers(text: str) -> str:
    """``text`` with the markers of numbered lists ("1. ", "2. ") replaced by "- ": a line
    that starts with a number is a list item after a blank line or another item, else the
    number ends a sentence of the line before."""
    lines = text.split("\n")
    item = re.compile(r"^(\s*)\d+\. ")
    for i, line in enumerate(lines):
        if item.match(line) and (i == 0 or not lines[i - 1].strip()
                                 or item.match(lines[i - 1]) or lines[i - 1].startswith("- ")
                                 or (lines[i - 1].startswith(" ") and i > 1)):
            lines[i] = item.sub(r"\1- ", line)
    return "\n".join(lines)


@cache
def prose(file: str) -> str:
    """The prose of ``file`` on one line (a phrase may span a line break)."""
    return " ".join(prose_lines(file).split())


@cache
def raw_text(file: str) -> str:
    """The whole of ``file`` on one line."""
    return " ".join((ROOT / file).read_text().split())


@cache
def code(number: int) -> str:
    """The code cells of lesson ``number``."""
    return "\n".join(_cells(ROOT / lesson_file(number), markdown=False))


def in_code(number: int, pattern: str, group: int = 1) -> str:
    """Group ``group`` of ``pattern`` in lesson ``number``'s code."""
    m = re.search(pattern, code(number))
    assert m, f"lesson {number:02d}: its code has no {pattern!r}"
    return m.group(group)


def lesson_budget(number: int) -> tuple[int, float]:
    """(models, training minutes) of lesson ``number``: the ``n_models`` and
    ``lesson_minutes`` of its ``parse_lesson_args`` call (defaults 1 and
    ``DEFAULT_MINUTES``); ``n_models`` must be the number of training calls in its code."""
    call = re.search(r"parse_lesson_args\(([^()]*)\)", code(number)).group(1)
    m = re.search(r"n_models=(\d+)", call)
    n_models = int(m.group(1)) if m else 1
    m = re.search(r"lesson_minutes=([\d.]+)", call)
    minutes = float(m.group(1)) if m else options().DEFAULT_MINUTES
    calls = len(re.findall(r"\blesson\.train\(|\btrain_model\(", code(number)))
    assert n_models == calls, (f"lesson {number:02d} splits its budget over n_models="
                               f"{n_models} but trains {calls} models")
    return n_models, minutes


def lesson_runs(number: int) -> int:
    return lesson_budget(number)[0]


def per_model_minutes(number: int) -> float:
    n_models, minutes = lesson_budget(number)
    return minutes / n_models


# ------------------------------------------------------------------------- kit sources
def options():
    from kerasattn.course import options as o

    return o


def settings(*argv: str):
    """The :class:`Settings` a lesson gets from the command line ``argv``."""
    o = options()
    parser = argparse.ArgumentParser()
    o.add_run_options(parser, out_default="out", minutes_default="m", backend=False)
    return o.settings_from_args(parser.parse_args(list(argv)), Path("out"))


def config(name: str):
    from kerasattn.models.registry import get_config_class

    return get_config_class(name)()


def recommended(name: str) -> dict:
    from kerasattn.training import recommended_training

    return recommended_training(name)


def batch_size(name: str) -> int:
    return recommended(name).get("batch_size", settings().batch_size)


def train_default(name: str):
    from kerasattn.training import train

    return inspect.signature(train).parameters[name].default


def model_names() -> tuple[str, ...]:
    from kerasattn._env import MODEL_NAMES

    return tuple(MODEL_NAMES)


@cache
def corpus():
    from kerasattn.data.synthetic import builtin_corpus

    return builtin_corpus()


def source_lengths(split: str) -> list[int]:
    return [len(src.split()) for src, _ in getattr(corpus(), split)]


def longest_training_source() -> int:
    return max(source_lengths("train"))


def n_lessons() -> int:
    return len(list((ROOT / "lessons").glob("[0-9][0-9]_*.py")))


def n_exercises() -> int:
    return len(list((ROOT / "exercises").glob("[0-9][0-9]_*.py")))


@cache
def results_table() -> tuple[dict, ...]:
    """The rows of the generated results table of docs/lessons.md."""
    text = (ROOT / DOCS).read_text()
    block = re.search(r"<!-- results-table: begin.*?<!-- results-table: end -->", text,
                      flags=re.DOTALL).group()
    rows = []
    for line in block.splitlines():
        m = re.fullmatch(r"\| `([^`]+)` \| (\d+) \| (\w+)\S*(?: \(\w\))? \| ([\d.]+) \| "
                         r"([\d.]+)% \| "
                         r"(\d+) \| (\d+) \| ([\d,]+) \| (\d+) \|", line.strip())
        if m:
            model, lesson, backend, bleu, exact, epochs, secs, tps, wall = m.groups()
            rows.append(dict(model=model, lesson=int(lesson), backend=backend, bleu=bleu,
                             epochs=int(epochs), tokens_per_second=int(tps.replace(",", "")),
                             wall=int(wall)))
    assert rows, "docs/lessons.md: no rows in the generated results table"
    return tuple(rows)


def table(model: str, backend: str) -> dict:
    (row,) = [r for r in results_table() if r["model"] == model and r["backend"] == backend]
    return row


def backends() -> tuple[str, ...]:
    from kerasattn._env import BACKENDS

    return tuple(BACKENDS)


def lesson_walls() -> dict:
    """Wall seconds of every lesson run of the table: (lesson, backend) -> seconds."""
    return {(r["lesson"], r["backend"]): r["wall"] for r in results_table()}


@cache
def lesson_records() -> tuple[dict, ...]:
    """The records of docs/measured/lessons that the results table is made of: those with
    one of the seven models (as in tools/results_table.py)."""
    found = [json.loads(p.read_text()) for p in sorted(MEASURED.rglob("results.json"))]
    found = tuple(r for r in found if set(r["models"]) & set(model_names()))
    assert found, f"no records in {MEASURED}"
    return found


@cache
def records() -> dict:
    """(model, backend) -> the record of one of the seven models (BLEU by length)."""
    return {(name, m.get("backend") or rec["backend"]): dict(m, machine=rec["machine"])
            for rec in lesson_records() for name, m in rec["models"].items()
            if name in model_names()}


@cache
def measured_settings() -> dict:
    """The settings the records of the results table were measured with."""
    found = {json.dumps(r["settings"], sort_keys=True) for r in lesson_records()}
    return json.loads(unique(found, "the measured runs' settings"))


def measured_models(lesson: int) -> int:
    """Models (training runs) the records of lesson ``lesson`` hold, per backend."""
    return unique((len(r["models"]) for r in lesson_records() if r["lesson"] == lesson),
                  f"models of lesson {lesson:02d}'s records")


def measured_lessons() -> str:
    lessons = sorted({r["lesson"] for r in results_table()})
    assert lessons == list(range(lessons[0], lessons[-1] + 1))
    return f"{lessons[0]:02d}-{lessons[-1]:02d}"


def make_results_runs() -> int:
    """Lesson runs of `make results`: its loop over backends and lessons (Makefile)."""
    text = (ROOT / "Makefile").read_text()
    loops = re.search(r"^results:.*?for b in ([\w ]+); do for n in ([\d ]+); do", text,
                      flags=re.DOTALL | re.MULTILINE)
    return len(loops.group(1).split()) * len(loops.group(2).split())


def by_length(model: str, backend: str) -> list[dict]:
    return records()[model, backend]["by_length"]


def cores() -> int:
    (machine,) = {r["machine"] for r in records().values()}
    return int(re.search(r"(\d+)-core", machine).group(1))


@cache
def shift_table() -> dict:
    """Lesson 05's table: row label -> (BLEU without the shift, BLEU with it), each a
    tuple of strings (TensorFlow, JAX, torch)."""
    rows = {}
    for line in prose_lines(L5).splitlines():
        m = re.fullmatch(r"\| ([^|]+) \| ([\d. /]+) \| ([\d. /]+) \|", line.strip())
        if m:
            rows[m.group(1)] = tuple(tuple(c.split(" / ")) for c in m.group(2, 3))
    assert len(rows) == 5, f"lesson 05: the shift table has {len(rows)} rows"
    return rows


def shift_rows(*labels: str, column: int) -> list[float]:
    """Values of lesson 05's shift table for the rows whose label starts with a label."""
    return [float(v) for label, cols in shift_table().items()
            if label.startswith(labels) for v in cols[column]]


# --------------------------------------------------------------------------- formatting
_SPELLED = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen").split()
_TENS = {20: "twenty", 30: "thirty", 40: "forty", 50: "fifty"}
_ORDINALS = ("zeroth first second third fourth fifth sixth seventh eighth ninth "
             "tenth").split()


def spelled(n: int) -> str:
    """3 -> "three", 26 -> "twenty-six"."""
    if n < 20:
        return _SPELLED[n]
    tens, ones = divmod(n, 10)
    return _TENS[10 * tens] + (f"-{_SPELLED[ones]}" if ones else "")


def ordinal(n: int) -> str:
    return _ORDINALS[n]


def half_up(x, digits: int = 0) -> Decimal:
    return Decimal(str(x)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)


def whole(x) -> str:
    return str(half_up(x))


def whole_range(values) -> str:
    """Smallest and largest value, each rounded half up to an integer: "92-99"."""
    return f"{whole(min(values))}-{whole(max(values))}"


def decimal_range(values) -> str:
    """Smallest and largest value with one decimal, as a table prints them: "8.9-13.2"."""
    return f"{min(values):.1f}-{max(values):.1f}"


def about_minutes(minutes: float) -> str:
    """A training time in words: "a minute and a half", "four minutes"."""
    if minutes >= 2:
        return f"{spelled(int(half_up(minutes)))} minutes"
    halves = int(half_up(2 * minutes))
    whole_minutes, half = divmod(halves, 2)
    if whole_minutes == 0:
        return "half a minute"
    return ("a minute" if whole_minutes == 1 else f"{spelled(whole_minutes)} minutes") + (
        " and a half" if half else "")


def few_hundred(n: int) -> str:
    return "a few hundred" if 200 <= n < 1000 else f"{n:,}"


def g(x) -> str:
    """0.1 -> "0.1", 1.0 -> "1", 4.25 -> "4.25"."""
    return f"{x:g}"


def sci(x: float) -> str:
    """3e-3 -> "3e-3"."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def thousands(n: int) -> str:
    return f"{n:,}"


def unique(values, what: str):
    """The one value all ``values`` share (the prose states one number for all)."""
    found = set(values)
    assert len(found) == 1, f"{what}: the prose states one value, the kit has {sorted(found)}"
    return found.pop()


# ------------------------------------------------------------------------------ claims
class Claim(NamedTuple):
    file: str
    what: str
    phrase: str
    truth: Callable[[], object]
    raw: bool = False   # search the whole file (a comment in a code block), not the prose

    @property
    def regex(self) -> str:
        return phrase_regex(self.phrase)


_NUMBER_SLOT = r"(-?\d[\d,]*(?:\.\d+)?(?:e-\d+)?(?:-\d[\d,]*(?:\.\d+)?)?%?)"
_WORDS_SLOT = r"(?<![A-Za-z])([A-Za-z]+(?:[ -][a-z]+)*?)"


def phrase_regex(phrase: str) -> str:
    """``{}``: a numeral or range; ``{w}``: words; the rest literally."""
    parts = re.split(r"(\{\}|\{w\})", phrase)
    return "".join(_NUMBER_SLOT if p == "{}" else _WORDS_SLOT if p == "{w}" else re.escape(p)
                   for p in parts)


def C(file: str, what: str, phrase: str, truth: Callable[[], object],
      raw: bool = False) -> Claim:
    return Claim(file, what, phrase, truth, raw)


TRANSFORMER_DECODERS = ("transformer_decoder_on_gru", "transformer")


def _bucket_labels() -> tuple[str, ...]:
    """The by-length buckets as the prose names them, the last one ending at the longest
    test source: ("1-10", "11-20", "21-30", "31-40")."""
    buckets = unique((tuple((b["lo"], b["hi"]) for b in m["by_length"])
                      for m in records().values()), "the BLEU-by-length buckets")
    return tuple(f"{lo}-{hi if hi is not None else max(source_lengths('test'))}"
                 for lo, hi in buckets)


def _bucket_counts() -> tuple[str, ...]:
    counts = unique((tuple(b["n"] for b in m["by_length"]) for m in records().values()),
                    "the bucket sizes")
    lengths = source_lengths("test")
    for (lo, hi), n in zip([tuple(map(int, b.split("-"))) for b in _bucket_labels()], counts):
        assert n == sum(lo <= s <= hi for s in lengths), "records and corpus disagree"
    return tuple(str(n) for n in counts)


def _by_length_row(model: str) -> tuple[str, ...]:
    """A row of docs/lessons.md's BLEU-by-length table: bucket by bucket, TF / JAX / torch."""
    cells = []
    for i in range(len(_bucket_labels())):
        cells += [f"{by_length(model, b)[i]['bleu']:.1f}" for b in backends()]
    return tuple(cells)


def _bucket_bleu(models, buckets) -> list[float]:
    labels = _bucket_labels()
    return [b["bleu"] for m in models for be in backends()
            for b, label in zip(by_length(m, be), labels) if label in buckets]


def _attention_models() -> list[str]:
    return sorted({r["model"] for r in results_table()} - {"seq2seq"})


def _mean_wall() -> float:
    return sum(lesson_walls().values()) / len(lesson_walls())


def _bleu(models) -> list[float]:
    return [float(r["bleu"]) for r in results_table() if r["model"] in models]


def _tokens_per_second_order() -> str:
    """ "fewer" when the Transformer trains at fewer target tokens/s than bahdanau on
    every backend of the table."""
    fewer = all(table("transformer", b)["tokens_per_second"] <
                table("bahdanau", b)["tokens_per_second"] for b in backends())
    more = all(table("transformer", b)["tokens_per_second"] >
               table("bahdanau", b)["tokens_per_second"] for b in backends())
    return "fewer" if fewer else "more" if more else "sometimes fewer"


def _quick_model() -> tuple[str, str, str]:
    """Width, blocks and heads of the quick models (``QUICK_HPARAMS``)."""
    q = options().QUICK_HPARAMS
    width = unique((q[k] for k in ("embed_dim", "units", "attention_units", "d_model")),
                   "quick width")
    blocks = unique((q[k] for k in ("num_encoder_blocks", "num_encoder_layers",
                                    "num_decoder_layers")), "quick blocks")
    return str(width), str(blocks), str(q["num_heads"])


def _output_cap() -> tuple[str, str, str]:
    """The default output cap, ``1.5 S + 5`` rounded up to a multiple of 16, checked
    against :func:`kerasattn.inference.translator.output_cap` for every source length."""
    from kerasattn.inference.translator import output_cap

    factor, extra, multiple = 1.5, 5, 16
    for s in range(1, 200):
        assert output_cap(s) == -(-(int(factor * s) + extra) // multiple) * multiple, s
    return g(factor), str(extra), str(multiple)


def _gnmt_constants() -> tuple[str, str, str]:
    """``((c + L) / (c + 1)) ^ alpha`` of the kit's length penalty: c read off the function
    (with alpha = 1, lp(2) / lp(1) = (c + 2) / (c + 1)), alpha its default."""
    from kerasattn.decoding import length_penalty

    r = float(length_penalty(2, 1.0, "gnmt") / length_penalty(1, 1.0, "gnmt"))
    c = round((2 - r) / (r - 1))
    return str(c), str(c + 1), g(_beam_alpha())


def _beam_alpha() -> float:
    from kerasattn.decoding import beam_search

    return inspect.signature(beam_search).parameters["alpha"].default


def _fit_comment_minutes() -> str:
    """The budget of the runs the comment above ``RECOMMENDED_TRAINING`` records."""
    text = " ".join((ROOT / "kerasattn/training/fit.py").read_text().split())
    m = re.search(r"with a ([\d.]+)-minute budget, `kerasattn train transformer_decoder_on_gru",
                  text.replace("# ", ""))
    assert m, "fit.py: the comment with the learning rates' budget is gone"
    return m.group(1)


def _fit_comment_bleu(part: int) -> str:
    """The BLEU of `transformer_decoder_on_gru` at its recommended peak (part 1) and at a
    lower peak (part 2; part 3: that peak), as the comment above ``RECOMMENDED_TRAINING`` in
    fit.py records them."""
    text = " ".join((ROOT / "kerasattn/training/fit.py").read_text().split())
    m = re.search(r"scores test BLEU ([\d. /]+?) \(TF / JAX / torch\), ([\d. /]+?) with a "
                  r"peak of ([\de.-]+) ", text.replace("# ", ""))
    assert m, "fit.py: the comment with the measured BLEU of the learning rates is gone"
    return m.group(part)


def _fit_comment_transformer() -> tuple[str, str, str]:
    """(epochs, BLEU at the recommended peak, BLEU at the lower peak) of the `transformer`,
    as the comment above ``RECOMMENDED_TRAINING`` records them."""
    text = " ".join((ROOT / "kerasattn/training/fit.py").read_text().replace("# ", "").split())
    m = re.search(r"the `transformer` after (\d+) epochs on JAX, ([\d.]+) against ([\d.]+)",
                  text)
    assert m, "fit.py: the comment with the measured BLEU of the transformer's peak is gone"
    return m.groups()


def _minutes_zero_means_no_limit() -> str:
    assert settings("--minutes", "0").minutes is None
    return "0"


def _shift_gain() -> str:
    """BLEU gained on the 31-40-word sentences, per backend, as a whole-number range."""
    gains = [w - wo for wo, w in zip(shift_rows("31-40", column=0),
                                     shift_rows("31-40", column=1))]
    return whole_range(gains)


def _shift_cost(backends_: tuple[int, ...]) -> list[float]:
    """BLEU lost by the sentences up to 30 words with the shift, on the backends given
    (indices into TF / JAX / torch)."""
    short = [label for label in shift_table() if label.split()[0] in _bucket_labels()[:-1]]
    cost = []
    for label in short:
        without, with_ = (tuple(map(float, c)) for c in shift_table()[label])
        cost += [without[i] - with_[i] for i in backends_]
    return cost


def _less_than_one(backends_: tuple[int, ...]) -> str:
    return "1" if max(abs(c) for c in _shift_cost(backends_)) < 1 else "more than 1"


def _penalty_preference() -> tuple[str, str, str]:
    """Which of lesson 04's two hypotheses each ranking prefers (raw, the kit's, power)."""
    from kerasattn.decoding import length_penalty

    hyps = {name: (int(n), float(logp)) for name, n, logp in re.findall(
        r'"(short|long) \(L = \d+, log P = [-\d.]+\)": \((\d+), ([-\d.]+)\)', code(4))}
    assert set(hyps) == {"short", "long"}

    def best(score):
        return max(hyps, key=lambda k: score(*hyps[k]))

    alpha = float(in_code(4, r"length_penalty\(n, ([\d.]+), 'gnmt'\)"))
    return (best(lambda n, lp: lp),
            best(lambda n, lp: lp / float(length_penalty(n, alpha, "gnmt"))),
            best(lambda n, lp: lp / float(length_penalty(n, alpha, "power"))))


def minutes_each(number: int) -> str:
    """The training minutes of each of lesson ``number``'s models, one decimal at most."""
    return g(round(per_model_minutes(number), 1))


CLAIMS: list[Claim] = [
    # ----------------------------------------------------------------------- lesson 01
    C(L1, "step-1 dropout", "its dropout ({}) acts on the embeddings",
      lambda: g(config("bahdanau_multihead").dropout)),
    C(L1, "step-1 attention dropout", "is built with attention dropout {};",
      lambda: g(_step1_attention_dropout())),
    C(L1, "toy tensor of the head split",
      "A batch of {} sequences of {} positions with $d_{model} = {}$, split into $h = {}$ "
      "heads of $d_h = {}$",
      lambda: (*(in_code(1, r"B, T, d_model, h = (\d+), (\d+), (\d+), (\d+)", i)
                 for i in range(1, 5)),
               str(int(in_code(1, r"d_model, h = \d+, \d+, (\d+)")) //
                   int(in_code(1, r"d_model, h = \d+, \d+, \d+, (\d+)"))))),
    C(L1, "quiz 1: step-1 d_model and heads",
      "The step-1 model has $d_{model} = {}$ and $h = {}$ heads.",
      lambda: (str(config("bahdanau_multihead").d_model),
               str(config("bahdanau_multihead").num_heads))),
    C(L1, "quiz 1: the kit's batch size", "A batch of {} sentences of 20 source words",
      lambda: str(batch_size("bahdanau_multihead"))),
    C(L1, "quiz 1 answer: d_h", "$d_h = {} / {} = {}$;",
      lambda: (str(config("bahdanau_multihead").d_model),
               str(config("bahdanau_multihead").num_heads), str(_d_h()))),
    C(L1, "quiz 2: d_h", "for $d_h = {}$, before and after the scaling?", lambda: str(_d_h())),
    C(L1, "quiz 1: keys of width d_model", "gives projected keys of shape (64, 20, {})",
      lambda: str(config("bahdanau_multihead").d_model)),
    C(L1, "quiz 3: the attention box's sizes",
      "Its query is the decoder state $s_{t-1}$ ({} numbers), its keys and values are the "
      "encoder annotations ({} numbers), $d_{model} = {}$",
      lambda: (str(config("bahdanau_multihead").units),
               str(config("bahdanau_multihead").d_model),
               str(config("bahdanau_multihead").d_model))),
    C(L1, "quiz 4: step-1 dropouts",
      "The step-1 model here trains with attention dropout {}: its dropout of {} acts",
      lambda: (g(_step1_attention_dropout()), g(config("bahdanau_multihead").dropout))),
    C(L1, "quiz 5: heads", "One per head, {} here.",
      lambda: str(config("bahdanau_multihead").num_heads)),
    # ----------------------------------------------------------------------- lesson 02
    C(L2, "padding demo sizes",
      "the same {} real positions, once padded to {} and once padded to {}.",
      lambda: (in_code(2, r"normal\(size=\(1, (\d+), 8\)\)"),
               str(int(in_code(2, r"normal\(size=\(1, (\d+), 8\)\)")) +
                   int(in_code(2, r"short = .*?np\.zeros\(\(1, (\d+), 8\)"))),
               str(int(in_code(2, r"normal\(size=\(1, (\d+), 8\)\)")) +
                   int(in_code(2, r"long = .*?np\.zeros\(\(1, (\d+), 8\)"))))),
    C(L2, "long-distance link of the demo sentence",
      '"girls", {w} positions back ({w} words lie between them)',
      lambda: (spelled(_distance("girls", "are")), spelled(_distance("girls", "are") - 1))),
    C(L2, "quiz 2: step-2 heads", "does the step-2 encoder block compute ({} heads)?",
      lambda: str(config("encoder_self_attention").num_heads)),
    C(L2, "quiz 2: weights of all heads", "weights per head, {} × 400",
      lambda: str(config("encoder_self_attention").num_heads)),
    C(L2, "quiz 6: step-2 block sizes",
      "($d_{model} = {}$, {} heads, $d_{ff} = {}$, biases everywhere, {w} LayerNorms)",
      lambda: (str(config("encoder_self_attention").d_model),
               str(config("encoder_self_attention").num_heads),
               str(config("encoder_self_attention").d_ff), spelled(_layer_norms()))),
    C(L2, "quiz 6 answer: attention of 4 heads", "Attention: {} × (128 × 128 + 128)",
      lambda: str(config("encoder_self_attention").num_heads)),
    C(L2, "quiz 6 answer: two LayerNorms", "LayerNorms: {} × (128 + 128) = 512",
      lambda: str(_layer_norms())),
    # ----------------------------------------------------------------------- lesson 03
    C(L3, "causal-mask demo size", "One attention layer over {} target positions.",
      lambda: in_code(3, r"normal\(size=\(1, (\d+), 8\)\)")),
    C(L3, "causal-mask demo: positions compared", "compare the outputs at the first {w} "
      "positions.", lambda: spelled(int(in_code(3, r"\)\)\[0, :(\d+)\]")))),
    # ----------------------------------------------------------------------- lesson 04
    C(L4, "position shift of the step-4 decoder", "starts at a random position $k \\le {}$",
      lambda: str(config("transformer_decoder_on_gru").max_position_shift)),
    C(L4, "toy cache: sentences and beams", "{w} sentences, beam size {}:",
      lambda: (spelled(len(re.search(r"np\.array\((\[\[.*?\]\])", code(4)).group(1)
                           .split("], ["))).capitalize(),
               in_code(4, r"IncrementalDecoder\.repeat\(state, (\d+)\)"))),
    C(L4, "toy cache: the parents picked",
      "for sentence 0 rows {}, {}, {} (two continuations of its beam 0, one of its beam 1), "
      "for sentence 1 rows {}, {}, {}",
      lambda: tuple(in_code(4, r"reorder\(stepped, np\.array\(\[([\d, ]+)\]\)\)")
                    .split(", "))),
    C(L4, "toy cache: the beams nobody picked", "a beam nobody picked (rows {} and {})",
      lambda: tuple(str(r) for r in sorted(
          set(range(6)) - {int(i) for i in in_code(
              4, r"reorder\(stepped, np\.array\(\[([\d, ]+)\]\)\)").split(", ")}))),
    C(L4, "the kit's length-penalty exponent", "$\\alpha = {}$ is the kit's default "
      "(`alpha={}, length_penalty_kind=\"gnmt\"`)", lambda: (g(_beam_alpha()),) * 2),
    C(L4, "the two hypotheses",
      "the scores of a {}-token hypothesis with log-probability {} against an {}-token one "
      "with {}:", lambda: _hypotheses()),
    C(L4, "which hypothesis each ranking prefers",
      "the raw log-probability and the kit's penalty prefer the {w} one, $L^{{}}$ the {w} "
      "one.", lambda: _preferences()),
    C(L4, "beam size of the decoding comparison", "beam search (beam {}, the length penalty",
      lambda: in_code(4, r"compare_decoding\(.*beam=(\d+)\)")),
    C(L4, "quiz 2: the figure's dimensions", "In the {}-dimensional figure above",
      lambda: in_code(4, r"positional_encoding\(\d+, (\d+)\)")),
    # ----------------------------------------------------------------------- lesson 05
    C(L5, "label smoothing of the notes", "*label smoothing* ($\\epsilon = {}$)",
      lambda: g(train_default("label_smoothing"))),
    C(L5, "training defaults of every model",
      "already trains with label smoothing {}, AdamW with weight decay {} and gradient "
      "clipping at norm {}",
      lambda: (g(train_default("label_smoothing")), sci(train_default("weight_decay")),
               g(train_default("clipnorm")))),
    C(L5, "the Transformer's dropout", "The Transformer's dropout is {}",
      lambda: g(config("transformer").dropout)),
    C(L5, "same dropout as the other models", "the same rate as the other models",
      lambda: _same_dropout()),
    C(L5, "warmup and batches of steps 4 and 5",
      "a learning-rate *warmup* ({} steps up to the peak rate, then decay as "
      "$1/\\sqrt{\\text{step}}$) with batches of {},",
      lambda: (str(unique((recommended(m)["warmup_steps"] for m in
                           ("transformer_decoder_on_gru", "transformer")), "warmup")),
               str(unique((batch_size(m) for m in ("transformer_decoder_on_gru",
                                                   "transformer")), "batch size")))),
    C(L5, "label-smoothing demo", "for a vocabulary of {} words when the right word is "
      "number {}.", lambda: (in_code(5, r"V, eps, right = (\d+), ([\d.]+), (\d+)"),
                             in_code(5, r"V, eps, right = (\d+), ([\d.]+), (\d+)", 3))),
    C(L5, "lengths of the long test sentences and of the training sentences",
      "The test split holds sentences of {} source words; no training sentence has more "
      "than {}.", lambda: (_bucket_labels()[-1], str(longest_training_source()))),
    C(L5, "the longest training target", "(training targets reach {} words",
      lambda: str(max(len(t.split()) for _, t in corpus().train))),
    C(L5, "BLEU without the shift",
      "it scored BLEU {} up to {} words and {} on {} words, on every backend",
      lambda: (whole_range(shift_rows("1-10", "11-20", "21-30", column=0)),
               str(longest_training_source()),
               whole_range(shift_rows("31-40", column=0)), _bucket_labels()[-1])),
    C(L5, "the shift's range", "($K$ = `max_position_shift` = {})",
      lambda: str(config("transformer").max_position_shift)),
    C(L5, "the long test sentence", "the positions of a {}-word test sentence are no longer",
      lambda: str(max(source_lengths("test")))),
    C(L5, "shift table: the long bucket",
      "| {} words ({}, longer than any training sentence) | 57.6 / 55.9 / 60.1 | {} / {} / "
      "{} |",
      lambda: (_bucket_labels()[-1], _bucket_counts()[-1],
               *(f"{by_length('transformer', b)[-1]['bleu']:.1f}" for b in backends()))),
    C(L5, "shift table: the whole test split",
      "| whole test split ({}) | 81.7 / 81.1 / 83.5 | {} / {} / {} |",
      lambda: (thousands(len(corpus().test)),
               *(table("transformer", b)["bleu"] for b in backends()))),
    *(C(L5, f"shift table: {label} words", f"| {{}} words | {without} | {{}} / {{}} / {{}} |",
        lambda i=i: (_bucket_labels()[i],
                     *(f"{by_length('transformer', b)[i]['bleu']:.1f}" for b in backends())))
      for i, (label, without) in enumerate((("1-10", "99.4 / 99.7 / 99.7"),
                                            ("11-20", "98.2 / 99.2 / 99.0"),
                                            ("21-30", "96.8 / 97.9 / 97.2")))),
    C(L5, "the shift's gain on long sentences", "The long sentences gain {} BLEU.",
      _shift_gain),
    C(L5, "the shift's cost on TF and torch",
      "The shorter buckets change by less than {} BLEU on TensorFlow and torch, which fit {} "
      "and {} epochs in the budget; on JAX, which fits {}, they lose {} BLEU",
      lambda: (_less_than_one((0, 2)), str(table("transformer", "tensorflow")["epochs"]),
               str(table("transformer", "torch")["epochs"]),
               str(table("transformer", "jax")["epochs"]),
               f"{min(_shift_cost((1,))):.1f}-{max(_shift_cost((1,))):.1f}")),
    C(L5, "the Transformer's budget in words", "trains for about {w} on a CPU.",
      lambda: about_minutes(per_model_minutes(5))),
    C(L5, "the corpus's vocabulary", "Our corpus has {w} words and one correct translation",
      lambda: unique((few_hundred(len(v)) for v in _vocabularies()), "vocabulary")),
    C(L5, "cores of the measuring machine", "On a {}-core CPU with models this small",
      lambda: str(cores())),
    C(L5, "tokens/s: Transformer against bahdanau",
      "the Transformer trains at {w} target tokens per second (batches of {}) than "
      "`bahdanau` (batches of {}).",
      lambda: (_tokens_per_second_order(), str(batch_size("transformer")),
               str(batch_size("bahdanau")))),
    C(L5, "all seven models", "All {w} models train on the same corpus",
      lambda: spelled(len(model_names()))),
    C(L5, "the lesson budget", "by default {} minutes of training.",
      lambda: g(options().DEFAULT_MINUTES)),
    C(L5, "lessons 01-05 train one model each", "give it all to their {w} model",
      lambda: unique((spelled(lesson_runs(n)) for n in range(1, 6)), "models of 01-05")),
    C(L5, "lesson 00's runs and their share",
      "lesson 00 splits it equally over its {w} (about {} minutes each",
      lambda: (spelled(lesson_runs(0)), minutes_each(0))),
    C(L5, "quiz 3: the kit's label smoothing", "`kerasattn.metrics.masked_sparse_ce(..., "
      "label_smoothing={})`", lambda: g(train_default("label_smoothing"))),
    C(L5, "quiz 4: training defaults",
      "Every model of the course trains with label smoothing {} and AdamW weight decay {}, "
      "and the Transformer's dropout is {} like the others'.",
      lambda: (g(train_default("label_smoothing")), sci(train_default("weight_decay")),
               g(config("transformer").dropout))),
    C(L5, "quiz 5: training length and shift",
      "Training sources have at most {} words and the random position shift draws "
      "$k \\in \\{0, \\dots, {}\\}$.",
      lambda: (str(longest_training_source()), str(config("transformer").max_position_shift))),
    C(L5, "quiz 5: the long test sentence", "Does a {}-word test sentence (decoded",
      lambda: str(max(source_lengths("test")))),
    C(L5, "quiz 5 answer: the long test sentence", "of a {}-word sentence have all been "
      "trained.", lambda: str(max(source_lengths("test")))),
    C(L5, "quiz 3: label smoothing and the demo's vocabulary", "**3.** With label smoothing "
      "$\\epsilon = {}$ and a vocabulary of {} words",
      lambda: (g(train_default("label_smoothing")),
               in_code(5, r"V, eps, right = (\d+), ([\d.]+), (\d+)"))),
    # --------------------------------------------------------------------- docs/lessons.md
    C(DOCS, "the lesson budget", "default {} minutes per lesson, split over its models",
      lambda: g(options().DEFAULT_MINUTES)),
    C(DOCS, "the lessons", "{w} lessons walk the road from the seq2seq bottleneck to the "
      "Transformer, and a {w} shows",
      lambda: (spelled(n_lessons() - 1).capitalize(), ordinal(n_lessons()))),
    C(DOCS, "all the notebooks (a code comment)", "# all {w} (also: make notebooks)",
      lambda: spelled(n_lessons()), raw=True),
    C(DOCS, "the length penalty of lesson 04", "(Wu et al.'s `(({}+L)/{})^{}` against",
      _gnmt_constants),
    C(DOCS, "label smoothing of every model", "every model of the kit trains with label "
      "smoothing {} and AdamW", lambda: g(train_default("label_smoothing"))),
    C(DOCS, "seven models in lesson 05", "(+ the table of all {w}, from lessons 00-04)",
      lambda: spelled(len(model_names()))),
    C(DOCS, "seven budgets", "(that would be {w} budgets)",
      lambda: spelled(len(model_names()))),
    C(DOCS, "kerasattn train's budget", "trains one of the {w} models as a one-model lesson "
      "does ({}-minute budget",
      lambda: (spelled(len(model_names())), g(settings().minutes))),
    C(DOCS, "--minutes 0", "`--minutes {}`: no time limit", _minutes_zero_means_no_limit),
    C(DOCS, "training pairs", "| training pairs | {} (spread over all lengths) | all {} of "
      "the built-in training split |",
      lambda: (str(options().QUICK_SIZES["train"]), thousands(len(corpus().train)))),
    C(DOCS, "validation and test", "| validation / test | {} / {} | {} validation pairs "
      "(spread over all lengths) / the whole test split: {} pairs, source lengths {}, {} of "
      "them longer than any training sentence |",
      lambda: (str(options().QUICK_SIZES["valid"]), str(options().QUICK_SIZES["test"]),
               str(options().DEFAULT_SIZES["valid"]), thousands(len(corpus().test)),
               f"{min(source_lengths('test'))}-{max(source_lengths('test'))}",
               str(sum(n > longest_training_source() for n in source_lengths("test"))))),
    C(DOCS, "quick models", "| models | tiny (width {}, {} block, {} heads) |", _quick_model),
    C(DOCS, "training settings",
      "| training | batch {}, Keras defaults of `kerasattn.training.train` | each model's "
      "recommended settings (`kerasattn.training.recommended_training`): AdamW, learning "
      "rate {} (GRU decoders without heads), {} (multi-head GRU decoders), a peak of {} with "
      "{} warmup steps and batch {} (Transformer decoders); batch {} otherwise; label "
      "smoothing {}, clipnorm {};",
      lambda: (str(settings("--quick").batch_size),
               sci(unique((recommended(m)["learning_rate"] for m in ("seq2seq", "bahdanau")),
                          "GRU decoders without heads")),
               sci(unique((recommended(m)["learning_rate"] for m in (
                   "bahdanau_multihead", "encoder_self_attention", "decoder_self_attention")),
                   "multi-head GRU decoders")),
               sci(unique((recommended(m)["learning_rate"] for m in TRANSFORMER_DECODERS),
                          "Transformer decoders' peak")),
               str(unique((recommended(m)["warmup_steps"] for m in TRANSFORMER_DECODERS),
                          "warmup")),
               str(unique((batch_size(m) for m in TRANSFORMER_DECODERS), "batch")),
               str(unique((batch_size(m) for m in model_names()
                           if m not in TRANSFORMER_DECODERS), "batch")),
               g(train_default("label_smoothing")), g(train_default("clipnorm")))),
    C(DOCS, "epochs", "| epochs | {} | up to {}, early stopping",
      lambda: (str(settings("--quick").epochs), str(settings().epochs))),
    C(DOCS, "budget", "| wall-clock budget | none | {} minutes of training per lesson, split "
      "over its models (lesson 00: {} x {} min;",
      lambda: (g(options().DEFAULT_MINUTES), str(lesson_runs(0)), minutes_each(0))),
    C(DOCS, "decoding", "| decoding | greedy, at most {} tokens | greedy, up to {} x source "
      "length + {} tokens, rounded up to a multiple of {},",
      lambda: (str(options().QUICK_MAX_DECODE), *_output_cap())),
    C(DOCS, "a lesson's wall time", "a lesson finishes in about {} minutes (training + "
      "scoring {} test sentences",
      lambda: (whole(max(lesson_walls().values()) / 60), thousands(len(corpus().test)))),
    C(DOCS, "measured settings", "Lessons {} (all {} training pairs; the settings and the "
      "machine's load of each row are listed under the table)",
      lambda: (measured_lessons(), thousands(len(corpus().train)))),
    C(DOCS, "the measuring machine", "one run per lesson and backend on a {}-core CPU "
      "without GPU.", lambda: str(cores())),
    C(DOCS, "decoded test sentences", "decoding all {} test sentences, figures.",
      lambda: thousands(len(corpus().test))),
    C(DOCS, "time of `make results`", "(about {} minutes for the {} runs)",
      lambda: (str(10 * int(half_up(make_results_runs() * _mean_wall() / 600))),
               str(make_results_runs()))),
    C(DOCS, "bucket sizes", "(test split: {} / {} / {} / {} sentences of {} / {} / {} / {} "
      "words;", lambda: (*_bucket_counts(), *_bucket_labels())),
    *(C(DOCS, f"BLEU by length: {m}", f"| `{m}` | tensorflow / jax / torch | "
        + " | ".join(["{} / {} / {}"] * 4) + " |", lambda m=m: _by_length_row(m))
      for m in ("seq2seq", "bahdanau", "bahdanau_multihead", "encoder_self_attention",
                "decoder_self_attention", "transformer_decoder_on_gru", "transformer")),
    C(DOCS, "seq2seq's BLEU", "`seq2seq` (no attention) reaches BLEU {}, falling from {} on "
      "{} words to {} beyond {} words",
      lambda: (decimal_range(_bleu(["seq2seq"])),
               whole_range(_bucket_bleu(["seq2seq"], _bucket_labels()[:1])),
               _bucket_labels()[0],
               whole_range(_bucket_bleu(["seq2seq"], _bucket_labels()[-1:])),
               str(longest_training_source()))),
    C(DOCS, "bahdanau's BLEU by length", "`bahdanau` stays at {} up to {} words and {} beyond",
      lambda: (whole_range(_bucket_bleu(["bahdanau"], _bucket_labels()[:-1])),
               str(longest_training_source()),
               whole_range(_bucket_bleu(["bahdanau"], _bucket_labels()[-1:])))),
    C(DOCS, "attention models' BLEU", "Every attention model reaches BLEU {} on every "
      "backend** within its lesson's budget.",
      lambda: (whole_range(_bleu(_attention_models())),)),
    C(DOCS, "lessons' wall time", "Each lesson ends in {} s of wall time;",
      lambda: f"{min(lesson_walls().values())}-{max(lesson_walls().values())}"),
    C(DOCS, "step 3 on long sentences", "({}+ words: {} BLEU against {} for the other "
      "attention models)",
      lambda: (str(longest_training_source() + 1),
               whole_range(_bucket_bleu(["decoder_self_attention"], _bucket_labels()[-1:])),
               whole_range(_bucket_bleu([m for m in model_names()[1:]
                                         if m != "decoder_self_attention"],
                                        _bucket_labels()[-1:])))),
    C(DOCS, "step 3's decoder GRU", "a decoder GRU of 128 units instead of {}:",
      lambda: str(config("decoder_self_attention").units)),
    C(DOCS, "the Transformer without and with the shift",
      "Trained without the shift, the `transformer` scores {} up to {} words but only {} on "
      "the {}-word sentences (test BLEU {} overall); with it, {} on those sentences and {} "
      "overall.",
      lambda: (whole_range(shift_rows("1-10", "11-20", "21-30", column=0)),
               str(longest_training_source()),
               whole_range(shift_rows("31-40", column=0)), _bucket_labels()[-1],
               whole_range(shift_rows("whole", column=0)),
               decimal_range(_bucket_bleu(["transformer"], _bucket_labels()[-1:])),
               decimal_range(_bleu(["transformer"])))),
    C(DOCS, "the shift's price per backend",
      "On TensorFlow ({} epochs) and torch ({}) sentences of up to {} words change by less "
      "than {} BLEU; on JAX ({} epochs) they lose {}.",
      lambda: (str(table("transformer", "tensorflow")["epochs"]),
               str(table("transformer", "torch")["epochs"]), str(longest_training_source()),
               _less_than_one((0, 2)), str(table("transformer", "jax")["epochs"]),
               f"{min(_shift_cost((1,))):.1f}-{max(_shift_cost((1,))):.1f}")),
    C(DOCS, "bahdanau's learning rate", "`bahdanau` at {} reaches a validation token "
      "accuracy", lambda: sci(recommended("bahdanau")["learning_rate"])),
    C(DOCS, "the step-4 peak and its BLEU",
      "`transformer_decoder_on_gru` with a peak of {} reaches {} / {} / {} BLEU (TensorFlow / "
      "JAX / torch, `kerasattn train transformer_decoder_on_gru --minutes {}`) and with {} "
      "(same warm-up, batch and budget) {} / {} / {}:",
      lambda: (sci(recommended("transformer_decoder_on_gru")["learning_rate"]),
               *_fit_comment_bleu(1).split(" / "), _fit_comment_minutes(),
               _fit_comment_bleu(3),
               *_fit_comment_bleu(2).split(" / "))),
    C(DOCS, "the Transformer's peak and its BLEU",
      "The `transformer` peaks at {} too: after {} epochs on JAX",
      lambda: (sci(recommended("transformer")["learning_rate"]),
               _fit_comment_transformer()[0])),
    C(DOCS, "the Transformer's BLEU at two peaks", "and BLEU {}, against 97.2 % and {} with a "
      "peak of {}.", lambda: (*_fit_comment_transformer()[1:], _fit_comment_bleu(3))),
    C(DOCS, "Transformer decoders' batches and warmup",
      "The Transformer decoders train with batches of {} and a {}-step warm-up.",
      lambda: (str(unique((batch_size(m) for m in ("transformer_decoder_on_gru",
                                                   "transformer")), "batch")),
               str(unique((recommended(m)["warmup_steps"] for m in (
                   "transformer_decoder_on_gru", "transformer")), "warmup")))),
    C(DOCS, "seven models in lesson 05's table", "and the table of the {w} models (05,",
      lambda: spelled(len(model_names()))),
    # -------------------------------------------------------------------------- README.md
    C(README, "the lessons", "- **students**: {w} lessons that train each model",
      lambda: spelled(n_lessons())),
    C(README, "a lesson's wall time and the machine",
      "corpus in about {w} on a {}-core CPU and draw its attention, and {w} fill-in "
      "exercises",
      lambda: (about_minutes(max(lesson_walls().values()) / 60), str(cores()),
               spelled(n_exercises()))),
    C(README, "seven models", "- {w} translation models, the two baselines and the {w} "
      "steps of the path",
      lambda: (spelled(len(model_names())), spelled(len(model_names()) - 2))),
    C(README, "lesson 00's wall time", "runs lesson 00 on the built-in corpus (about {w} on "
      "a {}-core CPU).",
      lambda: (about_minutes(max(w for (n, _), w in lesson_walls().items() if n == 0) / 60),
               str(cores()))),
    C(README, "the quick example", "`python docs/example.py --quick` runs it on {} training "
      "pairs", lambda: re.search(r"corpus\.train\[:(\d+)\]",
                                 (ROOT / "docs/example.py").read_text()).group(1)),
    C(README, "the example's epochs", "`{} epochs in 754 s,",
      lambda: re.search(r"epochs=(\d+)", (ROOT / "docs/example.py").read_text()).group(1)),
    C(README, "the example machine", "docs/example.py` on a {}-core AMD EPYC CPU, no GPU)",
      lambda: str(cores())),
    C(README, "the example machine's cores", "with a bit under one of its {w} cores free",
      lambda: spelled(cores())),
    C(README, "the lessons, one per step", "{w} lessons, one per step of the path, and a {w} "
      "on", lambda: (spelled(n_lessons() - 1).capitalize(), ordinal(n_lessons()))),
    C(README, "all six notebooks", "(or `make notebooks` for all {w})",
      lambda: spelled(n_lessons())),
    C(README, "the table of seven", "(+ the table of all {w})",
      lambda: spelled(len(model_names()))),
    C(README, "the quick option's machine", "12 s of wall time on torch, {}-core CPU",
      lambda: str(cores())),
    C(README, "--minutes default", "(default: {} minutes per lesson, split over its models)",
      lambda: g(options().DEFAULT_MINUTES)),
    C(README, "--seed default", "| random seed (default {}) |",
      lambda: str(settings().seed)),
    C(README, "--train-size in quick mode", "(default: all; with `--quick`, {})",
      lambda: str(options().QUICK_SIZES["train"])),
    C(README, "long sentences of the figure", "The sentences of {}+ words are longer than "
      "any training sentence.", lambda: str(longest_training_source() + 1)),
    C(README, "26 exercises", "holds {} fill-in exercises", lambda: str(n_exercises())),
    C(README, "measured BLEU", "Every attention model reaches BLEU {} on every backend "
      "within the lesson's budget; the model without attention stays at {}, falling from "
      "about {} on sentences of {} words to {} beyond {} words.",
      lambda: (whole_range(_bleu(_attention_models())), decimal_range(_bleu(["seq2seq"])),
               whole_range(_bucket_bleu(["seq2seq"], _bucket_labels()[:1])),
               _bucket_labels()[0],
               whole_range(_bucket_bleu(["seq2seq"], _bucket_labels()[-1:])),
               str(longest_training_source()))),
    C(README, "seven models in lesson 05's table", "lesson 05's table of the {w} models",
      lambda: spelled(len(model_names()))),
    C(README, "the beam's length-penalty exponent", "of the kit's beam search, alpha = {} ",
      lambda: g(_beam_alpha())),
]


def _same_dropout() -> tuple:
    """No number: every model's dropout is the same rate."""
    unique((config(m).dropout for m in model_names()), "dropout")
    return ()


def _d_h() -> int:
    return config("bahdanau_multihead").d_model // config("bahdanau_multihead").num_heads


def _step1_attention_dropout() -> float:
    """The attention dropout `bahdanau_multihead` is built with: the decoder layer's
    default, which the model builder does not set."""
    from kerasattn.models.attention_decoder import AttentionGRUDecoder
    from kerasattn.models.bahdanau import build_recurrent_attention_model

    assert "attention_dropout" not in inspect.signature(
        build_recurrent_attention_model).parameters
    return inspect.signature(AttentionGRUDecoder).parameters["attention_dropout"].default


def _distance(first: str, second: str) -> int:
    """Positions between two words of lesson 02's demo sentence."""
    tokens = in_code(2, r'sentence = "([^"]+)"').split()
    return tokens.index(second) - tokens.index(first)


def _layer_norms() -> int:
    """LayerNorms of the kit's encoder block (one per AddNorm)."""
    from kerasattn.layers import TransformerEncoderBlock

    source = inspect.getsource(TransformerEncoderBlock.__init__)
    return len(re.findall(r"AddNorm\(", source))


def _hypotheses() -> tuple[str, ...]:
    hyps = dict(re.findall(r'"(short|long) \(L = \d+, log P = [-\d.]+\)": \((\d+, [-\d.]+)\)',
                           code(4)))
    return (*hyps["short"].split(", "), *hyps["long"].split(", "))


def _preferences() -> tuple[str, str, str]:
    raw, kit, power = _penalty_preference()
    alpha = in_code(4, r"length_penalty\(n, ([\d.]+), 'power'\)")
    return unique((raw, kit), "raw and the kit's ranking"), alpha, power


# ----------------------------------------------------------------------- lesson 00 block
# Lesson 00 is rewritten separately (it may train another number of models): its claims
# and its allowlist are all here, so they are easy to adjust. The budget per model follows
# the lesson's own `parse_lesson_args(..., n_models=N)`, checked against its training calls.
CLAIMS_LESSON_00: list[Claim] = [
    C(L0, "the budget split", "The lesson's minutes are split equally over the {w}.",
      lambda: spelled(lesson_runs(0))),
    C(L0, "the models in the table", "The next cell prints this run's {w} models",
      lambda: spelled(len(in_code(0, r"for r in \((r_\w+(?:, r_\w+)*)\)\]\)\)\n")
                          .split(", ")))),
    C(L0, "the corpus's vocabulary", "Here the vocabulary has {w} words,",
      lambda: unique((few_hundred(len(v)) for v in _vocabularies()), "vocabulary")),
    C(L0, "each model's training time", "each model trains for about {w} on a CPU.",
      lambda: about_minutes(per_model_minutes(0))),
    C(L0, "each model's training time, again", "each model here trains for about {w}, "
      "against about five days in the paper.", lambda: about_minutes(per_model_minutes(0))),
    C(L0, "the kit's compression", "against at most {} training words of {} dimensions into "
      "{} numbers here ({} : 1; {} : 1 for the {}-word test sentences).",
      lambda: (str(max(source_lengths("train"))), str(config("seq2seq").embed_dim),
               str(config("seq2seq").units),
               g(max(source_lengths("train")) * config("seq2seq").embed_dim /
                 config("seq2seq").units),
               g(max(source_lengths("test")) * config("seq2seq").embed_dim /
                 config("seq2seq").units), str(max(source_lengths("test"))))),
    C(L0, "the training split and lesson 06's share of it", "With all {} training pairs the "
      "attention model learns this corpus almost perfectly. Lesson 06 takes a {w} of them",
      lambda: (thousands(len(corpus().train)), _lesson06_fraction())),
    C(L0, "quiz 1: seq2seq's context", "`units` = {} numbers, whatever the sentence length.",
      lambda: str(config("seq2seq").units)),
    C(L0, "quiz 4: shortest and longest test sentences", "the same size for a {}-word and a "
      "{}-word sentence.",
      lambda: (str(min(source_lengths("test"))), str(max(source_lengths("test"))))),
    C(L0, "quiz 8: seq2seq's sizes", "This lesson's `seq2seq` has {}-dimensional embeddings "
      "and a {}-number context, and the longest test sentences have {} words",
      lambda: (str(config("seq2seq").embed_dim), str(config("seq2seq").units),
               str(max(source_lengths("test"))))),
    C(L0, "quiz 8: bahdanau's memory", "read from a {}-word sentence?",
      lambda: str(max(source_lengths("test")))),
    C(L0, "quiz 8 answer (b): seq2seq's compression",
      "(b) {} × {} = {} numbers into {}: ratio {} : 1. A {}-word sentence: {} into {}, ratio "
      "{} : 1.", lambda: (*_compression(max(source_lengths("test"))),
                          *_compression(5)[:1], *_compression(5)[2:])),
    C(L0, "quiz 8 answer (c): bahdanau's annotations", "One annotation of 2 × {} = {} numbers "
      "per word: {} × {} = {} numbers.",
      lambda: (str(config("bahdanau").units), str(2 * config("bahdanau").units),
               str(max(source_lengths("test"))), str(2 * config("bahdanau").units),
               thousands(2 * config("bahdanau").units * max(source_lengths("test"))))),
    C(L0, "the corpus's vocabulary, again", "the built-in corpus is synthetic, {w} words",
      lambda: unique((few_hundred(len(v)) for v in _vocabularies()), "vocabulary")),
]


# ----------------------------------------------------------------------- lesson 06 block
CLAIMS_LESSON_06: list[Claim] = [
    C(L6, "the training split", "learns the built-in corpus almost perfectly from its {} "
      "training pairs", lambda: thousands(len(corpus().train))),
    C(L6, "the parallel share", "A {w} of the training split (at most {} pairs) is the "
      "parallel data", lambda: (_lesson06_fraction(),
                                thousands(int(in_code(6, r"n_parallel = min\((\d+),"))))),
    C(L6, "the parallel share on a real file", "half the training split, at most {} pairs, "
      "is the parallel data", lambda: thousands(int(in_code(
          6, r"if data\.real:\n    n_parallel = min\(([\d_]+), len\(data\.train_pairs\) // 2")))),
    C(L6, "the budget on a real file", "the lesson's default budget is {} minutes instead of {}",
      lambda: (in_code(6, r"data_minutes=([\d.]+)\)"), in_code(6, r"lesson_minutes=([\d.]+),"))),
    C(L6, "the test sentences", "The models are scored on {} test sentences",
      lambda: in_code(6, r"spread\(data\.test_pairs, (\d+)\)")),
    C(L6, "the scheduled-sampling floor", 'TeacherForcingSchedule("linear", decay_steps=n, '
      "min_ratio={})", lambda: in_code(6, r'"linear", decay_steps=n_steps, min_ratio=([\d.]+)\)')),
    C(L6, "the long sentences", "counted on the test sentences longer than {} words",
      lambda: in_code(6, r"len\(p\[0\]\.split\(\)\) > (\d+)")),
]



def _lesson06_fraction() -> str:
    """ "tenth": the share of the training split lesson 06 takes as parallel pairs."""
    return ordinal(int(in_code(6, r"n_parallel = min\(\d+, len\(data\.train_pairs\) // (\d+)")))


def _compression(words: int) -> tuple[str, ...]:
    """(words, embedding width, numbers, context, ratio) of seq2seq on a sentence."""
    e, c = config("seq2seq").embed_dim, config("seq2seq").units
    return str(words), str(e), thousands(words * e), str(c), g(words * e / c)


def _vocabularies():
    from kerasattn.data import Vocabulary

    return (Vocabulary.build(s for s, _ in corpus().train),
            Vocabulary.build(t for _, t in corpus().train))


# ---------------------------------------------------------------------------- allowlist
class Allowed(NamedTuple):
    file: str
    phrase: str     # literal text, or after "re:" a regex; every number in it is allowed
    reason: str

    def spans(self, text: str) -> list[tuple[int, int]]:
        pattern = self.phrase[3:] if self.phrase.startswith("re:") else re.escape(self.phrase)
        return [m.span() for m in re.finditer(pattern, text)]


def A(file: str, phrase: str, reason: str) -> Allowed:
    return Allowed(file, phrase, reason)


PAPER = "a figure of the paper, not of the kit"
QUIZ = "quiz arithmetic, recomputed by tests/test_lesson_content.py"
TOY = "a worked toy example"
TRY = "a value the reader is invited to try, not a kit setting"
ONCE = "an experiment measured once: no record keeps it"
LESSON_06 = ("lesson 06's runs, as they printed them: their records are "
             "docs/measured/lessons/<backend>/lesson_06/results.json")

ALLOWED: list[Allowed] = [
    # ----------------------------------------------------------------------- lesson 01
    A(L1, "A batch of 64 sentences of 20 source words", "quiz premise: a sentence length"),
    A(L1, "With attention dropout $p = 0.5$", "a dropout rate to reason about (the model "
      "uses none on the attention weights)"),
    # ----------------------------------------------------------------------- lesson 02
    A(L2, "For a sentence of 20 words, how many attention", "quiz premise: a sentence length"),
    A(L2, "20 × 20 = 400 weights per head", QUIZ),
    A(L2, "Feed-forward: (128 × 256 + 256) + (256 × 128 + 128) = 65,920", QUIZ),
    A(L2, "the further apart two words are", "any pair of words"),
    A(L2, "connects any two source words", "any pair of words"),
    A(L2, "(128 + 128) = 512. Total 132,480", QUIZ),
    # ----------------------------------------------------------------------- lesson 03
    A(L3, "For a target of 20 tokens?", "quiz premise: a target length"),
    A(L3, "1 + 2 + 3 + 4 = 10 allowed pairs and 6 blocked", QUIZ),
    A(L3, "For 20 tokens: 20 × 21 / 2 = 210 allowed of 400, 190 blocked", QUIZ),
    A(L3, '(the "100% accuracy" bug reports)', "what a bug report says, not a kit figure"),
    # ----------------------------------------------------------------------- lesson 04
    A(L4, "Greedy decoding of a 64-token translation", "quiz premise: an output length"),
    A(L4, "A batch of 2 sentences is decoded with beam size 4", "quiz premise"),
    A(L4, "a batch of 20-word targets take? At inference, for one 20-word translation?",
      "quiz premise: a target length"),
    A(L4, "(20 words and `<eos>`)", QUIZ),
    A(L4, "for sentence 0 rows", "an index of the toy cache"),
    A(L4, "its beam 0, one of its beam 1), for sentence 1 rows", "indices of the toy cache"),
    A(L4, "The same sentences decoded three ways.", "the cell's decodings: cached greedy, "
      "uncached greedy, beam"),
    A(L4, "The first pair ($i = 0$)", QUIZ),
    A(L4, "The last pair ($i = 31$, $d = 64$)", QUIZ),
    # ----------------------------------------------------------------------- lesson 05
    A(L5, 'label_smoothing=0.0)` or with `model_kwargs={"dropout": 0.3}`', TRY),
    A(L5, "English-German: 4.5 million sentence pairs; English-French: 36 million sentences",
      PAPER),
    A(L5, "Two words are 40 positions apart", "quiz premise"),
    A(L5, "so 40 layers; a recurrent network needs 40 steps", QUIZ),
    *(A(L5, f"| {without} |", "the run without the shift: recorded only in this table "
        "(the prose's ranges are checked against it)")
      for without in ("57.6 / 55.9 / 60.1", "99.4 / 99.7 / 99.7", "98.2 / 99.2 / 99.0",
                      "96.8 / 97.9 / 97.2")),
    A(L5, "Which of the Transformer's three kinds of attention", "the Transformer's "
      "encoder self-, decoder self- and cross-attention"),
    # --------------------------------------------------------------------- docs/lessons.md
    A(DOCS, '`--options="--minutes 2 --seed 1"`', TRY),
    A(DOCS, "against 88.2 for the unchanged model in the same series): peak learning rate "
      "3e-3: 88.4; sinusoidal positions on the target embeddings with the random position "
      "shift: 83.9, without the shift: 85.6; batches of 32: 83.0; a decoder GRU of 128 units "
      "instead of 64: 84.0-92.1 over three runs", "alternatives for step 3, " + ONCE),
    A(DOCS, "re:\\| `06_exposure_bias_coverage_backtranslation` \\|(?:[^|]*\\|){4}",
      LESSON_06),
    A(DOCS, "re:\\*\\*On a real file\\.\\*\\* `kerasattn --backend torch lesson 6[\\s\\S]*?"
      "nothing in minutes\\.", "lesson 06 on jpn-eng.txt, one run, as it printed it: its "
      "record is docs/measured/lesson_06_jpn-eng_torch.json"),
    A(DOCS, "re:lesson 06, which [^|]*?(?=; `--minutes` sets the minutes per share)", LESSON_06),
    A(DOCS, "re:`kerasattn --backend B lesson 6`, one run per backend[\\s\\S]*?the records "
      "do not show why the\\s+plain run was slower\\.",
      LESSON_06),
    A(L5, "with nothing else running, a 4.25-minute budget and a peak learning rate of 1e-3",
      "the conditions of the runs without the shift, " + ONCE),
    A(DOCS, "reaches a validation token accuracy of 98 % after 3 epochs, against 29 % at "
      "1e-3", ONCE),
    A(DOCS, "BLEU of greedy decoding on 400 test sentences", ONCE),
    A(DOCS, "a validation token accuracy of 99.1 %", ONCE),
    A(DOCS, "against 97.2 %", ONCE),
    A(DOCS, "Five epochs are what the lesson's budget fits on JAX beside another CPU-bound "
      "process", ONCE),
    A(DOCS, "the Transformer is at 21 % validation token accuracy after 3 epochs; with it, "
      "at 92 %", ONCE),
    # -------------------------------------------------------------------------- README.md
    A(README, "| 01 multi-head attention", "a lesson number"),
    A(README, "(two minutes in all by default)", "the lab's default budget, "
      "kerasattn.course.lab.LAB_MINUTES (tests/test_lab.py)"),
    A(README, "754 s, 2,377 target tokens/s", "what docs/example.py printed on one run (the "
      "README names the machine): no record keeps it"),
    A(README, "12 s of wall time", "one --quick run of lesson 00: no record keeps it"),
]

ALLOWED_LESSON_00: list[Allowed] = [
    A(L0, "Corpus BLEU (sacrebleu, 0-100)", "BLEU's scale"),
    A(L0, "news-test-2014, 3,003 sentences). The neural models were trained on a "
      "348-million-word parallel corpus with a 30,000-word vocabulary", PAPER),
    A(L0, "Moses also used a separate 418-million-word monolingual corpus", PAPER),
    A(L0, "trained on sentences of up to 50 words", PAPER),
    A(L0, "up to 50 training words of 620-dimensional embeddings into a 1,000-number state, "
      "31,000 "
      "numbers into 1,000 (31 : 1)", PAPER),
    A(L0, "Two other things make the difference", "a count of the two reasons that follow"),
    A(L0, "so a perfect model scores 100", "BLEU's scale"),
    A(L0, "(a) A 20-word sentence, 100-dimensional embeddings, a 256-number context",
      "the course notes' example"),
    A(L0, "(a) 20 × 100 = 2,000 numbers into 256", QUIZ),
    A(L0, "and for a 5-word sentence?", "quiz premise: a sentence length"),
    A(L0, "which has read all three words", "the walk-through's three-word sentence"),
    A(L0, "4 decoder steps for 3 words", QUIZ),
]

ALLOWED_LESSON_06: list[Allowed] = [
    A(L6, "Starting the ratio at (or near) 1", "the teacher-forcing ratio's maximum"),
    A(L6, "score: 0 when every source word", "the penalty's maximum, by its formula"),
    A(L6, "Bars near 1 are words read once", "what a total attention of 1 means"),
    A(L6, "gains of 2.8 to 3.7 BLEU on WMT 2015", PAPER),
]

ALL_CLAIMS = CLAIMS + CLAIMS_LESSON_00 + CLAIMS_LESSON_06
ALL_ALLOWED = ALLOWED + ALLOWED_LESSON_00 + ALLOWED_LESSON_06


# ------------------------------------------------------------------------ the checkers
def check_claim(claim: Claim, text: str) -> list[str]:
    """What is wrong with ``claim`` in ``text`` (empty: the prose states the kit's
    numbers)."""
    matches = list(re.finditer(claim.regex, text))
    if not matches:
        return [f"{claim.file}: phrase not found: {claim.phrase!r}"]
    truth = claim.truth()
    truth = (truth,) if isinstance(truth, str) else tuple(truth)
    problems = []
    for m in matches:
        if len(truth) != len(m.groups()):
            problems.append(f"{claim.what}: {len(m.groups())} numbers in the phrase, the "
                            f"truth gives {len(truth)}")
        elif m.groups() != truth:
            problems.append(f"{claim.file}: {m.group()!r} states {m.groups()}; the kit "
                            f"gives {truth}")
    return problems


_NUMERAL = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e-?\d+)?"
_NUMBER_WORDS = ("two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                 "forty|fifty|sixty|hundred|thousand")
NUMBER = re.compile(rf"(?<![\w.^_{{/\\-]){_NUMERAL}(?:-{_NUMERAL})?%?(?!\w)|"
                    rf"\b(?:{_NUMBER_WORDS})(?:-[a-z]+)?\b", re.IGNORECASE)
KIT_WORD = re.compile(
    r"(minute|min$|second|s$|epoch|pair|sentence|word|token|unit|dimension|head|layer|block|"
    r"batch|learning|rate$|warm|dropout|smooth|decay|bleu|%|param|budget|run$|runs$|core|"
    r"number|d_model|d_\{model\}|d_ff|d_\{ff\}|d_h$|vocab)", re.IGNORECASE)
REFERENCE_WORD = re.compile(r"(table|figure|fig|section|question|exercises?|lessons?|steps?|"
                            r"week)$", re.IGNORECASE)


def kit_numbers(text: str) -> list[re.Match]:
    """The numbers of ``text`` next to a kit-fact word (two words either side), without
    references (lesson, step, exercise, question, table, figure, year numbers)."""
    found = []
    for m in NUMBER.finditer(text):
        before = re.findall(r"[\w{}%/]+|%", text[max(0, m.start() - 60):m.start()])[-2:]
        after = re.findall(r"[\w{}%/]+|%", text[m.end():m.end() + 60])[:2]
        if re.fullmatch(r"(19|20)\d\d", m.group()):
            continue                                                  # a year
        if (before and REFERENCE_WORD.fullmatch(before[-1])) or \
                text[:m.start()].endswith(("step-", "**", "week-")):
            continue                                                  # a reference
        if re.match(r" `\w+`", text[m.end():]):
            continue                                                  # an exercise number
        if re.search(r"(?:[-+×*/]\s?|\$)$", text[:m.start()]):
            continue                                                  # an operand in maths
        words = before + after + ([m.group()[-1]] if m.group().endswith("%") else [])
        if any(KIT_WORD.match(w) for w in words):
            found.append(m)
    return found


def uncovered(file: str, text: str, claims, allowed) -> tuple[list[str], list[str]]:
    """(numbers of ``text`` next to kit-fact words that no claim or allowlist entry
    covers, allowlist entries that match nothing or cover no such number)."""
    spans = []
    for claim in claims:
        if claim.raw:
            continue
        for m in re.finditer(claim.regex, text):
            spans += [m.span(i) for i in range(1, len(m.groups()) + 1)]
    numbers = kit_numbers(text)
    stale = []
    for entry in allowed:
        hits = entry.spans(text)
        if not hits:
            stale.append(f"{file}: allowlist entry {entry.phrase!r} is not in the prose")
        elif not entry.phrase.startswith("re:") and not any(
                s <= n.start() and n.end() <= e for s, e in hits for n in numbers):
            stale.append(f"{file}: allowlist entry {entry.phrase!r} covers no kit number")
        spans += hits
    missing = [f"{file}: {n.group()!r} in ...{text[max(0, n.start() - 50):n.end() + 40]}..."
               for n in numbers
               if not any(s <= n.start() and n.end() <= e for s, e in spans)]
    return missing, stale


# -------------------------------------------------------------------------------- tests
@pytest.mark.parametrize("claim", ALL_CLAIMS, ids=lambda c: f"{c.file}: {c.what}")
def test_the_prose_states_the_kits_number(claim):
    problems = check_claim(claim, raw_text(claim.file) if claim.raw else prose(claim.file))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("file", FILES)
def test_every_kit_number_in_the_prose_is_claimed_or_allowed(file):
    missing, stale = uncovered(file, prose(file), [c for c in ALL_CLAIMS if c.file == file],
                               [a for a in ALL_ALLOWED if a.file == file])
    assert not missing, ("numbers about the kit with no claim in CLAIMS and no entry in "
                         "ALLOWED (tests/test_lesson_numbers.py):\n" + "\n".join(missing))
    assert not stale, "\n".join(stale)


@pytest.mark.parametrize("number", range(6))
def test_a_lesson_splits_its_budget_over_the_models_it_trains(number):
    # lesson_budget asserts n_models == the lesson's training calls
    n_models, minutes = lesson_budget(number)
    assert n_models >= 1 and minutes > 0


def test_every_lesson_is_checked_or_listed_as_not_covered():
    lessons = {str(p.relative_to(ROOT)) for p in (ROOT / "lessons").glob("[0-9][0-9]_*.py")}
    assert lessons == set(FILES[:7]) | set(NOT_COVERED)


def test_every_allowlist_entry_gives_a_reason():
    for entry in ALL_ALLOWED:
        assert entry.file in FILES and len(entry.reason.split()) >= 2, entry


def test_a_changed_number_fails_and_an_unclaimed_number_is_flagged():
    text = prose(DOCS)
    budget = next(c for c in CLAIMS if c.file == DOCS and c.what == "the lesson budget")
    assert not check_claim(budget, text)
    m = re.search(budget.regex, text)
    changed = text[:m.start(1)] + "5.5" + text[m.end(1):]                  # another budget
    assert check_claim(budget, changed)
    claims = [c for c in ALL_CLAIMS if c.file == DOCS]
    allowed = [a for a in ALL_ALLOWED if a.file == DOCS]
    before, _ = uncovered(DOCS, text, claims, allowed)
    after, _ = uncovered(DOCS, text + " Each model trains for 7 epochs.", claims, allowed)
    new = [m for m in after if m not in before]
    assert len(new) == 1 and "'7'" in new[0]


def test_the_formatting_rules():
    assert about_minutes(4.25 / 3) == "a minute and a half"
    assert about_minutes(4.25) == "four minutes"
    assert about_minutes(4.25 / 2) == "two minutes"
    assert about_minutes(1.1) == "a minute"
    assert about_minutes(0.4) == "half a minute"
    assert whole_range([91.9, 98.8, 95.0]) == "92-99" and whole_range([83.5, 81.1]) == "81-84"
    assert decimal_range([13.2, 8.9, 9.7]) == "8.9-13.2"
    assert sci(3e-3) == "3e-3" and sci(1e-4) == "1e-4" and g(1.0) == "1" and g(0.1) == "0.1"
    assert spelled(26) == "twenty-six" and spelled(3) == "three" and ordinal(3) == "third"
