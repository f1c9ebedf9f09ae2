"""Decoding: greedy vs teacher forcing, cached vs uncached, beam search properties,
attention capture, the length penalty, and text translation."""
from __future__ import annotations

import keras
import numpy as np
import pytest
from zoo import BOS, EOS, SOURCES, _torch_threads, arrays, logits_of, target_of, trained, untrained  # noqa: F401

from kerasattn.backend_utils import resolve_compile
from kerasattn.decoding import (
    Stepper,
    beam_search,
    greedy_decode,
    length_penalty,
    log_softmax,
)
from kerasattn.decoding.search import greedy_loop

MAX_LEN = 8


def teacher_forced_logits(model, enc, tokens):
    """Logits of a full pass with decoder inputs `<bos> tokens[:-1]`: `(B, T, V)`."""
    dec = np.concatenate([np.full((len(tokens), 1), BOS, np.int32), tokens[:, :-1]], 1)
    return logits_of(model, enc, dec.astype(np.int32))


def sequence_log_probs(model, enc, hyps):
    """Teacher-forced sum of log p(y_t | y_<t, x) of each hypothesis (one padded pass;
    the decoder is causal, so padding after a hypothesis does not change it)."""
    tokens = np.zeros((len(hyps), MAX_LEN), np.int32)
    for i, h in enumerate(hyps):
        tokens[i, :len(h)] = h
    logp = log_softmax(teacher_forced_logits(model, enc, tokens))
    return [float(sum(logp[i, t, h[t]] for t in range(len(h)))) for i, h in enumerate(hyps)]


def test_greedy_is_argmax_of_teacher_forcing_on_its_own_output(model_name):
    model, _, _ = trained(model_name)
    enc = arrays()["encoder_inputs"]  # B = 4
    result = greedy_decode(model, enc, max_length=MAX_LEN)
    full = teacher_forced_logits(model, enc, result.tokens)
    for b in range(len(enc)):
        n = result.lengths[b]
        np.testing.assert_array_equal(full[b, :n].argmax(-1), result.tokens[b, :n])
    # and the overfitted models translate their training pairs
    assert result.token_lists() == [target_of(s) for s in SOURCES]
    assert result.finished.all() and (result.tokens[np.arange(4), result.lengths - 1]
                                      == EOS).all()


def test_incremental_step_matches_the_full_model(model_name):
    """Fed the teacher-forcing tokens one at a time, the cached step (GRU state, K/V
    caches, positional encoding at the true step t) gives the full pass's logits at every
    position. d2l's PE-at-position-0 decoding would fail this."""
    model, _, _ = trained(model_name)
    data = arrays()
    enc, dec = data["encoder_inputs"], data["decoder_inputs"]
    full = logits_of(model, enc, dec)
    stepper = Stepper(model, MAX_LEN)
    stepper.start(enc)
    steps = [stepper.step(dec[:, t], t)[0] for t in range(dec.shape[1])]
    np.testing.assert_allclose(np.stack(steps, axis=1), full, atol=1e-4)


def test_cached_decoding_equals_uncached(model_name):
    model, _, _ = trained(model_name)
    enc = arrays()["encoder_inputs"]
    cached = greedy_decode(model, enc, max_length=MAX_LEN, return_logits=True)
    uncached = greedy_decode(model, enc, max_length=MAX_LEN, cache=False,
                             return_logits=True)
    np.testing.assert_array_equal(cached.tokens, uncached.tokens)
    np.testing.assert_allclose(cached.step_logits, uncached.step_logits, atol=1e-4)


def test_compiled_step_equals_eager_step():
    model, _, _ = trained("transformer")
    enc = arrays()["encoder_inputs"]
    eager = greedy_decode(model, enc, max_length=MAX_LEN, compile=False,
                          return_logits=True)
    compiled = greedy_decode(model, enc, max_length=MAX_LEN, compile=True,
                             return_logits=True)
    assert resolve_compile(True) == (keras.backend.backend() != "torch")
    np.testing.assert_array_equal(compiled.tokens, eager.tokens)
    np.testing.assert_allclose(compiled.step_logits, eager.step_logits, atol=1e-5)


