"""Checks for exercise 14 (debugging): attention that stays uniform.

The two bugs: ``1 // math.sqrt(d_k)`` (floor division: the scale is 0.0, every score is
0, the weights are uniform and ``W`` gets no gradient) and the softmax over axis 1 (the
decoder steps) instead of the source positions.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

B, T_Q, T_K, D_Q, D_K = 2, 3, 4, 3, 5  # T_q != T_k, so a wrong axis cannot hide


def build(rng):
    return {"query": rng.normal(size=(B, T_Q, D_Q)), "memory": rng.normal(size=(B, T_K, D_K)),
            "mask": np.array([[True, True, True, False], [True, True, False, False]]),
            "w/W": rng.normal(size=(D_Q, D_K)) * 1.5}


def run(student, inputs):
    import keras
    from keras import ops

    from kerasattn.grader.childtools import set_weights_by_name, trainable_gradients

    def t(name, dtype="float32"):
        return keras.ops.convert_to_tensor(np.asarray(inputs[name]), dtype=dtype)

    layer = student.GeneralAttention()
    q, mem, mask = t("query"), t("memory"), t("mask", "bool")
    layer(q, mem, memory_mask=mask)
    set_weights_by_name(layer, inputs, prefix="w/")
    context, weights = layer(q, mem, memory_mask=mask)
    grads = trainable_gradients(layer, lambda: ops.sum(layer(q, mem, memory_mask=mask)[0] ** 2))
    return {"context": context, "weights": weights, **{f"grad/{k}": g for k, g in grads.items()}}


def _reference(inputs, scale=1.0, axis=-1):
    from kerasattn.reference import bahdanau_attention, masked_softmax

    # The scaled general score is linear in W: s^T W h / sqrt(d_k) = s^T (W / sqrt(d_k)) h.
    W = inputs["w/W"] * scale / np.sqrt(D_K)
    if axis == -1:
        return bahdanau_attention(inputs["query"], inputs["memory"], W=W,
                                  mask=inputs["mask"], score="general")
    e = np.einsum("bqd,de,bke->bqk", inputs["query"], W, inputs["memory"])
    weights = masked_softmax(e, inputs["mask"][:, None, :], axis=axis)
    return weights @ inputs["memory"], weights


def expected(inputs):
    context, weights = _reference(inputs)
    return {"context": context, "weights": weights}


def _variant(index, **kw):
    return lambda i: _reference(i, **kw)[index]


ZERO = "scores scaled to zero (1 // sqrt(d_k) is 0.0): uniform weights"
ZERO_HINT = "// is floor division: 1 // 2.23 == 0.0. Use 1 / math.sqrt(d_k)."
AXIS = "softmax over the wrong axis (queries instead of keys)"
AXIS_HINT = "Normalise over the source positions: the last axis of the scores."


def variants(index):
    return [Variant(ZERO + " and " + AXIS, _variant(index, scale=0.0, axis=1),
                    "Both bugs are still there. " + ZERO_HINT),
            Variant(ZERO, _variant(index, scale=0.0), ZERO_HINT),
            Variant(AXIS, _variant(index, axis=1), AXIS_HINT),
            Variant("missing 1/sqrt(d_k) scaling", _variant(index, scale=np.sqrt(D_K)),
                    "Keep the scale, just compute it with true division.")]


def _not_uniform(outputs, inputs):
    w = outputs["weights"]
    if w.shape != (B, T_Q, T_K):
        return f"weights have shape {w.shape}, expected {(B, T_Q, T_K)}"
    kept = np.broadcast_to(inputs["mask"][:, None, :], w.shape)
    spread = [np.ptp(w[b, q][kept[b, q]]) for b in range(B) for q in range(T_Q)]
    if max(spread) < 1e-3:
        return "every row is uniform over the real source tokens: the scores are all equal"
    return None


HINTS = [
    "Where to look: the run shows two separate symptoms. A weight that does not move at all "
    "under Adam has a gradient of exactly zero, so something between W and the loss multiplies "
    "by zero: follow the scores from the einsum to the softmax and check every number they are "
    "multiplied by. Rows of the heat-map that sum to 1.25 instead of 1: look at how the weights "
    "are normalised.",
    "What to compare: evaluate the scale on its own in Python for the run's d_k = 16 and compare "
    "it with 1 / sqrt(16) = 0.25. Then print ops.sum(weights, axis=-1) and ops.sum(weights, "
    "axis=1): weights is (B, T_q, T_k), and each decoder step's weights over the source (the "
    "last axis) must sum to 1. Which of the two sums is all ones (over the real source "
    "columns) with the student's code?",
    "The fix: two changes in place. The scale must divide 1 by the square root of d_k with true "
    "division (/), not floor division (//): 1 // 4.0 == 0.0, so every score was multiplied by 0, "
    "the softmax was uniform and W got no gradient. The masked softmax must normalise over the "
    "last axis (-1, the source positions T_k), not axis 1, which is the decoder steps. The rest "
    "of the layer is right.",
]

SPEC = Spec(
    exercise="14_debug_uniform_attention",
    title="Debugging: attention stays uniform",
    forbidden=["kerasattn.layers.bahdanau", "kerasattn.layers.BahdanauAttention",
               "kerasattn.layers.dot_product", "kerasattn.layers.scaled_dot_product_attention",
               "keras.layers.Attention", "keras.layers.MultiHeadAttention",
               "keras.ops.dot_product_attention"],
    cases=[Case("layer", build, run, expected)],
    checks=[
        Compare("attention weights match the reference", case="layer", output="weights",
                points=3, variants=variants(1)),
        Compare("context matches the reference", case="layer", output="context", points=2,
                variants=variants(0)),
        Property("weights are not uniform", case="layer", fn=_not_uniform, points=1),
        Property("each decoder step's weights sum to 1 over the source", case="layer",
                 fn=P.rows_sum_to_one("weights", allow_zero_rows=False), points=2),
        GradientCheck("W receives a non-zero gradient", case="layer", points=2),
    ],
)
