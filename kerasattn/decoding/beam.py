"""Beam search with a length penalty, frozen finished hypotheses and a coverage penalty.

The search itself is described in :mod:`kerasattn.decoding.search`'s docstring (scores,
length penalty, when a sentence is done); this module implements it on the same
:class:`~kerasattn.decoding.search.Stepper` greedy decoding uses.
"""
from __future__ import annotations

import numpy as np

from kerasattn.backend_utils import torch_threads
from kerasattn.decoding.search import (
    BOS_ID,
    EOS_ID,
    PAD_ID,
    DecodeResult,
    Hypothesis,
    Stepper,
    _check_args,
    _check_src,
    length_penalty,
    log_softmax,
)

__all__ = ["beam_search", "gnmt_coverage_penalty"]


def gnmt_coverage_penalty(attention, source_mask, beta: float):
    """GNMT coverage penalty (Wu et al., 2016): ``beta * sum_j log(min(sum_t a_tj, 1))``.

    Zero when every real source word has received a total weight of at least 1 over the
    output; negative, and more so, for every word the hypothesis has (nearly) ignored.

    Args:
        attention: the weights of one hypothesis, `(T_out, ..., S)` (output steps first;
            middle axes such as layers `L` and heads `h` are averaged).
        source_mask: bool `(S,)`, True = real source token (padding is left out).
        beta: the penalty weight, >= 0.

    Returns:
        The penalty, a float <= 0.
    """
    a = np.asarray(attention, dtype=np.float64)
    a = a.reshape(a.shape[0], -1, a.shape[-1]).mean(axis=1)  # (T_out, S)
    total = a.sum(axis=0)[np.asarray(source_mask, bool)]  # sum_t a_tj over real j
    return float(beta * np.log(np.maximum(np.minimum(total, 1.0), 1e-30)).sum())


def beam_search(model, src, beam_size: int = 4, max_length: int = 50, *,
                alpha: float = 0.6, length_penalty_kind: str = "gnmt",
                cache: bool = True, compile="auto", threads="auto",
                coverage_penalty: float = 0.0, trace: bool = False) -> DecodeResult:
    """Beam search with a length penalty and frozen finished hypotheses.

    Args:
        model: a model built by :func:`kerasattn.models.build_model` (or reloaded).
        src: source ids `(B, S)`, padded with 0.
        beam_size: `k` live hypotheses per sentence.
        max_length: the most output tokens (`<eos>` included).
        alpha: length-penalty exponent (0 = raw log-probability).
        length_penalty_kind: "gnmt" (``((5 + L) / 6) ** alpha``) or "power"
            (``L ** alpha``).
        cache, compile, threads: as in :func:`greedy_decode`.
        coverage_penalty: `beta` of the GNMT coverage penalty (Wu et al., 2016),
            added to the score of every hypothesis (the finished ones, and the live
            beams that reach `max_length`; see :func:`gnmt_coverage_penalty`); 0 (the
            default) leaves the scores unchanged. Needs ``cache=True`` and a model whose
            decoder returns cross-attention weights while decoding (not `seq2seq`).
        trace: also keep, for every step, the hypotheses it kept with their scores
            (``DecodeResult.steps``: what the attention explorer shows step by step).

    Returns:
        A :class:`DecodeResult` holding the best hypothesis per row, and the `k` best
        (best first) in ``hypotheses``: the finished ones, plus a row's live beams when
        it reached `max_length`.
    """
    src = _check_src(src)
    _check_args(max_length, alpha, length_penalty_kind, beam_size)
    beta = coverage_penalty
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not beta >= 0:
        raise ValueError("`coverage_penalty` must be a number >= 0; received "
                         f"coverage_penalty={beta!r}.")
    if beta > 0 and not cache:
        raise ValueError("`coverage_penalty` > 0 needs cache=True (uncached decoding "
                         "records no attention weights); received cache=False.")
    with torch_threads(threads):
        return _beam(model, src, int(beam_size), max_length, alpha, length_penalty_kind,
                     cache, compile, float(beta), bool(trace))


