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
