"""Checks for exercise 23: a masked, label-smoothed cross-entropy loss (<pad> gets no
smoothing mass; padded positions count neither in the sum nor in the mean)."""
import numpy as np

from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

V, EPS, PAD = 7, 0.1, 0


def _tensor(x, dtype):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


def _flat(x):
    """A scalar output as shape (1,), the form the grader stores it in."""
    import keras

    return keras.ops.reshape(x, (-1,))


# -- case "loss": B = 2 sentences of 3 and 5 tokens, T = 5, V = 7 -------------------------
def build(rng):
    labels = np.array([[4, 6, 2, 0, 0], [5, 1, 3, 6, 3]])  # 0 = <pad>
    logits = rng.normal(size=(2, 5, V)) * 2
    logits[:, :, PAD] -= 4.0  # as in a trained model: <pad> is unlikely
    changed = logits.copy()
    changed[labels == PAD] = rng.normal(size=(int((labels == PAD).sum()), V)) * 5
    # the same batch with ids 0 and 1 swapped: <pad> = 1, and 0 a real token
    swap = np.array([1, 0, 2, 3, 4, 5, 6])
    return {"labels": labels, "logits": logits, "logits_pads_changed": changed,
            "labels_pad_1": swap[labels], "logits_pad_1": logits[:, :, swap]}


def run(student, inputs):
    labels, logits = _tensor(inputs["labels"], "int32"), _tensor(inputs["logits"], "float32")
    def loss(*args):
        return _flat(student.masked_smoothed_cross_entropy(*args))

    return {"targets": student.smoothed_targets(labels, V, EPS, PAD),
            "loss": loss(labels, logits, EPS, PAD),
            "loss_eps0": loss(labels, logits, 0.0, PAD),
            "loss_pads_changed": loss(labels, _tensor(inputs["logits_pads_changed"],
                                                      "float32"), EPS, PAD),
            "loss_all_pad": loss(_tensor(np.zeros((2, 5)), "int32"), logits, EPS, PAD),
            "loss_pad_1": loss(_tensor(inputs["labels_pad_1"], "int32"),
                               _tensor(inputs["logits_pad_1"], "float32"), EPS, 1)}


def expected(inputs):
    from kerasattn.reference import label_smoothed_targets, masked_label_smoothed_ce

    labels, logits = inputs["labels"], inputs["logits"]
    return {"targets": label_smoothed_targets(labels, V, EPS, PAD),
            "loss": [masked_label_smoothed_ce(labels, logits, EPS, PAD)],
            "loss_eps0": [masked_label_smoothed_ce(labels, logits, 0.0, PAD)],
            "loss_pad_1": [masked_label_smoothed_ce(inputs["labels_pad_1"],
                                                    inputs["logits_pad_1"], EPS, 1)]}


# -- known mistakes (float64) -------------------------------------------------------------
def _targets(labels, pad=PAD, uniform_over_pad=False, zero_pads=True):
    one_hot = np.eye(V)[labels]  # (B, T, V)
    if uniform_over_pad:
        q = (1 - EPS) * one_hot + EPS / V
    else:
        not_pad = np.ones(V)
        not_pad[pad] = 0.0
        q = (1 - EPS) * one_hot + EPS / (V - 1) * not_pad
    if zero_pads:
        q = q * (labels != pad)[:, :, None]
    return q


def _loss(inputs, pad=PAD, divide_by="real", log_p=None, batch="", **target_kw):
    """The loss of ``inputs["labels" + batch]`` with one mistake (``batch``: "" or "_pad_1")."""
    from kerasattn.reference import log_softmax

    labels, logits = inputs["labels" + batch], inputs["logits" + batch]
    if target_kw.pop("one_hot", False):
        q = np.eye(V)[labels] * (labels != pad)[:, :, None]
    else:
        q = _targets(labels, pad, **target_kw)
    log_p = log_softmax(logits) if log_p is None else log_p
    total = -(q * log_p).sum()
    n = {"real": (labels != pad).sum(), "all": labels.size, "none": 1}[divide_by]
    return [total / n]


OVER_PAD = "smoothing mass over the pad token (eps / V on every id)"
TARGET_VARIANTS = [
    Variant(OVER_PAD, lambda i: _targets(i["labels"], uniform_over_pad=True),
            "<pad> is never a right answer: spread eps over the V - 1 other ids, so "
            "q_pad = 0."),
    Variant("padded positions keep a target", lambda i: _targets(i["labels"], zero_pads=False),
            "Multiply q by the mask of real tokens: a padded position has no target."),
]
LOSS_VARIANTS = [
    Variant(OVER_PAD, lambda i: _loss(i, uniform_over_pad=True),
            "<pad> is never a right answer: spread eps over the V - 1 other ids."),
    Variant("padding counted as tokens (mean over every position)",
            lambda i: _loss(i, zero_pads=False, divide_by="all"),
            "Leave the padded positions out of the sum and out of the count."),
    Variant("divided by all B * T positions instead of the real tokens",
            lambda i: _loss(i, divide_by="all"),
            "N counts the real tokens only (labels != pad_id)."),
    Variant("sum over the tokens instead of the mean", lambda i: _loss(i, divide_by="none"),
            "Divide the sum by N, the number of real tokens."),
    Variant("no label smoothing (plain cross-entropy)", lambda i: _loss(i, one_hot=True),
            "Use the smoothed q, not the one-hot label."),
    Variant("logits used as log-probabilities (no log_softmax)",
            lambda i: _loss(i, log_p=i["logits"]),
            "log p = log_softmax(z): normalise the logits over the vocabulary first."),
]
PAD_1_VARIANTS = [
    Variant("pad id fixed at 0 instead of pad_id", lambda i: _loss(i, pad=0, batch="_pad_1"),
            "Compare the labels with the pad_id argument, not with 0."),
    Variant(OVER_PAD, lambda i: _loss(i, pad=1, batch="_pad_1", uniform_over_pad=True),
            "<pad> is never a right answer: spread eps over the V - 1 other ids."),
]


