"""Word and subword tokenizers: the kit's special ids, Japanese (written without spaces),
round trips, files, and the keras-hub layer giving the same ids."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kerasattn.data import (
    SubwordTokenizer,
    Vocabulary,
    build_tokenizer,
    load_tatoeba,
    load_tokenizer,
    make_arrays,
)
from kerasattn.data.tokenizers import tokenizer_kind

EXCERPT = Path(__file__).parent / "data" / "jpn-eng-excerpt.txt"


@pytest.fixture(scope="module")
def corpus():
    return load_tatoeba(EXCERPT, max_length=None, reverse=True, test_fraction=0.1)


@pytest.fixture(scope="module")
def ja(corpus):
    return SubwordTokenizer.build([s for s, _ in corpus.train], vocab_size=800)


def test_special_ids_match_the_models(ja):
    assert (ja.PAD, ja.UNK, ja.BOS, ja.EOS) == (0, 1, 2, 3)
    assert ja.tokens[:4] == ["<pad>", "<unk>", "<bos>", "<eos>"]
    ids = ja.encode("私は猫が好きです。", add_bos=True, add_eos=True)
    assert ids[0] == 2 and ids[-1] == 3 and 0 not in ids
    assert 8 < len(ja) <= 800


def test_japanese_round_trip_and_pieces(corpus, ja):
    sentences = [s for s, _ in corpus.train]
    known = [s for s in sentences if ja.UNK not in ja.encode(s)]
    assert len(known) > 0.9 * len(sentences)     # the rarest characters become <unk>
    assert all(ja.decode(ja.encode(s)) == s for s in known)
    word = Vocabulary.build(sentences)
    # words: one "word" per Japanese sentence; pieces: several per sentence
    assert np.mean([len(word.encode(s)) for s in sentences]) < 1.1
    assert np.mean([len(ja.encode(s)) for s in sentences]) > 3
    pieces = ja.pieces(sentences[0])
    assert "".join(pieces).replace("▁", "") == sentences[0].replace(" ", "")


def test_decode_stops_at_eos_and_keeps_unk(ja):
    ids = ja.encode("行け。")
    assert ja.decode([2] + ids + [3] + ids + [0, 0]) == "行け。"
    assert "<unk>" in ja.decode([1] + ids)
    assert ja.decode(ids + [3], strip_special=False).endswith("<eos>")
    with pytest.raises(ValueError, match=r"index must be in \[0, \d+\), received 100000"):
        ja.decode([100000])


def test_save_load_and_load_tokenizer_dispatch(tmp_path, corpus, ja):
    ja.save(tmp_path / "ja.json")
    back = load_tokenizer(tmp_path / "ja.json")
    assert isinstance(back, SubwordTokenizer) and back == ja
    assert SubwordTokenizer.load(tmp_path / "ja.json") == ja
    words = Vocabulary.build([t for _, t in corpus.train])
    words.save(tmp_path / "en.json")
    assert load_tokenizer(tmp_path / "en.json") == words
    with pytest.raises(ValueError, match="holds a Vocabulary, expected a SubwordTokenizer"):
        SubwordTokenizer.load(tmp_path / "en.json")
    with pytest.raises(ValueError, match="no tokenizer file"):
        load_tokenizer(tmp_path / "none.json")
    assert tokenizer_kind(ja) == "subword" and tokenizer_kind(words) == "word"


def test_arrays_for_the_models(corpus, ja):
    en = build_tokenizer("subword", [t for _, t in corpus.train], vocab_size=400)
    arrays = make_arrays(corpus.train, ja, en)
    dec, lab = arrays["decoder_inputs"], arrays["labels"]
    assert (dec[:, 0] == 2).all() and np.array_equal(dec != 0, lab != 0)
    assert np.array_equal(dec[:, 1:][lab[:, 1:] != 0], lab[:, :-1][lab[:, 1:] != 0])
    n = (lab != 0).sum(axis=1)
    assert (lab[np.arange(len(lab)), n - 1] == 3).all()             # y <eos>, then padding
    src = arrays["encoder_inputs"][0]
    assert ja.decode(src) == corpus.train[0][0]


def test_keras_hub_layer_gives_the_same_ids(ja):
    layer = ja.keras_hub_tokenizer()
    text = "私は猫が好きです。"
    ids = np.asarray(layer.tokenize(text)).tolist()
    assert ids == ja.encode(text)


def test_build_tokenizer_and_bad_arguments(corpus):
    texts = [t for _, t in corpus.train]
    assert isinstance(build_tokenizer("word", texts, min_freq=2), Vocabulary)
    with pytest.raises(ValueError, match="tokenizer kind must be one of.*received 'bpe'"):
        build_tokenizer("bpe", texts)
    with pytest.raises(ValueError, match="vocab_size must be an int >= 8, received 4"):
        SubwordTokenizer.build(texts, vocab_size=4)
    with pytest.raises(ValueError, match="single string"):
        SubwordTokenizer.build("one sentence")
    with pytest.raises(ValueError, match="no non-empty sentence"):
        SubwordTokenizer.build(["", "  "])
    with pytest.raises(ValueError, match="proto must be"):
        SubwordTokenizer(b"")
