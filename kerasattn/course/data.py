"""A lesson's data: the corpus (built-in or a Tatoeba file), vocabularies and arrays."""
from __future__ import annotations

import dataclasses

from kerasattn.course.options import DEFAULT_SIZES, QUICK_SIZES, Settings, check_data_path


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
    train_pairs = spread(train_pairs, n_train)
    valid_pairs = spread(valid_pairs, sizes["valid"] or len(valid_pairs))
    test_pairs = spread(test_pairs, sizes["test"] or len(test_pairs))
    if settings.max_test is not None:
        test_pairs = spread(test_pairs, settings.max_test)
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


def spread(pairs, n):
    """``n`` pairs evenly spread over ``pairs`` (keeps the length mix of a sorted split)."""
    pairs = list(pairs)
    if n >= len(pairs):
        return pairs
    step = len(pairs) / n
    return [pairs[int(i * step)] for i in range(n)]

