"""Checks for exercise 13: the step-4 model (GRU encoder + Transformer decoder blocks).

The model's weights are the student's random initialisation, so the checks are properties
of the architecture: the output shape, causality, source-padding invariance, a gradient
for every weight, a positional encoding on the decoder side, and the layers it is made of
(built with two decoder blocks, so that ``num_layers`` must be followed and the blocks
chained: an unchained block gets no gradient).
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, GradientCheck, Property, Spec

SRC_V, TGT_V, D = 11, 13, 16
B, S, T = 2, 5, 4
NUM_LAYERS = 2


def build(rng):
    # positions 2 and 3 of the decoder inputs change in dec_future
    inputs = P.model_probe_inputs(rng, src=[[4, 5, 6, 7, 0], [8, 9, 0, 0, 0]],
                                  dec=[[2, 4, 5, 6], [2, 7, 8, 9]],
                                  future=[[10, 11], [12, 3]], tgt_vocab=TGT_V)
    # one token repeated: without positions every decoder position computes the same logits
    inputs["dec_same"] = np.array([[5, 5, 5, 5], [7, 7, 7, 7]])
    return inputs


def _is_a(layer, class_name: str) -> bool:
    return any(c.__name__ == class_name for c in type(layer).__mro__)


def run(student, inputs):
    import keras
    from keras import ops

    from kerasattn.grader.childtools import trainable_gradients

    def ids(name):
        return ops.convert_to_tensor(np.asarray(inputs[name]), dtype="int32")

    model = student.build_transformer_decoder_on_gru(SRC_V, TGT_V, d_model=D, num_heads=2,
                                                     d_ff=32, num_layers=NUM_LAYERS)
    layers = list(model._flatten_layers(include_self=False)) if isinstance(
        model, keras.Model) else []
    # the kit's layers by class name (the grader does not import the layers it grades)
    blocks = {id(x) for x in layers if _is_a(x, "TransformerDecoderBlock")}
    grus = [x for x in layers if isinstance(x, (keras.layers.GRU, keras.layers.GRUCell))]
    scaled = [getattr(x, "scale_inputs", False) for x in layers
              if _is_a(x, "PositionalEncoding")]

    def logits(src, dec):
        return model({"encoder_inputs": ids(src), "decoder_inputs": ids(dec)})

    probe = ops.convert_to_tensor(inputs["probe"], dtype="float32")
    grads = trainable_gradients(model, lambda: ops.sum(logits("src", "dec") * probe))

    return {"logits": logits("src", "dec"), "logits_src_padded": logits("src_padded", "dec"),
            "logits_future": logits("src", "dec_future"),
            "logits_same": logits("src", "dec_same"),
            "is_model": isinstance(model, keras.Model),
            "n_blocks": len(blocks), "n_gru": len(grus),
            "n_scaled": sum(bool(s) for s in scaled),
            **{f"grad/{k}": g for k, g in grads.items()}}


def _shape(outputs, inputs):
    if outputs["is_model"] != 1:
        return "build_transformer_decoder_on_gru must return a keras.Model"
    got = outputs["logits"].shape
    if got != (B, T, TGT_V):
        return f"logits have shape {got}, expected (B, T, V_tgt) = {(B, T, TGT_V)}"
    return None


def _positional(outputs, inputs):
    # A target of one token repeated: self-attention over identical words, queried by
    # identical words, gives every position the same output unless positions are added.
    same = np.asarray(outputs["logits_same"], dtype=np.float64)   # (B, T, V_tgt)
    spread = float(np.max(np.abs(same - same[:, :1])))
    if spread < 1e-4:
        return ("with one token repeated in the target, every position gets the same logits "
                f"(largest difference {spread:.2g}): the decoder adds no positional encoding, "
                "so it cannot tell word order (add kerasattn.layers.PositionalEncoding after "
                "the target embedding)")
    return None


def _count(outputs, key) -> int:
    return int(np.ravel(outputs[key])[0])


def _layers(outputs, inputs):
    problems = []
    if _count(outputs, "n_gru") < 1:
        problems.append("the source is not read by a GRU (H_enc = GRU(Embed(x)))")
    if _count(outputs, "n_blocks") != NUM_LAYERS:
        problems.append(f"built with num_layers={NUM_LAYERS}, the model holds "
                        f"{_count(outputs, 'n_blocks')} distinct TransformerDecoderBlock(s): "
                        "create a new block on each pass of the loop")
    if _count(outputs, "n_scaled") < 1:
        problems.append("no PositionalEncoding(..., scale_inputs=True): the statement asks "
                        "for it, so that the target embedding is scaled by sqrt(d_model) "
                        "before the positions are added")
    return "; ".join(problems) or None


HINTS = [
    "Write the equations as layers, in order: two int32 keras.Input, the masks from the token "
    "ids, Embedding and GRU for the source, Embedding and PositionalEncoding for the target, "
    "num_layers decoder blocks, a Dense layer to the vocabulary, and keras.Model with a dict of "
    "inputs.",
    "Source: an Embedding of src_vocab_size ids into d_model with mask_zero=True (so the GRU "
    "skips the padding), then a GRU of d_model units with return_sequences=True, (B, S, d_model). "
    "Target: an Embedding of tgt_vocab_size ids into d_model, then the kit's PositionalEncoding "
    "with scale_inputs=True and the dropout rate, (B, T, d_model). The two masks are "
    "ops.not_equal of each Input tensor and 0.",
    "Then a Python loop that runs num_layers times: each pass creates a new "
    "TransformerDecoderBlock from d_model, num_heads, d_ff and the dropout rate, and calls it on "
    "the previous output and the GRU states, with the target mask as decoder_padding_mask and the "
    "source mask as encoder_padding_mask. A Dense layer of tgt_vocab_size units turns (B, T, "
    "d_model) into the logits (B, T, V_tgt). keras.Model takes a dict of the two inputs, keyed "
    "\"encoder_inputs\" and \"decoder_inputs\", and the logits.",
]

SPEC = Spec(
    exercise="13_assemble_step4_model",
    title="Assemble step 4: Transformer decoder on a GRU encoder",
    forbidden=["kerasattn.models", "kerasattn.training", "kerasattn.decoding",
               "keras_hub", "keras_nlp"],
    cases=[Case("model", build, run, timeout=120)],
    checks=[
        Property("returns a keras.Model with logits (B, T, V_tgt)", case="model", fn=_shape,
                 points=1),
        Property("causal: target tokens after position i do not change logits at i",
                 case="model", fn=P.same_where("logits", "logits_future", keep_input="past",
                                               atol=1e-4, what="causality"), points=3),
        Property("source padding invariance: extra <pad> tokens change nothing",
                 case="model", fn=P.same_where("logits", "logits_src_padded", atol=1e-4),
                 points=2),
        GradientCheck("every trainable weight receives a gradient", case="model", points=1),
        Property("the decoder adds positional encodings", case="model", fn=_positional,
                 points=1),
        Property("a GRU encoder, num_layers decoder blocks, a scaled target embedding",
                 case="model", fn=_layers, points=2),
    ],
)
