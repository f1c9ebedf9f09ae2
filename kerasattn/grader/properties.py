"""Property-check builders for specs: each returns ``fn(outputs, inputs) -> None | message``.

They run in the parent on validated float64 outputs (see docs/GRADER_FORMAT.md).
"""
from __future__ import annotations

import numpy as np

from kerasattn.grader.compare import _idx


def _get(outputs, key):
    if key not in outputs:
        raise KeyError(f"output {key!r} missing")
    return outputs[key]


def rows_sum_to_one(output: str, axis: int = -1, atol: float = 1e-4, allow_zero_rows=True):
    """Every slice along ``axis`` sums to 1 (or to 0 for a fully masked row)."""

    def fn(outputs, inputs):
        w = _get(outputs, output)
        if w.ndim == 0:
            return f"{output} is a scalar, expected an array of weights"
        sums = w.sum(axis=axis)
        ok = np.abs(sums - 1.0) <= atol
        if allow_zero_rows:
            ok |= np.abs(sums) <= atol
        if ok.all():
            if (w < -atol).any():
                return f"{output} has negative weights (min {w.min():.3g})"
            return None
        bad = np.argwhere(~ok)[0]
        return (f"{output} rows (axis {axis}) must sum to 1: the row at {_idx(bad)} sums "
                f"to {sums[tuple(bad)]:.6g} (softmax over the wrong axis?)")

    return fn


def all_finite(output: str):
    def fn(outputs, inputs):
        w = _get(outputs, output)
        bad = ~np.isfinite(w)
        if bad.any():
            first = _idx(np.argwhere(bad)[0])
            return f"{output} has {int(bad.sum())} non-finite entries, first at {first}"
        return None

    return fn


def causal(output: str, atol: float = 1e-6, offset: int = 0):
    """Attention weights ``(..., T_q, T_k)`` are zero above the diagonal (j > i + offset)."""

    def fn(outputs, inputs):
        w = _get(outputs, output)
        t_q, t_k = w.shape[-2:]
        future = np.arange(t_k)[None, :] > np.arange(t_q)[:, None] + offset
        leak = ~(np.abs(w) <= atol) & future
        if leak.any():
            where = np.argwhere(leak)[0]
            return (f"{output}: query {where[-2]} attends to future key {where[-1]} "
                    f"(weight {w[tuple(where)]:.3g}); the causal mask must hide keys j > i")
        return None

    return fn


def zero_where_masked(output: str, mask_input: str, atol: float = 1e-6):
    """Weights are zero wherever the input mask (broadcast to the weights) is False."""

    def fn(outputs, inputs):
        w = _get(outputs, output)
        mask = np.broadcast_to(np.asarray(inputs[mask_input]).astype(bool), w.shape)
        leak = ~(np.abs(w) <= atol) & ~mask  # NaN counts as a leak
        if leak.any():
            where = np.argwhere(leak)[0]
            return (f"{output} is {w[tuple(where)]:.3g} at masked position {_idx(where)}: "
                    "masked keys must get weight 0 (inverted mask?)")
        return None

    return fn


def same_where(output_a: str, output_b: str, keep_input: str | None = None, atol=1e-5,
               what="padding invariance"):
    """``output_a == output_b`` where ``inputs[keep_input]`` (broadcast) is True.

    Use for padding invariance (run twice with different padded tokens) and causality by
    perturbation (run twice with different future tokens).
    """

    def fn(outputs, inputs):
        a, b = _get(outputs, output_a), _get(outputs, output_b)
        if a.shape != b.shape:
            return f"{what}: {output_a} {a.shape} and {output_b} {b.shape} differ in shape"
        keep = np.ones(a.shape, bool)
        if keep_input is not None:
            k = np.asarray(inputs[keep_input]).astype(bool)
            k = k.reshape(k.shape + (1,) * (a.ndim - k.ndim))
            keep = np.broadcast_to(k, a.shape)
        diff = np.where(keep, np.abs(a - b), 0.0)
        diff = np.where(np.isnan(diff), np.inf, diff)
        if (diff > atol).any():
            where = np.unravel_index(int(np.argmax(diff)), diff.shape)
            return (f"{what} fails: changing positions that should be ignored changed the "
                    f"output at {_idx(where)} by {diff[where]:.3g}")
        return None

    return fn


def in_range(output: str, lo: float, hi: float):
    def fn(outputs, inputs):
        w = _get(outputs, output)
        if (w < lo).any() or (w > hi).any():
            return f"{output} must lie in [{lo}, {hi}]; min {w.min():.4g}, max {w.max():.4g}"
        return None

    return fn


def model_probe_inputs(rng, src, dec, future, tgt_vocab: int, past: int = 2,
                       extra_pad: int = 3) -> dict:
    """Inputs for the whole-model checks of a translation model (padding, causality,
    gradients), built in ``Case.build``.

    Args:
        rng: the case's ``np.random.Generator``.
        src: ``(B, S)`` source ids, 0-padded.
        dec: ``(B, T)`` decoder input ids.
        future: ``(B, T - past)`` ids that replace ``dec`` from position ``past`` on.
        tgt_vocab: the target vocabulary size (width of the probe).
        past: positions ``< past`` are compared by the causality check.
        extra_pad: how many more ``<pad>`` columns ``src_padded`` has.

    Returns:
        ``src``, ``src_padded`` (``src`` with ``extra_pad`` more zeros), ``dec``,
        ``dec_future`` (``dec`` with the positions from ``past`` on changed), ``past``
        (``(B, T)`` bool, the positions the change must not reach) and ``probe`` (a
        ``(B, T, V_tgt)`` random direction for the gradient check).
    """
    src, dec = np.asarray(src), np.asarray(dec)
    b, t = dec.shape
    dec_future = dec.copy()
    dec_future[:, past:] = np.asarray(future)
    return {"src": src, "src_padded": np.concatenate([src, np.zeros((b, extra_pad), int)],
                                                     axis=1),
            "dec": dec, "dec_future": dec_future,
            "past": np.arange(t)[None, :].repeat(b, 0) < past,
            "probe": rng.normal(size=(b, t, tgt_vocab))}


def residual_first(output: str, want, what: str):
    """AddNorm's argument order, checked in training with dropout on: ``output`` comes from
    the block with every sublayer's output projection zeroed, so each ``AddNorm(x, y)``
    gets ``y = 0`` and must give ``LayerNorm(x)``; ``AddNorm(y, x)`` would drop out ``x``.

    Args:
        output: the key of the zeroed block's output.
        want: ``want(inputs) -> array``, the float64 expectation (the chain of LayerNorms of
            the block's input, and whatever follows it).
        what: how the expectation reads, e.g. ``"LayerNorm(LayerNorm(H))"``.
    """

    def fn(outputs, inputs):
        got, expected = _get(outputs, output), want(inputs)
        if got.shape != expected.shape:
            return f"{output} has shape {got.shape}, expected {expected.shape}"
        diff = float(np.abs(got - expected).max())
        if diff > 1e-4:
            return ("with every sublayer's output 0 and dropout 0.5 in training, each AddNorm "
                    f"must give LayerNorm of its residual input, so the result is {what}; got "
                    f"a difference of {diff:.3g}: pass the residual first and the sublayer's "
                    "output second, add_norm(x, sublayer_output), so dropout acts on the "
                    "sublayer's output")
        return None

    return fn
