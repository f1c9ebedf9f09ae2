"""Checks for exercise 01: dot-product scores, softmax and context by hand ("noir")."""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

# The course notes' numbers: h_1..h_4 for "The black cat sat", s_2 after "Le chat".
H_ENC = np.array([[0.1, 0.2], [0.8, 0.9], [0.5, 0.4], [0.3, 0.1]])
S_PREV = np.array([0.7, 0.8])


def _f32(x):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype="float32")


# -- case "noir": the course notes' hand computation ------------------------------------
def build_noir(rng):
    return {"h_enc": H_ENC, "s_prev": S_PREV}


def run_noir(student, inputs):
    scores, weights, context = student.attend_noir()
    return {"scores": scores, "weights": weights, "context": context}


def expected_noir(inputs):
    from kerasattn.reference import softmax

    scores = inputs["h_enc"] @ inputs["s_prev"]  # e_i = s_2 . h_i = [0.23, 1.28, 0.67, 0.29]
    weights = softmax(scores)
    return {"scores": scores, "weights": weights, "context": weights @ inputs["h_enc"]}


# -- case "pieces": each function on its own inputs (no double penalty) -----------------
def build_pieces(rng):
    h_enc = rng.normal(size=(5, 3))
    return {
        "s_prev": rng.normal(size=3),
        "h_enc": h_enc,
        # Large scores: exp(90) overflows float32, so an unshifted softmax gives inf/inf.
        "big_scores": np.array([90.0, 88.5, 60.0, -20.0, 89.0]),
        "weights": rng.dirichlet(np.ones(5)),
    }


def run_pieces(student, inputs):
    return {
        "scores": student.dot_scores(_f32(inputs["s_prev"]), _f32(inputs["h_enc"])),
        "context": student.context_vector(_f32(inputs["weights"]), _f32(inputs["h_enc"])),
    }


def run_softmax(student, inputs):
    return {"big_weights": student.softmax(_f32(inputs["big_scores"]))}


def expected_pieces(inputs):
    from kerasattn.reference import softmax

    return {"scores": inputs["h_enc"] @ inputs["s_prev"],
            "big_weights": softmax(inputs["big_scores"]),
            "context": inputs["weights"] @ inputs["h_enc"]}


def _no_exp(inputs):
    e = inputs["h_enc"] @ inputs["s_prev"]
    return e / e.sum()


def _sum_not_weighted(inputs):
    return inputs["h_enc"].sum(axis=0)


def _black_wins(outputs, inputs):
    w = outputs["weights"]
    if w.shape != (4,):
        return f"weights have shape {w.shape}, expected (4,)"
    if int(np.argmax(w)) != 1:
        return (f"the largest weight should go to h_2 = 'black' (index 1), got index "
                f"{int(np.argmax(w))}")
    return None


HINTS = [
    "Each function is one equation of the docstring, computed for all source words at once. The "
    "scores e_i = s_prev . h_i of every word are one matrix-vector product; the softmax is "
    "written out from its definition, exponentials divided by their sum; the context is a "
    "weighted sum of the rows of h_enc.",
    "Check the shapes: h_enc (T, d) times s_prev (d,) gives the (T,) scores, and the (T,) weights "
    "times h_enc (T, d) give the (d,) context. In the softmax, shift the scores by their maximum "
    "m before exponentiating: exp(e_i - m) / sum_j exp(e_j - m) is the same number and cannot "
    "overflow. Compare each result with the answer key in the docstring.",
    "dot_scores: one ops.matmul, the (T, d) encoder states first and the (d,) decoder state "
    "second. softmax: subtract ops.max of the scores, take ops.exp of the difference, and divide "
    "those exponentials by their ops.sum (no ops.softmax). context_vector: one ops.matmul with "
    "the weights first and the encoder states second, which is sum_i alpha_i h_i of shape (d,).",
]

SPEC = Spec(
    exercise="01_noir_by_hand",
    title="Attention by hand: generating 'noir'",
    forbidden=["keras.ops.softmax", "keras.ops.nn.softmax", "keras.activations.softmax",
               "keras.layers.Softmax", "keras.ops.log_softmax", "keras.ops.nn.log_softmax",
               "keras.activations.log_softmax", "kerasattn.layers"],
    cases=[Case("noir", build_noir, run_noir, expected_noir),
           Case("pieces", build_pieces, run_pieces, expected_pieces, seed=1),
           Case("softmax", build_pieces, run_softmax, expected_pieces, seed=1)],
    checks=[
        Compare("scores e_i = s_2 . h_i for the noir example", case="noir",
                output="scores", points=2, atol=1e-5),
        Compare("softmax weights for the noir example", case="noir", output="weights",
                points=2, atol=1e-5,
                variants=[Variant("normalised the scores without exp (e / sum e)", _no_exp,
                                  "alpha_i = exp(e_i) / sum_j exp(e_j).")]),
        Compare("context vector for the noir example", case="noir", output="context",
                points=2, atol=1e-5,
                variants=[Variant("summed the states without the weights",
                                  _sum_not_weighted, "c = sum_i alpha_i h_i.")]),
        Property("'black' gets the largest weight", case="noir", fn=_black_wins, points=1),
        Compare("dot_scores on other inputs", case="pieces", output="scores", points=1),
        Compare("softmax is stable for large scores", case="softmax", output="big_weights",
                points=1),
        Property("softmax weights sum to 1", case="softmax",
                 fn=P.rows_sum_to_one("big_weights", allow_zero_rows=False), points=0.5),
        Compare("context_vector on other inputs", case="pieces", output="context",
                points=0.5),
    ],
)
