"""Recipes chosen from the data: the built-in corpus keeps the lessons' settings exactly;
a real corpus gets settings that follow from its figures (tokenizer, vocabulary, batch,
learning rate, dropout, position shift, length cap)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kerasattn import training
from kerasattn.data import Corpus, SubwordTokenizer, Vocabulary, builtin_corpus, load_tatoeba
from kerasattn.models import MODEL_NAMES
from kerasattn.training import recipes

EXCERPT = Path(__file__).parent / "data" / "jpn-eng-excerpt.txt"


@pytest.fixture(scope="module")
def builtin_stats():
    return recipes.corpus_stats(builtin_corpus())


@pytest.fixture(scope="module")
def japanese():
    return load_tatoeba(EXCERPT, max_length=None, reverse=True, test_fraction=0.1)


# The lessons' settings, written out by hand (docs/lessons.md): learning rate, warm-up and
# batch size per model; batches grouped by source length except on JAX.
LESSON_SETTINGS = {
    "seq2seq": dict(learning_rate=3e-3),
    "bahdanau": dict(learning_rate=3e-3),
    "bahdanau_multihead": dict(learning_rate=2e-3),
    "encoder_self_attention": dict(learning_rate=2e-3),
    "decoder_self_attention": dict(learning_rate=2e-3),
    "transformer_decoder_on_gru": dict(learning_rate=2e-3, warmup_steps=200, batch_size=32),
    "transformer": dict(learning_rate=2e-3, warmup_steps=200, batch_size=32),
}


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_builtin_corpus_gets_exactly_the_lesson_settings(builtin_stats, backend):
    assert builtin_stats["builtin"] and not builtin_stats["src"]["spaceless"]
    assert set(LESSON_SETTINGS) == set(MODEL_NAMES)
    for name in MODEL_NAMES:
        recipe = recipes.recipe_for(name, builtin_stats, backend)
        bucket = False if backend == "jax" else "source"
        assert recipe.train == dict(bucket=bucket, **LESSON_SETTINGS[name])
        assert recipe.train == training.recommended_training(name, backend)
        assert recipe.model_kwargs == {} and recipe.tokenizer == "word"
        assert recipe.vocab == {"min_freq": 1} and recipe.max_train_tokens is None


def test_every_decision_is_a_field_with_its_reason_beside_it(japanese):
    """Recipes are data: each reason is keyed by the decision it explains, and the fields
    hold the values code reads (no code searches the prose)."""
    prepared = recipes.prepare(japanese, "transformer", budget_seconds=60)
    r = prepared.recipe
    assert set(r.reasons) <= set(recipes.DECISIONS)
    assert {"tokenizer", "vocab", "max_train_tokens", "optimizer", "regularisation",
            "position_shift"} <= set(r.reasons)
    assert str(r.max_train_tokens) in r.reasons["max_train_tokens"]
    assert f"{r.vocab['vocab_size']} subword pieces" in r.reasons["vocab"]
    assert f"{r.train['learning_rate']:g}" in r.reasons["optimizer"]
    assert r.describe().splitlines()[1:] == [f"  - {v}" for v in r.reasons.values()]
    # the tokenizer does not depend on the model: the lessons read it from prepare_text
    text = recipes.prepare_text(japanese)
    assert text.tokenizer == r.tokenizer and text.vocab == r.vocab
    assert text.src_vocab == prepared.src_vocab and text.max_train_tokens == r.max_train_tokens
    asked = recipes.prepare_text(japanese, tokenizer="word", vocab={"min_freq": 2})
    assert asked.reasons["tokenizer"] == "word tokens (as asked)"
    assert asked.vocab == {"min_freq": 2} and "override vocab" in asked.reasons


def test_builtin_prepare_keeps_every_pair_and_word_vocabularies():
    corpus = builtin_corpus()
    prepared = recipes.prepare(corpus, "bahdanau")
    assert isinstance(prepared.src_vocab, Vocabulary) and prepared.dropped == 0
    assert len(prepared.train["labels"]) == len(corpus.train)
    assert prepared.src_vocab == Vocabulary.build([s for s, _ in corpus.train])


def test_japanese_gets_subwords_and_real_data_settings(japanese):
    stats = recipes.corpus_stats(japanese)
    assert stats["src"]["spaceless"] and not stats["tgt"]["spaceless"]
    recipe = recipes.recipe_for("transformer", stats, "jax")
    assert recipe.tokenizer == "subword" and recipe.vocab == {"vocab_size": 1000}
    assert recipe.model_kwargs["max_position_shift"] == 0
    assert recipe.train["warmup_steps"] is None and recipe.train["batch_size"] == 32
    assert recipe.train["bucket"] is False                       # JAX: one shape
    assert recipe.model_kwargs["dropout"] == 0.3                 # a few hundred pairs
    assert "written without spaces" in recipe.describe()
    gru = recipes.recipe_for("bahdanau", stats, "torch")
    assert gru.train["bucket"] is True and "max_position_shift" not in gru.model_kwargs
    forced = recipes.recipe_for("transformer", stats, tokenizer="word")
    assert forced.tokenizer == "word" and forced.vocab == {"min_freq": 1}


def test_settings_follow_the_size_of_the_data():
    def stats(n, singletons=0.2):
        side = dict(mean_words=7.0, p99_words=20, max_words=40, mean_chars=35.0,
                    word_types=5000, singleton_share=singletons, spaceless_share=0.0,
                    spaceless=False)
        return dict(builtin=False, train_pairs=n, train_sources=n, src=side, tgt=dict(side))

    small, mid, large = (recipes.recipe_for("bahdanau", stats(n)) for n in (1500, 8000, 40000))
    assert [r.model_kwargs["dropout"] for r in (small, mid, large)] == [0.3, 0.2, 0.1]
    assert [r.train["batch_size"] for r in (small, mid, large)] == [32, 64, 64]
    assert small.vocab == {"min_freq": 1} and large.vocab == {"min_freq": 2}
    assert "units" not in mid.model_kwargs and large.model_kwargs["units"] == 128
    # JAX: one batch shape on a small corpus, bucket widths on a large one
    jax_mid, jax_large = (recipes.recipe_for("transformer", stats(n), "jax")
                          for n in (8000, 40000))
    assert jax_mid.train["bucket"] is False and jax_large.train["bucket"] is True
    assert recipes.recipe_for("transformer", stats(8000), "torch").train["bucket"] is True
    # widths: exact where a new width costs no compilation, multiples of 16 on JAX
    assert jax_large.train["pad_multiple"] == recipes.JAX_PAD_MULTIPLE == 16
    assert [recipes.recipe_for("transformer", stats(40000), b).train["pad_multiple"]
            for b in ("tensorflow", "torch")] == [1, 1]
    rare = recipes.recipe_for("transformer", stats(40000, singletons=0.6))
    assert rare.tokenizer == "subword" and rare.vocab == {"vocab_size": 8000}


def test_prepare_trains_tokenizers_on_train_only_and_groups_the_test(japanese):
    prepared = recipes.prepare(japanese, "transformer")
    assert isinstance(prepared.src_vocab, SubwordTokenizer)
    train_sources = {s for s, _ in japanese.train}
    assert not train_sources & set(prepared.test_sources)
    assert sum(len(r) for r in prepared.test_references) == len(japanese.test)
    cap = prepared.recipe.max_train_tokens
    assert cap >= 30 and prepared.train["encoder_inputs"].shape[1] <= cap
    assert len(prepared.train["labels"]) == len(japanese.train) - prepared.dropped


def test_bad_arguments(builtin_stats):
    with pytest.raises(ValueError, match="name.*must be one of.*received 'gpt'"):
        recipes.recipe_for("gpt", builtin_stats)
    with pytest.raises(ValueError, match="tokenizer must be 'word', 'subword' or None"):
        recipes.recipe_for("transformer", builtin_stats, tokenizer="bpe")
    with pytest.raises(ValueError, match="stats must be the dict of kerasattn.training.recipes"):
        recipes.recipe_for("transformer", {"train_pairs": 3})
    with pytest.raises(ValueError, match="non-empty training split"):
        recipes.corpus_stats(Corpus(train=[], valid=[], test=[]))


def test_a_budget_too_short_to_over_fit_trains_without_dropout_smoothing_or_clip():
    side = dict(mean_words=7.0, p99_words=20, max_words=40, mean_chars=35.0, word_types=5000,
                singleton_share=0.2, spaceless_share=0.0, spaceless=False)
    stats = dict(builtin=False, train_pairs=40000, train_sources=40000, src=side,
                 tgt=dict(side))
    # 40,000 pairs x 8 target tokens = 320,000 tokens per epoch
    assert recipes.estimated_epochs(stats, None) is None
    # 240 s at 5,000 tokens/s over 320,000 tokens per pass
    assert recipes.estimated_epochs(stats, 240, gpu=False) == pytest.approx(3.75)
    assert recipes.estimated_epochs(stats, 240, gpu=True) == pytest.approx(37.5)
    short = recipes.recipe_for("transformer", stats, "jax", budget_seconds=240, gpu=False)
    assert short.model_kwargs["dropout"] == 0.0
    assert short.train["label_smoothing"] == 0.0
    assert short.reasons["regularisation"].startswith("no dropout and no label smoothing: "
                                                      "the 240 s budget allows about 3.8")
    long_ = recipes.recipe_for("transformer", stats, "jax", budget_seconds=3600, gpu=False)
    on_gpu = recipes.recipe_for("transformer", stats, "jax", budget_seconds=240, gpu=True)
    unlimited = recipes.recipe_for("transformer", stats, "jax")
    assert long_.model_kwargs["dropout"] == on_gpu.model_kwargs["dropout"] == 0.1
    assert unlimited.model_kwargs["dropout"] == 0.1
    assert long_.train["label_smoothing"] == unlimited.train["label_smoothing"] == 0.1
    # a short budget also trains a Transformer decoder unclipped; a GRU decoder keeps the
    # clip (training.train's default of 1.0), as does any model given time to converge
    assert short.train["clipnorm"] is None
    assert "no gradient clipping" in short.reasons["clipnorm"]
    short_gru = recipes.recipe_for("bahdanau", stats, "jax", budget_seconds=240, gpu=False)
    for kept in (short_gru, long_, unlimited):
        assert "clipnorm" not in kept.train
    with pytest.raises(ValueError, match="budget_seconds must be a number > 0"):
        recipes.recipe_for("transformer", stats, "jax", budget_seconds=-5)


def test_a_budget_of_some_passes_trains_a_transformer_decoder_lightly_regularised():
    side = dict(mean_words=7.0, p99_words=20, max_words=40, mean_chars=35.0, word_types=5000,
                singleton_share=0.2, spaceless_share=0.0, spaceless=False)
    stats = dict(builtin=False, train_pairs=15000, train_sources=15000, src=side,
                 tgt=dict(side))
    # 15,000 pairs x 8 target tokens: 240 s at 5,000 tokens/s is 10 passes
    assert recipes.estimated_epochs(stats, 240, gpu=False) == pytest.approx(10.0)
    assert recipes.FEW_EPOCHS < 10 < recipes.SHORT_RUN_EPOCHS
    light = recipes.recipe_for("transformer", stats, "torch", budget_seconds=240, gpu=False)
    assert light.model_kwargs["dropout"] == 0.1                   # 0.2 by size alone
    assert light.train["label_smoothing"] == 0.0 and light.train["clipnorm"] is None
    assert light.reasons["regularisation"].startswith("dropout 0.1, no label smoothing: the "
                                                      "240 s budget allows about 10.0")
    assert "no gradient clipping" in light.reasons["clipnorm"]
    # its batches are grouped by length: every target token weighs the same in the loss
    assert light.train["bucket"] and light.train["token_weighting"] == "corpus"
    assert "every target token weighs the same" in light.reasons["token_weighting"]
    # JAX groups only from JAX_BUCKET_PAIRS pairs: one width, nothing to re-weigh
    small_jax = recipes.recipe_for("transformer", dict(stats, train_pairs=8000), "jax",
                                   budget_seconds=128, gpu=False)
    assert not small_jax.train["bucket"] and "token_weighting" not in small_jax.train
    # a GRU decoder, or a budget with room to over-fit, keeps the size rule and smoothing
    gru = recipes.recipe_for("bahdanau", stats, "torch", budget_seconds=240, gpu=False)
    long_ = recipes.recipe_for("transformer", stats, "torch", budget_seconds=3600, gpu=False)
    for kept in (gru, long_):
        assert kept.model_kwargs["dropout"] == 0.2 and kept.train["label_smoothing"] == 0.1
        assert "clipnorm" not in kept.train and "token_weighting" not in kept.train
    # without label smoothing the `transformer` trains to the end of the budget: no early
    # stopping on a validation loss that rises while accuracy still does
    assert light.train["early_stopping_patience"] is None
    assert "no early stopping" in light.reasons["early_stopping"]
    assert "early stopping" not in light.reasons["optimizer"]
    on_gru = recipes.recipe_for("transformer_decoder_on_gru", stats, "torch",
                                budget_seconds=240, gpu=False)
    for kept in (gru, long_, on_gru):
        assert kept.train["early_stopping_patience"] == 3
        assert kept.reasons["early_stopping"].startswith("early stopping after 3 epochs")
    # and it ends on the moving average of its weights; the others on their last or best
    assert light.train["ema_momentum"] == recipes.EMA_MOMENTUM
    assert light.reasons["weight_averaging"].startswith(
        f"training ends on the moving average of the weights (momentum "
        f"{recipes.EMA_MOMENTUM:g}, about the last 500 of some 2,350 steps)")
    # fewer steps (3,000 pairs, 10 passes of 47 batches): an average over a third of them,
    # so that the first steps' weights have faded from it
    few = dict(stats, train_pairs=3000, train_sources=3000)
    assert recipes.estimated_epochs(few, 48, gpu=False) == pytest.approx(10.0)
    small = recipes.recipe_for("transformer", few, "torch", budget_seconds=48, gpu=False)
    assert small.train["ema_momentum"] == round(1 - 3 / 470, 4) < recipes.EMA_MOMENTUM
    assert "(momentum 0.9936, about the last 156 of some 470 steps)" in \
        small.reasons["weight_averaging"]
    for kept in (gru, long_, on_gru):
        assert "ema_momentum" not in kept.train and "weight_averaging" not in kept.reasons


def test_a_target_written_without_spaces_counts_its_tokens_not_its_words():
    """English to Japanese: a Japanese sentence is one "word", so a word count would make a
    short budget look like many passes; the estimate reads characters, then the pieces."""
    english_to_japanese = load_tatoeba(EXCERPT, max_length=None, test_fraction=0.1)
    stats = recipes.corpus_stats(english_to_japanese)
    tgt, n = stats["tgt"], stats["train_pairs"]
    assert tgt["spaceless"] and tgt["mean_words"] < 2 < tgt["mean_chars"]
    chars = [len(t) for _, t in english_to_japanese.train]          # counted here
    assert recipes.estimated_epochs(stats, 100, gpu=False) == pytest.approx(
        100 * 5000 / (n * (sum(chars) / len(chars) + 1)))
    untimed = recipes.prepare(english_to_japanese, "transformer")
    mean_tokens = untimed.stats["tgt"]["mean_tokens"]
    labels = untimed.train["labels"]
    assert mean_tokens == pytest.approx((labels != 0).sum(axis=1).mean() - 1)  # minus EOS
    # a budget of 3 passes over the pieces would be over 6 passes over the "words"
    budget = 3 * n * (mean_tokens + 1) / recipes.CPU_TOKENS_PER_SECOND
    by_words = budget * recipes.CPU_TOKENS_PER_SECOND / (n * (tgt["mean_words"] + 1))
    assert by_words > recipes.FEW_EPOCHS
    timed = recipes.prepare(english_to_japanese, "transformer", budget_seconds=budget)
    assert timed.recipe.model_kwargs["dropout"] == 0.0
    assert timed.recipe.train["label_smoothing"] == 0.0 and timed.recipe.train["clipnorm"] is None
    assert "about 3.0 passes" in timed.recipe.reasons["regularisation"]
    assert "left out" in timed.recipe.reasons["max_train_tokens"]


def test_a_timed_real_data_recipe_keeps_a_constant_rate():
    side = dict(mean_words=7.0, p99_words=20, max_words=40, mean_chars=35.0, word_types=5000,
                singleton_share=0.2, spaceless_share=0.0, spaceless=False)
    stats = dict(builtin=False, train_pairs=40000, train_sources=40000, src=side,
                 tgt=dict(side))
    timed = recipes.recipe_for("bahdanau", stats, "torch", budget_seconds=240, gpu=False)
    assert timed.train["warmup_steps"] is None
    assert "constant learning rate 0.003" in timed.reasons["optimizer"]


def _length_groups(groups, width=32):
    """Arrays of ``(rows, source length, target length)`` groups, in that order."""
    import numpy as np

    rows = [(s, t) for n, s, t in groups for _ in range(n)]
    enc, dec = np.zeros((len(rows), width), "int32"), np.zeros((len(rows), width), "int32")
    for i, (s, t) in enumerate(rows):
        enc[i, :s], dec[i, :t] = 5, 5
    return {"encoder_inputs": enc, "decoder_inputs": dec, "labels": dec.copy()}


def test_jax_widths_are_chosen_by_the_passes_a_budget_buys():
    # 522 pairs sorted by target length into batches of 64 (exact source x target widths):
    # 3x5 twice, 10x12 twice (one with 10 rows of 3x5), 18x20 twice, 26x28 twice, and a last
    # batch of 10 rows at 26x28. Multiples of 8: 8x8, 16x16, 24x24, 32x32 and the 10-row
    # batch, 5 shapes, 128 * (16 + 32 + 48 + 64) + 10 * 64 = 21,120 positions; multiples
    # of 16: 16x16, 32x32 and the 10-row batch, 3 shapes, 25,216 positions. Passes bought,
    # (B - 4.5 * shapes) / positions, are equal at B = 68.9 s.
    arrays = _length_groups([(138, 3, 5), (128, 10, 12), (128, 18, 20), (128, 26, 28)])
    assert recipes.JAX_COMPILE_SECONDS == 4.5 and recipes.JAX_EVAL_COMPILE_SECONDS == 0.7
    assert [recipes.choose_pad_multiple(arrays, 64, b)[0] for b in (60, 68, 70, 240)] == [
        16, 16, 8, 8]
    chosen, why = recipes.choose_pad_multiple(arrays, 64, 240)
    assert why.startswith("5 training and 0 validation batch shapes to compile")
    assert "against 3 and 0 shapes and 1.19x the padded positions with multiples of 16" in why
    assert why.endswith("the most passes in the 240 s budget")
    # validation batches 3x5 and 10x12: two evaluation shapes with multiples of 8, one
    # with 16; equal passes at B = 73.9 s
    valid = _length_groups([(64, 3, 5), (64, 10, 12)])
    assert recipes.choose_pad_multiple(arrays, 64, 71)[0] == 8
    assert recipes.choose_pad_multiple(arrays, 64, 71, valid)[0] == 16
    assert recipes.choose_pad_multiple(arrays, 64, 75, valid)[0] == 8
    # a budget smaller than the compilations buys no pass either way: fewer shapes
    assert recipes.choose_pad_multiple(arrays, 64, 10)[0] == 16
    # one length: the same shapes, fewer positions, whatever the budget
    one = _length_groups([(128, 3, 5)])
    assert [recipes.choose_pad_multiple(one, 64, b)[0] for b in (2, 240, None)] == [8, 8, 8]
    # without a budget, compiling is paid once: the fewest positions
    chosen, why = recipes.choose_pad_multiple(arrays, 64, None)
    assert chosen == 8 and why.endswith("the fewest padded positions, in a run without a "
                                        "time budget")
    with pytest.raises(ValueError, match=r"multiples must be ints >= 1; received \(0, 8\)"):
        recipes.choose_pad_multiple(arrays, 64, 240, multiples=(0, 8))
    with pytest.raises(ValueError, match="budget_seconds must be a number > 0 or None; "
                                         "received 0"):
        recipes.choose_pad_multiple(arrays, 64, 0)


def test_prepare_on_jax_rounds_bucket_widths_to_the_chosen_multiple():
    import random

    rnd = random.Random(0)
    words = [f"w{i}" for i in range(300)]
    pairs = [(" ".join(rnd.choices(words, k=rnd.randint(2, 9))),
              " ".join(rnd.choices(words, k=rnd.randint(2, 9)))) for _ in range(10500)]
    corpus = Corpus(train=pairs, valid=pairs[:50], test=pairs[:50])
    chosen = []
    for budget in (240, 30):
        prepared = recipes.prepare(corpus, "transformer", backend="jax",
                                   budget_seconds=budget, tokenizer="word")
        expected, why = recipes.choose_pad_multiple(prepared.train, 64, budget,
                                                    prepared.valid)
        assert prepared.recipe.train["pad_multiple"] == expected
        assert f"rounded up to {expected} ({why})" in prepared.recipe.reasons["bucket"]
        chosen.append(expected)
    assert chosen == [8, 16]
    # TensorFlow and torch keep exact widths
    torch_recipe = recipes.prepare(corpus, "transformer", backend="torch", budget_seconds=240,
                                   tokenizer="word").recipe
    assert torch_recipe.train["pad_multiple"] == 1


def test_the_course_data_path_settles_the_same_widths(tmp_path, monkeypatch):
    """``kerasattn train --data FILE`` and the lessons get their recipe from
    ``LessonData.recipe``: on JAX it rounds widths to the multiple chosen from its own
    training arrays, as ``prepare`` does; other backends keep exact widths."""
    import random

    import keras

    from kerasattn.course.data import load_data
    from kerasattn.course.options import Settings

    rnd = random.Random(1)
    words = [f"w{i}" for i in range(300)]
    lines = [f"{' '.join(rnd.choices(words, k=rnd.randint(2, 9)))}\t"
             f"{' '.join(rnd.choices(words, k=rnd.randint(2, 9)))}" for _ in range(12000)]
    path = tmp_path / "pairs.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = load_data(Settings(data=str(path)))
    if keras.backend.backend() != "jax":
        assert data.recipe("transformer", 240.0).train["pad_multiple"] == 1
    # the recipe as it is on JAX, whatever backend runs the test
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    recipe = data.recipe("transformer", 240.0)
    assert recipe.train["bucket"] is True                   # 10,000 training pairs or more
    expected, why = recipes.choose_pad_multiple(data.train, 64, 240.0, data.valid)
    assert recipe.train["pad_multiple"] == expected == 8
    assert why in recipe.reasons["bucket"]
