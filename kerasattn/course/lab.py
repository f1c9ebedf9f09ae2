"""``kerasattn lab``: the attention lab on the student's own exercise-16 model.

The attention lab is *build, train, visualise, compare with seq2seq*. Exercise 16 builds
``LabModel`` (a bidirectional-GRU encoder and a Bahdanau attention decoder); this command
does the rest with the student's code:

1. loads ``LabModel`` from the student's file (by path) and tries it on a tiny batch, so a
   broken or unfinished file gets a one-paragraph error naming the file and the problem;
2. grades it with the autograder's checks of exercise 16 on the current backend and
   refuses to train a model that fails them, with the grader's feedback (``--no-grade``
   skips this);
3. trains it with the kit's training path (:func:`kerasattn.training.train`: teacher
   forcing, masked loss, AdamW, early stopping, a wall-clock budget) next to the kit's
   ``seq2seq`` on the same data and budget;
4. decodes the test split greedily with the student's own ``encode`` / ``decode_step``
   (through the student's exercise-25 ``greedy_decode`` when it is filled in and agrees
   with the kit's loop, else the kit's loop), scores both models with sacrebleu (overall
   and by source length), draws the student's attention on a test sentence, BLEU against
   source length and the training curves, and writes ``report.md`` and ``results.json``.

Keras is imported only when the lab runs (the backend is chosen first).
"""
from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

from kerasattn._env import UsageError
from kerasattn._imports import import_path
from kerasattn.course.options import OUTPUTS, QUICK_HPARAMS, Settings

__all__ = ["LAB_FILE", "GREEDY_FILE", "LAB_MINUTES", "LabError", "lab_out_dir", "lab_command",
           "load_lab_model", "check_lab_model", "grade_lab_file", "kit_greedy_decode",
           "translate_test", "run_lab"]

LAB_FILE = Path("exercises") / "16_lab_bahdanau_model.py"
"""The default exercise file, relative to the current directory."""

GREEDY_FILE = "25_greedy_decoding.py"
"""Exercise 25, looked for in the folder of the exercise-16 file."""

LAB_MINUTES = 2.0
"""Default training budget of the whole lab in minutes, split evenly over its two models."""

LAB_HPARAMS = dict(embed_dim=64, units=64, attention_units=64)
"""``LabModel`` sizes: those of the kit's ``bahdanau`` (quick mode: ``QUICK_HPARAMS``)."""

DECODE_BATCH = 128
EXERCISE = "16_lab_bahdanau_model"
_PROBE = dict(src_vocab_size=11, tgt_vocab_size=13, embed_dim=6, units=5, attention_units=4)


class LabError(UsageError):
    """The student's file cannot be used by the lab (printed without a traceback)."""


def lab_out_dir() -> Path:
    """Default output folder of ``kerasattn lab``: ``./outputs/lab``."""
    return OUTPUTS / "lab"


# ---------------------------------------------------------------------------------------
# Loading and checking the student's file
# ---------------------------------------------------------------------------------------
def _where(exc: BaseException, path: Path) -> str:
    """`` (line N: code)`` of the deepest traceback frame in ``path``, or ``""``."""
    target = str(path.resolve())
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if str(Path(f.filename).resolve()) == target]
    if not frames:
        return ""
    f = frames[-1]
    code = f" `{f.line.strip()}`" if f.line else ""
    return f" (line {f.lineno}:{code})"


def _grade_cmd(path: Path) -> str:
    """The grader command for ``path`` (the grader knows an exercise by its file name)."""
    if path.stem == EXERCISE:
        return f"`kerasattn grade {path}`"
    return (f"`kerasattn grade {EXERCISE}.py` after copying it to that name (the grader "
            "knows an exercise by its file name)")


def _fill_in_first(path: Path, what: str) -> LabError:
    return LabError(f"{path}: {what} is not filled in yet: fill in exercise 16 first; check "
                    f"it with {_grade_cmd(path)}, then run `kerasattn lab` again.")


def _plain(text: str) -> str:
    """``text`` without terminal colour codes (Keras emphasises parts of its messages)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _message(exc: BaseException) -> str:
    """The first line of an exception's own message (without the lines Keras adds around
    an error raised inside a layer's ``call``)."""
    for line in _plain(str(exc)).splitlines():
        line = line.strip()
        if line and not line.startswith(("Exception encountered when calling",
                                         "Arguments received by")):
            return line[:300]
    return ""


def _student_error(path: Path, doing: str, exc: BaseException) -> LabError:
    """A one-paragraph error for an exception raised by the student's code."""
    if isinstance(exc, NotImplementedError):
        found = re.search(r"([\w.]+): fill in the marked region", _plain(str(exc)))
        return _fill_in_first(path, found.group(1) if found else f"{doing}")
    message = _message(exc)
    return LabError(f"{path}: {doing} raised {type(exc).__name__}"
                    f"{': ' + message if message else ''}{_where(exc, path)}. Fix it and "
                    f"check the file with {_grade_cmd(path)}.")




