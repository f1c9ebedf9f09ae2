"""Mask helpers and the masked softmax (every backend), exact in half precision too."""
import keras
import numpy as np
import pytest
from conftest import grad, to_numpy
from keras import ops

from kerasattn import reference as R
from kerasattn import steps
from kerasattn.layers import (
    BahdanauAttention,
    MultiHeadCross,
    TransformerDecoderBlock,
    causal_mask,
    combine_masks,
    masked_softmax,
    padding_mask,
    scaled_dot_product_attention,
)
from kerasattn.layers.masking import mask_fill_value
from kerasattn.steps import biased_softmax, causal_step_bias, mask_bias


def test_padding_mask():
    ids = np.array([[4, 7, 0, 0], [9, 0, 0, 0]], "int32")
    np.testing.assert_array_equal(to_numpy(padding_mask(ids)), R.padding_mask(ids))
    np.testing.assert_array_equal(to_numpy(padding_mask(ids, pad_id=9))[1],
                                  [False, True, True, True])


@pytest.mark.parametrize("tq,tk,offset", [(4, None, 0), (2, 5, 3), (3, 3, 1)])
def test_causal_mask(tq, tk, offset):
    np.testing.assert_array_equal(to_numpy(causal_mask(tq, tk, offset)),
                                  R.causal_mask(tq, tk, offset))


def test_causal_mask_tensor_offset():
    got = to_numpy(causal_mask(1, 4, offset=ops.convert_to_tensor(2, "int32")))
    np.testing.assert_array_equal(got, [[True, True, True, False]])


def test_combine_masks():
    a = np.array([[True, True, False]])
    b = np.array([[True], [False]])
    np.testing.assert_array_equal(to_numpy(combine_masks(a, None, b)), a & b)
    assert combine_masks(None, None) is None


def test_masked_softmax_matches_reference_and_zero_rows():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(2, 3, 4)).astype("float32") * 3
    mask = rng.random((2, 3, 4)) > 0.4
    mask[0, 1] = False  # a fully masked row
    got = to_numpy(masked_softmax(scores, mask))
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, R.masked_softmax(scores, mask), atol=1e-6)
    np.testing.assert_array_equal(got[0, 1], 0.0)
    np.testing.assert_allclose(to_numpy(masked_softmax(scores)), R.softmax(scores),
                               atol=1e-6)


def test_biased_softmax_equals_masked_softmax_values_and_gradients():
    """The loop form `softmax(e + bias) * keep` (bias, keep computed once) is the masked
    softmax: same weights (exact zeros at the mask, a fully masked row all 0) and the same
    gradient with respect to the scores."""
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(3, 2, 5)).astype("float32") * 3
    mask = rng.random((3, 1, 5)) > 0.4
    mask[1] = False  # a fully masked row
    mask[0, 0, 0] = True
    bias, keep = mask_bias(mask, "float32")
    assert tuple(bias.shape) == tuple(keep.shape) == mask.shape
    got = to_numpy(biased_softmax(scores, bias, keep))
    np.testing.assert_allclose(got, R.masked_softmax(scores, mask), atol=1e-6)
    np.testing.assert_array_equal(got[~np.broadcast_to(mask, got.shape)], 0.0)
    np.testing.assert_array_equal(got[1], 0.0)
    w = rng.normal(size=scores.shape).astype("float32")  # a loss that weighs every entry
    g_masked = grad(lambda e: ops.sum(ops.multiply(masked_softmax(e, mask), w)), scores)[0]
    g_biased = grad(lambda e: ops.sum(ops.multiply(biased_softmax(e, bias, keep), w)),
                    scores)[0]
    np.testing.assert_allclose(g_biased, g_masked, atol=1e-6)
    np.testing.assert_array_equal(g_biased[1], 0.0)  # nothing flows into a masked row


