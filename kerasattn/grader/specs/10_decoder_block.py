"""Checks for exercise 10: the forward pass of a post-norm Transformer decoder block."""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

B, T, S, D, H, D_FF = 2, 4, 3, 8, 2, 12
D_H = D // H
MHA = ("self_attention", "cross_attention")
NORMS = ("norm1", "norm2", "norm3")
ATTR = {"norm1": "add_norm_1", "norm2": "add_norm_2", "norm3": "add_norm_3"}


def _tensor(x, dtype="float32"):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


def build(rng):
    inputs = {"x": rng.normal(size=(B, T, D)), "memory": rng.normal(size=(B, S, D)),
              "dec_mask": np.array([[True, True, True, True], [True, True, True, False]]),
              "enc_mask": np.array([[True, True, True], [True, True, False]])}
    x_future = inputs["x"].copy()
    x_future[:, -1] = rng.normal(size=(B, D)) * 3  # change only the last target position
    inputs["x_future"] = x_future
    inputs["past"] = np.arange(T)[None, :].repeat(B, 0) < T - 1  # positions 0..T-2
    for m in MHA:
        for part in ("query", "key", "value"):
            inputs[f"w/{m}/{part}_kernel"] = rng.normal(size=(D, H, D_H)) / np.sqrt(D)
            inputs[f"w/{m}/{part}_bias"] = rng.normal(size=(H, D_H)) * 0.1
        inputs[f"w/{m}/output_kernel"] = rng.normal(size=(H, D_H, D)) / np.sqrt(D)
        inputs[f"w/{m}/output_bias"] = rng.normal(size=D) * 0.1
    for n in NORMS:
        inputs[f"w/{n}/gamma"] = 1 + 0.1 * rng.normal(size=D)
        inputs[f"w/{n}/beta"] = 0.1 * rng.normal(size=D)
    inputs["w/ffn/W1"] = rng.normal(size=(D, D_FF)) / np.sqrt(D)
    inputs["w/ffn/b1"] = rng.normal(size=D_FF) * 0.1
    inputs["w/ffn/W2"] = rng.normal(size=(D_FF, D)) / np.sqrt(D_FF)
    inputs["w/ffn/b2"] = rng.normal(size=D) * 0.1
    return inputs


def _weights(inputs):
    """The reference's nested weight dict from the flat inputs."""
    out = {}
    for key, value in inputs.items():
        if key.startswith("w/"):
            part, name = key[2:].split("/")
            out.setdefault(part, {})[name] = value
    return out


def _assign(block, inputs):
    """Copy the grader's weights into the block's kit sublayers (child side)."""
    w = _weights(inputs)
    for m in MHA:
        mha = getattr(block, m)
        for part, sub in (("query", mha.query_dense), ("key", mha.key_dense),
                          ("value", mha.value_dense), ("output", mha.output_dense)):
            sub.kernel.assign(w[m][f"{part}_kernel"])
            sub.bias.assign(w[m][f"{part}_bias"])
    for n in NORMS:
        norm = getattr(block, ATTR[n]).layer_norm
        norm.gamma.assign(w[n]["gamma"])
        norm.beta.assign(w[n]["beta"])
    block.ffn.dense_1.kernel.assign(w["ffn"]["W1"])
    block.ffn.dense_1.bias.assign(w["ffn"]["b1"])
    block.ffn.dense_2.kernel.assign(w["ffn"]["W2"])
    block.ffn.dense_2.bias.assign(w["ffn"]["b2"])


