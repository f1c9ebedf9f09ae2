"""Metrics: BLEU / exact match on text, masked loss and accuracy against a float64 NumPy
reference (so every backend is held to the same numbers), padding inflation, Keras objects
in compile / fit / evaluate and their serialization."""
from __future__ import annotations

import keras
import numpy as np
import pytest
import sacrebleu
from conftest import to_numpy

from kerasattn import metrics as M
from kerasattn.data import Vocabulary, builtin_corpus, detokenize, make_arrays


# ------------------------------------------------------------------ float64 references
def ref_token_ce(labels, logits, eps=0.0):
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))          # (B, T, V)
    v = z.shape[-1]
    q = (1.0 - eps) * np.eye(v)[labels] + eps / v                        # smoothed target
    return -(q * log_p).sum(axis=-1)                                     # (B, T)


def ref_weights(labels, pad_id=0, sample_weight=None):
    w = (labels != pad_id).astype(np.float64)
    if sample_weight is not None:
        sw = np.asarray(sample_weight, dtype=np.float64)
        w = w * (sw[:, None] if sw.ndim == 1 else sw)
    return w


def ref_masked_ce(labels, logits, pad_id=0, eps=0.0, sample_weight=None):
    w = ref_weights(labels, pad_id, sample_weight)
    return (ref_token_ce(labels, logits, eps) * w).sum() / w.sum()


def ref_masked_accuracy(labels, logits, pad_id=0, sample_weight=None):
    w = ref_weights(labels, pad_id, sample_weight)
    return ((np.argmax(logits, -1) == labels) * w).sum() / w.sum()


@pytest.fixture
def batch():
    rng = np.random.default_rng(0)
    labels = rng.integers(1, 11, size=(4, 7))
    for row, n in enumerate([7, 5, 2, 1]):   # real lengths; the rest is <pad>
        labels[row, n:] = 0
    logits = rng.normal(scale=3.0, size=(4, 7, 11)).astype("float32")
    return labels.astype("int32"), logits


# ------------------------------------------------------------------ losses
@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("weights", [None, "rows", "cells"])
def test_masked_ce_matches_float64_reference(batch, eps, weights):
    labels, logits = batch
    sw = {None: None, "rows": np.array([1.0, 0.5, 0.0, 2.0], "float32"),
          "cells": np.random.default_rng(1).uniform(size=labels.shape).astype("float32")}[weights]
    expected = ref_masked_ce(labels, logits, eps=eps, sample_weight=sw)
    got_fn = float(to_numpy(M.masked_sparse_ce(labels, logits, label_smoothing=eps,
                                                 sample_weight=sw)))
    loss = M.MaskedSparseCategoricalCrossentropy(label_smoothing=eps)
    got_obj = float(to_numpy(loss(labels, logits, sample_weight=sw)))
    np.testing.assert_allclose(got_fn, expected, rtol=2e-6)
    np.testing.assert_allclose(got_obj, expected, rtol=2e-6)


@pytest.mark.parametrize("eps", [0.0, 0.1])
@pytest.mark.parametrize("kernel", M.CE_KERNELS)
def test_every_cross_entropy_kernel_matches_float64_reference(batch, kernel, eps):
    """The backend picks one route to l_bt; each is the same value on every backend."""
    labels, logits = batch
    got = to_numpy(M.masked_token_ce(labels, logits, eps, kernel=kernel))
    np.testing.assert_allclose(got, ref_token_ce(labels, logits, eps), rtol=2e-6, atol=2e-6)


def test_cross_entropy_kernel_is_checked(batch):
    with pytest.raises(ValueError, match="kernel must be None or one of .*received 'fused'"):
        M.masked_token_ce(*batch, kernel="fused")


