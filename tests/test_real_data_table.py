"""tools/real_data_table.py: docs/benchmarks.md's real-data table from bench records."""
from __future__ import annotations

import json

import pytest
from conftest import load_script

rdt = load_script("tools/real_data_table.py")


def row(model, bleu, tps, backend="torch"):
    return dict(backend=backend, model=model, bleu_single=bleu, tokens_per_second=tps,
                sources=100)


def record(file, backend, rows, reverse=False):
    return dict(command=f"python benchmarks/bench_real_data.py {file} --backend {backend}",
                file=file, reverse=reverse, budget=240.0,
                corpus=dict(train=1000, valid=50, test=120), machine="CPU X, 2 cores",
                rows=rows)


def write(tmp_path, name, rec):
    (tmp_path / name).write_text(json.dumps(rec))


def test_one_row_per_corpus_and_backend_with_ratios_marks_and_beam(tmp_path):
    write(tmp_path, "a.json", record("deu.txt", "jax", [
        row("transformer", 30.0, 4000.0, "jax"), row("transformer + beam 4", 31.5, 4000.0, "jax"),
        row("bahdanau", 20.0, 2000.0, "jax"), row("keras_io", 10.0, 1000.0, "jax")]))
    write(tmp_path, "b.json", record("jpn-eng.txt", "torch", [
        row("transformer", 5.0, 500.0), row("keras_io", 10.0, 1000.0)], reverse=True))
    table = rdt.render(rdt.load_records([tmp_path]))
    lines = table.splitlines()
    assert "kit `transformer`" in lines[0] and "transformer beam 4" in lines[0]
    # the tuned-on corpus first, then the held-out ones
    assert lines[2].startswith("| Tatoeba jpn-eng, reversed | tuned on | 1,000 / 100 | torch")
    assert "| 5.0 / 500 | - | 10.0 / 1,000 | 0.50x, 0.5x | - |" in lines[2]
    assert lines[3].startswith("| gettext de | held out | 1,000 / 100 | jax | 30.0 / 4,000")
    assert "| 3.00x, 4.0x | 2.00x, 2.0x | 31.5 | - |" in lines[3]
    assert "`python benchmarks/bench_real_data.py deu.txt --backend jax`" in table
    assert "Machine: CPU X, 2 cores." in table
    # how the transformer trained, from the record when it holds the recipe
    assert lines[2].endswith("| not recorded |") and lines[3].endswith("| not recorded |")
    rec = record("spa.txt", "jax", [dict(row("transformer", 9.0, 900.0, "jax"), recipe=dict(
        train=dict(bucket=True, pad_multiple=16, token_weighting="corpus"), model={}))])
    write(tmp_path, "c.json", rec)
    lines = rdt.render(rdt.load_records([tmp_path])).splitlines()
    assert lines[4].startswith("| gettext es | held out") and lines[4].endswith(
        "| corpus / 16 / 256 / 3 / last |")
    # a record that names the feed-forward width shows it
    rec = record("spa.txt", "torch", [dict(row("transformer", 9.0, 900.0, "torch"), recipe=dict(
        train=dict(bucket=True, pad_multiple=1, token_weighting="corpus",
                   early_stopping_patience=None), model=dict(d_ff=512)))])
    write(tmp_path, "d.json", rec)
    lines = rdt.render(rdt.load_records([tmp_path])).splitlines()
    assert any(line.startswith("| gettext es | held out") and line.endswith(
        "| corpus / 1 / 512 / none / last |") for line in lines), lines
    # and the weights' moving average it ended on
    rec = record("spa.txt", "tensorflow", [dict(row("transformer", 9.0, 900.0, "tensorflow"),
                 recipe=dict(train=dict(bucket=True, pad_multiple=1, token_weighting="corpus",
                                        early_stopping_patience=None, ema_momentum=0.998),
                             model=dict(d_ff=512)))])
    write(tmp_path, "e.json", rec)
    lines = rdt.render(rdt.load_records([tmp_path])).splitlines()
    assert any(line.endswith("| corpus / 1 / 512 / none / average 0.998 |")
               for line in lines), lines
    # with early stopping the best epoch's weights replace the average
    rec["rows"][0]["recipe"]["train"]["early_stopping_patience"] = 3
    write(tmp_path, "e.json", rec)
    lines = rdt.render(rdt.load_records([tmp_path])).splitlines()
    assert any(line.endswith("| corpus / 1 / 512 / 3 / last |") for line in lines), lines
    # the weakest cell of each kit model, named
    assert ("Lowest BLEU ratio to the script over these runs: `transformer` 0.50x (Tatoeba "
            "jpn-eng, reversed, torch, tuned on); `bahdanau` 2.00x (gettext de, jax, held out)."
            in table)