@pytest.mark.parametrize("name", ["bahdanau", "decoder_self_attention", "transformer"])
def test_whole_loop_greedy_equals_the_step_by_step_loop(name):
    """`greedy_loop` (the encoder, every step and the argmax in one `ops.while_loop`,
    compiled on JAX / TensorFlow, eager on torch) against the NumPy-driven loop of eager
    steps: same ids, lengths, log-probabilities and attention; `stop_at_eos=False` runs
    every step, and rows that ended keep their length."""
    model, _, _ = trained(name)
    enc = arrays()["encoder_inputs"]
    reference = greedy_decode(model, enc, max_length=MAX_LEN, compile=False,
                              return_logits=True)
    out = greedy_loop(model, MAX_LEN, return_logits=True)(enc)
    n = int(out["lengths"].max())
    np.testing.assert_array_equal(out["lengths"], reference.lengths)
    np.testing.assert_array_equal(out["finished"], reference.finished)
    for b, length in enumerate(reference.lengths):
        np.testing.assert_array_equal(out["tokens"][b, :length],
                                      reference.tokens[b, :length])
    log_probs = [out["token_log_probs"][b, :length].astype(np.float64).sum()
                 for b, length in enumerate(reference.lengths)]
    np.testing.assert_allclose(log_probs, reference.log_probs, atol=1e-5)
    np.testing.assert_allclose(out["logits"][:, :n], reference.step_logits, atol=1e-5)
    assert set(out["attention"]) == set(reference.attention)
    for key, a in out["attention"].items():
        a = a[:, :n, ..., :n] if key == "self" else a[:, :n]
        np.testing.assert_allclose(a, reference.attention[key], atol=1e-5)

    everything = greedy_loop(model, MAX_LEN, return_logits=True, stop_at_eos=False)(enc)
    assert np.abs(everything["logits"][:, -1]).max() > 0.0  # the last step ran
    np.testing.assert_array_equal(everything["lengths"], reference.lengths)
    np.testing.assert_allclose(everything["logits"][:, :n], reference.step_logits,
                               atol=1e-5)


def test_beam_of_one_is_greedy(model_name):
    model, _, _ = trained(model_name)
    enc = arrays()["encoder_inputs"]
    greedy = greedy_decode(model, enc, max_length=MAX_LEN)
    beam = beam_search(model, enc, beam_size=1, max_length=MAX_LEN)
    np.testing.assert_array_equal(beam.tokens, greedy.tokens)
    np.testing.assert_allclose(beam.scores, greedy.scores, atol=1e-5)
    for name in greedy.attention:
        for b, n in enumerate(greedy.lengths):  # greedy rows run on after their <eos>
            np.testing.assert_allclose(beam.attention[name][b, :n],
                                       greedy.attention[name][b, :n], atol=1e-5)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_wider_beam_never_scores_lower(model_name, alpha):
    """On the trained models and their training sources (beam search is not monotone in
    general, so this checks the search on real models rather than a theorem)."""
    model, _, _ = trained(model_name)
    enc = arrays()["encoder_inputs"]
    scores = [beam_search(model, enc, beam_size=k, max_length=MAX_LEN, alpha=alpha).scores
              for k in (1, 2, 4)]
    assert (scores[1] >= scores[0] - 1e-5).all() and (scores[2] >= scores[1] - 1e-5).all()


def test_beam_scores_are_the_models_log_probs(model_name):
    """Reported log-probs equal a teacher-forced rescoring; scores use the penalty."""
    model, _, _ = trained(model_name)
    enc = arrays()["encoder_inputs"]
    result = beam_search(model, enc, beam_size=2, max_length=MAX_LEN, alpha=0.6)
    hyps = [(b, h) for b in range(len(enc)) for h in result.hypotheses[b]]
    rescored = sequence_log_probs(model, enc[[b for b, _ in hyps]],
                                  [h.tokens for _, h in hyps])
    for (b, h), lp in zip(hyps, rescored):
        assert abs(lp - h.log_prob) < 1e-3
        assert abs(h.score - h.log_prob / length_penalty(len(h.tokens), 0.6)) < 1e-9
        # finished hypotheses are frozen at their <eos>: exactly one, at the end
        assert h.finished == (h.tokens[-1] == EOS)
        assert (h.tokens[:-1] != EOS).all()
    for b in range(len(enc)):
        scores = [h.score for h in result.hypotheses[b]]
        assert scores == sorted(scores, reverse=True) and len(scores) <= 2
        assert result.scores[b] == scores[0]


def test_beam_search_rows_are_independent():
    """A batch gives each row what it would get alone (beam states reordered per row)."""
    model = untrained("decoder_self_attention")  # untrained: long, uncertain outputs
    enc = arrays()["encoder_inputs"]
    batch = beam_search(model, enc, beam_size=2, max_length=MAX_LEN)
    for b in range(len(enc)):
        alone = beam_search(model, enc[b:b + 1], beam_size=2, max_length=MAX_LEN)
        np.testing.assert_array_equal(batch.tokens[b, :alone.lengths[0]], alone.tokens[0])
        np.testing.assert_allclose(batch.scores[b], alone.scores[0], atol=1e-5)


