"""Teacher-forcing arrays, padding, bucketing, and the PyDataset feeding model.fit."""
from __future__ import annotations

import keras
import numpy as np
import pytest

from kerasattn.data import (
    TranslationDataset,
    Vocabulary,
    batch_iterator,
    batch_plan,
    encode_batch,
    generate_corpus,
    make_arrays,
)
from kerasattn.metrics import MaskedAccuracy, MaskedSparseCategoricalCrossentropy

PAIRS = [("the cat sleeps .", "le chat dort ."),
         ("i see the black dog .", "je vois le chien noir ."),
         ("we run .", "nous courons .")]


@pytest.fixture(scope="module")
def vocabs():
    return (Vocabulary.build([s for s, _ in PAIRS]), Vocabulary.build([t for _, t in PAIRS]))


def test_teacher_forcing_layout(vocabs):
    sv, tv = vocabs
    a = make_arrays(PAIRS, sv, tv)
    assert a["encoder_inputs"].shape == (3, 6) and a["decoder_inputs"].shape == (3, 7)
    assert all(v.dtype == np.int32 for v in a.values())
    for k, (s, t) in enumerate(PAIRS):
        y = tv.encode(t)
        n = len(y)
        np.testing.assert_array_equal(a["decoder_inputs"][k, :n + 1], [tv.BOS] + y)
        np.testing.assert_array_equal(a["labels"][k, :n + 1], y + [tv.EOS])
        assert not a["decoder_inputs"][k, n + 1:].any() and not a["labels"][k, n + 1:].any()
        assert sv.decode(a["encoder_inputs"][k]) == s
        # the label at step t is the decoder input at step t + 1
        np.testing.assert_array_equal(a["labels"][k, :n], a["decoder_inputs"][k, 1:n + 1])


def test_fixed_widths_and_truncation(vocabs):
    sv, tv = vocabs
    a = make_arrays(PAIRS, sv, tv, max_src_len=10, max_tgt_len=12)
    assert a["encoder_inputs"].shape == (3, 10) and a["labels"].shape == (3, 12)
    with pytest.raises(ValueError, match=r"max_tgt_len=3"):
        make_arrays(PAIRS, sv, tv, max_tgt_len=3)
    with pytest.raises(ValueError, match=r"max_len=2"):
        encode_batch(["the cat sleeps ."], sv, max_len=2)
    cut = make_arrays(PAIRS, sv, tv, max_src_len=2, max_tgt_len=3, truncate=True)
    assert cut["encoder_inputs"].shape == (3, 2) and cut["labels"].shape == (3, 3)


def test_bad_inputs_raise_clearly(vocabs):
    sv, tv = vocabs
    with pytest.raises(ValueError, match="empty"):
        make_arrays([], sv, tv)
    with pytest.raises(ValueError, match=r"pairs\[1\]"):
        make_arrays([PAIRS[0], ("only one side",)], sv, tv)
    with pytest.raises(ValueError, match="batch_size"):
        batch_plan(make_arrays(PAIRS, sv, tv), batch_size=0)
    with pytest.raises(ValueError, match="missing keys"):
        batch_plan({"encoder_inputs": np.zeros((2, 2))}, batch_size=1)


@pytest.fixture(scope="module")
def corpus_arrays():
    c = generate_corpus(n_train=200, n_valid=0, n_test=0, n_test_long=0, seed=0)
    sv = Vocabulary.build(c.sources("train"))
    tv = Vocabulary.build(c.targets("train"))
    return make_arrays(c.train, sv, tv), sv, tv


def test_epoch_covers_every_row_once_and_is_deterministic(corpus_arrays):
    a, _, _ = corpus_arrays
    for bucket in (False, True):
        plan = batch_plan(a, 32, shuffle=True, seed=5, bucket=bucket)
        rows = np.concatenate(plan)
        assert sorted(rows.tolist()) == list(range(200))
        again = batch_plan(a, 32, shuffle=True, seed=5, bucket=bucket)
        assert all(np.array_equal(p, q) for p, q in zip(plan, again))
        other = batch_plan(a, 32, shuffle=True, seed=6, bucket=bucket)
        assert not all(np.array_equal(p, q) for p, q in zip(plan, other))
    assert len(batch_plan(a, 32, drop_remainder=True)) == 200 // 32


