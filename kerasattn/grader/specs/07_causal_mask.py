"""Checks for exercise 07: the causal mask mask[i, j] = (j <= i + offset)."""
import numpy as np

from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant


def build_square(rng):
    return {"query_length": 4}


def run_square(student, inputs):
    import keras

    mask = student.causal_mask(int(inputs["query_length"]))
    is_bool = keras.backend.standardize_dtype(keras.ops.convert_to_tensor(mask).dtype) == "bool"
    return {"mask": mask, "is_bool": is_bool}


def expected_square(inputs):
    from kerasattn.reference import causal_mask

    return {"mask": causal_mask(inputs["query_length"]).astype(np.float64)}


def build_offset(rng):
    # offset != key_length - query_length: a mask aligned to the bottom-right corner, which
    # ignores its offset, is told apart from the right one
    return {"query_length": 2, "key_length": 6, "offset": 2}


def run_offset(student, inputs):
    return {"mask": student.causal_mask(int(inputs["query_length"]), int(inputs["key_length"]),
                                        offset=int(inputs["offset"]))}


def expected_offset(inputs):
    from kerasattn.reference import causal_mask

    return {"mask": causal_mask(inputs["query_length"], inputs["key_length"],
                                inputs["offset"]).astype(np.float64)}


def _mask(i, shift=0, offset=None):
    t_q, t_k = i["query_length"], i.get("key_length", i["query_length"])
    off = i.get("offset", 0) if offset is None else offset
    return (np.arange(t_k)[None, :] <= np.arange(t_q)[:, None] + off + shift).astype(float)


def _inverted(i):
    return 1.0 - _mask(i)


def _strict(i):
    return _mask(i, shift=-1)


def _upper(i):
    t_q, t_k = i["query_length"], i.get("key_length", i["query_length"])
    return (np.arange(t_k)[None, :] >= np.arange(t_q)[:, None] + i.get("offset", 0)).astype(float)


def _no_offset(i):
    return _mask(i, offset=0)


def _bottom_right(i):
    return _mask(i, offset=i["key_length"] - i["query_length"])


VARIANTS = [
    Variant("inverted mask (True on the future)", _inverted,
            "True = may attend: keys j <= i are True."),
    Variant("causal mask shifted by one", _strict,
            "The diagonal is allowed: a token attends to itself (j <= i, not j < i)."),
    Variant("upper triangle instead of lower", _upper,
            "Row i is the query: it may see columns j <= i."),
]


def _is_bool(outputs, inputs):
    return None if outputs["is_bool"] == 1 else (
        "the mask must be a boolean tensor (True = may attend), not 0/1 numbers")


HINTS = [
    "The mask compares two positions: query i, which sits at absolute position i + offset, and "
    "key j. A column of query positions compared with a row of key positions broadcasts to the "
    "whole (T_q, T_k) matrix.",
    "Build the positions with ops.arange: the query positions i + offset as a (T_q, 1) column (a "
    "new last axis) and the key positions j as a (1, T_k) row (a new first axis). Key j is "
    "allowed when j <= i + offset: the diagonal is included, and True means may attend.",
    "Steps: when key_length is not given, use query_length for it; the column is ops.arange over "
    "T_q plus offset; the row is ops.arange over T_k; return ops.less_equal of the key row "
    "against the query column, a (T_q, T_k) boolean matrix (ops.less_equal already returns "
    "booleans: no cast to numbers).",
]

SPEC = Spec(
    exercise="07_causal_mask",
    title="The causal mask",
    forbidden=["kerasattn.layers.masking", "kerasattn.layers.causal_mask",
               "kerasattn.layers.multi_head", "keras.ops.tril", "keras.ops.triu"],
    cases=[Case("square", build_square, run_square, expected_square),
           Case("offset", build_offset, run_offset, expected_offset)],
    checks=[
        Compare("4 x 4 causal mask", case="square", output="mask", points=4, atol=0,
                rtol=0, variants=VARIANTS),
        Property("the mask is boolean", case="square", fn=_is_bool, points=1),
        Compare("query_length=2, key_length=6, offset=2", case="offset", output="mask",
                points=5, atol=0, rtol=0, variants=VARIANTS + [
                    Variant("offset ignored", _no_offset,
                            "Query i sits at absolute position i + offset."),
                    Variant("offset ignored, queries aligned to the last keys "
                            "(offset = key_length - query_length)", _bottom_right,
                            "Use the offset argument: query i sits at absolute position "
                            "i + offset, whatever key_length is.")]),
    ],
)
