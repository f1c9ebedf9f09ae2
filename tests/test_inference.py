"""Translating a file: one line out per line in, in order, batched, normalised as the
training data was; a checkpoint written by save_translator reloads with its tokenizers."""
from __future__ import annotations

from pathlib import Path

import pytest

from kerasattn import inference
from kerasattn.data import SubwordTokenizer, Vocabulary, load_tatoeba
from kerasattn.models import build_model
from kerasattn.training.checkpointing import load_translator, save_translator

EXCERPT = Path(__file__).parent / "data" / "jpn-eng-excerpt.txt"
TINY = dict(d_model=16, num_heads=2, d_ff=32, num_encoder_layers=1, num_decoder_layers=1,
            max_position_shift=0)


@pytest.fixture(scope="module")
def setup():
    corpus = load_tatoeba(EXCERPT, max_length=None, test_fraction=0.1)   # English -> Japanese
    src = Vocabulary.build([s for s, _ in corpus.train])
    tgt = SubwordTokenizer.build([t for _, t in corpus.train], vocab_size=800)
    model = build_model("transformer", len(src), len(tgt), **TINY)
    return corpus, src, tgt, model


LINES = ["Go.", "", "I give in.", "Tom is a good swimmer, isn't he?", "   ", "Hi."]


def test_one_line_out_per_line_in_order_and_normalised(tmp_path, setup):
    _, src, tgt, model = setup
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    out_path = tmp_path / "out.txt"
    out = inference.translate_file(model, path, out_path, src_vocab=src, tgt_vocab=tgt,
                                   batch_size=2)
    written = out_path.read_text(encoding="utf-8").split("\n")
    assert written[-1] == "" and written[:-1] == out and len(out) == len(LINES)
    assert out[1] == "" and out[4] == ""                           # blank in, blank out
    # each line alone gives the same translation as in its batch (order kept); the raw
    # text is normalised first ("Go." and "go ." are the same sentence)
    for line, got in zip(LINES, out):
        if line.strip():
            alone = inference.translate_texts(model, [line], src_vocab=src, tgt_vocab=tgt)
            assert alone == [got]
    assert inference.translate_texts(model, ["go ."], src_vocab=src, tgt_vocab=tgt,
                                     normalized=True) == [out[0]]


def test_stdout_beam_and_checkpoint_round_trip(tmp_path, setup, capsys):
    corpus, src, tgt, model = setup
    ckpt = save_translator(tmp_path / "ckpt", model, src, tgt, {"src_lang": "en"})
    tr = load_translator(ckpt)
    assert tr.src_vocab == src and tr.tgt_vocab == tgt and tr.src_lang == "en"
    path = tmp_path / "in.txt"
    path.write_text("Go.\nHi.\n", encoding="utf-8")
    direct = inference.translate_file(model, path, src_vocab=src, tgt_vocab=tgt)
    assert capsys.readouterr().out == "".join(line + "\n" for line in direct)
    assert inference.translate_file(str(ckpt), path, tmp_path / "o.txt") == direct
    beam = inference.translate_file(tr, path, tmp_path / "b.txt", beam=2)
    assert len(beam) == 2 and all(isinstance(b, str) for b in beam)


def test_errors_name_the_problem(tmp_path, setup):
    _, src, tgt, model = setup
    with pytest.raises(ValueError, match="input_path: no such file"):
        inference.translate_file(model, tmp_path / "none.txt", src_vocab=src, tgt_vocab=tgt)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"Go.\nHi \xff there\n")
    with pytest.raises(ValueError, match=r"bad.txt, line 2: not UTF-8"):
        inference.translate_file(model, bad, src_vocab=src, tgt_vocab=tgt)
    with pytest.raises(ValueError, match="pass src_vocab and tgt_vocab"):
        inference.translate_texts(model, ["go ."])
    with pytest.raises(ValueError, match="beam must be an int >= 1, received 0"):
        inference.translate_texts(model, ["go ."], src_vocab=src, tgt_vocab=tgt, beam=0)
    with pytest.raises(ValueError, match="checkpoint.*incomplete: missing"):
        (tmp_path / "half").mkdir()
        (tmp_path / "half" / "meta.json").write_text("{}")
        load_translator(tmp_path / "half")


def test_train_on_corpus_saves_a_translator_that_translates_files(tmp_path):
    from kerasattn.training import recipes

    corpus = load_tatoeba(EXCERPT, max_length=6, test_fraction=0.1)   # English -> Japanese
    run = recipes.train_on_corpus("transformer", corpus, out=tmp_path / "ckpt", epochs=1,
                                  model_kwargs=TINY, max_test=3)
    assert run.prepared.recipe.tokenizer == "subword" and run.result.epochs_run == 1
    assert run.scores["bleu_tokenize"] == "char"                     # Japanese target
    assert len(run.hypotheses) == len(run.prepared.test_sources) == run.scores["sources"] == 3
    tr = load_translator(tmp_path / "ckpt")
    assert tr.meta["src_lang"] == "en" and tr.meta["tgt_lang"] == "jpn"
    assert isinstance(tr.tgt_vocab, SubwordTokenizer) and tr.tgt_vocab == run.prepared.tgt_vocab
    path = tmp_path / "in.txt"
    path.write_text("Go.\n", encoding="utf-8")
    assert inference.translate_file(tr, path, tmp_path / "out.txt") == \
        inference.translate_texts(run.translator, ["Go."])


def test_beam_search_over_many_batch_shapes(setup):
    """Beam search in batches of different sizes, source widths and output caps: a compiled
    step sees several cache widths (TensorFlow then traces it with a symbolic `T_max`).
    Every sentence gets a translation, and the same ones again on a second pass."""
    corpus, src, tgt, model = setup
    sources = sorted({s for s, _ in corpus.test}, key=len)
    sources = [sources[0], sources[len(sources) // 2], sources[-1], *sources[1:4]]
    first = inference.translate_texts(model, sources, src_vocab=src, tgt_vocab=tgt,
                                      beam=2, batch_size=2, normalized=True)
    assert len(first) == len(sources) and all(isinstance(h, str) and h for h in first)
    assert inference.translate_texts(model, sources, src_vocab=src, tgt_vocab=tgt,
                                     beam=2, batch_size=2, normalized=True) == first
