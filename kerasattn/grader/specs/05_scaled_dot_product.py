"""Checks for exercise 05: scaled dot-product attention with masks."""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant


def _tensor(x, dtype="float32"):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


# -- case "padding": (B, h, T_q, T_k) with a key padding mask (B, 1, 1, T_k) -----------
# T_q = T_k = d_k = 4 so that "keys not transposed" still runs and can be recognised.
def build_padding(rng):
    mask = np.array([True, True, True, False, True, True, False, False]).reshape(2, 1, 1, 4)
    return {"q": rng.normal(size=(2, 2, 4, 4)) * 1.5, "k": rng.normal(size=(2, 2, 4, 4)) * 1.5,
            "v": rng.normal(size=(2, 2, 4, 3)), "mask": mask}


def run_padding(student, inputs):
    out, weights = student.scaled_dot_product_attention(
        _tensor(inputs["q"]), _tensor(inputs["k"]), _tensor(inputs["v"]),
        mask=_tensor(inputs["mask"], "bool"))
    return {"out": out, "weights": weights}


def expected_padding(inputs):
    from kerasattn.reference import scaled_dot_product_attention

    out, weights = scaled_dot_product_attention(inputs["q"], inputs["k"], inputs["v"],
                                                inputs["mask"])
    return {"out": out, "weights": weights}


# -- case "causal": (B, T, d) self-attention with a (T, T) causal mask, T_q != d_k -----
def build_causal(rng):
    x = rng.normal(size=(1, 3, 5))
    return {"q": x, "k": rng.normal(size=(1, 3, 5)), "v": rng.normal(size=(1, 3, 2)),
            "mask": np.tril(np.ones((3, 3), bool))}


run_causal = run_padding
expected_causal = expected_padding


# -- case "no_mask": rectangular T_q != T_k, mask=None -------------------------------
def build_nomask(rng):
    return {"q": rng.normal(size=(2, 2, 3)), "k": rng.normal(size=(2, 5, 3)),
            "v": rng.normal(size=(2, 5, 4))}


def run_nomask(student, inputs):
    out, weights = student.scaled_dot_product_attention(
        _tensor(inputs["q"]), _tensor(inputs["k"]), _tensor(inputs["v"]))
    return {"out": out, "weights": weights}


def expected_nomask(inputs):
    from kerasattn.reference import scaled_dot_product_attention

    out, weights = scaled_dot_product_attention(inputs["q"], inputs["k"], inputs["v"])
    return {"out": out, "weights": weights}


# -- known mistakes (weights, float64) --------------------------------------------------
def _weights(q, k, mask, scale=True, axis=-1):
    from kerasattn.reference import masked_softmax

    s = q @ np.swapaxes(k, -1, -2)
    if scale:
        s = s / np.sqrt(q.shape[-1])
    return masked_softmax(s, mask, axis=axis)


def _no_scale(i):
    return _weights(i["q"], i["k"], i.get("mask"), scale=False)


def _wrong_axis(i):
    return _weights(i["q"], i["k"], i.get("mask"), axis=-2)


def _inverted(i):
    return _weights(i["q"], i["k"], ~np.asarray(i["mask"]))


def _not_transposed(i):
    from kerasattn.reference import masked_softmax

    return masked_softmax(i["q"] @ i["k"] / np.sqrt(i["q"].shape[-1]), i["mask"])


def _after_softmax(i):
    from kerasattn.reference import softmax

    s = i["q"] @ np.swapaxes(i["k"], -1, -2) / np.sqrt(i["q"].shape[-1])
    return softmax(s) * i["mask"]


VARIANTS = [
    Variant("missing 1/sqrt(d_k) scaling", _no_scale, "Divide the scores by sqrt(d_k)."),
    Variant("softmax over the wrong axis (queries instead of keys)", _wrong_axis,
            "Normalise over the last axis (the keys)."),
    Variant("inverted mask (kept the padded keys)", _inverted, "True = may attend."),
    Variant("keys not transposed / transposed twice", _not_transposed,
            "Scores are Q K^T: swap the last two axes of k."),
    Variant("mask applied after the softmax", _after_softmax,
            "Mask the scores before the softmax (use masked_softmax)."),
]


def _out_variant(weight_fn):
    return lambda i: weight_fn(i) @ i["v"]


OUT_VARIANTS = [Variant(v.name, _out_variant(v.fn), v.hint) for v in VARIANTS]

HINTS = [
    "Three steps: the scores of every query against every key, scaled by 1/sqrt(d_k); a masked "
    "softmax over the keys; the weighted average of the values.",
    "The scores are q times k with its last two axes swapped (ops.swapaxes of axes -1 and -2; "
    "ops.transpose without axes would reverse every axis, batch included): (..., T_q, d_k) @ "
    "(..., d_k, T_k) = (..., T_q, T_k). d_k is the size of the last axis of q. The kit's "
    "masked_softmax also handles mask=None.",
    "Step by step: the ops.matmul scores divided by sqrt(d_k) with true division (math.sqrt of "
    "the last dimension of q); masked_softmax of the scaled scores with the mask over the last "
    "axis (axis=-1, the keys); ops.matmul of those weights with v, (..., T_q, d_v). Return the "
    "output and the weights, in that order.",
]

SPEC = Spec(
    exercise="05_scaled_dot_product",
    title="Scaled dot-product attention",
    forbidden=["kerasattn.layers.dot_product",
               "kerasattn.layers.scaled_dot_product_attention",
               "kerasattn.layers.multi_head", "kerasattn.layers.MultiHeadCross",
               "keras.ops.dot_product_attention", "keras.ops.nn.dot_product_attention",
               "keras.layers.MultiHeadAttention", "keras.layers.Attention"],
    cases=[Case("padding", build_padding, run_padding, expected_padding),
           Case("causal", build_causal, run_causal, expected_causal, seed=1),
           Case("no_mask", build_nomask, run_nomask, expected_nomask, seed=2)],
    checks=[
        Compare("weights with a padding mask", case="padding", output="weights", points=2,
                variants=VARIANTS),
        Compare("output with a padding mask", case="padding", output="out", points=2,
                variants=OUT_VARIANTS),
        Property("weights sum to 1 over the keys", case="padding",
                 fn=P.rows_sum_to_one("weights", allow_zero_rows=False), points=1),
        Property("padded keys get weight 0", case="padding",
                 fn=P.zero_where_masked("weights", "mask"), points=1),
        Compare("weights with a causal mask", case="causal", output="weights", points=1,
                variants=VARIANTS[:2] + VARIANTS[4:]),
        Property("causal: no weight on future keys", case="causal",
                 fn=P.causal("weights"), points=1),
        Compare("weights without a mask (T_q != T_k)", case="no_mask", output="weights",
                points=1, variants=VARIANTS[:2]),
        Compare("output without a mask (T_q != T_k)", case="no_mask", output="out",
                points=1),
    ],
)
