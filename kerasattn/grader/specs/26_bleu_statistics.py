"""Checks for exercise 26: BLEU's clipped n-gram counts and brevity penalty (Papineni et al.,
2002) on token lists.

The expected values come from ``kerasattn.reference.bleu_statistics``, which
tests/test_reference.py checks against sacrebleu's ``counts``, ``totals``, ``sys_len``,
``ref_len``, ``bp`` and ``score``. The corpus is small and written so that each mistake
below changes the result: Papineni et al.'s "the the the ..." (clipping), an n-gram found
once in each of two references (max, not sum), a word only the second reference has,
a tie between two reference lengths, and hypotheses shorter than their references overall.
"""
import math

import numpy as np

from kerasattn.grader.spec import Case, Compare, Spec, Variant

# one sentence per line; the references of a sentence separated by " | "
HYPOTHESES = """the the the the the the the
the cat sat on the mat
a dog barks at night
good morning
we will see you again tomorrow"""
REFERENCES = """the cat is on the mat | there is a cat on the mat
the cat sat on a mat | a cat was sitting on the mat
a dog is barking at night | dogs bark at night
good morning to you all
we will see you tomorrow | see you again tomorrow"""
CLOSEST = [(7, (6, 7)), (5, (6, 4)), (3, (5, 1)), (10, (4, 12, 9)), (2, (5,))]
BREVITY = [(10, 10), (12, 10), (8, 10), (1, 4), (0, 5)]


def _corpus(inputs):
    hyps = [line.split() for line in inputs["hypotheses"].splitlines()]
    refs = [[ref.split() for ref in line.split(" | ")]
            for line in inputs["references"].splitlines()]
    return hyps, refs


# -- case "corpus": every function on the corpus above ----------------------------------------
def build(rng):
    return {"hypotheses": HYPOTHESES, "references": REFERENCES}


def run(student, inputs):
    hyps, refs = _corpus(inputs)
    stats = student.corpus_bleu_statistics(hyps, refs)
    if not isinstance(stats, dict):
        raise TypeError(f"corpus_bleu_statistics must return a dict; got "
                        f"{type(stats).__name__}")
    matches, total = student.clipped_matches(hyps[0], refs[0], 1)
    outputs = {"papineni": [matches, total],
               "counts": list(stats["counts"]), "totals": list(stats["totals"]),
               "lengths": [stats["sys_len"], stats["ref_len"]],
               "bp_score": [stats["bp"], stats["score"]],
               "closest": [student.closest_reference_length(h, list(r)) for h, r in CLOSEST],
               "brevity": [student.brevity_penalty(c, r) for c, r in BREVITY]}
    return {key: np.asarray(value, dtype=np.float64) for key, value in outputs.items()}


def expected(inputs):
    from kerasattn.reference import bleu_statistics

    hyps, refs = _corpus(inputs)
    stats = bleu_statistics(hyps, refs)
    first = bleu_statistics(hyps[:1], refs[:1], max_order=1)
    # closest length and brevity penalty of one sentence of h (or c) tokens
    closest = [bleu_statistics([["x"] * h], [[["y"] * n for n in r]], 1)["ref_len"]
               for h, r in CLOSEST]
    brevity = [bleu_statistics([["x"] * c], [[["y"] * r]], 1)["bp"] for c, r in BREVITY]
    return {"papineni": [first["counts"][0], first["totals"][0]],
            "counts": stats["counts"], "totals": stats["totals"],
            "lengths": [stats["sys_len"], stats["ref_len"]],
            "bp_score": [stats["bp"], stats["score"]], "closest": closest,
            "brevity": brevity}


# -- known mistakes ---------------------------------------------------------------------------
def _grams(tokens, n):
    grams = {}
    for i in range(len(tokens) - n + 1):
        grams[tuple(tokens[i:i + n])] = grams.get(tuple(tokens[i:i + n]), 0) + 1
    return grams


def _counts(inputs, clip, first_only=False):
    """Clipped counts per order with the references' counts combined by ``clip``."""
    hyps, refs = _corpus(inputs)
    counts = np.zeros(4)
    for hyp, rs in zip(hyps, refs):
        rs = rs[:1] if first_only else rs
        for n in range(1, 5):
            in_refs = [_grams(r, n) for r in rs]
            for gram, count in _grams(hyp, n).items():
                found = [g.get(gram, 0) for g in in_refs]
                if clip == "none":
                    counts[n - 1] += count if max(found) else 0
                else:
                    counts[n - 1] += min(count, sum(found) if clip == "sum" else max(found))
    return counts


def _ref_len(inputs, pick):
    hyps, refs = _corpus(inputs)
    return [sum(len(h) for h in hyps),
            sum(pick(len(h), [len(r) for r in rs]) for h, rs in zip(hyps, refs))]


