"""The built-in English-to-French corpus: a small grammar that needs no download.

Why a grammar? The course's headline experiment (Bahdanau et al. 2015, Fig. 2) is that a
fixed-context encoder-decoder degrades on long sentences while attention does not. To show
it on a laptop CPU in minutes the data must be (1) small in vocabulary, (2) exactly
translatable, so a perfect model scores BLEU 100, and (3) long enough and reordered enough
that a single context vector is a bottleneck. Real French phenomena make the alignment
interesting:

* adjective-noun reordering: ``the black cat`` -> ``le chat noir``; several post-nominal
  adjectives come out in mirror order: ``the european economic area`` ->
  ``la zone économique européenne``; size/age adjectives stay in front: ``le grand chien``;
* gender and number agreement of determiners, adjectives, verbs and predicate adjectives
  (``les maisons sont petites``), even across a relative clause
  (``les chats qui voient le chien``);
* elision and contraction: ``l' arbre``, ``j' aime``, ``n' est pas``, ``qu' il``,
  ``du jardin``, ``au marché``, ``bel arbre``, ``cet arbre``;
* negation around the verb (``does not see`` -> ``ne voit pas``) and adverbs after it
  (``often sees`` -> ``voit souvent``);
* relative clauses (``qui``/``que``) and clauses coordinated by ``et``, ``mais``,
  ``parce que``, ``quand``, so that sentences run from 3 to 40+ tokens.

Every source sentence has exactly one correct translation (the grammar is a function from
English to French), the text is normalised exactly like :func:`kerasattn.data.normalize`
makes real corpora, and the generator emits the word alignment it built, so the corpus can
report how often translation reorders words.

Example::

    corpus = builtin_corpus()          # about 2 s, deterministic
    print(corpus.format_stats())
    src, tgt = corpus.train[0]
"""
from __future__ import annotations

import itertools
import random
import time

from kerasattn.data import lexicon as L
from kerasattn.data.corpus import Corpus

__all__ = ["generate_corpus", "builtin_corpus", "generate_pair", "DEFAULTS"]

#: Default sizes of the built-in corpus (see :func:`builtin_corpus`).
DEFAULTS = dict(n_train=10000, n_valid=1000, n_test=1000, n_test_long=200, min_len=3,
                max_train_len=30, max_test_len=40)

_VOWELS = frozenset("aeiouyéèêëàâîïôûœh")  # every French h-word here is a silent h
_ELIDABLE = {"le": "l'", "la": "l'", "je": "j'", "ne": "n'", "de": "d'", "que": "qu'"}
_CONTRACT = {("de", "le"): "du", ("de", "les"): "des", ("à", "le"): "au", ("à", "les"): "aux"}
_PERSON_INDEX = {"1sg": 0, "3sg": 1, "1pl": 2, "3pl": 3}


def _pick(rng: random.Random, seq):
    """``rng.choice`` without its overhead (the generator calls it ~50 times a sentence)."""
    return seq[int(rng.random() * len(seq))]


def _starts_with_vowel(word: str) -> bool:
    return word[0] in _VOWELS


def _adjective(entry):
    en, m, f, mpl, fpl, vowel = entry
    f = f or (m if m.endswith("e") else m + "e")
    mpl = mpl or (m if m[-1] in "sx" else m + "s")
    fpl = fpl or (f if f[-1] in "sx" else f + "s")
    return en, {("m", "sg"): m, ("f", "sg"): f, ("m", "pl"): mpl, ("f", "pl"): fpl}, vowel


def _noun(entry):
    en, en_pl, fr, fr_pl, gender = entry
    if not en_pl:
        en_pl = en + "s"
    if not fr_pl:
        fr_pl = fr if fr[-1] in "sx" else fr + "s"
    return en, en_pl, fr, fr_pl, gender