def test_probabilities_input_and_per_token_values(batch):
    labels, logits = batch
    probs = to_numpy(keras.ops.softmax(logits, axis=-1))
    np.testing.assert_allclose(float(to_numpy(M.masked_sparse_ce(labels, probs,
                                                                 from_logits=False))),
                               ref_masked_ce(labels, logits), rtol=1e-5)
    per_token = to_numpy(M.MaskedSparseCategoricalCrossentropy().call(labels, logits))
    np.testing.assert_allclose(per_token, ref_token_ce(labels, logits) * (labels != 0),
                               rtol=1e-5, atol=1e-6)


def test_padding_content_is_ignored(batch):
    """Changing the logits at padded steps, or adding padded columns, changes nothing."""
    labels, logits = batch
    base_ce = float(to_numpy(M.masked_sparse_ce(labels, logits)))
    base_acc = float(to_numpy(M.masked_accuracy(labels, logits)))
    noisy = logits.copy()
    noisy[labels == 0] = np.random.default_rng(3).normal(scale=50, size=noisy[labels == 0].shape)
    wide_labels = np.pad(labels, ((0, 0), (0, 5)))
    wide_logits = np.concatenate([noisy, np.ones((4, 5, 11), "float32")], axis=1)
    assert float(to_numpy(M.masked_sparse_ce(wide_labels, wide_logits))) == \
        pytest.approx(base_ce, rel=1e-6)
    assert float(to_numpy(M.masked_accuracy(wide_labels, wide_logits))) == \
        pytest.approx(base_acc, rel=1e-6)


def test_all_padding_gives_zero_not_nan():
    labels = np.zeros((2, 3), "int32")
    logits = np.random.default_rng(0).normal(size=(2, 3, 5)).astype("float32")
    assert float(to_numpy(M.masked_sparse_ce(labels, logits))) == 0.0
    assert float(to_numpy(M.masked_accuracy(labels, logits))) == 0.0


def test_bad_arguments_raise_clearly(batch):
    labels, logits = batch
    with pytest.raises(ValueError, match="label_smoothing"):
        M.MaskedSparseCategoricalCrossentropy(label_smoothing=1.0)
    with pytest.raises(ValueError, match="pad_id"):
        M.MaskedAccuracy(pad_id=-1)
    with pytest.raises(ValueError, match=r"labels \(4, 7\) and logits \(4, 11\)"):
        M.masked_sparse_ce(labels, logits[:, 0, :])


# ------------------------------------------------------------------ accuracy
def test_accuracy_counts_a_tie_with_the_label_as_right():
    # the documented rule z_y >= max_v z_v: argmax would pick id 0 in every row
    labels = np.array([[1, 2, 3, 0]], "int32")
    logits = np.zeros((1, 4, 5), "float32")
    logits[0, 2, 4] = 1.0                              # step 2: id 4 beats the label 3
    assert float(to_numpy(M.masked_accuracy(labels, logits))) == pytest.approx(2 / 3)


def test_masked_accuracy_matches_reference_and_accumulates_tokens(batch):
    labels, logits = batch
    logits = logits.copy()
    logits[0, :4, :] = 0.0
    logits[0, np.arange(4), labels[0, :4]] = 9.0       # make some predictions right
    np.testing.assert_allclose(float(to_numpy(M.masked_accuracy(labels, logits))),
                               ref_masked_accuracy(labels, logits), rtol=1e-6)
    # predicted ids instead of logits
    np.testing.assert_allclose(float(to_numpy(M.masked_accuracy(labels, logits.argmax(-1)))),
                               ref_masked_accuracy(labels, logits), rtol=1e-6)
    # the Keras metric pools tokens over batches (not a mean of batch means)
    m = M.MaskedAccuracy()
    m.update_state(labels[:1], logits[:1])
    m.update_state(labels[1:], logits[1:])
    np.testing.assert_allclose(float(to_numpy(m.result())), ref_masked_accuracy(labels, logits),
                               rtol=1e-6)
    m.reset_state()
    assert float(to_numpy(m.result())) == 0.0
    ce = M.MaskedCrossEntropyMetric()
    ce.update_state(labels[:2], logits[:2])
    ce.update_state(labels[2:], logits[2:])
    np.testing.assert_allclose(float(to_numpy(ce.result())), ref_masked_ce(labels, logits),
                               rtol=2e-6)