@pytest.mark.parametrize("t", [0, 3, 5])
def test_causal_step_bias_is_row_t_of_the_causal_mask(t):
    """The per-step causal terms (NumPy-built for an int step, backend ops for a tensor
    step, as in a compiled loop) are `mask_bias` of row t of the causal mask."""
    want_bias, want_keep = (to_numpy(a) for a in mask_bias(R.causal_mask(6)[t:t + 1]))
    for index in (t, ops.convert_to_tensor(t, "int32")):
        bias, keep = causal_step_bias(index, 6, "float32")
        assert tuple(bias.shape) == tuple(keep.shape) == (1, 6)
        np.testing.assert_array_equal(to_numpy(keep), want_keep)
        np.testing.assert_array_equal(to_numpy(bias), want_bias)
    np.testing.assert_array_equal(want_keep[0], np.arange(6) <= t)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_causal_step_bias_in_half_precision(dtype):
    """Mixed-precision decoding: the terms come in the scores' dtype, for an eager int
    step and for a traced tensor step, with the half-precision filler."""
    for index in (2, ops.convert_to_tensor(2, "int32")):
        bias, keep = causal_step_bias(index, 4, dtype)
        assert keras.backend.standardize_dtype(bias.dtype) == dtype
        assert keras.backend.standardize_dtype(keep.dtype) == dtype
        np.testing.assert_array_equal(to_numpy(ops.cast(keep, "float32"))[0],
                                      [1.0, 1.0, 1.0, 0.0])
        assert float(to_numpy(ops.cast(bias, "float32"))[0, 3]) == pytest.approx(
            mask_fill_value(dtype), rel=1e-2)
        np.testing.assert_array_equal(to_numpy(ops.cast(bias, "float32"))[0, :3], 0.0)


# -- half precision ----------------------------------------------------------------------
HALF = ["float16", "bfloat16"]


def _f32(x):
    return to_numpy(ops.cast(x, "float32"))


@pytest.mark.parametrize("dtype", HALF + ["float32", "float64"])
def test_mask_fill_value_is_finite_with_room_for_a_score(dtype):
    """The filler is finite in its dtype, far below real scores, and adding a score to
    it (the additive form of the mask) stays finite."""
    fill = ops.full((3,), mask_fill_value(dtype), dtype=dtype)
    score = ops.convert_to_tensor(np.array([-1000.0, 0.0, 1000.0]), dtype=dtype)
    for x in (fill, ops.add(fill, score)):
        assert np.all(np.isfinite(_f32(x)))
        assert np.all(_f32(x) <= -3e4)
    with pytest.raises(ValueError, match=r"`dtype`.*received dtype='int32'"):
        mask_fill_value("int32")


@pytest.mark.parametrize("dtype", HALF)
def test_masked_softmax_is_exact_in_half_precision(dtype):
    """float16 / bfloat16 scores: masked entries get exactly 0, a fully masked row all 0
    (no NaN), kept rows sum to 1; the same through biased_softmax's additive terms."""
    rng = np.random.default_rng(2)
    scores = (rng.normal(size=(3, 4, 6)) * 20).astype("float32")
    scores[0, 0, 0] = 60000.0 if dtype == "float16" else 1e30  # near the dtype's limit
    mask = rng.random((3, 4, 6)) > 0.5
    mask[1, 2] = False  # a fully masked row
    mask[0, 0, 0] = mask[2, :, 1] = True
    e = ops.convert_to_tensor(scores, dtype=dtype)
    bias, keep = mask_bias(mask, dtype)
    for got in (masked_softmax(e, mask), biased_softmax(e, bias, keep)):
        assert keras.backend.standardize_dtype(got.dtype) == dtype
        got = _f32(got)
        assert np.all(np.isfinite(got))
        np.testing.assert_array_equal(got[~mask], 0.0)
        np.testing.assert_array_equal(got[1, 2], 0.0)
        rows = mask.any(-1)
        np.testing.assert_allclose(got.sum(-1)[rows], 1.0, atol=2e-2)
        np.testing.assert_allclose(got, R.masked_softmax(_f32(e), mask), atol=2e-2)


@pytest.fixture
def mixed_bfloat16():
    """The `mixed_bfloat16` policy for the layers built inside the test."""
    before = keras.config.dtype_policy()
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        yield
    finally:
        keras.config.set_dtype_policy(before)


