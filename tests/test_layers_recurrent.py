"""The recurrent pieces (every backend): the GRU step and the scan they run on,
EncoderGRU and the Bahdanau decoder's GRU step.

Each equals the float64 NumPy reference (and Keras's own masked GRU / GRUCell) given the
same weights; plus padding invariance, gradients that never reach the padding, compiled
execution and bad-input errors.
"""
import keras
import numpy as np
import pytest
from conftest import grad, to_numpy
from keras import ops

from kerasattn import reference as R
from kerasattn import steps
from kerasattn.layers import EncoderGRU
from kerasattn.models.attention_decoder import AttentionGRUDecoder
from kerasattn.recurrence import gru_step, scan

ATOL = 1e-5
rng = np.random.default_rng(3)
B, S, E, U = 4, 6, 5, 3
X = rng.normal(size=(B, S, E)).astype("float32")
LENGTHS = np.array([6, 3, 1, 0])  # a full row, two padded rows, an empty row
MASK = np.arange(S)[None, :] < LENGTHS[:, None]


# -- the reference itself -------------------------------------------------------------
def test_reference_gru_cell_equals_keras_gru_cell():
    cell = keras.layers.GRUCell(U)
    x, s = X[:, 0], rng.normal(size=(B, U)).astype("float32")
    out, _ = cell(x, [s])
    kernel, recurrent, bias = R.weights_of(cell)
    bias = rng.normal(size=bias.shape)  # Keras initialises biases to 0: make them count
    cell.bias.assign(bias.astype("float32"))
    out, _ = cell(x, [s])
    np.testing.assert_allclose(to_numpy(out), R.gru_cell(x, s, kernel, recurrent, bias),
                               atol=ATOL)


# -- gru_step and scan ----------------------------------------------------------------
def test_gru_step_runs_stacked_grus_side_by_side():
    """One call with the weights of D = 2 GRUs stacked on a leading axis (what EncoderGRU
    does for its two directions) equals each GRU's own step and the NumPy cell."""
    cells = [keras.layers.GRUCell(U), keras.layers.GRUCell(U)]
    x = rng.normal(size=(2, B, E)).astype("float32")
    s = rng.normal(size=(2, B, U)).astype("float32")
    weights = []
    for cell in cells:
        cell.build((None, E))
        cell.bias.assign(rng.normal(size=(2, 3 * U)).astype("float32"))
        weights.append(R.weights_of(cell))
    f32 = lambda a: ops.convert_to_tensor(np.asarray(a, "float32"))  # noqa: E731
    proj = np.stack([x[d] @ k + b[0] for d, (k, _, b) in enumerate(weights)])  # (2, B, 3u)
    u = np.stack([r for _, r, _ in weights])
    b_s = np.stack([b[1] for _, _, b in weights])[:, None, :]
    both = to_numpy(gru_step(f32(proj), f32(s), f32(u), f32(b_s)))
    for d, (k, r, b) in enumerate(weights):
        alone = to_numpy(gru_step(f32(proj[d]), f32(s[d]), f32(r), f32(b[1])))
        np.testing.assert_allclose(both[d], alone, atol=ATOL)
        np.testing.assert_allclose(both[d], R.gru_cell(x[d], s[d], k, r, b), atol=ATOL)


def test_scan_values_and_gradient():
    """`scan` (an unstacked Python loop on torch, ops.scan elsewhere) on the linear
    recurrence s_t = a s_{t-1} + x_t: states, tuple outputs, and d(sum_t s_t)/dx_t =
    sum_{k >= t} a^(k - t), which is the gradient the torch loop must deliver."""
    T, a = 5, 0.5
    xs = rng.normal(size=(T, 2, 3)).astype("float32")

    def body(carry, x_t):  # (TensorFlow's scan wants outputs shaped like the carry)
        s = carry[0] * a + x_t
        return (s, carry[1] + s), (s, 2.0 * s)

    zeros = np.zeros((2, 3), "float32")
    (s_T, running), (states, doubled) = scan(body, (zeros, zeros), xs)
    want = np.zeros((2, 3))
    wants = []
    for t in range(T):
        want = a * want + xs[t]
        wants.append(want)
    np.testing.assert_allclose(to_numpy(states), np.stack(wants), atol=1e-6)
    np.testing.assert_allclose(to_numpy(doubled), 2.0 * np.stack(wants), atol=1e-6)
    np.testing.assert_allclose(to_numpy(s_T), wants[-1], atol=1e-6)
    np.testing.assert_allclose(to_numpy(running), np.sum(wants, axis=0), atol=1e-5)

    def total(x):
        return ops.sum(scan(lambda s, x_t: (s * a + x_t, s * a + x_t),
                            ops.zeros((2, 3)), x)[1])

    g = grad(total, xs)[0]
    expect = np.array([sum(a ** (k - t) for k in range(t, T)) for t in range(T)])
    np.testing.assert_allclose(g, np.broadcast_to(expect[:, None, None], xs.shape),
                               atol=1e-6)


