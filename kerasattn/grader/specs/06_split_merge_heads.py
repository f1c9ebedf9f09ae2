"""Checks for exercise 06: splitting and merging attention heads."""
import numpy as np

from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

B, T, H, D_H = 2, 3, 2, 4


def _tensor(x):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype="float32")


def build_split(rng):
    return {"x": rng.normal(size=(B, T, H * D_H)), "num_heads": H}


def run_split(student, inputs):
    split = student.split_heads(_tensor(inputs["x"]), int(inputs["num_heads"]))
    return {"split": split}


def expected_split(inputs):
    from kerasattn.reference import split_heads

    return {"split": split_heads(inputs["x"], inputs["num_heads"])}


def build_merge(rng):
    return {"heads": rng.normal(size=(B, H, T, D_H)), "x": rng.normal(size=(B, T, H * D_H)),
            "num_heads": H}


def run_merge(student, inputs):
    merged = student.merge_heads(_tensor(inputs["heads"]))
    round_trip = student.merge_heads(student.split_heads(_tensor(inputs["x"]),
                                                         int(inputs["num_heads"])))
    return {"merged": merged, "round_trip": round_trip}


def expected_merge(inputs):
    from kerasattn.reference import merge_heads

    return {"merged": merge_heads(inputs["heads"])}


def _split_no_transpose(inputs):
    return inputs["x"].reshape(B, H, T, D_H)


def _merge_no_transpose(inputs):
    return inputs["heads"].reshape(B, T, H * D_H)


def _round_trip(outputs, inputs):
    got = outputs["round_trip"]
    if got.shape != inputs["x"].shape:
        return f"merge_heads(split_heads(x)) has shape {got.shape}, expected {inputs['x'].shape}"
    err = np.abs(got - inputs["x"]).max()
    if err > 1e-5:
        return f"merge_heads(split_heads(x)) differs from x by up to {err:.3g}"
    return None


HINTS = [
    "Head i owns a block of d_h consecutive features of every position. Cut the feature axis "
    "first (a reshape), then move the head axis next to the batch axis (a transpose); merging "
    "undoes the two steps in the opposite order.",
    "Read the sizes with ops.shape: split_heads starts from (B, T, d_model) and needs d_h = "
    "d_model // h (integer division); merge_heads starts from (B, h, T, d_h). Split: reshape to "
    "(B, T, h, d_h), then permute the axes as (0, 2, 1, 3) to get (B, h, T, d_h). Merge: the same "
    "permutation first, back to (B, T, h, d_h), then reshape to (B, T, h * d_h).",
    "split_heads: unpack B, T and d_model from ops.shape of x; ops.reshape x to (B, T, h, d_model "
    "// h); ops.transpose it with the permutation (0, 2, 1, 3), which swaps axes 1 and 2. "
    "merge_heads: unpack B, h, T and d_h; ops.transpose with the same permutation (it is its own "
    "inverse); ops.reshape to (B, T, h * d_h). A reshape without the transpose has the right "
    "shape and the wrong values.",
]

SPEC = Spec(
    exercise="06_split_merge_heads",
    title="Splitting and merging heads",
    forbidden=["kerasattn.layers.multi_head", "kerasattn.layers.MultiHeadCross",
               "keras.layers.MultiHeadAttention"],
    cases=[Case("split", build_split, run_split, expected_split),
           Case("merge", build_merge, run_merge, expected_merge, seed=1)],
    checks=[
        Compare("split_heads: (B, T, d_model) -> (B, h, T, d_h)", case="split",
                output="split", points=4, atol=1e-6, variants=[
                    Variant("reshaped to (B, h, T, d_h) without transposing",
                            _split_no_transpose,
                            "Reshape to (B, T, h, d_h) first, then swap axes 1 and 2.")]),
        Compare("merge_heads: (B, h, T, d_h) -> (B, T, d_model)", case="merge",
                output="merged", points=4, atol=1e-6, variants=[
                    Variant("reshaped to (B, T, d_model) without transposing",
                            _merge_no_transpose,
                            "Swap axes 1 and 2 back to (B, T, h, d_h) before reshaping.")]),
        Property("merge_heads(split_heads(x)) == x", case="merge", fn=_round_trip, points=2),
    ],
)
