"""benchmarks/gettext_pairs.py: a Tatoeba-format file from gettext catalogues, read back
by load_tatoeba."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest
from conftest import load_script

SCRIPT = "benchmarks/gettext_pairs.py"


def write_mo(path: Path, messages: dict) -> None:
    """A GNU .mo file (little-endian, no hash table) of ``{msgid: msgstr}`` (bytes keys)."""
    keys = sorted(messages)
    ids, strs = b"", b""
    id_entries, str_entries = [], []
    for k in keys:
        id_entries.append((len(k), len(ids)))
        ids += k + b"\0"
        str_entries.append((len(messages[k]), len(strs)))
        strs += messages[k] + b"\0"
    n = len(keys)
    id_table, str_table = 28, 28 + 8 * n
    ids_start = 28 + 16 * n
    strs_start = ids_start + len(ids)
    out = struct.pack("<7I", 0x950412DE, 0, n, id_table, str_table, 0, 0)
    out += b"".join(struct.pack("<2I", ln, ids_start + off) for ln, off in id_entries)
    out += b"".join(struct.pack("<2I", ln, strs_start + off) for ln, off in str_entries)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(out + ids + strs)


HEADER = {b"": b"Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; "
               b"plural=(n > 1);\n"}


def test_writes_the_sentences_of_the_catalogues_and_load_tatoeba_reads_them(tmp_path):
    from kerasattn.data import load_tatoeba

    script = load_script(SCRIPT)
    locale = tmp_path / "locale"
    messages = {
        b"could not open file %s": "impossible d'ouvrir le fichier %s".encode(),
        b"the disk is full": "le disque est plein".encode(),
        b"Quit": b"Quitter",                                      # one word: left out
        b"two\nlines here": b"deux\nlignes ici",                  # multi-line: left out
        b"no translation yet": b"",                               # untranslated: left out
        b"%d file removed\0%d files removed":                     # plural: left out
            "%d fichier supprimé\0%d fichiers supprimés".encode(),
    }
    for i in range(8):
        messages[f"message number {i} is shown".encode()] = \
            f"le message numéro {i} est affiché".encode()
    write_mo(locale / "fr" / "LC_MESSAGES" / "tool.mo", {**HEADER, **messages})
    write_mo(locale / "fr" / "LC_MESSAGES" / "iso_3166.mo",
             {**HEADER, b"United Kingdom": b"Royaume-Uni"})
    (locale / "fr" / "LC_MESSAGES" / "broken.mo").write_bytes(b"not a catalogue")
    out = tmp_path / "fra.txt"
    assert script.main(["--lang", "fr", "--locale-dir", str(locale), "--out", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    pairs = {tuple(line.split("\t")[:2]) for line in lines}
    assert len(lines) == 10 and all(line.count("\t") == 2 for line in lines)
    assert ("could not open file %s", "impossible d'ouvrir le fichier %s") in pairs
    assert not any(src in {"Quit", "United Kingdom", "no translation yet"} for src, _ in pairs)
    corpus = load_tatoeba(str(out), seed=0, max_length=None)
    assert corpus.info["tgt_lang"] == "fr"
    assert len(corpus.train) + len(corpus.valid) + len(corpus.test) == 10

    capped = tmp_path / "few" / "fra.txt"
    assert script.main(["--locale-dir", str(locale), "--out", str(capped),
                        "--max-pairs", "3"]) == 0
    assert len(capped.read_text(encoding="utf-8").splitlines()) == 3


def test_a_language_without_catalogues_names_the_option(tmp_path, capsys):
    script = load_script(SCRIPT)
    with pytest.raises(SystemExit):
        script.main(["--lang", "xx", "--locale-dir", str(tmp_path), "--out",
                     str(tmp_path / "x.txt")])
    assert "no gettext catalogues for --lang 'xx'" in capsys.readouterr().err
