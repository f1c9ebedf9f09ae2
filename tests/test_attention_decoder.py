"""AttentionGRUDecoder's plain Bahdanau step and the additions around it (every backend).

The plain step (:meth:`AttentionGRUDecoder.bahdanau_step`) equals the float64 NumPy
reference (``reference.bahdanau_attention`` / ``reference.multi_head_attention`` for
`c_t` and `alpha_t`, ``reference.gru_cell`` for `s_t`), one step and `T` steps. Each
addition, switched off, leaves the decoder equal to a Python loop over that plain step:
scheduled sampling at `teacher_forcing_ratio = 1`, coverage not built or with `w_c = 0`.
"""
import keras
import numpy as np
import pytest
from conftest import to_numpy
from keras import ops

from kerasattn import reference as R
from kerasattn.models.attention_decoder import AttentionGRUDecoder

B, T, S, E, D, U = 4, 5, 6, 7, 8, 6
LENGTHS = np.array([6, 3, 1, 0])  # a full row, two padded rows, a row without source
MASK = np.arange(S)[None, :] < LENGTHS[:, None]  # (B, S)
KINDS = {"additive": dict(attention_units=5),
         "multihead": dict(attention="multihead", num_heads=2, d_attention=8)}


def _data(seed=0):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(B, T, E)).astype("float32")  # embedded y_{t-1}: (B, T, E)
    h_enc = rng.normal(size=(B, S, D)).astype("float32")  # (B, S, D)
    s0 = rng.normal(size=(B, U)).astype("float32")  # (B, u)
    return y, h_enc, s0


def _decoder(kind="additive", seed=0, **kwargs):
    """A built decoder whose trainable weights (biases included) are all random."""
    decoder = AttentionGRUDecoder(U, **KINDS[kind], **kwargs)
    y, h_enc, s0 = _data()
    decoder(y, h_enc, s0, memory_mask=MASK)
    rng = np.random.default_rng(seed + 100)
    for v in decoder.trainable_weights:
        v.assign((0.5 * rng.normal(size=tuple(v.shape))).astype("float32"))
    return decoder


def _plain_loop(decoder, y, h_enc, s0, mask):
    """`T` plain Bahdanau steps in a Python loop: `[s_t; c_t]` `(B, T, u + C)` and the
    weights `(B, T, h, S)`."""
    t_ = ops.convert_to_tensor
    prepared = decoder.prepare(t_(h_enc), None if mask is None else t_(mask))
    s_prev, outputs, weights = t_(s0), [], []
    for t in range(y.shape[1]):
        y_prev = decoder.project_inputs(t_(y[:, t]))  # y_{t-1} W_y + b_x: (B, 3u)
        s_prev, c_t, alpha = decoder.bahdanau_step(y_prev, s_prev, prepared)
        outputs.append(np.concatenate([to_numpy(s_prev), to_numpy(c_t)], axis=-1))
        weights.append(to_numpy(alpha))
    return np.stack(outputs, axis=1), np.stack(weights, axis=1)


def _reference_step(decoder, y_prev, s_prev, h_enc, mask):
    """One decoder step in float64 NumPy: `(s_t, c_t, alpha_t (B, h, S))`."""
    att = R.weights_of(decoder.attention)
    if decoder.attention_kind == "additive":
        c_t, alpha = R.bahdanau_attention(s_prev, h_enc, att["W_q"], att["W_k"], att["v"],
                                          mask=mask)  # (B, D), (B, S)
        alpha = alpha[:, None, :]  # one head: (B, 1, S)
    else:
        c_t, alpha = R.multi_head_attention(
            s_prev[:, None, :], h_enc, weights=att, num_heads=decoder.num_heads,
            mask=None if mask is None else mask[:, None, :],
            return_weights=True)  # (B, 1, C), (B, h, 1, S)
        c_t, alpha = c_t[:, 0], alpha[:, :, 0]
    x = np.concatenate([y_prev, c_t], axis=-1)  # [y_{t-1}; c_t]
    s_t = R.gru_cell(x, s_prev, *R.weights_of(decoder.cell))
    return s_t, c_t, alpha


# -- (c) the plain step against the float64 reference ------------------------------------
@pytest.mark.parametrize("masked", [True, False])
@pytest.mark.parametrize("kind", list(KINDS))
def test_plain_step_matches_the_float64_reference(kind, masked):
    decoder = _decoder(kind)
    y, h_enc, s0 = _data(1)
    mask = MASK if masked else None
    t_ = ops.convert_to_tensor
    prepared = decoder.prepare(t_(h_enc), None if mask is None else t_(mask))
    got = decoder.bahdanau_step(decoder.project_inputs(t_(y[:, 0])), t_(s0), prepared)
    want = _reference_step(decoder, y[:, 0], s0, h_enc, mask)
    for name, g, w in zip(("s_t", "c_t", "alpha"), got, want):
        assert tuple(g.shape) == w.shape, name
        np.testing.assert_allclose(to_numpy(g), w, atol=1e-5, err_msg=name)
    if masked:  # padding gets weight exactly 0; the row without source, all zeros
        np.testing.assert_array_equal(to_numpy(got[2])[~np.broadcast_to(
            MASK[:, None, :], got[2].shape)], 0.0)