def test_rewrites_between_markers_and_checks(tmp_path, capsys):
    write(tmp_path, "a.json", record("spa.txt", "torch", [row("keras_io", 10.0, 1000.0)]))
    doc = tmp_path / "doc.md"
    doc.write_text(f"intro\n{rdt.BEGIN_LINE}\nSTALE-TABLE\n{rdt.END_LINE}\nafter\n")
    argv = [str(tmp_path / "a.json"), "--doc", str(doc)]
    assert rdt.main([*argv, "--check"]) == 1
    assert rdt.main(argv) == 0
    assert rdt.main([*argv, "--check"]) == 0
    text = doc.read_text()
    assert text.startswith("intro\n") and text.endswith(f"{rdt.END_LINE}\nafter\n")
    assert "STALE-TABLE" not in text and "| gettext es | held out |" in text


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "expected a bench_real_data.py --json record; missing command"),
    ("{not json", "not a readable JSON record"),
])
def test_a_bad_record_is_named(tmp_path, capsys, content, message):
    (tmp_path / "bad.json").write_text(content)
    assert rdt.main([str(tmp_path), "--print"]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and message in err


def test_a_document_without_markers_is_named(tmp_path, capsys):
    write(tmp_path, "a.json", record("spa.txt", "torch", [row("keras_io", 10.0, 1000.0)]))
    doc = tmp_path / "doc.md"
    doc.write_text("no markers\n")
    assert rdt.main([str(tmp_path / "a.json"), "--doc", str(doc)]) == 2
    assert "needs the two marker lines" in capsys.readouterr().err


def test_committed_table_is_current():
    assert rdt.main(["--check"]) == 0


def test_runs_with_other_seeds_get_their_own_rows_and_a_mean(tmp_path):
    def run(seed, kit, script, bah=None):
        rec = record("por_short.txt", "torch",
                     [row("transformer", kit, 900.0)]
                     + ([row("bahdanau", bah, 900.0)] if bah else [])
                     + [row("keras_io", script, 300.0)])
        if seed is not None:
            rec["command"] += f" {seed}"
        return rec
    write(tmp_path, "a.json", run(None, 44.0, 40.0, 48.0))     # seed 0, from no --seed
    write(tmp_path, "b.json", run("--seed=2", 33.0, 30.0, 36.0))
    rec = run("--seed 5", 46.0, 40.0, 44.0)
    rec["seed"] = 1                                             # the field wins
    write(tmp_path, "c.json", rec)
    write(tmp_path, "d.json", record("ita_short.txt", "torch", [
        row("transformer", 12.0, 900.0), row("keras_io", 10.0, 300.0)]))
    records = rdt.load_records([tmp_path])
    assert [rdt.record_seed(r) for r in records] == [0, 2, 1, 0]
    lines = rdt.render(records).splitlines()
    por = [line for line in lines if line.startswith("| gettext pt_BR")]
    assert [line.split(" | ")[3] for line in por] == ["torch", "torch, seed 1", "torch, seed 2"]
    assert ("- gettext pt_BR, pairs of <= 8 words a side, torch, held out, seeds 0, 1, 2: "
            "`transformer` 1.10x, 1.15x, 1.10x (mean 1.12x); `bahdanau` 1.20x, 1.10x, 1.20x "
            "(mean 1.17x)") in lines
    # a cell run once has no such line; the corpora's list has a lead line of its own
    assert not any(line.startswith("- gettext it") and "seeds" in line for line in lines)
    assert "The corpora:" in lines
    # the lowest ratio stays the lowest single run, named with its seed
    write(tmp_path, "b.json", run("--seed=2", 31.5, 30.0, 36.0))
    records = rdt.load_records([tmp_path])
    assert "`transformer` 1.05x (gettext pt_BR, pairs of <= 8 words a side, torch, seed 2, " \
        "held out)" in rdt.lowest_ratios(records)
    # a run without one kit model: "-" for it, the mean of the others
    records[1]["rows"] = [x for x in records[1]["rows"] if x["model"] != "bahdanau"]
    assert any(line.endswith("`bahdanau` 1.20x, 1.10x, - (mean 1.15x)")
               for line in rdt.render(records).splitlines())
    # an explicit --seed 0 is seed 0; a null field falls back to the command
    records[0]["command"] += " --seed 0"
    records[2]["seed"] = None
    assert [rdt.record_seed(r) for r in records] == [0, 2, 5, 0]
    # two runs of one command with one seed are not seeds: named
    records[2]["command"] = records[2]["command"].replace("--seed 5", "--seed 2")
    with pytest.raises(rdt.TableError, match="same seed"):
        rdt.render(records)
    # another budget is another cell, not another seed
    records[2]["command"] = records[2]["command"].replace("--backend", "--budget 60 --backend")
    assert "seeds 0, 2:" in rdt.render(records)
