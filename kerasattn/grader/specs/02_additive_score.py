"""Checks for exercise 02: the additive (Bahdanau) score e = v^T tanh(W_q s + W_k h)."""
import numpy as np

from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

NAMES = ("s_prev", "h_enc", "W_q", "W_k", "v")


def build(rng):
    B, T, d_q, d_k, u = 2, 4, 3, 5, 4
    return {"s_prev": rng.normal(size=(B, d_q)), "h_enc": rng.normal(size=(B, T, d_k)),
            "W_q": rng.normal(size=(d_q, u)), "W_k": rng.normal(size=(d_k, u)),
            "v": rng.normal(size=u)}


def run(student, inputs):
    import keras

    args = [keras.ops.convert_to_tensor(inputs[n], dtype="float32") for n in NAMES]
    scores = student.additive_score(*args)
    # The same call with sentence 1's encoder states replaced: sentence 0 must not move.
    h_other = inputs["h_enc"].copy()
    h_other[1] = -h_other[1] + 0.5
    args[1] = keras.ops.convert_to_tensor(h_other, dtype="float32")
    return {"scores": scores, "scores_other": student.additive_score(*args)}


def expected(inputs):
    from kerasattn.reference import additive_score

    e = additive_score(inputs["s_prev"][:, None, :], inputs["h_enc"], inputs["W_q"],
                       inputs["W_k"], inputs["v"])  # (B, 1, T)
    return {"scores": e[:, 0, :]}


def _no_tanh(inputs):
    pre = (inputs["s_prev"] @ inputs["W_q"])[:, None, :] + inputs["h_enc"] @ inputs["W_k"]
    return pre @ inputs["v"]


def _tanh_after_v(inputs):
    return np.tanh(_no_tanh(inputs))


def _query_only(inputs):
    q = np.tanh(inputs["s_prev"] @ inputs["W_q"]) @ inputs["v"]  # (B,)
    k = np.tanh(inputs["h_enc"] @ inputs["W_k"]) @ inputs["v"]  # (B, T)
    return q[:, None] + k


def _sentence_0_same(outputs, inputs):
    a, b = outputs["scores"], outputs["scores_other"]
    if a.shape != b.shape or a.ndim != 2:
        return f"scores have shape {a.shape}, expected (B, T) = (2, 4)"
    if np.abs(a[0] - b[0]).max() > 1e-5:
        return ("changing sentence 1's encoder states changed sentence 0's scores: the "
                "batch items are mixed (check which axes your matmul contracts)")
    if np.abs(a[1] - b[1]).max() <= 1e-5:
        return ("changing sentence 1's encoder states left its own scores unchanged: the "
                "scores must depend on the keys h_j (W_k h_j inside the tanh)")
    return None


HINTS = [
    "Project the query and the keys separately into the space of u units, add them so that every "
    "source position gets the query's projection, squash with tanh, and reduce the last axis "
    "with v.",
    "s_prev @ W_q is (B, u): give it a middle axis of size 1, (B, 1, u), so that it broadcasts "
    "against h_enc @ W_k, (B, T, u). tanh of the sum is (B, T, u); a product with v removes the "
    "last axis.",
    "Three steps: project s_prev with ops.matmul by W_q and insert the time axis at position 1 "
    "(ops.expand_dims), (B, 1, u); project h_enc with ops.matmul by W_k, (B, T, u); apply "
    "ops.tanh to the sum of the two and take ops.matmul of the result with v, e_{t,i} = v^T "
    "tanh(W_q s_{t-1} + W_k h_i), which is (B, T).",
]

SPEC = Spec(
    exercise="02_additive_score",
    title="The additive (Bahdanau) score",
    forbidden=["kerasattn.layers"],
    cases=[Case("scores", build, run, expected)],
    checks=[
        Compare("scores match the reference", case="scores", output="scores", points=6,
                variants=[
                    Variant("missing tanh", _no_tanh,
                            "The score is v^T tanh(W_q s + W_k h): tanh before v."),
                    Variant("tanh applied after v", _tanh_after_v,
                            "Apply tanh to the sum W_q s + W_k h, then multiply by v."),
                    Variant("query and keys squashed separately",
                            _query_only, "Add W_q s and W_k h first, then one tanh."),
                ]),
        Property("each sentence is scored on its own keys", case="scores",
                 fn=_sentence_0_same, points=4),
    ],
)
