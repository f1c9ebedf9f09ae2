"""Real data through the command layer: --data, --tokenizer, --reverse, --mixed-precision,
`kerasattn data fetch`, `kerasattn translate --input`, subword checkpoints, the device line.

Everything runs on the committed excerpt ``tests/data/jpn-eng-excerpt.txt`` (293 real
Tatoeba English-Japanese pairs) in quick mode; downloads go to ``file://`` URLs.
"""
from __future__ import annotations

import json
import math
import zipfile

import keras
import pytest
from bleu_reference import record_grouped_scores, sacrebleu_bleu
from conftest import ROOT

from kerasattn import cli
from kerasattn.course import options
from kerasattn.data import LICENCE

EXCERPT = ROOT / "tests" / "data" / "jpn-eng-excerpt.txt"


JPN_ARGV = ["train", "bahdanau", "--quick", "--data", str(EXCERPT), "--reverse", "--seed",
            "1", "--beam", "2"]


@pytest.fixture(scope="module")
def jpn_run(tmp_path_factory):
    """`kerasattn train bahdanau --quick --data EXCERPT --reverse` (Japanese -> English):
    the checkpoint, and what the run passed to `metrics.evaluate_grouped`."""
    out = tmp_path_factory.mktemp("ckpt") / "jpn_bahdanau"
    with pytest.MonkeyPatch.context() as mp:
        scored = record_grouped_scores(mp)
        rc = cli.main([*JPN_ARGV, "--out", str(out)])
    assert rc == 0
    return out, scored


@pytest.fixture(scope="module")
def jpn_checkpoint(jpn_run):
    return jpn_run[0]


def test_train_on_real_data_uses_the_recipe_and_saves_a_subword_checkpoint(jpn_checkpoint):
    meta = json.loads((jpn_checkpoint / "meta.json").read_text(encoding="utf-8"))
    # Japanese has no spaces: the recipe chooses subword tokens, and says why
    assert meta["tokenizer"] == "subword"
    assert "written without spaces" in meta["recipe"]["tokenizer"]
    assert meta["src_lang"] == "jpn" and meta["tgt_lang"] == "en"
    assert meta["settings"]["reverse"] is True
    assert meta["test_sources"] >= 1 and meta["bleu_tokenize"] == "13a"   # English target
    src = json.loads((jpn_checkpoint / "src_vocab.json").read_text(encoding="utf-8"))
    assert src["format"].startswith("kerasattn.SubwordTokenizer")


def test_train_bleu_is_sacrebleu_on_the_checkpoints_own_translations(jpn_run):
    """meta.json's single- and multi-reference BLEU equal sacrebleu's, recomputed here from
    the saved checkpoint's translations of the test split's distinct sources against the
    targets the test split pairs with each of them."""
    from kerasattn.course.data import load_data
    from kerasattn.inference import Translator

    out, scored = jpn_run
    meta = json.loads((out / "meta.json").read_text(encoding="utf-8"))
    d = load_data(options.settings_from_args(cli.build_parser().parse_args(JPN_ARGV), out))
    references = {}
    for source, target in d.test_pairs:
        references.setdefault(source, []).append(target)
    sources = list(references)
    assert meta["test_sources"] == len(sources) >= 2
    hyps = Translator.load(out).translate(sources, normalized=True, detokenized=False)
    single, multi = sacrebleu_bleu(hyps, [references[s] for s in sources], tokenize="13a")
    assert meta["bleu_single"] == pytest.approx(single, abs=1e-9)
    assert meta["bleu_multi"] == pytest.approx(multi, abs=1e-9)
    # --beam 2: the same sources decoded by beam search, scored the same way
    beam_hyps = Translator.load(out).translate(sources, normalized=True, detokenized=False,
                                               beam=2)
    single, multi = sacrebleu_bleu(beam_hyps, [references[s] for s in sources],
                                   tokenize="13a")
    assert meta["beam"]["width"] == 2 and meta["beam"]["test_sources"] == len(sources)
    assert meta["beam"]["bleu_single"] == pytest.approx(single, abs=1e-9)
    assert meta["beam"]["bleu_multi"] == pytest.approx(multi, abs=1e-9)
    # the run scored these very translations (the reloaded model decodes as the trained one)
    assert [(c["hyps"], c["tokenize"]) for c in scored] == [(hyps, "13a"), (beam_hyps, "13a")]


