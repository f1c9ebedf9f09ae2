"""Checks for exercise 04: the context vector and the BahdanauAttention layer."""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

B, T, D_Q, D_K, U = 2, 4, 3, 5, 4


def _tensor(x, dtype="float32"):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


# -- case "context": context_vector alone -----------------------------------------------
def build_context(rng):
    return {"weights": rng.dirichlet(np.ones(T), size=B), "h_enc": rng.normal(size=(B, T, D_K))}


def run_context(student, inputs):
    return {"context": student.context_vector(_tensor(inputs["weights"]),
                                              _tensor(inputs["h_enc"]))}


def expected_context(inputs):
    return {"context": np.einsum("bt,btd->bd", inputs["weights"], inputs["h_enc"])}


# -- case "layer": the layer with the grader's weights -------------------------------
def build_layer(rng):
    memory = rng.normal(size=(B, T, D_K))
    mask = np.array([[True, True, True, False], [True, True, False, False]])
    padded = memory.copy()
    padded[~mask] = rng.normal(size=(int((~mask).sum()), D_K)) * 5  # other padding values
    return {"query": rng.normal(size=(B, D_Q)), "memory": memory, "memory_padded": padded,
            "mask": mask, "w/W_q": rng.normal(size=(D_Q, U)) * 0.7,
            "w/W_k": rng.normal(size=(D_K, U)) * 0.7, "w/v": rng.normal(size=U)}


def run_layer(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import set_weights_by_name, trainable_gradients

    layer = student.BahdanauAttention(U)
    q, mem, mask = _tensor(inputs["query"]), _tensor(inputs["memory"]), _tensor(
        inputs["mask"], "bool")
    layer(q, mem, memory_mask=mask)  # builds the weights
    set_weights_by_name(layer, inputs, prefix="w/")
    context, weights = layer(q, mem, memory_mask=mask)
    context_padded, _ = layer(q, _tensor(inputs["memory_padded"]), memory_mask=mask)
    grads = trainable_gradients(layer, lambda: ops.sum(layer(q, mem, memory_mask=mask)[0] ** 2))
    return {"context": context, "weights": weights, "context_padded": context_padded,
            **{f"grad/{k}": g for k, g in grads.items()}}


def _ref(inputs, mask="mask"):
    from kerasattn.reference import bahdanau_attention

    return bahdanau_attention(inputs["query"], inputs["memory"], inputs["w/W_q"],
                              inputs["w/W_k"], inputs["w/v"],
                              mask=None if mask is None else inputs[mask])


def expected_layer(inputs):
    context, weights = _ref(inputs)
    return {"context": context, "weights": weights}


def _inverted(inputs):
    from kerasattn.reference import bahdanau_attention

    return bahdanau_attention(inputs["query"], inputs["memory"], inputs["w/W_q"],
                              inputs["w/W_k"], inputs["w/v"], mask=~inputs["mask"])[1]


def _unmasked(inputs):
    return _ref(inputs, mask=None)[1]


def _no_tanh(inputs):
    from kerasattn.reference import masked_softmax

    e = ((inputs["query"] @ inputs["w/W_q"])[:, None, :]
         + inputs["memory"] @ inputs["w/W_k"]) @ inputs["w/v"]
    return masked_softmax(e, inputs["mask"])


HINTS = [
    "context_vector is a weighted sum over the source axis, batched. call chains three things "
    "you have written: exercise 02's additive score (with the layer's W_q, W_k and v), exercise "
    "03's masked softmax, and context_vector.",
    "Weights (B, T) against states (B, T, d_k): contract the T axis row by row, with ops.einsum "
    "(subscripts bt and btd to bd) or with ops.matmul after giving the weights a middle axis of "
    "size 1, which you drop again. In call the projected query (B, u) needs a middle axis, (B, 1, "
    "u), before it is added to the projected memory (B, T, u).",
    "call, in order: the additive score of exercise 02 with the layer's own weights, self.W_q on "
    "the query, self.W_k on the memory and self.v after the tanh, giving (B, T); the kit's "
    "masked_softmax of those scores with memory_mask, over the source positions (the last axis); "
    "then your context_vector of the weights and the memory, (B, d_k). Return the pair (context, "
    "weights).",
]

SPEC = Spec(
    exercise="04_bahdanau_attention",
    title="Context vector and Bahdanau attention layer",
    forbidden=["kerasattn.layers.bahdanau", "kerasattn.layers.BahdanauAttention",
               "keras.layers.AdditiveAttention", "keras.layers.Attention",
               "keras.layers.MultiHeadAttention"],
    cases=[Case("context", build_context, run_context, expected_context),
           Case("layer", build_layer, run_layer, expected_layer, seed=1)],
    checks=[
        Compare("context_vector matches the weighted sum", case="context", output="context",
                points=2),
        Compare("layer weights match the reference", case="layer", output="weights",
                points=2, variants=[
                    Variant("inverted mask (kept the padded keys)", _inverted,
                            "memory_mask is True at real tokens."),
                    Variant("memory_mask ignored", _unmasked,
                            "Pass memory_mask to the masked softmax."),
                    Variant("missing tanh", _no_tanh,
                            "e = v^T tanh(W_q s + W_k h)."),
                ]),
        Compare("layer context matches the reference", case="layer", output="context",
                points=2),
        Property("weights sum to 1 over the source", case="layer",
                 fn=P.rows_sum_to_one("weights", allow_zero_rows=False), points=1),
        Property("padded source positions get weight 0", case="layer",
                 fn=P.zero_where_masked("weights", "mask"), points=1),
        Property("padding invariance (padded states do not change the context)",
                 case="layer", fn=P.same_where("context", "context_padded"), points=1),
        GradientCheck("W_q, W_k and v all receive a gradient", case="layer", points=1),
    ],
)
