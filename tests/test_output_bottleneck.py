"""`bahdanau` with an output bottleneck (``output_units``): t_t = W_t [s_t; c_t] + b_t."""
import os

import keras
import numpy as np
import pytest

from kerasattn.decoding import Stepper, greedy_decode
from kerasattn.models import build_model
from tests.conftest import to_numpy
from tests.tiny_models import tiny_inputs

HP = dict(embed_dim=8, units=8, attention_units=8, dropout=0.0)


def _model(**kw):
    keras.utils.set_random_seed(7)
    return build_model("bahdanau", 12, 13, **HP, **kw)


def test_logits_follow_the_bottleneck_equation():
    model = _model(output_units=5)
    x = tiny_inputs(n=3)
    decoder = model.get_layer("attention_decoder")
    o = keras.Model(model.inputs, decoder.output)(x)  # [s_t; c_t]: (B, T, u + C)
    o = to_numpy(o).astype(np.float64)
    neck, out = model.get_layer("output_bottleneck"), model.get_layer("output_projection")
    w_t, b_t = (to_numpy(v).astype(np.float64) for v in (neck.kernel, neck.bias))
    w_o, b_o = (to_numpy(v).astype(np.float64) for v in (out.kernel, out.bias))
    want = (o @ w_t + b_t) @ w_o + b_o  # W_o (W_t [s_t; c_t] + b_t) + b_o
    assert w_t.shape == (8 + 16, 5) and w_o.shape == (5, 13)
    np.testing.assert_allclose(to_numpy(model(x)), want, rtol=1e-4, atol=1e-5)


def test_without_output_units_there_is_no_bottleneck():
    names = {layer.name for layer in _model().layers}
    assert "output_bottleneck" not in names and "output_projection" in names


def test_step_decoding_equals_the_full_model_and_survives_a_round_trip(tmp_path):
    model = _model(output_units=5)
    x = tiny_inputs(n=3)
    enc, dec = x["encoder_inputs"], x["decoder_inputs"]
    full = to_numpy(model(x))
    stepper = Stepper(model, 8)
    stepper.start(enc)
    steps = [to_numpy(stepper.step(dec[:, t], t)[0]) for t in range(dec.shape[1])]
    np.testing.assert_allclose(np.stack(steps, axis=1), full, rtol=1e-4, atol=1e-4)
    path = os.path.join(tmp_path, "bottleneck.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(to_numpy(loaded(x)), full, rtol=1e-6, atol=1e-6)
    a = greedy_decode(model, enc, max_length=6, compile=False)
    b = greedy_decode(loaded, enc, max_length=6, compile=False)
    np.testing.assert_array_equal(a.tokens, b.tokens)


def test_scheduled_sampling_feeds_back_through_the_bottleneck():
    # ratio 0: every step reads the argmax of the previous step's logits, which pass
    # through t_{t-1}; the greedy decoder computes the same logits step by step
    model = _model(output_units=5, scheduled_sampling=True)
    model.get_layer("attention_decoder").teacher_forcing_ratio.assign(0.0)
    x = tiny_inputs(n=3)
    t = x["decoder_inputs"].shape[1]
    logits = to_numpy(model(x, training=True))
    out = greedy_decode(model, x["encoder_inputs"], max_length=t, return_logits=True,
                        compile=False)
    steps = np.asarray(out.step_logits)
    n = min(steps.shape[1], t)
    for b in range(logits.shape[0]):
        tokens = np.asarray(out.tokens)[b]
        stop = next((i for i, tok in enumerate(tokens[:n]) if tok == 3), n - 1)
        np.testing.assert_allclose(logits[b, :stop + 1], steps[b, :stop + 1],
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "wide"])
def test_bad_output_units_is_named(bad):
    with pytest.raises(ValueError, match="output_units"):
        _model(output_units=bad)
