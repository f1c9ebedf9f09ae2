"""Greedy decoding, and what beam search shares with it, for every model of
:mod:`kerasattn.models` (beam search: :mod:`kerasattn.decoding.beam`).

Both work on a trained or reloaded model through its incremental-decoding adapter
(:func:`kerasattn.models.incremental_decoder`): the encoder runs once, then one
``step(token, state, t)`` per output token, with the recurrent state or the K/V caches in
``state``. ``cache=False`` instead re-runs the whole model on the prefix at every step (the
TensorFlow tutorial's way): slower, and used by the tests as the reference.

Scores. A hypothesis ``y_1 .. y_L`` (``L`` counts the generated tokens, `<eos>` included)
has ``log_prob = sum_t log p(y_t | y_<t, x)`` and the length-normalised score

    score = log_prob / lp(L),   lp(L) = ((5 + L) / 6) ** alpha    (length_penalty_kind=
                                                                   "gnmt", Wu et al., 2016)
                                lp(L) = L ** alpha                 (length_penalty_kind=
                                                                   "power")

``alpha = 0`` ranks by raw log-probability; larger ``alpha`` favours longer outputs. Beam
search with ``coverage_penalty > 0`` adds Wu et al.'s coverage penalty ``cp`` to every
hypothesis's score (``log_prob / lp(L) + cp``).

Beam search (beam size ``k`` >= 1, any batch): each step takes the ``2k`` best extensions of the
``k`` live beams; an extension ending in `<eos>` that ranks among the first ``k`` becomes a
*finished* hypothesis and is frozen (it is never extended again, its score never changes);
the best ``k`` extensions that do not end in `<eos>` stay live, and the decoder state of
every live beam is cloned from its parent (``adapter.reorder``). The ``k`` best finished
hypotheses are kept; a sentence is done when it has ``k`` of them and the best live beam,
scored at its current length, is no better than the worst of them (exact for
``alpha = 0``; with ``alpha > 0`` the usual heuristic), or at ``max_length``, when the live
beams join the finished ones. The best finished score wins. With ``k = 1`` and
``coverage_penalty = 0`` this is exactly greedy decoding. (Stopping as soon as ``k``
hypotheses have finished would let ``k`` unlikely early `<eos>` extensions end the search
before the likely one: a wider beam then returns a worse sentence.)
"""
from __future__ import annotations

import dataclasses
import weakref

import keras
import numpy as np
from keras import ops

from kerasattn.backend_utils import compile_function, resolve_compile, torch_threads
from kerasattn.models.registry import incremental_decoder

PAD_ID, BOS_ID, EOS_ID = 0, 2, 3
LENGTH_PENALTIES = ("gnmt", "power")


@dataclasses.dataclass
class Hypothesis:
    """One beam-search output: generated ids (`<eos>` included if produced) and scores."""

    tokens: np.ndarray
    log_prob: float
    score: float
    finished: bool
    attention: dict


@dataclasses.dataclass
class DecodeResult:
    """Output of :func:`greedy_decode` / :func:`beam_search` for a batch of `B` sources.

    Attributes:
        tokens: `(B, T_out)` int32 generated ids (`<eos>` included when produced), padded
            with 0 after the end.
        lengths: `(B,)` number of generated ids per row (`<eos>` included).
        log_probs: `(B,)` sum of the log-probabilities of the generated ids.
        scores: `(B,)` `log_probs / lp(lengths)` (plus the coverage penalty in beam search
            with ``coverage_penalty > 0``; see the module docstring).
        finished: `(B,)` True where the row ended with `<eos>` (within `max_length` tokens,
            `<eos>` included).
        attention: name -> `(B, T_out, L, h, K)` weights used at each output step:
            ``"cross"`` (`K = S`, source positions) for every attention model, ``"self"``
            (`K = T_out`, earlier output positions) for decoders with self-attention.
            Empty for `seq2seq` and for uncached decoding.
        step_logits: `(B, T_out, V)` logits of every step (greedy with
            ``return_logits=True``), else None.
        hypotheses: beam search only: per row, the `k` best hypotheses, best first: the
            finished ones, plus, for a row that reached `max_length`, its live beams
            (``finished=False``).
        steps: beam search with ``trace=True`` only: per row, per step, the hypotheses the
            step kept (the live beams and those that ended in `<eos>` at that step), best
            score first, each a dict ``tokens`` (ids), ``log_prob``, ``score``,
            ``finished``.
    """

    tokens: np.ndarray
    lengths: np.ndarray
    log_probs: np.ndarray
    scores: np.ndarray
    finished: np.ndarray
    attention: dict
    step_logits: np.ndarray | None = None
    hypotheses: list | None = None
    steps: list | None = None

    def token_lists(self, strip_eos: bool = True) -> list:
        """The generated ids per row as Python lists (without `<eos>` by default)."""
        out = []
        for row, n in zip(self.tokens, self.lengths):
            ids = [int(i) for i in row[:n]]
            if strip_eos and ids and ids[-1] == EOS_ID:
                ids = ids[:-1]
            out.append(ids)
        return out


