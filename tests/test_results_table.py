"""tools/results_table.py: the README results table generated from lessons' results.json."""
import json
import time
from pathlib import Path

from conftest import load_script

ROOT = Path(__file__).resolve().parents[1]
rt = load_script("tools/results_table.py")


def rec(backend, lesson, models, quick=False, **kw):
    """A results.json record as a lesson writes it."""
    settings = dict(quick=quick, data=None, epochs=30, seed=0, lesson_minutes=4.25,
                    train_size=None, sizes={})
    runs = {m: dict(model=m, backend=backend, bleu=b, exact_match=0.5, epochs=3,
                    train_seconds=10.0, tokens_per_second=1234.0, n_test=12)
            for m, b in models.items()}
    return dict(lesson=lesson, backend=backend, settings=settings, wall_seconds=100.0,
                models=runs, **kw)


def write(d, r):
    d.mkdir(parents=True, exist_ok=True)
    (d / "results.json").write_text(json.dumps(r))


def test_rows_order_newest_and_quick(tmp_path):
    write(tmp_path / "a/torch/lesson_00", rec("torch", 0, {"bahdanau": 50.0, "seq2seq": 5.0}))
    write(tmp_path / "a/jax/lesson_05", rec("jax", 5, {"transformer": 70.0}))
    write(tmp_path / "q/jax/lesson_05", rec("jax", 5, {"transformer": 1.0}, quick=True))
    time.sleep(0.01)
    write(tmp_path / "b/torch/lesson_00", rec("torch", 0, {"bahdanau": 60.0}))
    rows = rt.load_rows(rt.find_results([tmp_path]))
    assert [(r["model"], r["backend"], r["bleu"]) for r in rows] == [
        ("seq2seq", "torch", 5.0), ("bahdanau", "torch", 60.0), ("transformer", "jax", 70.0)]
    rows = rt.load_rows(rt.find_results([tmp_path]), include_quick=True)
    assert ("transformer", "jax", 1.0) in [(r["model"], r["backend"], r["bleu"]) for r in rows]


def test_rewrite_between_markers_and_check(tmp_path):
    write(tmp_path / "r/jax/lesson_00",
          rec("jax", 0, {"bahdanau": 97.14}, command="kerasattn --backend jax train bahdanau"))
    doc = tmp_path / "doc.md"
    doc.write_text("intro\n<!-- results-table: begin -->\nold\n<!-- results-table: end -->\n"
                   "after\n")
    argv = [str(tmp_path / "r"), "--files", str(doc)]
    assert rt.main([*argv, "--check"]) == 1
    assert rt.main(argv) == 0
    text = doc.read_text()
    assert "old" not in text and text.startswith("intro\n")
    assert text.endswith("<!-- results-table: end -->\nafter\n")
    assert "| `bahdanau` | 00 | jax† | 97.1 | 50.0% | 3 | 10 | 1,234 | 100 |" in text
    assert "† `kerasattn --backend jax train bahdanau`" in text
    assert rt.main([*argv, "--check"]) == 0


def test_errors(tmp_path, capsys):
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad/results.json").write_text("{not json")
    assert rt.main([str(tmp_path / "bad"), "--print"]) == 2
    assert "not a readable results.json" in capsys.readouterr().err
    doc = tmp_path / "doc.md"
    doc.write_text("no markers\n")
    write(tmp_path / "ok/jax/lesson_00", rec("jax", 0, {"bahdanau": 1.0}))
    assert rt.main([str(tmp_path / "ok"), "--files", str(doc)]) == 2
    assert "marker" in capsys.readouterr().err


def test_committed_tables_are_current():
    """README.md and docs/lessons.md hold exactly what the committed records generate."""
    assert rt.main([str(ROOT / "docs" / "measured" / "lessons"), "--check"]) == 0


def test_condition_is_printed_and_other_runs_are_left_out(tmp_path):
    write(tmp_path / "torch/lesson_00",
          rec("torch", 0, {"bahdanau": 90.0}, condition="beside one `yes > /dev/null`"))
    write(tmp_path / "torch/lesson_06", rec("torch", 6, {"base, coverage": 40.0}))
    rows = rt.load_rows(rt.find_results([tmp_path]))
    assert [r["model"] for r in rows] == ["bahdanau"]     # lesson 06's runs are not models
    assert "Condition: beside one `yes > /dev/null`." in rt.render(rows)
