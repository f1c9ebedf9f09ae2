"""kerasattn.explore, the attention explorer's data: on every model of tests/zoo.py, the
weights it gathers have the documented shapes, their rows sum to 1, the decoder's equal
what Translator.decode returns and the encoder's equal a float64 re-computation from
kerasattn.reference; the page stores them within 3e-8 and loads nothing."""
from __future__ import annotations

import re

import keras
import numpy as np
import pytest
import zoo

from kerasattn import reference
from kerasattn.data import Vocabulary
from kerasattn.explore import collect, encoder_self_attention, explore, page_data
from kerasattn.explore.page import SCALE, pack, unpack
from kerasattn.explore.record import encoder_blocks
from kerasattn.inference import Translator
from kerasattn.models import MODEL_NAMES

SRC_WORDS = Vocabulary([f"s{i}" for i in range(4, zoo.SRC_VOCAB)])
TGT_WORDS = Vocabulary([f"t{i}" for i in range(4, zoo.TGT_VOCAB)])
SENTENCE = "s4 s5 s6 s7 s8"
KW = dict(normalized=True, detokenized=False)
# what each model has: decoder self-attention, encoder self-attention
SELF = {"decoder_self_attention", "transformer_decoder_on_gru", "transformer"}
ENCODER = SELF | {"encoder_self_attention"}


def translator(name) -> Translator:
    return Translator(zoo.trained(name)[0], SRC_WORDS, TGT_WORDS)


