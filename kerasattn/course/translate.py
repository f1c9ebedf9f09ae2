"""Translating with a trained model: batches, one sentence with its attention."""
from __future__ import annotations

from typing import Sequence


def translate_batch(model, sources: Sequence[str], src_vocab, tgt_vocab, beam: int = 1,
                    max_length: int | None = None, attention: bool = False,
                    cache: bool = True, chunk: int = 128, progress: bool = False,
                    compile="auto"):
    """Translate normalised ``sources``; returns ``(translations, attention_or_None)``.

    Sentences are decoded in chunks of similar length (greedy when ``beam == 1``, else beam
    search). With ``attention=True`` the second value is a list with one dict per sentence,
    ``{"cross": (T_out, L, h, S), "self": (T_out, L, h, T_out)}``: the weights the decoder
    actually used (see :class:`kerasattn.decoding.DecodeResult`).
    """
    import numpy as np

    from kerasattn import decoding

    sources = list(sources)
    if not sources:
        return [], ([] if attention else None)
    # lengths in the source tokenizer's tokens (words or subword pieces: a Japanese
    # sentence has no spaces, so its word count says nothing about its length)
    lengths = [len(src_vocab.encode(s)) for s in sources]
    order = sorted(range(len(sources)), key=lambda i: lengths[i])
    texts = [None] * len(sources)
    atts = [None] * len(sources)
    starts = range(0, len(order), chunk)
    if progress and len(starts) > 1:
        from tqdm import tqdm
        starts = tqdm(starts, desc="decoding", unit="batch", leave=False)
    for k in starts:
        idx = order[k:k + chunk]
        batch = [sources[i] for i in idx]
        longest = max(lengths[i] for i in idx)
        # Output cap and source width rounded up to multiples of 16 and 8: each distinct
        # (S, max_length) is one compilation of the decoding loop on JAX / TensorFlow.
        limit = max_length or -(-(int(1.5 * longest) + 5) // 16) * 16
        out, result = decoding.translate(
            model, batch, src_vocab, tgt_vocab, method="greedy" if beam == 1 else "beam",
            beam_size=beam, max_length=limit, return_result=True, cache=cache,
            compile=compile, width_multiple=8)
        for j, i in enumerate(idx):
            texts[i] = out[j]
            if attention:
                n = int(result.lengths[j])
                s_len = lengths[i]
                rec = {}
                for name, a in (result.attention or {}).items():
                    a = np.asarray(a[j, :n])                     # (T_out, L, h, K)
                    rec[name] = a[..., :s_len] if name == "cross" else a
                atts[i] = rec or None
    return texts, (atts if attention else None)


def attention_record(att, layer: int = -1, kind: str = "cross"):
    """Pick one layer of the captured attention of one sentence -> ``(h, T_out, K)``.

    Accepts a dict ``{"cross": (T_out, L, h, K), "self": ...}`` (what the decoders capture
    per step, stacked over steps), or an array of one of the shapes ``(T_out, K)``,
    ``(h, T_out, K)``, ``(T_out, L, h, K)``.
    """
    import numpy as np

    if att is None:
        return None
    if isinstance(att, dict):
        if kind not in att or att[kind] is None:
            return None
        att = att[kind]
    a = np.asarray(att, dtype=float)
    if a.ndim == 2:
        return a[None]
    if a.ndim == 3:
        return a
    if a.ndim == 4:
        return np.transpose(a[:, layer], (1, 0, 2))  # (T, h, K) -> (h, T, K)
    raise ValueError(f"unexpected attention shape {a.shape}")




def tokens_of(vocab, text: str) -> list[str]:
    """The tokens ``vocab`` reads ``text`` as: its words, or its subword pieces."""
    pieces = getattr(vocab, "pieces", None)
    return pieces(text) if pieces is not None else text.split()


def translate_with_attention(model, sentence: str, src_vocab, tgt_vocab, beam: int = 1,
                             max_length: int | None = None, compile="auto",
                             src_lang: str = "en") -> dict:
    """Translate one sentence and capture its attention.

    Args:
        src_lang: the language code the source side was normalised with.

    Returns:
        dict(translation, source_tokens, target_tokens, attention, unknown_words).
    """
    from kerasattn.data.text import normalize

    norm = normalize(sentence, src_lang)
    src_tokens = tokens_of(src_vocab, norm)
    unknown = ([w for w in src_tokens if w not in src_vocab]
               if not hasattr(src_vocab, "pieces") else [])
    hyps, att = translate_batch(model, [norm], src_vocab, tgt_vocab, beam=beam,
                                attention=True, max_length=max_length, compile=compile)
    translation = hyps[0]
    tgt_tokens = tokens_of(tgt_vocab, translation)
    rec = att[0] if att else None
    n_out = next(iter(rec.values())).shape[0] if rec else len(tgt_tokens) + 1
    if len(tgt_tokens) < n_out:          # the decoder ended with <eos>
        tgt_tokens = tgt_tokens + ["<eos>"]
    tgt_tokens = tgt_tokens[:n_out]
    return dict(translation=translation, source_tokens=src_tokens,
                target_tokens=tgt_tokens, attention=att[0] if att else None,
                unknown_words=unknown)