_ANIMATE = [_noun(e) for e in L.ANIMATE_NOUNS]
_THINGS = [_noun(e) for e in L.THING_NOUNS]
_ALL_NOUNS = _ANIMATE + _THINGS
_PRE_ADJ = [_adjective(e) for e in L.PRE_ADJECTIVES]
_POST_ADJ = {k: [_adjective(e) for e in v] for k, v in L.POST_ADJECTIVES.items()}
_POST_CLASSES = sorted(_POST_ADJ)
_PRED_ADJ = _PRE_ADJ + _POST_ADJ[0] + _POST_ADJ[1]
_DETS = {"sg": ["the"] * 5 + [d for d, v in L.DETERMINERS.items() if v[0] in ("sg", "any")
                              and d != "the"],
         "pl": ["the"] * 4 + [d for d, v in L.DETERMINERS.items() if v[0] in ("pl", "any")
                              and d != "the"]}


class _Builder:
    """Hands out word atoms for one sentence.

    Every token is tagged with an atom (one unit of meaning); English and French tokens
    that share an atom are aligned. A French token may carry several atoms (after
    ``de + le -> du``); an English token may carry none (``do`` in ``do not``).
    """

    def __init__(self):
        self.atom = itertools.count(1).__next__


class _Generator:
    """The grammar. Every method returns ``(en_tokens, fr_tokens, ...)`` where a token is
    ``[word, atom]`` in English and ``[word, (atoms...)]`` in French."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.b = _Builder()

    # ------------------------------------------------------------ noun phrases
    def noun_phrase(self, r: float, animate=None, allow_rel=False, number=None):
        """Returns (en_tokens, fr_tokens, person, gender); tokens are [word, atoms]."""
        rng, b = self.rng, self.b
        pool = _ALL_NOUNS if animate is None else (_ANIMATE if animate else _THINGS)
        en_sg, en_pl, fr_sg, fr_pl, gender = _pick(rng, pool)
        if number is None:
            number = "pl" if rng.random() < 0.35 else "sg"
        det = _pick(rng, _DETS[number])
        a_det, a_noun = b.atom(), b.atom()
        pre = _pick(rng, _PRE_ADJ) if rng.random() < 0.08 + 0.25 * r else None
        u = rng.random()
        n_post = 2 if u < 0.04 + 0.2 * r else (1 if u < 0.2 + 0.4 * r else 0)
        if n_post == 1:
            classes = [_pick(rng, _POST_CLASSES)]
        else:
            classes = sorted(rng.sample(_POST_CLASSES, n_post)) if n_post else []
        posts = [(_pick(rng, _POST_ADJ[c]), b.atom()) for c in classes]
        a_pre = b.atom() if pre else None

        fr_noun = fr_sg if number == "sg" else fr_pl
        en_noun = en_sg if number == "sg" else en_pl
        en = [[det, a_det]]
        if pre:
            en.append([pre[0], a_pre])
        en += [[adj[0], a] for adj, a in posts]
        en.append([en_noun, a_noun])

        fr_after_det = []
        if pre:
            form = pre[1][(gender, number)]
            if gender == "m" and number == "sg" and pre[2] and _starts_with_vowel(fr_noun):
                form = pre[2]  # bel arbre, vieil homme, nouvel avion
            fr_after_det.append([form, (a_pre,)])
        fr_after_det.append([fr_noun, (a_noun,)])
        fr_after_det += [[adj[1][(gender, number)], (a,)] for adj, a in reversed(posts)]
        _, m_sg, f_sg, pl, m_vowel, f_vowel = L.DETERMINERS[det]
        if number == "pl":
            fr_det = pl
        else:
            fr_det = m_sg if gender == "m" else f_sg
            vowel_form = m_vowel if gender == "m" else f_vowel
            if vowel_form and _starts_with_vowel(fr_after_det[0][0]):
                fr_det = vowel_form  # cet arbre, mon école
        fr = [[fr_det, (a_det,)]] + fr_after_det
        person = "3sg" if number == "sg" else "3pl"
        if allow_rel and rng.random() < 0.45 * r:
            rel_en, rel_fr = self.relative_clause(r, person)
            en += rel_en
            fr += rel_fr
        return en, fr, person, gender

    def relative_clause(self, r: float, head_person: str):
        rng, b = self.rng, self.b
        a_rel = b.atom()
        if rng.random() < 0.55:  # subject relative: the cat that sees the dog
            en, fr = [["that", a_rel]], [["qui", (a_rel,)]]
            if rng.random() < 0.3:
                v_en, v_fr = self.verb(head_person, _pick(rng, L.INTRANSITIVE_VERBS),
                                       self.polarity(0.5 * r))
                return en + v_en, fr + v_fr
            v_en, v_fr = self.verb(head_person, _pick(rng, L.TRANSITIVE_VERBS),
                                   self.polarity(0.5 * r))
            o_en, o_fr, _, _ = self.noun_phrase(0.3 * r)
            return en + v_en + o_en, fr + v_fr + o_fr
        # object relative: the cat that the dog sees
        en, fr = [["that", a_rel]], [["que", (a_rel,)]]
        s_en, s_fr, person, _ = self.subject(0.3 * r, allow_rel=False, allow_coord=False)
        v_en, v_fr = self.verb(person, _pick(rng, L.TRANSITIVE_VERBS), self.polarity(0.5 * r))
        return en + s_en + v_en, fr + s_fr + v_fr

    def subject(self, r: float, allow_rel=True, allow_coord=True):
        rng, b = self.rng, self.b
        u = rng.random()
        if u < 0.3:
            en_w, fr_w, person, gender = _pick(rng, L.PRONOUNS)
            a = b.atom()
            return [[en_w, a]], [[fr_w, (a,)]], person, gender
        if allow_coord and u < 0.3 + 0.1 * r:
            e1, f1, _, g1 = self.noun_phrase(0.3 * r, animate=True)
            e2, f2, _, g2 = self.noun_phrase(0.3 * r, animate=True)
            a = b.atom()
            gender = "m" if "m" in (g1, g2) else "f"
            return e1 + [["and", a]] + e2, f1 + [["et", (a,)]] + f2, "3pl", gender
        return self.noun_phrase(r, animate=True, allow_rel=allow_rel)[:4]

    # ------------------------------------------------------------ verbs
    def polarity(self, r: float) -> str:
        u = self.rng.random()
        if u < 0.12 + 0.1 * r:
            return "not"
        if u < 0.16 + 0.14 * r:
            return "never"
        if u < 0.22 + 0.2 * r:
            return "adverb"
        return "plain"

    def verb(self, person: str, entry, polarity: str):
        """English and French tokens of a present-tense verb with its polarity."""
        b = self.b
        base, third, *fr_forms = entry
        fr_v = fr_forms[_PERSON_INDEX[person]]
        a_v = b.atom()
        if polarity == "not":
            a_n = b.atom()
            aux = "does" if person == "3sg" else "do"
            en = [[aux, None], ["not", a_n], [base, a_v]]
            fr = [["ne", (a_n,)], [fr_v, (a_v,)], ["pas", (a_n,)]]
        elif polarity == "never":
            a_n = b.atom()
            en = [["never", a_n], [third if person == "3sg" else base, a_v]]
            fr = [["ne", (a_n,)], [fr_v, (a_v,)], ["jamais", (a_n,)]]
        elif polarity == "adverb":
            adv_en, adv_fr = _pick(self.rng, L.PRE_VERB_ADVERBS)
            a_a = b.atom()
            en = [[adv_en, a_a], [third if person == "3sg" else base, a_v]]
            fr = [[fr_v, (a_v,)], [adv_fr, (a_a,)]]
        else:
            en = [[third if person == "3sg" else base, a_v]]
            fr = [[fr_v, (a_v,)]]
        return en, fr

    def copula(self, person: str, negative: bool):
        b = self.b
        en_be, fr_be = L.BE[person]
        a_v = b.atom()
        if negative:
            a_n = b.atom()
            return ([[en_be, a_v], ["not", a_n]],
                    [["ne", (a_n,)], [fr_be, (a_v,)], ["pas", (a_n,)]])
        return [[en_be, a_v]], [[fr_be, (a_v,)]]

    def chunk(self, en_words, fr_words):
        a = self.b.atom()
        return [[w, a] for w in en_words], [[w, (a,)] for w in fr_words]

    def prep_phrase(self, r: float):
        en_p, fr_p = _pick(self.rng, L.PREPOSITIONS)
        p_en, p_fr = self.chunk(en_p, fr_p)
        n_en, n_fr, _, _ = self.noun_phrase(0.5 * r)
        return p_en + n_en, p_fr + n_fr

    # ------------------------------------------------------------ clauses
    def clause(self, r: float):
        rng = self.rng
        u = rng.random()
        s_en, s_fr, person, gender = self.subject(r)
        if u < 0.5:      # transitive: S V O [PP]
            v_en, v_fr = self.verb(person, _pick(rng, L.TRANSITIVE_VERBS), self.polarity(r))
            o_en, o_fr, _, _ = self.noun_phrase(r, allow_rel=True)
            en, fr = s_en + v_en + o_en, s_fr + v_fr + o_fr
        elif u < 0.68:   # intransitive: S V [PP]
            v_en, v_fr = self.verb(person, _pick(rng, L.INTRANSITIVE_VERBS), self.polarity(r))
            en, fr = s_en + v_en, s_fr + v_fr
        elif u < 0.8:    # motion: S goes to / comes from NP
            polarity = "not" if rng.random() < 0.15 else "plain"
            if rng.random() < 0.6:
                v_en, v_fr = self.verb(person, L.GO, polarity)
                p_en, p_fr = self.chunk(["to"], ["à"])
            else:
                v_en, v_fr = self.verb(person, L.COME, polarity)
                p_en, p_fr = self.chunk(["from"], ["de"])
            n_en, n_fr, _, _ = self.noun_phrase(0.5 * r, animate=False)
            en, fr = s_en + v_en + p_en + n_en, s_fr + v_fr + p_fr + n_fr
        elif gender is not None:  # predicate adjective: S is [not] ADJ (agreement)
            c_en, c_fr = self.copula(person, rng.random() < 0.2)
            adj = _pick(rng, _PRED_ADJ)
            a_en, a_fr = self.chunk([adj[0]], [adj[1][(gender, "pl" if person[1:] == "pl"
                                                        else "sg")]])
            return s_en + c_en + a_en, s_fr + c_fr + a_fr
        else:            # location: S is [not] PREP NP
            c_en, c_fr = self.copula(person, rng.random() < 0.2)
            p_en, p_fr = self.prep_phrase(r)
            return s_en + c_en + p_en, s_fr + c_fr + p_fr
        if rng.random() < 0.15 + 0.35 * r:
            p_en, p_fr = self.prep_phrase(r)
            en, fr = en + p_en, fr + p_fr
        if rng.random() < 0.05 + 0.15 * r:
            t_en, t_fr = self.chunk(*_pick(rng, L.TIME_ADVERBIALS))
            en, fr = en + t_en, fr + t_fr
        return en, fr

    def sentence(self, target_len: int):
        """A sentence of about ``target_len`` tokens.

        Clauses are added while the budget lasts; the last one is drawn (up to 5 times, the
        closest kept) until it fills the rest of the budget within one token. A clause of
        richness ``r`` has about ``5.6 + 5.1 r`` tokens (measured).
        """
        rng = self.rng
        budget = target_len - 1  # the final "."
        en, fr = [], []
        while True:
            last = budget <= 14
            if last:
                r = min(1.0, max(0.0, (budget - 5.6) / 5.1))
            else:
                r = rng.uniform(0.3, 1.0)
            best = None
            for _ in range(5):
                e, f = self.clause(r)
                n = len(e)
                gap = abs(n - budget) if last else max(0, n - (budget - 4))
                if best is None or gap < best[0]:
                    best = (gap, e, f)
                if gap <= 1 if last else gap == 0:
                    break
            _, e, f = best
            n = len(e)
            en, fr = en + e, fr + f
            budget -= n
            if last or budget < 4:  # no room for a linker and another clause ("and i run")
                break
            c_en, c_fr = self.chunk(*_pick(rng, L.CONJUNCTIONS))
            en, fr = en + c_en, fr + c_fr
            budget -= len(c_en)
        p_en, p_fr = self.chunk(["."], ["."])
        return en + p_en, fr + p_fr


def _finish(en, fr):
    """Apply English a/an and French elision/contraction; return strings and alignment."""
    en_words = [w for w, _ in en]
    for i in range(len(en_words) - 1):
        if en_words[i] == "a" and en_words[i + 1][0] in "aeiou" \
                and not en_words[i + 1].startswith("eu"):
            en_words[i] = "an"
    words = [w for w, _ in fr]
    atoms = [a for _, a in fr]
    for j in range(len(words) - 2, -1, -1):  # right to left: the next word is final
        if words[j] in _ELIDABLE and _starts_with_vowel(words[j + 1]):
            words[j] = _ELIDABLE[words[j]]
    out_w, out_a = [], []
    for w, a in zip(words, atoms):
        if out_w and (out_w[-1], w) in _CONTRACT:
            out_w[-1] = _CONTRACT[(out_w[-1], w)]
            out_a[-1] = out_a[-1] + a
        else:
            out_w.append(w)
            out_a.append(a)
    position = {}
    for j, a in enumerate(out_a):
        for atom in a:
            position.setdefault(atom, []).append(j)
    alignment = [(i, j) for i, (_, atom) in enumerate(en) if atom is not None
                 for j in position.get(atom, ())]
    return " ".join(en_words), " ".join(out_w), alignment


def generate_pair(rng: random.Random, target_len: int, lo: int = 1,
                  hi: int | None = None, tries: int = 6):
    """Generate one ``(source, target, alignment)``.

    The source has about ``target_len`` tokens (within 2 when one of ``tries`` attempts
    manages it, else the closest attempt) and at least ``lo``, at most ``hi`` tokens when
    an attempt manages that (check the result if you need a hard bound).
    """
    hi = target_len if hi is None else hi
    best, best_gap = None, None
    for _ in range(tries):
        en, fr = _Generator(rng).sentence(target_len)
        n = len(en)
        gap = abs(n - target_len) + (0 if lo <= n <= hi else 1000)
        if best is None or gap < best_gap:
            best, best_gap = (en, fr), gap
        if gap <= 2:
            break
    return _finish(*best)


def _generate_split(rng, n, lo, hi, seen, max_len_hard):
    pairs, aligns = [], []
    guard = 0
    while len(pairs) < n:
        guard += 1
        if guard > 50 * n + 1000:
            raise RuntimeError(f"could not generate {n} distinct pairs with source length "
                               f"{lo}..{hi}; lower the size or widen the length range")
        src, tgt, al = generate_pair(rng, rng.randint(lo, hi), lo, max_len_hard)
        n_tok = len(src.split())
        if src in seen or n_tok < lo or n_tok > max_len_hard:
            continue
        seen.add(src)
        pairs.append((src, tgt))
        aligns.append(al)
    return pairs, aligns


def generate_corpus(n_train: int = DEFAULTS["n_train"], n_valid: int = DEFAULTS["n_valid"],
                    n_test: int = DEFAULTS["n_test"], n_test_long: int = DEFAULTS["n_test_long"],
                    seed: int = 0, min_len: int = DEFAULTS["min_len"],
                    max_train_len: int = DEFAULTS["max_train_len"],
                    max_test_len: int = DEFAULTS["max_test_len"]) -> Corpus:
    """Generate the built-in English-to-French corpus.

    Source lengths (in tokens, final ``.`` included) are drawn uniformly from
    ``[min_len, max_train_len]`` for train, valid and the first ``n_test`` test pairs; the
    last ``n_test_long`` test pairs are longer than anything in training, drawn from
    ``[max_train_len + 1, max_test_len]``. No source sentence appears in two splits (or
    twice in one). Each split has its own random stream, so the valid and test splits do
    not change when ``n_train`` does. The last few corpora are cached in the process, so
    asking again for the same corpus is instant.

    Args:
        n_train, n_valid, n_test: number of pairs with sources of length
            ``min_len..max_train_len``.
        n_test_long: extra test pairs with sources of length
            ``max_train_len + 1..max_test_len`` (0 for none).
        seed: integer seed; the same seed gives the same corpus on every machine.
        min_len: shortest source (>= 3: "i sleep .").
        max_train_len: longest source in train and valid.
        max_test_len: longest source in the long part of the test split.

    Returns:
        A :class:`~kerasattn.data.Corpus` with ``alignments`` (the generator's word links)
        and ``info`` (the settings and the generation time in seconds).
    """
    for name, value in dict(n_train=n_train, n_valid=n_valid, n_test=n_test,
                            n_test_long=n_test_long).items():
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative int, received {value!r}")
    if n_train < 1:
        raise ValueError(f"n_train must be >= 1, received {n_train}")
    if not 3 <= min_len <= max_train_len:
        raise ValueError(f"need 3 <= min_len <= max_train_len, received min_len={min_len}, "
                         f"max_train_len={max_train_len}")
    if n_test_long and max_test_len <= max_train_len:
        raise ValueError(f"max_test_len must exceed max_train_len={max_train_len} when "
                         f"n_test_long > 0, received max_test_len={max_test_len}")
    key = (n_train, n_valid, n_test, n_test_long, seed, min_len, max_train_len, max_test_len)
    if key in _CACHE:  # same arguments, same corpus: hand out a fresh copy
        return _copy(_CACHE[key])
    start = time.perf_counter()
    seen: set[str] = set()
    stream = lambda split: random.Random(f"kerasattn-builtin-{seed}-{split}")  # noqa: E731
    # test first, then valid, then train: held-out splits never depend on n_train
    test, test_al = _generate_split(stream("test"), n_test, min_len, max_train_len, seen,
                                    max_train_len)
    if n_test_long:
        long_, long_al = _generate_split(stream("test-long"), n_test_long, max_train_len + 1,
                                         max_test_len, seen, max_test_len)
        test, test_al = test + long_, test_al + long_al
    valid, valid_al = _generate_split(stream("valid"), n_valid, min_len, max_train_len, seen,
                                      max_train_len)
    train, train_al = _generate_split(stream("train"), n_train, min_len, max_train_len, seen,
                                      max_train_len)
    info = dict(source="builtin", seed=seed, n_train=n_train, n_valid=n_valid, n_test=n_test,
                n_test_long=n_test_long, min_len=min_len, max_train_len=max_train_len,
                max_test_len=max_test_len, seconds=round(time.perf_counter() - start, 3))
    corpus = Corpus(train=train, valid=valid, test=test,
                    alignments={"train": train_al, "valid": valid_al, "test": test_al},
                    info=info)
    if len(_CACHE) >= 4:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = corpus
    return _copy(corpus)


_CACHE: dict[tuple, Corpus] = {}


def _copy(c: Corpus) -> Corpus:
    return Corpus(train=list(c.train), valid=list(c.valid), test=list(c.test),
                  alignments={k: list(v) for k, v in c.alignments.items()}, info=dict(c.info))


def builtin_corpus(seed: int = 0, **overrides) -> Corpus:
    """The kit's default corpus: :func:`generate_corpus` with :data:`DEFAULTS`.

    Args:
        seed: integer seed.
        **overrides: any :func:`generate_corpus` argument (e.g. ``n_train=4000``).

    Returns:
        The :class:`~kerasattn.data.Corpus`.
    """
    unknown = set(overrides) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown builtin_corpus argument(s) {sorted(unknown)}; expected "
                         f"some of {sorted(DEFAULTS)} or seed")
    return generate_corpus(seed=seed, **{**DEFAULTS, **overrides})


def main(argv=None) -> None:
    """``python -m kerasattn.data [--seed N] [--n-train N]``: print the default
    corpus's statistics, a few samples, and how long generation took."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m kerasattn.data", description=main.__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-train", type=int, default=DEFAULTS["n_train"])
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    corpus = builtin_corpus(seed=args.seed, n_train=args.n_train)
    seconds = time.perf_counter() - start
    print(corpus.format_stats())
    print(f"generated in {seconds:.2f} s (seed {args.seed})")
    for src, tgt in corpus.train[:args.samples]:
        print(f"  {src}\n    -> {tgt}")
