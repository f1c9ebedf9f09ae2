"""Checks for exercise 20: the position-wise FFN and the post-norm encoder block (step 2).

The grader's weights go into the student's FFN and block, which are compared with the
float64 reference (``reference.feed_forward``, ``reference.encoder_block``). The block is
graded at the real positions only: what a padded position holds is never read. Properties
check that the FFN treats each position on its own, that padded positions change nothing
at the real ones, and that every weight receives a gradient.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

B, T, D, H, D_FF = 2, 4, 8, 2, 12
D_H = D // H
CHANGED = (0, 1)  # the position changed in the FFN's "x_other"


def _tensor(x, dtype="float32"):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


def _ffn_weights(rng):
    return {"w/ffn/W1": rng.normal(size=(D, D_FF)) / np.sqrt(D),
            "w/ffn/b1": rng.normal(size=D_FF) * 0.3,
            "w/ffn/W2": rng.normal(size=(D_FF, D)) / np.sqrt(D_FF),
            "w/ffn/b2": rng.normal(size=D) * 0.1}


def _weights(inputs):
    """The reference's nested weight dict from the flat inputs."""
    out = {}
    for key, value in inputs.items():
        if key.startswith("w/"):
            part, name = key[2:].split("/")
            out.setdefault(part, {})[name] = value
    return out


# -- case "ffn": FeedForward alone --------------------------------------------------------
def build_ffn(rng):
    x = rng.normal(size=(B, T, D))
    other = x.copy()
    other[CHANGED] = rng.normal(size=D) * 3
    untouched = np.ones((B, T), bool)
    untouched[CHANGED] = False
    return {"x": x, "x_other": other, "untouched": untouched, **_ffn_weights(rng)}


def run_ffn(student, inputs):
    from kerasattn.grader.childtools import set_weights_by_name

    ffn = student.FeedForward(D_FF)
    x = _tensor(inputs["x"])
    ffn(x)  # builds W1, b1, W2, b2
    set_weights_by_name(ffn, inputs, prefix="w/ffn/")
    return {"out": ffn(x), "out_other": ffn(_tensor(inputs["x_other"]))}


def _ffn(inputs, activation="relu", x=None):
    from kerasattn.reference import feed_forward

    w = _weights(inputs)["ffn"]
    return feed_forward(inputs["x"] if x is None else x, **w, activation=activation)


def expected_ffn(inputs):
    return {"out": _ffn(inputs)}


def _ffn_linear(i):
    return _ffn(i, activation="linear")


def _ffn_relu_on_output(i):
    return np.maximum(_ffn(i), 0.0)


# -- case "block": the encoder block --------------------------------------------------------
def build_block(rng):
    x = rng.normal(size=(B, T, D))
    mask = np.array([[True, True, True, False], [True, True, False, False]])
    padded = x.copy()
    padded[~mask] = rng.normal(size=(int((~mask).sum()), D)) * 3  # other padding values
    inputs = {"x": x, "x_padded": padded, "mask": mask}
    for part in ("query", "key", "value"):
        inputs[f"w/attention/{part}_kernel"] = rng.normal(size=(D, H, D_H)) / np.sqrt(D)
        inputs[f"w/attention/{part}_bias"] = rng.normal(size=(H, D_H)) * 0.1
    inputs["w/attention/output_kernel"] = rng.normal(size=(H, D_H, D)) / np.sqrt(D)
    inputs["w/attention/output_bias"] = rng.normal(size=D) * 0.1
    for n in ("norm1", "norm2"):
        inputs[f"w/{n}/gamma"] = 1 + 0.1 * rng.normal(size=D)
        inputs[f"w/{n}/beta"] = 0.1 * rng.normal(size=D)
    inputs.update(_ffn_weights(rng))
    return inputs


def _assign(block, inputs):
    """Copy the grader's weights into the block's sublayers (child side)."""
    from kerasattn.grader.childtools import set_weights_by_name

    w = _weights(inputs)
    mha = block.attention
    for part, sub in (("query", mha.query_dense), ("key", mha.key_dense),
                      ("value", mha.value_dense), ("output", mha.output_dense)):
        sub.kernel.assign(w["attention"][f"{part}_kernel"])
        sub.bias.assign(w["attention"][f"{part}_bias"])
    for n, add_norm in (("norm1", block.add_norm_1), ("norm2", block.add_norm_2)):
        add_norm.layer_norm.gamma.assign(w[n]["gamma"])
        add_norm.layer_norm.beta.assign(w[n]["beta"])
    set_weights_by_name(block.ffn, inputs, prefix="w/ffn/")