# -- EncoderGRU ---------------------------------------------------------------------------
@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("masked", [True, False])
def test_encoder_gru_matches_reference(bidirectional, masked):
    mask = MASK if masked else None
    layer = EncoderGRU(U, bidirectional=bidirectional)
    got = layer(X, mask=mask)
    want = R.encoder_gru(X, R.weights_of(layer), mask, bidirectional)
    assert len(got) == (3 if bidirectional else 2)
    for g, w in zip(got, want):
        assert tuple(g.shape) == w.shape
        np.testing.assert_allclose(to_numpy(g), w, atol=ATOL)
    if masked:  # padding: outputs 0; the empty row: states 0
        np.testing.assert_array_equal(to_numpy(got[0])[~MASK], 0.0)
        for state in got[1:]:
            np.testing.assert_array_equal(to_numpy(state)[3], 0.0)


def test_encoder_gru_equals_keras_masked_gru():
    """Same weights, same mask: Keras's Bidirectional(GRU) and GRU agree on every real
    position and on the final states (rows with at least one word)."""
    layer = EncoderGRU(U)
    h, s_fwd, s_bwd = layer(X, mask=MASK)
    bi = keras.layers.Bidirectional(
        keras.layers.GRU(U, return_sequences=True, return_state=True))
    bi.build((None, S, E))
    bi.forward_layer.set_weights(layer.forward_gru.get_weights())
    bi.backward_layer.set_weights(layer.backward_gru.get_weights())
    k_h, k_fwd, k_bwd = (to_numpy(t) for t in bi(X, mask=MASK))
    real = LENGTHS > 0
    np.testing.assert_allclose(to_numpy(h)[MASK], k_h[MASK], atol=ATOL)
    np.testing.assert_allclose(to_numpy(s_fwd)[real], k_fwd[real], atol=ATOL)
    np.testing.assert_allclose(to_numpy(s_bwd)[real], k_bwd[real], atol=ATOL)

    uni = EncoderGRU(U, bidirectional=False)
    _, s = uni(X, mask=MASK)
    gru = keras.layers.GRU(U, return_state=True)
    gru.build((None, S, E))
    gru.set_weights(uni.forward_gru.get_weights())
    _, k_s = gru(X, mask=MASK)
    np.testing.assert_allclose(to_numpy(s)[real], to_numpy(k_s)[real], atol=ATOL)


def test_encoder_gru_padding_never_leaks():
    """Garbage in the padding changes nothing, and no gradient reaches it."""
    layer = EncoderGRU(U)
    h, s_fwd, s_bwd = (to_numpy(t) for t in layer(X, mask=MASK))
    noisy = X.copy()
    noisy[~MASK] = 100.0 * rng.normal(size=noisy[~MASK].shape)
    h2, f2, b2 = (to_numpy(t) for t in layer(noisy, mask=MASK))
    np.testing.assert_allclose(h2, h, atol=1e-6)
    np.testing.assert_allclose(f2, s_fwd, atol=1e-6)
    np.testing.assert_allclose(b2, s_bwd, atol=1e-6)
    # one padding column more: the real positions do not move
    wider = np.concatenate([X, np.ones((B, 2, E), "float32")], axis=1)
    wide_mask = np.concatenate([MASK, np.zeros((B, 2), bool)], axis=1)
    h3, f3, b3 = (to_numpy(t) for t in layer(wider, mask=wide_mask))
    np.testing.assert_allclose(h3[:, :S], h, atol=1e-6)
    np.testing.assert_allclose(f3, s_fwd, atol=1e-6)
    np.testing.assert_allclose(b3, s_bwd, atol=1e-6)

    probe = rng.normal(size=(B, S, 2 * U)).astype("float32")
    weights = [to_numpy(v) for v in layer.trainable_variables]
    frozen = [v.value for v in layer.non_trainable_variables]  # the GRUs' seed states

    def loss(x, *ws):
        (h, s_f, s_b), _ = layer.stateless_call(list(ws), frozen, x, mask=MASK)
        return ops.sum(h * ops.convert_to_tensor(probe)) + ops.sum(s_f) + ops.sum(s_b)

    g = grad(loss, X, *weights)[0]
    np.testing.assert_array_equal(g[~MASK], 0.0)
    assert np.abs(g[MASK]).min() > 0.0


