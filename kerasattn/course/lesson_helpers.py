"""Helpers of single lessons: decoding comparison (lesson 04), evolution table (lesson 05)."""
from __future__ import annotations

import time

from kerasattn._env import MODEL_NAMES
from kerasattn.course.data import spread
from kerasattn.course.lesson import Lesson
from kerasattn.course.printing import format_table
from kerasattn.course.train import Trained, build


def compare_decoding(lesson: Lesson, trained: Trained, n_sentences: int = 8, beam: int = 4
                     ) -> list[dict]:
    """Decode test sentences greedily with and without the cache, and with a beam.

    Prints a timing table and the sentences where beam search differs from greedy.
    """
    d = lesson.data
    srcs = [s for s, _ in spread(sorted(d.test_pairs,   # by tokens: Japanese has no spaces
                                        key=lambda p: len(d.src_vocab.encode(p[0]))),
                                 n_sentences)]
    runs = []
    outputs = {}
    translator = lesson.translator(trained)
    for label, kwargs in (("greedy, K/V cache", dict(beam=1, cache=True)),
                          ("greedy, no cache", dict(beam=1, cache=False)),
                          (f"beam {beam}, cache", dict(beam=beam, cache=True))):
        kwargs.update(normalized=True, detokenized=False)
        # Warm-up on the same batch: compilation (JAX / TensorFlow: one per batch shape)
        # is not part of the comparison.
        translator.translate(srcs, **kwargs)
        start = time.perf_counter()
        hyps = translator.translate(srcs, **kwargs)
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


def accuracy_after_a_wrong_word(model, data, pairs, position: int = 2, seed: int = 0) -> dict:
    """Exposure bias, measured: how well a decoder recovers from one wrong input word.

    Each target is teacher-forced twice: once with the reference prefix, once with the
    reference word at decoder input ``position`` (``y_position``) replaced by another word
    drawn at random from the target vocabulary, the kind of mistake greedy decoding makes.
    The token accuracy on the labels from ``position`` on (the words predicted after the
    wrong one) is compared.

    Args:
        model: a trained model of the kit.
        data: the lesson's :class:`~kerasattn.course.data.LessonData` (vocabularies).
        pairs: ``(source, target)`` pairs; those with fewer than ``position + 2`` target
            words are skipped.
        position: the decoder input replaced (1 = the first word after ``<bos>``).
        seed: seed of the replacement words.

    Returns:
        ``dict(clean, corrupted, drop, n)``: accuracies after the position (0-1), their
        difference, and the number of pairs used.
    """
    import numpy as np

    from kerasattn.data import make_arrays

    pairs = [p for p in pairs if len(data.tgt_vocab.encode(p[1])) >= position + 2]
    if not pairs:
        raise ValueError(f"pairs: none has {position + 2} target tokens or more")
    arrays = make_arrays(pairs, data.src_vocab, data.tgt_vocab)
    enc, dec, labels = (arrays[k] for k in ("encoder_inputs", "decoder_inputs", "labels"))
    rng = np.random.default_rng(seed)
    wrong = dec.copy()
    gold = dec[:, position]
    words = np.arange(4, len(data.tgt_vocab))                    # no <pad> <unk> <bos> <eos>
    pick = rng.choice(words, size=len(dec))
    clash = pick == gold
    pick[clash] = words[(np.searchsorted(words, pick[clash]) + 1) % len(words)]
    wrong[:, position] = pick                                     # (N, T): one wrong input
    after = (labels != 0) & (np.arange(labels.shape[1])[None, :] >= position)

    def accuracy(decoder_inputs):
        logits = model.predict({"encoder_inputs": enc, "decoder_inputs": decoder_inputs},
                               batch_size=128, verbose=0)        # (N, T, V)
        return float(((logits.argmax(-1) == labels) & after).sum() / after.sum())

    clean, corrupted = accuracy(dec), accuracy(wrong)
    return dict(clean=clean, corrupted=corrupted, drop=clean - corrupted, n=len(pairs))
