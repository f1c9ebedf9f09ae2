"""The lessons' text agrees with the code.

Every lesson ends with check-your-understanding questions whose answers a student reveals
in the notebook (`<details><summary>Answer</summary> ... </details>` in a markdown cell).
Where an answer is a number, the tests below recompute it with the kit (its layers, the
models' configurations, the reference functions, the built-in corpus) and compare it with
the number parsed from the lesson text, so the text cannot drift away from the code.
"""
from __future__ import annotations

import inspect
import math
import re
from functools import cache
from pathlib import Path

import keras
import numpy as np
import pytest
from keras import ops

LESSONS = Path(__file__).resolve().parents[1] / "lessons"
NUMBER = r"-?\d[\d,]*(?:\.\d+)?"


@cache
def lesson_text(number: int) -> str:
    """The lesson's source, its markdown comment markers removed (`# ` at line start)."""
    (path,) = LESSONS.glob(f"{number:02d}_*.py")
    return "\n".join(re.sub(r"^# ?", "", line) for line in path.read_text().splitlines())


def questions_and_answers(number: int) -> list[tuple[str, str]]:
    """(question, answer) pairs of the lesson's check-your-understanding section."""
    text = lesson_text(number)
    section = text[text.index("## Check your understanding"):]
    parts = re.split(r"<details><summary>Answer</summary>(.*?)</details>", section, flags=re.DOTALL)
    # parts = [intro + q1, a1, q2, a2, ..., tail]
    return [(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]


def answer(number: int, question: int) -> str:
    """The answer text of question ``question`` (1-based) of lesson ``number``."""
    pairs = questions_and_answers(number)
    q, a = pairs[question - 1]
    assert f"**{question}." in q, f"lesson {number:02d}: question {question} not found"
    return " ".join(a.split())


def num(text: str) -> float:
    return float(text.replace(",", ""))


def find(pattern: str, text: str) -> re.Match:
    m = re.search(pattern, text)
    assert m, f"pattern {pattern!r} not found in: {text}"
    return m


def floats(text: str) -> np.ndarray:
    return np.array([num(x) for x in re.findall(NUMBER, text)])


@cache
def corpus():
    from kerasattn.data.synthetic import builtin_corpus

    return builtin_corpus()


def max_words(pairs, side: int = 0) -> int:
    return max(len(p[side].split()) for p in pairs)


# -------------------------------------------------------------------------------- structure
@pytest.mark.parametrize("number", range(7))
def test_every_lesson_ends_with_questions_and_revealable_answers(number):
    text = lesson_text(number)
    assert text.count("## Check your understanding") == 1
    section = text[text.index("## Check your understanding"):]
    assert "record = lesson.finish()" in section, "the questions must be the last section"
    pairs = questions_and_answers(number)
    assert len(pairs) >= 5, f"lesson {number:02d}: only {len(pairs)} questions"
    for i, (q, a) in enumerate(pairs, start=1):
        assert f"**{i}." in q, f"lesson {number:02d}: question {i} is not numbered in order"
        # a blank line after <summary> and before </details>: Jupyter renders the answer
        # as Markdown (maths, lists) only then
        assert a.startswith("\n\n") and a.endswith("\n\n"), \
            f"lesson {number:02d}, answer {i}: needs blank lines inside <details>"
        assert len(a.split()) >= 5, f"lesson {number:02d}, answer {i} is empty"
    assert section.count("<details>") == section.count("</details>") == len(pairs)


@pytest.mark.parametrize("number", range(7))
def test_lessons_read_their_options_before_importing_keras(number):
    """`--backend` is an option: keras (and any kit module that imports it) may be imported
    only after parse_lesson_args has chosen the backend."""
    text = lesson_text(number)
    head = text[:text.index("parse_lesson_args(")]  # up to the call (the import has no "(")
    for line in head.splitlines():
        if line.startswith(("import ", "from ")):
            assert line.startswith(("from kerasattn.course import ", "from __future__")), \
                f"lesson {number:02d} imports before reading its options: {line!r}"


@pytest.mark.parametrize("number", range(7))
def test_lessons_name_their_sources_and_tell_no_history(number):
    text = lesson_text(number)
    for m in re.finditer(r"\bseeds?\b", text, flags=re.IGNORECASE):
        context = text[max(0, m.start() - 20):m.end() + 5]
        assert re.search(r"random_seed|seed=|--seed|random seed", context), \
            f"lesson {number:02d}: 'seed' used for something else than a random seed: " \
            f"{context!r}"
    assert not re.search(r"session[ -]?\d|\(s\d+:|idle machine|this evening|we tried",
                         text, flags=re.IGNORECASE)


# -------------------------------------------------------------------------------- lesson 00
def test_lesson00_noir_weights_and_context_match_the_layer_and_the_reference():
    from kerasattn import reference
    from kerasattn.layers import BahdanauAttention

    a = answer(0, 10)
    alpha_text = floats(find(r"α = \[([^\]]+)\]", a).group(1))
    c_text = floats(find(r"c = \[([^\]]+)\]", a).group(1))
    e_text = floats(find(r"e = \[([^\]]+)\]", a).group(1))
    s2 = np.array([[0.7, 0.8]], "float32")                                  # (1, d)
    H = np.array([[[0.1, 0.2], [0.8, 0.9], [0.5, 0.4], [0.3, 0.1]]], "float32")  # (1, 4, d)
    context, alpha = BahdanauAttention(score="dot")(s2, H)                  # (1, d), (1, 4)
    ref_context, ref_alpha = reference.bahdanau_attention(s2, H, score="dot")
    np.testing.assert_allclose(alpha_text, ref_alpha[0], atol=6e-5)
    np.testing.assert_allclose(c_text, ref_context[0], atol=6e-5)
    np.testing.assert_allclose(ops.convert_to_numpy(alpha)[0], alpha_text, atol=1e-4)
    np.testing.assert_allclose(ops.convert_to_numpy(context)[0], c_text, atol=1e-4)
    np.testing.assert_allclose(e_text, H[0] @ s2[0], atol=6e-3)
    assert "black" in a and int(np.argmax(alpha_text)) == 1                 # h_2 = "black"


def test_lesson00_compression_ratios_match_the_models_and_the_corpus():
    from kerasattn.models import build_model

    a = answer(0, 8)
    q = questions_and_answers(0)[7][0]
    # (a) the course notes' example, with the figures the question gives
    n, d, ctx = (num(x) for x in find(rf"A ({NUMBER})-word sentence, ({NUMBER})-dimensional "
                                      rf"embeddings, a ({NUMBER})-number context",
                                      " ".join(q.split())).groups())
    ratio_a = num(find(rf"into {int(ctx)}: ratio ({NUMBER}) : 1", a).group(1))
    assert ratio_a == round(n * d / ctx, 1)
    # (b) this kit's seq2seq: embedding width and context size read off the built model
    seq2seq = build_model("seq2seq", 20, 20)
    embed = seq2seq.get_layer("src_embedding").output_dim
    context = seq2seq.get_layer("encoder_memory").output.shape[-1]
    longest = max_words(corpus().test)
    m = find(rf"\(b\) ({NUMBER}) × ({NUMBER}) = ({NUMBER}) numbers into ({NUMBER}): "
             rf"ratio ({NUMBER}) : 1", a)
    words, e, total, c, ratio = (num(x) for x in m.groups())
    assert (words, e, c) == (longest, embed, context)
    assert total == words * e and ratio == words * e / c
    m = find(rf"A ({NUMBER})-word sentence: ({NUMBER}) into ({NUMBER}), ratio ({NUMBER}) : 1", a)
    words, total, c, ratio = (num(x) for x in m.groups())
    assert total == words * embed and c == context and ratio == words * embed / context
    # (c) bahdanau keeps one annotation per word
    bahdanau = build_model("bahdanau", 20, 20)
    width = bahdanau.get_layer("encoder_memory").output.shape[-1]
    m = find(rf"\(c\) One annotation of 2 × ({NUMBER}) = ({NUMBER}) numbers per word: "
             rf"({NUMBER}) × ({NUMBER}) = ({NUMBER}) numbers", a)
    units, w, words, w2, total = (num(x) for x in m.groups())
    assert 2 * units == w == w2 == width and words == longest and total == longest * width


def test_lesson00_black_cat_walk_through_matches_the_corpus_and_the_arrays():
    from kerasattn.data import Vocabulary, make_arrays

    a = answer(0, 9)
    # the built-in grammar translates the phrase as the walk-through says
    pairs = [p for p in corpus().train if re.search(r"\bthe black cat\b", p[0])]
    assert pairs and all("le chat noir" in t for _, t in pairs)
    steps = num(find(rf"({NUMBER}) decoder steps for ({NUMBER}) words", a).group(1))
    src, tgt = "the black cat", "le chat noir"
    arr = make_arrays([(src, tgt)], Vocabulary.build([src]), Vocabulary.build([tgt]))
    assert steps == int((arr["labels"][0] != 0).sum())                      # chat noir <eos>
    assert "h_3" in a and "c = h_3" in a and len(src.split()) == 3


def test_lesson00_european_economic_area_sentence_uses_known_words_and_the_mirror_rule():
    text = lesson_text(0)
    sentence = find(r'sentence = "([^"]*european economic area[^"]*)"', text).group(1)
    reference = find(r'reference\s+translation is "([^"]+)"', " ".join(text.split())).group(1)
    train_words = {w for s, _ in corpus().train for w in s.split()}
    assert set(sentence.split()) <= train_words
    assert "european economic area" in sentence
    assert "zone économique européenne" in reference
    # the grammar's mirror order, as it appears in the training data
    mirrored = [t for s, t in corpus().train if "european economic" in s]
    assert mirrored and all(re.search(r"économiques? européen", t) for t in mirrored)


# -------------------------------------------------------------------------------- lesson 01
def test_lesson01_head_split_shape_and_attention_size_match_the_layer():
    from kerasattn.layers import MultiHeadCross
    from kerasattn.models.bahdanau_multihead import BahdanauMultiHeadConfig

    cfg = BahdanauMultiHeadConfig()
    a1 = answer(1, 1)
    d_h = int(num(find(rf"\$d_h = ({NUMBER}) / ({NUMBER}) = ({NUMBER})\$", a1).group(3)))
    assert d_h == cfg.d_model // cfg.num_heads
    B, T = 64, 20
    k = np.zeros((B, T, cfg.d_model), "float32")
    split = ops.transpose(ops.reshape(k, (B, T, cfg.num_heads, d_h)), (0, 2, 1, 3))
    shape = tuple(int(x) for x in floats(find(r"and \(([\d, ]+)\) after the transpose",
                                              a1).group(1)))
    assert shape == tuple(split.shape)

    a2 = answer(1, 2)
    assert num(find(rf"\\sqrt\{{{d_h}\}} \\approx ({NUMBER})", a2).group(1)) == \
        round(math.sqrt(d_h), 2)

    a3 = answer(1, 3)
    mha = MultiHeadCross(cfg.num_heads, cfg.d_model)
    mha(np.zeros((1, 1, cfg.units), "float32"), np.zeros((1, 5, cfg.d_model), "float32"))
    total = num(find(rf"Total .* = ({NUMBER}) weights", a3).group(1))
    assert total == mha.count_params()
    q_proj = num(find(rf"\$W_q\$: ({NUMBER}) × ({NUMBER}) \+ ({NUMBER}) = ({NUMBER})",
                      a3).group(4))
    assert q_proj == cfg.units * cfg.d_model + cfg.d_model


def test_lesson01_dropout_answer_and_text_match_the_step1_model():
    from kerasattn.models import build_model
    from kerasattn.models.bahdanau_multihead import BahdanauMultiHeadConfig

    a = answer(1, 4)
    scale = num(find(rf"1 / \(1 - p\) = ({NUMBER})", a).group(1))
    kept = ops.convert_to_numpy(
        keras.layers.Dropout(0.5, seed=1)(np.ones((1, 400), "float32"), training=True))
    assert set(np.unique(kept)) == {0.0, scale}
    model = build_model("bahdanau_multihead", 20, 20)
    (decoder,) = [layer for layer in model.layers if hasattr(layer, "attention_dropout")]
    said = num(find(rf"trains with\s+attention dropout ({NUMBER})", a).group(1))
    assert decoder.attention_dropout == said == decoder.attention.dropout
    other = num(find(rf"its dropout of ({NUMBER}) acts on the embeddings", a).group(1))
    assert other == BahdanauMultiHeadConfig().dropout
    assert model.get_layer("tgt_dropout").rate == other
    text = " ".join(lesson_text(1).split())
    assert "is built with attention dropout 0" in text


# -------------------------------------------------------------------------------- lesson 02
def test_lesson02_numbers_match_the_encoder_block():
    from kerasattn.layers import AddNorm, TransformerEncoderBlock
    from kerasattn.models.encoder_self_attention import EncoderSelfAttentionConfig

    cfg = EncoderSelfAttentionConfig()
    a1 = answer(2, 1)
    assert num(find(rf"({NUMBER}) steps in the GRU", a1).group(1)) == 20 - 1

    a2 = answer(2, 2)
    per_head, total = (num(x) for x in find(
        rf"= ({NUMBER}) weights per head, {cfg.num_heads} × {NUMBER} = ({NUMBER}) in total",
        a2).groups())
    block = TransformerEncoderBlock(cfg.d_model, cfg.num_heads, cfg.d_ff)
    _, weights = block(np.zeros((1, 20, cfg.d_model), "float32"),
                       return_attention_scores=True)                        # (1, h, T, T)
    assert per_head == 20 * 20 and total == int(np.prod(weights.shape))

    a3 = answer(2, 3)
    said = floats(find(r"\[(-1\.\d+, [^\]]+)\]", a3).group(1))
    x = np.array([[[1.0, 2.0, 3.0, 4.0]]], "float32")
    normed = ops.convert_to_numpy(AddNorm()(x, np.zeros_like(x)))[0, 0]     # LN(x + 0)
    np.testing.assert_allclose(said, normed, atol=6e-4)

    a6 = answer(2, 6)
    assert num(find(rf"Total ({NUMBER})", a6).group(1)) == block.count_params()


# -------------------------------------------------------------------------------- lesson 03
def test_lesson03_mask_counts_match_causal_mask():
    from kerasattn.layers import causal_mask

    a = answer(3, 1)
    allowed, blocked = (num(x) for x in find(
        rf"= ({NUMBER}) allowed pairs and ({NUMBER}) blocked", a).groups())
    m4 = ops.convert_to_numpy(causal_mask(4))
    assert (allowed, blocked) == (m4.sum(), m4.size - m4.sum())
    allowed, size, blocked = (num(x) for x in find(
        rf"= ({NUMBER}) allowed of ({NUMBER}), ({NUMBER}) blocked", a).groups())
    m20 = ops.convert_to_numpy(causal_mask(20))
    assert (allowed, size, blocked) == (m20.sum(), m20.size, m20.size - m20.sum())


# -------------------------------------------------------------------------------- lesson 04
def test_lesson04_positional_encoding_answers_match_the_layer():
    from kerasattn.layers import positional_encoding

    a1 = answer(4, 1)
    sin1, cos1 = (num(x) for x in find(rf"\\sin 1 = ({NUMBER})\$ and \$\\cos 1 = ({NUMBER})",
                                       a1).groups())
    pe = ops.convert_to_numpy(positional_encoding(2, 64))                  # (T, d_model)
    np.testing.assert_allclose(pe[0, :4], [0, 1, 0, 1], atol=1e-6)
    np.testing.assert_allclose(pe[1, :2], [sin1, cos1], atol=6e-5)

    a2 = answer(4, 2)
    fastest = num(find(rf"\$2\\pi \\approx ({NUMBER})\$ positions", a2).group(1))
    slowest = num(find(rf"\\approx ({NUMBER})\$ positions, far longer", a2.replace("{,}", ","))
                  .group(1))
    # wavelength of a column = 2 pi / its angular rate, read off the layer at position 1
    assert round(2 * math.pi / math.asin(pe[1, 0]), 2) == fastest
    rate = math.asin(float(pe[1, 62]))
    assert slowest == pytest.approx(2 * math.pi / rate, rel=1e-3)


def test_lesson04_decoding_counts():
    from kerasattn.data import Vocabulary, make_arrays
    from kerasattn.models.common import IncrementalDecoder

    a3 = answer(4, 3)
    uncached, cached = (num(x) for x in find(
        rf"1 \+ 2 \+ \.\.\. \+ 64 = ({NUMBER}) positions.*processes only the new "
        rf"position: ({NUMBER})", a3).groups())
    assert uncached == sum(range(1, 65)) and cached == 64

    a4 = answer(4, 4)
    rows = num(find(rf"2 × 4 = ({NUMBER}) rows", a4).group(1))
    state = {"cache": np.zeros((2, 1), "float32")}
    assert rows == IncrementalDecoder.repeat(state, 4)["cache"].shape[0]

    a5 = answer(4, 5)
    steps = num(find(rf"Inference: ({NUMBER}) steps", a5).group(1))
    target = " ".join(f"w{i}" for i in range(20))
    arr = make_arrays([("x", target)], Vocabulary.build(["x"]), Vocabulary.build([target]))
    assert steps == int((arr["labels"][0] != 0).sum())                      # 20 words + <eos>


# -------------------------------------------------------------------------------- lesson 05
def test_lesson05_label_smoothing_target_is_what_the_kit_trains_against():
    from kerasattn.metrics import masked_sparse_ce

    a = answer(5, 3)
    right = num(find(rf"= ({NUMBER}); each other word", a).group(1))
    other = num(find(rf"each other word: \$\\epsilon / V\$ = ({NUMBER})", a).group(1))
    V, eps, label = 5, 0.1, 2
    target = np.full(V, other)
    target[label] = right
    assert target.sum() == pytest.approx(1.0)
    logits = np.random.default_rng(0).normal(size=(1, 1, V)).astype("float32")
    log_p = logits[0, 0] - np.log(np.exp(logits[0, 0]).sum())
    kit = float(ops.convert_to_numpy(masked_sparse_ce(np.array([[label]]), logits,
                                                      label_smoothing=eps)))
    assert kit == pytest.approx(-(target * log_p).sum(), rel=1e-5)


def test_lesson05_regularisation_text_matches_the_training_defaults():
    from kerasattn import training
    from kerasattn.models.transformer import TransformerConfig

    text = " ".join(lesson_text(5).split())
    m = find(rf"already trains with label smoothing ({NUMBER}), AdamW with weight decay "
             rf"([\d.e-]+) and gradient clipping at norm ({NUMBER})", text)
    defaults = inspect.signature(training.train).parameters
    assert num(m.group(1)) == defaults["label_smoothing"].default
    assert float(m.group(2)) == defaults["weight_decay"].default
    assert num(m.group(3)) == defaults["clipnorm"].default
    dropout = num(find(rf"The Transformer's dropout is ({NUMBER})", text).group(1))
    assert dropout == TransformerConfig().dropout
    warmup = num(find(rf"\*warmup\* \(({NUMBER}) steps", text).group(1))
    rec = training.recommended_training("transformer")
    assert warmup == rec["warmup_steps"] and "batches of 32" in text and rec["batch_size"] == 32
    assert 'lesson.train("transformer")' in text     # no arguments that change nothing


def test_lesson05_position_answer_matches_the_config_and_the_corpus():
    from kerasattn.models.transformer import TransformerConfig

    a = answer(5, 5)
    k, longest_train, highest = (num(x) for x in find(
        rf"With the shift: ({NUMBER}) \+ ({NUMBER}) = ({NUMBER})", a).groups())
    assert k == TransformerConfig().max_position_shift
    assert longest_train + 1 == max_words(corpus().train)
    assert highest == k + longest_train
    test_words = num(find(rf"positions 0-({NUMBER}) of a ({NUMBER})-word sentence", a).group(2))
    assert test_words == max_words(corpus().test) and test_words - 1 <= highest


# -------------------------------------------------------------------------------- figures
def test_self_attention_heads_draws_every_head_and_checks_its_input(tmp_path):
    from kerasattn import plots

    tokens = ["the", "girls", "that", "the", "dog", "sees", "are", "happy"]
    S = len(tokens) + 2                                                     # 2 pad positions
    w = np.random.default_rng(0).dirichlet(np.ones(S), size=(1, 4, S))      # (1, h, S, S)
    fig = plots.self_attention_heads(w, tokens, tmp_path / "heads", focus="are")
    assert (tmp_path / "heads.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    panels = [ax for ax in fig.axes if ax.get_title().startswith("head")]
    assert [ax.get_title() for ax in panels] == [f"head {i}" for i in range(1, 5)]
    for ax, head in zip(panels, w[0]):
        image = ax.get_images()[0].get_array()
        np.testing.assert_allclose(image, head[:len(tokens), :len(tokens)])  # padding cut
        assert len(ax.patches) == 1                                     # the focus row
    with pytest.raises(ValueError, match="weights"):
        plots.self_attention_heads(np.zeros((4, 3, 5)), tokens[:3])
    with pytest.raises(ValueError, match="focus"):
        plots.self_attention_heads(w, tokens, focus="cat")
    with pytest.raises(ValueError, match="tokens"):
        plots.self_attention_heads(np.zeros((2, 3, 3)), tokens)
