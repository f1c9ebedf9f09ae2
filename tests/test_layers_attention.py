"""BahdanauAttention, scaled dot-product attention and MultiHeadCross (every backend).

Each layer equals the float64 NumPy reference given the same weights; plus padding
invariance, causality, fully masked rows, the comparison with
keras.layers.MultiHeadAttention, gradients and bad-input errors; and the one-position
paths of :mod:`kerasattn.steps` (one query per row, the K/V cache) equal to ``call``.
"""
import keras
import numpy as np
import pytest
from conftest import grad, to_numpy
from keras import ops

from kerasattn import reference as R
from kerasattn import steps
from kerasattn.layers import BahdanauAttention, MultiHeadCross, scaled_dot_product_attention
from kerasattn.steps import mask_bias

ATOL = 1e-5
rng = np.random.default_rng(0)
B, T_Q, T_K, D = 2, 3, 5, 8
QUERY = rng.normal(size=(B, T_Q, D)).astype("float32")
MEMORY = rng.normal(size=(B, T_K, 6)).astype("float32")
MEM_D = rng.normal(size=(B, T_K, D)).astype("float32")  # d_k == d_q, for the dot score
MEM_MASK = np.array([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], bool)
Q_MASK = np.array([[1, 1, 1], [1, 1, 0]], bool)




# -- scaled dot-product -------------------------------------------------------------
def test_scaled_dot_product_attention_matches_reference():
    q, k, v = (rng.normal(size=(2, 2, n, 4)).astype("float32") for n in (3, 5, 5))
    mask = np.broadcast_to(MEM_MASK[:, None, None, :], (2, 2, 3, 5))
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    r_out, r_w = R.scaled_dot_product_attention(q, k, v, mask)
    np.testing.assert_allclose(to_numpy(out), r_out, atol=ATOL)
    np.testing.assert_allclose(to_numpy(w), r_w, atol=ATOL)


def test_scaled_dot_product_attention_fully_masked_row_is_zero():
    q, k, v = (rng.normal(size=(1, n, 4)).astype("float32") for n in (2, 3, 3))
    mask = np.array([[[True, False, True], [False, False, False]]])
    out, w = scaled_dot_product_attention(q, k, v, mask=mask)
    out, w = to_numpy(out), to_numpy(w)
    assert np.all(np.isfinite(out)) and np.all(np.isfinite(w))
    np.testing.assert_array_equal(w[0, 1], 0.0)
    np.testing.assert_array_equal(out[0, 1], 0.0)


def test_scaled_dot_product_attention_errors():
    q, k = np.zeros((2, 3, 4), "float32"), np.zeros((2, 5, 6), "float32")
    with pytest.raises(ValueError, match=r"`k`.*\(2, 5, 6\).*`q`.*\(2, 3, 4\)"):
        scaled_dot_product_attention(q, k, k)
    k = np.zeros((2, 5, 4), "float32")
    with pytest.raises(ValueError, match=r"`mask`.*\(2, 3, 5\).*\(2, 4\)"):
        scaled_dot_product_attention(q, k, k, mask=np.ones((2, 4), bool))


# -- Bahdanau ----------------------------------------------------------------------
@pytest.mark.parametrize("score", ["additive", "dot", "general"])
@pytest.mark.parametrize("query_rank", [2, 3])
def test_bahdanau_matches_reference(score, query_rank):
    memory = MEM_D if score == "dot" else MEMORY
    query = QUERY if query_rank == 3 else QUERY[:, 0]
    layer = BahdanauAttention(4, score=score)
    ctx, w = layer(query, memory, memory_mask=MEM_MASK)
    r_ctx, r_w = R.bahdanau_attention(query, memory, **R.weights_of(layer), mask=MEM_MASK,
                                      score=score)
    assert tuple(ctx.shape) == r_ctx.shape and tuple(w.shape) == r_w.shape
    np.testing.assert_allclose(to_numpy(ctx), r_ctx, atol=ATOL)
    np.testing.assert_allclose(to_numpy(w), r_w, atol=ATOL)


