"""The sentence a lesson's attention figures picture on a real corpus (``--data``).

Unit checks of the rule (:func:`kerasattn.course.pictured.choose_pictured`) with
translations made by hand, then the rule through :class:`kerasattn.course.Lesson` on small
English-French files written here and on the committed English-Japanese excerpt, with an
untrained model as the translator.
"""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT

from kerasattn.course import Lesson, Settings, options
from kerasattn.course.pictured import choose_pictured, concentration
from kerasattn.data import Vocabulary
from kerasattn.inference import Translation

EXCERPT = ROOT / "tests" / "data" / "jpn-eng-excerpt.txt"


def translation(source: str, output: str, peak: float = 0.5) -> Translation:
    """A translation of ``source`` as ``output`` whose every step puts ``peak`` on one
    source token and spreads the rest evenly."""
    src, tgt = source.split(), output.split() + ["<eos>"]
    w = np.full((len(tgt), 1, 1, len(src)), (1 - peak) / max(len(src) - 1, 1))
    for t in range(len(tgt)):
        w[t, 0, 0, t % len(src)] = peak
    return Translation(source=source, text=output, source_tokens=src, target_tokens=tgt,
                       score=0.0, attention={"cross": w})


VOCAB = Vocabulary.build(["the black cat sees the small dog near the old house today ."])
PAIRS = [
    ("the cat sees the dog .", "le chat voit le chien ."),                       # 6 tokens
    ("the black cat sees the small dog near the old house .",                     # 12
     "le chat noir voit le petit chien près de la vieille maison ."),
    ("the small dog sees the zebra today .", "le petit chien voit le zèbre ."),  # zebra: OOV
    ("the old dog sees the black cat today .", "le vieux chien voit le chat noir ."),
    ("the cat .", "le chat ."),                                                  # too short
]


def fake_decode(outputs: dict, peaks: dict | None = None):
    seen = []

    def decode(sources):
        seen.append(list(sources))
        return [translation(s, outputs[s], (peaks or {}).get(s, 0.5)) for s in sources]

    decode.seen = seen
    return decode


def test_the_rule_keeps_known_sources_of_the_length_range_and_avoids_unk_outputs():
    outputs = {PAIRS[0][0]: "le chat voit le chien .",           # perfect, but 6 tokens
               PAIRS[1][0]: "le chat noir voit le <unk> chien près de la vieille maison .",
               PAIRS[3][0]: "le vieux chien voit le chat noir ."}
    decode = fake_decode(outputs)
    p = choose_pictured(PAIRS, VOCAB, decode, min_len=6, max_len=12)
    # translated in one batch: the known sources of 6-12 tokens, and only those
    assert decode.seen == [[PAIRS[0][0], PAIRS[3][0], PAIRS[1][0]]]
    # the best BLEU among <unk>-free translations (the 12-token one has an <unk>)
    assert p.source in (PAIRS[0][0], PAIRS[3][0]) and p.bleu == pytest.approx(100.0)
    assert "<unk>" not in p.translation.target_tokens and not p.notes
    assert p.candidates == 3 and p.lengths == (6, 12)
    assert "highest sentence BLEU" in p.describe() and p.source in p.describe()
    # an output repeating one token does not qualify, whatever its BLEU
    repeated = dict(outputs, **{PAIRS[0][0]: "le le le le chat .",
                                PAIRS[3][0]: ". . . . ."})
    p = choose_pictured(PAIRS, VOCAB, fake_decode(repeated), min_len=6, max_len=12)
    assert p.notes and "qualifies" in p.notes[0]     # none qualifies: said so, and the
    assert p.source == PAIRS[1][0]                  # highest BLEU of all is pictured
    repeated[PAIRS[1][0]] = "le chat noir voit le petit chien ."
    p = choose_pictured(PAIRS, VOCAB, fake_decode(repeated), min_len=6, max_len=12)
    assert p.source == PAIRS[1][0] and not p.notes
    # nor does one holding another special token (an untrained model emits <pad>, <bos>)
    repeated[PAIRS[1][0]] = "le chat noir <pad> voit le petit chien ."
    p = choose_pictured(PAIRS, VOCAB, fake_decode(repeated), min_len=6, max_len=12)
    assert p.notes
    # equal BLEU: the more concentrated attention wins
    peaks = {PAIRS[0][0]: 0.4, PAIRS[3][0]: 0.9}
    p = choose_pictured(PAIRS, VOCAB, fake_decode(outputs, peaks), min_len=6, max_len=12)
    assert p.source == PAIRS[3][0] and p.concentration == pytest.approx(0.9)
    # deterministic: the same inputs, the same choice
    again = choose_pictured(PAIRS, VOCAB, fake_decode(outputs, peaks), min_len=6, max_len=12)
    assert again.source == p.source


def test_the_rule_falls_back_and_says_so():
    # no source of 20-30 tokens: the nearest lengths, said in a note
    outputs = {s: "le chat <unk>" for s, _ in PAIRS}
    p = choose_pictured(PAIRS, VOCAB, fake_decode(outputs), min_len=20, max_len=30)
    assert p.source in {s for s, _ in PAIRS} and "zebra" not in p.source
    assert any("no test source of 20-30 tokens" in n for n in p.notes)
    # every translation has an <unk>: the best of them anyway, said in a note
    assert any("no translation of the 4 candidates qualifies" in n for n in p.notes)
    assert "note: no test source of 20-30 tokens" in p.describe()
    # no model: the known source nearest the middle of the range
    p = choose_pictured(PAIRS, VOCAB, None, min_len=6, max_len=12)
    assert p.source == PAIRS[3][0] and p.translation is None          # 9 tokens
    with pytest.raises(ValueError, match="min_len"):
        choose_pictured(PAIRS, VOCAB, None, min_len=9, max_len=3)


