"""Tatoeba loader on small local files: parsing, bad lines, strict mode, filtering,
deduplication, deterministic splits, zip archives, and a clear message when there is no
network."""
from __future__ import annotations

import zipfile

import pytest

from kerasattn.data import (
    LoadReport,
    TatoebaDownloadError,
    builtin_corpus,
    load_tatoeba,
    read_pairs,
)

ATTR = "CC-BY 2.0 (France) Attribution: tatoeba.org #2877272 (CM) & #1158250 (Wittydev)"
GOOD = [
    f"Go.\tVa !\t{ATTR}",
    "Hi.\tSalut !",
    f"I love the tree.\tJ’aime l'arbre.\t{ATTR}",
    "Wait!\tAttends\u202f!",
    "I don't know.\tJe ne sais pas.",
]


def write(tmp_path, lines, name="fra.txt", raw: bytes | None = None):
    path = tmp_path / name
    data = raw if raw is not None else ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(data)
    return path


def test_parses_and_normalises_with_attribution_column(tmp_path):
    corpus = load_tatoeba(write(tmp_path, GOOD), valid_fraction=0, test_fraction=0)
    assert corpus.train == [("go .", "va !"), ("hi .", "salut !"),
                            ("i love the tree .", "j' aime l' arbre ."), ("wait !", "attends !"),
                            ("i don't know .", "je ne sais pas .")]
    assert corpus.report.kept == 5 and corpus.report.n_skipped == 0
    assert corpus.info["report"] is corpus.report