def test_train_scores_an_oracle_at_bleu_100(tmp_path, monkeypatch):
    """Translations that equal a reference score what they must: multi-reference BLEU 100,
    every one an exact match. (A quick model scores about 0, where a score stored under the
    wrong key, or translations scored against another source's references, go unseen.)"""
    from kerasattn.course.data import load_data
    from kerasattn.inference import Translator

    argv = [*JPN_ARGV, "--out", str(tmp_path / "c")]
    d = load_data(options.settings_from_args(cli.build_parser().parse_args(argv),
                                             tmp_path / "c"))
    last = {}
    for source, target in d.test_pairs:
        last[source] = target
    real = Translator.translate

    def oracle(self, texts, **kwargs):
        out = real(self, texts, **kwargs)
        return [last.get(t, o) for t, o in zip(texts, out)]

    monkeypatch.setattr(Translator, "translate", oracle)
    assert cli.main(argv) == 0
    meta = json.loads((tmp_path / "c" / "meta.json").read_text(encoding="utf-8"))
    assert meta["test_sources"] == len(last)
    assert meta["bleu_multi"] == pytest.approx(100.0)
    assert meta["exact_match_multi"] == 1.0
    single, _ = sacrebleu_bleu([last[s] for s in d.test_sources], d.test_references)
    assert meta["bleu_single"] == pytest.approx(single, abs=1e-9)
    assert meta["beam"]["bleu_multi"] == pytest.approx(100.0)      # beam 2: the same oracle
    assert meta["beam"]["bleu_single"] == pytest.approx(single, abs=1e-9)


