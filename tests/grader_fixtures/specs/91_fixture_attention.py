"""Check spec of the grader's own test exercise (tests/grader_fixtures/*/91_fixture_attention.py).

The submission defines ``attention(q, k, v, mask=None) -> (out, weights)`` (scaled
dot-product attention over the last axis; a key padding mask; a fully masked row gives
zeros) and ``Projection``, a layer with weights ``W`` (d, d) and ``b`` (d,) computing
``x W + b``. Nine points; see tests/test_grader_hostile.py for the score each hostile
submission deserves.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant


def _t(x, dtype="float32"):
    from keras import ops

    return ops.convert_to_tensor(np.asarray(x), dtype=dtype)


def build_plain(rng):
    return {"q": rng.standard_normal((2, 3, 4)), "k": rng.standard_normal((2, 5, 4)),
            "v": rng.standard_normal((2, 5, 2))}


def build_masked(rng):
    inputs = build_plain(rng)
    keep = np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]], bool)  # sentence 2: fully masked
    inputs["mask"] = keep[:, None, :]  # (B, 1, T_k)
    return inputs


def build_layer(rng):
    return {"x": rng.standard_normal((2, 3, 4)), "w/W": rng.standard_normal((4, 4)),
            "w/b": rng.standard_normal((4,))}


def run_plain(student, inputs):
    out, weights = student.attention(_t(inputs["q"]), _t(inputs["k"]), _t(inputs["v"]))
    return {"out": out, "weights": weights}


def run_masked(student, inputs):
    out, weights = student.attention(_t(inputs["q"]), _t(inputs["k"]), _t(inputs["v"]),
                                     mask=_t(inputs["mask"], "bool"))
    return {"out": out, "weights": weights}


def run_layer(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import set_weights_by_name, trainable_gradients

    layer = student.Projection(4)
    x = _t(inputs["x"])
    layer(x)
    set_weights_by_name(layer, inputs, prefix="w/")
    y = layer(x)
    grads = trainable_gradients(layer, lambda: ops.sum(layer(x) ** 2))
    return {"y": y, **{f"grad/{k}": g for k, g in grads.items()}}


def expected_attention(inputs):
    from kerasattn import reference as ref

    out, weights = ref.scaled_dot_product_attention(inputs["q"], inputs["k"], inputs["v"],
                                                    mask=inputs.get("mask"))
    return {"out": out, "weights": weights}


def expected_layer(inputs):
    return {"y": inputs["x"] @ inputs["w/W"] + inputs["w/b"]}


def _weights(inputs, scale=True, axis=-1, invert=False):
    from kerasattn import reference as ref

    s = inputs["q"] @ np.swapaxes(inputs["k"], -1, -2)
    if scale:
        s = s / np.sqrt(inputs["q"].shape[-1])
    mask = inputs.get("mask")
    if mask is not None and invert:
        mask = ~mask
    if axis == -1:
        return ref.masked_softmax(s, mask)
    return ref.masked_softmax(np.swapaxes(s, -1, -2), None if mask is None else np.swapaxes(
        np.broadcast_to(mask, s.shape), -1, -2)).swapaxes(-1, -2)


VARIANTS = [
    Variant("missing 1/sqrt(d_k) scaling", lambda i: _weights(i, scale=False),
            "Divide the scores by sqrt(d_k)."),
    Variant("softmax over the wrong axis (queries instead of keys)",
            lambda i: _weights(i, axis=-2)),
    Variant("inverted mask (kept the padded keys)", lambda i: _weights(i, invert=True)),
]

SPEC = Spec(
    exercise="91_fixture_attention",
    title="Grader test exercise",
    forbidden=["kerasattn.layers.dot_product", "kerasattn.layers.scaled_dot_product_attention",
               "keras.ops.dot_product_attention", "keras.ops.nn.dot_product_attention"],
    cases=[
        Case("plain", build=build_plain, run=run_plain, expected=expected_attention, seed=1),
        Case("masked", build=build_masked, run=run_masked, expected=expected_attention,
             seed=2),
        Case("layer", build=build_layer, run=run_layer, expected=expected_layer, seed=3),
    ],
    checks=[
        Compare("weights", case="plain", output="weights", points=2, variants=VARIANTS),
        Compare("output", case="plain", output="out", points=1),
        Property("rows sum to 1", case="plain", fn=P.rows_sum_to_one("weights"), points=1),
        Compare("masked weights", case="masked", output="weights", points=2,
                variants=VARIANTS),
        Property("masked keys get weight 0", case="masked",
                 fn=P.zero_where_masked("weights", "mask"), points=1),
        Compare("projection output", case="layer", output="y", points=1),
        GradientCheck("every weight gets a gradient", case="layer", points=1),
    ],
)
