"""Text normalisation, word tokenization and detokenization shared by every corpus.

Normalisation works on words, as the course does (d2l's Tatoeba pipeline; the word or
subword tokenizer then runs on the normalised text): lowercase, non-breaking spaces replaced
by spaces, and a space inserted before punctuation, so that ``"Va !"`` and ``"Go."`` become
``"va !"`` and ``"go ."``. On the French side an elided article or pronoun is split off its
word, apostrophe kept on the left (``"l'arbre"`` -> ``"l' arbre"``, ``"j'aime"`` -> ``"j'
aime"``), as the Moses tokenizer does for French: the model then learns ``l'`` once instead
of one ``l'X`` token per noun. Words such as ``"aujourd'hui"`` or English ``"don't"`` stay
whole.

:func:`detokenize` undoes this so that BLEU can be computed by sacrebleu on ordinary text.
"""
from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize", "tokenize", "detokenize", "PUNCTUATION", "FRENCH_ELISIONS"]

#: Punctuation that gets a space in front of it (and is a token of its own).
PUNCTUATION = ",.!?;:"
#: French words that elide before a vowel: ``le -> l'``, ``que -> qu'`` ...
FRENCH_ELISIONS = ("c", "d", "j", "l", "m", "n", "s", "t", "qu", "jusqu", "lorsqu", "puisqu")

_SPACES = re.compile(r"[\u00a0\u202f\u2009\u2007\u200b\t ]+")
_APOSTROPHES = re.compile(r"[\u2019\u2018\u02bc`´]")
_PUNCT_NO_SPACE = re.compile(r"(?<=\S)([" + re.escape(PUNCTUATION) + r"])")
_ELISION = re.compile(r"(?<![\w'])(" + "|".join(FRENCH_ELISIONS) + r")'(?=\w)")
_SPACE_BEFORE_PUNCT = re.compile(r" ([" + re.escape(PUNCTUATION) + r"])")
_ELIDED_TOKEN = re.compile(r"(?<![\w'])(" + "|".join(FRENCH_ELISIONS) + r")' (?=\w)")


def normalize(text: str, lang: str = "en") -> str:
    """Normalise one sentence the way the whole kit does.

    Args:
        text: raw sentence.
        lang: ``"fr"`` additionally splits elided words (``l'arbre`` -> ``l' arbre``);
            any other value leaves apostrophes inside words alone.

    Returns:
        The normalised sentence: lowercase, single spaces, punctuation as separate tokens.
    """
    text = unicodedata.normalize("NFC", text)
    text = _APOSTROPHES.sub("'", text)
    text = _SPACES.sub(" ", text).strip().lower()
    text = _PUNCT_NO_SPACE.sub(r" \1", text)
    if lang == "fr":
        text = _ELISION.sub(r"\1' ", text)
    return " ".join(text.split())


def tokenize(text: str) -> list[str]:
    """Split an already normalised sentence into word tokens (on whitespace)."""
    return text.split()


def detokenize(text_or_tokens) -> str:
    """Turn normalised tokens back into ordinary text (the input of sacrebleu).

    Removes the space before punctuation and re-attaches elided words
    (``"l' arbre ."`` -> ``"l'arbre."``). Special tokens are not touched.

    Args:
        text_or_tokens: a normalised string or a list of tokens.

    Returns:
        The detokenized string.
    """
    text = text_or_tokens if isinstance(text_or_tokens, str) else " ".join(text_or_tokens)
    text = " ".join(text.split())
    text = _ELIDED_TOKEN.sub(r"\1'", text)
    return _SPACE_BEFORE_PUNCT.sub(r"\1", text)