def check_rows(a, axis=-1, name=""):
    """Every row of attention weights is a distribution."""
    a = np.asarray(a, np.float64)
    assert (a >= 0).all(), name
    np.testing.assert_allclose(a.sum(axis=axis), 1.0, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_the_explorer_reads_the_attention_translator_decode_returns(name):
    tr = translator(name)
    for beam in (1, 3):
        record = collect(tr, SENTENCE, beam=beam, **KW)
        (expected,) = tr.decode([SENTENCE], beam=beam, attention=True, **KW)
        best = record.translation
        S, T = len(SENTENCE.split()), len(expected.target_tokens)
        assert record.model == name and record.source_tokens == SENTENCE.split()
        assert best.target_tokens == expected.target_tokens and best.text == expected.text
        assert best.score == pytest.approx(expected.score, rel=1e-6, abs=1e-7)
        assert record.unknown == [] and not record.source_subword
        if name == "seq2seq":
            assert best.attention is None and expected.attention is None
        else:
            assert set(best.attention) == ({"cross", "self"} if name in SELF else {"cross"})
            assert set(best.attention) == set(expected.attention)
            for kind, a in best.attention.items():
                np.testing.assert_array_equal(a, expected.attention[kind], err_msg=kind)
            cross = best.attention["cross"]
            L, h = cross.shape[1:3]
            assert cross.shape == (T, L, h, S)
            check_rows(cross, name="cross")
            if name in SELF:
                self_ = best.attention["self"]
                assert self_.shape == (T, L, h, T)
                later = np.triu(np.ones((T, T), bool), k=1)[:, None, None, :]
                assert np.abs(np.where(later, self_, 0.0)).max() <= 1e-6   # causal
                check_rows(self_, name="self")
        if name in ENCODER:
            L_enc = len(encoder_blocks(tr.model))
            assert record.encoder.shape == (L_enc, zoo.TINY[name]["num_heads"], S, S)
            check_rows(record.encoder, name="encoder")
        else:
            assert record.encoder is None
        if beam == 1:
            assert record.steps is None and len(record.hypotheses) == 1
            continue
        # the beam: its finished hypotheses (the translation first), and every step's
        assert 1 <= len(record.hypotheses) <= beam
        scores = [t.score for t in record.hypotheses]
        assert scores == sorted(scores, reverse=True)
        assert len(record.steps) >= T - 1 and all(1 <= len(k) <= 2 * beam
                                                   for k in record.steps)
        for t, kept in enumerate(record.steps):
            assert [h["score"] for h in kept] == sorted((h["score"] for h in kept),
                                                        reverse=True)
            for h in kept:
                assert len(h["target_tokens"]) == t + 1
                assert h["finished"] == (h["target_tokens"][-1] == "<eos>")
        # each finished hypothesis was kept by the beam at its last step
        for hyp in record.hypotheses:
            last = record.steps[len(hyp.target_tokens) - 1]
            assert any(h["target_tokens"] == hyp.target_tokens
                       and h["score"] == pytest.approx(hyp.score) for h in last)
            if hyp.attention is not None:
                n = len(hyp.target_tokens)
                assert hyp.attention["cross"].shape[0] == n
                check_rows(hyp.attention["cross"], name="hypothesis cross")
                if "self" in hyp.attention:
                    assert hyp.attention["self"].shape[-1] == n


def _encoder_reference(model, ids):
    """The encoder's self-attention, re-computed in float64 with kerasattn.reference."""
    src = np.asarray([ids])
    mask = src != 0
    embedding = keras.ops.convert_to_numpy(model.get_layer("src_embedding").embeddings)
    x = np.asarray(embedding, np.float64)[src]                       # (1, S, E)
    if model.name == "transformer":
        d = x.shape[-1]
        x = np.sqrt(d) * x + reference.positional_encoding(len(ids), d)[None]
    else:
        x = reference.encoder_gru(x, reference.weights_of(model.get_layer("encoder_birnn")),
                                  mask)[0]
    out = []
    for block in encoder_blocks(model):
        x, alpha = reference.encoder_block(x, reference.weights_of(block), block.num_heads,
                                           padding_mask=mask, return_weights=True)
        out.append(alpha[0])
    return np.stack(out)


@pytest.mark.parametrize("name", sorted(ENCODER))
def test_encoder_self_attention_equals_a_float64_recomputation(name):
    model = zoo.trained(name)[0]
    ids = [4, 9, 5, 11, 7, 6]
    got = encoder_self_attention(model, ids)
    np.testing.assert_allclose(got, _encoder_reference(model, ids), atol=2e-5)


def test_models_without_encoder_self_attention_have_none():
    for name in ("seq2seq", "bahdanau", "bahdanau_multihead"):
        assert encoder_self_attention(zoo.untrained(name), [4, 5]) is None


def test_the_page_stores_every_weight_within_3e_8():
    w = np.array([0.0, 1.0, 0.5, 1e-7, 0.123456789, 1 - 1e-9], np.float32)
    assert len(pack(w)) == 4 * len(w)                           # 3 bytes = 4 base64 chars
    np.testing.assert_allclose(unpack(pack(w)), w, atol=0.5 / SCALE + 1e-12)
    record = collect(translator("transformer"), SENTENCE, beam=2, **KW)
    data = page_data(record)
    assert [h["tokens"] for h in data["hypotheses"]] == [t.target_tokens
                                                         for t in record.hypotheses]
    for hyp, stored in zip(record.hypotheses, data["hypotheses"]):
        cross = np.transpose(hyp.attention["cross"], (1, 2, 0, 3))   # (L, h, T, S)
        assert (stored["cross"]["layers"], stored["cross"]["heads"]) == cross.shape[:2]
        np.testing.assert_allclose(unpack(stored["cross"]["data"]).reshape(cross.shape),
                                   cross, atol=3e-8)
        self_ = np.transpose(hyp.attention["self"], (1, 2, 0, 3))
        rows, cols = np.tril_indices(self_.shape[-1])                # the lower triangle
        np.testing.assert_allclose(unpack(stored["self"]["data"]),
                                   self_[..., rows, cols].ravel(), atol=3e-8)
    np.testing.assert_allclose(unpack(data["encoder"]["data"]), record.encoder.ravel(),
                               atol=3e-8)
    assert len(data["steps"]) == len(record.steps)


def test_the_page_is_one_file_that_loads_nothing(tmp_path):
    out = tmp_path / "page.html"
    page = explore(zoo.trained("bahdanau")[0], SENTENCE, src_vocab=SRC_WORDS,
                   tgt_vocab=TGT_WORDS, beam=2, out=out, **KW)
    html = out.read_text(encoding="utf-8")
    assert html == page.html and html.startswith("<!DOCTYPE html>")
    assert page.fragment in html and page._repr_html_() == page.fragment
    # no element that fetches anything: no src/href attribute, stylesheet link, import or
    # url() (the script sets them only on exports: a data: image, a blob: download link)
    markup = re.sub(r"<script\b.*?</script>", "", html, flags=re.DOTALL)
    assert not re.search(r"<(link|img|iframe|object|embed)\b|\bsrc\s*=|\bhref\s*=|@import|"
                         r"url\(", markup, re.IGNORECASE)
    # the only URL is the SVG namespace, a name and not a request
    assert set(re.findall(r"https?://[^\s\"'<>]+", html)) == {"http://www.w3.org/2000/svg"}
    assert html.count("<script") == 2
    start = html.index('class="kae-data">')
    assert "</" not in html[start:html.index("</script>", start)]   # the JSON stays inside


def test_explore_needs_the_tokenizers_with_a_bare_model():
    with pytest.raises(ValueError, match="src_vocab and tgt_vocab"):
        explore(zoo.untrained("bahdanau"), SENTENCE)
    with pytest.raises(ValueError, match="non-empty string"):
        collect(translator("bahdanau"), "   ")


def test_the_explore_command_writes_the_page_beside_the_checkpoint(tmp_path, capsys):
    from kerasattn import cli

    ckpt = tmp_path / "ckpt"
    Translator(zoo.trained("bahdanau_multihead")[0], SRC_WORDS, TGT_WORDS,
               meta={"model": "bahdanau_multihead"}).save(ckpt)
    assert cli.main(["explore", str(ckpt), "s4 s5 s6", "--beam", "2"]) == 0
    out = capsys.readouterr().out
    assert f"attention explorer written to {ckpt / 'explorer.html'}" in out
    html = (ckpt / "explorer.html").read_text(encoding="utf-8")
    assert '"model":"bahdanau_multihead"' in html and '"beam":2' in html
    assert cli.main(["explore", str(ckpt), "s4", "--out", str(tmp_path / "x.html")]) == 0
    assert (tmp_path / "x.html").exists()
    assert cli.main(["explore", str(ckpt), "s4", "--beam", "0"]) == 2
    assert "--beam must be >= 1" in capsys.readouterr().err
