"""Float64 NumPy reference of every layer's math, written independently of the Keras code.

The tests compare each Keras layer against these functions on all three backends, and the
autograder reuses them, as it does the section on training and decoding (the smoothed
loss, the warm-up schedule, greedy search, BLEU's statistics). The math functions use NumPy
only; :func:`weights_of` (which reads a Keras layer's weights into the dict layout below)
imports keras lazily.

Conventions: masks are boolean, True = keep. A softmax row with no kept entry is all
zeros. Shapes: `B` batch, `T_q`/`T_k` query/key lengths, `h` heads, `d_h` head size.

Weight dicts (names match the layers' weights):
    multi-head attention: query_kernel (d_q, h, d_h), query_bias (h, d_h), key_kernel,
        key_bias, value_kernel, value_bias, output_kernel (h, d_h, d_model),
        output_bias (d_model,) (biases may be missing when use_bias=False);
    add_norm: gamma, beta; feed_forward: W1, b1, W2, b2;
    encoder_block: {"attention": mha, "norm1": add_norm, "ffn": ffn, "norm2": add_norm};
    decoder_block: {"self_attention", "norm1", "cross_attention", "norm2", "ffn",
        "norm3"};
    GRU: (kernel (E, 3u), recurrent_kernel (u, 3u), bias (2, 3u)), gates z, r, candidate;
    encoder_gru: {"forward": GRU, "backward": GRU}.
"""
from __future__ import annotations

import numpy as np


def _f64(x):
    return None if x is None else np.asarray(x, dtype=np.float64)


# -- masks and softmax --------------------------------------------------------------
def softmax(x, axis=-1):
    """Numerically stable softmax."""
    x = _f64(x)
    z = np.exp(x - x.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def masked_softmax(scores, mask=None, axis=-1):
    """Softmax over the kept entries only; a fully masked row gives zeros."""
    scores = _f64(scores)
    if mask is None:
        return softmax(scores, axis)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), scores.shape)
    shifted = np.where(mask, scores, -np.inf)
    row_max = np.max(shifted, axis=axis, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)
    z = np.where(mask, np.exp(np.where(mask, scores, 0.0) - row_max), 0.0)
    total = z.sum(axis=axis, keepdims=True)
    return np.divide(z, total, out=np.zeros_like(z), where=total > 0)


def padding_mask(token_ids, pad_id=0):
    """`(B, T)` bool: True at real tokens."""
    return np.asarray(token_ids) != pad_id


def causal_mask(query_length, key_length=None, offset=0):
    """`(T_q, T_k)` bool: query i sees key j iff j <= i + offset."""
    key_length = query_length if key_length is None else key_length
    i = np.arange(query_length)[:, None] + offset
    j = np.arange(key_length)[None, :]
    return j <= i


# -- Bahdanau / Luong scores ----------------------------------------------------------
def additive_score(query, memory, W_q, W_k, v):
    """e[b, i, j] = v . tanh(W_q^T s_bi + W_k^T h_bj); query (B, T_q, d_q)."""
    query, memory = _f64(query), _f64(memory)
    B, T_q, _ = query.shape
    T_k = memory.shape[1]
    e = np.zeros((B, T_q, T_k))
    for b in range(B):
        for i in range(T_q):
            for j in range(T_k):
                e[b, i, j] = _f64(v) @ np.tanh(query[b, i] @ _f64(W_q)
                                               + memory[b, j] @ _f64(W_k))
    return e


def coverage_attention(query, memory, coverage, W_q, W_k, w_c, v, mask=None):
    """Additive attention with coverage (Tu et al., 2016; See et al., 2017), float64.

    ``e_j = v . tanh(W_q^T s + W_k^T h_j + w_c cov_j)``, loops over every b, i, j.

    Args:
        query: `(B, d_q)` or `(B, T_q, d_q)`; memory `(B, T_k, d_k)`.
        coverage: `(B, T_k)` or `(B, T_q, T_k)` (the query's leading axes).
        mask: `(B, T_k)` bool.

    Returns:
        `(context, weights)` as :func:`bahdanau_attention`.
    """
    query, memory, coverage = _f64(query), _f64(memory), _f64(coverage)
    single = query.ndim == 2
    if single:
        query, coverage = query[:, None, :], coverage[:, None, :]
    B, T_q, _ = query.shape
    T_k = memory.shape[1]
    e = np.zeros((B, T_q, T_k))
    for b in range(B):
        for i in range(T_q):
            for j in range(T_k):
                e[b, i, j] = _f64(v) @ np.tanh(query[b, i] @ _f64(W_q)
                                               + memory[b, j] @ _f64(W_k)
                                               + _f64(w_c) * coverage[b, i, j])
    m = None if mask is None else np.asarray(mask, bool)[:, None, :]
    alpha = masked_softmax(e, m)
    context = np.einsum("bij,bjd->bid", alpha, memory)
    if single:
        return context[:, 0], alpha[:, 0]
    return context, alpha


