"""Vocabulary: reserved ids, frequency order, min_freq, encode/decode, JSON files, text
normalisation helpers."""
from __future__ import annotations

import json

import numpy as np
import pytest

from kerasattn.data import SPECIAL_TOKENS, Vocabulary, detokenize, normalize

TEXTS = ["the cat sees the dog .", "the dog sleeps .", "a bird sings ."]


def test_reserved_ids_and_frequency_order():
    v = Vocabulary.build(TEXTS)
    assert (v.PAD, v.UNK, v.BOS, v.EOS) == (0, 1, 2, 3)
    assert v.tokens[:4] == list(SPECIAL_TOKENS)
    # most frequent first ("the" x3, "." x3, then "dog" x2), ties alphabetical
    assert v.tokens[4:7] == [".", "the", "dog"]
    assert len(v) == 4 + 9  # the cat sees dog . sleeps a bird sings


def test_min_freq_and_max_size():
    v = Vocabulary.build(TEXTS, min_freq=2)
    assert v.tokens[4:] == [".", "the", "dog"]
    assert v.encode("the cat .") == [v.token_to_id("the"), v.UNK, v.token_to_id(".")]
    assert len(Vocabulary.build(TEXTS, max_size=6)) == 6


def test_encode_decode_round_trip_with_specials():
    v = Vocabulary.build(TEXTS)
    for text in TEXTS:
        ids = v.encode(text, add_bos=True, add_eos=True)
        assert ids[0] == v.BOS and ids[-1] == v.EOS
        assert v.decode(ids + [0, 0]) == text
        assert v.decode(np.array(ids, dtype="int32")) == text
    # decoding stops at the first <eos>; without stripping every token is written
    ids = v.encode("the dog .") + [v.EOS] + v.encode("the cat")
    assert v.decode(ids) == "the dog ."
    assert v.decode([v.BOS] + ids[:2], strip_special=False) == "<bos> the dog"
    assert v.decode(v.encode("the zebra")) == "the <unk>"


def test_save_load_json(tmp_path):
    v = Vocabulary.build(TEXTS + ["l' été où j' étais ."])
    path = tmp_path / "vocab.json"
    v.save(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["specials"] == list(SPECIAL_TOKENS) and "été" in data["tokens"]
    w = Vocabulary.load(path)
    assert w == v and w.encode("l' été .") == v.encode("l' été .")
    assert not (tmp_path / "vocab.json.tmp").exists()


def test_load_errors_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="no vocabulary file"):
        Vocabulary.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        Vocabulary.load(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tokens": ["a"]}))
    with pytest.raises(ValueError, match="format"):
        Vocabulary.load(other)


def test_bad_arguments():
    with pytest.raises(ValueError, match="min_freq"):
        Vocabulary.build(TEXTS, min_freq=0)
    with pytest.raises(ValueError, match="single string"):
        Vocabulary.build("the cat .")
    with pytest.raises(ValueError, match="reserved"):
        Vocabulary(["<pad>", "cat"])
    with pytest.raises(ValueError, match="unique"):
        Vocabulary(["cat", "cat"])
    with pytest.raises(ValueError, match="index"):
        Vocabulary.build(TEXTS).decode([999])


@pytest.mark.parametrize("raw,lang,expected", [
    ("Go.", "en", "go ."),
    ("I don't know!", "en", "i don't know !"),
    ("Va\u202f!", "fr", "va !"),                         # narrow no-break space
    ("J\u2019aime l'arbre,\u00a0non ?", "fr", "j' aime l' arbre , non ?"),
    ("Aujourd'hui, qu'il vienne.", "fr", "aujourd'hui , qu' il vienne ."),
    ("  Deux   espaces  ", "fr", "deux espaces"),
])
def test_normalize(raw, lang, expected):
    assert normalize(raw, lang) == expected


def test_detokenize_undoes_the_tokenization():
    assert detokenize("j' aime l' arbre , non ?") == "j'aime l'arbre, non?"
    assert detokenize(["i", "don't", "know", "."]) == "i don't know."
    for text in ("le chat qu' il voit .", "aujourd'hui , je pars !"):
        assert normalize(detokenize(text), "fr") == text