def test_bahdanau_padding_invariance_and_fully_masked_row():
    layer = BahdanauAttention(4)
    ctx, w = layer(QUERY, MEMORY, memory_mask=MEM_MASK)
    changed = MEMORY.copy()
    changed[~MEM_MASK] = 100.0 * rng.normal(size=changed[~MEM_MASK].shape)
    ctx2, w2 = layer(QUERY, changed, memory_mask=MEM_MASK)
    np.testing.assert_allclose(to_numpy(ctx2), to_numpy(ctx), atol=1e-6)
    np.testing.assert_allclose(to_numpy(w2), to_numpy(w), atol=1e-6)
    none = np.zeros_like(MEM_MASK)
    ctx, w = layer(QUERY, MEMORY, memory_mask=none)
    assert np.all(to_numpy(ctx) == 0.0) and np.all(to_numpy(w) == 0.0)


def test_bahdanau_precomputed_memory_keys_give_the_same_result():
    layer = BahdanauAttention(4)
    ctx, w = layer(QUERY[:, 0], MEMORY, memory_mask=MEM_MASK)
    keys = layer.project_memory(MEMORY)  # W_k h, once per sentence
    ctx2, w2 = layer(QUERY[:, 0], MEMORY, memory_mask=MEM_MASK, memory_keys=keys)
    np.testing.assert_allclose(to_numpy(ctx2), to_numpy(ctx), atol=1e-6)
    np.testing.assert_allclose(to_numpy(w2), to_numpy(w), atol=1e-6)
    with pytest.raises(ValueError, match=r"`memory_keys`.*\(2, 5, 4\).*\(2, 5, 3\)"):
        layer(QUERY, MEMORY, memory_keys=to_numpy(keys)[..., :3])
    with pytest.raises(ValueError, match="additive"):
        BahdanauAttention(score="general").project_memory(MEMORY)


def test_bahdanau_uses_keras_mask_from_embedding():
    ids = np.array([[3, 4, 5, 0, 0]], "int32")
    emb = keras.layers.Embedding(10, 6, mask_zero=True)
    layer = BahdanauAttention(4)
    _, w = layer(QUERY[:1], emb(ids))  # memory_mask filled by Keras from the embedding
    np.testing.assert_array_equal(to_numpy(w)[0, :, 3:], 0.0)


@pytest.mark.parametrize("score", ["additive", "general", "dot"])
def test_bahdanau_gradient_matches_finite_differences(score):
    """d loss / d (query, memory, weights) vs central differences of the reference."""
    memory = MEM_D[:, :4] if score == "dot" else MEMORY[:, :4]
    mask = MEM_MASK[:, :4]
    query = QUERY[:, :2]
    layer = BahdanauAttention(3, score=score)
    layer(query, memory, memory_mask=mask)
    names = [v.path.split("/")[-1] for v in layer.trainable_variables]
    weights = [to_numpy(v) for v in layer.trainable_variables]
    probe_c = rng.normal(size=(B, 2, memory.shape[-1]))  # random linear read-out
    probe_w = rng.normal(size=(B, 2, 4))

    def loss(q, m, *ws):
        (ctx, w), _ = layer.stateless_call(list(ws), [], q, m, memory_mask=mask)
        return (ops.sum(ctx * ops.convert_to_tensor(probe_c, "float32"))
                + ops.sum(w * ops.convert_to_tensor(probe_w, "float32")))

    got = grad(loss, query, memory, *weights)

    def ref_loss(q, m, wd):
        ctx, w = R.bahdanau_attention(q, m, **wd, mask=mask, score=score)
        return np.sum(ctx * probe_c) + np.sum(w * probe_w)

    base = [query.astype(float), memory.astype(float)] + [w.astype(float) for w in weights]
    eps = 1e-6
    for arg, g in enumerate(got):
        num = np.zeros_like(base[arg])
        for idx in np.ndindex(base[arg].shape):
            plus = [a.copy() for a in base]
            minus = [a.copy() for a in base]
            plus[arg][idx] += eps
            minus[arg][idx] -= eps
            f = [ref_loss(p[0], p[1], dict(zip(names, p[2:]))) for p in (plus, minus)]
            num[idx] = (f[0] - f[1]) / (2 * eps)
        np.testing.assert_allclose(g, num, atol=2e-4, rtol=1e-3)
    assert len(got) == 2 + {"additive": 3, "general": 1, "dot": 0}[score]


