"""Checkpoints of ``kerasattn train`` / ``translate``: a model with its vocabularies."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kerasattn.course.data import load_data, spread
from kerasattn.course.options import QUICK_MAX_DECODE, Settings, check_model_name
from kerasattn.course.train import train_model
from kerasattn.course.translate import attention_record, translate_batch, translate_with_attention

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
    from kerasattn.training.checkpointing import atomic_write

    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    atomic_write(str(d / MODEL_FILE), lambda tmp: model.save(tmp))
    atomic_write(str(d / SRC_VOCAB_FILE), lambda tmp: src_vocab.save(tmp))
    atomic_write(str(d / TGT_VOCAB_FILE), lambda tmp: tgt_vocab.save(tmp))
    atomic_write(str(d / META_FILE), lambda tmp: Path(tmp).write_text(
        json.dumps(meta, indent=1)))
    return d


def load_checkpoint(directory) -> Checkpoint:
    """Load a checkpoint directory written by :func:`save_checkpoint` (word or subword
    tokenizers: :func:`kerasattn.training.checkpointing.load_translator`).

    Raises:
        ValueError: the directory or one of its files is missing (names what is missing).
    """
    from kerasattn.training.checkpointing import load_translator

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
    tr = load_translator(d)
    return Checkpoint(name=tr.name, model=tr.model, src_vocab=tr.src_vocab,
                      tgt_vocab=tr.tgt_vocab, meta=tr.meta, path=d)


def train_and_save(name: str, settings: Settings) -> dict:
    """``kerasattn train``: train ``name``, score it on the test split, save a checkpoint.

    Args:
        name: one of the seven model names.
        settings: from :func:`kerasattn.course.options.settings_from_args`; the checkpoint
            goes to ``settings.out``.

    Returns:
        The checkpoint's ``meta.json`` record (scores, timings, settings, history).
    """
    import keras

    check_model_name(name)
    d = load_data(settings)
    print(f"data: {d.description}; vocabularies {len(d.src_vocab)} ({d.src_lang}) / "
          f"{len(d.tgt_vocab)} ({d.tgt_lang}), {d.tokenizer} tokens", flush=True)
    recipe = d.recipe(name, 60.0 * settings.minutes if settings.minutes else None)
    if recipe is not None:
        print(recipe.describe() + ("\n  (quick mode: tiny model, 1 epoch, the recipe's "
                                   "tokenizer only)" if settings.quick else ""), flush=True)
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
                  src_lang=d.src_lang, tgt_lang=d.tgt_lang, tokenizer=d.tokenizer,
                  precision=trained.precision,
                  history=trained.history,
                  # a fixed sample of test pairs: the backend demo scores these everywhere
                  samples=[list(p) for p in spread(d.test_pairs, 32)])
    if d.real:
        # one translation per distinct test source, scored against all of its references
        first = dict(zip(srcs, hyps))
        grouped = metrics.evaluate_grouped([first[s] for s in d.test_sources],
                                           d.test_references, tokenize=d.bleu_tokenize)
        result.update(bleu=float(metrics.multi_reference_bleu(
                          hyps, [[r] for r in refs], tokenize=d.bleu_tokenize)),
                      bleu_single=grouped["bleu_single"], bleu_multi=grouped["bleu_multi"],
                      exact_match_multi=grouped["exact_match_multi"],
                      test_sources=grouped["sources"], bleu_tokenize=d.bleu_tokenize,
                      recipe=recipe.reasons, data=str(settings.data))
        result["example_source"] = min(d.test_sources, key=lambda s: abs(len(s) - 30))
    save_checkpoint(settings.out, trained.model, d.src_vocab, d.tgt_vocab, result)
    return result


def translate_sentence(ckpt: Checkpoint, sentence: str, beam: int = 1,
                       attention: bool = False) -> dict:
    """``kerasattn translate``: one sentence, optionally with its cross-attention."""
    if not sentence.strip():
        raise ValueError("sentence: expected a non-empty sentence; received an empty string")
    quick = is_quick(ckpt)
    rec = translate_with_attention(ckpt.model, sentence, ckpt.src_vocab, ckpt.tgt_vocab,
                                   beam=beam, max_length=QUICK_MAX_DECODE if quick else None,
                                   compile=False if quick else "auto",
                                   src_lang=str(ckpt.meta.get("src_lang", "en")))
    w = attention_record(rec["attention"], kind="cross") if attention else None
    if w is not None and w.shape[0] == 1:
        w = w[0]
    rec["attention"] = w
    rec["attention_label"] = "cross-attention of the last decoder layer"
    return rec




def is_quick(ckpt: Checkpoint) -> bool:
    """Whether ``ckpt`` was trained in quick mode (tiny: its outputs are capped)."""
    return bool(ckpt.meta.get("settings", {}).get("quick"))


def translate_lines(ckpt: Checkpoint, input_path, output_path=None, beam: int = 1) -> list:
    """``kerasattn translate CHECKPOINT --input FILE``: one translation per input line, in
    order, to ``output_path`` or standard output (:func:`kerasattn.inference.translate_file`).
    """
    from kerasattn.inference import translate_file
    from kerasattn.training.checkpointing import Translator

    tr = Translator(name=ckpt.name, model=ckpt.model, src_vocab=ckpt.src_vocab,
                    tgt_vocab=ckpt.tgt_vocab, meta=ckpt.meta, path=str(ckpt.path))
    return translate_file(tr, input_path, output_path, beam=beam,
                          max_length=QUICK_MAX_DECODE if is_quick(ckpt) else None)