def run(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import trainable_gradients

    block = student.TransformerDecoderBlock(D, H, D_FF)
    x, mem = _tensor(inputs["x"]), _tensor(inputs["memory"])
    dec_mask, enc_mask = _tensor(inputs["dec_mask"], "bool"), _tensor(inputs["enc_mask"], "bool")

    def call(x_in):
        return block(x_in, mem, decoder_padding_mask=dec_mask, encoder_padding_mask=enc_mask)

    call(x)  # build
    _assign(block, inputs)
    out = call(x)
    out_future = call(_tensor(inputs["x_future"]))
    probe = _tensor(np.linspace(-1, 1, B * T * D).reshape(B, T, D))
    grads = trainable_gradients(block, lambda: ops.sum(call(x) * probe))
    return {"out": out, "out_future": out_future,
            "zero_sublayers": _zero_sublayers(student, inputs, x, mem, dec_mask, enc_mask),
            **{f"grad/{k}": g for k, g in grads.items()}}


def _zero_sublayers(student, inputs, x, mem, dec_mask, enc_mask):
    """The block with dropout 0.5, in training, with every sublayer's output projection set
    to 0: each AddNorm(x, y) then gets y = 0, and only the residual passes. (The grader runs
    each call compiled on JAX: a stateless scope keeps the dropout's seed state in it.)"""
    import keras

    block = student.TransformerDecoderBlock(D, H, D_FF, dropout=0.5)
    kw = dict(decoder_padding_mask=dec_mask, encoder_padding_mask=enc_mask)
    block(x, mem, **kw)  # build
    _assign(block, inputs)
    for sub in (block.self_attention.output_dense, block.cross_attention.output_dense,
                block.ffn.dense_2):
        sub.kernel.assign(np.zeros(tuple(sub.kernel.shape), "float32"))
        sub.bias.assign(np.zeros(tuple(sub.bias.shape), "float32"))
    with keras.StatelessScope():
        return block(x, mem, training=True, **kw)


def _layer_norms_of_x(inputs):
    """The block with every sublayer output 0: three LayerNorms of X."""
    from kerasattn.reference import layer_norm

    w, want = _weights(inputs), inputs["x"]
    for n in NORMS:
        want = layer_norm(want, **w[n])
    return want


def _ref(inputs, **kw):
    from kerasattn.reference import decoder_block

    args = dict(decoder_padding_mask=inputs["dec_mask"], encoder_padding_mask=inputs["enc_mask"])
    args.update(kw)
    return decoder_block(inputs["x"], inputs["memory"], _weights(inputs), H, **args)


def expected(inputs):
    return {"out": _ref(inputs)}


def _no_causal(i):
    return _ref(i, use_causal_mask=False)


def _no_enc_mask(i):
    return _ref(i, encoder_padding_mask=None)


def _cross_from_x(i):
    """Cross-attention queried with X instead of Y1."""
    from kerasattn.reference import add_norm, attention_mask, feed_forward, multi_head_attention

    w, x, mem = _weights(i), i["x"], i["memory"]
    self_mask = attention_mask(T, T, i["dec_mask"], i["dec_mask"], causal=True)
    y1 = add_norm(x, multi_head_attention(x, x, x, w["self_attention"], H, self_mask),
                  **w["norm1"])
    cross_mask = attention_mask(T, S, i["dec_mask"], i["enc_mask"])
    y2 = add_norm(y1, multi_head_attention(x, mem, mem, w["cross_attention"], H, cross_mask),
                  **w["norm2"])
    return add_norm(y2, feed_forward(y2, **w["ffn"]), **w["norm3"])


def _no_query_mask(i):
    """Padded target positions not masked as queries: a padded row gets a context."""
    from kerasattn.reference import add_norm, attention_mask, feed_forward, multi_head_attention

    w, x, mem = _weights(i), i["x"], i["memory"]
    self_mask = attention_mask(T, T, None, i["dec_mask"], causal=True)
    y1 = add_norm(x, multi_head_attention(x, x, x, w["self_attention"], H, self_mask),
                  **w["norm1"])
    cross_mask = attention_mask(T, S, None, i["enc_mask"])
    y2 = add_norm(y1, multi_head_attention(y1, mem, mem, w["cross_attention"], H, cross_mask),
                  **w["norm2"])
    return add_norm(y2, feed_forward(y2, **w["ffn"]), **w["norm3"])


HINTS = [
    "Read the three equations as three lines: each one calls a sublayer on the previous line's "
    "output and wraps it in its own AddNorm. Only the self-attention is causal, and the queries "
    "always come from the target side.",
    "For each attention, name the query, the value and their masks. Self-attention: query and "
    "value are both X (B, T, d_model), so both masks are the target padding mask, and it is the "
    "causal one. Cross-attention: the query is Y1, the first AddNorm's output (not X), and the "
    "value is H_enc (B, S, d_model); its query mask is the target's, its value mask the source's.",
    "Step by step, passing training to every sublayer: self.self_attention with x as query and "
    "value, decoder_padding_mask as both query_mask and value_mask, and use_causal_mask=True; Y1 "
    "is self.add_norm_1 of x and that output. self.cross_attention with Y1 as query and h_enc as "
    "value, the decoder mask as query_mask and the encoder mask as value_mask; Y2 is "
    "self.add_norm_2 of Y1 and that output. Return self.add_norm_3 of Y2 and self.ffn of Y2, (B, "
    "T, d_model).",
]

SPEC = Spec(
    exercise="10_decoder_block",
    title="Transformer decoder block: forward pass",
    forbidden=["kerasattn.layers.decoder_block", "kerasattn.layers.TransformerDecoderBlock",
               "keras_hub", "keras_nlp"],
    cases=[Case("block", build, run, expected)],
    checks=[
        Compare("output matches the reference block", case="block", output="out", points=4,
                variants=[
                    Variant("causal mask missing in the self-attention", _no_causal,
                            "Pass use_causal_mask=True to the self-attention."),
                    Variant("encoder padding mask not applied", _no_enc_mask,
                            "Give the cross-attention value_mask=encoder_padding_mask."),
                    Variant("cross-attention queried with X instead of Y1", _cross_from_x,
                            "The cross-attention's query is the output of the first "
                            "AddNorm."),
                    Variant("target padding not masked as queries", _no_query_mask,
                            "Pass decoder_padding_mask as query_mask to both attentions: "
                            "a padded target position then attends to nothing (its "
                            "attention output is only the output bias), as in the kit's "
                            "block.")]),
        Property("causality: changing the last target position leaves earlier outputs "
                 "unchanged", case="block",
                 fn=P.same_where("out", "out_future", keep_input="past", atol=1e-4,
                                 what="causality"), points=3),
        GradientCheck("every weight of the block receives a gradient", case="block",
                      points=2),
        Property("each AddNorm takes the residual first (dropout on the sublayer's output)",
                 case="block", points=1,
                 fn=P.residual_first("zero_sublayers", _layer_norms_of_x,
                                      "LayerNorm(LayerNorm(LayerNorm(X)))")),
    ],
)