def test_bucketing_cuts_padding_and_keeps_content(corpus_arrays):
    a, _, _ = corpus_arrays

    def padding_share(batches):
        pads = sum(int((x["encoder_inputs"] == 0).sum()) for x, _ in batches)
        cells = sum(x["encoder_inputs"].size for x, _ in batches)
        return pads / cells

    plain = list(batch_iterator(a, 32, seed=1))
    bucketed = list(batch_iterator(a, 32, seed=1, bucket=True, pad_multiple=4))
    assert padding_share(bucketed) < 0.5 * padding_share(plain)
    for x, y in bucketed:
        assert x["encoder_inputs"].shape[1] % 4 == 0 or \
            x["encoder_inputs"].shape[1] == a["encoder_inputs"].shape[1]
        assert x["decoder_inputs"].shape == y.shape
    # trimming only removed padding: every real token is still there
    real = sum(int((x["decoder_inputs"] != 0).sum()) for x, _ in bucketed)
    assert real == int((a["decoder_inputs"] != 0).sum())


def test_bucketing_by_target_pads_the_target_side_least():
    """Pairs whose target length is unrelated to their source length: grouping by target
    length leaves almost no target padding, grouping by source length almost none on the
    source side; the default (True) is the target grouping."""
    rng = np.random.default_rng(0)
    n, width = 512, 24
    a = {k: np.zeros((n, width), "int32") for k in ("encoder_inputs", "decoder_inputs",
                                                     "labels")}
    for i, (s, t) in enumerate(zip(rng.integers(1, width, n), rng.integers(1, width, n))):
        a["encoder_inputs"][i, :s] = 5
        a["decoder_inputs"][i, :t] = 5
        a["labels"][i, :t] = 5

    def real_share(bucket, key):
        batches = list(batch_iterator(a, 32, seed=3, bucket=bucket, pad_multiple=1))
        arrays = [x[key] if key in x else y for x, y in batches]
        return sum(int((m != 0).sum()) for m in arrays) / sum(m.size for m in arrays)

    assert real_share("target", "labels") > 0.9 > 0.75 > real_share("source", "labels")
    assert real_share("source", "encoder_inputs") > 0.9 > 0.75 > real_share("target",
                                                                      "encoder_inputs")
    assert [p.tolist() for p in batch_plan(a, 32, seed=3, bucket=True)] == \
        [p.tolist() for p in batch_plan(a, 32, seed=3, bucket="target")]
    # ties in target length are broken by source length
    plan = batch_plan(a, n, shuffle=False, bucket="target")[0]
    keys = [(int((a["labels"][i] != 0).sum()), int((a["encoder_inputs"][i] != 0).sum()))
            for i in plan]
    assert keys == sorted(keys)
    for bad in ("length", 1):
        with pytest.raises(ValueError, match=r"bucket must be False, True or one of "
                                             r"\('target', 'source'\), received"):
            batch_plan(a, 32, bucket=bad)
        with pytest.raises(ValueError, match="bucket must be"):
            TranslationDataset(a, batch_size=32, bucket=bad)


def _tiny_model(src_v: int, tgt_v: int) -> keras.Model:
    enc = keras.Input((None,), dtype="int32", name="encoder_inputs")
    dec = keras.Input((None,), dtype="int32", name="decoder_inputs")
    ctx = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(src_v, 8)(enc))
    ctx = keras.layers.Reshape((1, 8))(ctx)                                  # (B, 1, 8)
    h = keras.layers.Dense(8)(keras.layers.Embedding(tgt_v, 8)(dec))       # (B, T, 8)
    h = keras.layers.Add()([h, ctx])
    return keras.Model({"encoder_inputs": enc, "decoder_inputs": dec},
                       keras.layers.Dense(tgt_v)(h))


