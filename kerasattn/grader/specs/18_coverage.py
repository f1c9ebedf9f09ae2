"""Checks for exercise 18: coverage attention and the coverage loss (See et al. 2017).

The layer, the loss and the loop over decoder steps are compared with a float64 NumPy
reference on the grader's weights; properties: weights sum to 1 and skip the padding,
coverage starts at 0 and never decreases, the loss is 0 when no position is attended
twice, every weight receives a gradient.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

B, T, S, D_Q, D_K, A = 2, 4, 5, 3, 4, 6
MASK = np.array([[True] * 5, [True] * 3 + [False] * 2])


def _tensor(x, dtype="float32"):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


def _weights(rng):
    return {"w/W_s": rng.normal(size=(D_Q, A)) * 0.7, "w/W_h": rng.normal(size=(D_K, A)) * 0.7,
            "w/w_c": rng.normal(size=A) * 1.5, "w/v": rng.normal(size=A)}


# -- float64 reference ------------------------------------------------------------------
def _attend(w, query, memory, coverage, mask, use_coverage=True, use_mask=True):
    from kerasattn.reference import masked_softmax

    hidden = ((query @ w["w/W_s"])[:, None, :] + memory @ w["w/W_h"]
              + (coverage[:, :, None] * w["w/w_c"] if use_coverage else 0.0))  # (B, S, a)
    e = np.tanh(hidden) @ w["w/v"]  # (B, S)
    alpha = masked_softmax(e, mask if use_mask else None)
    return np.einsum("bs,bsd->bd", alpha, memory), alpha


def _loss(weights, coverage):
    return np.minimum(weights, coverage).sum(axis=-1)


def _loop(w, queries, memory, mask, update="after", use_coverage=True):
    coverage = np.zeros((queries.shape[0], memory.shape[1]))
    loss = np.zeros(queries.shape[0])
    contexts, weights, coverages = [], [], []
    for t in range(queries.shape[1]):
        context, alpha = _attend(w, queries[:, t], memory, coverage, mask, use_coverage)
        if update == "before":  # coverage updated before the loss: always overlaps
            loss = loss + _loss(alpha, coverage + alpha)
        else:
            loss = loss + _loss(alpha, coverage)
        contexts.append(context)
        weights.append(alpha)
        coverages.append(coverage)
        coverage = coverage + alpha
    return (np.stack(contexts, 1), np.stack(weights, 1), np.stack(coverages, 1), loss)


# -- case "layer": one step with a given coverage -----------------------------------------
def build_layer(rng):
    return {"query": rng.normal(size=(B, D_Q)), "memory": rng.normal(size=(B, S, D_K)),
            "coverage": rng.uniform(0, 1.5, size=(B, S)) * MASK, "mask": MASK,
            **_weights(rng)}


def run_layer(student, inputs):
    from kerasattn.grader.childtools import set_weights_by_name

    layer = student.CoverageAttention(A)
    args = (_tensor(inputs["query"]), _tensor(inputs["memory"]), _tensor(inputs["coverage"]))
    mask = _tensor(inputs["mask"], "bool")
    layer(*args, memory_mask=mask)  # builds the weights
    set_weights_by_name(layer, inputs, prefix="w/")
    context, weights = layer(*args, memory_mask=mask)
    return {"context": context, "weights": weights}


def expected_layer(inputs):
    context, weights = _attend(inputs, inputs["query"], inputs["memory"], inputs["coverage"],
                               inputs["mask"])
    return {"context": context, "weights": weights}


def _no_coverage(inputs):
    return _attend(inputs, inputs["query"], inputs["memory"], inputs["coverage"],
                   inputs["mask"], use_coverage=False)[1]


def _unmasked(inputs):
    return _attend(inputs, inputs["query"], inputs["memory"], inputs["coverage"],
                   inputs["mask"], use_mask=False)[1]


# -- case "loss": coverage_loss alone ------------------------------------------------------
def build_loss(rng):
    weights = rng.dirichlet(np.ones(S), size=(B, T))  # (B, T, S)
    coverage = rng.uniform(0, 2, size=(B, T, S))
    # attention that never returns: step t looks only at position t (one-hot)
    disjoint = np.eye(S)[None, :T, :].repeat(B, 0)  # (B, T, S)
    disjoint_coverage = np.cumsum(disjoint, axis=1) - disjoint  # earlier steps only
    return {"weights": weights, "coverage": coverage, "disjoint": disjoint,
            "disjoint_coverage": disjoint_coverage}


def run_loss(student, inputs):
    return {"loss": student.coverage_loss(_tensor(inputs["weights"]),
                                          _tensor(inputs["coverage"])),
            "loss_disjoint": student.coverage_loss(_tensor(inputs["disjoint"]),
                                                   _tensor(inputs["disjoint_coverage"]))}


def expected_loss(inputs):
    return {"loss": _loss(inputs["weights"], inputs["coverage"])}


def _loss_max(inputs):
    return np.maximum(inputs["weights"], inputs["coverage"]).sum(-1)


def _loss_product(inputs):
    return (inputs["weights"] * inputs["coverage"]).sum(-1)


def _zero_when_disjoint(outputs, inputs):
    loss = outputs["loss_disjoint"]
    if loss.shape != (B, T):
        return f"coverage_loss of (B, T, S) inputs has shape {loss.shape}, expected {(B, T)}"
    if np.abs(loss).max() > 1e-6:
        return (f"attention that never returns to a position must cost 0, got "
                f"{np.abs(loss).max():.4g}: the loss is sum_j min(alpha_tj, c_tj)")
    return None


# -- case "loop": attend_with_coverage over T steps -----------------------------------------
def build_loop(rng):
    return {"queries": rng.normal(size=(B, T, D_Q)), "memory": rng.normal(size=(B, S, D_K)),
            "mask": MASK, "probe": rng.normal(size=(B, T, D_K)), **_weights(rng)}


def run_loop(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import set_weights_by_name, trainable_gradients

    layer = student.CoverageAttention(A)
    q, mem, mask = (_tensor(inputs["queries"]), _tensor(inputs["memory"]),
                    _tensor(inputs["mask"], "bool"))
    layer(q[:, 0], mem, ops.zeros((B, S)), memory_mask=mask)  # builds the weights
    set_weights_by_name(layer, inputs, prefix="w/")
    contexts, weights, coverages, loss = student.attend_with_coverage(layer, q, mem, mask)
    probe = _tensor(inputs["probe"])

    def objective():
        c, _, _, loss = student.attend_with_coverage(layer, q, mem, mask)
        return ops.sum(c * probe) + ops.sum(loss)

    grads = trainable_gradients(layer, objective)
    return {"contexts": contexts, "weights": weights, "coverages": coverages, "loss": loss,
            **{f"grad/{k}": g for k, g in grads.items()}}


def expected_loop(inputs):
    contexts, weights, coverages, loss = _loop(inputs, inputs["queries"], inputs["memory"],
                                               inputs["mask"])
    return {"contexts": contexts, "weights": weights, "coverages": coverages, "loss": loss}


def _loop_variant(index, **kwargs):
    return lambda inputs: _loop(inputs, inputs["queries"], inputs["memory"], inputs["mask"],
                                **kwargs)[index]


def _coverage_monotone(outputs, inputs):
    c = outputs["coverages"]
    if c.shape != (B, T, S):
        return f"coverages have shape {c.shape}, expected (B, T, S) = {(B, T, S)}"
    if np.abs(c[:, 0]).max() > 1e-6:
        return "the first step's coverage must be 0 (nothing attended yet)"
    drop = np.diff(c, axis=1)
    if (drop < -1e-6).any():
        b, t, j = np.argwhere(drop < -1e-6)[0]
        return (f"coverage decreased at row {b}, position {j}, from step {t} to {t + 1} "
                f"({drop[b, t, j]:.3g}): c_t is a running sum of non-negative weights")
    return None


HINTS = [
    "The layer is exercise 04's additive attention with one more term inside the tanh: the "
    "coverage of each source position times a learned vector. The loop carries the coverage from "
    "step to step, starting at zero.",
    "Shapes in call: W_s s_{t-1} is (B, a) and needs a source axis, (B, 1, a); W_h h_j is (B, S, "
    "a); w_c c_tj is the coverage with a trailing axis, (B, S, 1), times the (a,) vector w_c, (B, "
    "S, a). Their sum goes through tanh and the product with v, e (B, S); the masked softmax over "
    "the source (last) axis gives the weights, and their weighted sum of the memory rows the "
    "context (B, d_k). coverage_loss compares alpha_tj and c_tj position by position and reduces "
    "the source axis: (B, S) to (B,).",
    "coverage_loss: the elementwise minimum of the weights and the coverage (ops.minimum), summed "
    "over the last axis (the source positions). attend_with_coverage: start from a zero coverage "
    "(B, S) (c_1 = 0) and a zero loss (B,) in the memory's dtype; for each step t in a Python "
    "loop, attend with the query of step t, the memory, the current coverage and the mask; add "
    "the coverage loss of this step (its weights against the coverage before it) to the loss; "
    "record the context, the weights and the coverage this step used; only then add the step's "
    "weights to the coverage, c_{t+1} = c_t + alpha_t. Stack each record on axis 1 (ops.stack) "
    "and return the three with the loss.",
]

SPEC = Spec(
    exercise="18_coverage",
    title="Coverage attention and the coverage loss",
    forbidden=["kerasattn.layers.bahdanau", "kerasattn.layers.BahdanauAttention",
               "kerasattn.models", "kerasattn.decoding", "kerasattn.training", "kerasattn.steps",
               "keras.layers.AdditiveAttention", "keras.layers.Attention",
               "keras.layers.MultiHeadAttention"],
    cases=[Case("layer", build_layer, run_layer, expected_layer),
           Case("loss", build_loss, run_loss, expected_loss, seed=1),
           Case("loop", build_loop, run_loop, expected_loop, seed=2, timeout=120)],
    checks=[
        Compare("layer weights: e_tj = v^T tanh(W_s s + W_h h_j + w_c c_tj)", case="layer",
                output="weights", points=2, variants=[
                    Variant("coverage term missing", _no_coverage,
                            "Add w_c c_tj inside the tanh."),
                    Variant("memory_mask ignored", _unmasked,
                            "Pass memory_mask to the masked softmax.")]),
        Compare("layer context = sum_j alpha_tj h_j", case="layer", output="context",
                points=1),
        Property("layer weights sum to 1 over the source", case="layer",
                 fn=P.rows_sum_to_one("weights", allow_zero_rows=False), points=1),
        Property("padded source positions get weight 0", case="layer",
                 fn=P.zero_where_masked("weights", "mask"), points=1),
        Compare("coverage_loss = sum_j min(alpha_tj, c_tj)", case="loss", output="loss",
                points=2, variants=[
                    Variant("max instead of min", _loss_max, "The overlap is the minimum."),
                    Variant("product alpha * c instead of min", _loss_product,
                            "See et al. use min(alpha_tj, c_tj).")]),
        Property("coverage_loss is 0 when attention never returns to a position",
                 case="loss", fn=_zero_when_disjoint, points=1),
        Compare("loop: coverages c_t = sum of the earlier steps' weights", case="loop",
                output="coverages", points=2),
        Property("loop: coverage starts at 0 and never decreases", case="loop",
                 fn=_coverage_monotone, points=1),
        Compare("loop: weights of every step", case="loop", output="weights", points=1,
                variants=[Variant("coverage never fed to the attention",
                                  _loop_variant(1, use_coverage=False),
                                  "Pass the running coverage to the layer at every step.")]),
        Compare("loop: contexts of every step", case="loop", output="contexts", points=1),
        Compare("loop: summed coverage loss", case="loop", output="loss", points=2,
                variants=[Variant("loss computed after adding the step's own weights",
                                  _loop_variant(3, update="before"),
                                  "c_t holds the earlier steps only: add alpha_t to the "
                                  "coverage after the loss.")]),
        GradientCheck("W_s, W_h, w_c and v all receive a gradient", case="loop", points=1),
    ],
)