COUNT_VARIANTS = [
    Variant("n-gram counts not clipped", lambda i: _counts(i, "none"),
            "Credit an n-gram at most as often as it occurs in one reference."),
    Variant("clipped by the sum over the references instead of the max",
            lambda i: _counts(i, "sum"),
            "Clip with the largest count in any single reference, not the references' sum."),
    Variant("clipped by the first reference only", lambda i: _counts(i, "max", first_only=True),
            "Every reference counts: clip with the maximum over all of them."),
]
LENGTH_VARIANTS = [
    Variant("ref_len from the shortest reference", lambda i: _ref_len(i, lambda h, rs: min(rs)),
            "Use the reference length closest to the hypothesis' length."),
    Variant("ref_len from the first reference", lambda i: _ref_len(i, lambda h, rs: rs[0]),
            "Use the reference length closest to the hypothesis' length."),
    Variant("tie broken towards the longer reference",
            lambda i: _ref_len(i, lambda h, rs: min(rs, key=lambda n: (abs(n - h), -n))),
            "On a tie, take the shorter reference (as sacrebleu does)."),
]
CLOSEST_VARIANTS = [
    Variant("tie broken towards the longer reference",
            lambda i: [min(r, key=lambda n: (abs(n - h), -n)) for h, r in CLOSEST],
            "On a tie, take the shorter reference."),
]
BREVITY_VARIANTS = [
    Variant("ratio inverted: exp(1 - c / r)",
            lambda i: [1.0 if c >= r else math.exp(1 - c / r) for c, r in BREVITY],
            "BP = exp(1 - r / c) with c the hypothesis length and r the reference length."),
    Variant("no penalty when the hypotheses are shorter",
            lambda i: [1.0 for _ in BREVITY],
            "BP = exp(1 - r / c) when c < r."),
]
PAPINENI_VARIANTS = [
    Variant("n-gram counts not clipped", lambda i: [7, 7],
            "\"the\" occurs at most twice in one reference: only 2 of the 7 count."),
]


HINTS = [
    "ngram_counts: a collections.Counter of the tuples of n consecutive tokens, one tuple for "
    "every start position i from 0 to L - n. In clipped_matches, work out for every n-gram the "
    "most times it occurs in any single reference, then credit each hypothesis n-gram with "
    "min(its count, that maximum).",
    "closest_reference_length: the built-in min over ref_lengths with a key that sorts by the "
    "distance to the hypothesis length first and by the length itself second (so a tie goes to "
    "the shorter). brevity_penalty: 1 when c >= r, exp(1 - r / c) when 0 < c < r, 0 when c = 0.",
    "corpus_bleu_statistics: one loop over the sentences adds len(hyp) to sys_len, the "
    "closest reference length to ref_len, and for n = 1 .. max_order the matches and totals "
    "of clipped_matches to counts[n - 1] and totals[n - 1]. Then bp from the two sums, and "
    "score = 100 * bp * exp(sum(log(count / total)) / max_order), 0 if a count is 0.",
]

SPEC = Spec(
    exercise="26_bleu_statistics",
    title="BLEU: modified n-gram precision and brevity penalty",
    forbidden=["sacrebleu", "nltk", "kerasattn.metrics", "keras_hub", "keras_nlp"],
    cases=[Case("corpus", build, run, expected)],
    checks=[
        Compare("Papineni et al.'s 'the the the ...': 2 of 7 unigrams match", case="corpus",
                output="papineni", points=1, atol=0, rtol=0, variants=PAPINENI_VARIANTS),
        Compare("clipped n-gram matches, n = 1 .. 4 (sacrebleu's counts)", case="corpus",
                output="counts", points=2, atol=0, rtol=0, variants=COUNT_VARIANTS),
        Compare("n-grams in the hypotheses, n = 1 .. 4 (sacrebleu's totals)", case="corpus",
                output="totals", points=1, atol=0, rtol=0),
        Compare("closest reference length, ties to the shorter", case="corpus",
                output="closest", points=1, atol=0, rtol=0, variants=CLOSEST_VARIANTS),
        Compare("sys_len and ref_len of the corpus", case="corpus", output="lengths",
                points=1, atol=0, rtol=0, variants=LENGTH_VARIANTS),
        Compare("brevity penalty for (c, r) = (10, 10), (12, 10), (8, 10), (1, 4), (0, 5)",
                case="corpus", output="brevity", points=1, atol=1e-9, rtol=1e-9,
                variants=BREVITY_VARIANTS),
        Compare("corpus brevity penalty and BLEU score", case="corpus", output="bp_score",
                points=2, atol=1e-6, rtol=1e-6),
    ],
)
