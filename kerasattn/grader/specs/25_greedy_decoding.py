"""Checks for exercise 25: greedy decoding with a step function, rows stopping one by one.

The model is a tiny recurrent decoder whose weights ``build`` draws until its greedy
outputs end at three different steps, all before ``max_length``, with clear argmax margins
(so float32 and float64 choose the same tokens). The expected outputs come from
``kerasattn.reference.greedy_decode``, which decodes each row on its own.
"""
import numpy as np

from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

B, V, H = 3, 8, 6
MAX_LENGTH, CAP = 8, 3
PAD, BOS, EOS = 0, 2, 3
KEYS = ("tokens", "lengths", "finished")


def _numpy_step(inputs):
    """The decoder in float64 NumPy: h_t = tanh(E[y_{t-1}] + h_{t-1} A), logits h_t O + P_t."""
    def step(tokens, state, t):
        h = np.tanh(inputs["E"][np.asarray(tokens)] + state @ inputs["A"])
        return h @ inputs["O"] + inputs["P"][t], h
    return step


def _batched(inputs, max_length, stop_rows=True, feed_back=True, stop_loop="all"):
    """Batched greedy search with one known mistake switched on; also the smallest margin
    between the best and second-best logit along the way."""
    step = _numpy_step(inputs)
    token, state = np.full(B, BOS), inputs["state"]
    finished, lengths = np.zeros(B, bool), np.zeros(B, int)
    columns, margin = [], np.inf
    for t in range(max_length):
        logits, state = step(token if feed_back else np.full(B, BOS), state, t)
        top = np.sort(logits, axis=-1)
        margin = min(margin, float((top[:, -1] - top[:, -2]).min()))
        token = logits.argmax(-1)
        if stop_rows:
            token = np.where(finished, PAD, token)
        lengths = lengths + ~finished
        finished = finished | (token == EOS)
        columns.append(token)
        if (stop_loop == "all" and finished.all()) or (stop_loop == "first"
                                                       and finished.any()):
            break
    return {"tokens": np.stack(columns, 1), "lengths": lengths, "finished": finished,
            "margin": margin}


def build(rng):
    for _ in range(10000):
        inputs = {"E": rng.normal(size=(V, H)), "A": rng.normal(size=(H, H)) * 0.7,
                  "O": rng.normal(size=(H, V)) * 1.5, "state": rng.normal(size=(B, H))}
        P = np.zeros((MAX_LENGTH, V))
        P[:, [PAD, BOS]] = -10.0  # never generated
        P[:, EOS] = -3.0 + 0.9 * np.arange(MAX_LENGTH)  # <eos> grows likelier with t
        inputs["P"] = P
        out = _batched(inputs, MAX_LENGTH)
        lengths = out["lengths"]
        if (out["finished"].all() and len(set(lengths)) == B and 2 <= lengths.min() <= CAP
                and CAP < lengths.max() <= MAX_LENGTH - 2 and out["margin"] > 0.1
                and all(_batched(inputs, MAX_LENGTH, **kw)["margin"] > 0.05
                        for kw in ({"stop_rows": False}, {"feed_back": False}))):
            return inputs
    raise RuntimeError("no decoder with the wanted behaviour found")


def run(student, inputs):
    import keras
    from keras import ops

    w = {k: ops.convert_to_tensor(np.asarray(inputs[k]), "float32") for k in "EAOP"}

    def step_fn(tokens, state, t):
        h = ops.tanh(ops.take(w["E"], tokens, axis=0) + ops.matmul(state, w["A"]))  # (B, H)
        return ops.matmul(h, w["O"]) + ops.take(w["P"], t, axis=0), h  # (B, V), (B, H)

    outputs = {}
    for suffix, max_length in (("", MAX_LENGTH), ("_capped", CAP)):
        state = keras.ops.convert_to_tensor(np.asarray(inputs["state"]), "float32")
        out = student.greedy_decode(step_fn, state, B, max_length, bos_id=BOS, eos_id=EOS,
                                    pad_id=PAD)
        if not isinstance(out, dict) or set(KEYS) - set(out):
            raise TypeError(f"greedy_decode must return a dict with the keys {list(KEYS)}; "
                            f"got {type(out).__name__}"
                            + (f" with keys {sorted(out)}" if isinstance(out, dict) else ""))
        outputs.update({key + suffix: out[key] for key in KEYS})
    return outputs


def expected(inputs):
    from kerasattn.reference import greedy_decode

    step = _numpy_step(inputs)
    outputs = {}
    for suffix, max_length in (("", MAX_LENGTH), ("_capped", CAP)):
        out = greedy_decode(step, inputs["state"], max_length, BOS, EOS, PAD)
        outputs.update({key + suffix: out[key] for key in KEYS})
    return outputs


def _variant(key, **kw):
    return lambda inputs: _batched(inputs, MAX_LENGTH, **kw)[key]


