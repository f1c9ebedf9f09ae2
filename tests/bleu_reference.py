"""BLEU recomputed in the tests straight from sacrebleu, and a spy on the kit's scoring.

The tests that train on real data compare the BLEU the kit records (``meta.json``,
``results.json``, a benchmark's rows) with :func:`sacrebleu_bleu` on the same translations
and references: a score stored under the wrong key, taken against the wrong references or
with the wrong sacrebleu tokenizer fails the comparison.
"""
from __future__ import annotations


def sacrebleu_bleu(hyps, references, tokenize="13a") -> tuple[float, float]:
    """``(single, multi)``: sacrebleu corpus BLEU of ``hyps`` against the first reference of
    each source, and against all of them.

    Args:
        hyps: one translation per source, in the kit's normalised tokens.
        references: per source, its references (normalised tokens), first one first.
        tokenize: sacrebleu's tokenizer (``"13a"`` for English, ``"char"`` for Japanese).
    """
    import sacrebleu

    from kerasattn.data import detokenize

    hyps = [detokenize(h) for h in hyps]
    refs = [[detokenize(r) for r in rs] for rs in references]
    single = sacrebleu.corpus_bleu(hyps, [[r[0] for r in refs]], tokenize=tokenize).score
    # sacrebleu takes one stream per reference rank: None where a source has fewer
    streams = [[r[k] if k < len(r) else None for r in refs]
               for k in range(max(map(len, refs)))]
    multi = sacrebleu.corpus_bleu(hyps, streams, tokenize=tokenize).score
    return float(single), float(multi)


def record_grouped_scores(monkeypatch) -> list[dict]:
    """Record every call of :func:`kerasattn.metrics.evaluate_grouped` (it still scores).

    Returns:
        The list the calls are appended to: ``hyps``, ``references``, ``tokenize`` and the
        ``result`` of each.
    """
    from kerasattn import metrics

    real = metrics.evaluate_grouped
    calls = []

    def spy(hyps, references, tokenize="13a"):
        result = real(hyps, references, tokenize=tokenize)
        calls.append(dict(hyps=list(hyps), references=[list(r) for r in references],
                          tokenize=tokenize, result=result))
        return result

    monkeypatch.setattr(metrics, "evaluate_grouped", spy)
    return calls
