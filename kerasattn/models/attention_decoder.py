"""The Bahdanau decoder: a GRU whose input at step t carries the attention context c_t.

Bahdanau, Cho and Bengio (2015), decoder step t (``s_prev`` = s_{t-1}, ``h_enc`` = the
encoder annotations h_1..h_S):

    e_tj    = score(s_{t-1}, h_j)                      attention from the *previous* state
    alpha_t = masked_softmax_j(e_tj)                   padding gets weight 0
    c_t     = sum_j alpha_tj h_j
    s_t     = GRU([y_{t-1}; c_t], s_{t-1})             the context enters the recurrence
    o_t     = [s_t; c_t]                               -> logits = W_o o_t + b_o (outside)

This is attention *inside* the recurrence: c_t is computed before s_t and feeds it. The
Luong-style shortcut (run the GRU first, attend from s_t afterwards) is a different model.

``attention="additive"`` uses :class:`~kerasattn.layers.BahdanauAttention`'s weights
(``e_tj = v^T tanh(W_q s_{t-1} + W_k h_j)``); ``attention="multihead"`` (step 1 of the
path) uses :class:`~kerasattn.layers.MultiHeadCross`'s, with the single query s_{t-1}.

How to read :class:`AttentionGRUDecoder`:

1. :meth:`~AttentionGRUDecoder.bahdanau_step` is the step above, one line per equation;
   its pieces :meth:`~AttentionGRUDecoder.score`,
   :meth:`~AttentionGRUDecoder.masked_softmax`, :meth:`~AttentionGRUDecoder.context` and
   :meth:`~AttentionGRUDecoder.gru` follow it.
2. Two additions, each off unless the layer is built with it, are applied around that step
   and leave it unchanged: scheduled sampling (Bengio et al., 2015) chooses the token fed as
   y_{t-1} (:meth:`~AttentionGRUDecoder.sampled_input`); coverage (Tu et al., 2016; See et
   al., 2017) gives the step a score with a coverage term
   (:meth:`~AttentionGRUDecoder.coverage_score`) and sums the weights after it
   (:meth:`~AttentionGRUDecoder.coverage_update`).
3. :meth:`~AttentionGRUDecoder.call` runs the step over the `T` target positions (a scan).
   What does not change from step to step is computed once per batch, before the loop:
   :meth:`~AttentionGRUDecoder.prepare` (the keys `W_k h_j`, the mask as softmax terms, the
   GRU weights sliced) and :meth:`~AttentionGRUDecoder.project_inputs` (`y_{t-1} W_y + b_x`
   for every t).
"""
from __future__ import annotations

from typing import NamedTuple

import keras
from keras import ops

from kerasattn import steps
from kerasattn.layers import BahdanauAttention, MultiHeadCross
from kerasattn.layers.masking import masked_softmax as _masked_softmax
from kerasattn.models.common import IncrementalDecoder
from kerasattn.recurrence import gru_step, scan
from kerasattn.steps import _in_compute_dtype, _kernel_and_bias, _project

ATTENTIONS = ("additive", "multihead")


class Prepared(NamedTuple):
    """What every step of a batch reads and no step changes (:meth:`AttentionGRUDecoder.prepare`).

    Attributes:
        h_enc: the encoder annotations h_1..h_S, `(B, S, D)`, in the attention's compute
            dtype.
        keys: what the score compares `s_{t-1}` with: `W_k h_j` `(B, S, a)` (additive) or
            the per-head keys and values `(K, V)`, each `(B, h, S, d_h)` (multi-head).
        mask: bool `(B, S)`, True = real source token; None = no padding.
        mask_bias: the mask as softmax terms ``steps.mask_bias(mask)``, each `(B, S)`; used
            instead of `mask` when given.
        gru_weights: `(W_c (C, 3u), U (u, 3u), b_s (3u,))`, see
            :meth:`AttentionGRUDecoder.step_weights`.
    """

    h_enc: object
    keys: object
    mask: object
    mask_bias: object
    gru_weights: tuple


def _as_dtype(x, like):
    """`x` cast to `like`'s dtype; no op at all when they already agree (the usual case)."""
    dtype = keras.backend.standardize_dtype(like.dtype)
    return x if keras.backend.standardize_dtype(x.dtype) == dtype else ops.cast(x, dtype)


# The multi-head sums, two spellings of the same sums: einsum is the faster one on
# TensorFlow and JAX, broadcast products on eager torch (docs/benchmarks_decoding.md).
def _head_dots(q, k):
    """`q_i . k_ij` for every head `i` and key `j`: `(B, h, d_h)`, `(B, h, S, d_h)` ->
    `(B, h, S)`."""
    if keras.backend.backend() == "torch":
        return ops.sum(q[:, :, None, :] * k, axis=-1)
    return ops.einsum("bhd,bhsd->bhs", q, k)