def test_concentration_leaves_out_the_final_eos_step():
    t = translation("a b c", "x y", peak=0.8)
    t.attention["cross"][-1] = 1 / 3                     # the <eos> step: uniform
    assert concentration(t) == pytest.approx(0.8)
    assert concentration(Translation("a", "", ["a"], [], 0.0)) is None


# ---------------------------------------------------------------------------------------
# Through the Lesson, on small corpora written here
# ---------------------------------------------------------------------------------------
WORDS = {"the": "le", "black": "noir", "cat": "chat", "dog": "chien", "sees": "voit",
         "small": "petit", "old": "vieux", "house": "maison", "near": "près", "today":
         "aujourd'hui", "my": "mon", "friend": "ami", "reads": "lit", "book": "livre",
         "a": "un", "big": "grand", "garden": "jardin", "in": "dans", "eats": "mange"}


def write_corpus(path, n: int, lengths=range(2, 16), rare_every: int = 4):
    """``n`` English<TAB>French pairs of the given word counts; every ``rare_every``-th
    holds a word seen nowhere else (out of the vocabulary when it lands in the test
    split)."""
    rng = np.random.default_rng(0)
    words, lengths, lines = list(WORDS), list(lengths), []
    for i in range(n):
        en = list(rng.choice(words, size=lengths[i % len(lengths)] - 1))
        if i % rare_every == 0:
            en[int(rng.integers(len(en)))] = f"rare{i}"
        fr = [WORDS.get(w, w) for w in en]
        lines.append(f"{' '.join(en)} .\t{' '.join(fr)} .")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def no_compile(monkeypatch):
    """Decode eagerly: a tiny model decodes faster than it compiles."""
    monkeypatch.setattr(options.Settings, "decode_compile", property(lambda self: False))


def untrained(lesson, name="bahdanau"):
    from kerasattn.course.train import Trained, build

    model, hp = build(name, lesson.data, quick=True)
    return Trained(name=name, model=model, history={}, train_seconds=0.0,
                   tokens_per_second=None, epochs_run=0, params=model.count_params(),
                   hparams=hp)


def test_a_lesson_on_real_data_pictures_a_known_sentence_of_the_length_range(
        tmp_path, no_compile, capsys):
    data = write_corpus(tmp_path / "fra.txt", 400)
    settings = Settings(data=str(data), out=tmp_path / "out", tokenizer="word")
    lesson = Lesson(0, "pictured", settings)
    trained = untrained(lesson)
    vocab = lesson.data.src_vocab
    assert any(w not in vocab for s, _ in lesson.data.test_pairs for w in s.split())
    source, reference = lesson.example_sentence(trained=trained)
    assert all(w in vocab for w in source.split())               # no unknown word
    assert 6 <= len(source.split()) <= 12                        # the length rule
    assert (source, reference) in lesson.data.test_pairs
    printed = capsys.readouterr().out
    assert "pictured sentence" in printed and source in printed
    # the figure pictures it, with the translation it was chosen by; a second Lesson with
    # the same seed and model chooses the same sentence
    fig = lesson.attention_figure(trained, "a.png")
    (ax,) = [a for a in fig.axes if a.images][:1]
    assert [t.get_text() for t in ax.get_xticklabels()] == source.split()
    p = lesson.pictured(trained)
    assert [t.get_text() for t in ax.get_yticklabels()] == p.translation.target_tokens
    assert Lesson(0, "again", settings).example_sentence(trained=trained)[0] == source
    # lesson 00's call: no model named, the last one this lesson trained decides
    lesson._last_trained = trained
    assert lesson.example_sentence(min_len=10, max_len=16)[0] == \
        lesson.pictured(trained, 10, 16).source


def test_a_corpus_of_short_sentences_falls_back_and_says_so(tmp_path, no_compile, capsys):
    data = write_corpus(tmp_path / "short.txt", 300, lengths=range(2, 5))
    lesson = Lesson(0, "short", Settings(data=str(data), out=tmp_path / "out",
                                         tokenizer="word"))
    trained = untrained(lesson)
    source, _ = lesson.example_sentence(trained=trained)
    assert all(w in lesson.data.src_vocab for w in source.split())
    p = lesson.pictured(trained)
    # the candidates are the nearest lengths to 6-12 (enough of them for 8 sources)
    assert p.lengths[1] == 4 and p.lengths[0] <= len(source.split()) <= 4
    assert p.candidates >= 8
    assert "note: no test source of 6-12 tokens" in capsys.readouterr().out


def test_subword_corpus_pictures_subword_tokens(tmp_path, no_compile):
    lesson = Lesson(0, "subword", Settings(data=str(EXCERPT), out=tmp_path / "out"))
    assert lesson.data.tokenizer == "subword"
    trained = untrained(lesson)
    fig = lesson.attention_figure(trained, "a.png")
    p = lesson.pictured(trained)
    (ax,) = [a for a in fig.axes if a.images][:1]
    pieces = lesson.data.src_vocab.pieces(p.source)
    assert [t.get_text() for t in ax.get_xticklabels()] == pieces
    assert p.lengths[0] <= len(pieces) <= p.lengths[1] and "<unk>" not in pieces
