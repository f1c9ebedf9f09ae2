"""Strings in, strings out: :func:`translate` encodes, decodes (greedy or beam), detokenizes."""
from __future__ import annotations

import numpy as np

from kerasattn.decoding.beam import beam_search
from kerasattn.decoding.search import greedy_decode

__all__ = ["translate"]


def translate(model, sentences, src_vocab, tgt_vocab, *, method: str = "greedy",
              beam_size: int = 4, max_length: int | None = 50, alpha: float = 0.6,
              return_result: bool = False, width_multiple: int = 1, **kwargs):
    """Translate normalised source sentences to target text.

    Args:
        model: a trained model; sentences: list of source strings (already normalised as
            the training data was).
        src_vocab, tgt_vocab: the :class:`kerasattn.data.Vocabulary` of each side.
        method: "greedy" or "beam".
        beam_size, max_length, alpha: search settings; ``**kwargs`` go to the search.
            ``max_length=None`` caps the outputs at ``1.5 S + 5`` tokens for the longest
            source of ``S`` tokens.
        return_result: also return the :class:`DecodeResult` (attention for plots).
        width_multiple: pad the source batch to a width that is a multiple of this (the
            padding is masked, so the translations do not change; fewer distinct shapes
            mean fewer compilations on JAX / TensorFlow).

    Returns:
        A list of target strings (special tokens removed), or ``(texts, result)``.
    """
    if method not in ("greedy", "beam"):
        raise ValueError(f"`method` must be 'greedy' or 'beam'; received method={method!r}.")
    if isinstance(sentences, str):
        sentences = [sentences]
    ids = [src_vocab.encode(s) for s in sentences]
    if not ids or min(len(i) for i in ids) == 0:
        raise ValueError("`sentences` must be a non-empty list of non-empty strings; "
                         f"received {sentences!r}.")
    if isinstance(width_multiple, bool) or not isinstance(width_multiple, int) \
            or width_multiple < 1:
        raise ValueError(f"`width_multiple` must be an int >= 1; received "
                         f"width_multiple={width_multiple!r}.")
    longest = max(len(i) for i in ids)
    if max_length is None:
        max_length = int(1.5 * longest) + 5
    width = -(-longest // width_multiple) * width_multiple  # round up
    src = np.zeros((len(ids), width), dtype=np.int32)
    for row, i in enumerate(ids):
        src[row, :len(i)] = i
    if method == "greedy":
        result = greedy_decode(model, src, max_length=max_length, alpha=alpha, **kwargs)
    else:
        result = beam_search(model, src, beam_size=beam_size, max_length=max_length,
                             alpha=alpha, **kwargs)
    texts = [tgt_vocab.decode(ids) for ids in result.token_lists()]
    return (texts, result) if return_result else texts
