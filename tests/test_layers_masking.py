"""Mask helpers and the masked softmax (every backend)."""
import keras
import numpy as np
import pytest
from keras import ops

from conftest import to_numpy
from kerasattn import reference as R
from kerasattn.layers import causal_mask, combine_masks, masked_softmax, padding_mask
from kerasattn.layers.masking import biased_softmax, causal_step_bias, mask_bias
from test_layers_attention import grad


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
        assert float(to_numpy(ops.cast(bias, "float32"))[0, 3]) < -1e4
        np.testing.assert_array_equal(to_numpy(ops.cast(bias, "float32"))[0, :3], 0.0)
