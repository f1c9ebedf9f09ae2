"""Checks for exercise 16: the attention lab model (Bahdanau et al. 2015 encoder-decoder).

The grader loads its own weights into the layers ``LabModel.__init__`` creates, so the
encoder, one decoder step and the whole teacher-forced forward pass are compared with a
float64 NumPy reference; properties check causality, source-padding invariance and that
every weight receives a gradient. Case "train" is the lab's training in miniature (what
``kerasattn lab`` then does on the corpus): from the grader's weights, a few Adam steps on
the masked cross-entropy of a batch of two sentences must at least halve the loss. On JAX the steps
run as one compiled function, on TensorFlow as one traced graph.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

SRC_V, TGT_V, E, U, A = 11, 13, 6, 5, 4
B, S, T = 2, 5, 4

# grader weight name -> attribute path in LabModel
WEIGHTS = {
    "src_embedding": "src_embedding.embeddings",
    "enc_fwd_kernel": "encoder.forward_layer.cell.kernel",
    "enc_fwd_recurrent": "encoder.forward_layer.cell.recurrent_kernel",
    "enc_fwd_bias": "encoder.forward_layer.cell.bias",
    "enc_bwd_kernel": "encoder.backward_layer.cell.kernel",
    "enc_bwd_recurrent": "encoder.backward_layer.cell.recurrent_kernel",
    "enc_bwd_bias": "encoder.backward_layer.cell.bias",
    "bridge_kernel": "bridge.kernel",
    "bridge_bias": "bridge.bias",
    "tgt_embedding": "tgt_embedding.embeddings",
    "W_q": "attention.W_q",
    "W_k": "attention.W_k",
    "v": "attention.v",
    "cell_kernel": "decoder_cell.kernel",
    "cell_recurrent": "decoder_cell.recurrent_kernel",
    "cell_bias": "decoder_cell.bias",
    "out_kernel": "output_layer.kernel",
    "out_bias": "output_layer.bias",
}
SHAPES = {
    "src_embedding": (SRC_V, E), "enc_fwd_kernel": (E, 3 * U),
    "enc_fwd_recurrent": (U, 3 * U), "enc_fwd_bias": (2, 3 * U),
    "enc_bwd_kernel": (E, 3 * U), "enc_bwd_recurrent": (U, 3 * U),
    "enc_bwd_bias": (2, 3 * U), "bridge_kernel": (U, U), "bridge_bias": (U,),
    "tgt_embedding": (TGT_V, E), "W_q": (U, A), "W_k": (2 * U, A), "v": (A,),
    "cell_kernel": (E + 2 * U, 3 * U), "cell_recurrent": (U, 3 * U), "cell_bias": (2, 3 * U),
    "out_kernel": (3 * U, TGT_V), "out_bias": (TGT_V,),
}


def _weights(rng):
    w = {}
    for name, shape in SHAPES.items():
        scale = 1.0 if "embedding" in name else 0.6
        w[f"w/{name}"] = rng.normal(size=shape) * scale
    return w


def build_model(rng):
    # positions 2 and 3 of the decoder inputs change in dec_future
    return {**P.model_probe_inputs(rng, src=[[4, 5, 6, 7, 0], [8, 9, 10, 0, 0]],
                                   dec=[[2, 4, 5, 6], [2, 7, 8, 9]],
                                   future=[[10, 11], [12, 3]], tgt_vocab=TGT_V),
            **_weights(rng)}


def build_step(rng):
    return {"y_prev": np.array([3, 9]), "s_prev": rng.normal(size=(B, U)) * 0.5,
            "h_enc": rng.normal(size=(B, S, 2 * U)) * 0.5,
            "source_mask": np.array([[True] * 4 + [False], [True] * 2 + [False] * 3]),
            **_weights(rng)}


def _model(student, inputs):
    import keras

    model = student.LabModel(SRC_V, TGT_V, embed_dim=E, units=U, attention_units=A)
    model.build()
    for name, path in WEIGHTS.items():
        variable = model
        for part in path.split("."):
            variable = getattr(variable, part)
        value = inputs[f"w/{name}"]
        if tuple(variable.shape) != value.shape:
            raise ValueError(f"LabModel: weight {path} has shape {tuple(variable.shape)}, "
                             f"expected {value.shape}; keep __init__ as it is")
        variable.assign(np.asarray(value, dtype="float32"))
    return model, keras.ops


def _ids(ops, x):
    return ops.convert_to_tensor(np.asarray(x), dtype="int32")


def run_model(student, inputs):
    import keras

    from kerasattn.grader.childtools import trainable_gradients

    model, ops = _model(student, inputs)

    def logits(src, dec):
        return model({"encoder_inputs": _ids(ops, inputs[src]),
                      "decoder_inputs": _ids(ops, inputs[dec])})

    h_enc, s_0, source_mask = model.encode(_ids(ops, inputs["src"]))
    mask = np.asarray(inputs["src"]) != 0
    h_real = ops.convert_to_numpy(h_enc) * mask[:, :, None]  # padded rows are not graded
    probe = ops.convert_to_tensor(inputs["probe"], dtype="float32")
    grads = trainable_gradients(model, lambda: ops.sum(logits("src", "dec") * probe))
    return {"logits": logits("src", "dec"), "logits_src_padded": logits("src_padded", "dec"),
            "logits_future": logits("src", "dec_future"), "h_enc": h_real, "s_0": s_0,
            "source_mask": ops.cast(source_mask, "int32"),
            "is_model": isinstance(model, keras.Model),
            **{f"grad/{k}": g for k, g in grads.items()}}


def run_step(student, inputs):
    model, ops = _model(student, inputs)

    def f(name):
        return ops.convert_to_tensor(inputs[name], dtype="float32")

    logits_t, s_t, alpha_t = model.decode_step(
        _ids(ops, inputs["y_prev"]), f("s_prev"), f("h_enc"),
        ops.convert_to_tensor(inputs["source_mask"], dtype="bool"))
    return {"logits_t": logits_t, "s_t": s_t, "alpha_t": alpha_t}


# -- float64 reference ------------------------------------------------------------------
def _gru(w, prefix):
    return (w[f"w/{prefix}_kernel"], w[f"w/{prefix}_recurrent"], w[f"w/{prefix}_bias"])


def _encode(w, src, s0_from="backward"):
    from kerasattn.reference import encoder_gru

    mask = np.asarray(src) != 0
    x = w["w/src_embedding"][np.asarray(src)]  # (B, S, E)
    h, s_fwd, s_bwd = encoder_gru(x, {"forward": _gru(w, "enc_fwd"),
                                      "backward": _gru(w, "enc_bwd")}, mask)
    state = {"backward": s_bwd, "forward": s_fwd}[s0_from]
    s_0 = np.tanh(state @ w["w/bridge_kernel"] + w["w/bridge_bias"])
    return h, s_0, mask


def _step(w, y_prev, s_prev, h, mask, order="yc", use_mask=True):
    from kerasattn.reference import bahdanau_attention, gru_cell

    c, alpha = bahdanau_attention(s_prev, h, w["w/W_q"], w["w/W_k"], w["w/v"],
                                  mask=mask if use_mask else None)
    y = w["w/tgt_embedding"][np.asarray(y_prev)]
    x = np.concatenate([y, c] if order == "yc" else [c, y], axis=-1)
    s = gru_cell(x, s_prev, _gru(w, "cell")[0], _gru(w, "cell")[1], _gru(w, "cell")[2])
    logits = np.concatenate([s, c], axis=-1) @ w["w/out_kernel"] + w["w/out_bias"]
    return logits, s, alpha


def _forward(w, src, dec, s0="bridge", order="yc", use_mask=True, query="s_prev"):
    from kerasattn.reference import bahdanau_attention, gru_cell

    h, s, mask = _encode(w, src, "forward" if s0 == "forward" else "backward")
    if s0 == "zeros":
        s = np.zeros_like(s)
    out = []
    c = np.zeros((h.shape[0], h.shape[-1]))
    for t in range(np.asarray(dec).shape[1]):
        if query == "s_t":  # attend after the GRU update, feeding the previous context
            y = w["w/tgt_embedding"][np.asarray(dec)[:, t]]
            s = gru_cell(np.concatenate([y, c], -1), s, *_gru(w, "cell"))
            c, _ = bahdanau_attention(s, h, w["w/W_q"], w["w/W_k"], w["w/v"], mask=mask)
            logits = np.concatenate([s, c], -1) @ w["w/out_kernel"] + w["w/out_bias"]
        else:
            logits, s, _ = _step(w, np.asarray(dec)[:, t], s, h, mask, order, use_mask)
        out.append(logits)
    return np.stack(out, axis=1)  # (B, T, V)


def expected_model(inputs):
    h, s_0, mask = _encode(inputs, inputs["src"])
    return {"logits": _forward(inputs, inputs["src"], inputs["dec"]),
            "h_enc": h * mask[:, :, None], "s_0": s_0, "source_mask": mask.astype(float)}


def expected_step(inputs):
    logits, s, alpha = _step(inputs, inputs["y_prev"], inputs["s_prev"], inputs["h_enc"],
                             inputs["source_mask"])
    return {"logits_t": logits, "s_t": s, "alpha_t": alpha}


def _variant(**kwargs):
    return lambda inputs: _forward(inputs, inputs["src"], inputs["dec"], **kwargs)


def _s0_forward(inputs):
    return _encode(inputs, inputs["src"], "forward")[1]


def _h_unmasked(inputs):
    from kerasattn.reference import encoder_gru

    x = inputs["w/src_embedding"][inputs["src"]]
    h = encoder_gru(x, {"forward": _gru(inputs, "enc_fwd"),
                        "backward": _gru(inputs, "enc_bwd")}, None)[0]
    return h * (inputs["src"] != 0)[:, :, None]


def _step_order_cy(inputs):
    return _step(inputs, inputs["y_prev"], inputs["s_prev"], inputs["h_enc"],
                 inputs["source_mask"], order="cy")[1]


def _alpha_unmasked(inputs):
    return _step(inputs, inputs["y_prev"], inputs["s_prev"], inputs["h_enc"],
                 inputs["source_mask"], use_mask=False)[2]


# -- case "train": a few Adam steps on a tiny batch -----------------------------------------
TRAIN_STEPS, TRAIN_LR, TRAIN_FALL, EOS = 6, 0.05, 0.5, 3


def build_train(rng):
    inputs = build_model(rng)  # the model case's two sentences and fresh grader weights
    dec = np.asarray(inputs["dec"])
    labels = np.concatenate([dec[:, 1:], np.full((len(dec), 1), EOS)], axis=1)  # y <eos>
    return {"src": inputs["src"], "dec": dec, "labels": labels,
            **{k: v for k, v in inputs.items() if k.startswith("w/")}}


def run_train(student, inputs):
    """Adam (beta = 0.9, 0.999) on the masked cross-entropy of the teacher-forced logits;
    the losses before each step and after the last."""
    import keras

    model, ops = _model(student, inputs)
    # the batch is passed as arguments, not captured: TensorFlow would read small captured
    # tensors with .numpy() while tracing, which the guard takes for the submission's
    batch = (_ids(ops, inputs["src"]), _ids(ops, inputs["dec"]),
             ops.one_hot(_ids(ops, inputs["labels"]), TGT_V),  # (B, T, V)
             ops.convert_to_tensor((np.asarray(inputs["labels"]) != 0).astype("float32")))
    fixed = [v.value for v in model.non_trainable_variables]

    def loss(params, src, dec, labels, mask):
        x = {"encoder_inputs": src, "decoder_inputs": dec}
        logp = ops.log_softmax(model.stateless_call(params, fixed, x)[0], axis=-1)
        return -ops.sum(ops.sum(logp * labels, axis=-1) * mask) / ops.sum(mask)

    def adam(params, m, v, grads, lr_t):  # lr_t bias-corrected
        m = [0.9 * a + 0.1 * g for a, g in zip(m, grads)]
        v = [0.999 * a + 0.001 * g * g for a, g in zip(v, grads)]
        return [p - lr_t * a / (ops.sqrt(b) + 1e-7) for p, a, b in zip(params, m, v)], m, v

    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        def step(params, m, v, lr_t, *batch):
            value, grads = jax.value_and_grad(loss)(params, *batch)
            return (value, *adam(params, m, v, grads, lr_t))

        step, final = jax.jit(step), jax.jit(loss)
    else:
        from kerasattn.grader.childtools import value_and_grad

        vg = value_and_grad(loss, torch_threads=1)  # tiny tensors: threads add contention

        def step(params, m, v, lr_t, *batch):
            value, grads = vg(params, *batch)
            # dense gradients: TensorFlow gives an embedding's as IndexedSlices, torch
            # gives None for a weight the loss does not use
            grads = [ops.zeros_like(p) if g is None else ops.add(g, 0.0)
                     for p, g in zip(params, grads)]
            return (value, *adam(params, m, v, grads, lr_t))

        final = loss
        if backend == "tensorflow":
            import tensorflow as tf

            # once eagerly first: an error raised while tracing comes back as TensorFlow's
            # StagingError, the submission's own message buried in a traceback
            model({"encoder_inputs": batch[0], "decoder_inputs": batch[1]})
            step, final = tf.function(step), tf.function(loss)
    params = [v.value for v in model.trainable_variables]
    m = [ops.zeros_like(p) for p in params]
    v = [ops.zeros_like(p) for p in params]
    losses = []
    for t in range(1, TRAIN_STEPS + 1):
        lr_t = TRAIN_LR * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        value, params, m, v = step(params, m, v, ops.convert_to_tensor(lr_t, "float32"),
                                   *batch)
        losses.append(float(ops.convert_to_numpy(value)))
    losses.append(float(ops.convert_to_numpy(final(params, *batch))))
    return {"train_losses": np.array(losses)}


def _training_lowers_the_loss(outputs, inputs):
    losses = outputs["train_losses"]
    if not np.isfinite(losses).all():
        return "the training loss became NaN or infinite"
    if losses[-1] > TRAIN_FALL * losses[0]:
        return (f"after {TRAIN_STEPS} Adam steps (learning rate {TRAIN_LR}) on a batch of 2 "
                f"sentences the loss went from {losses[0]:.4g} to {losses[-1]:.4g}; a model "
                f"that computes the forward pass and passes every gradient on at least "
                f"halves it (losses: {', '.join(f'{x:.3g}' for x in losses)})")
    return None


def _shape(outputs, inputs):
    if outputs["is_model"] != 1:
        return "LabModel must stay a keras.Model"
    got = outputs["logits"].shape
    if got != (B, T, TGT_V):
        return f"logits have shape {got}, expected (B, T, V_tgt) = {(B, T, TGT_V)}"
    return None


HINTS = [
    "Follow the equations in order. encode: the mask from the ids, the embedding, the "
    "bidirectional GRU with the mask, and s_0 from the backward GRU's final state. decode_step: "
    "attention with s_{t-1}, the GRU cell on [embedding; context], the output layer on [s_t; "
    "c_t]. call: a Python loop over the target positions.",
    "encode: the mask is ops.not_equal of the ids and 0, (B, S); the bidirectional encoder, "
    "called on the embedded source with the mask as its mask argument, returns three tensors, the "
    "annotations h (B, S, 2u), s_fwd and s_bwd; s_0 is the bridge of s_bwd, (B, u). Return the "
    "annotations, s_0 and the mask. decode_step: the attention takes s_{t-1} (a 2-D query), the "
    "annotations and the source mask as memory_mask, and returns c_t (B, 2u) and alpha_t (B, S).",
    "decode_step, continued: the GRU cell's input is the target embedding of y_{t-1} and c_t "
    "joined on the last axis (ops.concatenate), (B, E + 2u); the cell, called on it and s_{t-1}, "
    "returns (s_t, s_t). The output layer reads s_t and c_t joined the same way, (B, V_tgt). "
    "Return the logits, s_t and alpha_t, in that order. call: encode the encoder inputs once and "
    "start from s_0; loop in Python over the T target positions; at step t = 1 .. T give "
    "decode_step column t-1 of the decoder inputs (y_{t-1}, <bos> at t = 1) and the current state, "
    "carry the new state and collect the logits in a list; ops.stack the list on axis 1, "
    "(B, T, V_tgt).",
]

SPEC = Spec(
    exercise="16_lab_bahdanau_model",
    title="The lab model: BiGRU encoder and Bahdanau attention decoder",
    forbidden=["kerasattn.models", "kerasattn.layers.encoder_gru",
               "kerasattn.layers.EncoderGRU", "kerasattn.recurrence", "kerasattn.steps",
               "kerasattn.training", "kerasattn.decoding", "keras_hub", "keras_nlp"],
    cases=[Case("model", build_model, run_model, expected_model, timeout=120),
           Case("step", build_step, run_step, expected_step, seed=1, timeout=120),
           Case("train", build_train, run_train, seed=2, timeout=120)],
    checks=[
        Compare("encode: source mask = encoder_inputs != 0", case="model",
                output="source_mask", points=1, atol=0, rtol=0),
        Compare("encode: annotations h_j = [h_fwd; h_bwd] match the reference",
                case="model", output="h_enc", points=2, variants=[
                    Variant("the GRU read the padding (no mask)", _h_unmasked,
                            "Pass mask=source_mask to the bidirectional GRU: the "
                            "backward direction must start at the last real word.")]),
        Compare("encode: s_0 = tanh(W_s h_1(bwd) + b_s)", case="model", output="s_0",
                points=1, variants=[
                    Variant("s_0 from the forward GRU's final state", _s0_forward,
                            "Bahdanau et al. start the decoder from the backward "
                            "state (the third value the Bidirectional GRU returns).")]),
        Compare("decode_step: attention weights over the source", case="step",
                output="alpha_t", points=1, variants=[
                    Variant("source mask ignored", _alpha_unmasked,
                            "Pass memory_mask=source_mask to the attention.")]),
        Compare("decode_step: s_t = GRU([y_{t-1}; c_t], s_{t-1})", case="step",
                output="s_t", points=2, variants=[
                    Variant("GRU input ordered [c_t; y_{t-1}]", _step_order_cy,
                            "Concatenate the embedding first, then the context.")]),
        Compare("decode_step: logits_t = W_o [s_t; c_t] + b_o", case="step",
                output="logits_t", points=1),
        Property("returns logits (B, T, V_tgt)", case="model", fn=_shape, points=1),
        Compare("forward pass (teacher forcing) matches the reference", case="model",
                output="logits", points=3, variants=[
                    Variant("attention queried with s_t after the GRU update (Luong "
                            "order)", _variant(query="s_t"),
                            "Bahdanau attention uses the previous state s_{t-1} and "
                            "feeds c_t into the GRU at the same step."),
                    Variant("decoder started from s_0 = 0", _variant(s0="zeros"),
                            "Start the loop from the s_0 that encode returns."),
                    Variant("decoder started from the forward final state",
                            _variant(s0="forward"), "s_0 comes from h_1(bwd)."),
                    Variant("source mask ignored by the attention",
                            _variant(use_mask=False), "Pass the source mask on."),
                    Variant("GRU input ordered [c_t; y_{t-1}]", _variant(order="cy"),
                            "Concatenate the embedding first, then the context."),
                ]),
        Property("causal: decoder inputs after step t do not change the logits at t",
                 case="model", fn=P.same_where("logits", "logits_future", keep_input="past",
                                               atol=1e-4, what="causality"), points=2),
        Property("source padding invariance: extra <pad> tokens change nothing",
                 case="model", fn=P.same_where("logits", "logits_src_padded", atol=1e-4),
                 points=2),
        GradientCheck("every trainable weight receives a gradient", case="model", points=2),
        Property(f"training: {TRAIN_STEPS} Adam steps on a batch of 2 sentences at least "
                 f"halve the loss", case="train", fn=_training_lowers_the_loss, points=1),
    ],
)
