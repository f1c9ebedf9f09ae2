"""Coverage attention (Tu et al., 2016; See et al., 2017) and the GNMT coverage penalty."""
import os

import keras
import numpy as np
import pytest

from kerasattn import reference as ref
from kerasattn.decoding import beam_search, gnmt_coverage_penalty, length_penalty
from kerasattn.layers import BahdanauAttention
from kerasattn.models import AttentionGRUDecoder, build_model
from tests.conftest import to_numpy
from tests.tiny_models import tiny_pairs

B, S, DQ, DK, A = 2, 5, 6, 4, 7


def _data(rank=2, seed=0):
    rng = np.random.default_rng(seed)
    lead = (B,) if rank == 2 else (B, 3)
    query = rng.normal(size=lead + (DQ,)).astype("float32")
    memory = rng.normal(size=(B, S, DK)).astype("float32")
    coverage = rng.uniform(0, 2, size=lead + (S,)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], bool)
    return query, memory, coverage, mask


def _layer(query, memory):
    layer = BahdanauAttention(A, coverage=True)
    layer.build(query.shape, memory.shape)
    return layer


def _ref(layer, query, memory, coverage, mask):
    w = ref.weights_of(layer)  # W_q, W_k, v and, for a coverage layer, w_c
    assert set(w) == {"W_q", "W_k", "w_c", "v"}
    return ref.coverage_attention(query, memory, coverage, w["W_q"], w["W_k"], w["w_c"],
                                  w["v"], mask=mask)