def test_a_directory_reads_its_file_and_the_language_from_that_file(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    write(folder, ["Go.\t行け。", "Hi.\tこんにちは。"], name="jpn.txt")
    (folder / "_about.txt").write_text("the manythings archive's notes, not pairs\n")
    corpus = load_tatoeba(folder, valid_fraction=0, test_fraction=0)
    assert corpus.info["tgt_lang"] == "jpn" and len(corpus.train) == 2


def test_bad_lines_are_skipped_counted_and_located(tmp_path):
    raw = ("\n".join(GOOD[:2]) + "\n"
           "no tab on this line\n"                 # line 3
           "\tTexte sans anglais\n"                # line 4: empty side
           "\n"                                    # line 5: blank, ignored
           ).encode() + b"Caf\xe9 au lait.\tCaf\xe9.\n" + ("\n".join(GOOD[2:]) + "\r\n").encode()
    corpus = load_tatoeba(write(tmp_path, None, raw=raw), valid_fraction=0, test_fraction=0)
    rep = corpus.report
    assert rep.lines == 9 and rep.blank == 1 and rep.kept == 5
    assert rep.skipped == {"no tab": 1, "empty side": 1, "undecodable bytes": 1}
    assert [n for n, _ in rep.bad_lines] == [3, 4, 6]
    text = rep.summary()
    assert "3 malformed lines skipped" in text and "line 3, 4, 6" in text
    assert corpus.train[-1] == ("i don't know .", "je ne sais pas .")   # CRLF stripped


@pytest.mark.parametrize("bad,number,reason", [
    (b"no tab here\n", 3, "no tab"),
    (b"Hello.\t  \n", 3, "empty side"),
    (b"Caf\xe9.\tCaf\xe9.\n", 3, "undecodable bytes"),
])
def test_strict_mode_raises_with_line_number(tmp_path, bad, number, reason):
    raw = ("\n".join(GOOD[:2]) + "\n").encode() + bad + (GOOD[2] + "\n").encode()
    path = write(tmp_path, None, raw=raw)
    with pytest.raises(ValueError, match=rf"line {number}: malformed line \({reason}"):
        load_tatoeba(path, strict=True)


def test_empty_or_fully_filtered_corpus_raises_clearly(tmp_path):
    with pytest.raises(ValueError, match="no usable sentence pairs"):
        load_tatoeba(write(tmp_path, None, raw=b""))
    with pytest.raises(ValueError, match=r"no usable sentence pairs.*2 malformed"):
        load_tatoeba(write(tmp_path, ["just text", "more text"], name="bad.txt"))
    with pytest.raises(ValueError, match=r"max_length=1 filtered 5"):
        load_tatoeba(write(tmp_path, GOOD, name="long.txt"), max_length=1)


def test_length_filter_dedupe_and_reverse(tmp_path):
    lines = GOOD + [GOOD[1], "Hi.\tBonjour !"]
    path = write(tmp_path, lines)
    kw = dict(valid_fraction=0, test_fraction=0)
    assert load_tatoeba(path, max_length=3, **kw).report.too_long == 2   # 4 and 5 tokens
    by_pair = load_tatoeba(path, dedupe=True, **kw)
    assert by_pair.report.duplicates == 1 and len(by_pair.train) == 6
    by_source = load_tatoeba(path, dedupe="source", **kw)
    assert by_source.report.duplicates == 2 and ("hi .", "bonjour !") not in by_source.train
    assert len(load_tatoeba(path, dedupe=False, **kw).train) == 7
    rev = load_tatoeba(path, reverse=True, **kw)
    assert rev.train[0] == ("va !", "go .") and ("j' aime l' arbre .", "i love the tree .") \
        in rev.train


def test_split_is_deterministic_and_keeps_sources_together(tmp_path):
    lines = [f"Sentence number {i}.\tPhrase numéro {i}." for i in range(200)]
    lines += [f"Sentence number {i}.\tPhrase {i} encore." for i in range(0, 200, 10)]
    path = write(tmp_path, lines)
    a = load_tatoeba(path, seed=1, valid_fraction=0.1, test_fraction=0.2)
    b = load_tatoeba(path, seed=1, valid_fraction=0.1, test_fraction=0.2)
    c = load_tatoeba(path, seed=2, valid_fraction=0.1, test_fraction=0.2)
    assert (a.train, a.valid, a.test) == (b.train, b.valid, b.test)
    assert a.test != c.test
    assert (len({s for s, _ in a.valid}), len({s for s, _ in a.test})) == (20, 40)
    src = [set(a.sources(n)) for n in ("train", "valid", "test")]
    assert not (src[0] & src[1]) and not (src[0] & src[2]) and not (src[1] & src[2])
    assert len(a.train) + len(a.valid) + len(a.test) == 220


def test_reads_the_zip_archive_and_max_pairs(tmp_path):
    archive = tmp_path / "fra-eng.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("_about.txt", "About this file")
        zf.writestr("fra.txt", "\n".join(GOOD) + "\n")
    corpus = load_tatoeba(archive, valid_fraction=0, test_fraction=0, max_pairs=3)
    assert [s for s, _ in corpus.train] == ["go .", "hi .", "i love the tree ."]


def test_missing_file_and_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="no such file.*builtin_corpus"):
        load_tatoeba(tmp_path / "nope.txt")
    path = write(tmp_path, GOOD)
    with pytest.raises(ValueError, match="dedupe"):
        load_tatoeba(path, dedupe="yes")
    with pytest.raises(ValueError, match="test_fraction"):
        load_tatoeba(path, test_fraction=1.5)
    with pytest.raises(ValueError, match="max_length"):
        load_tatoeba(path, max_length=0)


def test_unreachable_download_names_the_alternatives(tmp_path):
    with pytest.raises(TatoebaDownloadError) as err:
        load_tatoeba(url="http://127.0.0.1:9/fra-eng.zip", cache_dir=str(tmp_path))
    message = str(err.value)
    assert "no network" in message
    assert "load_tatoeba(path=" in message and "--data PATH" in message
    assert "builtin_corpus()" in message
    assert callable(builtin_corpus)  # the alternative it names exists


def test_read_pairs_and_report_directly():
    pairs, rep = read_pairs(b"\xef\xbb\xbfA.\tB.\nC.\tD.", source="mem")
    assert pairs == [("A.", "B."), ("C.", "D.")] and isinstance(rep, LoadReport)
    assert rep.lines == 2 and "2 lines read from mem" in str(rep)