def test_beam_search_cached_equals_uncached():
    model = untrained("transformer")
    enc = arrays()["encoder_inputs"]
    a = beam_search(model, enc, beam_size=2, max_length=MAX_LEN)
    b = beam_search(model, enc, beam_size=2, max_length=MAX_LEN, cache=False)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_allclose(a.scores, b.scores, atol=1e-5)


def test_captured_attention(model_name):
    """Cross-attention rows are distributions over the real source tokens; decoder
    self-attention never looks ahead."""
    model, _, _ = trained(model_name)
    enc = arrays()["encoder_inputs"]
    result = greedy_decode(model, enc, max_length=MAX_LEN)
    if model_name == "seq2seq":
        assert result.attention == {}  # no attention in the bottleneck baseline
        return
    cross = result.attention["cross"]  # (B, T_out, L, h, S)
    assert cross.shape[:2] == result.tokens.shape and cross.shape[-1] == enc.shape[1]
    real = enc != 0
    for b in range(len(enc)):
        n = result.lengths[b]
        w = cross[b, :n]
        np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
        assert (w[..., ~real[b]] == 0.0).all()  # padding gets exactly zero weight
    if "self" in result.attention:
        self_w = result.attention["self"]  # (B, T_out, L, h, T_out)
        t = self_w.shape[1]
        future = np.triu(np.ones((t, t), bool), k=1)  # key j > query i
        assert np.abs(np.moveaxis(self_w, 1, -2)[..., future]).max() == 0.0
        np.testing.assert_allclose(self_w[0, :result.lengths[0]].sum(-1), 1.0, atol=1e-5)
    beam = beam_search(model, enc, beam_size=2, max_length=MAX_LEN)
    assert set(beam.attention) == set(result.attention)
    np.testing.assert_allclose(beam.attention["cross"][0, :beam.lengths[0]].sum(-1), 1.0,
                               atol=1e-5)


def test_length_penalty_formulas():
    assert length_penalty(7, 0.6, "gnmt") == pytest.approx(((5 + 7) / 6) ** 0.6)
    assert length_penalty(7, 0.75, "power") == pytest.approx(7 ** 0.75)
    assert length_penalty(7, 0.0) == 1.0
    with pytest.raises(ValueError, match="length_penalty_kind.*received length_penalty_kind='x'"):
        length_penalty(3, 0.6, "x")


def test_bad_decoding_arguments():
    model = untrained("seq2seq")
    enc = arrays()["encoder_inputs"]
    with pytest.raises(ValueError, match=r"`src` must be a non-empty \(B, S\).*shape \(5,\)"):
        greedy_decode(model, enc[0])
    with pytest.raises(ValueError, match="beam_size.*received beam_size=0"):
        beam_search(model, enc, beam_size=0)
    with pytest.raises(ValueError, match="max_length.*received max_length=0"):
        greedy_decode(model, enc, max_length=0)
    with pytest.raises(ValueError, match="compile.*received compile='yes'"):
        greedy_decode(model, enc, compile="yes")


def test_translate_strings():
    """Text in, text out through kerasattn.inference.Translator: the overfitted model
    translates its training sentences, greedy and beam, and a wider masked batch does not
    change them."""
    from kerasattn.data.vocab import Vocabulary
    from kerasattn.inference import Translator, output_cap

    model, _, _ = trained("bahdanau")
    words = [f"w{i}" for i in range(4, 13)]  # ids 4.. in order
    vocab = Vocabulary(words)
    assert [vocab.token_to_id(w) for w in words] == list(range(4, 13))
    sentences = [" ".join(f"w{i}" for i in s) for s in SOURCES]
    expected = [" ".join(f"w{i}" for i in target_of(s)) for s in SOURCES]
    tr = Translator(model, vocab, vocab)
    kw = dict(normalized=True, detokenized=False)
    assert tr.translate(sentences, **kw) == expected
    beam = tr.decode(sentences[:2], beam=3, attention=True, **kw)
    assert [t.text for t in beam] == expected[:2]
    assert beam[0].attention["cross"].shape[-1] == len(SOURCES[0])   # its own tokens only
    assert tr.translate(sentences, batch_size=1, **kw) == expected
    # each output is capped by its own source: 1.5 S + 5 tokens rounded up to 16
    assert [output_cap(len(s)) for s in SOURCES] == [16] * len(SOURCES)
    assert all(len(t.target_tokens) <= 16 for t in tr.decode(sentences, beam=2, **kw))