def load_lab_model(path) -> type:
    """The ``LabModel`` class of an exercise-16 file, loaded by path.

    Args:
        path: the student's exercise-16 file (or its solution).

    Returns:
        The class.

    Raises:
        LabError: no such file, a syntax error, an exception while importing, no
            ``LabModel`` class, or one that is not a ``keras.Model`` (the message names the
            file and the line).
    """
    import keras

    path = Path(path)
    if not path.is_file():
        raise LabError(f"EXERCISE_FILE: no such file {str(path)!r}. Give the path of your "
                       f"exercise-16 file (default {LAB_FILE}, relative to the current "
                       f"folder).")
    if path.suffix != ".py":
        raise LabError(f"EXERCISE_FILE must be a Python file (.py); received {str(path)!r}")
    try:
        module = import_path(path, "_kerasattn_lab_exercise_16")
    except SyntaxError as exc:
        raise LabError(f"{path}: line {exc.lineno}: syntax error: {exc.msg}. Fix it and "
                       f"check the file with {_grade_cmd(path)}.") from None
    except Exception as exc:  # noqa: BLE001 - any error of the student's file
        raise _student_error(path, "importing the file", exc) from None
    cls = getattr(module, "LabModel", None)
    if cls is None:
        raise LabError(f"{path} defines no class `LabModel`: the lab trains the LabModel of "
                       f"exercise 16; keep its name and its __init__ as the exercise gives "
                       f"them.")
    if not (isinstance(cls, type) and issubclass(cls, keras.Model)):
        raise LabError(f"{path}: `LabModel` must be a subclass of keras.Model; received "
                       f"{cls!r}")
    return cls


def _shape(x) -> tuple:
    return tuple(int(d) if d is not None else -1 for d in getattr(x, "shape", ()))


def check_lab_model(cls, path) -> None:
    """Build ``LabModel`` on tiny sizes and check ``encode``, ``decode_step`` and the call.

    Args:
        cls: the class from :func:`load_lab_model`.
        path: its file (named in the errors).

    Raises:
        LabError: an unfilled method (the message says to fill in exercise 16 first),
            an exception in the student's code, or an output of the wrong structure or
            shape (what was expected and what was received).
    """
    import numpy as np
    from keras import ops

    path = Path(path)
    p = _PROBE
    b, s, t, u = 2, 5, 4, p["units"]
    src = ops.convert_to_tensor(np.array([[4, 5, 6, 7, 0], [8, 9, 0, 0, 0]]), "int32")
    dec = ops.convert_to_tensor(np.array([[2, 4, 5, 6], [2, 7, 8, 9]]), "int32")
    try:
        model = cls(p["src_vocab_size"], p["tgt_vocab_size"], embed_dim=p["embed_dim"],
                    units=u, attention_units=p["attention_units"])
    except Exception as exc:  # noqa: BLE001
        raise _student_error(path, f"constructing LabModel({p['src_vocab_size']}, "
                                   f"{p['tgt_vocab_size']}, embed_dim={p['embed_dim']}, "
                                   f"units={u}, attention_units={p['attention_units']})",
                             exc) from None
    try:
        model.build()
    except Exception as exc:  # noqa: BLE001
        raise _student_error(path, "LabModel.build()", exc) from None
    try:
        encoded = model.encode(src)
    except Exception as exc:  # noqa: BLE001
        raise _student_error(path, "LabModel.encode", exc) from None
    h_enc, s_0, mask = _expect_shapes(path, "LabModel.encode", ("h_enc", "s_0", "source_mask"),
                                      encoded, ((b, s, 2 * u), (b, u), (b, s)))
    try:
        stepped = model.decode_step(dec[:, 0], s_0, h_enc, mask)
    except Exception as exc:  # noqa: BLE001
        raise _student_error(path, "LabModel.decode_step", exc) from None
    _expect_shapes(path, "LabModel.decode_step", ("logits_t", "s_t", "alpha_t"), stepped,
                   ((b, p["tgt_vocab_size"]), (b, u), (b, s)))
    try:
        logits = model({"encoder_inputs": src, "decoder_inputs": dec})
    except Exception as exc:  # noqa: BLE001
        raise _student_error(path, "calling LabModel on a batch", exc) from None
    _expect_shapes(path, "LabModel's call", ("logits",), (logits,),
                   ((b, t, p["tgt_vocab_size"]),))


def _expect_shapes(path, what, names, values, shapes):
    """``values`` (what ``what`` returned), checked to be a tuple of ``names`` with
    ``shapes``; returns it."""
    if not (isinstance(values, (tuple, list)) and len(values) == len(names)):
        count = f" of {len(values)} values" if isinstance(values, (tuple, list)) else ""
        raise LabError(f"{path}: {what} must return ({', '.join(names)}); received "
                       f"{type(values).__name__}{count}. Check it with "
                       f"{_grade_cmd(path)}.")
    for name, value, want in zip(names, values, shapes):
        got = _shape(value)
        if got != want:
            raise LabError(f"{path}: {what} returned {name} of shape {got} for a batch of "
                           f"B=2 sources of S=5 tokens (T=4 target tokens, u=5 units, "
                           f"V_tgt=13); expected {want}. Check it with "
                           f"{_grade_cmd(path)}.")
    return values


