"""The built-in corpus: determinism, splits, lengths, one translation per source, the French
phenomena it promises, normalisation and the alignments behind its statistics."""
from __future__ import annotations

import random
import re

import pytest

from kerasattn.data import (
    DEFAULTS,
    Corpus,
    builtin_corpus,
    detokenize,
    generate_corpus,
    generate_pair,
    is_monotonic,
    normalize,
    synthetic,
)
from kerasattn.data.corpus import crossing_links

SMALL = dict(n_train=300, n_valid=40, n_test=40, n_test_long=20, max_train_len=20,
             max_test_len=26)


MEDIUM = dict(n_train=5000)


@pytest.fixture(scope="module")
def default_corpus() -> Corpus:
    """The default grammar and lengths, with a smaller train split (test time)."""
    return builtin_corpus(**MEDIUM)


def test_same_seed_same_corpus_other_seed_other_corpus():
    a = generate_corpus(seed=3, **SMALL)
    synthetic._CACHE.clear()  # really generate again
    b = generate_corpus(seed=3, **SMALL)
    c = generate_corpus(seed=4, **SMALL)
    assert a.train == b.train and a.valid == b.valid and a.test == b.test
    assert a.alignments == b.alignments
    assert a.train != c.train and a.test != c.test


def test_held_out_splits_do_not_depend_on_train_size():
    a = generate_corpus(seed=1, **SMALL)
    b = generate_corpus(seed=1, **{**SMALL, "n_train": 500})
    assert a.test == b.test and a.valid == b.valid
    assert b.train[:10] != [] and len(b.train) == 500


def test_split_sizes_lengths_and_disjoint_sources():
    c = generate_corpus(seed=0, **SMALL)
    assert (len(c.train), len(c.valid), len(c.test)) == (300, 40, 60)
    for name in ("train", "valid"):
        lengths = [len(s.split()) for s in c.sources(name)]
        assert min(lengths) >= 3 and max(lengths) <= SMALL["max_train_len"]
    test_len = [len(s.split()) for s in c.sources("test")]
    assert all(n <= SMALL["max_train_len"] for n in test_len[:40])
    assert all(SMALL["max_train_len"] < n <= SMALL["max_test_len"] for n in test_len[40:])
    srcs = [s for n in ("train", "valid", "test") for s in c.sources(n)]
    assert len(srcs) == len(set(srcs)), "a source sentence appears twice"


def test_each_source_has_exactly_one_translation():
    # short sentences collide most often: generate many and group by source
    rng, seen, collisions = random.Random(7), {}, 0
    for _ in range(4000):
        src, tgt, _ = generate_pair(rng, rng.randint(3, 7))
        if src in seen:
            collisions += 1
            assert seen[src] == tgt, f"two translations of {src!r}: {seen[src]!r}, {tgt!r}"
        seen[src] = tgt
    assert collisions > 100  # the check above really ran on repeated sources


def test_text_is_normalised_like_real_corpora(default_corpus):
    pairs = default_corpus.train[:3000] + default_corpus.test
    for s, t in pairs:
        assert normalize(detokenize(s), "en") == s
        assert normalize(detokenize(t), "fr") == t
        assert s.endswith(" .") and t.endswith(" .")


def _all_targets_where(pairs, src_pattern, tgt_pattern):
    hits = [(s, t) for s, t in pairs if re.search(src_pattern, s)]
    bad = [(s, t) for s, t in hits if not re.search(tgt_pattern, t)]
    return hits, bad


@pytest.mark.parametrize("src_pattern,tgt_pattern", [
    (r"\bthe black cat\b", r"\ble chat noir\b"),                        # adjective after noun
    (r"\bthe big dog\b", r"\ble grand chien\b"),                        # size adjective stays
    (r"\bwhite (houses|cars|flowers|doors)\b",
     r"\b(maisons|voitures|fleurs|portes) blanches\b"),                 # agreement f.pl
    (r"\bthe tree\b", r"\bl' arbre\b"),                                 # elision
    (r"^i (like|love|open|arrive|write|hear)\b", r"^j' "),              # j'
    (r"\bfrom the (garden|market|train|lake)\b", r"\bdu\b"),            # de + le -> du
    (r"\bgoes to the (garden|market|train|lake)\b", r"\bau\b"),         # à + le -> au
    (r"\bthis (tree|hotel|plane|egg)\b", r"\bcet\b"),                   # cet before a vowel
    (r"^(he|she|the [a-z]+) does not see\b", r"\bne voit pas\b"),       # negation wraps verb
    (r"\b(he|she) (often|always|rarely) sees\b",
     r"\b(il|elle) voit (souvent|toujours|rarement)\b"),                # adverb after verb
])
def test_grammar_phenomena(default_corpus, src_pattern, tgt_pattern):
    pairs = default_corpus.train + default_corpus.valid + default_corpus.test
    hits, bad = _all_targets_where(pairs, src_pattern, tgt_pattern)
    assert hits, f"no source matches {src_pattern!r}: the corpus lacks this phenomenon"
    assert not bad, f"{len(bad)}/{len(hits)} translations break the rule, e.g. {bad[0]}"