def test_train_prints_the_recipe(tmp_path, capsys):
    rc = cli.main(["train", "seq2seq", "--quick", "--data", str(EXCERPT), "--tokenizer",
                   "word", "--out", str(tmp_path / "c"), "--beam", "3"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "recipe for seq2seq:" in out and "word tokens (as asked)" in out
    # greedy and beam 3, a table row and a BLEU line each
    backend = keras.backend.backend()
    rows = [line.split(f" {backend} ")[0].strip() for line in out.splitlines()
            if line.startswith("seq2seq") and f" {backend} " in line]
    assert rows == ["seq2seq", "seq2seq + beam 3"]
    assert out.count("against all of each source's references") == 2
    assert "\nseq2seq + beam 3: " in out
    meta = json.loads((tmp_path / "c" / "meta.json").read_text(encoding="utf-8"))
    assert meta["tokenizer"] == "word" and meta["src_lang"] == "en"
    assert meta["bleu_tokenize"] == "char"                               # Japanese target


def test_translate_a_sentence_with_a_subword_checkpoint(jpn_checkpoint, capsys):
    rc = cli.main(["translate", str(jpn_checkpoint), "彼は運が良かった。", "--attention",
                   "--plot", str(jpn_checkpoint / "att.png")])
    out = capsys.readouterr().out
    assert rc == 0
    assert "cross-attention" in out and (jpn_checkpoint / "att.png").is_file()
    # the heatmap's columns are the source's subword pieces, not one spaceless "word"
    header = out.split("cross-attention of the last decoder layer")[1].splitlines()[1]
    assert len(header.split()) > 1


def test_translate_a_file_one_line_out_per_line_in(jpn_checkpoint, tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("彼は運が良かった。\n\nトムに伝えて。\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert cli.main(["translate", str(jpn_checkpoint), "--input", str(src), "--output",
                     str(out), "--beam", "2"]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 4 and lines[3] == ""      # three lines, each ended by a newline
    assert lines[1] == ""                          # an empty line in gives an empty line out
    capsys.readouterr()
    assert cli.main(["translate", str(jpn_checkpoint), "--input", str(src)]) == 0
    stdout = capsys.readouterr().out.split("\n")
    assert len(stdout) == 4 and stdout[1] == ""


@pytest.mark.parametrize("argv, message", [
    (["translate", "CKPT"], "either a quoted sentence or --input FILE; received neither"),
    (["translate", "CKPT", "hello .", "--input", "x.txt"], "received both"),
    (["translate", "CKPT", "hello .", "--output", "x.txt"], "--output needs --input"),
    (["translate", "CKPT", "--input", "/no/such/input.txt"], "no such file"),
    (["lesson", "0", "--reverse"], "--reverse needs --data"),
    (["train", "bahdanau", "--mixed-precision", "float8"], "--mixed-precision must be one of"),
    (["train", "bahdanau", "--data", "no/such/file.txt"], "not a language code"),
    (["data", "fetch", "f-r-a"], "lang must be a manythings.org language code"),
])
def test_real_data_errors_are_one_clear_line(jpn_checkpoint, argv, message, capsys):
    argv = [str(jpn_checkpoint) if a == "CKPT" else a for a in argv]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def _zip_of_excerpt(tmp_path):
    archive = tmp_path / "jpn-eng.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(EXCERPT, "jpn.txt")
    return archive


def test_data_fetch_from_a_local_url(tmp_path, capsys):
    archive = _zip_of_excerpt(tmp_path)
    cache = tmp_path / "cache"
    rc = cli.main(["data", "fetch", "jpn", "--url", archive.as_uri(), "--cache-dir",
                   str(cache)])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert LICENCE in out                # (keras prints "Downloading data from ..." first)
    path = out[-1]
    assert path.startswith(str(cache)) and zipfile.is_zipfile(path)
    # the file it prints is what --data takes
    assert options.check_data_path(path).is_file()


def test_data_fetch_url_from_the_environment(tmp_path, monkeypatch, capsys):
    archive = _zip_of_excerpt(tmp_path)
    monkeypatch.setenv("KERASATTN_DATA_URL", archive.as_uri())
    assert cli.main(["data", "fetch", "jpn", "--cache-dir", str(tmp_path / "c")]) == 0
    assert LICENCE in capsys.readouterr().out.splitlines()


def test_data_fetch_offline_is_one_clear_sentence(tmp_path, capsys):
    rc = cli.main(["data", "fetch", "jpn", "--url", (tmp_path / "missing.zip").as_uri(),
                   "--cache-dir", str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert "--data PATH" in err and "built-in corpus" in err
    assert len(err.strip().splitlines()) == 1


def test_data_option_takes_a_language_code():
    assert options.check_data_path("JPN") == "jpn"
    assert options.check_data_path(str(EXCERPT)) == EXCERPT


def test_new_run_options_reach_the_lesson_script(tmp_path):
    argv = ["--quick", "--data", str(EXCERPT), "--tokenizer", "subword", "--reverse",
            "--mixed-precision"]
    args = cli.build_parser().parse_args(["lesson", "0", *argv])
    forwarded = options.run_options_argv(args)
    direct = options.parse_lesson_args(0, "test", argv, n_models=2)
    assert options.parse_lesson_args(0, "test", forwarded, n_models=2) == direct
    assert direct.tokenizer == "subword" and direct.reverse
    assert direct.mixed_precision == "auto"
    sig = direct.signature()
    assert sig["tokenizer"] == "subword" and sig["reverse"] is True
    # the built-in corpus's records keep their old keys
    plain = options.parse_lesson_args(0, "test", ["--quick"], n_models=2).signature()
    assert not {"tokenizer", "reverse", "mixed_precision"} & set(plain)


def test_lessons_compare_budgets_per_lesson_by_default_and_per_model_with_minutes():
    """Lesson 00 splits its budget over two models: by default its record matches lesson
    01's (the same lesson budget); with `--minutes M` every model got M, and it still does."""
    def sig(number, argv, n_models):
        return options.parse_lesson_args(number, "test", argv, n_models=n_models).signature()

    assert sig(0, [], 2) == sig(1, [], 1)
    assert sig(0, ["--minutes", "1.5"], 2) == sig(1, ["--minutes", "1.5"], 1)
    assert sig(0, ["--minutes", "1.5"], 2) != sig(1, [], 1)


def test_decode_cap_counts_encoded_tokens_not_spaces(monkeypatch):
    """A Japanese sentence is one "word": the output cap must come from its pieces."""
    from kerasattn import decoding
    from kerasattn.data import SubwordTokenizer
    from kerasattn.inference import Translator
    from kerasattn.models import build_model

    lines = [line.split("\t") for line in EXCERPT.read_text(encoding="utf-8").splitlines()]
    sp = SubwordTokenizer.build([f[1] for f in lines], vocab_size=300)
    sentence = max((f[1] for f in lines), key=len)
    n = len(sp.encode(sentence))
    assert n > 10 and len(sentence.split()) == 1
    seen = {}

    def fake_greedy(model, src, max_length, **kw):
        seen["max_length"], seen["width"] = max_length, src.shape[1]
        raise StopIteration

    monkeypatch.setattr(decoding, "greedy_decode", fake_greedy)
    model = build_model("seq2seq", len(sp), len(sp), embed_dim=8, units=8)
    with pytest.raises(StopIteration):
        Translator(model, sp, sp).translate([sentence], normalized=True)
    assert seen["max_length"] >= 1.5 * n + 5 and seen["width"] >= n


@pytest.mark.parametrize("model", ["bahdanau", "transformer"])
def test_mixed_bfloat16_quick_train_has_a_finite_loss(model, tmp_path):
    try:
        rc = cli.main(["train", model, "--quick", "--epochs", "2", "--mixed-precision",
                       "mixed_bfloat16", "--out", str(tmp_path / model)])
        policy_after = keras.config.dtype_policy().name
    finally:
        keras.config.set_dtype_policy("float32")
    assert rc == 0
    meta = json.loads((tmp_path / model / "meta.json").read_text())
    assert meta["precision"] == "mixed_bfloat16"       # trained under the policy
    assert policy_after == "float32"                   # decoded and saved in float32
    config = json.loads(zipfile.ZipFile(tmp_path / model / "model.keras").read("config.json"))
    assert "bfloat16" not in json.dumps(config)
    assert meta["history"]["loss"] and all(math.isfinite(x) for x in meta["history"]["loss"])
    assert all(math.isfinite(x) for x in meta["history"]["val_loss"])


def test_the_device_is_reported():
    from kerasattn.backend_utils import compute_device

    device = compute_device()
    assert device == "cpu" or device.split()[0] in ("gpu", "tpu", "mps", "cuda")


@pytest.mark.slow
@pytest.mark.lesson
def test_lesson_00_on_real_data_is_the_lab(tmp_path, capfd, monkeypatch):
    out = tmp_path / "l0"
    scored = record_grouped_scores(monkeypatch)
    rc = cli.main(["lesson", "0", "--quick", "--data", str(EXCERPT), "--out", str(out)])
    text = capfd.readouterr().out
    assert rc == 0
    assert f"backend: {keras.backend.backend()} on " in text
    assert "subword tokens: the target side is written without spaces" in text
    record = json.loads((out / "results.json").read_text())
    assert set(record["models"]) == {"seq2seq", "bahdanau"}
    # each model's BLEU is sacrebleu's on the translations it scored, on characters (the
    # target is Japanese)
    assert len(scored) == len(record["models"])
    for call, r in zip(scored, record["models"].values()):
        single, multi = sacrebleu_bleu(call["hyps"], call["references"], tokenize="char")
        assert r["bleu_tokenize"] == call["tokenize"] == "char"
        assert r["n_sources"] == len(call["hyps"]) == len(call["references"])
        assert r["bleu_single"] == pytest.approx(single, abs=1e-9)
        assert r["bleu_multi"] == pytest.approx(multi, abs=1e-9)
        assert r["by_length"] and r["history"]["loss"]
    for fig in ("curves_with_without_attention.png", "bleu_vs_length.png",
                "attention_bahdanau.png", "attention_bahdanau_longer.png"):
        assert (out / fig).is_file(), fig
    assert "attention_bahdanau_european_economic_area.png" not in record["figures"]


def test_data_language_code_offline_is_one_clear_sentence(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("KERASATTN_DATA_URL", (tmp_path / "missing-deu.zip").as_uri())
    rc = cli.main(["train", "seq2seq", "--quick", "--data", "deu", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert "--data deu: Could not download" in err and "--data PATH" in err
    assert "built-in corpus" in err


def test_lesson_06_on_real_data_back_translates_the_other_language(tmp_path, capfd):
    """Lesson 06 with --data: the reverse model reads the target side with the target's own
    tokenizer, back-translates, and every run is scored."""
    out = tmp_path / "l6"
    rc = cli.main(["lesson", "6", "--quick", "--data", str(EXCERPT), "--out", str(out)])
    text = capfd.readouterr().out
    assert rc == 0, text[-2000:]
    assert "back-translated" in text
    assert "jpn-only sentences" in text and "en to jpn, same test sentences" in text
    assert "French" not in text   # the built-in corpus's languages are not named
    record = json.loads((out / "results.json").read_text())
    assert set(record["models"]) == {"base (first phase)", "base, teacher forcing",
                                     "base, scheduled sampling", "base, coverage",
                                     "jpn to en", "base, back-translation"}
    assert all(r["bleu_tokenize"] for r in record["models"].values())