def test_encoder_gru_in_a_compiled_model():
    """Inside a functional model run by predict (jit on JAX, a graph on TensorFlow)."""
    ids = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(10, E, mask_zero=True)(ids)
    h, _, s_bwd = EncoderGRU(U, name="enc")(x)  # mask taken from the embedding
    model = keras.Model(ids, [h, s_bwd])
    data = np.array([[4, 5, 6, 0, 0], [7, 8, 0, 0, 0]], "int32")
    h, s_bwd = model.predict(data, verbose=0)
    emb = to_numpy(model.layers[1](data))
    want = R.encoder_gru(emb, R.weights_of(model.get_layer("enc")), data != 0)
    np.testing.assert_allclose(h, want[0], atol=ATOL)
    np.testing.assert_allclose(s_bwd, want[2], atol=ATOL)


def test_encoder_gru_errors():
    with pytest.raises(ValueError, match=r"`units`.*received units=0"):
        EncoderGRU(0)
    layer = EncoderGRU(U)
    with pytest.raises(ValueError, match=r"`inputs`.*rank 3.*\(4, 6\)"):
        layer(X[:, :, 0])
    with pytest.raises(ValueError, match=r"`mask`.*\(B, S\) = \(4, 6\).*\(4, 5\)"):
        layer(X, mask=MASK[:, :5])


# -- the Bahdanau decoder's step ----------------------------------------------------------
@pytest.mark.parametrize("attention", ["additive", "multihead"])
def test_attention_gru_decoder_equals_the_keras_cell_loop(attention):
    """The decoder's own GRU step (input projection hoisted out of the loop) equals
    Keras's GRUCell on `[y_{t-1}; c_t]`, step by step, and the NumPy reference cell."""
    T, D = 4, 8
    y = rng.normal(size=(B, T, E)).astype("float32")
    memory = rng.normal(size=(B, S, D)).astype("float32")
    s0 = rng.normal(size=(B, U)).astype("float32")
    mask = MASK.copy()
    mask[3, :2] = True
    kwargs = (dict(attention_units=5) if attention == "additive"
              else dict(num_heads=2, d_attention=8))
    decoder = AttentionGRUDecoder(U, attention=attention, **kwargs)
    out, weights = decoder(y, memory, s0, memory_mask=mask, return_attention=True)
    decoder.cell.bias.assign(rng.normal(size=(2, 3 * U)).astype("float32"))
    out, weights = decoder(y, memory, s0, memory_mask=mask, return_attention=True)
    kernel, recurrent, bias = R.weights_of(decoder.cell)

    keys = decoder.precompute(memory)
    s, states = s0, []
    for t in range(T):
        if attention == "additive":
            c, a = decoder.attention(s, memory, memory_mask=mask, memory_keys=keys)
            a = to_numpy(a)[:, None]
        else:
            c, a = steps.attend_step(decoder.attention, s, keys, memory_mask=mask)
            a = to_numpy(a)
        x = np.concatenate([y[:, t], to_numpy(c)], axis=-1)
        want = R.gru_cell(x, to_numpy(s), kernel, recurrent, bias)
        s, _ = decoder.cell(x, [s])
        np.testing.assert_allclose(to_numpy(s), want, atol=ATOL)
        states.append(np.concatenate([to_numpy(s), to_numpy(c)], axis=-1))
        np.testing.assert_allclose(to_numpy(weights)[:, t], a, atol=ATOL)
    np.testing.assert_allclose(to_numpy(out), np.stack(states, axis=1), atol=ATOL)