def _head_sums(alpha, v):
    """`sum_j alpha_ij v_ij` for every head `i`: `(B, h, S)`, `(B, h, S, d_h)` ->
    `(B, h, d_h)`."""
    if keras.backend.backend() == "torch":
        return ops.sum(alpha[..., None] * v, axis=2)
    return ops.einsum("bhs,bhsd->bhd", alpha, v)


@keras.saving.register_keras_serializable(package="kerasattn")
class AttentionGRUDecoder(keras.layers.Layer):
    """GRU decoder with attention computed from `s_{t-1}` inside the recurrence.

    The step is :meth:`bahdanau_step`; scheduled sampling and coverage are optional
    additions around it (see the module docstring for a reading order).

    Args:
        units: GRU state size `u`.
        attention: "additive" (Bahdanau) or "multihead" (`MultiHeadCross`).
        attention_units: hidden size of the additive score (additive only).
        num_heads: number of heads `h` (multihead only).
        d_attention: width of the multi-head context (multihead only; divisible by
            `num_heads`).
        attention_dropout: dropout on the attention weights (training only).
        scheduled_sampling: enable scheduled sampling (Bengio et al., 2015). The layer
            then holds a non-trainable scalar `teacher_forcing_ratio` (1.0 at first; set
            it with :class:`kerasattn.training.TeacherForcingSchedule`) and, when training
            with a ratio p < 1, feeds from the second step on (t >= 2; step 1 always
            reads the gold `<bos>`) the gold `y_{t-1}` with probability p and otherwise
            the embedding of its own previous prediction
            `argmax(W_o [s_{t-1}; c_{t-1}] + b_o)` (:meth:`sampled_input`). Needs
            :meth:`attach_feedback`.
        coverage: use a coverage vector in the additive attention (Tu et al., 2016; See
            et al., 2017): `cov_t = sum_{t'<t} alpha_t'` enters the score as
            `w_c cov_tj` (:meth:`coverage_score`).
        coverage_loss_weight: with coverage, add `lambda * mean_b sum_t sum_j
            min(alpha_tj, cov_tj)` to the model's losses while training (See et al.,
            2017, who average over t instead: this lambda weighs about T times theirs
            against the per-token cross-entropy); 0 adds nothing.

    Call arguments:
        inputs: embedded previous tokens `y_{t-1}`, `(B, T, E)` (teacher forcing).
        memory: encoder annotations `h_enc`, `(B, S, D)`.
        initial_state: `s_0`, `(B, u)`.
        memory_mask: bool `(B, S)`, True = real source token. If omitted, Keras fills it
            from `memory`'s Keras mask (the `<arg>_mask` convention); the kit's models
            pass it explicitly (`SourcePaddingMask`), so it does not depend on Keras mask
            propagation.
        target_mask: bool `(B, T)`, True = real target step; the coverage loss sums over
            these steps only (None: over every step).
        return_attention: also return the weights of every step.
        training: enables attention dropout (and scheduled sampling).

    Returns:
        `outputs` `(B, T, u + C)` = `[s_t; c_t]` for every step (`C = D` for additive,
        `d_attention` for multihead); with `return_attention` also the weights
        `(B, T, h, S)` (`h = 1` for additive).
    """

    def __init__(self, units, attention="additive", attention_units=None, num_heads=1,
                 d_attention=None, attention_dropout=0.0, scheduled_sampling=False,
                 coverage=False, coverage_loss_weight=0.0, **kwargs):
        super().__init__(**kwargs)
        if coverage_loss_weight and not coverage:
            raise ValueError("AttentionGRUDecoder: `coverage_loss_weight` needs "
                             f"coverage=True; received coverage={coverage!r}.")
        if not float(coverage_loss_weight) >= 0.0:
            raise ValueError("AttentionGRUDecoder: `coverage_loss_weight` must be >= 0; "
                             f"received coverage_loss_weight={coverage_loss_weight!r}.")
        self.coverage_loss_weight = float(coverage_loss_weight)
        if coverage and attention != "additive":
            raise ValueError("AttentionGRUDecoder: `coverage=True` needs "
                             f"attention='additive'; received attention={attention!r}.")
        if attention not in ATTENTIONS:
            raise ValueError(f"AttentionGRUDecoder: `attention` must be one of "
                             f"{ATTENTIONS}; received attention={attention!r}.")
        self.units = int(units)
        self.attention_kind = attention
        self.attention_units = None if attention_units is None else int(attention_units)
        self.num_heads = int(num_heads) if attention == "multihead" else 1
        self.d_attention = None if d_attention is None else int(d_attention)
        self.attention_dropout = float(attention_dropout)
        self.scheduled_sampling = bool(scheduled_sampling)
        self.coverage = bool(coverage)
        self._feedback = None  # () -> (embedding, output_projection, bottleneck)
        if self.scheduled_sampling:
            self.seed_generator = keras.random.SeedGenerator(0, name="sampling_seed")
        if attention == "additive":
            self.attention = BahdanauAttention(self.attention_units or self.units,
                                               score="additive", coverage=self.coverage,
                                               dropout=self.attention_dropout,
                                               name="attention")
        else:
            if self.d_attention is None:
                raise ValueError("AttentionGRUDecoder: attention='multihead' needs "
                                 "`d_attention`; received d_attention=None.")
            self.attention = MultiHeadCross(self.num_heads, self.d_attention,
                                            dropout=self.attention_dropout,
                                            name="attention")
        self.cell = keras.layers.GRUCell(self.units, name="gru_cell")

    def build(self, inputs_shape, memory_shape, initial_state_shape=None):
        if len(inputs_shape) != 3 or len(memory_shape) != 3:
            raise ValueError(
                "AttentionGRUDecoder: `inputs` must be (B, T, E) and `memory` (B, S, D); "
                f"received shapes {tuple(inputs_shape)} and {tuple(memory_shape)}.")
        if self.attention_kind == "additive":
            self.attention.build((None, self.units), tuple(memory_shape))
        else:
            self.attention.build((None, 1, self.units), tuple(memory_shape))
        self.cell.build((None, inputs_shape[-1] + self.context_dim(memory_shape[-1])))
        if self.scheduled_sampling:
            self.teacher_forcing_ratio = self.add_weight(
                shape=(), name="teacher_forcing_ratio", initializer="ones",
                trainable=False, dtype="float32")
        self.built = True

    # -- the Bahdanau step (Bahdanau et al., 2015) ------------------------------------

    def bahdanau_step(self, y_prev, s_prev, prepared, training=None, score=None):
        """One decoder step: attend from `s_{t-1}`, then update the state with `c_t`.

        Args:
            y_prev: the previous token `y_{t-1}`, given through the GRU's input weights:
                `y_{t-1} W_y + b_x`, `(B, 3u)` (:meth:`project_inputs`).
            s_prev: the previous state `s_{t-1}`, `(B, u)`.
            prepared: the batch's :class:`Prepared` (`h_enc`, its keys, the source mask),
                from :meth:`prepare`.
            training: enables attention dropout.
            score: the score function `(s_prev, prepared) -> e`; None = :meth:`score`.
                Coverage passes ``coverage_score(cov_t)`` here.

        Returns:
            `(s_t (B, u), c_t (B, C), alpha (B, h, S))`; `h = 1` for the additive score.
        """
        score = self.score if score is None else score
        e = score(s_prev, prepared)  # e_tj = score(s_{t-1}, h_j): (B, h, S)
        alpha = self.masked_softmax(e, prepared)  # alpha_t = masked softmax_j(e_tj): (B, h, S)
        c_t = self.context(alpha, prepared, training)  # c_t = sum_j alpha_tj h_j: (B, C)
        s_t = self.gru(y_prev, c_t, s_prev, prepared)  # s_t = GRU([y_{t-1}; c_t], s_{t-1})
        return s_t, c_t, alpha

    def score(self, s_prev, prepared):
        """The alignment scores `e_tj = score(s_{t-1}, h_j)`, `(B, h, S)`.

        Additive (Bahdanau et al., 2015), one head:

            e_tj = v^T tanh(W_q s_{t-1} + W_k h_j)

        Multi-head (step 1 of the path), per head `i`, with `q_ti = s_{t-1} W_q^(i) +
        b_q^(i)` and the head's key `k_ij`:

            e_tij = q_ti . k_ij / sqrt(d_h)

        `W_k h_j` (or `k_ij`) does not depend on `t`: it comes from `prepared.keys`.
        """
        if self.attention_kind == "multihead":
            return self._multihead_score(s_prev, prepared)
        s_prev, w_q, v = self._in_attention_dtype(s_prev, self.attention.W_q.value,
                                                  self.attention.v.value)
        hidden = ops.matmul(s_prev, w_q)[:, None, :] + prepared.keys  # W_q s + W_k h_j: (B,S,a)
        return ops.matmul(ops.tanh(hidden), v)[:, None, :]  # v^T tanh(.): (B, 1, S)

    def masked_softmax(self, e, prepared):
        """`alpha_tj = exp(e_tj) / sum_k exp(e_tk)` over the real source positions only.

        Padding gets weight exactly 0; a row without any real position gets all zeros.
        `(B, h, S)` -> `(B, h, S)`.
        """
        if prepared.mask_bias is not None:
            bias, keep = prepared.mask_bias  # (B, S) each
            return steps.biased_softmax(e, bias[:, None, :], keep[:, None, :])
        mask = None if prepared.mask is None else prepared.mask[:, None, :]  # (B, 1, S)
        return _masked_softmax(e, mask)

    def context(self, alpha, prepared, training=None):
        """The context `c_t = sum_j alpha_tj h_j`, `(B, C)`.

        Additive: the weighted sum of the annotations (`C = D`). Multi-head: each head
        sums its values, `head_ti = sum_j alpha_tij v_ij`, and `c_t = [head_t1; ...;
        head_th] W_o + b_o` (`C = d_attention`). While training, attention dropout drops
        entries of `alpha` before the sum (the step still returns `alpha` undropped).
        """
        if self.attention_kind == "multihead":
            return self._multihead_context(self._dropout(alpha, training), prepared)
        alpha = self._dropout(alpha[:, 0, :], training)  # the one head: (B, S)
        return ops.einsum("bs,bsd->bd", alpha, prepared.h_enc)  # sum_j alpha_tj h_j: (B, D)

    def gru(self, y_prev, c_t, s_prev, prepared):
        """`s_t = GRU([y_{t-1}; c_t], s_{t-1})`, `(B, u)`: Keras's `GRUCell` math.

        The GRU multiplies its input `[y_{t-1}; c_t]` by its kernel `W = [W_y; W_c]`,
        which splits as `y_{t-1} W_y + c_t W_c`. `y_prev` arrives as `y_{t-1} W_y + b_x`,
        so only `c_t W_c` is computed here; :func:`~kerasattn.recurrence.gru_step` does
        the gates.
        """
        w_c, u, b_s = prepared.gru_weights
        x = y_prev + ops.matmul(_as_dtype(c_t, y_prev), w_c)  # [y_{t-1}; c_t] W + b_x: (B, 3u)
        return gru_step(x, s_prev, u, b_s)  # z, r, candidate, s_t: (B, u)

    # -- addition 1: scheduled sampling (Bengio et al., 2015) -------------------------

    def sampled_input(self, y_gold, keep, s_prev, c_prev):
        """The token step `t` reads under scheduled sampling: the gold one or its own guess.

            y^_{t-1} = argmax_k (W_o [s_{t-1}; c_{t-1}] + b_o)_k     the previous prediction
            input_t  = keep_t Embed(y_{t-1}) + (1 - keep_t) Embed(y^_{t-1})

        with `keep_t = 1` with probability `p` (the layer's `teacher_forcing_ratio`,
        drawn by :meth:`teacher_forcing_coins`). When the model has an output bottleneck,
        the logits are `W_o t_{t-1} + b_o` with `t_{t-1} = W_t [s_{t-1}; c_{t-1}] + b_t`.
        No gradient flows through the argmax.

        Args:
            y_gold: the embedded gold token `Embed(y_{t-1})`, `(B, E)`.
            keep: `(B, 1)`, 1.0 = read the gold token.
            s_prev: `s_{t-1}`, `(B, u)`.
            c_prev: `c_{t-1}`, `(B, C)`.

        Returns:
            The embedded input token of step `t`, `(B, E)`.
        """
        embedding, projection, bottleneck = self._feedback()
        o_prev = ops.concatenate([s_prev, c_prev], axis=-1)  # [s_{t-1}; c_{t-1}]: (B, u + C)
        if bottleneck is not None:  # t_{t-1} = W_t [s_{t-1}; c_{t-1}] + b_t
            o_prev = ops.matmul(o_prev, bottleneck.kernel) + bottleneck.bias
        logits = ops.matmul(o_prev, projection.kernel) + projection.bias  # (B, V)
        y_hat = ops.stop_gradient(ops.argmax(logits, axis=-1))  # y^_{t-1}: (B,)
        y_own = ops.take(embedding.embeddings, y_hat, axis=0)  # Embed(y^_{t-1}): (B, E)
        return keep * y_gold + (1.0 - keep) * _as_dtype(y_own, y_gold)  # (B, E)

    def teacher_forcing_coins(self, inputs):
        """`keep` `(B, T)`: 1.0 where step `t` reads the gold `y_{t-1}`, 0.0 where it reads
        its own prediction.

        Each entry is 1 with probability `p = teacher_forcing_ratio`, drawn once per batch;
        the first step (t = 1, column 0) always reads the gold `<bos>`.
        """
        p = ops.cast(self.teacher_forcing_ratio, inputs.dtype)
        draws = keras.random.uniform(ops.shape(inputs)[:2],
                                     seed=self.seed_generator)  # (B, T)
        keep = ops.cast(ops.less(draws, p), inputs.dtype)  # (B, T)
        first = ops.cast(ops.arange(ops.shape(inputs)[1]) == 0, inputs.dtype)  # (T,)
        return ops.maximum(keep, first[None, :])  # step 0 reads <bos>

    def attach_feedback(self, embedding, output_projection, output_bottleneck=None):
        """The layers that turn a prediction back into an input (scheduled sampling).

        Args:
            embedding: the target `keras.layers.Embedding` (`y -> E`).
            output_projection: the `keras.layers.Dense` from `[s_t; c_t]` (or from the
                bottleneck `t_t`) to the logits.
            output_bottleneck: the `keras.layers.Dense` from `[s_t; c_t]` to `t_t`, or
                None when the model has none.

        They belong to the enclosing model; the decoder keeps a reference without
        tracking their weights (a closure), so they are saved once, by the model.
        """
        self._feedback = lambda: (embedding, output_projection, output_bottleneck)

    # -- addition 2: coverage (Tu et al., 2016; See et al., 2017) ---------------------

    def coverage_score(self, cov):
        """The additive score with a coverage term, for :meth:`bahdanau_step`'s `score`.

            e_tj = v^T tanh(W_q s_{t-1} + W_k h_j + w_c cov_tj),   cov_t = sum_{t'<t} alpha_t'

        `cov_tj` is the attention source word `j` has received before step `t`
        (:meth:`coverage_update`); the weight `w_c` `(a,)` lets the score turn away from
        words already translated.

        Args:
            cov: `cov_t`, `(B, S)`.

        Returns:
            A score function `(s_prev, prepared) -> e` `(B, 1, S)`.
        """
        def score(s_prev, prepared):
            s_prev, w_q, v, w_c = self._in_attention_dtype(
                s_prev, self.attention.W_q.value, self.attention.v.value,
                self.attention.w_c.value)
            hidden = ops.matmul(s_prev, w_q)[:, None, :] + prepared.keys  # W_q s + W_k h_j
            hidden = hidden + ops.cast(cov, hidden.dtype)[:, :, None] * w_c  # + w_c cov_tj
            return ops.matmul(ops.tanh(hidden), v)[:, None, :]  # v^T tanh(.): (B, 1, S)

        return score

    def coverage_update(self, cov, alpha):
        """`cov_{t+1} = cov_t + alpha_t`, `(B, S)` (`cov_1 = 0`).

        Args:
            cov: `cov_t`, `(B, S)`.
            alpha: the step's weights, `(B, 1, S)`.
        """
        return cov + _as_dtype(alpha[:, 0, :], cov)  # (B, S)

    def coverage_loss_term(self, cov, alpha):
        """`sum_j min(alpha_tj, cov_tj)`, `(B,)`: the attention step `t` pays again to
        words already covered (See et al., 2017); the layer adds `lambda * mean_b sum_t`
        of it to the losses while training."""
        return ops.sum(ops.minimum(_as_dtype(alpha[:, 0, :], cov), cov), axis=-1)  # (B,)

    # -- the loop over the target positions ---------------------------------------------

    def call(self, inputs, memory, initial_state, memory_mask=None, target_mask=None,
             return_attention=False, training=None):
        bias = (None if memory_mask is None
                else steps.mask_bias(memory_mask, memory.dtype))  # (bias, keep): (B, S) each
        prepared = self.prepare(memory, memory_bias=bias)
        sampling = self._samples(training)
        if sampling:  # y_{t-1} is chosen inside the loop: pass the gold one and the coin
            keep = self.teacher_forcing_coins(inputs)  # (B, T)
            x = ops.concatenate([inputs, keep[:, :, None]], axis=-1)  # (B, T, E + 1)
        else:  # every y_{t-1} is known: project them all at once
            x = self.project_inputs(inputs)  # y_{t-1} W_y + b_x for every t: (B, T, 3u)

        def body(carry, x_t):
            s_prev = carry["s"]
            if sampling:
                y_gold, keep_t = x_t[:, :-1], x_t[:, -1:]  # (B, E), (B, 1)
                y_t = self.sampled_input(y_gold, keep_t, s_prev, carry["c"])  # (B, E)
                x_t = self.project_inputs(y_t)  # y_{t-1} W_y + b_x: (B, 3u)
            score = self.coverage_score(carry["cov"]) if self.coverage else None
            s_t, c_t, alpha = self.bahdanau_step(x_t, s_prev, prepared, training, score)
            new = {"s": s_t, "c": _as_dtype(c_t, s_t)}
            if return_attention:
                new["w"] = _as_dtype(alpha, s_t)  # (B, h, S)
            if self.coverage:
                new["cov"] = self.coverage_update(carry["cov"], alpha)  # cov_{t+1}
                new["covloss"] = self.coverage_loss_term(carry["cov"], alpha)  # (B,)
            return new, new  # TensorFlow's scan wants the emitted structure = the carry

        init = self._initial_carry(memory, initial_state, return_attention)
        xs = ops.transpose(x, (1, 0, 2))  # time-major (T, B, .)
        _, outs = scan(body, init, xs)
        if self.coverage:
            self._add_coverage_loss(outs["covloss"], training, target_mask)
        outputs = ops.concatenate([outs["s"], outs["c"]], axis=-1)  # (T, B, u + C)
        outputs = ops.transpose(outputs, (1, 0, 2))  # (B, T, u + C)
        if return_attention:
            return outputs, ops.transpose(outs["w"], (1, 0, 2, 3))  # (B, T, h, S)
        return outputs

    def step(self, x_t, s_prev, memory, memory_mask=None, keys=None, training=None,
             x_proj=None, gru_weights=None, memory_bias=None, coverage=None):
        """One decoder step from its loose inputs (incremental decoding).

        :meth:`bahdanau_step` on ``prepare(memory, ...)``, with :meth:`coverage_score`
        when the layer has coverage; the caller updates the coverage
        (:meth:`coverage_update`).

        Args:
            x_t: embedded previous token `y_{t-1}`, `(B, E)` (unused when `x_proj` is given).
            s_prev: previous state `s_{t-1}`, `(B, u)`.
            memory: `h_enc` `(B, S, D)`; memory_mask: `(B, S)` bool.
            keys: the output of :meth:`precompute`.
            training: enables attention dropout.
            x_proj: `project_inputs(x_t)` if already computed (teacher forcing).
            gru_weights: `step_weights(C)` if already sliced (once per sequence).
            memory_bias: `mask_bias(memory_mask)` if already computed (once per
                sequence); replaces `memory_mask`.
            coverage: `cov_t = sum_{t'<t} alpha_t'` `(B, S)` (coverage attention only).

        Returns:
            `(s_t (B, u), c_t (B, C), weights (B, h, S))`.
        """
        if self.coverage and coverage is None:
            raise ValueError("AttentionGRUDecoder.step: the layer has coverage=True; pass "
                             "`coverage` (B, S); received coverage=None.")
        prepared = self.prepare(memory, memory_mask, keys=keys, memory_bias=memory_bias,
                                gru_weights=gru_weights)
        if x_proj is None:
            x_proj = self.project_inputs(x_t)  # y_{t-1} W_y + b_x: (B, 3u)
        score = self.coverage_score(coverage) if self.coverage else None
        s_t, c_t, alpha = self.bahdanau_step(x_proj, s_prev, prepared, training, score)
        return s_t, _as_dtype(c_t, x_proj), alpha

    # -- work done once per batch instead of once per step ------------------------------

    def prepare(self, memory, memory_mask=None, keys=None, memory_bias=None,
                gru_weights=None):
        """The :class:`Prepared` constants of a batch: what no step of the loop changes.

        Args:
            memory: `h_enc`, `(B, S, D)`.
            memory_mask: bool `(B, S)`, True = real source token, or None.
            keys: ``precompute(memory)`` when already computed; computed here otherwise.
            memory_bias: ``steps.mask_bias(memory_mask)`` when already computed; replaces
                `memory_mask` in the softmax.
            gru_weights: ``step_weights(C)`` when already sliced; sliced here otherwise.

        Returns:
            A :class:`Prepared`, every tensor in the attention's compute dtype.
        """
        keys = self.precompute(memory) if keys is None else keys
        if self.attention_kind == "additive":
            (keys,) = self._in_attention_dtype(keys)  # W_k h_j: (B, S, a)
        else:
            keys = self._in_attention_dtype(*keys)  # (K, V): (B, h, S, d_h) each
        (h_enc,) = self._in_attention_dtype(memory)
        if gru_weights is None:
            gru_weights = self.step_weights(self.context_dim(memory.shape[-1]))
        return Prepared(h_enc, keys, memory_mask, memory_bias, gru_weights)

    def precompute(self, memory):
        """The keys the score compares `s_{t-1}` with, computed once per sentence.

        Additive: `W_k h_j` `(B, S, units)`; multi-head: the projected keys and values
        `(K, V)`, each `(B, h, S, d_h)`. Neither depends on `s_{t-1}`, so recomputing them
        at every step (what a Python loop on torch would do) only wastes time.
        """
        if self.attention_kind == "additive":
            return self.attention.project_memory(memory)  # W_k h: (B, S, units)
        return steps.project_memory(self.attention, memory)  # (K, V): (B, h, S, d_h) each

    def project_inputs(self, y):
        """The GRU's input projection of the previous tokens, `y_{t-1} W_y + b_x` `(..., 3u)`.

        The GRU input is `[y_{t-1}; c_t]`, so `[y; c] W = y W_y + c W_c` (`W_y`, `W_c`: the
        first `E` and the last `C` rows of the cell's kernel). With teacher forcing every
        `y_{t-1}` is known before the loop: one matmul over `(B, T, E)` replaces `T`
        small ones inside it. Only `c_t W_c` is left to the step.
        """
        e = y.shape[-1]
        return ops.matmul(y, self.cell.kernel[:e]) + self.cell.bias[0]  # (..., 3u)

    def step_weights(self, context_dim):
        """`(W_c (C, 3u), U (u, 3u), b_s (3u,))`: the GRU weights a step uses, sliced once.

        `W_c` multiplies the context (the last `C` rows of the cell's kernel), `U` and `b_s`
        the previous state. Slicing them inside the loop would slice them `T` times.
        """
        kernel = self.cell.kernel
        w_c = kernel[kernel.shape[0] - context_dim:]  # (C, 3u)
        return w_c, self.cell.recurrent_kernel, self.cell.bias[1]

    def _initial_carry(self, memory, initial_state, return_attention):
        """The loop's carry before step 1: `s_0`, `c_0 = 0`, and what the additions need.

        The weights are carried only when they are returned (each carried tensor costs
        every step); coverage carries `cov_1 = 0` and its loss term.
        """
        batch, src_len = ops.shape(memory)[0], ops.shape(memory)[1]
        dtype = initial_state.dtype
        c0 = ops.zeros((batch, self.context_dim(memory.shape[-1])), dtype=dtype)  # (B, C)
        init = {"s": initial_state, "c": c0}
        if return_attention:
            init["w"] = ops.zeros((batch, self.num_heads, src_len), dtype=dtype)  # (B,h,S)
        if self.coverage:
            init["cov"] = ops.zeros((batch, src_len), dtype=dtype)  # cov_1 = 0: (B, S)
            init["covloss"] = ops.zeros((batch,), dtype=dtype)  # (B,)
        return init

    # -- helpers ------------------------------------------------------------------------

    def context_dim(self, memory_dim):
        """Size `C` of the context vector c_t."""
        return memory_dim if self.attention_kind == "additive" else self.d_attention

    def _in_attention_dtype(self, *tensors):
        """`tensors` in the attention's compute dtype under a mixed-precision policy
        (float32 weights, half-precision arithmetic); unchanged otherwise."""
        return _in_compute_dtype(self.attention, *tensors)

    def _dropout(self, alpha, training):
        """Attention dropout on the weights while training; `alpha` itself otherwise."""
        if training and self.attention.dropout > 0.0:
            return self.attention.dropout_layer(alpha, training=training)
        return alpha

    def _multihead_score(self, s_prev, prepared):
        """`e_tij = q_ti . k_ij / sqrt(d_h)`, `(B, h, S)` (see :meth:`score`)."""
        (s_prev,) = self._in_attention_dtype(s_prev)
        k, _ = prepared.keys  # (B, h, S, d_h)
        q = _project(self.attention, self.attention.query_dense, s_prev)  # q_ti: (B, h, d_h)
        return _head_dots(q, k) * (1.0 / (self.attention.d_h ** 0.5))  # (B, h, S)

    def _multihead_context(self, alpha, prepared):
        """`c_t = [head_t1; ...; head_th] W_o + b_o`, `(B, C)` (see :meth:`context`)."""
        _, v = prepared.keys  # (B, h, S, d_h)
        heads = _head_sums(alpha, v)  # head_ti = sum_j alpha_tij v_ij: (B, h, d_h)
        w_o, b_o = _kernel_and_bias(self.attention, self.attention.output_dense)
        c_t = ops.einsum("bhk,hkd->bd", heads, w_o)  # [head_t1; ...; head_th] W_o: (B, C)
        return c_t if b_o is None else c_t + b_o

    def _samples(self, training):
        """Whether this call feeds the model's own predictions back (scheduled sampling,
        training only); raises when :meth:`attach_feedback` has not been called."""
        sampling = bool(training) and self.scheduled_sampling
        if sampling and self._feedback is None:
            raise ValueError("AttentionGRUDecoder: scheduled_sampling=True needs the "
                             "target embedding and the output layer; call "
                             "`attach_feedback(embedding, output_projection)` first.")
        return sampling

    def _add_coverage_loss(self, covloss, training, target_mask=None):
        """Adds `lambda * mean_b sum_t sum_j min(alpha_tj, cov_tj)` to the layer's losses
        while training; `covloss` `(T, B)` holds each step's sum over `j`, and the sum over
        `t` takes the real target steps only (`target_mask` `(B, T)`; None: every step).
        A padded step would add about 1 once every word is covered, a term no weight can
        lower."""
        if self.coverage_loss_weight > 0.0 and training:
            if target_mask is not None:
                real = ops.cast(ops.transpose(target_mask), covloss.dtype)  # (T, B)
                covloss = covloss * real
            covloss = ops.sum(covloss, axis=0)  # sum_t: (B,)
            self.add_loss(self.coverage_loss_weight * ops.mean(covloss))

    # -- Keras --------------------------------------------------------------------------

    def compute_output_spec(self, inputs, memory, initial_state, memory_mask=None,
                            target_mask=None, return_attention=False, training=None):
        b, t = inputs.shape[0], inputs.shape[1]
        out = keras.KerasTensor((b, t, self.units + self.context_dim(memory.shape[-1])),
                                dtype=self.compute_dtype)
        if return_attention:
            return out, keras.KerasTensor((b, t, self.num_heads, memory.shape[1]),
                                          dtype=self.compute_dtype)
        return out

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, attention=self.attention_kind,
                      attention_units=self.attention_units, num_heads=self.num_heads,
                      d_attention=self.d_attention,
                      attention_dropout=self.attention_dropout,
                      scheduled_sampling=self.scheduled_sampling, coverage=self.coverage,
                      coverage_loss_weight=self.coverage_loss_weight)
        return config