def length_penalty(length, alpha: float = 0.6, kind: str = "gnmt"):
    """`lp(L)`: ``((5 + L) / 6) ** alpha`` ("gnmt") or ``L ** alpha`` ("power")."""
    if kind not in LENGTH_PENALTIES:
        raise ValueError(f"`length_penalty_kind` must be one of {LENGTH_PENALTIES}; "
                         f"received length_penalty_kind={kind!r}.")
    length = np.asarray(length, dtype=np.float64)
    if kind == "gnmt":
        return ((5.0 + length) / 6.0) ** alpha
    return np.maximum(length, 1.0) ** alpha


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-softmax over the last axis in float64."""
    x = np.asarray(logits, dtype=np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


# ----------------------------------------------------------------------------- steppers

_COMPILED = weakref.WeakKeyDictionary()


def _cached_functions(model) -> dict:
    """Per-model cache of the adapter and compiled functions (built once, reused)."""
    try:
        return _COMPILED.setdefault(model, {})
    except TypeError:  # pragma: no cover - models are weak-referenceable
        return {}


class Stepper:
    """Runs one decoding step for a batch of rows, cached (adapter) or uncached.

    Args:
        model: a model from :func:`kerasattn.models.build_model` (or reloaded).
        max_length: the most output tokens (sizes the caches / the uncached buffer).
        cache: incremental decoding with the model's state/caches (True) or re-running
            the full model on the prefix at every step (False).
        compile: "auto" (JAX / TensorFlow: yes, torch: no), True or False.
    """

    def __init__(self, model, max_length: int, cache: bool = True, compile="auto"):
        self.model = model
        self.max_length = int(max_length)
        self.cache = bool(cache)
        self.compiled = resolve_compile(compile)
        self.fixed_shape = self.compiled or keras.backend.backend() == "jax"
        store = _cached_functions(model)
        if self.cache:
            if "adapter" not in store:
                store["adapter"] = incremental_decoder(model)
            self.adapter = store["adapter"]
            key = "step_compiled" if self.compiled else "step"
            if key not in store:
                store[key] = (compile_function(self.adapter.step, model.variables,
                                               int_args=(2,))
                              if self.compiled else self.adapter.step)
            self._step = store[key]
            key = ("encode_compiled" if self.compiled else "encode", self.max_length)
            if key not in store:
                adapter, length = self.adapter, self.max_length

                def encode(src):
                    return adapter.encode(src, length)
                store[key] = compile_function(encode, model.variables) if self.compiled \
                    else encode
            self._encode = store[key]
        else:
            key = "full_compiled" if self.compiled else "full"
            if key not in store:
                def full(src, dec):
                    return model({"encoder_inputs": src, "decoder_inputs": dec},
                                 training=False)
                store[key] = compile_function(full, model.variables) if self.compiled \
                    else full
            self._full = store[key]

    def start(self, src: np.ndarray, repeat: int = 1) -> None:
        """Encode ``src`` `(B, S)`; with ``repeat = k`` every row becomes `k` beams."""
        if self.cache:
            state = self._encode(ops.convert_to_tensor(src, "int32"))
            self.state = self.adapter.repeat(state, repeat) if repeat > 1 else state
        else:
            self.src = ops.convert_to_tensor(np.repeat(src, repeat, axis=0), "int32")
            self.buffer = np.zeros((len(src) * repeat, self.max_length), dtype=np.int32)

    def step(self, token: np.ndarray, t: int):
        """Feed ``token`` `(N,)` at output position ``t``; returns NumPy logits `(N, V)`
        and attention dict (name -> `(N, L, h, K)`)."""
        if self.cache:
            logits, self.state, attention = self._step(
                ops.convert_to_tensor(token, "int32"), self.state, t)
            attention = {k: np.asarray(ops.convert_to_numpy(v))
                         for k, v in attention.items()}
            return np.asarray(ops.convert_to_numpy(logits)), attention
        self.buffer[:, t] = token
        # Compiled, or eager on JAX (which compiles every eager op once per shape): the
        # whole fixed-size buffer, one shape for every step (causal, so later zeros do not
        # change position t). Eager on TensorFlow / torch: exactly the prefix 0..t.
        dec = self.buffer if self.fixed_shape else self.buffer[:, :t + 1]
        logits = self._full(self.src, ops.convert_to_tensor(dec, "int32"))
        return np.asarray(ops.convert_to_numpy(logits))[:, t], {}

    def reorder(self, rows: np.ndarray) -> None:
        """Row `i` continues from row `rows[i]` (beam search)."""
        if self.cache:
            self.state = self.adapter.reorder(self.state,
                                              ops.convert_to_tensor(rows, "int32"))
        else:
            self.buffer = self.buffer[rows]


def _check_src(src) -> np.ndarray:
    src = np.asarray(ops.convert_to_numpy(src) if not isinstance(src, (np.ndarray, list))
                     else src)
    if src.ndim != 2 or src.shape[0] == 0 or not np.issubdtype(src.dtype, np.integer):
        raise ValueError(f"`src` must be a non-empty (B, S) array of token ids; received "
                         f"shape {src.shape} and dtype {src.dtype}.")
    return src.astype(np.int32)


def _check_args(max_length, alpha, kind, beam_size=1):
    if isinstance(max_length, bool) or not isinstance(max_length, (int, np.integer)) \
            or max_length < 1:
        raise ValueError(f"`max_length` must be an int >= 1; received "
                         f"max_length={max_length!r}.")
    if isinstance(beam_size, bool) or not isinstance(beam_size, (int, np.integer)) \
            or beam_size < 1:
        raise ValueError(f"`beam_size` must be an int >= 1; received "
                         f"beam_size={beam_size!r}.")
    if not alpha >= 0:
        raise ValueError(f"`alpha` must be >= 0; received alpha={alpha!r}.")
    length_penalty(1, alpha, kind)


def _stack_attention(steps: list, n_out: int) -> dict:
    """List over steps of {name: (B, L, h, K)} -> {name: (B, T_out, L, h, K')}."""
    if not steps or not steps[0]:
        return {}
    out = {}
    for name in steps[0]:
        a = np.stack([s[name] for s in steps], axis=1)  # (B, T_out, L, h, K)
        if name == "self":
            a = a[..., :n_out]  # keys beyond the last output position are never used
        out[name] = a
    return out


# ----------------------------------------------------------------------------- greedy


def greedy_decode(model, src, max_length: int = 50, *, cache: bool = True,
                  compile="auto", return_logits: bool = False, alpha: float = 0.6,
                  length_penalty_kind: str = "gnmt", threads="auto") -> DecodeResult:
    """Greedy decoding: `y_t = argmax p(y | y_<t, x)` until `<eos>` or ``max_length``.

    Args:
        model: a model built by :func:`kerasattn.models.build_model` (or reloaded).
        src: source ids `(B, S)`, padded with 0.
        max_length: the most output tokens per row (`<eos>` included).
        cache: incremental decoding (True) or re-running the model on the prefix (False).
        compile: "auto", True or False (see :mod:`kerasattn.backend_utils`); compiled, the
            whole search runs in one call (:func:`greedy_loop`).
        return_logits: keep every step's logits in ``step_logits``.
        alpha, length_penalty_kind: only used to fill ``scores`` comparably with beam
            search.
        threads: torch intra-op threads while decoding (``"auto"``: the idle cores, see
            :class:`kerasattn.backend_utils.torch_threads`); ignored on other backends.

    Returns:
        A :class:`DecodeResult`; rows stop independently, the loop stops when all did.
    """
    src = _check_src(src)
    _check_args(max_length, alpha, length_penalty_kind)
    with torch_threads(threads):
        return _greedy(model, src, max_length, cache, compile, return_logits, alpha,
                       length_penalty_kind)


def _greedy(model, src, max_length, cache, compile, return_logits, alpha,
            length_penalty_kind) -> DecodeResult:
    if resolve_compile(compile):  # JAX / TensorFlow: the whole loop in one compiled call
        out = greedy_loop(model, max_length, cache=cache, return_logits=return_logits)(src)
        return _greedy_result(out, alpha, length_penalty_kind)
    batch = len(src)
    stepper = Stepper(model, max_length, cache=cache, compile=compile)
    stepper.start(src)
    tokens = np.zeros((batch, max_length), dtype=np.int32)
    lengths = np.zeros(batch, dtype=np.int32)
    log_probs = np.zeros(batch, dtype=np.float64)
    finished = np.zeros(batch, dtype=bool)
    token = np.full(batch, BOS_ID, dtype=np.int32)
    attention_steps, logit_steps = [], []
    rows = np.arange(batch)
    for t in range(max_length):
        logits, attention = stepper.step(token, t)
        attention_steps.append(attention)
        if return_logits:
            logit_steps.append(logits)
        next_token = logits.argmax(axis=-1).astype(np.int32)  # y_t = argmax p
        active = ~finished
        tokens[active, t] = next_token[active]
        lengths[active] += 1
        log_probs[active] += log_softmax(logits)[rows, next_token][active]
        finished |= active & (next_token == EOS_ID)
        token = next_token
        if finished.all():
            break
    n_out = int(lengths.max())
    return DecodeResult(
        tokens=tokens[:, :n_out], lengths=lengths, log_probs=log_probs,
        scores=log_probs / length_penalty(lengths, alpha, length_penalty_kind),
        finished=finished, attention=_stack_attention(attention_steps, n_out),
        step_logits=np.stack(logit_steps, axis=1)[:, :n_out] if return_logits else None)


def _greedy_result(out: dict, alpha, length_penalty_kind) -> DecodeResult:
    """NumPy outputs of a :func:`greedy_loop` -> :class:`DecodeResult`."""
    lengths = out["lengths"].astype(np.int32)
    n_out = int(lengths.max())
    t_max = out["tokens"].shape[1]
    written = np.arange(t_max)[None, :] < lengths[:, None]  # (B, T_max): generated ids
    log_probs = np.where(written, out["token_log_probs"].astype(np.float64), 0.0).sum(1)
    attention = {}
    for name, a in out["attention"].items():
        a = a[:, :n_out]  # (B, T_out, L, h, K)
        attention[name] = a[..., :n_out] if name == "self" else a
    return DecodeResult(
        tokens=np.where(written, out["tokens"], 0)[:, :n_out].astype(np.int32),
        lengths=lengths, log_probs=log_probs,
        scores=log_probs / length_penalty(lengths, alpha, length_penalty_kind),
        finished=out["finished"].astype(bool), attention=attention,
        step_logits=out["logits"][:, :n_out] if "logits" in out else None)


def greedy_loop(model, max_length: int, *, cache: bool = True, return_logits: bool = False,
                stop_at_eos: bool = True):
    """The whole greedy search as one function, compiled on JAX / TensorFlow.

    The Python loop of :func:`greedy_decode` pays a host round trip per token (dispatch,
    device-to-host copy of the logits, argmax in NumPy): 0.7 ms (JAX) to 2 ms (TensorFlow)
    per step, as much as the cached step's arithmetic at batch 1. Here the encoder, every
    step and the argmax run inside one ``ops.while_loop`` that is compiled once (jax.jit /
    tf.function) per source shape, and only the finished outputs come back. (On torch the
    same function runs eagerly; :func:`greedy_decode` keeps its NumPy loop there.)

    ``log p(y_t)`` of the argmax token is ``-log sum_v exp(z_v - max z)`` (its own logit is
    the max), stored per token in float32 and summed in float64 on the host, so scores
    agree with the NumPy path to float32 precision.

    Args:
        model: a model from :func:`kerasattn.models.build_model` (or reloaded).
        max_length: the most output tokens.
        cache: incremental steps (the adapter's state / K/V caches) or the full model
            re-run on a fixed `(B, max_length)` buffer at every step (the uncached
            reference, looped the same way so that the two are compared fairly).
        return_logits: also return every step's logits `(B, T_max, V)`.
        stop_at_eos: stop when every row has produced `<eos>` (False: always run
            ``max_length`` steps, as the decoding benchmark does).

    Returns:
        A function ``src (B, S) -> dict`` of NumPy arrays: ``tokens`` `(B, T_max)`,
        ``token_log_probs`` `(B, T_max)`, ``lengths``, ``finished`` `(B,)`,
        ``attention`` (name -> `(B, T_max, L, h, K)`; empty uncached) and ``logits``
        when requested. Rows keep decoding after their `<eos>`, ``lengths`` says where each
        ended.
    """
    store = _cached_functions(model)
    key = ("greedy_loop", int(max_length), bool(cache), bool(return_logits),
           bool(stop_at_eos))
    if key not in store:
        if cache and "adapter" not in store:
            store["adapter"] = incremental_decoder(model)
        fn = _greedy_loop_fn(model, store.get("adapter") if cache else None,
                             int(max_length), bool(return_logits), bool(stop_at_eos))
        store[key] = compile_function(fn, model.variables)
    compiled = store[key]

    def run(src):
        out = compiled(ops.convert_to_tensor(np.asarray(src, np.int32), "int32"))
        return keras.tree.map_structure(lambda x: np.asarray(ops.convert_to_numpy(x)), out)
    return run


def _greedy_loop_fn(model, adapter, max_length, return_logits, stop_at_eos):
    """The traced function behind :func:`greedy_loop` (`adapter` None = uncached)."""
    vocab_size = model.outputs[0].shape[-1]  # V

    def uncached_step(src):
        def step(token, state, t):
            write = ops.one_hot(t, max_length, dtype="int32")[None, :]  # (1, T_max)
            buffer = state["buffer"] * (1 - write) + token[:, None] * write  # ids 0..t
            logits = model({"encoder_inputs": src, "decoder_inputs": buffer},
                           training=False)  # (B, T_max, V); causal: t sees 0..t only
            return ops.take(logits, t, axis=1), {"buffer": buffer}, {}
        return step

    def fn(src):
        batch = ops.shape(src)[0]
        if adapter is not None:
            state, step = adapter.encode(src, max_length), adapter.step
            attention_shapes = adapter.attention_shapes(state, max_length)  # (L, h, K)
        else:
            state = {"buffer": ops.zeros((batch, max_length), "int32")}
            step, attention_shapes = uncached_step(src), {}

        def record(t, logits, attention, out):
            """Greedy choice at step t, written into the (B, T_max, ...) buffers."""
            token = ops.cast(ops.argmax(logits, axis=-1), "int32")  # y_t = argmax p
            z = logits - ops.max(logits, axis=-1, keepdims=True)
            log_p = -ops.log(ops.sum(ops.exp(z), axis=-1))  # log p(y_t): z_{y_t} = 0
            active = ops.logical_not(out["finished"])
            at_t = ops.one_hot(t, max_length, dtype="int32")[None, :]  # (1, T_max)
            new = dict(out)
            new["tokens"] = out["tokens"] * (1 - at_t) + token[:, None] * at_t
            new["token_log_probs"] = out["token_log_probs"] + ops.cast(
                at_t, "float32") * ops.cast(log_p, "float32")[:, None]
            new["lengths"] = out["lengths"] + ops.cast(active, "int32")
            new["finished"] = ops.logical_or(out["finished"], ops.logical_and(
                active, ops.equal(token, EOS_ID)))
            new["attention"] = {
                name: ops.slice_update(out["attention"][name],
                                       (0, t) + (0,) * (len(a.shape) - 1),
                                       ops.cast(a, out["attention"][name].dtype)[:, None])
                for name, a in attention.items()}
            if return_logits:
                new["logits"] = ops.slice_update(out["logits"], (0, t, 0),
                                                 ops.cast(logits, "float32")[:, None])
            return token, new

        out = {"tokens": ops.zeros((batch, max_length), "int32"),  # y_0 .. y_{T_max-1}
               "token_log_probs": ops.zeros((batch, max_length), "float32"),
               "lengths": ops.zeros((batch,), "int32"),
               "finished": ops.zeros((batch,), "bool"),
               "attention": {name: ops.zeros((batch, max_length) + tuple(shape), "float32")
                             for name, shape in attention_shapes.items()}}
        if return_logits:
            out["logits"] = ops.zeros((batch, max_length, vocab_size), "float32")
        t0 = ops.convert_to_tensor(0, "int32")
        bos = ops.full((batch,), BOS_ID, dtype="int32")

        def cond(t, token, state, out):
            more = t < max_length
            if stop_at_eos:
                more = ops.logical_and(more, ops.logical_not(ops.all(out["finished"])))
            return more

        def body(t, token, state, out):
            logits, state, attention = step(token, state, t)
            token, out = record(t, logits, attention, out)
            return t + 1, token, state, out

        _, _, _, out = ops.while_loop(cond, body, (t0, bos, state, out))
        return out

    return fn
