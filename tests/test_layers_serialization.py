"""get_config round trips, a `.keras` round trip of a model using every layer, and loading
that file on the other two backends (every backend saves once)."""
import json
from concurrent.futures import ThreadPoolExecutor

import keras
import numpy as np
import pytest
from conftest import other_backends, run_in_backend, to_numpy

from kerasattn.layers import (
    AddNorm,
    BahdanauAttention,
    EncoderGRU,
    MultiHeadCross,
    PositionalEncoding,
    PositionwiseFeedForward,
    RandomPositionShift,
    TransformerDecoderBlock,
    TransformerEncoderBlock,
)

LAYERS = [
    AddNorm(dropout=0.1, epsilon=1e-6),
    BahdanauAttention(5, score="general", dropout=0.2),
    EncoderGRU(6, bidirectional=False),
    MultiHeadCross(2, 8, dropout=0.1, use_bias=False),
    PositionalEncoding(max_length=100, max_wavelength=500.0, dropout=0.3, scale_inputs=True),
    PositionwiseFeedForward(16, activation="gelu", dropout=0.1),
    RandomPositionShift(7, seed=11),
    TransformerEncoderBlock(8, 2, 16, dropout=0.1),
    TransformerDecoderBlock(8, 4, 32, dropout=0.2),
]


@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: type(layer).__name__)
def test_get_config_round_trip(layer):
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    # and through the registered name, as `.keras` loading does
    serialized = keras.saving.serialize_keras_object(layer)
    assert serialized["registered_name"] == f"kerasattn>{type(layer).__name__}"
    again = keras.saving.deserialize_keras_object(json.loads(json.dumps(serialized)))
    assert type(again) is type(layer) and again.get_config() == config


def build_model():
    """A small encoder-decoder that uses every kerasattn layer once."""
    src = keras.Input((None,), dtype="int32", name="encoder_inputs")
    tgt = keras.Input((None,), dtype="int32", name="decoder_inputs")
    h = keras.layers.Embedding(20, 8, mask_zero=True)(src)
    k = RandomPositionShift(4)(src)  # SHAPE offsets: drawn in training, 0 here
    h = PositionalEncoding(max_length=32)(h, start_index=k)
    h = TransformerEncoderBlock(8, 2, 16)(h)
    y = keras.layers.Embedding(20, 8, mask_zero=True)(tgt)
    y = PositionalEncoding(max_length=32)(y, start_index=k)
    y = TransformerDecoderBlock(8, 2, 16)(y, h)
    g, _, _ = EncoderGRU(4)(keras.layers.Embedding(20, 5, mask_zero=True)(src))  # (B, S, 8)
    context, _ = BahdanauAttention(6)(y, g)  # memory_mask from g's Keras mask
    cross = MultiHeadCross(2, 8)(y, h)
    z = AddNorm()(y, PositionwiseFeedForward(16)(cross))
    z = keras.layers.Concatenate()([z, context])
    return keras.Model([src, tgt], keras.layers.Dense(20, name="logits")(z))


def forward(model, inputs):
    """Run the model; on JAX through `predict` (one jit compile instead of compiling every
    op eagerly, which dominates the test time on a busy CPU)."""
    if keras.backend.backend() == "jax":
        return model.predict(inputs, verbose=0, batch_size=len(inputs[0]))
    return to_numpy(model(inputs))


SRC = np.array([[5, 6, 7, 8, 0, 0], [9, 3, 0, 0, 0, 0]], "int32")
TGT = np.array([[2, 4, 6, 8, 1], [2, 7, 1, 0, 0]], "int32")


def test_model_padding_invariance():
    """Padding the source never changes the logits; padding the target never changes the
    logits at real target positions."""
    model = build_model()
    full = forward(model, [SRC, TGT])
    short = forward(model, [SRC[:1, :4], TGT[:1]])
    np.testing.assert_allclose(full[:1], short, atol=1e-5)
    short = forward(model, [SRC[1:, :2], TGT[1:, :3]])
    np.testing.assert_allclose(full[1:, :3], short, atol=1e-5)


def test_keras_round_trip_and_cross_backend_load(tmp_path):
    model = build_model()
    expected = forward(model, [SRC, TGT])
    path = tmp_path / "every_layer.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    np.testing.assert_allclose(forward(loaded, [SRC, TGT]), expected, atol=1e-6)
    assert {type(layer).__name__ for layer in loaded.layers} >= {
        "PositionalEncoding", "TransformerEncoderBlock", "TransformerDecoderBlock",
        "BahdanauAttention", "MultiHeadCross", "AddNorm", "PositionwiseFeedForward",
        "RandomPositionShift", "EncoderGRU"}

    code = f"""
        import json, keras, numpy as np
        import kerasattn.layers  # registers the custom layers
        model = keras.models.load_model({str(path)!r})
        src = np.array({SRC.tolist()}, "int32"); tgt = np.array({TGT.tolist()}, "int32")
        if keras.backend.backend() == "jax":
            out = model.predict([src, tgt], verbose=0, batch_size=2)
        else:
            out = keras.ops.convert_to_numpy(model([src, tgt]))
        print(json.dumps({{"backend": keras.backend.backend(), "out": out.tolist()}}))
    """
    backends = other_backends()
    # The two child processes mostly wait on imports: run them side by side.
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda b: run_in_backend(b, code), backends))
    for backend, result in zip(backends, results):
        assert result["backend"] == backend
        np.testing.assert_allclose(np.array(result["out"]), expected, atol=1e-5)
