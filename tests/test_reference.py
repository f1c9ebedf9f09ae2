"""Self-checks of the float64 NumPy reference (no Keras math involved).

The layers are tested against this module, so its own math is checked here against
direct, loop-level restatements of the equations and against known properties.
"""
import numpy as np
import pytest

from kerasattn import reference as R


def test_masked_softmax_rows_and_fully_masked_row():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(3, 5))
    mask = np.array([[1, 1, 0, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1]], bool)
    w = R.masked_softmax(scores, mask)
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(w[[0, 2]].sum(-1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(w[1], 0.0)  # fully masked row: zeros, not uniform
    assert np.all(w[~mask] == 0.0)
    e = np.exp(scores[0, [0, 1, 3]])
    np.testing.assert_allclose(w[0, [0, 1, 3]], e / e.sum(), atol=1e-12)
    np.testing.assert_allclose(R.masked_softmax(scores), R.softmax(scores), atol=1e-15)


def test_masks():
    np.testing.assert_array_equal(R.padding_mask([[5, 3, 0, 0]]), [[True, True, False, False]])
    np.testing.assert_array_equal(R.causal_mask(3), np.tril(np.ones((3, 3), bool)))
    np.testing.assert_array_equal(R.causal_mask(2, 4, offset=1),
                                  [[True, True, False, False], [True, True, True, False]])


def test_positional_encoding_formula():
    pe = R.positional_encoding(6, 8, start_index=3)
    for p in range(6):
        for i in range(4):
            angle = (p + 3) / 10000 ** (2 * i / 8)
            assert pe[p, 2 * i] == pytest.approx(np.sin(angle), abs=1e-12)
            assert pe[p, 2 * i + 1] == pytest.approx(np.cos(angle), abs=1e-12)


def test_split_merge_heads_roundtrip():
    x = np.arange(2 * 3 * 8, dtype=float).reshape(2, 3, 8)
    heads = R.split_heads(x, 2)
    assert heads.shape == (2, 2, 3, 4)
    np.testing.assert_array_equal(heads[:, 1], x[:, :, 4:])
    np.testing.assert_array_equal(R.merge_heads(heads), x)


def test_multi_head_attention_equals_per_head_loop():
    """The einsum reference equals the paper's per-head formula written as a loop."""
    rng = np.random.default_rng(1)
    B, T, S, d, h = 2, 3, 4, 8, 2
    d_h = d // h
    q, kv = rng.normal(size=(B, T, d)), rng.normal(size=(B, S, 6))
    w = {"query_kernel": rng.normal(size=(d, h, d_h)), "query_bias": rng.normal(size=(h, d_h)),
         "key_kernel": rng.normal(size=(6, h, d_h)), "key_bias": rng.normal(size=(h, d_h)),
         "value_kernel": rng.normal(size=(6, h, d_h)), "value_bias": rng.normal(size=(h, d_h)),
         "output_kernel": rng.normal(size=(h, d_h, d)), "output_bias": rng.normal(size=(d,))}
    mask = R.attention_mask(T, S, None, np.array([[1, 1, 1, 0], [1, 1, 0, 0]], bool))
    out = R.multi_head_attention(q, kv, kv, w, h, mask)
    W_o = w["output_kernel"].reshape(h * d_h, d)
    for b in range(B):
        heads = []
        for i in range(h):
            Q = q[b] @ w["query_kernel"][:, i] + w["query_bias"][i]
            K = kv[b] @ w["key_kernel"][:, i] + w["key_bias"][i]
            V = kv[b] @ w["value_kernel"][:, i] + w["value_bias"][i]
            e = Q @ K.T / np.sqrt(d_h)
            e = np.where(mask[b], e, -np.inf)
            a = np.exp(e - e.max(-1, keepdims=True))
            heads.append((a / a.sum(-1, keepdims=True)) @ V)
        expected = np.concatenate(heads, -1) @ W_o + w["output_bias"]
        np.testing.assert_allclose(out[b], expected, atol=1e-12)


def test_bahdanau_reference_scores():
    rng = np.random.default_rng(2)
    q, m = rng.normal(size=(2, 4)), rng.normal(size=(2, 3, 4))
    W_q, W_k, v = rng.normal(size=(4, 5)), rng.normal(size=(4, 5)), rng.normal(size=(5,))
    ctx, a = R.bahdanau_attention(q, m, W_q, W_k, v)
    e = np.array([[v @ np.tanh(W_q.T @ q[b] + W_k.T @ m[b, j]) for j in range(3)]
                  for b in range(2)])
    np.testing.assert_allclose(a, R.softmax(e), atol=1e-12)
    np.testing.assert_allclose(ctx, np.einsum("bj,bjd->bd", a, m), atol=1e-12)
    _, a_dot = R.bahdanau_attention(q, m, score="dot")
    np.testing.assert_allclose(a_dot, R.softmax(np.einsum("bd,bjd->bj", q, m)), atol=1e-12)
    W = rng.normal(size=(4, 4))
    _, a_gen = R.bahdanau_attention(q, m, score="general", W=W)
    np.testing.assert_allclose(a_gen, R.softmax(np.einsum("bd,de,bje->bj", q, W, m)),
                               atol=1e-12)


def test_layer_norm_and_ffn():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, 6))
    y = R.layer_norm(x, np.ones(6), np.zeros(6), eps=0.0)
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.std(-1), 1.0, atol=1e-12)
    W1, b1, W2, b2 = (rng.normal(size=s) for s in [(6, 4), (4,), (4, 6), (6,)])
    f = R.feed_forward(x, W1, b1, W2, b2)
    np.testing.assert_allclose(f[1, 2], np.maximum(x[1, 2] @ W1 + b1, 0) @ W2 + b2,
                               atol=1e-12)