def coverage_loss(weights, coverage):
    """``sum_j min(alpha_j, c_j)`` over the last axis (See et al., 2017)."""
    return np.minimum(_f64(weights), _f64(coverage)).sum(-1)


def gnmt_coverage_penalty(attention, beta):
    """``beta * sum_j log(min(sum_t a_tj, 1))`` (Wu et al., 2016); attention `(T, S)`."""
    total = _f64(attention).sum(0)
    return beta * np.log(np.minimum(total, 1.0)).sum()


def bahdanau_attention(query, memory, W_q=None, W_k=None, v=None, mask=None,
                       score="additive", W=None):
    """Context and weights of Bahdanau-style attention.

    Args:
        query: `(B, d_q)` or `(B, T_q, d_q)`; memory `(B, T_k, d_k)`.
        W_q, W_k, v: additive-score weights; W: general-score matrix `(d_q, d_k)`.
        mask: `(B, T_k)` bool.
        score: "additive", "dot" or "general".

    Returns:
        `(context, weights)`: `(B, T_q, d_k)`, `(B, T_q, T_k)` (no T_q axis for 2-D query).
    """
    query, memory = _f64(query), _f64(memory)
    single = query.ndim == 2
    if single:
        query = query[:, None, :]
    if score == "additive":
        e = additive_score(query, memory, W_q, W_k, v)
    elif score == "dot":
        e = np.einsum("bid,bjd->bij", query, memory)
    elif score == "general":
        e = np.einsum("bid,de,bje->bij", query, _f64(W), memory)
    else:
        raise ValueError("bahdanau_attention: `score` must be one of ('additive', 'dot', "
                         f"'general'); received score={score!r}.")
    m = None if mask is None else np.asarray(mask, bool)[:, None, :]
    alpha = masked_softmax(e, m)
    context = np.einsum("bij,bjd->bid", alpha, memory)
    if single:
        return context[:, 0], alpha[:, 0]
    return context, alpha


# -- dot-product and multi-head attention ---------------------------------------------
def scaled_dot_product_attention(q, k, v, mask=None):
    """`softmax(q k^T / sqrt(d)) v` with a keep-mask; returns (out, weights)."""
    q, k, v = _f64(q), _f64(k), _f64(v)
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def split_heads(x, h):
    """`(B, T, h * d_h)` -> `(B, h, T, d_h)`."""
    x = _f64(x)
    B, T, d = x.shape
    return x.reshape(B, T, h, d // h).transpose(0, 2, 1, 3)


def merge_heads(x):
    """`(B, h, T, d_h)` -> `(B, T, h * d_h)`."""
    x = _f64(x)
    B, h, T, d_h = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, h * d_h)


def _project(x, kernel, bias):
    """x (B, T, d) with kernel (d, h, d_h) -> (B, h, T, d_h) (one projection per head)."""
    y = np.einsum("btd,dhk->bhtk", _f64(x), _f64(kernel))
    if bias is not None:
        y = y + _f64(bias)[None, :, None, :]
    return y


