"""Exercise 26: BLEU's modified n-gram precision and brevity penalty.

BLEU (Papineni et al., 2002) scores a corpus of translations against one or more reference
translations per sentence. For every order ``n = 1 .. 4`` it counts how many n-grams of the
hypotheses also occur in the references, *clipped*: an n-gram is credited at most as many
times as it occurs in the single reference where it occurs most often. Without clipping,
"the the the the the the the" would match "the cat is on the mat" perfectly on unigrams;
clipped, only 2 of its 7 "the" count.

    count_n = sum over sentences, over the n-grams g of the hypothesis:
                  min(count of g in the hypothesis, max over references of count of g)
    total_n = sum over sentences of the number of n-grams in the hypothesis
    p_n     = count_n / total_n                      (modified n-gram precision)

Precision alone rewards short outputs, so BLEU multiplies by a brevity penalty computed on
the whole corpus: ``c`` (sys_len) is the number of hypothesis tokens, ``r`` (ref_len) the
sum over sentences of the reference length closest to the hypothesis' length (on a tie,
the shorter reference):

    BP   = 1                     if c >= r
         = exp(1 - r / c)        if 0 < c < r         (and 0 when c = 0)
    BLEU = 100 * BP * exp( (1/4) * sum_n log p_n )    (0 when some count_n is 0)

These are the statistics ``sacrebleu`` reports (``BLEU.corpus_score(...)``: ``counts``,
``totals``, ``sys_len``, ``ref_len``, ``bp``, ``score``); the grader compares yours with
them on a small corpus, where every count_n is above 0 (when one is 0, sacrebleu's default
"exp" smoothing gives a small score instead of 0; the counts, totals, lengths and BP agree).

Shapes (symbols): ``N`` sentences; a sentence is a list of token strings.

    hypotheses : N token lists
    references : N lists of token lists (one or more references per sentence)
    returns    : "counts", "totals" (lists of max_order ints), "sys_len", "ref_len" (ints),
                 "bp", "score" (floats)

What to fill in: ``ngram_counts``, ``clipped_matches``, ``closest_reference_length``,
``brevity_penalty`` and ``corpus_bleu_statistics``. This exercise works on Python lists;
it needs no tensors.

Hints:
    * An n-gram is a tuple of n consecutive tokens; a sentence of L tokens has
      ``max(L - n + 1, 0)`` of them. ``collections.Counter`` counts them.
    * Clip with the *largest* count among the references, not their sum and not the first
      reference's.
    * The counts and lengths are summed over the corpus *before* dividing: corpus BLEU is
      not the mean of sentence scores.

What you may use: Python, ``collections`` and ``math``.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): ``sacrebleu``, ``nltk``, the kit's metrics
(``kerasattn.metrics``), ``keras_hub`` / ``keras_nlp`` (their BLEU metric); NumPy on tensors;
the solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/26_bleu_statistics.py --backend all``.
"""
import math
from collections import Counter


def ngram_counts(tokens, n):
    """How often each n-gram occurs in a token list.

    Args:
        tokens: a list of token strings.
        n: the n-gram order (>= 1).

    Returns:
        A ``Counter`` mapping each n-gram (a tuple of n tokens) to its count.
    """
    # BEGIN YOUR CODE
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    # END YOUR CODE


def clipped_matches(hypothesis, references, n):
    """The clipped n-gram matches of one hypothesis, and its number of n-grams.

    Args:
        hypothesis: a token list.
        references: a list of token lists.
        n: the n-gram order.

    Returns:
        ``(matches, total)``: ints, ``sum_g min(count_hyp(g), max_ref count_ref(g))`` and
        the number of n-grams in the hypothesis.
    """
    # BEGIN YOUR CODE
    hyp = ngram_counts(hypothesis, n)
    max_ref = Counter()
    for ref in references:
        for gram, count in ngram_counts(ref, n).items():
            max_ref[gram] = max(max_ref[gram], count)  # the most in any one reference
    matches = sum(min(count, max_ref[gram]) for gram, count in hyp.items())
    return matches, sum(hyp.values())
    # END YOUR CODE


def closest_reference_length(hyp_length, ref_lengths):
    """The reference length closest to ``hyp_length`` (the shorter one on a tie)."""
    # BEGIN YOUR CODE
    return min(ref_lengths, key=lambda length: (abs(length - hyp_length), length))
    # END YOUR CODE


def brevity_penalty(sys_len, ref_len):
    """``1`` if ``sys_len >= ref_len``, else ``exp(1 - ref_len / sys_len)`` (0 if sys_len = 0)."""
    # BEGIN YOUR CODE
    if sys_len >= ref_len:
        return 1.0
    return math.exp(1.0 - ref_len / sys_len) if sys_len > 0 else 0.0
    # END YOUR CODE


def corpus_bleu_statistics(hypotheses, references, max_order=4):
    """Corpus BLEU and its statistics, as sacrebleu reports them.

    Args:
        hypotheses: one token list per sentence.
        references: per sentence, a list of reference token lists.
        max_order: the longest n-gram.

    Returns:
        Dict with "counts" and "totals" (lists of ``max_order`` ints), "sys_len" and
        "ref_len" (ints), "bp" and "score" (floats, the score in 0 .. 100).
    """
    # BEGIN YOUR CODE
    counts, totals = [0] * max_order, [0] * max_order
    sys_len = ref_len = 0
    for hyp, refs in zip(hypotheses, references):
        sys_len += len(hyp)
        ref_len += closest_reference_length(len(hyp), [len(r) for r in refs])
        for n in range(1, max_order + 1):
            matches, total = clipped_matches(hyp, refs, n)
            counts[n - 1] += matches
            totals[n - 1] += total
    bp = brevity_penalty(sys_len, ref_len)
    if min(counts) == 0:
        score = 0.0
    else:
        log_precision = sum(math.log(c / t) for c, t in zip(counts, totals)) / max_order
        score = 100.0 * bp * math.exp(log_precision)
    return {"counts": counts, "totals": totals, "sys_len": sys_len, "ref_len": ref_len,
            "bp": bp, "score": score}
    # END YOUR CODE
