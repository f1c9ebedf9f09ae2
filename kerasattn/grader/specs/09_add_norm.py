"""Checks for exercise 09: layer_norm and the AddNorm layer LayerNorm(x + Dropout(y))."""
import numpy as np

from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

SHAPE = (2, 3, 6)


def _tensor(x):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype="float32")


# -- case "layer_norm" ---------------------------------------------------------------
def build_ln(rng):
    return {"x": rng.normal(size=SHAPE) * 3 + 1, "gamma": rng.normal(size=SHAPE[-1]),
            "beta": rng.normal(size=SHAPE[-1]), "small": rng.normal(size=SHAPE) * 1e-3,
            "ones": np.ones(SHAPE[-1]), "zeros": np.zeros(SHAPE[-1])}


def run_ln(student, inputs):
    t = {k: _tensor(v) for k, v in inputs.items()}
    return {"y": student.layer_norm(t["x"], t["gamma"], t["beta"], epsilon=1e-5),
            "y_small": student.layer_norm(t["small"], t["ones"], t["zeros"], epsilon=1e-5),
            "plain": student.layer_norm(t["x"], t["ones"], t["zeros"], epsilon=1e-5)}


def expected_ln(inputs):
    from kerasattn.reference import layer_norm

    return {"y": layer_norm(inputs["x"], inputs["gamma"], inputs["beta"], 1e-5),
            "y_small": layer_norm(inputs["small"], inputs["ones"], inputs["zeros"], 1e-5)}


def _ln(x, g, b, eps=1e-5, axis=-1, eps_outside=False):
    mu = x.mean(axis, keepdims=True)
    var = x.var(axis, keepdims=True)
    den = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
    return g * (x - mu) / den + b


def _time_axis(i):
    return _ln(i["x"], i["gamma"], i["beta"], axis=1)


def _no_affine(i):
    return _ln(i["x"], 1.0, 0.0)


def _eps_outside(i):
    return _ln(i["small"], 1.0, 0.0, eps_outside=True)


def _standardised(outputs, inputs):
    y = outputs["plain"]
    if y.shape != SHAPE:
        return f"layer_norm output has shape {y.shape}, expected {SHAPE}"
    mean, var = y.mean(-1), y.var(-1)
    if np.abs(mean).max() > 1e-4 or np.abs(var - 1).max() > 1e-3:
        return (f"with gamma=1, beta=0 each position must have mean 0 and variance 1 over "
                f"its features; got mean up to {np.abs(mean).max():.3g}, variance "
                f"{var.min():.3g}..{var.max():.3g}")
    return None


# -- case "add_norm": the layer with the grader's gamma/beta ------------------------
def build_layer(rng):
    return {"x": rng.normal(size=SHAPE), "y": rng.normal(size=SHAPE) * 2,
            "w/gamma": rng.normal(size=SHAPE[-1]), "w/beta": rng.normal(size=SHAPE[-1])}


def run_layer(student, inputs):
    import keras
    from keras import ops

    from kerasattn.grader.childtools import set_weights_by_name, trainable_gradients

    layer = student.AddNorm(dropout=0.5)
    x, y = _tensor(inputs["x"]), _tensor(inputs["y"])
    layer(x, y)
    set_weights_by_name(layer, inputs, prefix="w/")
    out = layer(x, y)  # training=None: dropout off
    # training=True: dropout acts, on y only (a zero y stays zero, so x alone is normalised)
    # a stateless scope keeps the dropout's seed state out of the layer: the grader runs
    # each call compiled on JAX, where a state update would leak out of the trace
    with keras.StatelessScope():
        train_zero_y = layer(x, ops.zeros_like(y), training=True)
    with keras.StatelessScope():
        train = layer(x, y, training=True)
    grads = trainable_gradients(layer, lambda: ops.sum(layer(x, y) * x))
    return {"out": out, "train_zero_y": train_zero_y, "train": train,
            **{f"grad/{k}": g for k, g in grads.items()}}


def expected_layer(inputs):
    from kerasattn.reference import add_norm

    return {"out": add_norm(inputs["x"], inputs["y"], inputs["w/gamma"], inputs["w/beta"])}