def multi_head_attention(query, value, key=None, weights=None, num_heads=None, mask=None,
                         return_weights=False):
    """Multi-head attention `[head_1; ...; head_h] W_o + b_o`.

    Args:
        query: `(B, T_q, d_q)`; value `(B, T_k, d_v)`; key `(B, T_k, d_k)` (default value).
        weights: dict (see module docstring).
        num_heads: h (checked against the kernels).
        mask: bool broadcastable to `(B, T_q, T_k)` (or `(B, h, T_q, T_k)`).

    Returns:
        `(B, T_q, d_model)`, plus the weights `(B, h, T_q, T_k)` if `return_weights`.
    """
    key = value if key is None else key
    w = weights
    if num_heads is not None and w["query_kernel"].shape[1] != num_heads:
        raise ValueError("multi_head_attention: `num_heads` must equal the kernels' head axis "
                         f"{w['query_kernel'].shape[1]}; received num_heads={num_heads}.")
    q = _project(query, w["query_kernel"], w.get("query_bias"))  # (B, h, T_q, d_h)
    k = _project(key, w["key_kernel"], w.get("key_bias"))
    v = _project(value, w["value_kernel"], w.get("value_bias"))
    if mask is not None:
        mask = np.asarray(mask, bool)
        if mask.ndim == 3:
            mask = mask[:, None]
    heads, alpha = scaled_dot_product_attention(q, k, v, mask)  # (B, h, T_q, d_h)
    out = np.einsum("bhtk,hkd->btd", heads, _f64(w["output_kernel"]))
    if w.get("output_bias") is not None:
        out = out + _f64(w["output_bias"])
    return (out, alpha) if return_weights else out


def attention_mask(query_length, key_length, query_mask=None, value_mask=None,
                   causal=False, offset=0):
    """Combined `(B or 1, T_q, T_k)` keep-mask from padding masks and the causal rule."""
    m = np.ones((1, query_length, key_length), bool)
    if query_mask is not None:
        m = m & np.asarray(query_mask, bool)[:, :, None]
    if value_mask is not None:
        m = m & np.asarray(value_mask, bool)[:, None, :]
    if causal:
        m = m & causal_mask(query_length, key_length, offset)[None]
    return m


# -- normalisation, positions, feed-forward ------------------------------------------
def layer_norm(x, gamma, beta, eps=1e-5):
    """`gamma * (x - mean) / sqrt(var + eps) + beta` over the last axis."""
    x = _f64(x)
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return _f64(gamma) * (x - mu) / np.sqrt(var + eps) + _f64(beta)


def add_norm(x, y, gamma, beta, eps=1e-5):
    """Post-norm residual: `LayerNorm(x + y)` (dropout off)."""
    return layer_norm(_f64(x) + _f64(y), gamma, beta, eps)


def positional_encoding(length, d_model, start_index=0, max_wavelength=10000.0):
    """`(T, d_model)`: PE[p, 2i] = sin(p / w^(2i/d)), PE[p, 2i+1] = cos(p / w^(2i/d))."""
    pos = np.arange(start_index, start_index + length, dtype=np.float64)[:, None]
    pe = np.zeros((length, d_model))
    for c in range(d_model):
        i2 = c - (c % 2)  # 2i for both members of the pair
        angle = pos[:, 0] / max_wavelength ** (i2 / d_model)
        pe[:, c] = np.sin(angle) if c % 2 == 0 else np.cos(angle)
    return pe


def _act(x, activation):
    if activation == "relu":
        return np.maximum(x, 0.0)
    if activation == "gelu":  # exact (erf) gelu
        from math import erf
        return 0.5 * x * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))
    if activation == "sigmoid":
        return 1.0 / (1.0 + np.exp(-x))
    if activation == "tanh":
        return np.tanh(x)
    if activation in (None, "linear"):
        return x
    raise ValueError("`activation` must be one of ('relu', 'gelu', 'sigmoid', 'tanh', "
                     f"'linear', None); received activation={activation!r}.")


def feed_forward(x, W1, b1, W2, b2, activation="relu"):
    """`act(x W1 + b1) W2 + b2`, position by position."""
    return _act(_f64(x) @ _f64(W1) + _f64(b1), activation) @ _f64(W2) + _f64(b2)


# -- blocks ------------------------------------------------------------------------
def encoder_block(x, weights, num_heads, padding_mask=None, activation="relu", eps=1e-5,
                  return_weights=False):
    """`Z = AddNorm(X, MHA(X, X, X, mask)); H' = AddNorm(Z, FFN(Z))`."""
    x = _f64(x)
    T = x.shape[1]
    mask = attention_mask(T, T, padding_mask, padding_mask)
    a, alpha = multi_head_attention(x, x, x, weights["attention"], num_heads, mask, True)
    z = add_norm(x, a, weights["norm1"]["gamma"], weights["norm1"]["beta"], eps)
    f = feed_forward(z, **weights["ffn"], activation=activation)
    out = add_norm(z, f, weights["norm2"]["gamma"], weights["norm2"]["beta"], eps)
    return (out, alpha) if return_weights else out


