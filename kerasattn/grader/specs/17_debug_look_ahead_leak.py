"""Checks for exercise 17 (debugging): a look-ahead leak (a near-zero loss, then a
repeated count word at inference, "three three three three").

Part A: teacher-forcing arrays (decoder input not shifted). Part B: the decoder's
self-attention without the causal mask.
"""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, GradientCheck, Property, Spec, Variant

BOS, EOS, V = 2, 3, 13

# Part A by hand: bos=2, eos=3; rows [7 8 . .], [5 6 9 4], [11 . . .]
TARGETS = np.array([[7, 8, 0, 0], [5, 6, 9, 4], [11, 0, 0, 0]])
DECODER_INPUTS = np.array([[2, 7, 8, 0, 0], [2, 5, 6, 9, 4], [2, 11, 0, 0, 0]])  # <bos> y
LABELS = np.array([[7, 8, 3, 0, 0], [5, 6, 9, 4, 3], [11, 3, 0, 0, 0]])  # y <eos>


def build_arrays(rng):
    return {"targets": TARGETS}


def run_arrays(student, inputs):
    import keras

    targets = keras.ops.convert_to_tensor(inputs["targets"], dtype="int32")
    decoder_inputs, labels = student.make_teacher_forcing_arrays(targets, bos_id=BOS,
                                                                 eos_id=EOS)
    return {"decoder_inputs": decoder_inputs, "labels": labels}


def expected_arrays(inputs):
    return {"decoder_inputs": DECODER_INPUTS, "labels": LABELS}


def _labels_as_inputs(inputs):
    return LABELS  # decoder_inputs == labels: the decoder reads the word it must predict


def _eos_at_end(inputs):
    return np.concatenate([TARGETS, np.full((3, 1), EOS)], axis=1)


def _no_eos(inputs):
    return np.concatenate([TARGETS, np.zeros((3, 1), int)], axis=1)


# -- Part B: TinyDecoder must be causal ---------------------------------------------
def build_decoder(rng):
    tokens = np.array([[2, 4, 5, 6, 7], [2, 8, 9, 10, 0]])
    future = tokens.copy()
    future[:, 3:] = np.array([[11, 12], [12, 0]])  # change positions 3 and 4 only
    past = np.arange(5)[None, :].repeat(2, 0) < 3
    return {"tokens": tokens, "tokens_future": future, "past": past,
            "probe": rng.normal(size=(2, 5, V))}


def run_decoder(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import trainable_gradients

    decoder = student.TinyDecoder(V, d_model=8, num_heads=2)

    def logits(name):
        return decoder(ops.convert_to_tensor(inputs[name], dtype="int32"))

    out = logits("tokens")
    probe = ops.convert_to_tensor(inputs["probe"], dtype="float32")
    grads = trainable_gradients(decoder, lambda: ops.sum(logits("tokens") * probe))
    return {"logits": out, "logits_future": logits("tokens_future"),
            **{f"grad/{k}": g for k, g in grads.items()}}


def _logits_shape(outputs, inputs):
    a = outputs["logits"]
    if a.shape != (2, 5, V):
        return f"logits have shape {a.shape}, expected (2, 5, {V})"
    return None


HINTS = [
    "Where to look: could any model reach that loss honestly? All six sentences follow <bos>, "
    "so nothing tells the decoder which first word comes next: that word costs at least ln 6 "
    "= 1.79, and an honest loss (averaged over 5 labels per sentence) cannot fall below "
    "0.36. A lower loss means that during training the decoder reads the word it must "
    "predict. It reads only two things: its input array (make_teacher_forcing_arrays) and the "
    "positions its self-attention lets each position see (TinyDecoder.call).",
    "What to compare: write both arrays out by hand for the target [7, 8, 0] (bos=2, eos=3): "
    "decoder_inputs [2, 7, 8, 0], labels [7, 8, 3, 0], so that at position t the input is "
    "y_{t-1} and the label is y_t; compare with what make_teacher_forcing_arrays returns. Then "
    "change the token at the last position of a decoder input: the logits at earlier positions "
    "must not move (position t may only attend to positions <= t). Do they?",
    "The fix: two changes. In make_teacher_forcing_arrays the decoder inputs must be the targets "
    "shifted right by one: a (N, 1) int32 column of bos_id (ops.full) in front of the targets, "
    "joined on axis 1 (ops.concatenate), which gives <bos> y of shape (N, L + 1); the labels are "
    "right as they are. In TinyDecoder.call the self-attention must be causal: also pass "
    "use_causal_mask=True to self.self_attention, keeping both padding masks.",
]

SPEC = Spec(
    exercise="17_debug_look_ahead_leak",
    title="Debugging: a loss too good to be true",
    forbidden=["kerasattn.data", "kerasattn.models", "kerasattn.training",
               "kerasattn.layers.decoder_block", "kerasattn.layers.TransformerDecoderBlock"],
    cases=[Case("arrays", build_arrays, run_arrays, expected_arrays),
           Case("decoder", build_decoder, run_decoder)],
    checks=[
        Compare("decoder_inputs = <bos> y (shifted right)", case="arrays",
                output="decoder_inputs", points=3, atol=0, rtol=0, variants=[
                    Variant("decoder input not shifted (decoder_inputs == labels)",
                            _labels_as_inputs,
                            "The decoder must read y_{t-1} at position t: prepend <bos>.")]),
        Compare("labels = y <eos>", case="arrays", output="labels", points=2, atol=0, rtol=0,
                variants=[
                    Variant("<eos> appended after the padding instead of after the last "
                            "word", _eos_at_end, "Put <eos> at index len(y) of each row."),
                    Variant("<eos> missing from the labels", _no_eos,
                            "The model must learn to stop: the label after the last word "
                            "is <eos>.")]),
        Property("TinyDecoder returns logits (N, T, V)", case="decoder", fn=_logits_shape,
                 points=1),
        Property("TinyDecoder is causal: later tokens do not change earlier logits",
                 case="decoder", fn=P.same_where("logits", "logits_future", keep_input="past",
                                                 atol=1e-4, what="causality"), points=3),
        GradientCheck("every weight of TinyDecoder receives a gradient", case="decoder",
                      points=1),
    ],
)
