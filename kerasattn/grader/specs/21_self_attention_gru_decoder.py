"""Checks for exercise 21: masked self-attention, cross-attention, then a GRU (step 3).

The grader's weights go into the student's decoder; its GRU states are compared with a
float64 reference composed from ``kerasattn.reference`` (multi-head attention, AddNorm,
the GRU). Properties check causality by perturbation (later target positions changed),
source-padding invariance and that every weight receives a gradient.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

B, T, S, D, H, U = 2, 4, 3, 8, 2, 5
D_H = D // H
PAST = 2  # target positions 0 .. PAST-1 must not see the change in "x_future"
MHA = ("self_attention", "cross_attention")


def _tensor(x, dtype="float32"):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


def build(rng):
    x, memory = rng.normal(size=(B, T, D)), rng.normal(size=(B, S, D))
    enc_mask = np.array([[True, True, True], [True, True, False]])
    x_future = x.copy()
    x_future[:, PAST:] = rng.normal(size=(B, T - PAST, D)) * 3
    padded = memory.copy()
    padded[~enc_mask] = rng.normal(size=(int((~enc_mask).sum()), D)) * 3
    inputs = {"x": x, "x_future": x_future, "memory": memory, "memory_padded": padded,
              "enc_mask": enc_mask, "s0": rng.normal(size=(B, U)) * 0.5,
              "past": np.arange(T)[None, :].repeat(B, 0) < PAST}
    for m in MHA:
        for part in ("query", "key", "value"):
            inputs[f"w/{m}/{part}_kernel"] = rng.normal(size=(D, H, D_H)) / np.sqrt(D)
            inputs[f"w/{m}/{part}_bias"] = rng.normal(size=(H, D_H)) * 0.1
        inputs[f"w/{m}/output_kernel"] = rng.normal(size=(H, D_H, D)) / np.sqrt(D)
        inputs[f"w/{m}/output_bias"] = rng.normal(size=D) * 0.1
    for n in ("norm1", "norm2"):
        inputs[f"w/{n}/gamma"] = 1 + 0.1 * rng.normal(size=D)
        inputs[f"w/{n}/beta"] = 0.1 * rng.normal(size=D)
    inputs["w/gru/kernel"] = rng.normal(size=(D, 3 * U)) * 0.5
    inputs["w/gru/recurrent_kernel"] = rng.normal(size=(U, 3 * U)) * 0.5
    inputs["w/gru/bias"] = rng.normal(size=(2, 3 * U)) * 0.1
    return inputs


def _weights(inputs):
    """The nested weight dict from the flat inputs."""
    out = {}
    for key, value in inputs.items():
        if key.startswith("w/"):
            part, name = key[2:].split("/")
            out.setdefault(part, {})[name] = value
    return out


def _assign(decoder, inputs):
    """Copy the grader's weights into the decoder's sublayers (child side)."""
    w = _weights(inputs)
    for m in MHA:
        mha = getattr(decoder, m)
        for part, sub in (("query", mha.query_dense), ("key", mha.key_dense),
                          ("value", mha.value_dense), ("output", mha.output_dense)):
            sub.kernel.assign(w[m][f"{part}_kernel"])
            sub.bias.assign(w[m][f"{part}_bias"])
    for n, add_norm in (("norm1", decoder.add_norm_1), ("norm2", decoder.add_norm_2)):
        add_norm.layer_norm.gamma.assign(w[n]["gamma"])
        add_norm.layer_norm.beta.assign(w[n]["beta"])
    cell = decoder.gru.cell
    cell.kernel.assign(w["gru"]["kernel"])
    cell.recurrent_kernel.assign(w["gru"]["recurrent_kernel"])
    cell.bias.assign(w["gru"]["bias"])


def run(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import trainable_gradients

    decoder = student.SelfAttentionGRUDecoder(D, H, U)
    s0, enc_mask = _tensor(inputs["s0"]), _tensor(inputs["enc_mask"], "bool")

    def call(x="x", memory="memory"):
        return decoder(_tensor(inputs[x]), _tensor(inputs[memory]), s0,
                       encoder_padding_mask=enc_mask)

    call()  # build
    _assign(decoder, inputs)
    probe = _tensor(np.linspace(-1, 1, B * T * U).reshape(B, T, U))
    grads = trainable_gradients(decoder, lambda: ops.sum(call() * probe))
    return {"states": call(), "states_future": call(x="x_future"),
            "states_src_padded": call(memory="memory_padded"),
            "zero_sublayers": _zero_sublayers(student, inputs, s0, enc_mask),
            **{f"grad/{k}": g for k, g in grads.items()}}


def _zero_sublayers(student, inputs, s0, enc_mask):
    """The decoder with dropout 0.5, in training, with both attentions' output projections
    set to 0: each AddNorm(x, y) then gets y = 0, and only the residual passes. (The grader
    runs each call compiled on JAX: a stateless scope keeps the dropout's seed state in
    it.)"""
    import keras

    decoder = student.SelfAttentionGRUDecoder(D, H, U, dropout=0.5)
    x, memory = _tensor(inputs["x"]), _tensor(inputs["memory"])
    decoder(x, memory, s0, encoder_padding_mask=enc_mask)  # build
    _assign(decoder, inputs)
    for sub in (decoder.self_attention.output_dense, decoder.cross_attention.output_dense):
        sub.kernel.assign(np.zeros(tuple(sub.kernel.shape), "float32"))
        sub.bias.assign(np.zeros(tuple(sub.bias.shape), "float32"))
    with keras.StatelessScope():
        return decoder(x, memory, s0, encoder_padding_mask=enc_mask, training=True)


def _gru_over_layer_norms(inputs):
    """Both attention outputs 0: the GRU reads LayerNorm(LayerNorm(X))."""
    from kerasattn.reference import gru, layer_norm

    w = _weights(inputs)
    z = layer_norm(layer_norm(inputs["x"], **w["norm1"]), **w["norm2"])
    g = w["gru"]
    return np.stack([gru(z[b], g["kernel"], g["recurrent_kernel"], g["bias"], inputs["s0"][b])
                     for b in range(B)])

def _decoder(inputs, causal=True, enc_mask=True, cross_query="y", gru_input="z",
             s0=True):
    """The step-3 decoder in float64, with the typical slips as options."""
    from kerasattn.reference import add_norm, attention_mask, gru, multi_head_attention

    w, x, memory = _weights(inputs), inputs["x"], inputs["memory"]
    a1 = multi_head_attention(x, x, x, w["self_attention"], H,
                              attention_mask(T, T, causal=causal))
    y = add_norm(x, a1, **w["norm1"])  # Y = LN(X + MHA(X, X, X, M_causal))
    query = y if cross_query == "y" else x
    keep = attention_mask(T, S, value_mask=inputs["enc_mask"] if enc_mask else None)
    a2 = multi_head_attention(query, memory, memory, w["cross_attention"], H, keep)
    z = add_norm(y, a2, **w["norm2"])  # Z = LN(Y + MHA(Y, H_enc, H_enc))
    seq = z if gru_input == "z" else y
    start = inputs["s0"] if s0 else np.zeros((B, U))
    g = w["gru"]
    return np.stack([gru(seq[b], g["kernel"], g["recurrent_kernel"], g["bias"], start[b])
                     for b in range(B)])  # (B, T, u)


def expected(inputs):
    return {"states": _decoder(inputs)}


HINTS = [
    "Three lines, in order: the masked self-attention over X with its AddNorm gives Y, the "
    "cross-attention from Y to H_enc with its AddNorm gives Z, and the GRU runs over Z from "
    "s_0. Only the self-attention is causal; only the cross-attention needs a padding mask.",
    "Self-attention: query and value are both X (B, T, d_model), with use_causal_mask=True and no "
    "padding mask (the causal mask already keeps real positions from the padding after them). "
    "Cross-attention: the query is Y (not X), the value is h_enc (B, S, d_model), and the value "
    "mask is encoder_padding_mask; no query mask. The GRU needs s_0 as its initial state; without "
    "it, it starts from zeros.",
    "Step by step, passing training to every sublayer: self.self_attention with x as query and "
    "value and the causal flag; Y is self.add_norm_1 of x and that output. self.cross_attention "
    "with Y as query, h_enc as value and the source padding mask as value_mask; Z is "
    "self.add_norm_2 of Y and that output. Return self.gru run over Z with its initial_state "
    "argument set to the given s_0: the states s_1 .. s_T, (B, T, u).",
]

SPEC = Spec(
    exercise="21_self_attention_gru_decoder",
    title="Step 3: masked self-attention and cross-attention before a GRU",
    forbidden=["kerasattn.models", "kerasattn.steps", "kerasattn.layers.decoder_block",
               "kerasattn.layers.TransformerDecoderBlock", "keras_hub", "keras_nlp"],
    cases=[Case("decoder", build, run, expected)],
    checks=[
        Compare("GRU states s_1 .. s_T match the reference", case="decoder",
                output="states", points=4, variants=[
                    Variant("causal mask missing in the self-attention",
                            lambda i: _decoder(i, causal=False),
                            "Pass use_causal_mask=True to the self-attention: with "
                            "teacher forcing, position i must not read the words after "
                            "it."),
                    Variant("encoder padding mask not applied",
                            lambda i: _decoder(i, enc_mask=False),
                            "Give the cross-attention value_mask=encoder_padding_mask."),
                    Variant("cross-attention queried with X instead of Y",
                            lambda i: _decoder(i, cross_query="x"),
                            "The cross-attention's query is the output of the first "
                            "AddNorm."),
                    Variant("GRU reads Y: the cross-attention output is not used",
                            lambda i: _decoder(i, gru_input="y"),
                            "The GRU runs over Z, the output of the second AddNorm."),
                    Variant("GRU started from zeros instead of s_0",
                            lambda i: _decoder(i, s0=False),
                            "Pass initial_state=initial_state to the GRU.")]),
        Property("causality: changing later target positions leaves earlier states "
                 "unchanged", case="decoder",
                 fn=P.same_where("states", "states_future", keep_input="past", atol=1e-4,
                                 what="causality"), points=2),
        Property("source padding invariance (padded encoder states change nothing)",
                 case="decoder", fn=P.same_where("states", "states_src_padded", atol=1e-4),
                 points=1),
        GradientCheck("every weight (both attentions, both norms, the GRU) receives a "
                      "gradient", case="decoder", points=2),
        Property("each AddNorm takes the residual first (dropout on the sublayer's output)",
                 case="decoder", points=1,
                 fn=P.residual_first("zero_sublayers", _gru_over_layer_norms,
                                      "the GRU over LayerNorm(LayerNorm(X))")),
    ],
)