def run_block(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import trainable_gradients

    block = student.TransformerEncoderBlock(D, H, D_FF)
    mask = _tensor(inputs["mask"], "bool")

    def call(name):
        return block(_tensor(inputs[name]), padding_mask=mask)

    call("x")  # build
    _assign(block, inputs)
    real = np.asarray(inputs["mask"], bool)[:, :, None]  # padded rows are not graded
    probe = _tensor(np.linspace(-1, 1, B * T * D).reshape(B, T, D) * real)
    grads = trainable_gradients(block, lambda: ops.sum(call("x") * probe))
    # The key bias's true gradient is zero (the softmax ignores it): GradientCheck exempts it.
    return {"out": ops.convert_to_numpy(call("x")) * real,
            "out_padded": ops.convert_to_numpy(call("x_padded")) * real,
            "zero_sublayers": ops.convert_to_numpy(_zero_sublayers(student, inputs, mask)) * real,
            **{f"grad/{k}": g for k, g in grads.items()}}


def _zero_sublayers(student, inputs, mask):
    """The block with dropout 0.5, in training, with both sublayers' output projections set
    to 0: each AddNorm(x, y) then gets y = 0, and only the residual passes. (The grader runs
    each call compiled on JAX: a stateless scope keeps the dropout's seed state in it.)"""
    import keras

    block = student.TransformerEncoderBlock(D, H, D_FF, dropout=0.5)
    x = _tensor(inputs["x"])
    block(x, padding_mask=mask)  # build
    _assign(block, inputs)
    out = block.attention.output_dense
    for weight in (out.kernel, out.bias, block.ffn.W2, block.ffn.b2):
        weight.assign(np.zeros(tuple(weight.shape), "float32"))
    with keras.StatelessScope():
        return block(x, padding_mask=mask, training=True)


def _layer_norms_of_h(inputs):
    """The block with both sublayer outputs 0: two LayerNorms of H, at the graded rows."""
    from kerasattn.reference import layer_norm

    w = _weights(inputs)
    want = layer_norm(layer_norm(inputs["x"], **w["norm1"]), **w["norm2"])
    return want * np.asarray(inputs["mask"], bool)[:, :, None]  # padded rows are not graded

def _block(inputs, ffn_input="z", residual="z", mask=True):
    """The post-norm block, with the two typical slips as options."""
    from kerasattn.reference import add_norm, attention_mask, feed_forward, multi_head_attention

    w, x = _weights(inputs), inputs["x"]
    pad = inputs["mask"] if mask else None
    a = multi_head_attention(x, x, x, w["attention"], H, attention_mask(T, T, pad, pad))
    z = add_norm(x, a, **w["norm1"])
    f = feed_forward(z if ffn_input == "z" else x, **w["ffn"])
    out = add_norm(z if residual == "z" else x, f, **w["norm2"])
    return out * inputs["mask"][:, :, None]


def expected_block(inputs):
    from kerasattn.reference import encoder_block

    out = encoder_block(inputs["x"], _weights(inputs), H, padding_mask=inputs["mask"])
    return {"out": out * inputs["mask"][:, :, None]}


HINTS = [
    "FeedForward widens each position with W1 and b1, applies the ReLU, and projects back "
    "with W2 and b2. The block has two sublayers, each followed by its AddNorm, and the "
    "second sublayer reads the first AddNorm's output Z.",
    "FeedForward: x (B, T, d_model) @ W1 (d_model, d_ff) + b1 is (B, T, d_ff) and the ReLU acts "
    "there, on the hidden layer only; @ W2 (d_ff, d_model) + b2 brings it back to (B, T, "
    "d_model), with no ReLU on the output (it goes into a residual sum). Self-attention: query "
    "and value are both H, and padding_mask is both the query_mask and the value_mask. AddNorm "
    "adds its first argument to its second: H and the attention output first, then Z and the FFN "
    "output.",
    "FeedForward.call: ops.relu of (ops.matmul of x and W1, plus b1), then ops.matmul of that "
    "with W2, plus b2: ReLU(x W1 + b1) W2 + b2. Block: self.attention with h as query and value, "
    "padding_mask as both masks and training passed on; Z is self.add_norm_1 of h and that "
    "output; then self.ffn of Z; return self.add_norm_2 of Z and the FFN output. Pass training to "
    "both AddNorms.",
]

SPEC = Spec(
    exercise="20_encoder_block",
    title="Step 2: the Transformer encoder block and its feed-forward network",
    forbidden=["kerasattn.layers.encoder_block", "kerasattn.layers.TransformerEncoderBlock",
               "kerasattn.layers.feed_forward", "kerasattn.layers.PositionwiseFeedForward",
               "kerasattn.models", "keras_hub", "keras_nlp"],
    cases=[Case("ffn", build_ffn, run_ffn, expected_ffn),
           Case("block", build_block, run_block, expected_block, seed=1)],
    checks=[
        Compare("FFN(x) = ReLU(x W1 + b1) W2 + b2", case="ffn", output="out", points=3,
                variants=[
                    Variant("ReLU missing (the two layers collapse into one linear map)",
                            _ffn_linear, "Apply ops.relu to x W1 + b1."),
                    Variant("ReLU also applied to the output", _ffn_relu_on_output,
                            "The output goes into a residual sum: no ReLU after W2.")]),
        Property("the FFN is position-wise: changing one position changes only that "
                 "position", case="ffn",
                 fn=P.same_where("out", "out_other", keep_input="untouched",
                                 what="position-wise"), points=1),
        Compare("block output H' = AddNorm(Z, FFN(Z)) at the real positions", case="block",
                output="out", points=3, variants=[
                    Variant("FFN applied to H instead of Z", lambda i: _block(i, ffn_input="x"),
                            "The FFN reads Z, the output of the first AddNorm."),
                    Variant("second residual adds H instead of Z",
                            lambda i: _block(i, residual="x"),
                            "The second AddNorm adds Z: add_norm_2(z, ffn(z))."),
                    Variant("padding mask not applied", lambda i: _block(i, mask=False),
                            "Pass padding_mask to the self-attention as query_mask and "
                            "value_mask.")]),
        Property("padding invariance (padded positions change nothing at the real ones)",
                 case="block", fn=P.same_where("out", "out_padded", atol=1e-4), points=1),
        GradientCheck("every weight of the block receives a gradient, except the key bias, "
                      "which the softmax ignores", case="block", points=1),
        Property("each AddNorm takes the residual first (dropout on the sublayer's output)",
                 case="block", points=1,
                 fn=P.residual_first("zero_sublayers", _layer_norms_of_h,
                                      "LayerNorm(LayerNorm(H))")),
    ],
)