def test_two_adjectives_after_the_noun_come_in_mirror_order(default_corpus):
    """"the european economic area" -> "la zone économique européenne": an origin adjective
    followed by a domain adjective in English comes out domain-then-origin in French."""
    post = synthetic._POST_ADJ
    origin_en = {a[0] for a in post[2]}
    domain_en = {a[0] for a in post[3]}
    origin_fr = {f for a in post[2] for f in a[1].values()}
    domain_fr = {f for a in post[3] for f in a[1].values()}
    hits = 0
    for s, t in default_corpus.train:
        s_tok, t_tok = s.split(), t.split()
        n_en = sum(a in origin_en and b in domain_en for a, b in zip(s_tok, s_tok[1:]))
        n_fr = sum(a in domain_fr and b in origin_fr for a, b in zip(t_tok, t_tok[1:]))
        assert n_en == n_fr, (s, t)
        assert not any(a in origin_fr and b in domain_fr for a, b in zip(t_tok, t_tok[1:]))
        hits += n_en
    assert hits > 20


def test_relative_clauses_and_coordination_are_present(default_corpus):
    targets = default_corpus.targets("train")
    for word in ("qui", "que", "qu'", "et", "mais", "parce", "quand", "n'", "jamais"):
        assert sum(word in t.split() for t in targets) > 50, word


def test_alignments_cover_every_word_and_stay_in_range():
    c = generate_corpus(seed=2, **SMALL)
    for (s, t), al in zip(c.train, c.alignments["train"]):
        s_tok, t_tok = s.split(), t.split()
        assert all(0 <= i < len(s_tok) and 0 <= j < len(t_tok) for i, j in al)
        aligned_src = {i for i, _ in al}
        unaligned = [w for i, w in enumerate(s_tok) if i not in aligned_src]
        assert set(unaligned) <= {"do", "does"}, (s, unaligned)  # only do-support is empty
        assert {j for _, j in al} == set(range(len(t_tok))), t  # every French word aligned


def test_monotonicity_helpers():
    assert is_monotonic([(0, 0), (1, 1), (1, 2), (2, 3)])
    assert is_monotonic([(0, 0), (0, 1), (1, 1)])
    # "the black cat" -> "le chat noir": black(1)->noir(2), cat(2)->chat(1) cross
    assert not is_monotonic([(0, 0), (1, 2), (2, 1)])
    assert crossing_links([(0, 0), (1, 2), (2, 1)]) == 1
    assert crossing_links([(0, 2), (1, 1), (2, 0)]) == 3


def test_default_corpus_stats(default_corpus):
    st = default_corpus.stats()
    sp = st["splits"]
    assert sp["train"]["pairs"] == MEDIUM["n_train"]
    assert sp["test"]["pairs"] == DEFAULTS["n_test"] + DEFAULTS["n_test_long"]
    for name, e in sp.items():
        assert sum(e["length_histogram"].values()) == e["pairs"]
        assert 0.0 < e["non_monotonic_share"] < 1.0
    assert st["max_train_src_len"] == DEFAULTS["max_train_len"]
    assert st["test_longer_than_train"] == DEFAULTS["n_test_long"]
    assert sp["test"]["src_len"]["max"] > DEFAULTS["max_train_len"]
    # "a few hundred real words per side"
    assert 200 <= st["src_vocab"]["train"] <= 600 and 200 <= st["tgt_vocab"]["train"] <= 800
    text = default_corpus.format_stats()
    assert "non-monotonic" in text and "train" in text


@pytest.mark.parametrize("kwargs,needle", [
    (dict(n_train=0), "n_train"),
    (dict(n_valid=-1), "n_valid"),
    (dict(min_len=2), "min_len"),
    (dict(max_train_len=20, max_test_len=20), "max_test_len"),
])
def test_bad_arguments_raise_clearly(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        generate_corpus(**{**SMALL, **kwargs})


def test_builtin_corpus_rejects_unknown_override():
    with pytest.raises(ValueError, match="n_trian"):
        builtin_corpus(n_trian=5)


def test_split_accessors():
    c = generate_corpus(seed=0, **SMALL)
    assert c.split("valid") is c.valid
    long_ = c.select("test", min_len=SMALL["max_train_len"] + 1)
    assert len(long_) == SMALL["n_test_long"]
    with pytest.raises(ValueError, match="split"):
        c.split("dev")


def test_cached_corpus_is_a_fresh_copy():
    a = generate_corpus(seed=0, **SMALL)
    a.train.clear()
    a.alignments["test"].clear()
    b = generate_corpus(seed=0, **SMALL)
    assert len(b.train) == SMALL["n_train"] and len(b.alignments["test"]) == len(b.test)
