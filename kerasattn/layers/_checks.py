"""Shape checks shared by the layers: clear ``ValueError`` messages, like Keras's own.

Every message names the argument, the expected shape (in symbols and, when known, in
numbers) and the received shape. Unknown (``None``) dimensions are never checked.
"""
from __future__ import annotations


def _dim(d):
    if d is None:
        return None
    try:
        return int(d)
    except Exception:  # a symbolic dimension (jax shape polymorphism, tf graph)
        return None


def static_shape(x) -> tuple:
    """The static shape of ``x`` (a tensor or a shape) as a tuple of ints / ``None``."""
    return tuple(_dim(d) for d in getattr(x, "shape", x))


def fmt(shape) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in shape) + ")"


def check_rank(layer: str, name: str, x, ranks, expected: str) -> tuple:
    """Raise unless ``x`` (a tensor or a shape) has one of ``ranks``; return its shape."""
    shape = static_shape(x)
    if len(shape) not in tuple(ranks):
        raise ValueError(
            f"{layer}: `{name}` must have rank {' or '.join(str(r) for r in ranks)}, "
            f"i.e. shape {expected}; received `{name}` with shape {fmt(shape)}.")
    return shape


def dims_match(a, b) -> bool:
    return a is None or b is None or a == b


def check_dim(layer: str, name: str, shape, axis: int, other_name: str, other_shape,
              other_axis: int, what: str) -> None:
    """Raise if ``shape[axis]`` and ``other_shape[other_axis]`` are known and differ."""
    if not dims_match(shape[axis], other_shape[other_axis]):
        raise ValueError(
            f"{layer}: {what} of `{name}` (shape {fmt(shape)}, axis {axis}) must equal "
            f"that of `{other_name}` (shape {fmt(other_shape)}, axis {other_axis}); "
            f"received {shape[axis]} and {other_shape[other_axis]}.")


def check_mask(layer: str, name: str, mask, expected, expected_symbols: str,
               against: str) -> None:
    """Raise unless ``mask`` has exactly the shape ``expected`` (``None`` dims free)."""
    if mask is None:
        return
    shape = static_shape(mask)
    if len(shape) != len(expected) or not all(
            dims_match(a, b) for a, b in zip(shape, expected)):
        raise ValueError(
            f"{layer}: `{name}` must have shape {expected_symbols} = {fmt(expected)} to "
            f"match {against}; received `{name}` with shape {fmt(shape)}.")