def test_counting_padding_inflates_accuracy_on_the_builtin_corpus():
    """A model right on 40% of real tokens that outputs <pad> after the sentence: counted
    with padding (as keras-io's examples do), its accuracy looks much better."""
    c = builtin_corpus(n_train=400, n_valid=0, n_test=0, n_test_long=0)
    tv = Vocabulary.build(c.targets("train"))
    sv = Vocabulary.build(c.sources("train"))
    labels = make_arrays(c.train, sv, tv)["labels"]                     # (N, T)
    rng = np.random.default_rng(0)
    right = rng.uniform(size=labels.shape) < 0.4
    pred = np.where(labels == 0, 0, np.where(right, labels, (labels % (len(tv) - 5)) + 4))
    masked = float(to_numpy(M.masked_accuracy(labels, pred)))
    padded = float(to_numpy(M.unmasked_accuracy(labels, pred)))
    pad_share = float((labels == 0).mean())
    real_right = float((right & (labels != 0)).sum() / (labels != 0).sum())
    assert masked == pytest.approx(real_right, abs=1e-6)
    assert padded == pytest.approx(pad_share + (1 - pad_share) * real_right, abs=1e-5)
    print(f"\npadding share {pad_share:.2f}: masked accuracy {masked:.3f}, "
          f"counted with padding {padded:.3f}")
    assert padded - masked > 0.2


# ------------------------------------------------------------------ Keras integration
def _model(vocab=13):
    inp = keras.Input((None,), dtype="int32", name="decoder_inputs")
    out = keras.layers.Dense(vocab)(keras.layers.Embedding(vocab, 4)(inp))
    return keras.Model(inp, out)


def test_compile_evaluate_and_keras_round_trip(tmp_path, batch):
    labels, _ = batch
    x = np.roll(labels, 1, axis=1)
    model = _model(11)
    model.compile(optimizer="adam",
                  loss=M.MaskedSparseCategoricalCrossentropy(label_smoothing=0.1),
                  metrics=[M.MaskedAccuracy(), M.MaskedCrossEntropyMetric()])
    result = model.evaluate(x, labels, batch_size=4, verbose=0, return_dict=True)
    logits = to_numpy(model(x))
    np.testing.assert_allclose(result["loss"], ref_masked_ce(labels, logits, eps=0.1), rtol=1e-5)
    np.testing.assert_allclose(result["masked_accuracy"], ref_masked_accuracy(labels, logits),
                               rtol=1e-5)
    np.testing.assert_allclose(result["masked_cross_entropy"], ref_masked_ce(labels, logits),
                               rtol=1e-5)
    path = tmp_path / "m.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded.loss, M.MaskedSparseCategoricalCrossentropy)
    assert loaded.loss.get_config() == model.loss.get_config()
    np.testing.assert_allclose(float(to_numpy(loaded.loss(labels, to_numpy(loaded(x))))),
                               result["loss"], rtol=1e-5)


def test_a_fixed_tokens_per_batch_weighs_every_token_the_same(batch):
    labels, logits = batch                                   # 15 real tokens
    per_token = ref_token_ce(labels, logits) * ref_weights(labels)
    loss = M.MaskedSparseCategoricalCrossentropy(tokens_per_batch=30.0)
    np.testing.assert_allclose(to_numpy(loss(labels, logits)), per_token.sum() / 30.0,
                               rtol=1e-5)
    # a batch of short rows counts for less than a batch of long ones, token for token
    short, long_ = labels.copy(), labels.copy()
    short[:, 1:] = 0
    long_[long_ == 0] = 5
    own = [float(to_numpy(M.masked_sparse_ce(x, logits))) for x in (short, long_)]
    fixed = [float(to_numpy(M.masked_sparse_ce(x, logits, tokens_per_batch=30.0)))
             for x in (short, long_)]
    assert fixed[0] / fixed[1] == pytest.approx(own[0] / own[1] * 4 / 28, rel=1e-4)
    for bad in (0, -1.0, True, "30"):
        with pytest.raises(ValueError, match="tokens_per_batch must be a number > 0"):
            M.MaskedSparseCategoricalCrossentropy(tokens_per_batch=bad)