def decoder_block(x, memory, weights, num_heads, decoder_padding_mask=None,
                  encoder_padding_mask=None, use_causal_mask=True, activation="relu",
                  eps=1e-5, return_weights=False):
    """Post-norm Transformer decoder block.

    `Y1 = AddNorm(X, MHA_mask(X, X, X))`, `Y2 = AddNorm(Y1, MHA(Y1, H_enc, H_enc))`,
    `Z = AddNorm(Y2, FFN(Y2))`.
    """
    x, memory = _f64(x), _f64(memory)
    T, S = x.shape[1], memory.shape[1]
    self_mask = attention_mask(T, T, decoder_padding_mask, decoder_padding_mask,
                               causal=use_causal_mask)
    a1, w1 = multi_head_attention(x, x, x, weights["self_attention"], num_heads,
                                  self_mask, True)
    y1 = add_norm(x, a1, weights["norm1"]["gamma"], weights["norm1"]["beta"], eps)
    cross_mask = attention_mask(T, S, decoder_padding_mask, encoder_padding_mask)
    a2, w2 = multi_head_attention(y1, memory, memory, weights["cross_attention"],
                                  num_heads, cross_mask, True)
    y2 = add_norm(y1, a2, weights["norm2"]["gamma"], weights["norm2"]["beta"], eps)
    f = feed_forward(y2, **weights["ffn"], activation=activation)
    z = add_norm(y2, f, weights["norm3"]["gamma"], weights["norm3"]["beta"], eps)
    return (z, w1, w2) if return_weights else z


# -- recurrence ----------------------------------------------------------------------
def gru_cell(x, s_prev, kernel, recurrent_kernel, bias):
    """One GRU step, Keras's layout (gates ordered z, r, candidate; ``reset_after``):

    `z = sigmoid(x W_z + b_z + s U_z + b'_z)`, `r = sigmoid(x W_r + b_r + s U_r + b'_r)`,
    `s~ = tanh(x W_h + b_h + r * (s U_h + b'_h))`, `s_t = z * s_{t-1} + (1 - z) * s~`.
    ``bias`` is `(2, 3u)`: row 0 for the input side, row 1 for the recurrent side.
    """
    x, s_prev, bias = _f64(x), _f64(s_prev), _f64(bias)
    xz, xr, xh = np.split(x @ _f64(kernel) + bias[0], 3, axis=-1)
    hz, hr, hh = np.split(s_prev @ _f64(recurrent_kernel) + bias[1], 3, axis=-1)
    z = _act(xz + hz, "sigmoid")
    r = _act(xr + hr, "sigmoid")
    candidate = np.tanh(xh + r * hh)
    return z * s_prev + (1.0 - z) * candidate


def gru(x, kernel, recurrent_kernel, bias, s0=None):
    """Every state of a GRU over `x` `(T, E)` (one sequence): `(T, u)`."""
    x = _f64(x)
    s = np.zeros(_f64(recurrent_kernel).shape[0]) if s0 is None else _f64(s0)
    states = []
    for x_t in x:
        s = gru_cell(x_t, s, kernel, recurrent_kernel, bias)
        states.append(s)
    return np.stack(states) if states else np.zeros((0, s.shape[-1]))


def encoder_gru(x, weights, mask=None, bidirectional=True):
    """(Bidirectional) GRU over each row of `x` `(B, S, E)`, reading only its real tokens.

    ``weights``: {"forward": (kernel, recurrent_kernel, bias), "backward": (...)}.
    Returns `(h, s_fwd[, s_bwd])` as :class:`~kerasattn.layers.EncoderGRU`: `h` is 0 at the
    padding, states of an empty row are 0.
    """
    x = _f64(x)
    B, S, _ = x.shape
    u = _f64(weights["forward"][1]).shape[0]
    lengths = np.full(B, S) if mask is None else np.asarray(mask, bool).sum(axis=1)
    h = np.zeros((B, S, 2 * u if bidirectional else u))
    s_fwd, s_bwd = np.zeros((B, u)), np.zeros((B, u))
    for b in range(B):
        n = int(lengths[b])
        if n == 0:
            continue
        fwd = gru(x[b, :n], *weights["forward"])  # h_1..h_n
        h[b, :n, :u] = fwd
        s_fwd[b] = fwd[-1]
        if bidirectional:
            bwd = gru(x[b, :n][::-1], *weights["backward"])[::-1]  # h_j reads x_n..x_j
            h[b, :n, u:] = bwd
            s_bwd[b] = bwd[0]
    return (h, s_fwd, s_bwd) if bidirectional else (h, s_fwd)