# ---------------------------------------------------------------------------------------
# The grader's checks of exercise 16
# ---------------------------------------------------------------------------------------
def grade_lab_file(path, backend: str) -> dict:
    """Grade ``path`` with the checks of exercise 16 on ``backend``.

    The grader pairs a file with its checks by its name: a file named otherwise is graded
    as a copy named ``16_lab_bahdanau_model.py``.

    Args:
        path: the student's exercise-16 file.
        backend: the Keras backend to grade on.

    Returns:
        The exercise's entry of the grader's results (``score``, ``max_score``,
        ``checks``, ``messages``).
    """
    import shutil
    import tempfile

    from kerasattn.grader import grade

    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="kerasattn-lab-") as tmp:
        graded = path
        if path.stem != EXERCISE:
            graded = Path(tmp) / f"{EXERCISE}.py"
            shutil.copy(path, graded)
        # two sandboxed workers, as `kerasattn grade` uses: the three cases in about half
        # the time of one worker
        result = grade([str(graded)], [backend], jobs=min(2, os.cpu_count() or 1))
    (entry,) = [e for e in result["exercises"] if e["exercise"] == EXERCISE]
    return entry


def _grade_failure(path: Path, entry: dict, backend: str) -> LabError | None:
    """The refusal to train a model that fails the grader's checks, or None."""
    if entry.get("status") == "graded" and entry["score"] >= entry["max_score"] > 0:
        return None
    lines = [f"{path} does not pass the grader's checks of exercise 16 on {backend} "
             f"({entry['score']:g}/{entry['max_score']:g}), so the lab does not train it:"]
    lines += [f"  {m.strip()}" for m in entry.get("messages", []) if m.strip()][:3]
    failed = [(c["name"], r["message"]) for c in entry.get("checks", [])
              for r in c["results"].values() if r["status"] != "passed"]
    for name, message in failed[:6]:
        found = [m.strip() for m in (message or "").strip().splitlines() if m.strip()]
        lines.append(f"  FAIL  {name}" + (f": {found[0][:300]}" if found else ""))
        lines += [f"        {m[:300]}" for m in found[1:] if m.startswith("matches a known")]
    if len(failed) > 6:
        lines.append(f"  ... and {len(failed) - 6} more")
    lines.append(f"Fix them first ({_grade_cmd(path)} shows every check; "
                 f"`kerasattn hint 16` helps), or train it anyway with --no-grade.")
    return LabError("\n".join(lines))


# ---------------------------------------------------------------------------------------
# Exercise 25's greedy decoding, and the kit's loop
# ---------------------------------------------------------------------------------------
def kit_greedy_decode(step_fn, state, batch_size, max_length, bos_id=2, eos_id=3, pad_id=0):
    """Greedy search with exercise 25's contract (used when the student's is missing).

    Args:
        step_fn: ``step_fn(tokens (B,) int32, state, t) -> (logits (B, V), state)``.
        state: the decoder's state before the first step.
        batch_size: ``B``.
        max_length: the most tokens per row (``<eos>`` included).
        bos_id, eos_id, pad_id: the ids of ``<bos>``, ``<eos>`` and ``<pad>``.

    Returns:
        Dict with "tokens" `(B, T_out)` int32 (``<pad>`` after a row's ``<eos>``),
        "lengths" `(B,)` int32 and "finished" `(B,)` bool.
    """
    from keras import ops

    tokens = ops.full((batch_size,), bos_id, "int32")
    finished = ops.zeros((batch_size,), "bool")
    lengths = ops.zeros((batch_size,), "int32")
    columns = []
    for t in range(max_length):
        logits, state = step_fn(tokens, state, t)
        tokens = ops.cast(ops.argmax(logits, axis=-1), "int32")
        tokens = ops.where(finished, ops.full_like(tokens, pad_id), tokens)
        lengths = lengths + ops.cast(ops.logical_not(finished), "int32")
        finished = ops.logical_or(finished, ops.equal(tokens, eos_id))
        columns.append(tokens)
        if bool(ops.all(finished)):
            break
    return {"tokens": ops.stack(columns, axis=1), "lengths": lengths, "finished": finished}


def _student_greedy(lab_path: Path):
    """Exercise 25's ``greedy_decode`` from the folder of ``lab_path``, and why not if
    it cannot be used (a note for the report)."""
    path = lab_path.parent / GREEDY_FILE
    if not path.is_file():
        return None, f"there is no {GREEDY_FILE} beside {lab_path.name}"
    try:
        module = import_path(path, "_kerasattn_lab_exercise_25")
    except Exception as exc:  # noqa: BLE001 - any error of the student's file
        return None, f"{path} does not import ({type(exc).__name__}: {exc})"
    fn = getattr(module, "greedy_decode", None)
    if not callable(fn):
        return None, f"{path} defines no function greedy_decode"
    return fn, str(path)