def test_objects_serialize_with_their_config():
    for obj in (M.MaskedSparseCategoricalCrossentropy(pad_id=2, label_smoothing=0.2,
                                                      from_logits=False),
                M.MaskedSparseCategoricalCrossentropy(tokens_per_batch=12.5),
                M.MaskedAccuracy(pad_id=2, name="acc"),
                M.MaskedCrossEntropyMetric(pad_id=2, from_logits=False)):
        cfg = keras.saving.serialize_keras_object(obj)
        assert cfg["registered_name"].startswith("kerasattn>")
        back = keras.saving.deserialize_keras_object(cfg)
        assert type(back) is type(obj) and back.get_config() == obj.get_config()
        assert getattr(back, "tokens_per_batch", None) == getattr(obj, "tokens_per_batch", None)
    assert keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(
        M.MaskedSparseCategoricalCrossentropy(tokens_per_batch=12.5))).tokens_per_batch == 12.5


# ------------------------------------------------------------------ BLEU and exact match
REFS = ["le chat noir dort dans le jardin .", "j' aime l' arbre près de la maison blanche .",
        "nous voyons les maisons blanches de la ville ."]


def test_perfect_translations_score_100_and_detokenization_is_used():
    assert M.corpus_bleu(REFS, REFS) == pytest.approx(100.0)
    assert M.exact_match(REFS, REFS) == 1.0
    hyps = [REFS[0], REFS[1], "nous voyons les maisons de la ville ."]
    expected = sacrebleu.corpus_bleu([detokenize(h) for h in hyps],
                                     [[detokenize(r) for r in REFS]]).score
    assert M.corpus_bleu(hyps, REFS) == pytest.approx(expected)
    assert 0 < M.corpus_bleu(hyps, REFS) < 100
    assert M.exact_match(hyps, REFS) == pytest.approx(2 / 3)
    # "l' arbre" is scored as the word "l'arbre": a hypothesis that glues it is perfect
    assert M.corpus_bleu(["j'aime l'arbre près de la maison blanche ."], [REFS[1]]) == \
        pytest.approx(100.0)


def test_bleu_by_length_buckets():
    srcs = ["a b .", "a b c d e .", "a b c d e f g h i j k l m n o p ."]  # 3, 6, 17 tokens
    hyps = [REFS[0], REFS[1], "le chien ."]
    rows = M.bleu_by_length(srcs, hyps, REFS, buckets=[0, 5, 10, 20])
    assert [r["label"] for r in rows] == ["1-5", "6-10", "11-20"]
    assert [r["n"] for r in rows] == [1, 1, 1]
    assert rows[0]["bleu"] == pytest.approx(100.0) and rows[1]["bleu"] == pytest.approx(100.0)
    assert rows[2]["bleu"] < 10 and rows[2]["exact_match"] == 0.0
    widths = M.bleu_by_length(srcs, REFS, REFS, buckets=5)
    assert [r["n"] for r in widths] == [1, 1, 0, 1] and widths[2]["bleu"] is None
    with pytest.raises(ValueError, match="ascending"):
        M.bleu_by_length(srcs, hyps, REFS, buckets=[10, 5])


def test_text_metrics_reject_bad_input():
    with pytest.raises(ValueError, match="same length"):
        M.corpus_bleu(REFS[:2], REFS)
    with pytest.raises(ValueError, match="empty"):
        M.exact_match([], [])
    with pytest.raises(ValueError, match="single string"):
        M.corpus_bleu("le chat .", "le chat .")
    with pytest.raises(ValueError, match=r"hyps\[1\]"):
        M.corpus_bleu(["a", 3], ["a", "b"])
