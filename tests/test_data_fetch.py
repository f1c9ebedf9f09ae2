"""Getting a real corpus: fetch_tatoeba into the Keras cache (tested on file:// URLs), the
licence line, the offline message, and loading a file in another language (the committed
English-Japanese excerpt) with an honest split by source sentence."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from kerasattn.data import (
    LICENCE,
    TatoebaDownloadError,
    builtin_corpus,
    fetch_tatoeba,
    load_tatoeba,
    tatoeba_url,
)

EXCERPT = Path(__file__).parent / "data" / "jpn-eng-excerpt.txt"
LINES = "Go.\tVa !\tCC-BY 2.0 (France) Attribution: tatoeba.org #2877272\nHi.\tSalut !\t#1\n"


def make_zip(tmp_path, name="deu-eng.zip", member="deu.txt", text=LINES):
    path = tmp_path / "site" / name
    path.parent.mkdir(exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(member, text)
        zf.writestr("_about.txt", "about the file")
    return path


def test_tatoeba_url_and_bad_code():
    assert tatoeba_url("deu") == "https://www.manythings.org/anki/deu-eng.zip"
    assert tatoeba_url("JPN").endswith("/jpn-eng.zip")
    with pytest.raises(ValueError, match="lang must be.*received '../x'"):
        tatoeba_url("../x")


def test_fetch_downloads_once_into_the_cache_and_prints_the_licence(tmp_path, capsys):
    source = make_zip(tmp_path)
    cache = tmp_path / "cache"
    path = fetch_tatoeba("deu", url=source.as_uri(), cache_dir=str(cache))
    out = capsys.readouterr().out
    assert LICENCE in out and "CC-BY 2.0 FR" in out and "tatoeba.org" in out
    assert Path(path).is_file() and cache in Path(path).parents
    corpus = load_tatoeba(path, valid_fraction=0.0, test_fraction=0.0)
    assert sorted(corpus.train) == [("go .", "va !"), ("hi .", "salut !")]
    source.unlink()                       # the second call must not download again
    again = fetch_tatoeba("deu", url=source.as_uri(), cache_dir=str(cache), verbose=False)
    assert again == path and capsys.readouterr().out == ""


def test_offline_fetch_fails_with_one_sentence_naming_the_alternatives(tmp_path):
    missing = (tmp_path / "nowhere" / "fra-eng.zip").as_uri()
    with pytest.raises(TatoebaDownloadError) as err:
        fetch_tatoeba("fra", url=missing, cache_dir=str(tmp_path / "cache"))
    message = str(err.value)
    assert "--data PATH" in message and "built-in corpus" in message
    assert message.count(". ") == 0 or message.rstrip().count(".") <= 3  # one sentence
    assert "fra-eng.zip" in message
    assert callable(builtin_corpus)


def test_malformed_line_names_file_and_line(tmp_path):
    path = make_zip(tmp_path, text="Go.\tVa !\nno tab here\nHi.\tSalut !\n")
    with pytest.raises(ValueError, match=r"deu-eng.zip, line 2: malformed line \(no tab\)"):
        load_tatoeba(path, strict=True)
    corpus = load_tatoeba(path, valid_fraction=0.0, test_fraction=0.0)
    assert corpus.report.bad_lines == [(2, "no tab")]
    assert "line 2" in corpus.report.summary()


def test_japanese_excerpt_language_and_split_by_source():
    corpus = load_tatoeba(EXCERPT, max_length=None, test_fraction=0.2, valid_fraction=0.1)
    assert corpus.info["lang"] == "jpn" and corpus.info["tgt_lang"] == "jpn"
    pairs = corpus.train + corpus.valid + corpus.test
    assert len(pairs) > 250
    # Japanese is kept as written (no French elision, no spaces added inside words)
    assert any(t == "行け。" for _, t in pairs)
    sources = {name: {s for s, _ in corpus.split(name)} for name in ("train", "valid", "test")}
    assert not sources["train"] & sources["test"] and not sources["valid"] & sources["test"]
    multi = {s for s in sources["test"] if sum(p[0] == s for p in pairs) > 1}
    for s in multi:   # every translation of a test source is in the test split
        assert sum(p[0] == s for p in corpus.test) == sum(p[0] == s for p in pairs)
    reverse = load_tatoeba(EXCERPT, max_length=None, reverse=True)
    assert reverse.info["src_lang"] == "jpn" and reverse.info["tgt_lang"] == "en"


def test_resolve_data_takes_a_path_or_a_language_code(tmp_path, monkeypatch):
    from kerasattn.data import resolve_data, tatoeba

    assert resolve_data(str(EXCERPT)) == EXCERPT
    source = make_zip(tmp_path, name="ita-eng.zip", member="ita.txt")
    monkeypatch.setattr(tatoeba, "URL_PATTERN", source.parent.as_uri() + "/{lang}-eng.zip")
    path = resolve_data("ita", cache_dir=str(tmp_path / "cache"), verbose=False)
    assert path.name == "ita-eng.zip" and (tmp_path / "cache") in path.parents
    with pytest.raises(ValueError, match="--data: no such file 'no/such.txt', and it is not"):
        resolve_data("no/such.txt")