class _Decoder:
    """Greedy decoding of token ids with the student's ``encode`` / ``decode_step``.

    On JAX and TensorFlow both run compiled (:func:`kerasattn.backend_utils.
    compile_function`) unless ``compile_steps`` is False; code that only runs eagerly
    (a NumPy call on a tensor, Python control flow on values) is then run eagerly.
    ``greedy`` is exercise 25's function (the student's or :func:`kit_greedy_decode`); the
    step function records the attention weights ``decode_step`` returns at each step.
    """

    def __init__(self, model, compile_steps: bool):
        from kerasattn.backend_utils import compile_function

        self.model = model
        self.compiled = None
        if compile_steps:
            self.compiled = (compile_function(model.encode, model.variables),
                             compile_function(model.decode_step, model.variables))

    def _call(self, which: int, *args):
        if self.compiled is not None:
            try:
                return self.compiled[which](*args)
            except NotImplementedError:
                raise
            except Exception:  # noqa: BLE001 - code that only runs eagerly: run it eagerly
                self.compiled = None
        return (self.model.encode, self.model.decode_step)[which](*args)

    def run(self, greedy, src, max_length, vocab, record=False):
        """Decode the id matrix ``src`` `(B, S)` with ``greedy``; returns the token ids
        `(B, T_out)`, the lengths `(B,)` and, with ``record``, ``{step: alpha (B, S)}``."""
        import numpy as np
        from keras import ops

        h_enc, s_0, mask = self._call(0, ops.convert_to_tensor(src, "int32"))
        alphas = {}

        def step_fn(tokens, state, t):
            logits, s_t, alpha = self._call(1, ops.cast(tokens, "int32"), state, h_enc, mask)
            if record:
                step = int(ops.convert_to_numpy(t)) if hasattr(t, "shape") else int(t)
                alphas[step] = ops.convert_to_numpy(alpha)
            return logits, s_t

        out = greedy(step_fn, s_0, int(src.shape[0]), int(max_length), bos_id=vocab.BOS,
                     eos_id=vocab.EOS, pad_id=vocab.PAD)
        tokens = np.asarray(ops.convert_to_numpy(out["tokens"])).astype(int)
        lengths = np.asarray(ops.convert_to_numpy(out["lengths"])).astype(int)
        if tokens.ndim != 2 or tokens.shape[0] != src.shape[0] or lengths.shape != \
                (src.shape[0],):
            raise ValueError(f"greedy_decode returned tokens of shape {tokens.shape} and "
                             f"lengths of shape {lengths.shape} for a batch of "
                             f"{src.shape[0]}")
        return tokens, lengths, alphas


def _caps(ids, settings: Settings):
    from kerasattn.inference import output_cap

    return [settings.max_decode or output_cap(len(i)) for i in ids]


def _batches(ids, caps):
    """Index batches of one output cap each, similar source lengths together."""
    order = sorted(range(len(ids)), key=lambda i: (caps[i], len(ids[i])))
    batches, start = [], 0
    for k in range(1, len(order) + 1):
        if k == len(order) or k - start == DECODE_BATCH or caps[order[k]] != caps[order[start]]:
            batches.append(order[start:k])
            start = k
    return batches