# -- training and decoding: loss, learning rate, greedy search, BLEU ---------------------
def log_softmax(x, axis=-1):
    """``x - log sum exp(x)`` over ``axis``, stable."""
    x = _f64(x)
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def label_smoothed_targets(labels, vocab_size, epsilon, pad_id=0):
    """`(B, T, V)` smoothed targets (Szegedy et al., 2016) with ``<pad>`` left out.

    At a real token ``y``: ``q_v = (1 - eps) [v = y] + eps / (V - 1) [v != pad]`` (sums to
    1, ``q_pad = 0``); at a padded position the row is all zeros.
    """
    labels = np.asarray(labels)
    q = np.zeros(labels.shape + (vocab_size,))
    for index in np.ndindex(*labels.shape):
        y = int(labels[index])
        if y == pad_id:
            continue
        row = np.full(vocab_size, epsilon / (vocab_size - 1))
        row[pad_id] = 0.0
        row[y] += 1.0 - epsilon
        q[index] = row
    return q


def masked_label_smoothed_ce(labels, logits, epsilon, pad_id=0):
    """Mean of ``-sum_v q_v log p_v`` over the real tokens (0 when there are none)."""
    labels = np.asarray(labels)
    q = label_smoothed_targets(labels, np.shape(logits)[-1], epsilon, pad_id)
    per_token = -(q * log_softmax(logits)).sum(-1)  # (B, T), 0 at padding
    count = int((labels != pad_id).sum())
    return float(per_token.sum() / count) if count else 0.0


def noam_learning_rate(step, d_model, warmup_steps):
    """``d_model^-0.5 min(step^-0.5, step warmup^-1.5)`` (Vaswani et al., 2017, 5.3);
    ``step`` counts from 1."""
    step = _f64(step)
    return d_model ** -0.5 * np.minimum(step ** -0.5, step * warmup_steps ** -1.5)


def greedy_decode(step_fn, state, max_length, bos_id=2, eos_id=3, pad_id=0):
    """Greedy search, one row at a time.

    ``step_fn(tokens (1,), state (1, ...), t) -> (logits (1, V), state)`` on NumPy arrays;
    ``state`` `(B, ...)`. Each row feeds back its argmax until it produces ``<eos>`` or
    ``max_length`` tokens.

    Returns:
        ``tokens`` `(B, T_out)` (``pad_id`` after a row's end; ``T_out`` the longest row),
        ``lengths`` `(B,)` (``<eos>`` included) and ``finished`` `(B,)`.
    """
    # (Explicit loops throughout, no comprehensions: the grader flags a submission whose
    # code objects equal this module's, and a one-line comprehension is too common.)
    state = np.asarray(state)
    batch = len(state)
    tokens = np.full((batch, max_length), pad_id, dtype=np.int64)
    lengths = np.zeros(batch, dtype=np.int64)
    finished = np.zeros(batch, dtype=bool)
    for b in range(batch):
        row_state, token = state[b:b + 1], bos_id
        for t in range(max_length):
            logits, row_state = step_fn(np.array([token]), row_state, t)
            token = int(np.argmax(logits[0]))
            tokens[b, t] = token
            lengths[b] = t + 1
            if token == eos_id:
                finished[b] = True
                break
    return {"tokens": tokens[:, :lengths.max()], "lengths": lengths, "finished": finished}


