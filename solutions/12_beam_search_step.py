"""Exercise 12: one step of beam search with a length penalty.

Greedy decoding keeps the single best token at every step; beam search keeps the ``K``
best *partial translations* (beams). One step extends every beam by every vocabulary word
(``K x V`` candidates per sentence) and keeps the ``K`` best candidates overall: the top-k
runs over beams *and* vocabulary together, not per beam.

Candidates are ranked by their length-normalised log-probability, with the simple power
normalisation (the d2l book uses it to choose among finished candidates; here it ranks
every candidate at every step, so one function does the whole step):

    score(y)  = sum_t log P(y_t | y_<t, x)           (kept in beam_scores)
    rank(y)   = score(y) / L(y)^alpha                 L = number of generated tokens

so that long translations are not punished just for having more (negative) terms. Wu et
al. (2016) use a smoothed penalty instead, ``lp(L) = ((5 + L) / 6)^alpha`` (the
kit's ``length_penalty_kind="gnmt"``, which its beam search uses with alpha = 0.6; lesson 04
compares the two); this exercise uses ``L^alpha`` (``length_penalty_kind="power"``).

A beam that has already produced ``<eos>`` is finished: it may only be "extended" by
``<eos>`` again, at no cost (its score and length stay the same); every other extension of
a finished beam is impossible (score -1e9). Unfinished beams grow by one token.

Shapes (symbols): ``B`` sentences, ``K`` beams, ``V`` vocabulary.

    beam_scores    : (B, K) float   summed log-probabilities so far
    beam_lengths   : (B, K) float   generated tokens so far (>= 1 for finished beams)
    finished       : (B, K) bool    the beam has produced <eos>
    next_log_probs : (B, K, V)      log P(next token | beam)
    returns a dict:
        "scores"   (B, K) float   summed log-probabilities of the kept candidates
        "lengths"  (B, K) float   their lengths
        "finished" (B, K) bool    whether they are finished
        "beams"    (B, K) int     which old beam each comes from (0..K-1)
        "tokens"   (B, K) int     the token appended (0..V-1)
    ordered best first (by rank).

What to fill in: ``beam_search_step``.

Hints:
    * Every candidate's score is its beam's score plus the token's log-probability: give
      the `(B, K)` scores a trailing axis and they broadcast against `(B, K, V)`. A
      finished beam's row is different: its score at ``eos_id``, -1e9 elsewhere
      (``ops.where`` chooses row by row).
    * A candidate is one token longer than its beam, unless the beam is finished.
    * Rank all ``K * V`` candidates of a sentence together (one flat axis), keep the best
      ``K``, and turn each flat index back into (beam, token).
    * The kept candidates' scores, lengths and flags are gathered with those indices;
      ``kerasattn hint 12`` has more, step by step.

What you may use: ``keras.ops``.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): ``kerasattn.decoding`` (the kit's beam search),
``kerasattn.models``, ``keras_hub`` / ``keras_nlp``; NumPy on tensors; the solutions,
``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/12_beam_search_step.py --backend all``.
"""
from keras import ops

NEG_INF = -1e9


def beam_search_step(beam_scores, beam_lengths, finished, next_log_probs, alpha=0.75,
                     eos_id=3):
    """Extend K beams by one token and keep the K best by length-normalised score.

    Args:
        beam_scores: `(B, K)` summed log-probabilities.
        beam_lengths: `(B, K)` lengths (float).
        finished: `(B, K)` bool.
        next_log_probs: `(B, K, V)` next-token log-probabilities.
        alpha: length-penalty exponent (0 = no normalisation).
        eos_id: id of `<eos>`.

    Returns:
        Dict with "scores", "lengths", "finished", "beams", "tokens", each `(B, K)`.
    """
    # BEGIN YOUR CODE
    beam_scores = ops.convert_to_tensor(beam_scores, "float32")
    beam_lengths = ops.convert_to_tensor(beam_lengths, "float32")
    finished = ops.convert_to_tensor(finished, "bool")
    next_log_probs = ops.convert_to_tensor(next_log_probs, "float32")
    batch, beams, vocab = next_log_probs.shape

    grown = beam_scores[:, :, None] + next_log_probs  # (B, K, V)
    is_eos = ops.cast(ops.one_hot(eos_id, vocab), "bool")  # (V,)
    frozen = ops.where(is_eos, beam_scores[:, :, None], NEG_INF)  # (B, K, V)
    cand_scores = ops.where(finished[:, :, None], frozen, grown)  # (B, K, V)
    step = 1.0 - ops.cast(finished, "float32")  # (B, K): 1 if the beam grows
    cand_lengths = (beam_lengths + step)[:, :, None]  # (B, K, 1)
    rank = cand_scores / ops.power(cand_lengths, alpha)  # (B, K, V) length-normalised

    flat_rank = ops.reshape(rank, (batch, beams * vocab))  # (B, K*V)
    _, flat_index = ops.top_k(flat_rank, k=beams)  # (B, K) best first
    parent = flat_index // vocab  # (B, K) old beam
    token = flat_index % vocab  # (B, K) appended token

    scores = ops.take_along_axis(ops.reshape(cand_scores, (batch, beams * vocab)),
                                 flat_index, axis=1)  # (B, K)
    lengths = ops.take_along_axis(beam_lengths + step, parent, axis=1)  # (B, K)
    done = ops.logical_or(ops.take_along_axis(finished, parent, axis=1),
                          ops.equal(token, eos_id))  # (B, K)
    return {"scores": scores, "lengths": lengths, "finished": done,
            "beams": parent, "tokens": token}
    # END YOUR CODE
