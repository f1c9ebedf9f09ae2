"""Bahdanau (additive) attention and the other classic scoring functions.

Score of decoder state ``s`` (the query) against encoder state ``h_j`` (the memory):

    additive (Bahdanau et al., 2015): e_j = v^T tanh(W_q s + W_k h_j)
    with coverage (Tu et al., 2016; See et al., 2017):
                                      e_j = v^T tanh(W_q s + W_k h_j + w_c cov_j)
                                      (cov_j: the attention already paid to h_j)
    dot      (Luong et al., 2015):    e_j = s . h_j
    general  (Luong et al., 2015):    e_j = s^T W h_j

then ``alpha = masked_softmax(e, memory_mask)`` and the context ``c = sum_j alpha_j h_j``.
"""
from __future__ import annotations

import keras
from keras import ops

from kerasattn.layers._checks import check_dim, check_mask, check_rank, fmt
from kerasattn.layers.masking import masked_softmax

SCORES = ("additive", "dot", "general")


@keras.saving.register_keras_serializable(package="kerasattn")
class BahdanauAttention(keras.layers.Layer):
    """Attention of a decoder state over encoder states, with a choice of score.

    Args:
        units: size of the additive score's hidden layer (`W_q`, `W_k`: `d -> units`);
            unused by the dot and general scores.
        score: "additive" (`v^T tanh(W_q s + W_k h)`), "dot" (`s . h`, needs
            `d_q == d_k`) or "general" (`s^T W h`, `W` of shape `(d_q, d_k)`).
        dropout: dropout rate on the attention weights (training only).
        coverage: additive score only: add the coverage term `w_c cov_j` inside the tanh,
            where `cov_j` is the attention already paid to `h_j` (the sum of the earlier
            steps' weights, passed as the `coverage` call argument).

    Call arguments:
        query: the decoder state `s_prev`, `(B, d_q)` or `(B, T_q, d_q)`.
        memory: the encoder states `h_enc`, `(B, T_k, d_k)`.
        memory_mask: boolean `(B, T_k)`, True = real source token (filled automatically
            from `memory`'s Keras mask). Padded positions get weight 0.
        memory_keys: optional `W_k h_enc` `(B, T_k, units)` from :meth:`project_memory`
            (additive score only). A decoder that calls the layer once per output step
            computes it once per sentence instead of once per step.
        coverage: `cov` `(B, T_k)` (or `(B, T_q, T_k)` for a 3-D query), the sum of the
            earlier steps' weights; required when the layer has `coverage=True`.
        training: enables dropout.

    Returns:
        `(context, weights)`: context `(B, T_q, d_k)` and weights `(B, T_q, T_k)`, or
        `(B, d_k)` and `(B, T_k)` for a 2-D query. Weights are before dropout.

    Weights: `W_q (d_q, units)`, `W_k (d_k, units)`, `v (units,)` (additive) or
    `W (d_q, d_k)` (general); none for dot; plus `w_c (units,)` with coverage.
    """

    def __init__(self, units=None, score="additive", dropout=0.0, coverage=False,
                 **kwargs):
        super().__init__(**kwargs)
        if score not in SCORES:
            raise ValueError(f"BahdanauAttention: `score` must be one of {SCORES}; "
                             f"received score={score!r}.")
        if score == "additive" and (units is None or int(units) <= 0):
            raise ValueError("BahdanauAttention: the additive score needs a positive "
                             f"`units`; received units={units!r}.")
        if coverage and score != "additive":
            raise ValueError("BahdanauAttention: `coverage=True` needs score='additive'; "
                             f"received score={score!r}.")
        self.coverage = bool(coverage)
        self.units = None if units is None else int(units)
        self.score = score
        self.dropout = float(dropout)
        self.supports_masking = True
        self.dropout_layer = keras.layers.Dropout(self.dropout)

    def build(self, query_shape, memory_shape):
        check_rank("BahdanauAttention", "query", query_shape, (2, 3),
                   "(B, d_q) or (B, T_q, d_q)")
        check_rank("BahdanauAttention", "memory", memory_shape, (3,), "(B, T_k, d_k)")
        d_q, d_k = query_shape[-1], memory_shape[-1]
        if self.score == "additive":
            self.W_q = self.add_weight(shape=(d_q, self.units), name="W_q",
                                       initializer="glorot_uniform")
            self.W_k = self.add_weight(shape=(d_k, self.units), name="W_k",
                                       initializer="glorot_uniform")
            self.v = self.add_weight(shape=(self.units,), name="v",
                                     initializer="glorot_uniform")
            if self.coverage:
                self.w_c = self.add_weight(shape=(self.units,), name="w_c",
                                           initializer="glorot_uniform")
        elif self.score == "general":
            self.W = self.add_weight(shape=(d_q, d_k), name="W",
                                     initializer="glorot_uniform")
        self.built = True

    def _check(self, query, memory, memory_mask):
        name = "BahdanauAttention"
        q = check_rank(name, "query", query, (2, 3), "(B, d_q) or (B, T_q, d_q)")
        m = check_rank(name, "memory", memory, (3,), "(B, T_k, d_k)")
        check_dim(name, "memory", m, 0, "query", q, 0, "the batch size B")
        if self.score == "dot":
            check_dim(name, "memory", m, -1, "query", q, -1,
                      "the feature size (the dot score needs d_q == d_k)")
        check_mask(name, "memory_mask", memory_mask, (m[0], m[1]), "(B, T_k)",
                   f"`memory` of shape {fmt(m)}")

    def project_memory(self, memory):
        """`W_k h_j` for every source position, `(B, T_k, units)` (additive score only).

        The part of the additive score that does not depend on the decoder state: compute
        it once per sentence and pass it back as `memory_keys`.
        """
        if self.score != "additive":
            raise ValueError("BahdanauAttention.project_memory: only the additive score "
                             f"has a memory projection; received score={self.score!r}.")
        return ops.matmul(memory, self.W_k)  # W_k h: (B, T_k, units)

    def scores(self, query, memory, memory_keys=None, coverage=None):
        """Alignment scores `e` `(B, T_q, T_k)` for a 3-D query `(B, T_q, d_q)`.

        `coverage`: `(B, T_q, T_k)` (layers with `coverage=True` only).
        """
        if self.score == "additive":
            wq = ops.matmul(query, self.W_q)  # (B, T_q, units)
            wk = (self.project_memory(memory) if memory_keys is None
                  else memory_keys)  # (B, T_k, units)
            pre = wq[:, :, None, :] + wk[:, None, :, :]  # W_q s + W_k h: (B,T_q,T_k,units)
            if self.coverage:
                pre = pre + coverage[..., None] * self.w_c  # + w_c cov_j: (B,T_q,T_k,units)
            hidden = ops.tanh(pre)  # (B, T_q, T_k, units)
            return ops.matmul(hidden, self.v)  # e = v^T tanh(.): (B, T_q, T_k)
        if self.score == "dot":
            return ops.matmul(query, ops.swapaxes(memory, 1, 2))  # s . h: (B, T_q, T_k)
        sw = ops.matmul(query, self.W)  # s^T W: (B, T_q, d_k)
        return ops.matmul(sw, ops.swapaxes(memory, 1, 2))  # s^T W h: (B, T_q, T_k)

    def call(self, query, memory, memory_mask=None, memory_keys=None, coverage=None,
             training=None):
        self._check(query, memory, memory_mask)
        if self.coverage != (coverage is not None):
            raise ValueError(
                "BahdanauAttention: `coverage` must be given exactly when the layer has "
                f"coverage=True; the layer has coverage={self.coverage} and received "
                f"coverage={'None' if coverage is None else fmt(tuple(coverage.shape))}.")
        if coverage is not None:
            want = tuple(query.shape[:-1]) + (memory.shape[1],)
            got = tuple(coverage.shape)
            if len(got) != len(want) or any(a is not None and b is not None and a != b
                                            for a, b in zip(got, want)):
                raise ValueError(f"BahdanauAttention: `coverage` must have shape "
                                 f"{fmt(want)} (the query's leading axes, T_k); "
                                 f"received `coverage` with shape {fmt(got)}.")
        if memory_keys is not None:
            if self.score != "additive":
                raise ValueError("BahdanauAttention: `memory_keys` is only used by the "
                                 f"additive score; received score={self.score!r}.")
            m, k = tuple(memory.shape), tuple(memory_keys.shape)
            if len(k) != 3 or any(a is not None and b is not None and a != b
                                  for a, b in zip(k, m[:2] + (self.units,))):
                raise ValueError(
                    f"BahdanauAttention: `memory_keys` must have shape (B, T_k, units) = "
                    f"{fmt(m[:2] + (self.units,))}; received `memory_keys` with shape "
                    f"{fmt(k)}.")
        single = len(query.shape) == 2
        if single:
            query = query[:, None, :]  # (B, 1, d_q)
            if coverage is not None:
                coverage = coverage[:, None, :]  # (B, 1, T_k)
        if coverage is not None:
            coverage = ops.cast(coverage, query.dtype)
        e = self.scores(query, memory, memory_keys, coverage)  # (B, T_q, T_k)
        mask = None if memory_mask is None else memory_mask[:, None, :]  # (B, 1, T_k)
        alpha = masked_softmax(e, mask, axis=-1)  # (B, T_q, T_k)
        dropped = self.dropout_layer(alpha, training=training)
        context = ops.matmul(dropped, memory)  # c = sum_j alpha_j h_j: (B, T_q, d_k)
        if single:
            return context[:, 0, :], alpha[:, 0, :]  # (B, d_k), (B, T_k)
        return context, alpha

    def compute_output_spec(self, query, memory, memory_mask=None, memory_keys=None,
                            coverage=None, training=None):
        # Shapes only (functional models): no symbolic tracing of `call`.
        lead = tuple(query.shape[:-1])  # (B,) or (B, T_q)
        return (keras.KerasTensor(lead + (memory.shape[-1],), dtype=self.compute_dtype),
                keras.KerasTensor(lead + (memory.shape[1],), dtype=self.compute_dtype))

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, score=self.score, dropout=self.dropout,
                      coverage=self.coverage)
        return config