def _targets_are_distributions(outputs, inputs):
    q, labels = outputs["targets"], inputs["labels"]
    if q.shape != labels.shape + (V,):
        return f"targets have shape {q.shape}, expected (B, T, V) = {labels.shape + (V,)}"
    real = labels != PAD
    sums = q.sum(-1)
    if not np.allclose(sums[real], 1.0, atol=1e-5):
        b, t = np.argwhere(~np.isclose(sums, 1.0, atol=1e-5) & real)[0]
        return f"at the real token ({b}, {t}) q sums to {sums[b, t]:.6g}, expected 1"
    if np.abs(q[real][:, PAD]).max() > 1e-7:
        return "q gives <pad> some probability at a real token; <pad> must get 0"
    if np.abs(q[~real]).max() > 1e-7:
        return "a padded position has a non-zero target row; it must be all zeros"
    return None


def _scalar(x):
    if np.size(x) != 1:
        raise ValueError(f"the loss has shape {np.shape(x)}; expected a scalar")
    return float(np.ravel(x)[0])


def _ignores_padding(outputs, inputs):
    a, b = _scalar(outputs["loss"]), _scalar(outputs["loss_pads_changed"])
    if abs(a - b) > 1e-5 * max(1.0, abs(a)):
        return (f"changing only the logits at padded positions changes the loss from "
                f"{a:.6g} to {b:.6g}: padded positions must not count")
    return None


def _all_padding(outputs, inputs):
    value = _scalar(outputs["loss_all_pad"])
    if not np.isfinite(value):
        return f"a batch of padding only gives {value} (0 / 0?); it must give 0"
    if abs(value) > 1e-7:
        return f"a batch of padding only gives {value:.6g}; it must give 0"
    return None


HINTS = [
    "Two pieces broadcast into q: the one-hot of the labels over the V ids (ops.one_hot), (B, T, "
    "V), and a (V,) row that is 1 everywhere except at pad_id (one minus the one-hot of pad_id "
    "over the V ids). Scale the first by (1 - eps), the "
    "second by eps / (V - 1), and add them.",
    "The real tokens are where the labels differ from pad_id (ops.not_equal), a (B, T) boolean. "
    "Cast it to float, give it a last axis of size 1 and multiply q by it: padded rows become "
    "zeros. Its sum is N, the number of real tokens.",
    "masked_smoothed_cross_entropy can reuse smoothed_targets, with V the last dimension of the "
    "logits. l_bt = -sum_v q_v log p_v: log p is ops.log_softmax of the logits over the last "
    "axis, and the sum over v runs over the last axis too, (B, T); it is already 0 at padded "
    "positions because their q rows are zeros. The loss is the sum of all l_bt divided by max(N, "
    "1) (ops.maximum), which is 0, not NaN, when the batch holds padding only.",
]

SPEC = Spec(
    exercise="23_label_smoothed_loss",
    title="Masked, label-smoothed cross-entropy",
    forbidden=["kerasattn.metrics", "kerasattn.training", "keras.losses",
               "keras.ops.categorical_crossentropy",
               "keras.ops.sparse_categorical_crossentropy",
               "keras.ops.nn.categorical_crossentropy",
               "keras.ops.nn.sparse_categorical_crossentropy"],
    cases=[Case("loss", build, run, expected)],
    checks=[
        Compare("smoothed targets: (1 - eps) one-hot + eps / (V - 1) on every id but <pad>",
                case="loss", output="targets", points=2, atol=1e-6,
                variants=TARGET_VARIANTS),
        Property("targets sum to 1 at real tokens, 0 on <pad> and at padded positions",
                 case="loss", fn=_targets_are_distributions, points=1),
        Compare("loss: smoothed cross-entropy averaged over the real tokens", case="loss",
                output="loss", points=3, atol=1e-5, rtol=1e-4, variants=LOSS_VARIANTS),
        Compare("eps = 0 gives the plain masked cross-entropy", case="loss",
                output="loss_eps0", points=1, atol=1e-5, rtol=1e-4),
        Compare("another pad id (pad_id = 1)", case="loss", output="loss_pad_1", points=1,
                atol=1e-5, rtol=1e-4, variants=PAD_1_VARIANTS),
        Property("the logits at padded positions do not change the loss", case="loss",
                 fn=_ignores_padding, points=1),
        Property("a batch of padding only gives 0, not NaN", case="loss", fn=_all_padding,
                 points=1),
    ],
)
