"""AddNorm, PositionalEncoding, PositionwiseFeedForward and the Transformer blocks
(every backend): reference equality, keras-hub equality, padding invariance, causality,
incremental decoding with positions (the one-position paths of :mod:`kerasattn.steps`
equal to the full causal pass), and bad-input errors."""
import keras
import numpy as np
import pytest
from conftest import to_numpy
from keras import ops

from kerasattn import reference as R
from kerasattn import steps
from kerasattn.layers import (
    AddNorm,
    PositionalEncoding,
    PositionwiseFeedForward,
    RandomPositionShift,
    TransformerDecoderBlock,
    TransformerEncoderBlock,
    positional_encoding,
)

ATOL = 1e-5
rng = np.random.default_rng(0)
B, T, S, D, H, FF = 2, 4, 5, 8, 2, 12
X = rng.normal(size=(B, T, D)).astype("float32")
ENC = rng.normal(size=(B, S, 6)).astype("float32")
DEC_MASK = np.array([[1, 1, 1, 1], [1, 1, 1, 0]], bool)
ENC_MASK = np.array([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], bool)


def _randomize(layer):
    """Non-trivial LayerNorm gammas/betas so the reference comparison sees them."""
    for v in layer.weights:
        v.assign(rng.normal(size=tuple(v.shape)).astype("float32") * 0.5 + (
            1.0 if v.path.endswith("gamma") else 0.0))


def test_add_norm_matches_reference():
    layer = AddNorm(epsilon=1e-5)
    y = rng.normal(size=X.shape).astype("float32")
    layer(X, y)
    _randomize(layer)
    w = R.weights_of(layer)
    np.testing.assert_allclose(to_numpy(layer(X, y)), R.add_norm(X, y, **w), atol=ATOL)


def test_add_norm_errors_and_mask_passthrough():
    with pytest.raises(ValueError, match=r"`y`.*\(2, 4, 8\).*\(2, 4, 6\)"):
        AddNorm()(X, X[..., :6])
    inp = keras.Input((None,), dtype="int32")
    e = keras.layers.Embedding(10, D, mask_zero=True)(inp)
    out = AddNorm()(e, e)
    assert getattr(out, "_keras_mask", None) is not None


def test_positional_encoding_matches_reference():
    layer = PositionalEncoding(max_length=64)
    zeros = np.zeros((1, 6, D), "float32")
    np.testing.assert_allclose(to_numpy(layer(zeros, start_index=5))[0],
                               R.positional_encoding(6, D, start_index=5), atol=ATOL)
    np.testing.assert_allclose(to_numpy(layer(X)), X + R.positional_encoding(T, D)[None],
                               atol=ATOL)
    np.testing.assert_allclose(to_numpy(positional_encoding(3, 6, 2)),
                               R.positional_encoding(3, 6, 2), atol=ATOL)
    scaled = PositionalEncoding(max_length=64, scale_inputs=True)   # sqrt(d_model) X + PE
    np.testing.assert_allclose(to_numpy(scaled(X, start_index=3)),
                               np.sqrt(D) * X + R.positional_encoding(T, D, 3)[None],
                               atol=ATOL)


def test_positional_encoding_per_row_start_matches_reference():
    """A `(B,)` tensor of starts (SHAPE offsets): row b gets PE[s_b .. s_b + T - 1]."""
    layer = PositionalEncoding(max_length=64, scale_inputs=True)
    starts = np.array([7, 0], "int32")
    out = to_numpy(layer(X, start_index=ops.convert_to_tensor(starts)))
    for b, s in enumerate(starts):
        np.testing.assert_allclose(out[b], np.sqrt(D) * X[b] + R.positional_encoding(T, D, s),
                                   atol=ATOL)


