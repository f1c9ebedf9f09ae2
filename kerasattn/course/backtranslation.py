"""Back-translation (Sennrich, Haddow and Birch, 2016) on a lesson's data.

Parallel pairs are scarce, target-language text alone is plentiful. Back-translation:

1. train a model in the *reverse* direction (target -> source) on the parallel pairs
   (:func:`reversed_data`);
2. translate target-only text with it into synthetic sources (:func:`back_translate`);
3. train the forward model on the parallel pairs plus the synthetic pairs
   (:func:`with_training_pairs`): the sources are noisy, the targets (what the decoder
   learns to write) are real text.

:func:`split_parallel_and_monolingual` makes the setting from a lesson's training split:
a few parallel pairs, and the *target side only* of other pairs, the monolingual text.
Vocabularies stay the lesson's (built on the whole training split), so every model reads
and writes the same tokens and is scored on the same test split.
"""
from __future__ import annotations

import dataclasses

from kerasattn.course.data import LessonData, spread


def split_parallel_and_monolingual(data: LessonData, n_parallel: int, n_monolingual: int
                                   ) -> tuple[list[tuple[str, str]], list[str]]:
    """``n_parallel`` training pairs and the targets of ``n_monolingual`` *other* ones.

    Both are spread evenly over the training split (its length mix is kept), and no
    monolingual sentence is the target of a parallel pair.

    Args:
        data: the lesson's data (``data.train_pairs``).
        n_parallel: parallel pairs to keep (>= 1).
        n_monolingual: target-only sentences to keep (>= 1).

    Returns:
        ``(parallel_pairs, monolingual_targets)``.

    Raises:
        ValueError: a count below 1, or more than the training split holds.
    """
    pairs = list(data.train_pairs)
    for name, n in (("n_parallel", n_parallel), ("n_monolingual", n_monolingual)):
        if n < 1:
            raise ValueError(f"{name} must be >= 1; received {n}")
    if n_parallel + n_monolingual > len(pairs):
        raise ValueError(f"n_parallel + n_monolingual must be at most the {len(pairs):,} "
                         f"training pairs; received {n_parallel:,} + {n_monolingual:,}")
    parallel = spread(pairs, n_parallel)
    used = {id(p) for p in parallel}
    rest = [p for p in pairs if id(p) not in used]
    taken = {t for _, t in parallel}
    monolingual = [t for _, t in spread([p for p in rest if p[1] not in taken],
                                        n_monolingual)]
    return parallel, monolingual


def with_training_pairs(data: LessonData, pairs, description: str) -> LessonData:
    """``data`` with its training split replaced by ``pairs`` (same vocabularies,
    validation and test; on a real file, the recipe is chosen for ``len(pairs)`` pairs)."""
    from kerasattn.data import make_arrays

    pairs = list(pairs)
    if not pairs:
        raise ValueError("pairs: no training pair given")
    stats = None if data.stats is None else dict(data.stats, train_pairs=len(pairs))
    return dataclasses.replace(data, train=make_arrays(pairs, data.src_vocab, data.tgt_vocab),
                               train_pairs=pairs, description=description, stats=stats)


def reversed_data(data: LessonData, pairs, description: str) -> LessonData:
    """The reverse direction (target -> source) trained on ``pairs``: vocabularies,
    languages and validation pairs swapped; its test pairs are the lesson's, swapped."""
    from kerasattn.data import make_arrays

    flip = [(t, s) for s, t in pairs]
    valid = [(t, s) for s, t in data.valid_pairs]
    stats = None if data.stats is None else dict(  # the recipe's view of the reverse data
        data.stats, src=data.stats["tgt"], tgt=data.stats["src"], train_pairs=len(flip))
    return dataclasses.replace(
        data, src_vocab=data.tgt_vocab, tgt_vocab=data.src_vocab, stats=stats,
        train=make_arrays(flip, data.tgt_vocab, data.src_vocab),
        valid=make_arrays(valid, data.tgt_vocab, data.src_vocab),
        train_pairs=flip, valid_pairs=valid, src_lang=data.tgt_lang,
        tgt_lang=data.src_lang, description=description,
    ).with_test_pairs([(t, s) for s, t in data.test_pairs])


def back_translate(translator, targets, batch_size: int = 128) -> list[tuple[str, str]]:
    """Synthetic pairs ``(translated source, real target)`` from target-only text.

    Args:
        translator: a :class:`kerasattn.inference.Translator` of the reverse direction.
        targets: target-language sentences (normalised, as in the corpus).
        batch_size: sentences decoded together (greedy).

    Returns:
        One ``(synthetic_source, target)`` pair per target whose translation is not empty.
    """
    targets = list(targets)
    sources = translator.translate(targets, normalized=True, detokenized=False,
                                   batch_size=batch_size)
    return [(s, t) for s, t in zip(sources, targets) if s.strip()]