def _check_weights(w, allowed):
    """Attention weights in bfloat16: exactly 0 where not allowed, rows with an allowed
    key sum to 1, rows without one are all 0 (no NaN)."""
    assert keras.backend.standardize_dtype(w.dtype) == "bfloat16"
    w = _f32(w)
    allowed = np.broadcast_to(allowed, w.shape)
    assert np.all(np.isfinite(w))
    np.testing.assert_array_equal(w[~allowed], 0.0)
    rows = allowed.any(-1)
    np.testing.assert_allclose(w.sum(-1)[rows], 1.0, atol=2e-2)
    np.testing.assert_array_equal(w[~rows], 0.0)


def test_layers_are_exact_under_mixed_bfloat16(mixed_bfloat16):
    """One layer of each kind under `mixed_bfloat16` (bfloat16 compute, float32 weights):
    additive attention, scaled dot-product and multi-head attention, the decoder block,
    and the decoding steps: masked keys get exactly 0 weight, fully masked rows zeros."""
    rng = np.random.default_rng(3)
    q = rng.normal(size=(2, 3, 8)).astype("float32")
    memory = rng.normal(size=(2, 5, 8)).astype("float32")
    mem_mask = np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]], bool)  # row 1: no source
    q_mask = np.array([[1, 1, 1], [1, 1, 0]], bool)

    bahdanau = BahdanauAttention(4)
    context, alpha = bahdanau(q, memory, memory_mask=mem_mask)
    assert bahdanau.compute_dtype == "bfloat16"
    _check_weights(alpha, mem_mask[:, None, :])
    np.testing.assert_array_equal(_f32(context)[1], 0.0)  # nothing to attend to

    out, w = scaled_dot_product_attention(ops.cast(q, "bfloat16"),
                                          ops.cast(memory, "bfloat16"),
                                          ops.cast(memory, "bfloat16"),
                                          mask=mem_mask[:, None, :])
    _check_weights(w, mem_mask[:, None, :])
    np.testing.assert_array_equal(_f32(out)[1], 0.0)

    mha = MultiHeadCross(2, 8)
    out, w = mha(q, memory, query_mask=q_mask, value_mask=mem_mask,
                 return_attention_scores=True)
    allowed = q_mask[:, None, :, None] & mem_mask[:, None, None, :]  # (B, 1, T_q, T_k)
    _check_weights(w, allowed)
    assert np.all(np.isfinite(_f32(out)))
    c_step, w_step = steps.attend_step(mha, ops.cast(q[:, 0], "bfloat16"),
                                       steps.project_memory(mha, memory),
                                       memory_mask=mem_mask)
    _check_weights(w_step, mem_mask[:, None, :])
    assert np.all(np.isfinite(_f32(c_step)))

    block = TransformerDecoderBlock(8, 2, 16)
    z, w_self, w_cross = block(q, memory, decoder_padding_mask=q_mask,
                               encoder_padding_mask=mem_mask, return_attention_scores=True)
    causal = np.tril(np.ones((3, 3), bool))
    _check_weights(w_self, q_mask[:, None, :, None] & q_mask[:, None, None, :] & causal)
    _check_weights(w_cross, allowed)
    assert np.all(np.isfinite(_f32(z)))
    cache = steps.init_cache(block.self_attention, 2, 4)
    kv = steps.project_memory(block.cross_attention, memory)
    for t in range(3):
        x_t = ops.cast(q[:, t], "bfloat16")
        z_t, cache, s_w, c_w = steps.decoder_block_step(block, x_t, cache, kv, t,
                                                        encoder_padding_mask=mem_mask)
        _check_weights(s_w, (np.arange(4) <= t)[None, None, :])  # keys 0..t of 4 slots
        _check_weights(c_w, mem_mask[:, None, :])
        assert np.all(np.isfinite(_f32(z_t)))


def test_masked_softmax_over_a_single_key_without_warning():
    """One key: weight 1 (0 where masked), and no warning from ops.softmax about a
    constant result (the first step of uncached decoding has exactly one key)."""
    import warnings
    scores = np.array([[[0.3], [-2.0]]], "float32")  # (1, 2, 1)
    mask = np.array([[[True], [False]]])
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*softmax.*")
        plain, masked = masked_softmax(scores), masked_softmax(scores, mask)
    np.testing.assert_array_equal(to_numpy(plain), 1.0)
    np.testing.assert_array_equal(to_numpy(masked), [[[1.0], [0.0]]])