def _beam(model, src, k, max_length, alpha, length_penalty_kind, cache,
          compile, beta=0.0, trace=False) -> DecodeResult:
    batch = len(src)
    stepper = Stepper(model, max_length, cache=cache, compile=compile)
    stepper.start(src, repeat=k)  # row b*k + i = beam i of sentence b

    history = np.zeros((batch, k, max_length), dtype=np.int32)  # generated ids per beam
    beam_logp = np.full((batch, k), -np.inf)
    beam_logp[:, 0] = 0.0  # all beams start identical: keep one so no duplicates arise
    attn_history: dict = {}
    finished: list = [[] for _ in range(batch)]
    done = np.zeros(batch, dtype=bool)
    token = np.full(batch * k, BOS_ID, dtype=np.int32)
    steps_run = 0
    steps = [[] for _ in range(batch)] if trace else None

    def hypothesis(b, beam, t, log_prob, ended):
        ids = np.append(history[b, beam, :t], EOS_ID) if ended else history[b, beam, :t]
        length = len(ids)
        attn = {name: a[b, beam, :length].copy() for name, a in attn_history.items()}
        score = float(log_prob / length_penalty(length, alpha, length_penalty_kind))
        if beta > 0.0:
            if "cross" not in attn:
                raise ValueError("beam_search: `coverage_penalty` > 0 needs a model "
                                 "that returns cross-attention weights while decoding; "
                                 f"model {model.name!r} returns {sorted(attn)}.")
            score += gnmt_coverage_penalty(attn["cross"], src[b] != PAD_ID, beta)
        return Hypothesis(ids.astype(np.int32), float(log_prob), score, ended, attn)

    for t in range(max_length):
        logits, attention = stepper.step(token, t)
        steps_run = t + 1
        for name, a in attention.items():  # weights used by the current beams at step t
            if name not in attn_history:
                attn_history[name] = np.zeros((batch, k, max_length) + a.shape[1:],
                                              dtype=np.float32)
            attn_history[name][:, :, t] = a.reshape((batch, k) + a.shape[1:])
        vocab = logits.shape[-1]
        candidates = beam_logp[:, :, None] + log_softmax(logits).reshape(batch, k, vocab)
        candidates = candidates.reshape(batch, k * vocab)
        order = np.argsort(-candidates, axis=1, kind="stable")[:, :2 * k]  # (B, 2k)

        parent = np.tile(np.arange(k), (batch, 1))  # live beam i continues parent[b, i]
        new_token = np.full((batch, k), EOS_ID, dtype=np.int32)
        new_logp = np.full((batch, k), -np.inf)
        for b in range(batch):
            if done[b]:
                new_logp[b] = beam_logp[b]
                continue
            n_live, n_finished = 0, len(finished[b])
            for rank, flat in enumerate(order[b]):
                value = candidates[b, flat]
                if not np.isfinite(value):
                    break
                beam, tok = divmod(int(flat), vocab)
                if tok == EOS_ID:
                    if rank < k:  # a top-k extension ends: freeze it as finished
                        finished[b].append(hypothesis(b, beam, t, value, ended=True))
                    continue
                parent[b, n_live], new_token[b, n_live] = beam, tok
                new_logp[b, n_live] = value
                n_live += 1
                if n_live == k:
                    break
            if trace:
                steps[b].append(_kept(finished[b][n_finished:], history[b], parent[b],
                                      new_token[b], new_logp[b], t, alpha,
                                      length_penalty_kind))
            finished[b].sort(key=lambda h: -h.score)
            del finished[b][k:]  # keep the k best finished hypotheses
            if len(finished[b]) == k:
                # Done when even the best live beam, scored now, cannot beat the worst
                # kept hypothesis (exact for alpha = 0: log-probs only decrease).
                best_live = new_logp[b].max()
                bound = best_live / length_penalty(t + 1, alpha, length_penalty_kind)
                done[b] = not np.isfinite(best_live) or bound <= finished[b][-1].score
        if done.all():
            break
        # Clone the parents' histories, attention and decoder state into the new beams.
        rows = np.arange(batch)[:, None]
        history = history[rows, parent]
        history[:, :, t] = new_token
        for name in attn_history:
            attn_history[name] = attn_history[name][rows, parent]
        beam_logp = new_logp
        stepper.reorder((rows * k + parent).reshape(-1))
        token = new_token.reshape(-1)

    for b in range(batch):  # max_length reached: live beams compete as they are
        if not done[b]:
            for beam in range(k):
                if np.isfinite(beam_logp[b, beam]):
                    finished[b].append(hypothesis(b, beam, steps_run, beam_logp[b, beam],
                                                  ended=False))
        finished[b].sort(key=lambda h: -h.score)
        del finished[b][k:]  # still the k best: finished ones and live beams together

    best = [hyps[0] for hyps in finished]
    n_out = max(len(h.tokens) for h in best)
    tokens = np.zeros((batch, n_out), dtype=np.int32)
    for b, h in enumerate(best):
        tokens[b, :len(h.tokens)] = h.tokens
    attention = {}
    for name in attn_history:
        shape = attn_history[name].shape[3:]
        if name == "self":
            shape = shape[:-1] + (n_out,)
        a = np.zeros((batch, n_out) + shape, dtype=np.float32)
        for b, h in enumerate(best):
            w = h.attention[name]
            a[b, :len(w)] = w[..., :n_out] if name == "self" else w
        attention[name] = a
    return DecodeResult(
        tokens=tokens, lengths=np.array([len(h.tokens) for h in best], dtype=np.int32),
        log_probs=np.array([h.log_prob for h in best]),
        scores=np.array([h.score for h in best]),
        finished=np.array([h.finished for h in best]), attention=attention,
        hypotheses=finished, steps=steps)


def _kept(ended, history, parent, new_token, new_logp, t, alpha, kind) -> list:
    """The hypotheses step ``t`` kept for one sentence, best score first: those that ended
    at this step and the live beams (the parent's ids, then the new token)."""
    out = [dict(tokens=[int(i) for i in h.tokens], log_prob=h.log_prob, score=h.score,
                finished=True) for h in ended]
    for beam in np.flatnonzero(np.isfinite(new_logp)):
        out.append(dict(tokens=[int(i) for i in history[parent[beam], :t]]
                        + [int(new_token[beam])], log_prob=float(new_logp[beam]),
                        score=float(new_logp[beam] / length_penalty(t + 1, alpha, kind)),
                        finished=False))
    return sorted(out, key=lambda h: -h["score"])
