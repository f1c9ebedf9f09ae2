"""Compare a student's output with the float64 reference and explain the difference.

Runs in the parent only, on arrays the parent itself loaded and validated.
"""
from __future__ import annotations

import itertools

import numpy as np


def _idx(index) -> str:
    return "(" + ", ".join(str(int(i)) for i in index) + ")"


def describe_shape_mismatch(got: tuple, expected: tuple) -> str:
    """Name the axis (or the permutation, or the missing/extra axis) that differs."""
    head = f"shape {tuple(got)} but expected {tuple(expected)}"
    if len(got) == len(expected):
        if sorted(got) == sorted(expected) and len(got) <= 6:
            for perm in itertools.permutations(range(len(got))):
                if tuple(expected[p] for p in perm) == tuple(got) and perm != tuple(
                        range(len(got))):
                    return (f"{head}: the axes look permuted (you have the expected axes in "
                            f"the order {perm}; check a transpose)")
        bad = [i for i, (g, e) in enumerate(zip(got, expected)) if g != e]
        parts = [f"axis {i} has size {got[i]}, expected {expected[i]}" for i in bad]
        return f"{head}: " + "; ".join(parts)
    if len(got) == len(expected) - 1:
        for i in range(len(expected)):
            if tuple(expected[:i]) + tuple(expected[i + 1:]) == tuple(got):
                return (f"{head}: axis {i} (size {expected[i]}) is missing (reduced over it, "
                        "or forgot keepdims / a batch or head axis?)")
    if len(got) == len(expected) + 1:
        for i in range(len(got)):
            if tuple(got[:i]) + tuple(got[i + 1:]) == tuple(expected):
                return f"{head}: extra axis {i} of size {got[i]}"
    return f"{head}: {len(got)} axes instead of {len(expected)}"


def error_report(got: np.ndarray, expected: np.ndarray, atol: float = 0.0,
                 rtol: float = 0.0) -> tuple[str, float, float]:
    """``(text, max_abs, max_rel)`` with the worst index and both values there, and how
    many entries differ by more than ``atol + rtol * |expected|`` (the check's tolerance;
    0 counts every difference)."""
    diff = np.abs(got - expected)
    worst = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.size else ()
    max_abs = float(diff.max()) if diff.size else 0.0
    rel = diff / np.maximum(np.abs(expected), 1e-12)
    max_rel = float(rel.max()) if rel.size else 0.0
    if diff.size:
        beyond = int(np.sum(diff > atol + rtol * np.abs(expected)))
        text = (f"max abs error {max_abs:.3g} at index {_idx(worst)} (got "
                f"{got[worst]:.6g}, expected {expected[worst]:.6g}); max rel error "
                f"{max_rel:.3g}; {beyond} of {diff.size} entries differ")
    else:
        text = "empty arrays"
    return text, max_abs, max_rel


def close(got, expected, atol, rtol) -> bool:
    return got.shape == expected.shape and bool(
        np.all(np.abs(got - expected) <= atol + rtol * np.abs(expected)))


def generic_variants(got: np.ndarray, expected: np.ndarray, atol: float, rtol: float):
    """Mistakes any output can have: a constant factor, the last two axes swapped."""
    found = []
    if got.shape == expected.shape and got.size:
        denom = float(np.vdot(expected, expected))
        if denom > 0:
            c = float(np.vdot(got, expected)) / denom
            if abs(c - 1.0) > 1e-3 and abs(c) > 1e-6 and close(got, c * expected, atol,
                                                                rtol):
                found.append(f"off by a constant factor: your values are {c:.4g} x the "
                             "expected ones (a missing or extra scale?)")
        if close(got, -expected, atol, rtol) and np.any(np.abs(expected) > atol):
            found.append("sign flipped")
    if expected.ndim >= 2:
        swapped = np.swapaxes(expected, -1, -2)
        symmetric = swapped.shape == expected.shape and close(swapped, expected, atol, rtol)
        if got.shape == swapped.shape and close(got, swapped, atol, rtol) and not symmetric:
            found.append("the last two axes are swapped (transposed output)")
    return found


def check_finite(got: np.ndarray) -> str | None:
    bad = ~np.isfinite(got)
    if not bad.any():
        return None
    first = np.argwhere(bad)[0]
    kinds = []
    if np.isnan(got).any():
        kinds.append(f"{int(np.isnan(got).sum())} NaN")
    if np.isinf(got).any():
        kinds.append(f"{int(np.isinf(got).sum())} inf")
    return (f"non-finite values: {' and '.join(kinds)} of {got.size} entries, first at "
            f"index {_idx(first)} (a division by zero, log(0), or a -inf mask on a fully "
            "masked row?)")