def _no_residual(i):
    from kerasattn.reference import layer_norm

    return layer_norm(i["y"], i["w/gamma"], i["w/beta"])


def _sublayer_output_normalised(i):
    """x + LayerNorm(y): the sublayer's output normalised alone, then the residual added
    (not the pre-norm block, x + Sublayer(LayerNorm(x)), which normalises the input)."""
    from kerasattn.reference import layer_norm

    return i["x"] + layer_norm(i["y"], i["w/gamma"], i["w/beta"])


def _dropout_on_y_only(outputs, inputs):
    from kerasattn.reference import layer_norm

    zero_y, train, out = outputs["train_zero_y"], outputs["train"], outputs["out"]
    if zero_y.shape != SHAPE or train.shape != SHAPE:
        return f"AddNorm output has shape {train.shape} in training, expected {SHAPE}"
    want = layer_norm(inputs["x"], inputs["w/gamma"], inputs["w/beta"])
    if np.abs(zero_y - want).max() > 1e-4:
        return ("with training=True and y = 0 the output must be LayerNorm(x): dropout acts "
                "on the sublayer output y only (not on the sum, not after the norm); got a "
                f"difference of {np.abs(zero_y - want).max():.3g}")
    if np.abs(train - out).max() < 1e-6:
        return ("with training=True (rate 0.5) the output equals the inference output: "
                "pass `training` on to self.dropout so that dropout acts while training")
    return None


HINTS = [
    "LayerNorm normalises the feature vector of each position on its own (mean and variance over "
    "the last axis only), then applies the learned per-feature scale and shift. AddNorm applies "
    "dropout to the sublayer's output, adds the sublayer's input, and normalises the sum.",
    "The statistics come from ops.mean and ops.var over the last axis with keepdims=True, (..., "
    "1), so that they broadcast back over the D features. epsilon goes inside the square root. In "
    "call the dropout acts on y only and needs the training flag; the residual adds x, the "
    "sublayer's input.",
    "layer_norm: gamma (x - mean) / sqrt(var + epsilon) + beta, with ops.sqrt for the root. "
    "AddNorm.call: apply self.dropout to y, passing training on; add x to the result; normalise "
    "that sum with your layer_norm and the layer's own gamma, beta and epsilon, and return it, "
    "(B, T, D).",
]

SPEC = Spec(
    exercise="09_add_norm",
    title="Layer normalisation and AddNorm",
    forbidden=["kerasattn.layers.add_norm", "kerasattn.layers.AddNorm",
               "keras.layers.LayerNormalization", "keras.ops.layer_normalization",
               "keras.ops.nn.layer_normalization"],
    cases=[Case("layer_norm", build_ln, run_ln, expected_ln),
           Case("add_norm", build_layer, run_layer, expected_layer, seed=1)],
    checks=[
        Compare("layer_norm matches the reference", case="layer_norm", output="y", points=3,
                variants=[
                    Variant("normalised over the wrong axis (time instead of features)",
                            _time_axis, "Mean and variance over the last axis (features)."),
                    Variant("gamma/beta not applied", _no_affine,
                            "Scale by gamma and shift by beta after normalising.")]),
        Compare("epsilon inside the square root (tiny inputs)", case="layer_norm",
                output="y_small", points=1, variants=[
                    Variant("epsilon added outside the square root", _eps_outside,
                            "sqrt(var + epsilon), not sqrt(var) + epsilon.")]),
        Property("each position is standardised over its features", case="layer_norm",
                 fn=_standardised, points=1),
        Compare("AddNorm(x, y) = LayerNorm(x + y) at inference", case="add_norm",
                output="out", points=3, variants=[
                    Variant("missing residual connection", _no_residual,
                            "Add the sublayer input: LayerNorm(x + y)."),
                    Variant("sublayer output normalised alone (x + norm(y))",
                            _sublayer_output_normalised,
                            "Add first, then normalise: LayerNorm(x + y).")]),
        Property("in training, dropout acts on y only", case="add_norm",
                 fn=_dropout_on_y_only, points=1),
        GradientCheck("gamma and beta receive a gradient", case="add_norm", points=1),
    ],
)