@pytest.mark.parametrize("rank", [2, 3])
def test_layer_matches_reference(rank):
    query, memory, coverage, mask = _data(rank)
    layer = _layer(query, memory)
    context, weights = layer(query, memory, memory_mask=mask, coverage=coverage)
    want_c, want_w = _ref(layer, query, memory, coverage, mask)
    np.testing.assert_allclose(to_numpy(weights), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(to_numpy(context), want_c, rtol=1e-5, atol=1e-6)
    assert np.all(to_numpy(weights)[1, ..., 3:] == 0.0)  # padding gets weight 0


def test_coverage_changes_the_weights():
    query, memory, coverage, mask = _data()
    layer = _layer(query, memory)
    _, w1 = layer(query, memory, memory_mask=mask, coverage=coverage)
    _, w0 = layer(query, memory, memory_mask=mask, coverage=np.zeros_like(coverage))
    assert np.abs(to_numpy(w1) - to_numpy(w0)).max() > 1e-3


def test_bad_coverage_arguments():
    query, memory, coverage, mask = _data()
    layer = _layer(query, memory)
    with pytest.raises(ValueError, match="coverage"):
        layer(query, memory, memory_mask=mask)  # missing
    with pytest.raises(ValueError, match=r"coverage.*\(2, 5\)"):
        layer(query, memory, coverage=coverage[:, :3])
    with pytest.raises(ValueError, match="score='additive'"):
        BahdanauAttention(score="dot", coverage=True)
    plain = BahdanauAttention(A)
    with pytest.raises(ValueError, match="coverage"):
        plain(query, memory, coverage=coverage)


def test_layer_keras_round_trip(tmp_path):
    query, memory, coverage, mask = _data()
    q = keras.Input((DQ,))
    m = keras.Input((S, DK))
    c = keras.Input((S,))
    out = BahdanauAttention(A, coverage=True, name="att")(q, m, coverage=c)
    model = keras.Model([q, m, c], out)
    path = os.path.join(tmp_path, "cov.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.get_layer("att").get_config()["coverage"] is True
    for a, b in zip(model([query, memory, coverage]), loaded([query, memory, coverage])):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-6, atol=1e-7)


def _coverage_model():
    keras.utils.set_random_seed(5)
    return build_model("bahdanau", 12, 12, embed_dim=8, units=8, attention_units=8,
                       dropout=0.0, coverage=True)


def test_decoder_carries_coverage():
    # every step's weights equal the reference fed with s_{t-1} and the summed earlier
    # weights
    rng = np.random.default_rng(1)
    y = rng.normal(size=(B, 4, 3)).astype("float32")  # embedded y_{t-1}: (B, T, E)
    memory = rng.normal(size=(B, S, DK)).astype("float32")  # h_enc: (B, S, D)
    s0 = rng.normal(size=(B, 6)).astype("float32")
    mask = _data()[3]
    decoder = AttentionGRUDecoder(6, attention_units=A, coverage=True)
    out, att = decoder(y, memory, s0, memory_mask=mask, return_attention=True)
    out, att = to_numpy(out), to_numpy(att)[:, :, 0]  # (B, T, u + C), (B, T, S)
    states = np.concatenate([s0[:, None], out[:, :-1, :decoder.units]], axis=1)
    att_layer = decoder.attention
    cov = np.zeros(mask.shape)
    for t in range(y.shape[1]):
        _, want = _ref(att_layer, states[:, t], memory, cov, mask)
        np.testing.assert_allclose(att[:, t], want, rtol=1e-4, atol=1e-5)
        cov = cov + want


def test_model_with_coverage_round_trip_and_beam(tmp_path):
    model = _coverage_model()
    src = tiny_pairs(n=2)["encoder_inputs"]
    path = os.path.join(tmp_path, "m.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    a = beam_search(model, src, beam_size=2, max_length=5, compile=False)
    b = beam_search(loaded, src, beam_size=2, max_length=5, compile=False)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-5)


def test_gnmt_penalty_matches_reference_and_punishes_ignored_words():
    mask = np.array([1, 1, 1, 0], bool)
    covers = np.array([[0.9, 0.1, 0.0, 0.0], [0.1, 0.8, 0.1, 0.0],
                       [0.0, 0.1, 0.9, 0.0]])  # (L, S): every real word covered ~1
    ignores = np.array([[0.5, 0.5, 0.0, 0.0], [0.5, 0.45, 0.05, 0.0],
                        [0.5, 0.5, 0.0, 0.0]])  # word 2 nearly ignored
    p_cov = gnmt_coverage_penalty(covers[:, None, None], mask, 0.4)
    p_ign = gnmt_coverage_penalty(ignores[:, None, None], mask, 0.4)
    assert p_ign < p_cov <= 0.0
    assert p_cov == pytest.approx(ref.gnmt_coverage_penalty(covers[:, :3], 0.4))
    assert p_ign == pytest.approx(ref.gnmt_coverage_penalty(ignores[:, :3], 0.4))


def test_beam_scores_include_the_penalty():
    model = build_model("bahdanau", 12, 12, embed_dim=8, units=8, attention_units=8,
                        dropout=0.0)
    # 3 output steps spread a total weight of at most 3 over 6 and 4 source words: some
    # word gets less than 1, so every penalty is < 0
    src = np.array([[4, 5, 6, 7, 8, 9], [5, 6, 7, 8, 0, 0]], "int32")
    plain = beam_search(model, src, beam_size=2, max_length=3, compile=False)
    with_cp = beam_search(model, src, beam_size=2, max_length=3, compile=False,
                          coverage_penalty=0.5)
    penalties = []
    for b, hyps in enumerate(with_cp.hypotheses):
        for h in hyps:
            lp = length_penalty(len(h.tokens), 0.6, "gnmt")
            pen = ref.gnmt_coverage_penalty(
                np.asarray(h.attention["cross"]).reshape(len(h.tokens), -1, src.shape[1])
                .mean(1)[:, src[b] != 0], 0.5)
            assert h.score == pytest.approx(h.log_prob / lp + pen, rel=1e-5, abs=1e-6)
            penalties.append(pen)
    assert max(penalties) < 0.0
    for b, hyps in enumerate(plain.hypotheses):
        for h in hyps:
            assert h.score == pytest.approx(h.log_prob / length_penalty(len(h.tokens),
                                                                        0.6, "gnmt"))
    with pytest.raises(ValueError, match="coverage_penalty"):
        beam_search(model, src, coverage_penalty=-1.0)
    # uncached decoding records no attention: the error names `cache`, not the model
    with pytest.raises(ValueError, match="needs cache=True.*received cache=False"):
        beam_search(model, src, coverage_penalty=0.5, cache=False)


def test_coverage_loss_is_added_while_training(backend):
    rng = np.random.default_rng(2)
    y = rng.normal(size=(B, 4, 3)).astype("float32")
    memory = rng.normal(size=(B, S, DK)).astype("float32")
    s0 = rng.normal(size=(B, 6)).astype("float32")
    mask = _data()[3]
    decoder = AttentionGRUDecoder(6, attention_units=A, coverage=True,
                                  coverage_loss_weight=0.5)
    _, att = decoder(y, memory, s0, memory_mask=mask, return_attention=True,
                     training=True)
    att = to_numpy(att)[:, :, 0].astype("float64")  # (B, T, S)
    cov = np.concatenate([np.zeros_like(att[:, :1]), np.cumsum(att, 1)[:, :-1]], axis=1)
    want = 0.5 * ref.coverage_loss(att, cov).sum(1).mean()
    assert len(decoder.losses) == 1
    assert float(to_numpy(decoder.losses[0])) == pytest.approx(want, rel=1e-5)
    assert want > 0.0
    # with a target mask, the padded steps add nothing: here the last two of sentence 0
    target_mask = np.ones((B, 4), bool)
    target_mask[0, 2:] = False
    decoder(y, memory, s0, memory_mask=mask, target_mask=target_mask, training=True)
    per_step = ref.coverage_loss(att, cov)  # (B, T)
    want = 0.5 * (per_step * target_mask).sum(1).mean()
    assert per_step[0, 2:].sum() > 0.0
    assert len(decoder.losses) == 1                     # each call's own loss only
    assert float(to_numpy(decoder.losses[0])) == pytest.approx(want, rel=1e-5)
    with pytest.raises(ValueError, match="coverage_loss_weight"):
        AttentionGRUDecoder(6, coverage_loss_weight=0.5)


def test_fit_with_coverage_loss(backend):
    from kerasattn.training import train

    losses = []
    for weight in (0.0, 1.0):  # same initial weights and data: only the extra term differs
        keras.utils.set_random_seed(5)
        model = build_model("bahdanau", 12, 12, embed_dim=8, units=8, attention_units=8,
                            dropout=0.0, coverage=True, coverage_loss_weight=weight)
        result = train(model, tiny_pairs(n=8), epochs=1, batch_size=4, shuffle=False,
                       early_stopping_patience=None, torch_threads=None)
        losses.append(result.history["loss"][0])
    assert np.isfinite(losses).all()
    assert losses[1] > losses[0] + 1e-4, losses  # the coverage loss is part of fit's loss
