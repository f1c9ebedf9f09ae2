"""Smoke test of benchmarks/bench_real_data.py on the committed Tatoeba excerpt: a
two-second budget, tiny models; the figures mean nothing, the table must be complete."""
from __future__ import annotations

import os
from pathlib import Path

import keras
import pytest
from bleu_reference import record_grouped_scores, sacrebleu_bleu
from conftest import load_script

from kerasattn._env import JAX_CACHE_ENV

ROOT = Path(__file__).resolve().parents[1]
EXCERPT = ROOT / "tests" / "data" / "jpn-eng-excerpt.txt"


def load_bench(name="bench_real_data"):
    return load_script(f"benchmarks/{name}.py")


def test_bench_prints_kit_and_baseline_side_by_side(tmp_path, capsys, monkeypatch):
    from kerasattn.training import recipes

    bench = load_bench()
    scored = record_grouped_scores(monkeypatch)
    # the benchmark sets the first and drops the second (a first run): both restored after
    monkeypatch.setenv(JAX_CACHE_ENV, "")
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "jax_cache_of_the_user"))
    # the keras-hub row decodes as an oracle: each test source as its last reference, so
    # its scores are known by hand (tiny models trained for 2 s score about 0 otherwise)
    prepared, real_prepare = [], recipes.prepare
    monkeypatch.setattr(recipes, "prepare",
                        lambda *a, **k: prepared.append(real_prepare(*a, **k)) or prepared[-1])

    def oracle(model, sources, src_vocab, tgt_vocab, batch_size=128):
        (p,) = prepared                               # keras_hub reads the transformer's
        last = {s: refs[-1] for s, refs in zip(p.test_sources, p.test_references)}
        return [last[s] for s in sources]

    monkeypatch.setattr(bench, "baseline_greedy", oracle)
    out_json = tmp_path / "rows.json"
    assert bench.main([str(EXCERPT), "--reverse", "--budget", "2", "--tiny",
                       "--models", "transformer", "keras_hub", "keras_io", "--max-train",
                       "64",
                       "--max-test", "4", "--json", str(out_json), "--beam", "2",
                       "--set", "batch_size=16", "--set", "anneal=false"]) == 0
    out = capsys.readouterr().out
    assert os.environ[JAX_CACHE_ENV] == "off"     # every compilation paid, as on a first run
    assert "JAX_COMPILATION_CACHE_DIR" not in os.environ
    table = [line for line in out.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| backend | model |") and "BLEU multi-ref" in table[0]
    backend = keras.backend.backend()
    assert table[1].startswith(f"| {backend} | transformer | subword")
    assert table[2].startswith(f"| {backend} | transformer + beam 2 | subword")
    assert table[3].startswith(f"| {backend} | keras_hub | subword")
    assert table[4].startswith(f"| {backend} | keras_io | words (own)") and len(table) == 5
    import json

    saved = json.loads(out_json.read_text())
    rows = saved["rows"]
    # the record names its command (the file by its base name), the split and the machine
    assert saved["command"].startswith(
        "python benchmarks/bench_real_data.py jpn-eng-excerpt.txt --reverse --budget 2")
    assert "--json" not in saved["command"]
    assert saved["file"] == "jpn-eng-excerpt.txt" and saved["reverse"] is True
    assert saved["seed"] == 0                   # the split's, the weights' and the batches'
    assert saved["corpus"]["train"] == 64 and saved["corpus"]["test"] > 0
    assert "cores" in saved["machine"]
    # the cache JAX used is on record (this process's own: imported before the benchmark)
    jax_dir = (__import__("jax").config.jax_compilation_cache_dir
               if keras.backend.backend() == "jax" else None)
    assert "jax_cache" in saved and saved["jax_cache"] == jax_dir
    # each row's BLEU is sacrebleu's on that row's translations (English target: 13a), and
    # its exact match the share equal to the first reference, token for token
    assert len(scored) == len(rows)
    for row, call in zip(rows, scored):
        assert row["sources"] == len(call["hyps"]) == len(call["references"]) == 4
        assert [h for _, h in row["examples"]] == call["hyps"][:3]
        single, multi = sacrebleu_bleu(call["hyps"], call["references"], tokenize="13a")
        assert call["tokenize"] == "13a"
        assert row["bleu_single"] == pytest.approx(single, abs=1e-9)
        assert row["bleu_multi"] == pytest.approx(multi, abs=1e-9)
        assert row["exact_match_single"] == sum(
            h.split() == refs[0].split()
            for h, refs in zip(call["hyps"], call["references"])) / 4
        assert row["tokens_per_second"] > 0 and row["epochs"] >= 1
    assert [r["model"] for r in rows] == ["transformer", "transformer + beam 2", "keras_hub",
                                          "keras_io"]
    # every oracle translation is one of its source's references
    assert rows[2]["bleu_multi"] == pytest.approx(100.0)
    assert rows[2]["exact_match_multi"] == 1.0
    assert rows[1]["epochs"] == rows[0]["epochs"]                  # one model, two decodings
    # a kit row keeps the settings it trained with, overrides included
    assert rows[0]["recipe"]["train"]["batch_size"] == 16 and rows[0]["recipe"]["anneal"] is False
    assert rows[0]["recipe"]["train"]["pad_multiple"] == (16 if backend == "jax" else 1)
    assert "dropout" in rows[0]["recipe"]["model"] and "recipe" not in rows[3]
    assert "the kit's batches: " in out and "keras-hub's batches: " in out
    assert "written without spaces" in out                       # the recipe is printed
    assert "--set batch_size=16" in out and "--set anneal=False" in out
    assert "transformer's batches with the overrides: " in out   # batch_size changes them


def test_set_parses_values_and_rejects_a_missing_equals_sign():
    import pytest

    bench = load_bench()
    assert bench.parse_overrides(["batch_size=32", "learning_rate=2e-3", "anneal=False",
                                  "model.dropout=0.1", "bucket=true"]) == {
        "batch_size": 32, "learning_rate": 0.002, "anneal": False, "model.dropout": 0.1,
        "bucket": True}
    with pytest.raises(ValueError, match="--set expects KEY=VALUE; received 'batch_size'"):
        bench.parse_overrides(["batch_size"])


def test_tokens_of_a_cut_epoch_are_read_from_the_batches_it_ran():
    """Bucketed batches differ in size: the count follows the cut epoch's own plan, the
    plan `fit` draws after one `on_epoch_end`, not the share of batches run."""
    import numpy as np

    from kerasattn.data import TranslationDataset

    bench = load_bench()
    rng = np.random.default_rng(0)
    lengths = np.concatenate([rng.integers(1, 4, 96), rng.integers(20, 30, 32)])
    labels = np.zeros((128, 30), "int32")
    for row, n in enumerate(lengths):
        labels[row, :n] = rng.integers(1, 50, n)
    arrays = {"encoder_inputs": labels.copy(), "decoder_inputs": labels.copy(),
              "labels": labels}

    class Stop:
        stopped, batches_last_epoch = True, 3

    per_epoch = int(np.sum(labels != 0))
    data = TranslationDataset(arrays, batch_size=16, shuffle=True, seed=5, bucket=True)
    data.on_epoch_end()                                   # epoch 1, the one cut
    ran = sum(int(np.sum(data[i][1] != 0)) for i in range(3))
    got = bench.tokens_trained(arrays, 16, 5, True, 2, Stop())
    assert got == per_epoch + ran
    assert ran != round(per_epoch * 3 / len(data))        # the share of batches is not it
    Stop.batches_last_epoch = len(data)                   # stopped after the validation
    assert bench.tokens_trained(arrays, 16, 5, True, 2, Stop()) == 2 * per_epoch
    Stop.stopped = False
    assert bench.tokens_trained(arrays, 16, 5, True, 2, Stop()) == 2 * per_epoch


def test_throughput_bench_alternates_epochs_and_prints_the_ratio(capsys):
    bench = load_bench("bench_real_throughput")
    assert bench.main([str(EXCERPT), "--reverse", "--tiny", "--max-train", "64",
                       "--rounds", "2", "--models", "transformer", "keras_hub"]) == 0
    out = capsys.readouterr().out
    rounds = [line.split(":")[1].split()[0] for line in out.splitlines()
              if line.startswith("  round ")]
    assert rounds == ["transformer", "keras_hub", "transformer", "keras_hub"]
    table = [line for line in out.splitlines() if line.startswith("| ")]
    backend = keras.backend.backend()
    assert table[1].startswith(f"| {backend} | transformer | ")
    assert table[2].startswith(f"| {backend} | keras_hub | ")
    assert table[2].endswith("| 1.00x | 1.00x |")
    with pytest.raises(SystemExit):
        bench.main([str(EXCERPT), "--rounds", "1"])


def test_paired_ratio_compares_the_epochs_of_each_round():
    bench = load_bench("bench_real_throughput")
    # the machine slows by 2x in round 3: both epochs of that round are slower alike
    kit = dict(tokens=1000, seconds=[9.0, 1.0, 2.0, 1.0])
    hub = dict(tokens=1000, seconds=[9.0, 1.25, 2.5, 1.25])
    assert bench.paired_ratio(kit, hub) == pytest.approx(1.25)
    assert bench.paired_ratio(hub, hub) == pytest.approx(1.0)
    # tokens differ (another tokenizer): the ratio is of tokens per second
    assert bench.paired_ratio(dict(tokens=2000, seconds=[1.0, 2.0]),
                              dict(tokens=1000, seconds=[1.0, 1.0])) == pytest.approx(1.0)


def test_baseline_batching_is_the_source_grouping_or_the_kits():
    from types import SimpleNamespace

    bench = load_bench()
    recipe = SimpleNamespace(train=dict(bucket=True, pad_multiple=1))
    assert bench.baseline_batching(recipe) == dict(bucket="source", pad_multiple=8)
    assert bench.baseline_batching(recipe, "kit") == dict(bucket=True, pad_multiple=1)
    flat = SimpleNamespace(train=dict(bucket=False))
    assert bench.baseline_batching(flat) == dict(bucket=False, pad_multiple=8)
    with pytest.raises(ValueError, match="baseline batching must be one of .*received 'tgt'"):
        bench.baseline_batching(recipe, "tgt")


def test_real_token_share_counts_the_positions_that_are_not_padding():
    import numpy as np

    bench = load_bench()
    arrays = {"encoder_inputs": np.array([[4, 5, 0, 0], [4, 0, 0, 0]], "int32"),
              "decoder_inputs": np.array([[1, 6, 7, 0], [1, 6, 0, 0]], "int32"),
              "labels": np.array([[6, 7, 2, 0], [6, 2, 0, 0]], "int32")}
    # one batch of both rows, cut to its longest row: sources 3 of 4, targets 5 of 6 real
    assert bench.real_token_share(arrays, 2, dict(bucket=True, pad_multiple=1)) == (0.75,
                                                                                   5 / 6)
    # no bucketing: the full width of 4
    assert bench.real_token_share(arrays, 2, dict(bucket=False)) == (3 / 8, 5 / 8)


def test_the_keras_io_script_has_its_own_words_widths_and_no_kit_code():
    import ast

    script = load_bench("keras_io_script")
    source = (ROOT / "benchmarks" / "keras_io_script.py").read_text(encoding="utf-8")
    imported = {a.name.split(".")[0] for node in ast.walk(ast.parse(source))
                if isinstance(node, ast.Import) for a in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(ast.parse(source))
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert "kerasattn" not in imported and {"keras", "keras_hub"} <= imported
    assert script.words("Tom isn't here.") == ["tom", "isn", "'", "t", "here", "."]
    vocab = script.WordVocabulary(["a b a", "a c"], max_tokens=6)
    assert vocab.itos == ["", "[UNK]", "[start]", "[end]", "a", "b"]   # by frequency, capped
    x, y = script.vectorize([("a b c", "b a")], vocab, vocab, width=3)
    assert x["encoder_inputs"].tolist() == [[4, 5, 1]]             # c is unknown
    assert x["decoder_inputs"].tolist() == [[2, 5, 4]]             # [start] b a
    assert y.tolist() == [[5, 4, 3]]                               # b a [end]
    x, y = script.vectorize([("a b a b", "a b a b")], vocab, vocab, width=3)
    assert x["encoder_inputs"].tolist() == [[4, 5, 4]] and y.tolist() == [[4, 5, 3]]
