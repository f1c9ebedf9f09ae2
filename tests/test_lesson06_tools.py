"""What lesson 06 is built from: the back-translation data, the over/under-translation
counts, continuing a model's training with an addition, and the cumulative-attention
figure."""
import numpy as np
import pytest

from kerasattn import metrics, plots
from kerasattn.course.backtranslation import (
    back_translate,
    reversed_data,
    split_parallel_and_monolingual,
    with_training_pairs,
)
from kerasattn.course.data import load_data
from kerasattn.course.options import Settings
from kerasattn.course.train import copy_weights_by_path


@pytest.fixture(scope="module")
def data():
    return load_data(Settings(quick=True))


def test_parallel_and_monolingual_do_not_overlap(data):
    parallel, mono = split_parallel_and_monolingual(data, 10, 30)
    assert len(parallel) == 10 and len(mono) == 30
    assert set(parallel) <= set(data.train_pairs)
    targets = {t for _, t in data.train_pairs}
    assert set(mono) <= targets
    assert not set(mono) & {t for _, t in parallel}
    with pytest.raises(ValueError, match=r"n_parallel \+ n_monolingual.*64.*60 \+ 10"):
        split_parallel_and_monolingual(data, 60, 10)
    with pytest.raises(ValueError, match="n_monolingual must be >= 1; received 0"):
        split_parallel_and_monolingual(data, 5, 0)


def test_training_pairs_and_the_reverse_direction(data):
    parallel, _ = split_parallel_and_monolingual(data, 8, 8)
    small = with_training_pairs(data, parallel, "8 pairs")
    assert small.train["encoder_inputs"].shape[0] == 8
    assert small.test_pairs == data.test_pairs and small.src_vocab is data.src_vocab
    rev = reversed_data(data, parallel, "reverse")
    assert rev.src_vocab is data.tgt_vocab and rev.tgt_vocab is data.src_vocab
    assert (rev.src_lang, rev.tgt_lang) == (data.tgt_lang, data.src_lang)
    assert rev.train_pairs == [(t, s) for s, t in parallel]
    assert rev.test_pairs == [(t, s) for s, t in data.test_pairs]
    assert rev.test_sources == [t for _, t in data.test_pairs]
    # the French side is read with the French vocabulary: no unknown words
    assert not (rev.train["encoder_inputs"] == data.tgt_vocab.UNK).any()
    with pytest.raises(ValueError, match="no training pair"):
        with_training_pairs(data, [], "none")


def test_on_a_real_file_the_recipe_sees_the_pairs_trained_on():
    """The parallel share of a real file (and its reverse) gets the recipe of its own size
    and direction, not of the whole file."""
    from pathlib import Path

    excerpt = Path(__file__).parent / "data" / "jpn-eng-excerpt.txt"
    real = load_data(Settings(data=str(excerpt)))
    parallel, _ = split_parallel_and_monolingual(real, 20, 20)
    small = with_training_pairs(real, parallel, "20 pairs")
    assert real.stats["train_pairs"] > 40 and small.stats["train_pairs"] == 20
    assert f"({real.stats['train_pairs']} training pairs)" in real.recipe("bahdanau").reasons[
        "regularisation"]
    assert "(20 training pairs)" in small.recipe("bahdanau").reasons["regularisation"]
    rev = reversed_data(real, parallel, "reverse")
    assert rev.stats["train_pairs"] == 20
    assert rev.stats["src"] == real.stats["tgt"] and rev.stats["tgt"] == real.stats["src"]
    assert real.stats["tgt"]["spaceless"] and not rev.stats["tgt"]["spaceless"]


def test_back_translate_pairs_synthetic_sources_with_real_targets():
    class Reverse:
        def translate(self, texts, **kwargs):
            return [" ".join(reversed(t.split())) if "x" not in t else "" for t in texts]

    pairs = back_translate(Reverse(), ["a b c", "x y", "d e"])
    assert pairs == [("c b a", "a b c"), ("e d", "d e")]   # an empty translation is dropped


def test_extra_and_missing_words_against_the_reference():
    counts = metrics.word_counts_against_reference(
        ["le chat chat noir", "il dort", "la maison"],
        ["le chat noir", "il dort bien", "la maison"])
    assert counts == dict(extra=1, missing=1, ref_words=8, sentences_with_extra=1,
                          sentences_with_missing=1)
    with pytest.raises(ValueError, match="same length"):
        metrics.word_counts_against_reference(["a"], ["a", "b"])


def test_continuing_with_an_addition_starts_from_the_plain_model():
    from kerasattn.models import build_model

    kw = dict(embed_dim=8, units=8, attention_units=8)
    plain = build_model("bahdanau", 20, 30, **kw)
    covered = build_model("bahdanau", 20, 30, coverage=True, **kw)
    kept = copy_weights_by_path(plain, covered)
    assert kept == ["attention_decoder/attention/w_c"]
    from keras import ops

    got = {w.path: ops.convert_to_numpy(w.value) for w in covered.weights}
    for w in plain.weights:
        np.testing.assert_array_equal(got[w.path], ops.convert_to_numpy(w.value))


def test_the_source_model_survives_the_continued_training(data):
    """The copy is a copy: training the continued model (JAX donates the buffers of the
    weights it updates) leaves the model it started from usable and unchanged."""
    from keras import ops

    from kerasattn.course.train import train_model

    settings = Settings(quick=True)
    first = train_model("bahdanau", data, settings)
    before = [ops.convert_to_numpy(w.value) for w in first.model.weights]
    train_model("bahdanau", data, settings, start_from=first.model,
                model_kwargs={"coverage": True})
    for b, w in zip(before, first.model.weights):
        np.testing.assert_array_equal(ops.convert_to_numpy(w.value), b)
    batch = {k: data.valid[k][:2] for k in ("encoder_inputs", "decoder_inputs")}
    assert first.model.predict(batch, verbose=0).shape[0] == 2


def test_cumulative_attention_figure_fits_and_checks_lengths(tmp_path):
    from kerasattn.plots._base import drawn_texts

    tokens = [f"word{i}" for i in range(25)]
    fig = plots.cumulative_attention({"a": np.ones(25), "b": np.linspace(0, 2, 25)}, tokens,
                                     tmp_path / "c.png", title="cumulative attention " * 4)
    assert (tmp_path / "c.png").is_file()
    fig.canvas.draw()
    box = fig.bbox
    for text in drawn_texts(fig):
        e = text.get_window_extent()
        assert e.x0 >= box.x0 - 1 and e.x1 <= box.x1 + 1, text.get_text()
    with pytest.raises(ValueError, match=r"series\['a'\] has 3 values; expected one per "
                                         r"source token \(25\)"):
        plots.cumulative_attention({"a": np.ones(3)}, tokens)