def bleu_statistics(hypotheses, references, max_order=4):
    """Corpus BLEU's sufficient statistics (Papineni et al., 2002) on token lists.

    Args:
        hypotheses: one token list per sentence.
        references: per sentence, a list of reference token lists.
        max_order: the longest n-gram.

    Returns:
        ``counts`` / ``totals`` (per order n: clipped n-gram matches / n-grams in the
        hypotheses, summed over the corpus), ``sys_len`` (hypothesis tokens), ``ref_len``
        (per sentence the reference length closest to the hypothesis', the shorter one on a
        tie), ``bp`` (1 if ``sys_len >= ref_len``, else ``exp(1 - ref_len / sys_len)``, 0
        for empty hypotheses) and ``score`` (``100 bp exp(mean_n log(counts_n / totals_n))``, 0
        when an order has no match).
    """
    # (Explicit loops, no comprehensions or lambdas: see greedy_decode.)
    counts, totals = np.zeros(max_order, np.int64), np.zeros(max_order, np.int64)
    sys_len = ref_len = 0
    for hyp, refs in zip(hypotheses, references):
        hyp = list(hyp)
        sys_len += len(hyp)
        best = None  # the closest reference length, the shorter on a tie
        for ref in refs:
            if best is None or (abs(len(ref) - len(hyp)), len(ref)) < (abs(best - len(hyp)),
                                                                        best):
                best = len(ref)
        ref_len += best
        for n in range(1, max_order + 1):
            positions = range(len(hyp) - n + 1)
            totals[n - 1] += len(positions)
            seen = set()
            for i in positions:
                gram = tuple(hyp[i:i + n])
                if gram in seen:
                    continue
                seen.add(gram)
                in_hyp = 0
                for j in positions:
                    in_hyp += tuple(hyp[j:j + n]) == gram
                in_refs = 0  # the most times gram occurs in one reference
                for ref in refs:
                    found = 0
                    for j in range(len(ref) - n + 1):
                        found += tuple(ref[j:j + n]) == gram
                    in_refs = max(in_refs, found)
                counts[n - 1] += min(in_hyp, in_refs)
    if sys_len >= ref_len:
        bp = 1.0
    else:
        bp = float(np.exp(1.0 - ref_len / sys_len)) if sys_len else 0.0
    if counts.all() and totals.all():
        score = 100.0 * bp * float(np.exp(np.mean(np.log(counts / totals))))
    else:
        score = 0.0
    return {"counts": counts, "totals": totals, "sys_len": sys_len, "ref_len": ref_len,
            "bp": bp, "score": score}


# -- reading weights out of Keras layers -----------------------------------------------
def _np(variable):
    import keras

    return np.asarray(keras.ops.convert_to_numpy(variable.value), dtype=np.float64)


def weights_of(layer) -> dict:
    """A kerasattn layer's weights as float64 arrays in this module's dict layout.

    Supports BahdanauAttention, MultiHeadCross, AddNorm, PositionwiseFeedForward,
    TransformerEncoderBlock, TransformerDecoderBlock, EncoderGRU and Keras's GRU / GRUCell
    (a `(kernel, recurrent_kernel, bias)` tuple) (by class name).
    """
    kind = type(layer).__name__
    if kind == "BahdanauAttention":
        names = {"additive": ("W_q", "W_k", "v"), "general": ("W",), "dot": ()}[layer.score]
        if getattr(layer, "coverage", False):
            names += ("w_c",)  # for coverage_attention
        return {n: _np(getattr(layer, n)) for n in names}
    if kind == "MultiHeadCross":
        out = {}
        for part, sub in (("query", layer.query_dense), ("key", layer.key_dense),
                          ("value", layer.value_dense),
                          ("output", layer.output_dense)):
            out[f"{part}_kernel"] = _np(sub.kernel)
            if sub.bias is not None:
                out[f"{part}_bias"] = _np(sub.bias)
        return out
    if kind == "AddNorm":
        return {"gamma": _np(layer.layer_norm.gamma), "beta": _np(layer.layer_norm.beta)}
    if kind == "PositionwiseFeedForward":
        return {"W1": _np(layer.dense_1.kernel), "b1": _np(layer.dense_1.bias),
                "W2": _np(layer.dense_2.kernel), "b2": _np(layer.dense_2.bias)}
    if kind == "TransformerEncoderBlock":
        return {"attention": weights_of(layer.attention), "norm1": weights_of(layer.add_norm_1),
                "ffn": weights_of(layer.ffn), "norm2": weights_of(layer.add_norm_2)}
    if kind == "TransformerDecoderBlock":
        return {"self_attention": weights_of(layer.self_attention),
                "norm1": weights_of(layer.add_norm_1),
                "cross_attention": weights_of(layer.cross_attention),
                "norm2": weights_of(layer.add_norm_2),
                "ffn": weights_of(layer.ffn), "norm3": weights_of(layer.add_norm_3)}
    if kind == "GRU" or kind == "GRUCell":
        cell = getattr(layer, "cell", layer)
        return (_np(cell.kernel), _np(cell.recurrent_kernel), _np(cell.bias))
    if kind == "EncoderGRU":
        out = {"forward": weights_of(layer.forward_gru)}
        if layer.backward_gru is not None:
            out["backward"] = weights_of(layer.backward_gru)
        return out
    raise TypeError(f"weights_of: unsupported layer type {kind}")
