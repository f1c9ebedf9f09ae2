"""A lesson's data: the corpus (built-in or a Tatoeba file), vocabularies and arrays."""
from __future__ import annotations

import dataclasses

from kerasattn._env import UsageError
from kerasattn.course.options import DEFAULT_SIZES, QUICK_SIZES, Settings, check_data_path


@dataclasses.dataclass
class LessonData:
    """A corpus with its vocabularies and model-ready arrays.

    Attributes:
        corpus: the :class:`kerasattn.data.Corpus` (train / valid / test pairs).
        src_vocab, tgt_vocab: the tokenizers (word ``Vocabulary`` or ``SubwordTokenizer``,
            see ``tokenizer``), built on the training split.
        train, valid: dicts of arrays from ``kerasattn.data.make_arrays``.
        test_pairs: the ``(source, target)`` pairs scored by :meth:`Lesson.evaluate`.
        description: one line saying what the data is.
        real: the data is a real corpus (``--data``): the data-driven recipe
            (:mod:`kerasattn.training.recipes`) chooses tokenizer and training settings.
        stats: :func:`kerasattn.training.recipes.corpus_stats` of the corpus (None when built in).
        tokenizer: ``"word"`` or ``"subword"``: the tokenizer the vocabularies are.
        max_train_tokens: the recipe's length cap on training pairs (None: no cap).
        src_lang, tgt_lang: language codes of the two sides (normalisation, BLEU).
        test_sources, test_references: the test split grouped by source sentence
            (:func:`kerasattn.metrics.group_references`), for multi-reference BLEU.
        text_reasons: why the tokenizer, its size and the length cap were chosen
            (:attr:`kerasattn.training.recipes.PreparedText.reasons`).
        train_pairs, valid_pairs: the ``(source, target)`` pairs of ``train`` and ``valid``.
    """

    corpus: object
    src_vocab: object
    tgt_vocab: object
    train: dict
    valid: dict
    test_pairs: list
    description: str
    real: bool = False
    stats: dict | None = None
    tokenizer: str = "word"
    max_train_tokens: int | None = None
    src_lang: str = "en"
    tgt_lang: str = "fr"
    test_sources: list = dataclasses.field(default_factory=list)
    test_references: list = dataclasses.field(default_factory=list)
    text_reasons: dict = dataclasses.field(default_factory=dict)
    train_pairs: list = dataclasses.field(default_factory=list)
    valid_pairs: list = dataclasses.field(default_factory=list)

    @property
    def bleu_tokenize(self) -> str:
        """The sacrebleu tokenizer for the target side (``"char"`` for Japanese...)."""
        from kerasattn.training.recipes import bleu_tokenize_for

        return bleu_tokenize_for(self.tgt_lang) if self.real else "13a"

    def with_test_pairs(self, pairs) -> "LessonData":
        """This data scored on ``pairs`` instead of its test split (regrouped by source
        for multi-reference BLEU)."""
        from kerasattn.metrics import group_references

        pairs = list(pairs)
        if not pairs:
            raise ValueError("pairs: no test pair given")
        sources, references = group_references(pairs)
        return dataclasses.replace(self, test_pairs=pairs, test_sources=sources,
                                   test_references=references)

    def recipe(self, name: str, budget_seconds: float | None = None):
        """The data-driven :class:`kerasattn.training.recipes.Recipe` of model ``name`` on this
        corpus (with this data's tokenizer and length cap) for a training budget, or None
        for the built-in one."""
        if not self.real:
            return None
        from kerasattn.training.recipes import recipe_for, settle_pad_multiple

        r = recipe_for(name, self.stats, tokenizer=self.tokenizer,
                       budget_seconds=budget_seconds)
        settle_pad_multiple(r, self.train, budget_seconds, self.valid)
        r.max_train_tokens = self.max_train_tokens
        r.reasons = {**self.text_reasons, **{k: v for k, v in r.reasons.items()
                                             if k not in self.text_reasons}}
        if "max_length" in r.model_kwargs and self.max_train_tokens:
            r.model_kwargs["max_length"] = max(256, 2 * self.max_train_tokens)
        return r


def load_data(settings: Settings) -> LessonData:
    """Load the built-in corpus (or ``settings.data``), build vocabularies and arrays."""
    from kerasattn import data as kdata

    if settings.data:
        return _load_real(settings)
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
                      valid=valid, test_pairs=list(test_pairs), description=what,
                      train_pairs=list(train_pairs), valid_pairs=list(valid_pairs))