def _pad(rows):
    import numpy as np

    width = -(-max(max(len(r) for r in rows), 1) // 8) * 8
    out = np.zeros((len(rows), width), dtype=np.int32)
    for k, r in enumerate(rows):
        out[k, :len(r)] = r
    return out


def _texts(vocab, tokens, lengths):
    return [vocab.decode([int(x) for x in row[:n]]) for row, n in zip(tokens, lengths)]


def decode_test(decoder: _Decoder, greedy, sources, src_vocab, tgt_vocab, settings,
                check_against=None):
    """Greedy translations of ``sources`` (normalised strings) as normalised strings.

    With ``check_against`` (the kit's loop) the first batch is also decoded by it: a
    different result raises ``ValueError`` (the caller falls back to the kit's loop).
    """
    ids = [src_vocab.encode(s) for s in sources]
    caps = _caps(ids, settings)
    hyps = [""] * len(sources)
    for k, idx in enumerate(_batches(ids, caps)):
        src = _pad([ids[i] for i in idx])
        tokens, lengths, _ = decoder.run(greedy, src, caps[idx[0]], tgt_vocab)
        texts = _texts(tgt_vocab, tokens, lengths)
        if k == 0 and check_against is not None:
            ref_tokens, ref_lengths, _ = decoder.run(check_against, src, caps[idx[0]],
                                                     tgt_vocab)
            wrong = sum(a != b for a, b in zip(texts, _texts(tgt_vocab, ref_tokens,
                                                             ref_lengths)))
            if wrong:
                raise ValueError(f"it gave other tokens than the kit's greedy loop for "
                                 f"{wrong} of {len(idx)} sentences")
        for i, text in zip(idx, texts):
            hyps[i] = text
    return hyps


def translate_test(decoder: _Decoder, lab_path, sources, src_vocab, tgt_vocab,
                   settings: Settings):
    """Greedy translations of ``sources`` by the student's model, with the student's
    exercise-25 ``greedy_decode`` when it can be used.

    The ``greedy_decode`` of ``25_greedy_decoding.py`` beside ``lab_path`` decodes when it
    is filled in and gives the kit loop's tokens on the first batch; otherwise
    :func:`kit_greedy_decode` calls the student's ``decode_step``.

    Args:
        decoder: the student's model as a :class:`_Decoder`.
        lab_path: the exercise-16 file (exercise 25 is looked for beside it).
        sources: normalised source sentences.
        src_vocab, tgt_vocab: the vocabularies.
        settings: the run options (the output cap in quick mode).

    Returns:
        ``(hypotheses, greedy function used, note for the report)``.
    """
    greedy, where = _student_greedy(Path(lab_path))
    if greedy is not None:
        try:
            hyps = decode_test(decoder, greedy, sources, src_vocab, tgt_vocab, settings,
                               check_against=kit_greedy_decode)
            return hyps, greedy, (f"greedy, with your `greedy_decode` (exercise 25, "
                                  f"{where}) calling your `decode_step`")
        except NotImplementedError:
            where = f"{where}: greedy_decode is not filled in yet"
        except Exception as exc:  # noqa: BLE001 - the student's decoding: fall back
            where = (f"your greedy_decode ({where}) could not be used: "
                     f"{type(exc).__name__}: {_message(exc)[:200]}")
    hyps = decode_test(decoder, kit_greedy_decode, sources, src_vocab, tgt_vocab, settings)
    return hyps, kit_greedy_decode, (f"greedy, with the kit's greedy loop calling your "
                                     f"`decode_step` ({where})")


# ---------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------
QUICK_MAX_TOKENS = 10
"""Quick mode trains on pairs of at most this many tokens a side: ``LabModel`` unrolls its
decoder loop over the target width, which sets the cost of tracing (TensorFlow) and
compiling (JAX) its training step."""


def _quick_data(data, settings: Settings):
    """Quick mode: the data with short training and validation pairs (the test split as
    loaded: the BLEU-by-length table keeps every bucket)."""
    import dataclasses

    from kerasattn.course.data import spread
    from kerasattn.course.options import QUICK_SIZES
    from kerasattn.data import make_arrays

    def short(pairs):
        return [p for p in pairs if len(data.src_vocab.encode(p[0])) <= QUICK_MAX_TOKENS
                and len(data.tgt_vocab.encode(p[1])) <= QUICK_MAX_TOKENS]

    corpus = data.corpus
    train = short(corpus.train)
    valid = short(corpus.valid or [])
    if not train or not valid:
        return data
    train = spread(train, settings.train_size or QUICK_SIZES["train"])
    valid = spread(valid, QUICK_SIZES["valid"])
    return dataclasses.replace(
        data, train=make_arrays(train, data.src_vocab, data.tgt_vocab),
        valid=make_arrays(valid, data.src_vocab, data.tgt_vocab),
        description=data.description + f"; quick: training and validation pairs of at most "
                                       f"{QUICK_MAX_TOKENS} tokens a side")


def _lab_hparams(data, settings: Settings, budget) -> dict:
    if settings.quick:
        return {k: QUICK_HPARAMS[k] for k in LAB_HPARAMS}
    hp = dict(LAB_HPARAMS)
    recipe = data.recipe("bahdanau", budget) if data.real else None
    if recipe is not None:
        hp.update({k: v for k, v in recipe.model_kwargs.items() if k in hp})
    return hp


def _train_student(cls, path: Path, data, settings: Settings, verbose: int):
    """Build ``LabModel`` on the data's vocabularies and train it with the kit's path."""
    import keras

    from kerasattn import training
    from kerasattn.backend_utils import set_mixed_precision
    from kerasattn.course.train import Trained

    budget = 60.0 * settings.minutes if settings.minutes else None
    hp = _lab_hparams(data, settings, budget)
    set_mixed_precision(settings.mixed_precision)
    keras.utils.set_random_seed(settings.seed)

    def build():
        try:
            model = cls(len(data.src_vocab), len(data.tgt_vocab), **hp)
            model.build()
        except Exception as exc:  # noqa: BLE001
            raise _student_error(path, f"constructing LabModel on the corpus's vocabularies "
                                       f"({len(data.src_vocab)}, {len(data.tgt_vocab)}, "
                                       f"{hp})", exc) from None
        return model

    model = build()
    kwargs = dict(epochs=settings.epochs, batch_size=settings.batch_size, seed=settings.seed,
                  verbose=verbose)
    if not settings.quick:
        recipe = data.recipe("bahdanau", budget) if data.real else None
        kwargs.update({k: v for k, v in recipe.train.items() if k != "epochs"}
                      if recipe is not None else training.recommended_training("bahdanau"))
    # LabModel loops over range(decoder_inputs.shape[1]): the target width must be known
    # when the step is traced. TensorFlow traces one step for every width once widths
    # vary, and JAX compiles one per width: batches keep the corpus's full width there.
    kwargs["bucket"] = (kwargs.get("bucket", False) if keras.backend.backend() == "torch"
                        else False)
    if budget:
        kwargs["callbacks"] = [training.TimeBudget(budget)]
    start = time.perf_counter()
    try:
        result = training.train(model, data.train, data.valid, **kwargs)
    except Exception as exc:  # noqa: BLE001
        if _where(exc, path):  # the student's code failed: say where, no traceback
            raise _student_error(path, "training LabModel", exc) from None
        raise
    wall = time.perf_counter() - start
    precision = keras.config.dtype_policy().name
    if precision != "float32":  # float32 master weights: decode in float32
        set_mixed_precision(None)
        trained, model = model, build()
        model.set_weights(trained.get_weights())
    return Trained(name="LabModel", model=model, history=result.history,
                   train_seconds=float(result.train_seconds or wall),
                   tokens_per_second=result.tokens_per_second, epochs_run=result.epochs_run,
                   params=int(model.count_params()), hparams=hp,
                   torch_threads=result.torch_threads, precision=precision)


# ---------------------------------------------------------------------------------------
# The lab
# ---------------------------------------------------------------------------------------
def _example_pair(data):
    """A test pair of medium length to draw the attention of (6 to 12 source tokens)."""
    from kerasattn.inference import tokens_of

    pairs = data.test_pairs
    n = [len(tokens_of(data.src_vocab, s)) for s, _ in pairs]
    mid = [p for p, k in zip(pairs, n) if 6 <= k <= 12]
    return min(mid, key=lambda p: abs(len(tokens_of(data.src_vocab, p[0])) - 9)) if mid \
        else max(pairs, key=lambda p: len(p[0]))


def _by_length_table(rows_student, rows_seq2seq) -> str:
    def fmt(v):
        return "-" if v is None else f"{v:.1f}"

    lines = ["| source length (tokens) | test sentences | your LabModel | seq2seq |",
             "| --- | ---: | ---: | ---: |"]
    for a, b in zip(rows_student, rows_seq2seq):
        lines.append(f"| {a['label']} | {a['n']} | {fmt(a['bleu'])} | {fmt(b['bleu'])} |")
    return "\n".join(lines)


def run_lab(path, settings: Settings, grade: bool = True) -> dict:
    """Run the attention lab on the exercise-16 file ``path``; returns the results record.

    Args:
        path: the student's exercise-16 file (or its solution).
        settings: the run options (``settings.out`` receives the report and figures;
            ``settings.minutes`` is the budget of each of the two models).
        grade: grade the file with the checks of exercise 16 first and refuse to train a
            model that fails them.

    Returns:
        The dict written to ``results.json``.

    Raises:
        LabError: the file cannot be used (see :func:`load_lab_model`,
            :func:`check_lab_model`), or it fails the grader's checks.
    """
    import keras
    import numpy as np

    from kerasattn import metrics, plots
    from kerasattn.backend_utils import compute_device
    from kerasattn.course.data import load_data
    from kerasattn.course.lesson import LENGTH_BUCKETS
    from kerasattn.course.printing import format_table, heading
    from kerasattn.course.train import train_model
    from kerasattn.course.translate import lesson_translator
    from kerasattn.inference import tokens_of

    path = Path(path)
    backend = keras.backend.backend()
    wall0 = time.perf_counter()
    cls = load_lab_model(path)
    check_lab_model(cls, path)
    graded = None
    if grade:
        print(f"grading {path} with the checks of exercise 16 on {backend} (--no-grade "
              f"skips this)...", flush=True)
        entry = grade_lab_file(path, backend)
        failure = _grade_failure(path, entry, backend)
        if failure is not None:
            raise failure
        graded = f"{entry['score']:g}/{entry['max_score']:g}"
        print(f"exercise 16: {graded} on {backend}", flush=True)

    out = Path(settings.out)
    out.mkdir(parents=True, exist_ok=True)
    mode = "quick (tiny, for tests: the numbers mean nothing)" if settings.quick else "default"
    budget = (f"{settings.minutes:g} min per model" if settings.minutes
              else f"at most {_epochs(settings.epochs)} per model")
    print(f"The lab: {path} against seq2seq\nbackend: {backend} on {compute_device()} | "
          f"mode: {mode} | budget: {budget} | report -> {out}/", flush=True)
    data = load_data(settings)
    if settings.quick:
        data = _quick_data(data, settings)
    print(f"data: {data.description}; vocabularies {len(data.src_vocab)} ({data.src_lang}) "
          f"/ {len(data.tgt_vocab)} ({data.tgt_lang}), {data.tokenizer} tokens", flush=True)
    verbose = 0 if settings.quick else (1 if sys.stdout.isatty() else 2)

    heading("training your LabModel")
    student = _train_student(cls, path, data, settings, verbose)
    print(f"LabModel: {student.params:,} parameters, {_epochs(student.epochs_run)} in "
          f"{student.train_seconds:.1f} s", flush=True)
    heading("training seq2seq (the kit's, no attention)")
    baseline = train_model("seq2seq", data, settings, verbose=verbose)
    print(f"seq2seq: {baseline.params:,} parameters, {_epochs(baseline.epochs_run)} in "
          f"{baseline.train_seconds:.1f} s", flush=True)

    heading("decoding the test split")
    srcs = [s for s, _ in data.test_pairs]
    refs = [t for _, t in data.test_pairs]
    compile_steps = bool(settings.decode_compile) and backend in ("jax", "tensorflow")
    decoder = _Decoder(student.model, compile_steps)
    start = time.perf_counter()
    hyps, greedy, greedy_note = translate_test(decoder, path, srcs, data.src_vocab,
                                               data.tgt_vocab, settings)
    student_decode_s = time.perf_counter() - start
    start = time.perf_counter()
    base_hyps = lesson_translator(baseline.model, data, settings, "seq2seq").translate(
        srcs, normalized=True, detokenized=False)
    base_decode_s = time.perf_counter() - start

    if data.real:  # lengths in the tokenizer's tokens (subword pieces, or words)
        lens = [" ".join(tokens_of(data.src_vocab, s)) for s in srcs]
    else:
        lens = srcs
    scores = {}
    for name, h, trained, secs in (("LabModel", hyps, student, student_decode_s),
                                   ("seq2seq", base_hyps, baseline, base_decode_s)):
        if data.real:  # the target language's sacrebleu tokenizer (characters for Japanese)
            bleu = metrics.multi_reference_bleu(h, [[r] for r in refs],
                                                tokenize=data.bleu_tokenize)
        else:
            bleu = metrics.corpus_bleu(h, refs)
        scores[name] = dict(
            model=name, params=trained.params, epochs=trained.epochs_run,
            train_seconds=trained.train_seconds,
            tokens_per_second=trained.tokens_per_second, hparams=trained.hparams,
            bleu=float(bleu),
            exact_match=float(metrics.exact_match(h, refs)), decode_seconds=secs,
            by_length=metrics.bleu_by_length(lens, h, refs, buckets=LENGTH_BUCKETS),
            history=trained.history)
    print(format_table(["model", "params", "epochs", "train s", "test BLEU", "exact"],
                       [[r["model"], f"{r['params']:,}", r["epochs"],
                         f"{r['train_seconds']:.1f}", f"{r['bleu']:.1f}",
                         f"{r['exact_match']:.1%}"] for r in scores.values()]))

    # figures: the student's attention on one test sentence, BLEU by length, the curves
    figures = {}
    sentence, reference = _example_pair(data)
    src_ids = data.src_vocab.encode(sentence)
    tokens, lengths, alphas = decoder.run(greedy, _pad([src_ids]),
                                          _caps([src_ids], settings)[0], data.tgt_vocab,
                                          record=True)
    n = int(lengths[0])
    out_tokens = [data.tgt_vocab.id_to_token(int(x)) for x in tokens[0, :n]]
    steps = [t for t in sorted(alphas) if t < n]
    src_tokens = tokens_of(data.src_vocab, sentence)[:len(src_ids)]
    weights = np.stack([alphas[t][0, :len(src_ids)] for t in steps]) if steps else None
    if weights is not None and len(steps) == n:
        figures["attention"] = out / "attention.png"
        plots.attention_heatmap(weights, src_tokens, out_tokens, figures["attention"],
                                title="your LabModel: attention weights alpha_t of "
                                      "decode_step")
    by_len = {name: [(r["label"], r["bleu"]) for r in s["by_length"]]
              for name, s in scores.items()}
    figures["bleu_vs_length"] = out / "bleu_vs_length.png"
    plots.bleu_vs_length({"your LabModel": by_len["LabModel"], "seq2seq": by_len["seq2seq"]},
                         figures["bleu_vs_length"],
                         counts=[r["n"] for r in scores["LabModel"]["by_length"]])
    figures["training_curves"] = out / "training_curves.png"
    plots.training_curves({"your LabModel": student.history, "seq2seq": baseline.history},
                          figures["training_curves"], title="training and validation loss")

    record = dict(exercise_file=str(path), backend=backend, graded=graded,
                  settings=settings.signature(), decoding=greedy_note,
                  data=data.description,
                  example=dict(source=sentence, reference=reference,
                               output=data.tgt_vocab.decode([int(x) for x in tokens[0, :n]])),
                  models={k: {kk: vv for kk, vv in v.items() if kk != "history"}
                          for k, v in scores.items()},
                  histories={k: v["history"] for k, v in scores.items()},
                  figures={k: p.name for k, p in figures.items()},
                  wall_seconds=time.perf_counter() - wall0)
    report = out / "report.md"
    report.write_text(_report(record, scores, settings), encoding="utf-8")
    (out / "results.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(f"\nreport: {report}")
    for p in figures.values():
        print(f"figure: {p}")
    return record


def _epochs(n: int) -> str:
    return f"{n} epoch{'' if n == 1 else 's'}"


def lab_command(args) -> int:
    """``kerasattn lab``: check the run options, run the lab; returns the exit status.

    Args:
        args: parsed by the ``lab`` subparser (the run options, ``exercise_file`` and
            ``no_grade``).
    """
    from kerasattn.course.options import settings_from_args

    if args.minutes is None and not args.quick:
        args.minutes = LAB_MINUTES / 2
    settings = settings_from_args(args, lab_out_dir(), n_models=2)
    run_lab(args.exercise_file or LAB_FILE, settings, grade=not args.no_grade)
    return 0


def _report(record: dict, scores: dict, settings: Settings) -> str:
    """The text of ``report.md``."""
    lab, base = scores["LabModel"], scores["seq2seq"]
    hp = ", ".join(f"{k}={v}" for k, v in lab["hparams"].items())
    budget = (f"{settings.minutes:g} minutes of training per model" if settings.minutes
              else f"at most {_epochs(settings.epochs)} per model, no time limit")
    lines = [
        "# The lab: your Bahdanau model against seq2seq",
        "",
        f"- Model: `LabModel` from `{record['exercise_file']}` ({hp}), "
        + (f"graded {record['graded']} on {record['backend']} before training."
           if record["graded"] else "not graded before training (--no-grade)."),
        "- Baseline: the kit's `seq2seq` (no attention: one fixed context vector), "
        "trained on the same data with the same budget.",
        f"- Data: {record['data']}.",
        f"- Training: the kit's training path (teacher forcing, masked cross-entropy, "
        f"AdamW, early stopping on the validation loss), {budget}, backend "
        f"{record['backend']}.",
        f"- Decoding of the test split: {record['decoding']}.",
    ]
    if settings.quick:
        lines.append("- Quick mode: tiny data and models, one epoch. The numbers say "
                     "nothing about the models.")
    lines += [
        "",
        "| model | parameters | epochs | training (s) | test BLEU | exact match |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for label, r in (("your LabModel", lab), ("seq2seq", base)):
        lines.append(f"| {label} | {r['params']:,} | {r['epochs']} | "
                     f"{r['train_seconds']:.1f} | {r['bleu']:.1f} | {r['exact_match']:.1%} |")
    lines += ["", "BLEU is sacrebleu's corpus BLEU on the detokenized test sentences.", "",
              "## BLEU by source length", "",
              _by_length_table(lab["by_length"], base["by_length"]), "",
              f"![BLEU against source length]({record['figures']['bleu_vs_length']})", ""]
    ex = record["example"]
    lines += ["## Your model's attention", ""]
    if "attention" in record["figures"]:
        lines += [f"![attention]({record['figures']['attention']})", "",
                  "The weights `alpha_t` your `decode_step` returned while translating a "
                  "test sentence (rows: the words it generated, columns: the source "
                  "words)."]
    else:
        lines.append("(Your decoding did not return one attention row per generated word, "
                     "so no heatmap was drawn.)")
    lines += ["", f"- source: {ex['source']}", f"- your model: {ex['output']}",
              f"- reference: {ex['reference']}", "",
              "## Training curves", "",
              f"![training curves]({record['figures']['training_curves']})", "",
              "Figures (in this folder): "
              + ", ".join(f"`{name}`" for name in record["figures"].values()) + ".", "",
              "## What to look for", "",
              "- **BLEU against length.** seq2seq squeezes the whole source into one vector: "
              "its BLEU falls as sentences get longer. With attention, each output word "
              "reads the source again, so your model's line should stay high and flat "
              "(Bahdanau et al., 2015, Fig. 2). Buckets with few sentences are noisy.",
              "- **The heatmap.** Each row should put its weight on the source word being "
              "translated: mostly a diagonal, with a swap where French puts the adjective "
              "after the noun, and `<eos>` looking at the end of the sentence. A uniform "
              "or one-column map means the attention is not used (check the mask and the "
              "query s_{t-1}).",
              "- **The curves.** Training and validation loss should fall together; if "
              "your model is still falling steeply when the budget ends, give it more "
              "time with `--minutes`.",
              "- **If your model trails seq2seq**, run `kerasattn grade` on it again and "
              "compare its training loss with seq2seq's: a model that passes the checks "
              "but learns slowly usually needs more time, not a fix."]
    return "\n".join(lines) + "\n"
