"""Checks for exercise 12: one beam-search step with a length penalty.

The expected values come from the plain-Python reference below (float64, one candidate
at a time, sorted by the rank score(y) / L(y)^alpha), written independently of the
exercise's vectorised solution.
"""
import numpy as np

from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

B, K, V, EOS, ALPHA = 2, 3, 6, 3, 0.75
NEG_INF = -1e9
KEYS = ("scores", "lengths", "finished", "beams", "tokens")


def reference_beam_step(scores, lengths, finished, log_probs, alpha=ALPHA, eos_id=EOS,
                        per_beam=False, finished_grow=False, old_flag_only=False):
    """Candidates (rank, score, length, done, beam, token), the best K kept per sentence."""
    b_, k_, v_ = log_probs.shape
    result = {key: np.zeros((b_, k_)) for key in KEYS}
    for b in range(b_):
        candidates = []
        for k in range(k_):
            for v in range(v_):
                if finished[b, k] and not finished_grow:
                    if v != eos_id:
                        continue
                    score, length = scores[b, k], lengths[b, k]
                else:
                    score, length = scores[b, k] + log_probs[b, k, v], lengths[b, k] + 1
                rank = score / length ** alpha
                done = finished[b, k] or (v == eos_id and not old_flag_only)
                candidates.append((rank, score, length, done, k, v))
        if per_beam:  # the mistake: the best token of each beam
            kept = [max((c for c in candidates if c[4] == k), key=lambda c: c[0])
                    for k in range(k_)]
            kept.sort(key=lambda c: -c[0])
        else:
            kept = sorted(candidates, key=lambda c: -c[0])[:k_]
        for j, (_, score, length, done, k, v) in enumerate(kept):
            for key, value in zip(KEYS, (score, length, done, k, v)):
                result[key][b, j] = value
    return result


def build(rng):
    logits = rng.normal(size=(B, K, V)) * 2
    # Sentence 0's beam 1 is all but sure to end now: a freshly finished beam is kept.
    logits[0, 1, EOS] = 8.0
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    # Lengths differ a lot, so ranking by score / L^alpha and by the raw score disagree.
    return {"beam_scores": np.array([[-1.0, -2.4, -1.8], [-3.0, -3.4, -1.2]]),
            "beam_lengths": np.array([[1.0, 6.0, 3.0], [5.0, 6.0, 1.0]]),
            # Sentence 1's beam 0 already ended with <eos>: it must compete with the others.
            "finished": np.array([[False, False, False], [True, False, False]]),
            "next_log_probs": log_probs}


def run(student, inputs):
    import keras

    def t(name, dtype="float32"):
        return keras.ops.convert_to_tensor(np.asarray(inputs[name]), dtype=dtype)

    out = student.beam_search_step(t("beam_scores"), t("beam_lengths"), t("finished", "bool"),
                                   t("next_log_probs"), alpha=ALPHA, eos_id=EOS)
    if not isinstance(out, dict) or set(KEYS) - set(out):
        raise TypeError(f"beam_search_step must return a dict with the keys {list(KEYS)}; "
                        f"got {type(out).__name__}"
                        + (f" with keys {sorted(out)}" if isinstance(out, dict) else ""))
    return {key: out[key] for key in KEYS}


def _args(i):
    return (i["beam_scores"], i["beam_lengths"], i["finished"].astype(bool),
            i["next_log_probs"])


def expected(inputs):
    return reference_beam_step(*_args(inputs))


def _variant(key, **kw):
    return lambda i: reference_beam_step(*_args(i), **kw)[key]


def _no_penalty(key):
    return _variant(key, alpha=0.0)


def _ranked(outputs, inputs):
    s, length = outputs["scores"], outputs["lengths"]
    if s.shape != (B, K) or length.shape != (B, K):
        return f"scores/lengths have shapes {s.shape}/{length.shape}, expected {(B, K)}"
    rank = s / np.maximum(length, 1e-9) ** ALPHA
    if (np.diff(rank, axis=1) > 1e-5).any():
        return "the kept beams are not ordered best first by score / length^alpha"
    return None


TOKEN_VARIANTS = [
    Variant("length penalty not applied", _no_penalty("tokens"),
            "Rank by score / length^alpha, not by the raw score."),
    Variant("top-k per beam instead of over beams x vocabulary", _variant("tokens", per_beam=True),
            "Flatten (K, V) to K*V candidates and take the top K of all of them."),
    Variant("finished beams extended like unfinished ones",
            _variant("tokens", finished_grow=True),
            "A finished beam may only continue with <eos>, at no cost."),
]
BEAM_VARIANTS = [Variant(v.name, _variant("beams", **kw), v.hint) for v, kw in zip(
    TOKEN_VARIANTS, ({"alpha": 0.0}, {"per_beam": True}, {"finished_grow": True}))]

HINTS = [
    "Extend every beam by every token: K x V candidates per sentence, each with a summed "
    "log-probability and a length. A finished beam has one candidate only, <eos> at no cost. "
    "Rank all K x V candidates by score / length^alpha and keep the best K.",
    "Candidate scores: the beam scores with a trailing vocabulary axis, (B, K, 1), plus "
    "next_log_probs, (B, K, V). For finished beams, use ops.where with a boolean <eos> indicator "
    "over V (ops.one_hot of eos_id, cast to bool) to put beam_scores at eos_id and -1e9 "
    "elsewhere, and a second ops.where on finished (also with a trailing axis) to choose that "
    "row. Candidate lengths: beam_lengths + 1 where the beam is unfinished, unchanged where it is "
    "finished.",
    "Rank = candidate score / L^alpha (ops.power of the candidate lengths, given a trailing "
    "axis). Reshape the ranks to (B, K*V) and keep the best K with ops.top_k (k = K, best first); "
    "the flat index i is beam i // V and token i % V. Gather the kept scores from the candidate "
    "scores reshaped the same way with ops.take_along_axis, the candidate lengths "
    "(beam_lengths, plus 1 where the beam was unfinished) and the old finished flags with the "
    "beam index, and mark a kept candidate finished if its beam was or its token is eos_id "
    "(ops.logical_or).",
]

SPEC = Spec(
    exercise="12_beam_search_step",
    title="One beam-search step with length penalty",
    forbidden=["kerasattn.decoding", "kerasattn.models", "keras_hub", "keras_nlp"],
    cases=[Case("step", build, run, expected)],
    checks=[
        Compare("tokens kept (best first)", case="step", output="tokens", points=2, atol=0,
                rtol=0, variants=TOKEN_VARIANTS),
        Compare("parent beams of the kept candidates", case="step", output="beams",
                points=2, atol=0, rtol=0, variants=BEAM_VARIANTS),
        Compare("summed log-probabilities of the kept candidates", case="step",
                output="scores", points=2, atol=1e-5),
        Compare("lengths of the kept candidates", case="step", output="lengths", points=1,
                atol=1e-6),
        Compare("finished flags of the kept candidates", case="step", output="finished",
                points=1, atol=0, rtol=0, variants=[Variant(
                    "a beam that has just produced <eos> is not marked finished",
                    _variant("finished", old_flag_only=True),
                    "finished = the old beam's flag OR the appended token is eos_id.")]),
        Property("kept beams ordered by score / length^alpha", case="step", fn=_ranked,
                 points=2),
    ],
)
