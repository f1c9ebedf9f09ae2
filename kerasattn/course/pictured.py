"""Which test sentence a lesson's attention figures picture on a real corpus (``--data``).

The rule (:func:`choose_pictured`):

1. *Candidates*: the distinct sources of the test split with no token outside the source
   vocabulary (a word tokenizer's ``<unk>``; subword tokens spell rare words with known
   pieces, so almost every source qualifies) and ``min_len`` to ``max_len`` tokens. When
   none has such a length, the nearest lengths are taken instead, and the choice says so.
   At most ``limit`` candidates, spread evenly over their lengths.
2. *Translation*: the model translates the candidates in one batch (greedy, with the
   attention weights it uses).
3. *Best*: among the candidates whose translation holds no ``<unk>`` (nor another
   special token before its final ``<eos>``), at least ``min_output`` tokens and no
   token filling more than half of it (an under-trained model repeats one token, often
   the final punctuation), the one nearest the length range (all of them are in it unless
   the nearest lengths were taken), then with the highest sentence BLEU against the
   references of its source; ties (an under-trained model scores 0 on all of them) go to
   the most concentrated cross-attention (the mean over heads and output steps of the
   step's largest weight), then to the source text. When no translation qualifies, the
   best of all of them by the same order, and the choice says so.

Everything is deterministic: the test split is fixed by the seed, and so is the model.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Callable, Sequence

import numpy as np

from kerasattn.course.data import spread
from kerasattn.data.vocab import SPECIAL_TOKENS

UNK = "<unk>"
EOS = "<eos>"


@dataclasses.dataclass
class Pictured:
    """The sentence a figure pictures and why it was chosen.

    Attributes:
        source: the test source (normalised).
        reference: its first reference translation.
        translation: the model's :class:`kerasattn.inference.Translation` of it (with the
            attention weights), or None when no model translated the candidates.
        tokens: source tokens (words or subword pieces).
        bleu: sentence BLEU of the translation against the source's references (None
            without a model).
        concentration: mean largest cross-attention weight per output step (None without
            cross-attention).
        candidates: how many test sources were translated and compared.
        lengths: ``(shortest, longest)`` candidate length in tokens.
        notes: the fallbacks taken, in words (empty when the rule applied as stated).
    """

    source: str
    reference: str
    translation: object = None
    tokens: int = 0
    bleu: float | None = None
    concentration: float | None = None
    candidates: int = 0
    lengths: tuple[int, int] = (0, 0)
    notes: list = dataclasses.field(default_factory=list)

    def describe(self) -> str:
        """What was chosen and by which rule, in a few lines."""
        lo, hi = self.lengths
        span = f"{lo}" if lo == hi else f"{lo}-{hi}"
        if self.translation is None:
            rule = (f"of {self.candidates} test sources of {span} tokens with no unknown "
                    f"token, the one nearest the middle of the length range")
        else:
            rule = (f"of {self.candidates} test sources of {span} tokens with no unknown "
                    f"token, the one whose translation has no {UNK} and the highest "
                    f"sentence BLEU (ties: the most concentrated attention)")
        lines = [f"pictured sentence ({rule}):", f"  source      {self.source}",
                 f"  reference   {self.reference}"]
        if self.translation is not None:
            measures = f"BLEU {self.bleu:.1f}"
            if self.concentration is not None:
                measures += f", mean largest attention weight {self.concentration:.2f}"
            lines.append(f"  translation {self.translation.text}   ({measures})")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def concentration(translation) -> float | None:
    """Mean over heads and output steps of the step's largest cross-attention weight.

    The final ``<eos>`` step is left out when other steps exist. None when the translation
    carries no cross-attention (``seq2seq``, or decoded without ``attention=True``).
    """
    if translation is None or not getattr(translation, "attention", None):
        return None
    weights = translation.attention_map("cross")                 # (h, T_out, S)
    if weights is None or weights.size == 0:
        return None
    rows = weights.shape[1]
    if rows > 1 and translation.target_tokens and translation.target_tokens[-1] == EOS:
        weights = weights[:, :rows - 1]
    return float(np.mean(np.max(weights, axis=-1)))


def sentence_bleu(hypothesis: str, references: Sequence[str], tokenize: str = "13a") -> float:
    """sacrebleu's smoothed sentence BLEU (0-100) of the kit's normalised strings."""
    import sacrebleu

    from kerasattn.data.text import detokenize

    return float(sacrebleu.sentence_bleu(detokenize(hypothesis),
                                         [detokenize(r) for r in references],
                                         tokenize=tokenize).score)


def _repeats(output: Sequence[str]) -> bool:
    """One token fills more than half of ``output`` (and more than twice)."""
    return max(collections.Counter(output).values(), default=0) > max(2, len(output) // 2)


def choose_pictured(pairs: Sequence[tuple[str, str]], src_vocab,
                    decode: Callable[[list], list] | None = None, min_len: int = 6,
                    max_len: int = 12, limit: int = 64, min_output: int = 2,
                    tokenize: str = "13a") -> Pictured:
    """Choose the test sentence to picture (the rule is in this module's docstring).

    Args:
        pairs: the test split, ``(source, target)`` normalised pairs.
        src_vocab: the source tokenizer (a ``Vocabulary`` or ``SubwordTokenizer``).
        decode: translates a list of normalised sources into
            :class:`kerasattn.inference.Translation` objects with their attention
            (``Translator.decode(..., normalized=True, detokenized=False,
            attention=True)``), or None to choose by source alone.
        min_len, max_len: the source length range, in tokens.
        limit: the most candidates translated.
        min_output: the fewest tokens (``<eos>`` aside) of a qualifying translation.
        tokenize: sacrebleu's tokenizer for the target language.

    Returns:
        A :class:`Pictured`.

    Raises:
        ValueError: ``pairs`` holds no non-blank source, or ``min_len > max_len``.
    """
    if min_len > max_len:
        raise ValueError(f"min_len must be <= max_len; received min_len={min_len}, "
                         f"max_len={max_len}")
    references: dict[str, list[str]] = {}
    for source, target in pairs:
        if source.strip():
            references.setdefault(source, []).append(target)
    if not references:
        raise ValueError("pairs holds no non-blank source sentence to picture")
    notes = []
    unk_id = src_vocab.token_to_id(UNK)
    lengths = {s: len(src_vocab.encode(s)) for s in references}
    known = [s for s in references if unk_id not in src_vocab.encode(s)]
    if not known:
        notes.append("every test source holds a token outside the source vocabulary: "
                     "chosen among all of them")
        known = list(references)

    def distance(s):
        n = lengths[s]
        return max(min_len - n, n - max_len, 0)

    ranked = sorted(known, key=lambda s: (distance(s), s))
    if distance(ranked[0]) == 0:
        candidates = [s for s in ranked if distance(s) == 0]
    else:  # the nearest lengths, enough of them to compare
        enough = min(len(ranked), 8)
        cut = distance(ranked[enough - 1])
        candidates = [s for s in ranked if distance(s) <= cut]
        n = sorted(lengths[s] for s in candidates)
        notes.append(f"no test source of {min_len}-{max_len} tokens without unknown tokens: "
                     f"the nearest lengths ({n[0]}-{n[-1]} tokens) instead")
    candidates = spread(sorted(candidates, key=lambda s: (lengths[s], s)), limit)
    span = (min(lengths[s] for s in candidates), max(lengths[s] for s in candidates))
    if decode is None:
        middle = (min_len + max_len) / 2
        best = min(candidates, key=lambda s: (abs(lengths[s] - middle), s))
        return Pictured(source=best, reference=references[best][0], tokens=lengths[best],
                        candidates=len(candidates), lengths=span, notes=notes)
    translations = decode(candidates)
    scored = []
    for source, t in zip(candidates, translations):
        output = list(t.target_tokens)
        if output and output[-1] == EOS:
            output = output[:-1]
        qualifies = (not set(output) & set(SPECIAL_TOKENS) and len(output) >= min_output
                     and not _repeats(output))
        bleu = sentence_bleu(t.text, references[source], tokenize) if output else 0.0
        scored.append((qualifies, bleu, concentration(t), source, t))
    pool = [row for row in scored if row[0]]
    if not pool:
        notes.append(f"no translation of the {len(candidates)} candidates qualifies (free "
                     f"of {UNK} and other special tokens, {min_output} tokens or more, no "
                     f"token filling over half of it): the model has learned little so "
                     f"far; the best of all of them instead")
        pool = scored
    _, bleu, conc, source, t = min(
        pool, key=lambda row: (distance(row[3]), -round(row[1], 1),
                               -round(row[2] or 0.0, 4), row[3]))
    return Pictured(source=source, reference=references[source][0], translation=t,
                    tokens=lengths[source], bleu=bleu, concentration=conc,
                    candidates=len(candidates), lengths=span, notes=notes)