def spread(pairs, n):
    """``n`` pairs evenly spread over ``pairs`` (keeps the length mix of a sorted split)."""
    pairs = list(pairs)
    if n >= len(pairs):
        return pairs
    step = len(pairs) / n
    return [pairs[int(i * step)] for i in range(n)]



def _load_real(settings: Settings) -> LessonData:
    """A real corpus (``--data``): tokenizers and length cap by the data-driven recipe."""
    from kerasattn import data as kdata
    from kerasattn.metrics import group_references
    from kerasattn.training import recipes

    value = check_data_path(settings.data)
    if isinstance(value, str):  # a language code: fetched once into the Keras cache
        import os

        try:
            path = kdata.fetch_tatoeba(value, url=os.environ.get("KERASATTN_DATA_URL") or None)
        except kdata.TatoebaDownloadError as err:
            raise UsageError(f"--data {value}: {err} Check the language code against the "
                             "list on https://www.manythings.org/anki/.") from None
    else:
        path = kdata.resolve_data(str(value))
    # a language code names the other language even when a mirror's file name does not
    corpus = kdata.load_tatoeba(path=str(path), seed=settings.seed, reverse=settings.reverse,
                                lang=value if isinstance(value, str) else None)
    info = corpus.info or {}
    what = f"Tatoeba file {path}"
    report = getattr(corpus, "report", None)
    if report is not None:
        what += f" ({report.summary()})"
    tokenizer = None if settings.tokenizer == "auto" else settings.tokenizer
    # the tokenizers and the length cap do not depend on the model
    text = recipes.prepare_text(corpus, tokenizer=tokenizer)
    src_vocab, tgt_vocab = text.src_vocab, text.tgt_vocab
    sizes = QUICK_SIZES if settings.quick else DEFAULT_SIZES
    test_pairs = list(corpus.test)
    if settings.quick or settings.train_size:
        train_pairs = spread(corpus.train, settings.train_size or sizes["train"])
    else:
        train_pairs = list(text.train_pairs)
    train = kdata.make_arrays(train_pairs, src_vocab, tgt_vocab)
    n_train = len(train_pairs)
    stats = text.stats
    if settings.train_size and not settings.quick:  # the recipe is for the pairs trained on
        stats = dict(stats, train_pairs=n_train)
    valid_pairs = spread(corpus.valid or corpus.train[:1], sizes["valid"] or len(corpus.valid))
    valid = kdata.make_arrays(valid_pairs, src_vocab, tgt_vocab)
    n_test = sizes["test"] if settings.quick else settings.max_test
    if n_test is not None:
        test_pairs = spread(test_pairs, n_test)
    sources, references = group_references(test_pairs)
    what += (f" ({n_train:,} training pairs, {len(valid_pairs):,} validation, "
             f"{len(test_pairs):,} test pairs from {len(sources):,} distinct sources)")
    return LessonData(corpus=corpus, src_vocab=src_vocab, tgt_vocab=tgt_vocab, train=train,
                      valid=valid, test_pairs=test_pairs, description=what, real=True,
                      stats=stats, tokenizer=text.tokenizer,
                      max_train_tokens=text.max_train_tokens,
                      src_lang=str(info.get("src_lang", "en")),
                      tgt_lang=str(info.get("tgt_lang", "fr")), test_sources=sources,
                      test_references=references, text_reasons=text.reasons,
                      train_pairs=train_pairs, valid_pairs=list(valid_pairs))


def fetch_command(lang: str, url: str | None = None, cache_dir=None) -> int:
    """``kerasattn data fetch LANG``: download a manythings.org Tatoeba file into the cache, print
    its licence and path. Returns the exit status."""
    import os
    import sys

    from kerasattn.data import LICENCE, TatoebaDownloadError, fetch_tatoeba, tatoeba_url

    tatoeba_url(lang)  # checks the code (ValueError naming `lang`)
    url = url or os.environ.get("KERASATTN_DATA_URL") or None
    try:
        path = fetch_tatoeba(lang, url=url, cache_dir=cache_dir, verbose=False)
    except TatoebaDownloadError as err:
        raise UsageError(f"LANG {lang}: {err} Check the language code against the list on "
                         "https://www.manythings.org/anki/; a file downloaded by hand is "
                         "used with `kerasattn lesson 0 --data FILE`.") from None
    print(LICENCE)
    print(path)
    print(f"use it with: kerasattn lesson 0 --data {path}   (or --data {lang.lower()})",
          file=sys.stderr)
    return 0
