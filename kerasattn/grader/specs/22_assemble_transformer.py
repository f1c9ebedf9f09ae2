"""Checks for exercise 22: the step-5 Transformer assembled from kit layers.

Case "model" (N = 2 blocks per side): with the student's own initialisation, the output
shape, causality and source-padding invariance; then the grader loads its own weights by
layer name and compares the logits with a float64 reference composed from
``kerasattn.reference`` (embeddings, positional encoding, encoder and decoder blocks,
output layer). On JAX the model runs as one compiled function per input shape: an eager
call would compile each of its operations separately.

Case "copy" (N = 1): a sanity check that the model learns. The student's model, from its
own initialisation, is trained with Adam on a copy task (256 random sentences of 4 tokens
whose translation is the sentence itself, teacher forcing, the whole set in every step);
the loss must fall and the trained model must copy 64 sentences it has not seen. Decoder
position i must find source position i, which only the positional encodings make
possible: a model without them on the source side learns much of its training sentences
by heart (its training loss falls too) but copies about 60% of the words of a new one.
The first step's gradients give the gradient check. The training loop is compiled on JAX
(``jax.jit``) and TensorFlow (``tf.function``) and eager on torch, so it takes a few
seconds on each backend.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

SRC_V, TGT_V, D, H, D_FF, N = 11, 13, 8, 2, 16, 2
B, S, T = 2, 5, 4
D_H = D // H
ENC_PARTS = {"attention": "mha", "norm1": "norm", "ffn": "ffn", "norm2": "norm"}
DEC_PARTS = {"self_attention": "mha", "norm1": "norm", "cross_attention": "mha",
             "norm2": "norm", "ffn": "ffn", "norm3": "norm"}
# The layers the grader loads its weights into, by name (the exercise's docstring).
LAYERS = (("src_embedding", "Embedding"), ("tgt_embedding", "Embedding"),
          *((f"encoder_block_{i}", "TransformerEncoderBlock") for i in range(N)),
          *((f"decoder_block_{i}", "TransformerDecoderBlock") for i in range(N)),
          ("output_projection", "Dense"))


def _ids(x):
    from keras import ops

    return ops.convert_to_tensor(np.asarray(x), dtype="int32")


# -- case "model" ---------------------------------------------------------------------------
def _part_weights(rng, kind):
    if kind == "mha":
        w = {}
        for part in ("query", "key", "value"):
            w[f"{part}_kernel"] = rng.normal(size=(D, H, D_H)) / np.sqrt(D)
            w[f"{part}_bias"] = rng.normal(size=(H, D_H)) * 0.1
        w["output_kernel"] = rng.normal(size=(H, D_H, D)) / np.sqrt(D)
        w["output_bias"] = rng.normal(size=D) * 0.1
        return w
    if kind == "norm":
        return {"gamma": 1 + 0.1 * rng.normal(size=D), "beta": 0.1 * rng.normal(size=D)}
    return {"W1": rng.normal(size=(D, D_FF)) / np.sqrt(D), "b1": rng.normal(size=D_FF) * 0.1,
            "W2": rng.normal(size=(D_FF, D)) / np.sqrt(D_FF), "b2": rng.normal(size=D) * 0.1}


def build_model(rng):
    # positions 2 and 3 of the decoder inputs change in dec_future
    inputs = P.model_probe_inputs(rng, src=[[4, 5, 6, 7, 0], [8, 9, 10, 0, 0]],
                                  dec=[[2, 4, 5, 6], [2, 7, 8, 9]],
                                  future=[[10, 11], [12, 3]], tgt_vocab=TGT_V)
    inputs["w/src_embedding/embeddings"] = rng.normal(size=(SRC_V, D)) * 0.3
    inputs["w/tgt_embedding/embeddings"] = rng.normal(size=(TGT_V, D)) * 0.3
    for prefix, parts in (("encoder_block", ENC_PARTS), ("decoder_block", DEC_PARTS)):
        for i in range(N):
            for part, kind in parts.items():
                for name, value in _part_weights(rng, kind).items():
                    inputs[f"w/{prefix}_{i}/{part}/{name}"] = value
    inputs["w/output_projection/kernel"] = rng.normal(size=(D, TGT_V)) / np.sqrt(D)
    inputs["w/output_projection/bias"] = rng.normal(size=TGT_V) * 0.1
    return inputs


def _weights(inputs):
    """`{layer name: its weights}` from the flat inputs; a block's weights are nested in
    the layout of ``reference.encoder_block`` / ``reference.decoder_block``."""
    out = {}
    for key, value in inputs.items():
        if key.startswith("w/"):
            layer, *rest = key[2:].split("/")
            node = out.setdefault(layer, {})
            for part in rest[:-1]:
                node = node.setdefault(part, {})
            node[rest[-1]] = value
    return out


def _assign_mha(mha, w):
    for part, sub in (("query", mha.query_dense), ("key", mha.key_dense),
                      ("value", mha.value_dense), ("output", mha.output_dense)):
        sub.kernel.assign(w[f"{part}_kernel"])
        sub.bias.assign(w[f"{part}_bias"])


def _assign_norm(add_norm, w):
    add_norm.layer_norm.gamma.assign(w["gamma"])
    add_norm.layer_norm.beta.assign(w["beta"])


def _assign_ffn(ffn, w):
    ffn.dense_1.kernel.assign(w["W1"])
    ffn.dense_1.bias.assign(w["b1"])
    ffn.dense_2.kernel.assign(w["W2"])
    ffn.dense_2.bias.assign(w["b2"])


def _assign(layer, kind, w):
    """Copy the grader's weights `w` into one layer of the student's model (child side)."""
    if kind == "Embedding":
        layer.embeddings.assign(w["embeddings"])
    elif kind == "Dense":
        layer.kernel.assign(w["kernel"])
        layer.bias.assign(w["bias"])
    elif kind == "TransformerEncoderBlock":
        _assign_mha(layer.attention, w["attention"])
        _assign_norm(layer.add_norm_1, w["norm1"])
        _assign_ffn(layer.ffn, w["ffn"])
        _assign_norm(layer.add_norm_2, w["norm2"])
    else:
        _assign_mha(layer.self_attention, w["self_attention"])
        _assign_norm(layer.add_norm_1, w["norm1"])
        _assign_mha(layer.cross_attention, w["cross_attention"])
        _assign_norm(layer.add_norm_2, w["norm2"])
        _assign_ffn(layer.ffn, w["ffn"])
        _assign_norm(layer.add_norm_3, w["norm3"])


def _load(model, inputs):
    """Load the grader's weights by layer name: `(k, 0)` when layer `LAYERS[k]` is missing,
    `(k, 1)` when it is not the expected layer (kind or shapes), `(-1, -1)` when all load."""
    w = _weights(inputs)
    for k, (name, kind) in enumerate(LAYERS):
        try:
            layer = model.get_layer(name)
        except ValueError:
            return k, 0
        if type(layer).__name__ != kind:
            return k, 1
        try:
            _assign(layer, kind, w[name])
        except (ValueError, AttributeError, TypeError):
            return k, 1
    return -1, -1


def _calls(model):
    """`model(...)` as a function of the two id arrays, with the model's current weights.

    On JAX an eager call compiles every operation of the model on its own, once per input
    shape; one compiled function per shape (``jax.jit`` of ``stateless_call``) is faster.
    """
    import keras

    if keras.backend.backend() != "jax":
        return lambda src, dec: model({"encoder_inputs": src, "decoder_inputs": dec})
    import jax

    def call(trainable, fixed, src, dec):
        return model.stateless_call(trainable, fixed,
                                    {"encoder_inputs": src, "decoder_inputs": dec})[0]

    call = jax.jit(call)
    return lambda src, dec: call([v.value for v in model.trainable_variables],
                                 [v.value for v in model.non_trainable_variables], src, dec)


def run_model(student, inputs):
    import keras

    model = student.build_transformer(SRC_V, TGT_V, d_model=D, num_heads=H, d_ff=D_FF,
                                      num_layers=N)
    call = _calls(model)

    def logits(src, dec):
        return call(_ids(inputs[src]), _ids(inputs[dec]))

    out = {"logits": logits("src", "dec"), "logits_src_padded": logits("src_padded", "dec"),
           "logits_future": logits("src", "dec_future"),
           "is_model": isinstance(model, keras.Model)}
    layer, problem = _load(model, inputs)
    out["load_layer"], out["load_problem"] = layer, problem
    if layer < 0:
        out["logits_w"] = logits("src", "dec")  # on the grader's weights
    return out


def _transformer(inputs, enc_positions=True, scale=True, cross_mask=True,
                 chain_encoder=True, chain_decoder=True):
    """The step-5 Transformer in float64, with the typical slips as options."""
    from kerasattn.reference import decoder_block, encoder_block, positional_encoding

    w, src, dec = _weights(inputs), np.asarray(inputs["src"]), np.asarray(inputs["dec"])
    c = np.sqrt(D) if scale else 1.0
    h0 = w["src_embedding"]["embeddings"][src]  # Embed_src(x): (B, S, d)
    if enc_positions:
        h0 = c * h0 + positional_encoding(src.shape[1], D)  # H_0
    h = h0
    for i in range(N):
        h = encoder_block(h if chain_encoder else h0, w[f"encoder_block_{i}"], H,
                          padding_mask=src != 0)
    x0 = c * w["tgt_embedding"]["embeddings"][dec] + positional_encoding(dec.shape[1], D)
    z = x0
    for i in range(N):
        z = decoder_block(z if chain_decoder else x0, h, w[f"decoder_block_{i}"], H,
                          decoder_padding_mask=dec != 0,
                          encoder_padding_mask=(src != 0) if cross_mask else None)
    return z @ w["output_projection"]["kernel"] + w["output_projection"]["bias"]


def expected_model(inputs):
    return {"logits_w": _transformer(inputs)}


def _shape(outputs, inputs):
    if outputs["is_model"] != 1:
        return "build_transformer must return a keras.Model"
    got = outputs["logits"].shape
    if got != (B, T, TGT_V):
        return f"logits have shape {got}, expected (B, T, V_tgt) = {(B, T, TGT_V)}"
    return None


def _loaded(outputs, inputs):
    k = int(np.ravel(outputs["load_layer"])[0])
    problem = int(np.ravel(outputs["load_problem"])[0])
    if k < 0:
        return None
    name, kind = LAYERS[k]
    if problem == 0:
        return (f"no layer named {name!r} in the model: name the layers as the exercise "
                f"lists, so the grader can load its weights")
    return (f"the layer named {name!r} is not a {kind} of the expected size "
            f"(d_model={D}, num_heads={H}, d_ff={D_FF})")


# -- case "copy" ----------------------------------------------------------------------------
COPY_V, COPY_LEN, COPY_N, COPY_NEW, BOS = 10, 4, 256, 64, 1
COPY_D, COPY_STEPS, COPY_LR, COPY_SEED = 16, 80, 0.01, 1
COPY_FALL, COPY_ACCURACY = 0.5, 0.9


def _decoder_inputs(x):
    return np.concatenate([np.full((len(x), 1), BOS), x[:, :-1]], axis=1)  # <bos> y_<t


def build_copy(rng):
    x = rng.integers(2, COPY_V, size=(COPY_N + COPY_NEW, COPY_LEN))  # no <pad>, no <bos>
    return {"x": x[:COPY_N], "dec": _decoder_inputs(x[:COPY_N]),
            "x_new": x[COPY_N:], "dec_new": _decoder_inputs(x[COPY_N:])}


def _train(model, inputs, targets, new_inputs):
    """Adam on the cross-entropy of `model(inputs)` against `targets`, the whole set in
    every step. Returns the losses `(COPY_STEPS,)`, the teacher-forced predictions of the
    trained model on `new_inputs` and the first step's gradients (one per trainable
    weight, in the order of `model.trainable_variables`)."""
    import keras
    from keras import ops

    labels = ops.one_hot(targets, COPY_V)  # (n, T, V)
    fixed = [v.value for v in model.non_trainable_variables]

    def forward(params, x):
        return model.stateless_call(params, fixed, x)[0]  # (n, T, V)

    def loss(params):
        logp = ops.log_softmax(forward(params, inputs), axis=-1)
        return -ops.mean(ops.sum(logp * labels, axis=-1))

    def adam(params, m, v, grads, lr_t):  # beta = (0.9, 0.999); lr_t bias-corrected
        m = [0.9 * a + 0.1 * g for a, g in zip(m, grads)]
        v = [0.999 * a + 0.001 * g * g for a, g in zip(v, grads)]
        return [p - lr_t * a / (ops.sqrt(b) + 1e-7) for p, a, b in zip(params, m, v)], m, v

    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        def step(params, m, v, lr_t):
            value, grads = jax.value_and_grad(loss)(params)
            return (value, grads, *adam(params, m, v, grads, lr_t))

        step, forward = jax.jit(step), jax.jit(forward)
    else:
        from kerasattn.grader.childtools import value_and_grad

        vg = value_and_grad(loss, torch_threads=1)  # tiny tensors: threads add contention

        def step(params, m, v, lr_t):
            value, grads = vg(params)
            # dense gradients: TensorFlow gives an embedding's as IndexedSlices, torch
            # gives None for a weight the loss does not use
            grads = [ops.zeros_like(p) if g is None else ops.add(g, 0.0)
                     for p, g in zip(params, grads)]
            return (value, grads, *adam(params, m, v, grads, lr_t))

        if backend == "tensorflow":
            import tensorflow as tf

            step = tf.function(step)
    params = [v.value for v in model.trainable_variables]
    m = [ops.zeros_like(p) for p in params]
    v = [ops.zeros_like(p) for p in params]
    losses, first_grads = [], None
    for t in range(1, COPY_STEPS + 1):
        lr_t = COPY_LR * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        value, grads, params, m, v = step(params, m, v, ops.convert_to_tensor(lr_t, "float32"))
        losses.append(float(ops.convert_to_numpy(value)))
        if first_grads is None:
            first_grads = [ops.convert_to_numpy(g) for g in grads]
    return np.array(losses), ops.argmax(forward(params, new_inputs), axis=-1), first_grads


def run_copy(student, inputs):
    import random

    # Keras's initializers draw their seeds from Python's `random` when they are created:
    # this makes the initialisation the same in every run (keras.utils.set_random_seed
    # would also import TensorFlow, seconds on the other backends).
    random.seed(COPY_SEED)
    model = student.build_transformer(COPY_V, COPY_V, d_model=COPY_D, num_heads=2,
                                      d_ff=2 * COPY_D, num_layers=1)

    def batch(x, dec):
        return {"encoder_inputs": _ids(inputs[x]), "decoder_inputs": _ids(inputs[dec])}

    losses, predictions, grads = _train(model, batch("x", "dec"), _ids(inputs["x"]),
                                        batch("x_new", "dec_new"))
    return {"losses": losses, "predictions_new": predictions,
            **{f"grad/{v.path}": g for v, g in zip(model.trainable_variables, grads)}}


def _loss_falls(outputs, inputs):
    losses = outputs["losses"]
    if not np.isfinite(losses).all():
        return "the training loss became NaN or infinite"
    final = float(losses[-5:].mean())
    if final > COPY_FALL * losses[0]:
        return (f"after {COPY_STEPS} Adam steps on the copy task the loss is {final:.3g}, "
                f"from {losses[0]:.3g} at the start: it should at least halve")
    return None


def _copies(outputs, inputs):
    pred, x = outputs["predictions_new"].astype(int), np.asarray(inputs["x_new"])
    if pred.shape != x.shape:
        return f"predictions have shape {pred.shape}, expected {x.shape}"
    accuracy = float((pred == x).mean())
    if accuracy < COPY_ACCURACY:
        return (f"after {COPY_STEPS} Adam steps the model copies {accuracy:.0%} of the "
                f"tokens of sentences it has not seen (first one: "
                f"{' '.join(map(str, x[0]))} -> {' '.join(map(str, pred[0]))}); a model that "
                f"has learnt to copy gets at least {COPY_ACCURACY:.0%}, one that cannot tell "
                f"the source positions apart about 60%. To copy, position i must find "
                f"source position i: are there positional encodings on both sides?")
    return None


HINTS = [
    "Write the five equations as layers, in order: two int32 keras.Input and the masks, the "
    "source embedding and its positional encoding, num_layers encoder blocks, the target "
    "embedding and its positional encoding, num_layers decoder blocks, a Dense layer to the "
    "vocabulary; then keras.Model with a dict of inputs. Name the layers as the exercise "
    "lists.",
    "Source side: an Embedding of src_vocab_size ids into d_model named \"src_embedding\", then a "
    "PositionalEncoding with scale_inputs=True and the dropout rate; then a Python loop over the "
    "num_layers block indices i, each pass creating a TransformerEncoderBlock from d_model, "
    "num_heads, d_ff and the dropout rate, named encoder_block_{i} (an f-string), and calling it "
    "on the previous output with the source mask as padding_mask. The two masks are ops.not_equal "
    "of each Input tensor and 0.",
    "Target side, the same pattern: an Embedding named \"tgt_embedding\", its own "
    "PositionalEncoding, and num_layers TransformerDecoderBlocks named decoder_block_{i}, each "
    "called on the previous decoder output and on H_enc, the output of the last encoder block, "
    "with the target mask as decoder_padding_mask and the source mask as encoder_padding_mask. A "
    "Dense layer of tgt_vocab_size units named \"output_projection\" gives the logits; "
    "keras.Model takes a dict of the two inputs, keyed \"encoder_inputs\" and \"decoder_inputs\", "
    "and the logits.",
]

SPEC = Spec(
    exercise="22_assemble_transformer",
    title="Assemble step 5: the full Transformer, and a copy task",
    forbidden=["kerasattn.models", "kerasattn.training", "kerasattn.decoding",
               "keras_hub", "keras_nlp"],
    cases=[Case("model", build_model, run_model, expected_model, timeout=120),
           Case("copy", build_copy, run_copy, seed=1, timeout=120)],
    checks=[
        Property("returns a keras.Model with logits (B, T, V_tgt)", case="model", fn=_shape,
                 points=1),
        Property("the layers carry the names the grader loads its weights by",
                 case="model", fn=_loaded, points=0.5),
        Compare("logits on the grader's weights match the reference (N = 2)",
                case="model", output="logits_w", points=2.5, variants=[
                    Variant("no positional encoding on the encoder side",
                            lambda i: _transformer(i, enc_positions=False),
                            "Add PositionalEncoding(scale_inputs=True) after the source "
                            "embedding too: self-attention alone does not see word order."),
                    Variant("embeddings not scaled by sqrt(d_model)",
                            lambda i: _transformer(i, scale=False),
                            "PositionalEncoding(scale_inputs=True) multiplies the "
                            "embeddings by sqrt(d_model) before adding the positions."),
                    Variant("source padding not masked in the cross-attention",
                            lambda i: _transformer(i, cross_mask=False),
                            "Pass encoder_padding_mask to every decoder block."),
                    Variant("encoder blocks not chained (each reads H_0)",
                            lambda i: _transformer(i, chain_encoder=False),
                            "Each encoder block reads the previous block's output."),
                    Variant("decoder blocks not chained (each reads X)",
                            lambda i: _transformer(i, chain_decoder=False),
                            "Each decoder block reads the previous block's output.")]),
        Property("causal: target tokens after position i do not change logits at i",
                 case="model", fn=P.same_where("logits", "logits_future", keep_input="past",
                                               atol=1e-4, what="causality"), points=1.5),
        Property("source padding invariance: extra <pad> tokens change nothing",
                 case="model", fn=P.same_where("logits", "logits_src_padded", atol=1e-4),
                 points=1),
        GradientCheck("every trainable weight receives a gradient (the copy task's first "
                      "step)", case="copy", points=1),
        Property(f"copy task: the training loss falls by half in {COPY_STEPS} steps",
                 case="copy", fn=_loss_falls, points=1),
        Property(f"copy task: the trained model copies at least {COPY_ACCURACY:.0%} of the "
                 "tokens of new sentences (teacher forcing)", case="copy", fn=_copies,
                 points=1.5),
    ],
)
