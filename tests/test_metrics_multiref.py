"""Several references per source (Tatoeba): grouping, sacrebleu multi-reference BLEU,
single- against multi-reference scores."""
from __future__ import annotations

import pytest
import sacrebleu

from kerasattn import metrics as M

PAIRS = [("i run .", "je cours ."), ("i run .", "je suis en train de courir ."),
         ("he sleeps .", "il dort ."), ("we eat .", "nous mangeons ."),
         ("we eat .", "on mange .")]


def test_group_references_keeps_file_order():
    sources, refs = M.group_references(PAIRS)
    assert sources == ["i run .", "he sleeps .", "we eat ."]
    assert refs == [["je cours .", "je suis en train de courir ."], ["il dort ."],
                    ["nous mangeons .", "on mange ."]]
    with pytest.raises(ValueError, match=r"pairs\[1\] must be a \(source, target\) pair"):
        M.group_references([("a", "b"), ("c",)])
    with pytest.raises(ValueError, match="empty"):
        M.group_references([])


def test_multi_reference_bleu_matches_sacrebleu():
    hyps = ["je suis en train de courir .", "il dort .", "on mange ."]
    _, refs = M.group_references(PAIRS)
    expected = sacrebleu.corpus_bleu(
        ["je suis en train de courir.", "il dort.", "on mange."],
        [["je cours.", "il dort.", "nous mangeons."],
         ["je suis en train de courir.", None, "on mange."]]).score
    assert M.multi_reference_bleu(hyps, refs) == pytest.approx(expected)
    assert M.multi_reference_bleu(hyps, refs) == pytest.approx(100.0)
    # one reference each: the same number as corpus_bleu
    single = [[r[0]] for r in refs]
    assert M.multi_reference_bleu(hyps, single) == pytest.approx(
        M.corpus_bleu(hyps, [r[0] for r in refs]))


def test_evaluate_grouped_reports_both():
    hyps = ["je suis en train de courir .", "il dort .", "on mange ."]
    _, refs = M.group_references(PAIRS)
    out = M.evaluate_grouped(hyps, refs)
    assert out["bleu_multi"] == pytest.approx(100.0)
    assert out["bleu_single"] < 60.0
    assert out["exact_match_multi"] == 1.0 and out["exact_match_single"] == pytest.approx(1 / 3)
    assert out["sources"] == 3 and out["references"] == 5


def test_japanese_target_with_char_tokenization():
    refs = [["私は猫が好きです。"]]
    same = M.multi_reference_bleu(["私は猫が好きです。"], refs, tokenize="char")
    assert same == pytest.approx(100.0)
    assert M.multi_reference_bleu(["私は犬が好きです。"], refs, tokenize="char") > 0.0
    assert M.multi_reference_bleu(["私は犬が好きです。"], refs) == 0.0  # 13a: one word


def test_bad_arguments():
    with pytest.raises(ValueError, match="2 hypotheses and 1 reference lists"):
        M.multi_reference_bleu(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match=r"references\[0\] must be a non-empty list"):
        M.multi_reference_bleu(["a"], [[]])
    with pytest.raises(ValueError, match="single string"):
        M.multi_reference_bleu("a", [["a"]])
