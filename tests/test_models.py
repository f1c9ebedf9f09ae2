"""The seven models: registry, masks, overfitting, `.keras` round trip, cross-backend."""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import keras
import numpy as np
import pytest
from conftest import other_backends, run_in_backend
from zoo import (  # noqa: F401
    BOS,
    EOS,
    PAD,
    SRC_VOCAB,
    TGT_VOCAB,
    TINY,
    _torch_threads,
    arrays,
    logits_of,
    trained,
    untrained,
)

from kerasattn.decoding import greedy_decode
from kerasattn.models import MODEL_NAMES, build_model, get_config_class, incremental_decoder


def test_model_names_follow_the_path():
    assert MODEL_NAMES == ("seq2seq", "bahdanau", "bahdanau_multihead",
                           "encoder_self_attention", "decoder_self_attention",
                           "transformer_decoder_on_gru", "transformer")


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="name.*must be one of.*received name='gpt'"):
        build_model("gpt", 10, 10)
    with pytest.raises(ValueError, match=r"unknown hyperparameter\(s\) \['d_modle'\]"):
        build_model("transformer", 10, 10, d_modle=32)
    with pytest.raises(ValueError, match="d_model.*multiple of `num_heads`.*d_model=30"):
        build_model("transformer", 10, 10, d_model=30, num_heads=4)
    for name in ("transformer", "transformer_decoder_on_gru"):
        with pytest.raises(ValueError, match=r"max_position_shift.*max_length=16.*"
                                             r"received max_position_shift=16"):
            build_model(name, 10, 10, max_length=16, max_position_shift=16)
    with pytest.raises(ValueError, match="dropout.*received dropout=1.5"):
        build_model("bahdanau", 10, 10, dropout=1.5)
    with pytest.raises(ValueError, match="tgt_vocab_size.*received tgt_vocab_size=2"):
        build_model("seq2seq", 10, 2)
    with pytest.raises(ValueError, match="model.name.*received a model named 'other'"):
        incremental_decoder(keras.Sequential([keras.layers.Dense(2)], name="other"))


def test_config_defaults_are_documented_and_buildable(model_name):
    cls = get_config_class(model_name)
    for field in cls.__dataclass_fields__:
        assert f"{field}:" in cls.__doc__, f"{model_name}: field {field} undocumented"
    model = build_model(model_name, 30, 31)  # the defaults
    assert model.name == model_name
    assert [t.name for t in model.inputs] and set(model.input) == {"encoder_inputs",
                                                                   "decoder_inputs"}
    out = logits_of(model, np.array([[5, 6, 0]], "int32"), np.array([[2, 7]], "int32"))
    assert out.shape == (1, 2, 31)


def test_source_padding_is_ignored(model_name):
    """Extra padding on the source changes no logit: the padding mask is used everywhere."""
    model = untrained(model_name)
    data = arrays()
    enc, dec = data["encoder_inputs"], data["decoder_inputs"]
    padded = np.concatenate([enc, np.zeros((len(enc), 3), np.int32)], axis=1)
    np.testing.assert_allclose(logits_of(model, padded, dec), logits_of(model, enc, dec),
                               atol=2e-5)


def test_decoder_is_causal(model_name):
    """Changing decoder input t never changes the logits of positions before t."""
    model = untrained(model_name)
    data = arrays()
    enc, dec = data["encoder_inputs"], data["decoder_inputs"].copy()
    base = logits_of(model, enc, dec)
    dec[:, 3:] = 9
    changed = logits_of(model, enc, dec)
    np.testing.assert_allclose(changed[:, :3], base[:, :3], atol=2e-5)
    assert np.abs(changed[:, 3:] - base[:, 3:]).max() > 1e-4


def test_overfits_a_few_pairs(model_name):
    model, before, after = trained(model_name)
    assert before > 1.5, f"{model_name}: untrained loss {before:.3f} is suspiciously low"
    assert after < 0.05, f"{model_name}: masked loss {after:.4f} after training"
    data = arrays()
    pred = logits_of(model, data["encoder_inputs"], data["decoder_inputs"]).argmax(-1)
    real = data["labels"] != 0
    assert (pred[real] == data["labels"][real]).all()


def test_keras_round_trip(model_name, tmp_path):
    model, _, _ = trained(model_name)
    path = tmp_path / f"{model_name}.keras"
    model.save(path)
    loaded = keras.saving.load_model(path)
    data = arrays()
    enc, dec = data["encoder_inputs"], data["decoder_inputs"]
    np.testing.assert_allclose(logits_of(loaded, enc, dec), logits_of(model, enc, dec),
                               atol=1e-6)
    # decoding works from the reloaded model (layers fetched by name) and agrees
    a = greedy_decode(model, enc, max_length=8)
    b = greedy_decode(loaded, enc, max_length=8)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    for name in a.attention:
        np.testing.assert_allclose(a.attention[name], b.attention[name], atol=1e-5)


CHILD = """
import json, numpy as np, keras
import kerasattn.models, kerasattn.metrics  # registers the layers and the loss
from kerasattn.decoding import greedy_decode
enc = np.array({enc}, "int32")
out = {{}}
for name in {names}:
    model = keras.saving.load_model("{root}/" + name + ".keras")
    r = greedy_decode(model, enc, max_length=8, return_logits=True)
    out[name] = {{"tokens": r.tokens.tolist(), "logits": r.step_logits.tolist()}}
print(json.dumps(out))
"""


# One model per decoder family (every custom layer class appears in one of them); the
# same-backend round trip above covers all seven. A child process per backend costs ~30 s.
CROSS_BACKEND_MODELS = ("bahdanau_multihead", "decoder_self_attention", "transformer")


def test_saved_model_translates_identically_on_other_backends(tmp_path):
    """Trained models, saved here, decode the same tokens / logits on the other backends."""
    enc = arrays()["encoder_inputs"]
    expected = {}
    for name in CROSS_BACKEND_MODELS:
        model, _, _ = trained(name)
        model.save(tmp_path / f"{name}.keras")
        r = greedy_decode(model, enc, max_length=8, return_logits=True)
        expected[name] = r
    code = CHILD.format(enc=json.dumps(enc.tolist()), names=list(CROSS_BACKEND_MODELS),
                        root=str(tmp_path))
    backends = other_backends()
    with ThreadPoolExecutor(max_workers=2) as pool:   # the children mostly wait on imports
        results = list(pool.map(lambda b: run_in_backend(b, code, timeout=600), backends))
    for backend, got in zip(backends, results):
        for name in CROSS_BACKEND_MODELS:
            assert got[name]["tokens"] == expected[name].tokens.tolist(), (backend, name)
            np.testing.assert_allclose(np.array(got[name]["logits"]),
                                       expected[name].step_logits, atol=1e-4,
                                       err_msg=f"{name} on {backend}")


def test_tiny_configs_cover_every_model():
    assert set(TINY) == set(MODEL_NAMES) and SRC_VOCAB >= 5 and TGT_VOCAB >= 5


def test_tiny_corpus_is_well_formed():
    data = arrays()
    assert data["encoder_inputs"].shape == (4, 5)
    assert (data["decoder_inputs"][:, 0] == BOS).all()
    # labels are the decoder inputs shifted by one, ending in <eos>
    for dec, lab in zip(data["decoder_inputs"], data["labels"]):
        n = int((lab != PAD).sum())
        assert lab[n - 1] == EOS and (dec[1:n] == lab[:n - 1]).all()
    assert set(TINY) == set(MODEL_NAMES)