@pytest.mark.parametrize("kind", list(KINDS))
def test_decoder_call_matches_the_float64_reference(kind):
    """The `T` steps of ``call`` (a scan, the input projection hoisted, the mask as
    softmax terms) against the reference fed with its own `s_{t-1}`."""
    decoder = _decoder(kind)
    y, h_enc, s0 = _data(2)
    out, weights = decoder(y, h_enc, s0, memory_mask=MASK, return_attention=True)
    s_prev, want_out, want_w = s0, [], []
    for t in range(T):
        s_prev, c_t, alpha = _reference_step(decoder, y[:, t], s_prev, h_enc, MASK)
        want_out.append(np.concatenate([s_prev, c_t], axis=-1))
        want_w.append(alpha)
    np.testing.assert_allclose(to_numpy(out), np.stack(want_out, 1), atol=1e-5)
    np.testing.assert_allclose(to_numpy(weights), np.stack(want_w, 1), atol=1e-5)


# -- (a), (b) each addition switched off equals the plain step ---------------------------
@pytest.mark.parametrize("kind", list(KINDS))
def test_decoder_without_additions_equals_the_plain_step(kind):
    decoder = _decoder(kind)
    y, h_enc, s0 = _data(3)
    want_out, want_w = _plain_loop(decoder, y, h_enc, s0, MASK)
    for training in (False, True):
        out, weights = decoder(y, h_enc, s0, memory_mask=MASK, return_attention=True,
                               training=training)
        np.testing.assert_allclose(to_numpy(out), want_out, atol=1e-6)
        np.testing.assert_allclose(to_numpy(weights), want_w, atol=1e-6)
    plain_out, _ = _plain_loop(decoder, y, h_enc, s0, None)
    np.testing.assert_allclose(to_numpy(decoder(y, h_enc, s0)), plain_out, atol=1e-6)


@pytest.mark.parametrize("bottleneck", [False, True])
def test_scheduled_sampling_at_ratio_one_equals_the_plain_step(bottleneck):
    """scheduled_sampling=True, training (the sampling path runs), p = 1: every step
    reads the gold y_{t-1}, as the plain step does; p = 0 reads the model's own."""
    decoder = _decoder(scheduled_sampling=True)
    embedding = keras.layers.Embedding(11, E)
    embedding.build((None,))
    width = U + decoder.context_dim(D)
    middle = keras.layers.Dense(4) if bottleneck else None
    if middle is not None:
        middle.build((None, width))
    projection = keras.layers.Dense(11)
    projection.build((None, 4 if bottleneck else width))
    decoder.attach_feedback(embedding, projection, middle)
    assert float(to_numpy(decoder.teacher_forcing_ratio)) == 1.0
    y, h_enc, s0 = _data(4)
    want_out, want_w = _plain_loop(decoder, y, h_enc, s0, MASK)
    out, weights = decoder(y, h_enc, s0, memory_mask=MASK, return_attention=True,
                           training=True)
    np.testing.assert_allclose(to_numpy(out), want_out, atol=1e-6)
    np.testing.assert_allclose(to_numpy(weights), want_w, atol=1e-6)

    decoder.teacher_forcing_ratio.assign(0.0)  # the addition switched on
    free = to_numpy(decoder(y, h_enc, s0, memory_mask=MASK, training=True))
    np.testing.assert_allclose(free[:, 0], want_out[:, 0], atol=1e-6)  # <bos> at step 0
    assert np.abs(free[:, 1:] - want_out[:, 1:]).max() > 1e-4


def test_coverage_with_zero_weight_equals_the_plain_step():
    """coverage=True with w_c = 0 and no loss weight: the coverage term vanishes from
    the score and nothing joins the losses; the plain step (whose score ignores w_c)
    gives the same outputs. With w_c != 0 the weights move."""
    decoder = _decoder(coverage=True)
    y, h_enc, s0 = _data(5)
    w_c = to_numpy(decoder.attention.w_c)
    decoder.attention.w_c.assign(np.zeros_like(w_c))
    want_out, want_w = _plain_loop(decoder, y, h_enc, s0, MASK)
    out, weights = decoder(y, h_enc, s0, memory_mask=MASK, return_attention=True,
                           training=True)
    np.testing.assert_allclose(to_numpy(out), want_out, atol=1e-6)
    np.testing.assert_allclose(to_numpy(weights), want_w, atol=1e-6)
    assert len(decoder.losses) == 0

    decoder.attention.w_c.assign(w_c)  # the addition switched on
    _, moved = decoder(y, h_enc, s0, memory_mask=MASK, return_attention=True)
    np.testing.assert_allclose(to_numpy(moved)[:, 0], want_w[:, 0], atol=1e-6)  # cov_1 = 0
    assert np.abs(to_numpy(moved)[:, 1:] - want_w[:, 1:]).max() > 1e-4