def test_bahdanau_errors():
    layer = BahdanauAttention(4)
    with pytest.raises(ValueError, match=r"`memory`.*rank 3.*\(2, 5\)"):
        layer(QUERY, MEMORY[:, :, 0])
    with pytest.raises(ValueError, match=r"`memory_mask`.*\(2, 5\).*\(2, 5, 6\).*\(2, 4\)"):
        layer(QUERY, MEMORY, memory_mask=MEM_MASK[:, :4])
    with pytest.raises(ValueError, match=r"`memory`.*\(2, 5, 6\).*`query`.*\(2, 3, 8\)"):
        BahdanauAttention(score="dot")(QUERY, MEMORY)
    with pytest.raises(ValueError, match="score"):
        BahdanauAttention(4, score="concat")
    with pytest.raises(ValueError, match="`query`"):
        layer(QUERY[None], MEMORY)


# -- MultiHeadCross ------------------------------------------------------------------
def _mha_reference(layer, query, value, **masks):
    m = R.attention_mask(query.shape[1], value.shape[1], masks.get("query_mask"),
                         masks.get("value_mask"), masks.get("causal", False))
    return R.multi_head_attention(query, value, value, R.weights_of(layer), layer.num_heads,
                                  m, return_weights=True)


@pytest.mark.parametrize("scores", [True, False], ids=["weights_path", "fused_path"])
def test_multi_head_matches_reference(scores):
    layer = MultiHeadCross(2, D)
    res = layer(QUERY, MEMORY, query_mask=Q_MASK, value_mask=MEM_MASK,
                return_attention_scores=scores)
    r_out, r_w = _mha_reference(layer, QUERY, MEMORY, query_mask=Q_MASK, value_mask=MEM_MASK)
    out = res[0] if scores else res
    assert tuple(out.shape) == (B, T_Q, D)
    np.testing.assert_allclose(to_numpy(out), r_out, atol=ATOL)
    if scores:
        assert tuple(res[1].shape) == (B, 2, T_Q, T_K)
        np.testing.assert_allclose(to_numpy(res[1]), r_w, atol=ATOL)


def test_multi_head_explicit_attention_mask_and_causal():
    x = rng.normal(size=(B, 4, D)).astype("float32")
    layer = MultiHeadCross(4, D)
    att = rng.random((B, 4, 4)) > 0.3
    out = layer(x, x, attention_mask=att, use_causal_mask=True)
    m = att & R.causal_mask(4)[None]
    r_out = R.multi_head_attention(x, x, x, R.weights_of(layer), 4, m)
    np.testing.assert_allclose(to_numpy(out), r_out, atol=ATOL)


@pytest.mark.parametrize("scores", [True, False], ids=["weights_path", "fused_path"])
def test_multi_head_padding_invariance(scores):
    layer = MultiHeadCross(2, D)
    changed = MEMORY.copy()
    changed[~MEM_MASK] = 50.0 * rng.normal(size=changed[~MEM_MASK].shape)
    outs = []
    for memory in (MEMORY, changed):
        res = layer(QUERY, memory, value_mask=MEM_MASK, return_attention_scores=scores)
        outs.append(to_numpy(res[0] if scores else res))
    np.testing.assert_allclose(outs[1], outs[0], atol=1e-6)


@pytest.mark.parametrize("scores", [True, False], ids=["weights_path", "fused_path"])
def test_multi_head_causality(scores):
    layer = MultiHeadCross(2, D)
    x = rng.normal(size=(B, 5, D)).astype("float32")
    base = layer(x, x, use_causal_mask=True, return_attention_scores=scores)
    base = to_numpy(base[0] if scores else base)
    for t in range(4):
        changed = x.copy()
        changed[:, t + 1:] = rng.normal(size=changed[:, t + 1:].shape)
        out = layer(changed, changed, use_causal_mask=True, return_attention_scores=scores)
        out = to_numpy(out[0] if scores else out)
        np.testing.assert_allclose(out[:, :t + 1], base[:, :t + 1], atol=1e-6)
        assert not np.allclose(out[:, t + 1:], base[:, t + 1:], atol=1e-3)