def test_random_position_shift():
    shift = RandomPositionShift(max_shift=5, seed=3)
    ids = np.ones((400, 3), "int32")
    k = to_numpy(shift(ids, training=True))
    assert k.shape == (400,) and k.dtype == np.int32
    assert set(k.tolist()) == set(range(6))  # every offset 0..K drawn (400 draws, 6 values)
    assert not to_numpy(shift(ids)).any() and not to_numpy(shift(ids, training=False)).any()
    assert not to_numpy(RandomPositionShift(0)(ids, training=True)).any()
    # shift invariance of the sinusoids: PE[p + k] is PE[p] rotated, so dot products of
    # positions depend only on their distance, whatever the offset
    pe = R.positional_encoding(40, D)
    np.testing.assert_allclose(pe[3] @ pe[5], pe[3 + 17] @ pe[5 + 17], atol=1e-12)
    for bad in (-1, 2.5, True, "3"):
        with pytest.raises(ValueError, match=r"`max_shift`.*received " + repr(bad)):
            RandomPositionShift(bad)


def test_positional_encoding_nested_in_a_layer_without_build():
    """The parent builds the child during Keras's symbolic pass; the table must not be a
    tensor made in that scope (it was: garbage on torch, a leaked tracer on JAX)."""

    class Wrapper(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.pe = PositionalEncoding(max_length=16)

        def call(self, x):
            return self.pe(x)

    zeros = np.zeros((1, 5, D), "float32")
    out = to_numpy(Wrapper()(zeros))
    np.testing.assert_allclose(out[0], R.positional_encoding(5, D), atol=ATOL)


def test_positional_encoding_equals_keras_hub():
    import keras_hub  # installed with the [all] / [nlp] extras (CI installs [all])
    x = rng.normal(size=(B, 7, 10)).astype("float32")
    ours = PositionalEncoding()
    theirs = keras_hub.layers.SinePositionEncoding()
    for start in (0, 9):
        np.testing.assert_allclose(to_numpy(ours(x, start_index=start)) - x,
                                   to_numpy(theirs(x, start_index=start)), atol=ATOL)


def test_positional_encoding_errors():
    with pytest.raises(ValueError, match=r"`x`.*rank 3.*\(2, 8\)"):
        PositionalEncoding()(X[:, 0])
    layer = PositionalEncoding(max_length=6)
    with pytest.raises(ValueError, match=r"max_length=6.*\(2, 4, 8\)"):
        layer(X, start_index=4)
    with pytest.raises(ValueError, match=r"d_model=8.*\(2, 4, 6\)"):
        layer(X[..., :6])
    with pytest.raises(ValueError, match=r"`scale_inputs`.*received 'yes'"):
        PositionalEncoding(scale_inputs="yes")
    with pytest.raises(ValueError, match=r"`start_index`.*\(2, 1\)"):
        layer(X[:, :2], start_index=ops.zeros((2, 1), "int32"))


def test_feed_forward_matches_reference():
    layer = PositionwiseFeedForward(FF)
    out = layer(X)
    w = R.weights_of(layer)
    assert w["W1"].shape == (D, FF) and w["W2"].shape == (FF, D)
    np.testing.assert_allclose(to_numpy(out), R.feed_forward(X, **w), atol=ATOL)
    gelu = PositionwiseFeedForward(FF, activation="gelu")
    np.testing.assert_allclose(to_numpy(gelu(X)),
                               R.feed_forward(X, **R.weights_of(gelu), activation="gelu"),
                               atol=ATOL)
    with pytest.raises(ValueError, match=r"8 features.*\(2, 4, 6\)"):
        layer(X[..., :6])


@pytest.mark.parametrize("scores", [False, True])
def test_encoder_block_matches_reference(scores):
    layer = TransformerEncoderBlock(D, H, FF)
    layer(X)
    _randomize(layer)
    res = layer(X, padding_mask=DEC_MASK, return_attention_scores=scores)
    r_out, r_w = R.encoder_block(X, R.weights_of(layer), H, DEC_MASK, return_weights=True)
    out = res[0] if scores else res
    np.testing.assert_allclose(to_numpy(out)[DEC_MASK], r_out[DEC_MASK], atol=ATOL)
    np.testing.assert_allclose(to_numpy(out), r_out, atol=ATOL)
    if scores:
        np.testing.assert_allclose(to_numpy(res[1]), r_w, atol=ATOL)


@pytest.mark.parametrize("scores", [False, True])
def test_decoder_block_matches_reference(scores):
    layer = TransformerDecoderBlock(D, H, FF)
    layer(X, ENC)
    _randomize(layer)
    res = layer(X, ENC, DEC_MASK, ENC_MASK, return_attention_scores=scores)
    ref = R.decoder_block(X, ENC, R.weights_of(layer), H, DEC_MASK, ENC_MASK,
                          return_weights=True)
    out = res[0] if scores else res
    np.testing.assert_allclose(to_numpy(out), ref[0], atol=ATOL)
    if scores:
        np.testing.assert_allclose(to_numpy(res[1]), ref[1], atol=ATOL)
        np.testing.assert_allclose(to_numpy(res[2]), ref[2], atol=ATOL)


def test_blocks_padding_invariance():
    enc = TransformerEncoderBlock(D, H, FF)
    dec = TransformerDecoderBlock(D, H, FF)
    x2, h2 = X.copy(), ENC.copy()
    x2[~DEC_MASK] = 30.0
    h2[~ENC_MASK] = -30.0
    a = to_numpy(enc(X, padding_mask=DEC_MASK))
    b = to_numpy(enc(x2, padding_mask=DEC_MASK))
    np.testing.assert_allclose(b[DEC_MASK], a[DEC_MASK], atol=1e-5)
    a = to_numpy(dec(X, ENC, DEC_MASK, ENC_MASK))
    b = to_numpy(dec(x2, h2, DEC_MASK, ENC_MASK))
    np.testing.assert_allclose(b[DEC_MASK], a[DEC_MASK], atol=1e-5)


def test_decoder_block_causality():
    dec = TransformerDecoderBlock(D, H, FF)
    base = to_numpy(dec(X, ENC, encoder_padding_mask=ENC_MASK))
    for t in range(T - 1):
        x2 = X.copy()
        x2[:, t + 1:] = rng.normal(size=x2[:, t + 1:].shape)
        out = to_numpy(dec(x2, ENC, encoder_padding_mask=ENC_MASK))
        np.testing.assert_allclose(out[:, :t + 1], base[:, :t + 1], atol=1e-5)
        assert not np.allclose(out[:, t + 1:], base[:, t + 1:], atol=1e-3)


def _compile(fn):
    backend = keras.backend.backend()
    if backend == "jax":
        import jax
        return jax.jit(fn)
    if backend == "tensorflow":
        import tensorflow as tf
        return tf.function(fn)
    return fn


@pytest.mark.parametrize("compiled", [False, True])
def test_decoder_block_step_equals_full_pass(compiled):
    """The decoding path of :mod:`kerasattn.steps` (positional_step, decoder_block_step
    with a head-major (K, V) cache and the memory projected once; the index an int
    eagerly, a tensor under jax.jit / tf.function) equals the full causal pass with
    positions: outputs, self- and cross-attention weights at every step."""
    pe = PositionalEncoding(max_length=16, scale_inputs=True)
    dec = TransformerDecoderBlock(D, H, FF)
    dec(pe(X), ENC, encoder_padding_mask=ENC_MASK)  # build
    _randomize(dec)
    full, w_self, w_cross = dec(pe(X), ENC, encoder_padding_mask=ENC_MASK,
                                return_attention_scores=True)

    def step(x, cache, memory, index, position):
        x_t = steps.positional_step(pe, x, position)  # sqrt(d) x_t + PE[t]: (B, D)
        return steps.decoder_block_step(dec, x_t, cache, memory, index,
                                        encoder_padding_mask=ENC_MASK)
    step = _compile(step) if compiled else step

    def run(position_of):
        cache = steps.init_cache(dec.self_attention, B, T)
        memory = steps.project_memory(dec.cross_attention, ENC)
        outs = []
        for t in range(T):
            index = ops.convert_to_tensor(t, "int32") if compiled else t
            position = ops.convert_to_tensor(position_of(t), "int32") if compiled \
                else position_of(t)
            out, cache, s_w, c_w = step(X[:, t], cache, memory, index, position)
            outs.append((to_numpy(out), to_numpy(s_w), to_numpy(c_w)))
        return outs

    for t, (out, s_w, c_w) in enumerate(run(lambda t: t)):
        np.testing.assert_allclose(out, to_numpy(full)[:, t], atol=ATOL)
        np.testing.assert_allclose(s_w, to_numpy(w_self)[:, :, t], atol=ATOL)
        np.testing.assert_allclose(c_w, to_numpy(w_cross)[:, :, t], atol=ATOL)
        assert np.all(s_w[:, :, t + 1:] == 0)  # future slots get exactly 0
    # the d2l trap: every token at position 0 gives a different (wrong) result
    wrong = np.stack([out for out, _, _ in run(lambda t: 0)], 1)
    assert not np.allclose(wrong, to_numpy(full), atol=1e-3)
    with pytest.raises(ValueError, match=r"`index` must be in \[0, max_length=16\).*index=16"):
        steps.positional_step(pe, X[:, 0], 16)


def test_add_norm_and_feed_forward_steps_equal_call():
    """add_norm_step / feed_forward_step == the layers' call at inference, per position."""
    add_norm, ffn = AddNorm(0.5), PositionwiseFeedForward(FF, dropout=0.5)
    y = rng.normal(size=(B, T, D)).astype("float32")
    want_an = to_numpy(add_norm(X, y, training=False))
    want_ff = to_numpy(ffn(X, training=False))
    _randomize(add_norm)
    want_an = to_numpy(add_norm(X, y, training=False))
    for t in range(T):
        np.testing.assert_allclose(to_numpy(steps.add_norm_step(add_norm, X[:, t], y[:, t])),
                                   want_an[:, t], atol=ATOL)
        np.testing.assert_allclose(to_numpy(steps.feed_forward_step(ffn, X[:, t])),
                                   want_ff[:, t], atol=ATOL)


def test_blocks_use_keras_masks():
    """Masks carried by the inputs (Embedding(mask_zero=True)) are used automatically."""
    src = np.array([[3, 4, 5, 0, 0], [6, 7, 0, 0, 0]], "int32")
    tgt = np.array([[2, 8, 9, 1], [2, 5, 1, 0]], "int32")
    emb_s, emb_t = (keras.layers.Embedding(10, D, mask_zero=True) for _ in range(2))
    enc, dec = TransformerEncoderBlock(D, H, FF), TransformerDecoderBlock(D, H, FF)
    h = enc(emb_s(src))
    out = to_numpy(dec(emb_t(tgt), h))
    h_explicit = enc(emb_s(src), padding_mask=src != 0)
    expected = to_numpy(dec(emb_t(tgt), h_explicit, tgt != 0, src != 0))
    np.testing.assert_allclose(out, expected, atol=1e-6)
    no_mask = to_numpy(dec(emb_t(tgt), h_explicit, encoder_padding_mask=np.ones_like(src, bool)))
    assert not np.allclose(out, no_mask, atol=1e-4)


def test_block_errors():
    enc, dec = TransformerEncoderBlock(D, H, FF), TransformerDecoderBlock(D, H, FF)
    with pytest.raises(ValueError, match=r"`x`.*rank 3.*\(2, 8\)"):
        enc(X[:, 0])
    with pytest.raises(ValueError, match=r"`padding_mask`.*\(2, 4\).*\(2, 4, 8\).*\(2, 5\)"):
        enc(X, padding_mask=ENC_MASK)
    with pytest.raises(ValueError, match=r"`encoder_padding_mask`.*\(2, 5\).*\(2, 4\)"):
        dec(X, ENC, encoder_padding_mask=DEC_MASK)
    with pytest.raises(ValueError, match=r"`encoder_sequence`.*\(3, 5, 6\).*\(2, 4, 8\)"):
        dec(X, np.zeros((3, 5, 6), "float32"))
    with pytest.raises(ValueError, match=r"d_model=8.*\(2, 4, 6\)"):
        dec(X[..., :6], ENC)