def test_py_dataset_feeds_model_fit_on_this_backend(corpus_arrays):
    a, sv, tv = corpus_arrays
    # 8 columns: bucketed batches all get width 8 (one compiled shape keeps JAX quick)
    small = {k: v[:24, :8] for k, v in a.items()}
    ds = TranslationDataset(small, batch_size=8, bucket=True, seed=0)
    assert len(ds) == 3
    x, y = ds[0]
    assert set(x) == {"encoder_inputs", "decoder_inputs"} and y.dtype == np.int32
    model = _tiny_model(len(sv), len(tv))
    model.compile(optimizer=keras.optimizers.Adam(0.05),
                  loss=MaskedSparseCategoricalCrossentropy(), metrics=[MaskedAccuracy()])
    hist = model.fit(ds, epochs=6, verbose=0)
    losses = hist.history["loss"]
    assert np.all(np.isfinite(losses)) and losses[-1] < 0.7 * losses[0]
    assert ds.epoch >= 5  # fit called on_epoch_end: batches were reshuffled
    with pytest.raises(IndexError):
        ds[len(ds)]


def test_bucketed_batches_of_several_widths_feed_fit(corpus_arrays):
    """Regression: Keras on TensorFlow fixes the input signature from the first two batches;
    sorted (unshuffled) buckets start with two equally narrow batches, then a wider one used
    to fail with "yielded an element of shape (8, 12) where (None, 4) was expected"."""
    a, sv, tv = corpus_arrays
    lengths = np.maximum((a["encoder_inputs"] != 0).sum(axis=1),
                         (a["decoder_inputs"] != 0).sum(axis=1))
    rows = np.argsort(lengths, kind="stable")
    rows = rows[lengths[rows] <= 12]
    rows = rows[np.linspace(0, len(rows) - 1, 32).astype(int)]      # short to 12 tokens
    small = {k: v[rows, :12] for k, v in a.items()}
    ds = TranslationDataset(small, batch_size=8, bucket=True, shuffle=False, pad_multiple=4)
    widths = [ds[i][0]["encoder_inputs"].shape[1] for i in range(len(ds))]
    assert len(set(widths)) > 1 and widths[0] != widths[1]
    model = _tiny_model(len(sv), len(tv))
    model.compile(optimizer="adam", loss=MaskedSparseCategoricalCrossentropy())
    hist = model.fit(ds, validation_data=ds, epochs=1, verbose=0)
    assert np.isfinite(hist.history["val_loss"][0])


def test_a_width_shared_by_the_first_two_batches_is_widened(corpus_arrays):
    """Regression: when no batch differs from batch 0 in BOTH widths, the first two batches
    shared the target width and a narrower third batch failed on TensorFlow ("yielded an
    element of shape (32, 16) where (None, 24) was expected"); batch 1 is now padded (with
    masked <pad>) one pad_multiple wider in the width it shares."""
    _, sv, tv = corpus_arrays
    rows = []            # batches of 4 rows with widths (source, target) (8, 8), (8, 12), (12, 8)
    for s_len, t_len in [(8, 8)] * 4 + [(8, 12)] * 4 + [(12, 8)] * 4:
        rows.append(([4] * s_len + [0] * (12 - s_len),
                     [2] + [5] * (t_len - 1) + [0] * (12 - t_len),
                     [5] * (t_len - 1) + [3] + [0] * (12 - t_len)))
    small = {k: np.array([r[i] for r in rows], dtype="int32")
             for i, k in enumerate(("encoder_inputs", "decoder_inputs", "labels"))}
    ds = TranslationDataset(small, batch_size=4, bucket=True, shuffle=False, pad_multiple=4)
    shapes = [(ds[i][0]["encoder_inputs"].shape[1], ds[i][1].shape[1]) for i in range(3)]
    for d in range(2):
        if len({w[d] for w in shapes}) > 1:
            assert shapes[0][d] != shapes[1][d]
    first = ds[1]
    assert np.array_equal(first[0]["decoder_inputs"] != 0, first[1] != 0)  # padding only
    model = _tiny_model(len(sv), len(tv))
    model.compile(optimizer="adam", loss=MaskedSparseCategoricalCrossentropy())
    hist = model.fit(ds, epochs=1, verbose=0)
    assert np.isfinite(hist.history["loss"][0])