def test_label_smoothed_targets_and_loss():
    labels = np.array([[4, 1, 0], [2, 0, 0]])  # 0 = <pad>
    V, eps = 5, 0.2
    q = R.label_smoothed_targets(labels, V, eps)
    np.testing.assert_allclose(q[0, 0], [0.0, 0.05, 0.05, 0.05, 0.85], atol=1e-12)
    np.testing.assert_allclose(q[labels != 0].sum(-1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(q[labels == 0], 0.0)  # padded positions: no target
    logits = np.random.default_rng(4).normal(size=(2, 3, V))
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    terms = [-(1 - eps) * log_p[b, t, y] - eps / (V - 1) * log_p[b, t, 1:].sum()
             for (b, t), y in np.ndenumerate(labels) if y != 0]
    assert R.masked_label_smoothed_ce(labels, logits, eps) == pytest.approx(np.mean(terms))
    nll = [-log_p[b, t, y] for (b, t), y in np.ndenumerate(labels) if y != 0]
    assert R.masked_label_smoothed_ce(labels, logits, 0.0) == pytest.approx(np.mean(nll))
    assert R.masked_label_smoothed_ce(np.zeros((2, 3), int), logits, eps) == 0.0


def test_noam_learning_rate():
    d, w = 512, 4000
    lr = R.noam_learning_rate(np.arange(1, 20001), d, w)
    assert int(np.argmax(lr)) + 1 == w
    assert lr[w - 1] == pytest.approx((d * w) ** -0.5)
    assert lr[0] == pytest.approx(d ** -0.5 * w ** -1.5)
    np.testing.assert_allclose(lr[:w], np.arange(1, w + 1) * lr[0], rtol=1e-12)  # linear
    np.testing.assert_allclose(lr[w:], (d * np.arange(w + 1, 20001)) ** -0.5, rtol=1e-12)


def test_greedy_decode_stops_each_row():
    # state row b: the token that follows each token (logits are one-hot on it)
    successor = np.array([[0, 0, 5, 3, 4, 6, 3, 3],    # <bos> 5 6 <eos>
                          [0, 0, 4, 3, 4, 4, 4, 4],    # <bos> 4 4 4 ... never ends
                          [0, 0, 3, 3, 3, 3, 3, 3]])   # <bos> <eos>
    calls = []

    def step(tokens, state, t):
        calls.append(t)
        return np.eye(8)[state[np.arange(len(tokens)), tokens]], state

    out = R.greedy_decode(step, successor, max_length=5)
    np.testing.assert_array_equal(out["tokens"], [[5, 6, 3, 0, 0], [4, 4, 4, 4, 4],
                                                  [3, 0, 0, 0, 0]])
    np.testing.assert_array_equal(out["lengths"], [3, 5, 1])
    np.testing.assert_array_equal(out["finished"], [True, False, True])
    short = R.greedy_decode(step, successor[[0, 2]], max_length=5)
    assert short["tokens"].shape == (2, 3)  # as long as the longest row


def test_bleu_statistics_match_sacrebleu():
    from sacrebleu.metrics import BLEU

    hyps = ["the the the the the the the", "the cat sat on the mat today",
            "a dog runs in the park", "nice day"]
    refs = [["the cat is on the mat", "there is a cat on the mat"],
            ["the cat sat on the mat", "a cat sat on the red mat today"],
            ["the dog runs in the big park", "a dog is running in the park"],
            ["it is a very nice day today", "today is a nice day", "what a nice day"]]
    ours = R.bleu_statistics([h.split() for h in hyps], [[r.split() for r in rs]
                                                         for rs in refs])
    theirs = BLEU(tokenize="none").corpus_score(
        hyps, [[rs[k] if k < len(rs) else None for rs in refs] for k in range(3)])
    np.testing.assert_array_equal(ours["counts"], theirs.counts)
    np.testing.assert_array_equal(ours["totals"], theirs.totals)
    assert (ours["sys_len"], ours["ref_len"]) == (theirs.sys_len, theirs.ref_len)
    assert ours["bp"] == pytest.approx(theirs.bp)
    assert ours["score"] == pytest.approx(theirs.score)
    assert ours["bp"] < 1 and min(ours["counts"]) > 0
    # Papineni et al.'s example: modified unigram precision 2/7
    first = R.bleu_statistics([hyps[0].split()], [[r.split() for r in refs[0]]])
    assert (first["counts"][0], first["totals"][0]) == (2, 7)
