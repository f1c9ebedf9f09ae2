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

``attention="additive"`` uses :class:`~kerasattn.layers.BahdanauAttention`
(``e_tj = v^T tanh(W_q s_{t-1} + W_k h_j)``); ``attention="multihead"`` (step 1 of the
path) uses :class:`~kerasattn.layers.MultiHeadCross` with the single query s_{t-1}, whose
keys/values ``h_enc W_k``, ``h_enc W_v`` are projected once per sentence (a cross cache).
"""
from __future__ import annotations

import keras
from keras import ops

from kerasattn import steps
from kerasattn.layers import BahdanauAttention, MultiHeadCross
from kerasattn.models.common import IncrementalDecoder
from kerasattn.recurrence import gru_step, scan

ATTENTIONS = ("additive", "multihead")


def _as_dtype(x, like):
    """`x` cast to `like`'s dtype; no op at all when they already agree (the usual case)."""
    dtype = keras.backend.standardize_dtype(like.dtype)
    return x if keras.backend.standardize_dtype(x.dtype) == dtype else ops.cast(x, dtype)


@keras.saving.register_keras_serializable(package="kerasattn")
class AttentionGRUDecoder(keras.layers.Layer):
    """GRU decoder with attention computed from `s_{t-1}` inside the recurrence.

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
            with a ratio p < 1, feeds at each step t >= 1 the gold `y_{t-1}` with
            probability p and otherwise the embedding of its own previous prediction
            `argmax(W_o [s_{t-1}; c_{t-1}] + b_o)`. Needs :meth:`attach_feedback`.
        coverage: use a coverage vector in the additive attention (Tu et al., 2016; See
            et al., 2017): `c_t = sum_{t'<t} alpha_t'` enters the score as `w_c c_tj`.
        coverage_loss_weight: with coverage, add `lambda * mean_b sum_t sum_j
            min(alpha_tj, c_tj)` to the model's losses while training (See et al., 2017);
            0 adds nothing.

    Call arguments:
        inputs: embedded previous tokens `y_{t-1}`, `(B, T, E)` (teacher forcing).
        memory: encoder annotations `h_enc`, `(B, S, D)`.
        initial_state: `s_0`, `(B, u)`.
        memory_mask: bool `(B, S)`, True = real source token. Pass it explicitly: Keras
            masks do not survive recurrent layers.
        return_attention: also return the weights of every step.
        training: enables attention dropout.

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

    def context_dim(self, memory_dim):
        """Size `C` of the context vector c_t."""
        return memory_dim if self.attention_kind == "additive" else self.d_attention

    def precompute(self, memory):
        """Per-sentence work done once, outside the recurrence.

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
        """`(W_c (C, 3u), U (u, 3u), b_s (3u,))`: the weights a step uses, sliced once.

        `W_c` multiplies the context (the last `C` rows of the cell's kernel), `U` and `b_s`
        the previous state. A loop that slices them at every step pays for it `T` times.
        """
        kernel = self.cell.kernel
        w_c = kernel[kernel.shape[0] - context_dim:]  # (C, 3u)
        return w_c, self.cell.recurrent_kernel, self.cell.bias[1]

    def step(self, x_t, s_prev, memory, memory_mask=None, keys=None, training=None,
             x_proj=None, gru_weights=None, memory_bias=None, coverage=None):
        """One decoder step.

        Args:
            x_t: embedded previous token `y_{t-1}`, `(B, E)` (unused when `x_proj` is given).
            s_prev: previous state `s_{t-1}`, `(B, u)`.
            memory: `h_enc` `(B, S, D)`; memory_mask: `(B, S)` bool.
            keys: the output of :meth:`precompute`.
            x_proj: `project_inputs(x_t)` if already computed (teacher forcing).
            gru_weights: `step_weights(C)` if already sliced (once per sequence).
            memory_bias: `mask_bias(memory_mask)` if already computed (once per
                sequence); replaces `memory_mask`.
            coverage: `c_t = sum_{t'<t} alpha_t'` `(B, S)` (coverage attention only).

        Returns:
            `(s_t (B, u), c_t (B, C), weights (B, h, S))`.
        """
        if x_proj is None:
            x_proj = self.project_inputs(x_t)  # y_{t-1} W_y + b_x: (B, 3u)
        if self.attention_kind == "additive":
            c_t, alpha = steps.bahdanau_attend_step(
                self.attention, s_prev, memory, memory_keys=keys, memory_mask=memory_mask,
                training=training, memory_bias=memory_bias,
                coverage=coverage)  # c_t = sum_j alpha_tj h_j: (B, D), (B, S)
            attention = alpha[:, None, :]  # (B, 1, S)
        else:
            c_t, attention = steps.attend_step(
                self.attention, s_prev, keys, memory_mask=memory_mask, training=training,
                memory_bias=memory_bias)  # c_t = MHA(s_{t-1}, h_enc): (B, C), (B, h, S)
        c_t = _as_dtype(c_t, x_proj)
        w_c, u, b_s = (self.step_weights(c_t.shape[-1]) if gru_weights is None
                       else gru_weights)
        x_proj = x_proj + ops.matmul(c_t, w_c)  # [y_{t-1}; c_t] W + b_x: (B, 3u)
        s_t = gru_step(x_proj, s_prev, u, b_s)  # s_t = GRU([y_{t-1}; c_t], s_{t-1})
        return s_t, c_t, attention

    def call(self, inputs, memory, initial_state, memory_mask=None,
             return_attention=False, training=None):
        keys = self.precompute(memory)
        batch, src_len = ops.shape(memory)[0], ops.shape(memory)[1]
        c_dim = self.context_dim(memory.shape[-1])
        c0 = ops.zeros((batch, c_dim), dtype=initial_state.dtype)  # (B, C)
        init = {"s": initial_state, "c": c0}  # the carry, emitted at every step
        if return_attention:  # the weights, only when asked for: each carried tensor
            init["w"] = ops.zeros((batch, self.num_heads, src_len),  # costs every step
                                  dtype=initial_state.dtype)
        if self.coverage:
            init["cov"] = ops.zeros((batch, src_len), dtype=initial_state.dtype)  # c_1 = 0
            init["covloss"] = ops.zeros((batch,), dtype=initial_state.dtype)  # (B,)
        gru_weights = self.step_weights(c_dim)  # (W_c, U, b_s), sliced once
        bias = (None if memory_mask is None
                else steps.mask_bias(memory_mask, memory.dtype))  # (bias, keep): (B, S) each
        sampling = bool(training) and self.scheduled_sampling
        if sampling and self._feedback is None:
            raise ValueError("AttentionGRUDecoder: scheduled_sampling=True needs the "
                             "target embedding and the output layer; call "
                             "`attach_feedback(embedding, output_projection)` first.")
        if sampling:
            embedding, projection, bottleneck = self._feedback()

        def body(carry, x_t):
            s_prev, c_prev = carry["s"], carry["c"]
            if sampling:
                y_gold, keep = x_t[:, :-1], x_t[:, -1:]  # (B, E), (B, 1): 1 = gold
                o_prev = ops.concatenate([s_prev, c_prev], axis=-1)  # [s_{t-1}; c_{t-1}]
                if bottleneck is not None:  # t_{t-1} = W_t [s_{t-1}; c_{t-1}] + b_t
                    o_prev = ops.matmul(o_prev, bottleneck.kernel) + bottleneck.bias
                logits = ops.matmul(o_prev, projection.kernel) + projection.bias  # (B, V)
                y_hat = ops.stop_gradient(ops.argmax(logits, axis=-1))  # (B,)
                y_own = ops.take(embedding.embeddings, y_hat, axis=0)  # (B, E)
                y_t = keep * y_gold + (1.0 - keep) * _as_dtype(y_own, y_gold)  # (B, E)
                x_proj_t = self.project_inputs(y_t)  # y_{t-1} W_y + b_x: (B, 3u)
            else:
                x_proj_t = x_t
            cov = carry["cov"] if self.coverage else None  # c_t: (B, S)
            s_t, c_t, w_t = self.step(None, s_prev, memory, None, keys,
                                      training=training, x_proj=x_proj_t,
                                      gru_weights=gru_weights, memory_bias=bias,
                                      coverage=cov)
            new = {"s": s_t, "c": _as_dtype(c_t, s_t)}
            if return_attention:
                new["w"] = _as_dtype(w_t, s_t)  # (B, h, S)
            if self.coverage:
                alpha_t = _as_dtype(w_t[:, 0, :], s_t)  # (B, S)
                new["cov"] = cov + alpha_t  # c_{t+1} = c_t + alpha_t
                new["covloss"] = ops.sum(ops.minimum(alpha_t, cov), axis=-1)  # (B,)
            return new, new  # TensorFlow's scan wants the emitted structure = the carry

        if sampling:
            p = ops.cast(self.teacher_forcing_ratio, inputs.dtype)
            draws = keras.random.uniform(ops.shape(inputs)[:2],
                                         seed=self.seed_generator)  # (B, T), drawn once
            keep = ops.cast(ops.less(draws, p), inputs.dtype)  # 1 = gold y_{t-1}: (B, T)
            first = ops.cast(ops.arange(ops.shape(inputs)[1]) == 0, inputs.dtype)  # (T,)
            keep = ops.maximum(keep, first[None, :])  # step 0 always reads <bos>
            x = ops.concatenate([inputs, keep[:, :, None]], axis=-1)  # (B, T, E + 1)
        else:
            x = self.project_inputs(inputs)  # y_{t-1} W_y + b_x for every t: (B, T, 3u)
        xs = ops.transpose(x, (1, 0, 2))  # time-major (T, B, .)
        _, outs = scan(body, init, xs)
        states, contexts = outs["s"], outs["c"]  # (T, B, u), (T, B, C)
        if self.coverage and self.coverage_loss_weight > 0.0 and training:
            covloss = ops.sum(outs["covloss"], axis=0)  # sum_t sum_j min(alpha_tj, c_tj): (B,)
            self.add_loss(self.coverage_loss_weight * ops.mean(covloss))
        outputs = ops.concatenate([states, contexts], axis=-1)  # (T, B, u + C)
        outputs = ops.transpose(outputs, (1, 0, 2))  # (B, T, u + C)
        if return_attention:
            return outputs, ops.transpose(outs["w"], (1, 0, 2, 3))  # (B, T, h, S)
        return outputs

    def compute_output_spec(self, inputs, memory, initial_state, memory_mask=None,
                            return_attention=False, training=None):
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

    State: ``memory`` `(B, S, D)`, ``mask`` `(B, S)`, ``s`` = s_{t-1} `(B, u)` and
    ``keys`` (the projected memory `W_k h`, or the multi-head K/V, computed once).
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
            new["coverage"] = cov + ops.cast(weights[:, 0, :], cov.dtype)  # c_{t+1}
        return logits, new, {"cross": weights[:, None]}  # (B, 1, h, S)

    def attention_shapes(self, state, max_length):
        return {"cross": (1, self.decoder.num_heads, ops.shape(state["memory"])[1])}