def feedback_layers(model):
    """`(embedding, output_projection, output_bottleneck)` of a recurrent attention model,
    the layers :meth:`AttentionGRUDecoder.attach_feedback` takes; the bottleneck is None
    when the model was built without ``output_units``."""
    names = {layer.name for layer in model.layers}
    bottleneck = (model.get_layer("output_bottleneck") if "output_bottleneck" in names
                  else None)
    return model.get_layer("tgt_embedding"), model.get_layer("output_projection"), bottleneck


class RecurrentAttentionDecoder(IncrementalDecoder):
    """Incremental decoding for the models with an :class:`AttentionGRUDecoder`.

    State: ``memory`` `(B, S, D)`, ``mask`` `(B, S)`, ``s`` = s_{t-1} `(B, u)`, ``keys``
    (the projected memory `W_k h`, or the multi-head K/V, computed once) and, with
    coverage, ``coverage`` = `cov_t` `(B, S)`.
    """

    encoder_outputs = ("encoder_memory", "source_mask", "bridge")

    def __init__(self, model):
        super().__init__(model)
        self.decoder = model.get_layer("attention_decoder")
        self.output_bottleneck = feedback_layers(model)[2]  # t_t's Dense, or None

    def init_state(self, state, max_length):
        memory = state["encoder_memory"]
        new = {"memory": memory, "mask": state["source_mask"], "s": state["bridge"]}
        keys = self.decoder.precompute(memory)
        if keys is not None:
            new["keys"] = keys
        if self.decoder.coverage:
            new["coverage"] = ops.zeros(ops.shape(memory)[:2], dtype=memory.dtype)  # (B, S)
        return new

    def step(self, token, state, t):
        x_t = self.embed_step(token)  # (B, E)
        cov = state.get("coverage")  # (B, S) or None
        s_t, c_t, weights = self.decoder.step(x_t, state["s"], state["memory"],
                                              state["mask"], state.get("keys"),
                                              coverage=cov)
        o_t = ops.concatenate([s_t, ops.cast(c_t, s_t.dtype)], axis=-1)  # [s_t; c_t]
        if self.output_bottleneck is not None:
            o_t = self.output_bottleneck(o_t)  # t_t = W_t [s_t; c_t] + b_t
        logits = self.output_projection(o_t)  # (B, V)
        new = dict(state, s=s_t)
        if cov is not None:
            new["coverage"] = self.decoder.coverage_update(cov, weights)  # cov_{t+1}
        return logits, new, {"cross": weights[:, None]}  # (B, 1, h, S)

    def attention_shapes(self, state, max_length):
        return {"cross": (1, self.decoder.num_heads, ops.shape(state["memory"])[1])}
