"""Checks for exercise 19: a GRU decoder step with multi-head attention (step 1).

The grader's weights go into the student's layer; the weights of every head, the context
and the new state are compared with a float64 reference (multi-head attention of the one
query s_{t-1}, then a GRU step on [y_{t-1}; c_t]); properties check the softmax rows, the
padding and that every weight (but the key bias, which the softmax ignores) receives a
gradient.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

B, E, U, S, D, H, D_MODEL = 2, 3, 5, 4, 6, 2, 4
D_H = D_MODEL // H
MHA = ("query_kernel", "query_bias", "key_kernel", "key_bias", "value_kernel", "value_bias",
       "output_kernel", "output_bias")


def _tensor(x, dtype="float32"):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


def build(rng):
    h_enc = rng.normal(size=(B, S, D))
    mask = np.array([[True, True, True, False], [True, True, False, False]])
    padded = h_enc.copy()
    padded[~mask] = rng.normal(size=(int((~mask).sum()), D)) * 5  # other padding values
    w = {"w/query_kernel": rng.normal(size=(U, H, D_H)) * 0.8,
         "w/query_bias": rng.normal(size=(H, D_H)) * 0.1,
         "w/key_kernel": rng.normal(size=(D, H, D_H)) * 0.6,
         "w/key_bias": rng.normal(size=(H, D_H)) * 0.1,
         "w/value_kernel": rng.normal(size=(D, H, D_H)) / np.sqrt(D),
         "w/value_bias": rng.normal(size=(H, D_H)) * 0.1,
         "w/output_kernel": rng.normal(size=(H, D_H, D_MODEL)) / np.sqrt(D_MODEL),
         "w/output_bias": rng.normal(size=D_MODEL) * 0.1,
         # the GRU cell, Keras's layout: gates z, r, candidate; bias rows input, recurrent
         "w/kernel": rng.normal(size=(E + D_MODEL, 3 * U)) * 0.5,
         "w/recurrent_kernel": rng.normal(size=(U, 3 * U)) * 0.5,
         "w/bias": rng.normal(size=(2, 3 * U)) * 0.1}
    return {"y_prev": rng.normal(size=(B, E)), "s_prev": rng.normal(size=(B, U)),
            "h_enc": h_enc, "h_enc_padded": padded, "mask": mask,
            "mask_heads": mask[:, None, :], **w}  # the mask of every head: (B, 1, S)


def run(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import set_weights_by_name, trainable_gradients

    layer = student.MultiHeadDecoderStep(U, H, D_MODEL)
    y, s = _tensor(inputs["y_prev"]), _tensor(inputs["s_prev"])
    mask = _tensor(inputs["mask"], "bool")

    def step(h_enc):
        return layer(y, s, _tensor(h_enc), source_mask=mask)

    step(inputs["h_enc"])  # builds the weights
    set_weights_by_name(layer, inputs, prefix="w/")
    s_t, c_t, alpha = step(inputs["h_enc"])
    s_t_padded, _, _ = step(inputs["h_enc_padded"])
    probe = _tensor(np.linspace(-1, 1, B * U).reshape(B, U))
    grads = trainable_gradients(layer, lambda: ops.sum(step(inputs["h_enc"])[0] * probe))
    # The key bias's true gradient is zero (the softmax ignores it): GradientCheck exempts it.
    return {"s_t": s_t, "c_t": c_t, "alpha": alpha, "s_t_padded": s_t_padded,
            **{f"grad/{k}": g for k, g in grads.items()}}


# -- float64 reference ------------------------------------------------------------------
def _mha(inputs, query_scale=1.0, mask=True, concat_heads=False):
    """Multi-head attention of the query s_{t-1} over h_enc: `(c_t (B, d_model), alpha
    (B, h, S))`.

    `query_scale` multiplies the query projection, which multiplies every score by it (a
    different score scale); `concat_heads` replaces W_o, b_o by the identity and zero,
    which gives the merged heads themselves.
    """
    from kerasattn.reference import attention_mask, multi_head_attention

    w = {name: inputs[f"w/{name}"] for name in MHA}
    w["query_kernel"] = w["query_kernel"] * query_scale
    w["query_bias"] = w["query_bias"] * query_scale
    if concat_heads:
        w["output_kernel"] = np.eye(H * D_H).reshape(H, D_H, H * D_H)
        w["output_bias"] = np.zeros(H * D_H)
    keep = attention_mask(1, S, value_mask=inputs["mask"] if mask else None)  # (B, 1, S)
    c, alpha = multi_head_attention(inputs["s_prev"][:, None, :], inputs["h_enc"],
                                    inputs["h_enc"], w, H, keep, return_weights=True)
    return c[:, 0], alpha[:, :, 0]  # (B, d_model), (B, h, S)


def _gru(inputs, c_t, order="yc"):
    from kerasattn.reference import gru_cell

    parts = [inputs["y_prev"], c_t] if order == "yc" else [c_t, inputs["y_prev"]]
    return gru_cell(np.concatenate(parts, axis=-1), inputs["s_prev"], inputs["w/kernel"],
                    inputs["w/recurrent_kernel"], inputs["w/bias"])


def expected(inputs):
    c_t, alpha = _mha(inputs)
    return {"s_t": _gru(inputs, c_t), "c_t": c_t, "alpha": alpha}


def _attention_slips(output):
    """The attention mistakes, as variants of `output` ("alpha", "c_t" or "s_t"): a slip in
    the weights shows in the context and in the new state too."""

    def of(**kwargs):
        def fn(i):
            c_t, alpha = _mha(i, **kwargs)
            return {"alpha": alpha, "c_t": c_t, "s_t": _gru(i, c_t)}[output]

        return fn

    return [Variant("scores scaled by 1/sqrt(d_model) instead of 1/sqrt(d_h)",
                    of(query_scale=np.sqrt(D_H) / np.sqrt(D_MODEL)),
                    "Each head multiplies vectors of size d_h: divide by sqrt(d_h)."),
            Variant("missing 1/sqrt(d_k) scaling", of(query_scale=np.sqrt(D_H)),
                    "Divide every head's scores by sqrt(d_h)."),
            Variant("source mask ignored", of(mask=False),
                    "Give the mask a head axis, (B, 1, S), and pass it to the masked "
                    "softmax.")]


def _no_output_projection(i):
    return _mha(i, concat_heads=True)[0]


def _order_cy(i):
    return _gru(i, _mha(i)[0], order="cy")


HINTS = [
    "attend is the first six equations (q_i to c_t): project s_{t-1}, the keys and the values "
    "into every head, score each source position and normalise over the source, sum the "
    "values, merge the heads with W_o. call attends first, then feeds [y_{t-1}; c_t] and "
    "s_{t-1} to the GRU cell.",
    "Project with ops.einsum, one contraction per tensor: s_prev (B, u) with query_kernel (u, h, "
    "d_h) gives q (B, h, d_h), plus query_bias (h, d_h); h_enc (B, S, D) with key_kernel or "
    "value_kernel (D, h, d_h) gives (B, h, S, d_h), and their biases (h, d_h) need a source axis "
    "in the middle, (h, 1, d_h). The scores contract d_h between q and each K_ij, (B, h, S), "
    "divided by sqrt(d_h), the head size (not d_model). The mask (B, S) gets a head axis, (B, 1, "
    "S).",
    "Normalise the scores over the source axis with masked_softmax: alpha (B, h, S). Each head is "
    "the alpha-weighted sum of its values over S, (B, h, d_h) (an ops.einsum). Merge the heads "
    "with one more ops.einsum against output_kernel (h, d_h, d_model) that contracts both h and "
    "d_h, plus output_bias: c_t (B, d_model); attend returns (c_t, alpha). call: attend with "
    "s_prev first; join y_prev and c_t on the last axis, in that order (ops.concatenate, (B, E + "
    "d_model)); the GRU cell on that input and s_prev returns (s_t, s_t); return s_t, c_t and "
    "alpha, in that order.",
]

SPEC = Spec(
    exercise="19_multihead_decoder_step",
    title="Step 1: a GRU decoder step with multi-head attention",
    forbidden=["kerasattn.layers.multi_head", "kerasattn.layers.MultiHeadCross",
               "kerasattn.steps", "kerasattn.recurrence", "kerasattn.models",
               "keras.layers.MultiHeadAttention", "keras_hub", "keras_nlp"],
    cases=[Case("step", build, run, expected)],
    checks=[
        Compare("attention weights of every head (B, h, S)", case="step", output="alpha",
                points=2, variants=_attention_slips("alpha")),
        Property("each head's weights sum to 1 over the source", case="step",
                 fn=P.rows_sum_to_one("alpha", allow_zero_rows=False), points=1),
        Property("padded source positions get weight 0 in every head", case="step",
                 fn=P.zero_where_masked("alpha", "mask_heads"), points=1),
        Compare("context c_t = [head_1; ...; head_h] W_o + b_o", case="step", output="c_t",
                points=2, variants=[
                    Variant("heads concatenated without the output projection W_o",
                            _no_output_projection,
                            "Merge the heads and multiply by W_o (then add b_o)."),
                    *_attention_slips("c_t")]),
        Compare("new state s_t = GRU([y_{t-1}; c_t], s_{t-1})", case="step", output="s_t",
                points=2, variants=[
                    Variant("GRU input ordered [c_t; y_{t-1}]", _order_cy,
                            "Concatenate the embedding first, then the context."),
                    *_attention_slips("s_t")]),
        Property("padding invariance (padded encoder states do not change s_t)",
                 case="step", fn=P.same_where("s_t", "s_t_padded"), points=1),
        GradientCheck("every weight (the four projections and the GRU) receives a "
                      "gradient, except the key bias, which the softmax ignores", case="step",
                      points=1),
    ],
)
