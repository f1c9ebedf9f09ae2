"""Data parallelism over the local devices (``train(..., distribution="data_parallel")``).

Each device holds a full replica of the weights and gets an equal share of every batch;
``keras.distribution`` averages the gradients. keras 3.15 supports it on JAX only.
"""
from __future__ import annotations

import warnings

import keras
import numpy as np

__all__ = ["DISTRIBUTIONS", "data_parallel", "resolve_distribution"]

DISTRIBUTIONS = ("data_parallel",)


def data_parallel(devices=None):
    """A ``keras.distribution.DataParallel`` over ``devices`` (default: all local devices).

    Each device holds a full replica of the weights and gets ``batch_size / n_devices`` of
    every batch; gradients are averaged across devices, so the update equals single-device
    training on the whole batch up to floating-point summation order.

    Args:
        devices: list of device names (``"cpu:0"``...) or None for
            ``keras.distribution.list_devices()``.

    Returns:
        The distribution. Use ``with dist.scope():`` while building a model, or pass it to
        :func:`train` as ``distribution=``.

    Raises:
        ValueError: on a backend other than JAX.
    """
    backend = keras.backend.backend()
    if backend != "jax":
        raise ValueError(
            f"distribution='data_parallel' needs the JAX backend; the current backend is "
            f"{backend!r}. keras {keras.__version__} supports keras.distribution only on JAX "
            "(TensorFlow's implementation is marked do-not-use, torch's arrived after 3.15). "
            "Run with KERAS_BACKEND=jax, or train without `distribution`.")
    if devices is None:
        devices = keras.distribution.list_devices()
    return keras.distribution.DataParallel(devices=list(devices))


def resolve_distribution(distribution):
    if distribution is None:
        return None
    if isinstance(distribution, str):
        if distribution not in DISTRIBUTIONS:
            raise ValueError(f"`distribution` must be one of {DISTRIBUTIONS}, a keras."
                             f"distribution.Distribution or None; received "
                             f"distribution={distribution!r}.")
        return data_parallel()
    if isinstance(distribution, keras.distribution.Distribution):
        if keras.backend.backend() != "jax":
            data_parallel()                      # raises the backend error
        return distribution
    raise ValueError("`distribution` must be 'data_parallel', a keras.distribution."
                     f"Distribution or None; received {type(distribution).__name__}.")


def lay_out_variables(model: keras.Model, distribution) -> int:
    """Give variables built outside ``distribution.scope()`` the distribution's layout.

    JAX refuses to jit a step that mixes single-device variables with mesh-sharded data, so
    a model built before the distribution existed gets each variable re-assigned under its
    layout (``variable.assign`` re-places a variable that has a layout). Returns the number
    of variables moved.
    """
    moved = 0
    for v in model.variables:
        if getattr(v, "_layout", None) is None:
            v._layout = distribution.get_variable_layout(v)
            v.assign(keras.ops.convert_to_numpy(v))
            moved += 1
    return moved


def device_count(distribution) -> int:
    return int(np.prod(distribution.device_mesh.shape))


def fit_to_devices(x, y, batch_size, n_devices, name):
    """Drop the few trailing samples that would give the last batch a ragged shard."""
    n = len(y)
    rest = (n % batch_size) % n_devices
    if rest:
        warnings.warn(f"{name}: dropping the last {rest} of {n} samples so every batch "
                      f"splits evenly over {n_devices} devices.", stacklevel=3)
        return {k: v[:n - rest] for k, v in x.items()}, y[:n - rest]
    return x, y

