"""Checks for exercise 03: masked softmax (True = keep; a fully masked row gives zeros)."""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant


def _tensor(x, dtype):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


# -- case "keys": a (B, 1, T_k) padding mask broadcast over the queries ---------------
def build_keys(rng):
    scores = rng.normal(size=(2, 3, 4))
    scores[0, :, 2] = 50.0  # a large score on a padded key: it must still get weight 0
    mask = np.array([[[True, True, False, True]],
                     [[False, False, False, False]]])  # sentence 1 is fully masked
    return {"scores": scores, "mask": mask}


def run_keys(student, inputs):
    return {"weights": student.masked_softmax(_tensor(inputs["scores"], "float32"),
                                              _tensor(inputs["mask"], "bool"))}


def expected_keys(inputs):
    from kerasattn.reference import masked_softmax

    return {"weights": masked_softmax(inputs["scores"], inputs["mask"])}


def _rows_sum_as_masked(outputs, inputs):
    """Each row sums to 1 where some key is kept and to 0 where every key is masked."""
    w = np.asarray(outputs["weights"], dtype=np.float64)               # (B, T_q, T_k)
    keep = np.broadcast_to(np.asarray(inputs["mask"], bool), w.shape)  # (B, T_q, T_k)
    want = keep.any(axis=-1).astype(np.float64)                        # (B, T_q)
    sums = w.sum(axis=-1)
    bad = np.argwhere(np.abs(sums - want) > 1e-4)
    if bad.size:
        b, q = bad[0]
        return (f"row [{b}, {q}] sums to {sums[b, q]:.4g}; expected {want[b, q]:g} "
                + ("(every key of that row is masked: the row must be all zeros, not "
                   "uniform)" if want[b, q] == 0 else "(a softmax over its kept keys)"))
    return None


# -- case "axis": normalise over axis 1 with a (B, T, 1) mask ---------------------------
def build_axis(rng):
    mask = np.array([[[True], [True], [False], [True]],
                     [[True], [False], [False], [False]]])
    return {"scores": rng.normal(size=(2, 4, 3)), "mask": mask}


def run_axis(student, inputs):
    return {"weights": student.masked_softmax(_tensor(inputs["scores"], "float32"),
                                              _tensor(inputs["mask"], "bool"), axis=1)}


def expected_axis(inputs):
    from kerasattn.reference import masked_softmax

    return {"weights": masked_softmax(inputs["scores"], inputs["mask"], axis=1)}


# -- case "no_mask": mask=None is a plain softmax ----------------------------------------
def build_none(rng):
    return {"scores": rng.normal(size=(2, 3))}


def run_none(student, inputs):
    return {"weights": student.masked_softmax(_tensor(inputs["scores"], "float32"))}


def expected_none(inputs):
    from kerasattn.reference import softmax

    return {"weights": softmax(inputs["scores"])}


# -- known mistakes (float64, for the "keys" case) -------------------------------------
def _inverted(inputs):
    from kerasattn.reference import masked_softmax

    return masked_softmax(inputs["scores"], ~inputs["mask"])


def _uniform_rows(inputs):
    from kerasattn.reference import softmax

    s = np.where(np.broadcast_to(inputs["mask"], inputs["scores"].shape),
                 inputs["scores"], -1e9)
    return softmax(s)  # a fully masked row comes out uniform (the d2l trap)


def _after_softmax(inputs):
    from kerasattn.reference import softmax

    return softmax(inputs["scores"]) * inputs["mask"]


def _wrong_axis(inputs):
    from kerasattn.reference import masked_softmax

    return masked_softmax(inputs["scores"], inputs["mask"], axis=-2)


KEY_VARIANTS = [
    Variant("inverted mask (kept the padded keys)", _inverted,
            "True means keep: masked entries are where the mask is False."),
    Variant("fully masked row gives 1/n instead of zeros", _uniform_rows,
            "Multiply the softmax by the mask so a row with no kept key becomes all zeros."),
    Variant("mask applied after the softmax", _after_softmax,
            "Mask the scores before the softmax, so the kept weights still sum to 1."),
    Variant("softmax over the wrong axis (queries instead of keys)", _wrong_axis,
            "Normalise over `axis` (the last axis by default)."),
]


HINTS = [
    "Mask the scores before the softmax, not the weights after it: a masked score must become a "
    "number whose exponential is 0, so that the kept weights still sum to 1. A large negative "
    "number such as -1e9 does it without creating an infinity.",
    "Replace every masked score by -1e9 with ops.where (where the mask is True the score is kept; "
    "ops.full_like builds a -1e9 tensor of the scores' shape), then take ops.softmax over axis: "
    "the masked entries get weight 0. But a row whose scores are all masked is now all -1e9, and "
    "its softmax is uniform (1/n), not zeros.",
    "Multiply the softmax by the mask cast to the weights' dtype (ops.cast): the kept weights do "
    "not change (the masked ones were 0 already) and a fully masked row becomes all zeros. With "
    "mask=None there is nothing to mask: return the plain ops.softmax over axis.",
]

SPEC = Spec(
    exercise="03_masked_softmax",
    title="Masked softmax",
    forbidden=["kerasattn.layers", "keras.layers.Softmax"],
    cases=[Case("keys", build_keys, run_keys, expected_keys),
           Case("axis", build_axis, run_axis, expected_axis, seed=1),
           Case("no_mask", build_none, run_none, expected_none, seed=2)],
    checks=[
        Compare("weights with a padding mask (incl. a fully masked sentence)", case="keys",
                output="weights", points=4, variants=KEY_VARIANTS),
        Property("no NaN or inf", case="keys", fn=P.all_finite("weights"), points=1),
        Property("rows sum to 1, fully masked rows to 0", case="keys",
                 fn=_rows_sum_as_masked, points=1),
        Property("masked keys get weight 0", case="keys",
                 fn=P.zero_where_masked("weights", "mask"), points=1),
        Compare("softmax over axis=1", case="axis", output="weights", points=2),
        Compare("mask=None is a plain softmax", case="no_mask", output="weights", points=1),
    ],
)
