"""kerasattn.inference.Translator, the one way to translate: a sentence translates the same
alone and in any batch (greedy and beam, every model); files in, one line out per line in;
the checkpoint directory round trip; errors that name the argument."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zoo

from kerasattn.data import SubwordTokenizer, Vocabulary, load_tatoeba
from kerasattn.inference import CHECKPOINT_FILES, Translator, output_cap
from kerasattn.models import MODEL_NAMES, build_model

ROOT = Path(__file__).resolve().parents[1]
EXCERPT = Path(__file__).parent / "data" / "jpn-eng-excerpt.txt"
TINY = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1,
            max_position_shift=0)

# zoo's id corpus as words: source ids 4..11 are "s4".."s11", target ids 4..12 "t4".."t12"
SRC_WORDS = Vocabulary([f"s{i}" for i in range(4, zoo.SRC_VOCAB)])
TGT_WORDS = Vocabulary([f"t{i}" for i in range(4, zoo.TGT_VOCAB)])
# sentences of 1 to 8 tokens (two output caps: 16 and 32), one repeated
SENTENCES = ["s4 s5 s6", "s7", "s8 s9 s10 s11", "s4 s5 s6", "s11 s10 s9 s8 s7 s6 s5 s4",
             "s9 s4"]


@pytest.fixture(scope="module")
def setup():
    corpus = load_tatoeba(EXCERPT, max_length=None, test_fraction=0.1)   # English -> Japanese
    src = Vocabulary.build([s for s, _ in corpus.train])
    tgt = SubwordTokenizer.build([t for _, t in corpus.train], vocab_size=800)
    model = build_model("transformer", len(src), len(tgt), **TINY)
    return corpus, Translator(model, src, tgt, meta={"src_lang": "en"})


def test_output_cap_by_hand():
    # 1.5 S + 5 tokens, rounded up to a multiple of 16
    assert [output_cap(s) for s in (1, 7, 8, 18, 19)] == [16, 16, 32, 32, 48]


def check_batch_independence(name: str) -> None:
    """Property: the translation (text and score) of a sentence does not depend on which
    sentences share its batch, greedy and beam (the tiny model ``name`` of tests/zoo.py,
    trained to reverse and shift its source: sentences end at different steps, some beyond
    what it was trained on)."""
    tr = Translator(zoo.trained(name)[0], SRC_WORDS, TGT_WORDS)
    # eager steps: the property is about batching and masks; the compiled step is checked
    # equal to the eager one in tests/test_decoding.py
    kw = dict(normalized=True, detokenized=False, compile=False)
    for beam in (1, 3):
        alone = [tr.decode([s], beam=beam, **kw)[0] for s in SENTENCES]
        assert sum(len(t.target_tokens) for t in alone) > 2 * len(SENTENCES)
        for batch_size in (len(SENTENCES), 2):
            together = tr.decode(SENTENCES, beam=beam, batch_size=batch_size, **kw)
            assert [t.text for t in together] == [t.text for t in alone], (beam, batch_size)
            np.testing.assert_allclose([t.score for t in together],
                                       [t.score for t in alone], rtol=1e-4, atol=1e-5)
        # another order of the same sentences: each keeps its own translation
        order = np.random.default_rng(0).permutation(len(SENTENCES))
        shuffled = tr.translate([SENTENCES[i] for i in order], beam=beam, batch_size=3, **kw)
        assert shuffled == [alone[i].text for i in order]
        # the cap is each sentence's own: an 8-token source may run to 32 tokens, a
        # 1-token source stops at 16 even beside it
        caps = [output_cap(len(s.split())) for s in SENTENCES]
        assert all(len(t.target_tokens) <= c for t, c in zip(alone, caps))


@pytest.mark.slow
def test_a_sentence_translates_the_same_alone_and_in_any_batch():
    """check_batch_independence for the seven models, on this backend, in a new Python
    process: late in the JAX pass of the suite, after thousands of compilations in one
    process, XLA has crashed (segmentation fault) compiling these shapes; a new process
    compiles only them."""
    code = ("import sys; sys.path[:0] = ['tests', '.']\n"
            "import test_translator as t\n"
            "from kerasattn.models import MODEL_NAMES\n"
            "for name in MODEL_NAMES:\n"
            "    t.check_batch_independence(name)\n"
            "    print(name, 'ok', flush=True)\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    done = [line for line in proc.stdout.splitlines() if line.endswith(" ok")]
    assert done == [f"{name} ok" for name in MODEL_NAMES]


def test_positional_tables_bound_sources_and_outputs():
    """The Transformer's tables cover 16 positions (tests/zoo.py): a longer source is cut to
    its first 16 tokens with a warning naming it, and outputs stop at 16 tokens."""
    tr = Translator(zoo.untrained("transformer"), SRC_WORDS, TGT_WORDS)
    assert tr.max_source_tokens == tr.max_target_tokens == 16
    long_ = " ".join(["s5"] * 20)
    with pytest.warns(UserWarning, match=r"texts\[1\] longer than the 16 source tokens"):
        short, cut = tr.decode(["s4", long_], normalized=True, max_length=40)
    assert cut.source_tokens == ["s5"] * 16 and len(cut.target_tokens) <= 16
    assert tr.decode([" ".join(["s5"] * 16)], normalized=True)[0].text == cut.text
    # a GRU encoder has no table: only the decoder's bounds the output
    hybrid = Translator(zoo.untrained("transformer_decoder_on_gru"), SRC_WORDS, TGT_WORDS)
    assert hybrid.max_source_tokens is None and hybrid.max_target_tokens == 16


def test_attention_rows_are_distributions_over_the_sentence_own_tokens():
    tr = Translator(zoo.untrained("transformer"), SRC_WORDS, TGT_WORDS)
    short, long_ = tr.decode(["s4 s5", "s4 s5 s6 s7 s8 s9 s10"], normalized=True,
                             attention=True, batch_size=2)
    for t in (short, long_):
        cross = t.attention["cross"]                         # (T_out, L, h, S)
        assert cross.shape[0] == len(t.target_tokens)
        assert cross.shape[-1] == len(t.source_tokens)       # no padding columns
        np.testing.assert_allclose(cross.sum(-1), 1.0, atol=1e-5)
        assert t.attention_map("cross").shape == (cross.shape[2], cross.shape[0],
                                                  cross.shape[3])
    assert Translator(zoo.untrained("seq2seq"), SRC_WORDS, TGT_WORDS).decode(
        ["s4"], normalized=True, attention=True)[0].attention_map() is None


def test_one_line_out_per_line_in_order_and_normalised(tmp_path, setup):
    _, tr = setup
    lines = ["Go.", "", "I give in.", "Tom is a good swimmer, isn't he?", "   ", "Hi."]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out_path = tmp_path / "out.txt"
    out = tr.translate_file(path, out_path, batch_size=2)
    written = out_path.read_text(encoding="utf-8").split("\n")
    assert written[-1] == "" and written[:-1] == out and len(out) == len(lines)
    assert out[1] == "" and out[4] == ""                           # blank in, blank out
    # the raw text is normalised first: "Go." and "go ." are the same sentence
    assert tr.translate(["go ."], normalized=True) == [out[0]]


def test_checkpoint_round_trip_and_stdout(tmp_path, setup, capsys):
    _, tr = setup
    directory = tr.save(tmp_path / "ckpt", meta={"src_lang": "en", "decode": {"max_length": 7}})
    assert sorted(p.name for p in Path(directory).iterdir()) == sorted(CHECKPOINT_FILES)
    assert json.loads((Path(directory) / "meta.json").read_text())["model"] == tr.model.name
    back = Translator.load(directory)
    assert back.src_vocab == tr.src_vocab and back.tgt_vocab == tr.tgt_vocab
    assert back.src_lang == "en" and back.path == str(tmp_path / "ckpt")
    path = tmp_path / "in.txt"
    path.write_text("Go.\nHi.\n", encoding="utf-8")
    direct = tr.translate_file(path)
    assert capsys.readouterr().out == "".join(line + "\n" for line in direct)
    assert back.translate_file(path, tmp_path / "o.txt") == direct
    # the checkpoint's decoding defaults apply: at most 7 output tokens, <eos> included
    assert all(len(t.target_tokens) <= 7 for t in back.decode(["Go.", "Hi."]))
    beam = back.translate(["Go.", "Hi."], beam=2)
    assert len(beam) == 2 and all(isinstance(b, str) for b in beam)


def test_errors_name_the_problem(tmp_path, setup):
    _, tr = setup
    with pytest.raises(ValueError, match=r"input_path \(--input\): no such file"):
        tr.translate_file(tmp_path / "none.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"Go.\nHi \xff there\n")
    with pytest.raises(ValueError, match=r"bad.txt, line 2: not UTF-8"):
        tr.translate_file(bad)
    with pytest.raises(ValueError, match="beam must be an int >= 1, received 0"):
        tr.translate(["go ."], beam=0)
    with pytest.raises(ValueError, match="texts must be a list of sentences"):
        tr.translate("go .")
    with pytest.raises(ValueError, match="model must be a keras.Model; received str"):
        Translator("model.keras", tr.src_vocab, tr.tgt_vocab)
    with pytest.raises(ValueError, match="CHECKPOINT.*no such directory"):
        Translator.load(tmp_path / "nothing")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "meta.json").write_text("{}")
    with pytest.raises(ValueError, match="incomplete: missing model.keras, src_vocab.json"):
        Translator.load(tmp_path / "half")
    # a truncated model.keras is named as such, not as "File not found"
    good = Path(tr.save(tmp_path / "good"))
    (good / "model.keras").write_bytes((good / "model.keras").read_bytes()[:100])
    with pytest.raises(ValueError, match="model.keras is not a complete .keras archive"):
        Translator.load(good)
    with pytest.raises(ValueError, match="is a file, not a directory"):
        Translator.load(good / "meta.json")


def test_resave_removes_meta_first_and_stdin_reads_like_a_file(tmp_path, setup, monkeypatch,
                                                               capsys):
    import io

    _, tr = setup
    directory = Path(tr.save(tmp_path / "ckpt"))

    def interrupted(path):
        raise KeyboardInterrupt

    monkeypatch.setattr(tr.model, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        tr.save(directory)  # killed while writing the model: no meta.json, so incomplete
    monkeypatch.undo()
    with pytest.raises(ValueError, match="incomplete: missing meta.json"):
        Translator.load(directory)
    # standard input: a BOM skipped, a form feed inside a line is not a line break
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(
        "\ufeffGo.\x0c Hi.\nHi.\n".encode("utf-8")), encoding="utf-8"))
    out = tr.translate_file("-")
    assert len(out) == 2 and out[1] == tr.translate(["Hi."])[0]
    assert capsys.readouterr().out == "".join(line + "\n" for line in out)


def test_train_on_corpus_saves_a_translator_that_translates_files(tmp_path):
    from kerasattn.training import recipes

    corpus = load_tatoeba(EXCERPT, max_length=6, test_fraction=0.1)   # English -> Japanese
    run = recipes.train_on_corpus("transformer", corpus, out=tmp_path / "ckpt", epochs=1,
                                  model_kwargs=TINY, max_test=3)
    assert run.prepared.recipe.tokenizer == "subword" and run.result.epochs_run == 1
    assert run.scores["bleu_tokenize"] == "char"                     # Japanese target
    assert len(run.hypotheses) == len(run.prepared.test_sources) == run.scores["sources"] == 3
    tr = Translator.load(tmp_path / "ckpt")
    assert tr.meta["src_lang"] == "en" and tr.meta["tgt_lang"] == "jpn"
    assert isinstance(tr.tgt_vocab, SubwordTokenizer) and tr.tgt_vocab == run.prepared.tgt_vocab
    path = tmp_path / "in.txt"
    path.write_text("Go.\n", encoding="utf-8")
    assert tr.translate_file(path, tmp_path / "out.txt") == run.translator.translate(["Go."])


def test_beam_search_over_many_batch_shapes(setup):
    """Beam search in batches of different sizes, source widths and output caps: a compiled
    step sees several cache widths (TensorFlow then traces it with a symbolic `T_max`).
    Every sentence gets a translation, and the same ones again on a second pass."""
    corpus, tr = setup
    sources = sorted({s for s, _ in corpus.test}, key=len)
    sources = [sources[0], sources[len(sources) // 2], sources[-1], *sources[1:4]]
    first = tr.translate(sources, beam=2, batch_size=2, normalized=True)
    assert len(first) == len(sources) and all(isinstance(h, str) and h for h in first)
    assert tr.translate(sources, beam=2, batch_size=2, normalized=True) == first
