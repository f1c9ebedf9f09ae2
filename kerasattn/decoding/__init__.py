"""Decoding for every model of the kit: greedy, beam search, cached or not (token ids in
and out; text in and out is :class:`kerasattn.inference.Translator`).

- :func:`greedy_decode`, :func:`beam_search`: token ids in, :class:`DecodeResult` out
  (ids, log-probabilities, length-normalised scores, and the attention weights actually
  used at every step, for plotting);
- :class:`Stepper`: one step of decoding, incremental (GRU state / K/V caches from
  :func:`kerasattn.models.incremental_decoder`) or re-running the full model on the prefix.
"""
from kerasattn.decoding.beam import beam_search, gnmt_coverage_penalty
from kerasattn.decoding.search import (
    BOS_ID,
    EOS_ID,
    LENGTH_PENALTIES,
    PAD_ID,
    DecodeResult,
    Hypothesis,
    Stepper,
    greedy_decode,
    greedy_loop,
    length_penalty,
    log_softmax,
)

__all__ = [
    "BOS_ID",
    "EOS_ID",
    "LENGTH_PENALTIES",
    "PAD_ID",
    "DecodeResult",
    "Hypothesis",
    "Stepper",
    "beam_search",
    "gnmt_coverage_penalty",
    "greedy_decode",
    "greedy_loop",
    "length_penalty",
    "log_softmax",
]