@pytest.mark.parametrize("scores", [True, False], ids=["weights_path", "fused_path"])
def test_multi_head_fully_masked_row_gives_zeros(scores):
    layer = MultiHeadCross(2, D)
    vmask = MEM_MASK.copy()
    vmask[1] = False  # batch row 1: no key at all
    res = layer(QUERY, MEMORY, value_mask=vmask, return_attention_scores=scores)
    out = to_numpy(res[0] if scores else res)
    assert np.all(np.isfinite(out))
    bias = to_numpy(layer.output_dense.bias)
    np.testing.assert_allclose(out[1], np.broadcast_to(bias, out[1].shape), atol=1e-6)
    if scores:
        np.testing.assert_array_equal(to_numpy(res[1])[1], 0.0)

    def loss(q):  # gradients stay finite through the fully masked rows too
        r = layer(q, MEMORY, value_mask=vmask, return_attention_scores=scores)
        return ops.sum(r[0] if scores else r)

    (g,) = grad(loss, QUERY)
    assert np.all(np.isfinite(g)) and np.all(g[1] == 0.0)


def test_multi_head_equals_keras_multi_head_attention():
    ours = MultiHeadCross(2, D)
    theirs = keras.layers.MultiHeadAttention(num_heads=2, key_dim=D // 2)
    ours(QUERY, MEMORY)
    theirs(QUERY, MEMORY)
    for src, dst in ((ours.query_dense, theirs._query_dense), (ours.key_dense, theirs._key_dense),
                     (ours.value_dense, theirs._value_dense),
                     (ours.output_dense, theirs._output_dense)):
        dst.kernel.assign(src.kernel)
        dst.bias.assign(src.bias)
    attn = np.broadcast_to(MEM_MASK[:, None, :], (B, T_Q, T_K))
    for kwargs in ({}, {"use_causal_mask": True}):
        o1, w1 = ours(QUERY, MEMORY, value_mask=MEM_MASK, return_attention_scores=True,
                      **kwargs)
        o2, w2 = theirs(QUERY, MEMORY, attention_mask=attn, return_attention_scores=True,
                        **kwargs)
        np.testing.assert_allclose(to_numpy(o1), to_numpy(o2), atol=ATOL)
        np.testing.assert_allclose(to_numpy(w1), to_numpy(w2), atol=ATOL)
        o1 = ours(QUERY, MEMORY, value_mask=MEM_MASK, **kwargs)
        o2 = theirs(QUERY, MEMORY, attention_mask=attn, **kwargs)
        np.testing.assert_allclose(to_numpy(o1), to_numpy(o2), atol=ATOL)


def _compile(fn):
    backend = keras.backend.backend()
    if backend == "jax":
        import jax
        return jax.jit(fn)
    if backend == "tensorflow":
        import tensorflow as tf
        return tf.function(fn)
    return fn


def test_multi_head_attend_step_matches_reference():
    """The one-query path of the recurrent decoders == the float64 reference, per row."""
    layer = MultiHeadCross(2, D)
    layer(QUERY, MEMORY)  # build
    kv = steps.project_memory(layer, MEMORY)
    assert [tuple(x.shape) for x in kv] == [(B, 2, T_K, D // 2)] * 2  # (K, V): (B, h, S, d_h)
    for i in range(T_Q):
        ctx, w = steps.attend_step(layer, QUERY[:, i], kv, memory_mask=MEM_MASK)
        r_out, r_w = _mha_reference(layer, QUERY[:, i:i + 1], MEMORY, value_mask=MEM_MASK)
        np.testing.assert_allclose(to_numpy(ctx), r_out[:, 0], atol=ATOL)
        np.testing.assert_allclose(to_numpy(w), r_w[:, :, 0], atol=ATOL)
        # the mask as precomputed (bias, keep): the decoder's training loop
        ctx2, w2 = steps.attend_step(layer, QUERY[:, i], kv,
                                     memory_bias=mask_bias(MEM_MASK, "float32"))
        np.testing.assert_allclose(to_numpy(ctx2), r_out[:, 0], atol=ATOL)
        np.testing.assert_allclose(to_numpy(w2), r_w[:, :, 0], atol=ATOL)
    with pytest.raises(ValueError, match=r"`query`.*rank 2.*\(2, 3, 8\)"):
        steps.attend_step(layer, QUERY, kv)
    with pytest.raises(ValueError, match=r"`memory_kv`.*pair \(K, V\).*received ndarray"):
        steps.attend_step(layer, QUERY[:, 0], np.zeros((B, 2, 2, T_K, D // 2), "float32"))


@pytest.mark.parametrize("compiled", [False, True])
def test_multi_head_self_attend_step_equals_causal_pass(compiled):
    """The decoding fast path: one position at a time through a head-major (K, V) cache
    (index an int eagerly, a tensor under jax.jit / tf.function) equals the causal pass,
    output and weights; the cache ends up holding exactly the projected keys/values."""
    layer = MultiHeadCross(2, D)
    x = rng.normal(size=(B, 4, D)).astype("float32")
    full, weights = layer(x, x, use_causal_mask=True, return_attention_scores=True)
    def step(x_t, cache, index):
        return steps.self_attend_step(layer, x_t, cache, index)
    step = _compile(step) if compiled else step
    cache = steps.init_cache(layer, B, 4)
    assert [tuple(c.shape) for c in cache] == [(B, 2, 4, D // 2)] * 2  # (B, h, T_max, d_h)
    for t in range(4):
        index = ops.convert_to_tensor(t, "int32") if compiled else t
        out, w, cache = step(x[:, t], cache, index)
        np.testing.assert_allclose(to_numpy(out), to_numpy(full)[:, t], atol=ATOL)
        np.testing.assert_allclose(to_numpy(w), to_numpy(weights)[:, :, t], atol=ATOL)
        assert np.all(to_numpy(w)[:, :, t + 1:] == 0)  # future slots get exactly 0
    w_ref = R.weights_of(layer)
    for i, name in enumerate(("key", "value")):
        ref = R._project(x, w_ref[f"{name}_kernel"], w_ref[f"{name}_bias"])  # (B, h, T, d_h)
        np.testing.assert_allclose(to_numpy(cache[i]), ref, atol=ATOL)
    with pytest.raises(ValueError, match=r"`index` must be in \[0, T_max=4\).*index=4"):
        steps.self_attend_step(layer, x[:, 0], cache, 4)
    with pytest.raises(ValueError, match=r"`cache` must be the pair \(K, V\).*ndarray"):
        steps.self_attend_step(layer, x[:, 0], np.zeros((2, B, 2, 4, D // 2), "float32"), 0)
    with pytest.raises(ValueError, match=r"`query`.*rank 2.*\(2, 4, 8\)"):
        steps.self_attend_step(layer, x, cache, 0)


def test_multi_head_errors():
    layer = MultiHeadCross(2, D)
    with pytest.raises(ValueError, match=r"`query`.*rank 3.*\(2, 8\)"):
        layer(QUERY[:, 0], MEMORY)
    with pytest.raises(ValueError, match=r"`value`.*\(3, 5, 6\).*`query`.*\(2, 3, 8\)"):
        layer(QUERY, np.zeros((3, 5, 6), "float32"))
    with pytest.raises(ValueError, match=r"`value_mask`.*\(2, 5\).*\(2, 5, 6\).*\(2, 4\)"):
        layer(QUERY, MEMORY, value_mask=MEM_MASK[:, :4])
    with pytest.raises(ValueError, match=r"`query_mask`.*\(2, 3\).*\(2, 2\)"):
        layer(QUERY, MEMORY, query_mask=Q_MASK[:, :2])
    with pytest.raises(ValueError, match=r"`attention_mask`.*\(2, 3, 5\).*\(2, 5, 3\)"):
        layer(QUERY, MEMORY, attention_mask=np.ones((2, 5, 3), bool))
    with pytest.raises(ValueError, match="d_model"):
        MultiHeadCross(3, D)
