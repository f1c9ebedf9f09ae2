"""Smoke test of benchmarks/bench_real_data.py on the committed Tatoeba excerpt: a
two-second budget, tiny models; the figures mean nothing, the table must be complete."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import keras

ROOT = Path(__file__).resolve().parents[1]
EXCERPT = ROOT / "tests" / "data" / "jpn-eng-excerpt.txt"


def load_bench():
    spec = importlib.util.spec_from_file_location("bench_real_data",
                                                  ROOT / "benchmarks" / "bench_real_data.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_prints_kit_and_baseline_side_by_side(tmp_path, capsys):
    bench = load_bench()
    out_json = tmp_path / "rows.json"
    assert bench.main([str(EXCERPT), "--reverse", "--budget", "2", "--tiny",
                       "--models", "transformer", "keras_hub", "--max-train", "64",
                       "--max-test", "4", "--json", str(out_json),
                       "--set", "batch_size=16", "--set", "anneal=false"]) == 0
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| backend | model |") and "BLEU multi-ref" in table[0]
    backend = keras.backend.backend()
    assert table[1].startswith(f"| {backend} | transformer | subword")
    assert table[2].startswith(f"| {backend} | keras_hub | subword")
    import json

    rows = json.loads(out_json.read_text())
    for row in rows:
        assert row["sources"] == 4 and 0.0 <= row["bleu_single"] <= 100.0
        assert row["tokens_per_second"] > 0 and row["epochs"] >= 1
    assert "written without spaces" in out                       # the recipe is printed
    assert "--set batch_size=16" in out and "--set anneal=False" in out


def test_set_parses_values_and_rejects_a_missing_equals_sign():
    import pytest

    bench = load_bench()
    assert bench.parse_overrides(["batch_size=32", "learning_rate=2e-3", "anneal=False",
                                  "model.dropout=0.1", "bucket=true"]) == {
        "batch_size": 32, "learning_rate": 0.002, "anneal": False, "model.dropout": 0.1,
        "bucket": True}
    with pytest.raises(ValueError, match="--set expects KEY=VALUE; received 'batch_size'"):
        bench.parse_overrides(["batch_size"])
