"""Checks for exercise 11: incremental attention with a key/value cache.

Decoding step by step (t = 0 .. T-1) must give exactly the rows of full causal
self-attention; the cache starts with stale values in every slot (as after a previous
sentence), so unmasked empty slots change the answer.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

B, T, S_MAX, H, D_H = 2, 4, 6, 2, 3


def build(rng):
    return {"q": rng.normal(size=(B, H, T, D_H)), "k": rng.normal(size=(B, H, T, D_H)),
            "v": rng.normal(size=(B, H, T, D_H)),
            "stale": rng.normal(size=(2, B, H, S_MAX, D_H)) * 2}  # stale (K, V)


def run(student, inputs):
    import keras
    from keras import ops

    def t(x):
        return keras.ops.convert_to_tensor(np.asarray(x), dtype="float32")

    q, k, v = t(inputs["q"]), t(inputs["k"]), t(inputs["v"])
    cache = (t(inputs["stale"][0]), t(inputs["stale"][1]))  # (K, V): (B, h, S_max, d_h)
    outs = []
    for step in range(T):
        out, cache = student.cached_attention_step(
            q[:, :, step:step + 1], k[:, :, step:step + 1], v[:, :, step:step + 1], cache,
            step)
        outs.append(out)
    keys, values = cache
    return {"outputs": ops.concatenate(outs, axis=2),  # (B, h, T, d_h)
            "cache": ops.stack([keys, values], axis=0)}  # (2, B, h, S_max, d_h)


def _full(i, mask_fn=None, scale=True):
    """Row t of full attention over the (stale-filled) cache after writing steps 0..t."""
    from kerasattn.reference import masked_softmax

    keys, values = i["stale"][0].copy(), i["stale"][1].copy()  # (B, h, S_max, d_h)
    keys[:, :, :T], values[:, :, :T] = i["k"], i["v"]
    out = np.zeros((B, H, T, D_H))
    for step in range(T):
        k_now, v_now = i["stale"][0].copy(), i["stale"][1].copy()
        k_now[:, :, :step + 1] = i["k"][:, :, :step + 1]
        v_now[:, :, :step + 1] = i["v"][:, :, :step + 1]
        s = np.einsum("bhd,bhkd->bhk", i["q"][:, :, step], k_now)
        if scale:
            s = s / np.sqrt(D_H)
        allowed = np.arange(S_MAX) <= step if mask_fn is None else mask_fn(step)
        w = masked_softmax(s, allowed[None, None, :])  # (B, h, S_max)
        out[:, :, step] = np.einsum("bhk,bhkd->bhd", w, v_now)
    return out, np.stack([keys, values], axis=0)


def expected(inputs):
    from kerasattn.reference import causal_mask, scaled_dot_product_attention

    # Full causal self-attention over the T new tokens (head-major, as the cache).
    q, k, v = inputs["q"], inputs["k"], inputs["v"]  # (B, h, T, d_h)
    out, _ = scaled_dot_product_attention(q, k, v, causal_mask(T))  # (B, h, T, d_h)
    cache = inputs["stale"].copy()  # (2, B, h, S_max, d_h)
    cache[0, :, :, :T], cache[1, :, :, :T] = k, v
    return {"outputs": out, "cache": cache}


def _unmasked(i):
    return _full(i, mask_fn=lambda step: np.ones(S_MAX, bool))[0]


def _shifted(i):
    return _full(i, mask_fn=lambda step: np.arange(S_MAX) < step)[0]


def _no_scale(i):
    return _full(i, scale=False)[0]


def _not_written(i):
    return i["stale"]


HINTS = [
    "Three stages: write k_t and v_t into slot `index` of the cache; attend the query to the "
    "whole updated cache with the empty slots masked out; return the output and the updated "
    "cache.",
    "Writing: ops.slice_update takes the start index of every axis of the (B, h, S_max, d_h) "
    "cache, 0 everywhere except index on the slot axis (axis 2); do it for the keys and for the "
    "values. Scores: q_t (B, h, 1, d_h) times the keys with their last two axes swapped, (B, h, "
    "d_h, S_max), gives (B, h, 1, S_max); divide by sqrt(d_h), the last dimension of q_t.",
    "The mask is exercise 07's causal_mask for one query row against all S_max slots with "
    "offset=index: True exactly at the slots j <= index, shape (1, S_max), which broadcasts over "
    "(B, h). Normalise the scaled scores with masked_softmax and that mask (over the last axis), "
    "multiply the weights by the updated values with ops.matmul, (B, h, 1, d_h), and return that "
    "output with the updated keys and values as the new cache pair.",
]

SPEC = Spec(
    exercise="11_kv_cache_step",
    title="One incremental decoding step with a K/V cache",
    forbidden=["kerasattn.layers.multi_head", "kerasattn.layers.MultiHeadCross",
               "kerasattn.steps",
               "kerasattn.layers.decoder_block", "kerasattn.layers.TransformerDecoderBlock",
               "kerasattn.models", "kerasattn.decoding", "keras.layers.MultiHeadAttention",
               "keras_hub", "keras_nlp"],
    cases=[Case("steps", build, run, expected)],
    checks=[
        Compare("step-by-step outputs equal full causal attention", case="steps",
                output="outputs", points=6, variants=[
                    Variant("empty cache slots not masked", _unmasked,
                            "Mask key slots j > index: they hold stale values."),
                    Variant("causal mask shifted by one", _shifted,
                            "Slot `index` (the new token itself) must be allowed."),
                    Variant("missing 1/sqrt(d_k) scaling", _no_scale,
                            "Divide the scores by sqrt(d_h).")]),
        Compare("the cache holds the new keys/values in slots 0..T-1, the rest untouched",
                case="steps", output="cache", points=3, atol=1e-6, variants=[
                    Variant("cache not updated (returned the old cache)", _not_written,
                            "Write k_t and v_t with ops.slice_update and return the "
                            "updated pair (K, V).")]),
        Property("outputs are finite", case="steps", fn=P.all_finite("outputs"), points=1),
    ],
)