TOKEN_VARIANTS = [
    Variant("finished rows not stopped (tokens after <eos> kept)",
            _variant("tokens", stop_rows=False),
            "Once a row has produced <eos>, write <pad> in its later positions."),
    Variant("the previous prediction not fed back (<bos> at every step)",
            _variant("tokens", feed_back=False),
            "Pass the tokens chosen at step t - 1 to step_fn at step t."),
    Variant("the loop goes on after every row has finished", _variant("tokens",
                                                                      stop_loop="never"),
            "Leave the loop when every row has finished: bool(ops.all(finished))."),
    Variant("the loop stops when the first row finishes", _variant("tokens", stop_loop="first"),
            "Stop only when every row has finished (or at max_length)."),
]
LENGTH_VARIANTS = [
    Variant("<eos> not counted in the length",
            lambda i: _batched(i, MAX_LENGTH)["lengths"] - 1,
            "The length counts the generated tokens, <eos> included."),
    Variant("every row's length is the number of steps run",
            lambda i: np.full(B, _batched(i, MAX_LENGTH)["tokens"].shape[1]),
            "A finished row's length stops growing."),
]


def _stops_when_all_finished(outputs, inputs):
    tokens, want = outputs["tokens"], _batched(inputs, MAX_LENGTH)["tokens"].shape[1]
    if tokens.ndim != 2:
        return f"tokens have shape {tokens.shape}, expected (B, T_out)"
    if tokens.shape[1] > want:
        return (f"{tokens.shape[1]} steps were run, but every row had finished after {want}: "
                "leave the loop when every row has produced <eos>")
    if tokens.shape[1] < want:
        return (f"only {tokens.shape[1]} steps were run, but a row was still going until "
                f"step {want}: stop when every row has finished, not the first")
    return None


def _pad_after_eos(outputs, inputs):
    tokens = outputs["tokens"]
    if tokens.ndim != 2 or tokens.shape[0] != B:
        return f"tokens have shape {tokens.shape}, expected (B, T_out) with B = {B}"
    for b, row in enumerate(tokens.astype(int)):
        ends = np.flatnonzero(row == EOS)
        if ends.size and (row[ends[0] + 1:] != PAD).any():
            return (f"row {b} goes on after its <eos> at position {ends[0]}: "
                    f"{' '.join(map(str, row))}; later positions must hold <pad> ({PAD})")
    return None


HINTS = [
    "Start from y_0 = <bos> for every row: a (B,) int32 tensor filled with bos_id (ops.full). "
    "Each step calls step_fn with the previous tokens, the state and t, keeps the returned state "
    "for the next step, and takes the argmax of the logits over the last axis, cast to int32, as "
    "the next tokens, which are also the next step's input.",
    "Keep two (B,) tensors across steps: finished (bool, starts False) and lengths (int32, "
    "starts 0). Within a step: replace the argmax by <pad> where the row had already "
    "finished (ops.where), add 1 to the length of the rows that had not, and only then "
    "mark the rows whose token is <eos> as finished (ops.logical_or).",
    "Append each step's (B,) tokens to a Python list and ops.stack the list on axis 1 for "
    "\"tokens\", (B, T_out). A Python loop over range(max_length) caps the steps; after "
    "appending, leave it early with break once every row has finished (ops.all of finished, "
    "turned into a Python bool). Return the dict of \"tokens\", \"lengths\" and \"finished\".",
]

SPEC = Spec(
    exercise="25_greedy_decoding",
    title="Greedy decoding, rows stopping at <eos>",
    forbidden=["kerasattn.decoding", "kerasattn.inference", "kerasattn.models", "keras_hub",
               "keras_nlp"],
    cases=[Case("decode", build, run, expected)],
    checks=[
        Compare("tokens: argmax fed back, <pad> after each row's <eos>", case="decode",
                output="tokens", points=3, atol=0, rtol=0, variants=TOKEN_VARIANTS),
        Compare("lengths, <eos> included", case="decode", output="lengths", points=1, atol=0,
                rtol=0, variants=LENGTH_VARIANTS),
        Compare("finished flags", case="decode", output="finished", points=1, atol=0, rtol=0),
        Property("the loop stops when every row has finished", case="decode",
                 fn=_stops_when_all_finished, points=1),
        Property("a finished row holds only <pad> after its <eos>", case="decode",
                 fn=_pad_after_eos, points=1),
        Compare(f"max_length = {CAP} caps the rows that have not finished", case="decode",
                output="tokens_capped", points=1, atol=0, rtol=0),
        Compare(f"lengths at max_length = {CAP}", case="decode", output="lengths_capped",
                points=1, atol=0, rtol=0),
        Compare(f"finished flags at max_length = {CAP}", case="decode",
                output="finished_capped", points=1, atol=0, rtol=0),
    ],
)
