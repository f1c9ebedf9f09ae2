"""Helpers for a spec's ``run`` function (they run in the sandboxed child).

``set_weights_by_name`` hands the grader's weights to a student's layer, so the parent can
compute the expected output from weights it chose itself; ``trainable_gradients`` returns
the gradient of a scalar loss with respect to every trainable weight on the current
backend; ``value_and_grad`` does the same for a loss of a plain list of tensors. The
backend's own autodiff is imported lazily: this module is loaded by the worker before any
backend-specific code runs, and imports nothing heavy at top level.
"""
from __future__ import annotations

import numpy as np


def _names(layer) -> dict:
    variables = list(layer.weights)
    by_name = {}
    for v in variables:
        by_name.setdefault(v.name, []).append(v)
    out = {}
    for name, vs in by_name.items():
        if len(vs) == 1:
            out[name] = vs[0]
        else:  # duplicated short names (e.g. two Dense sublayers): use the full path
            for v in vs:
                out[v.path] = v
    return out


def set_weights_by_name(layer, inputs: dict, prefix: str = "w/") -> None:
    """Assign ``inputs[prefix + name]`` to the layer weight called ``name``.

    Args:
        layer: a built Keras layer.
        inputs: the case inputs.
        prefix: key prefix of the weights in ``inputs``.

    Raises:
        ValueError: a weight the grader provides is missing from the layer, the layer has
            a weight the grader does not know, or a shape differs.
    """
    given = {k[len(prefix):]: v for k, v in inputs.items() if k.startswith(prefix)}
    variables = _names(layer)
    missing = sorted(set(given) - set(variables))
    extra = sorted(set(variables) - set(given))
    if missing or extra:
        raise ValueError(
            f"{type(layer).__name__}: the grader expects weights {sorted(given)}; the layer "
            f"has {sorted(variables)}" + (f"; missing {missing}" if missing else "")
            + (f"; unexpected {extra}" if extra else "")
            + ". Create them with self.add_weight(name=...) as the exercise says.")
    for name, value in given.items():
        v = variables[name]
        if tuple(v.shape) != tuple(np.shape(value)):
            raise ValueError(f"{type(layer).__name__}: weight {name!r} has shape "
                             f"{tuple(v.shape)}, expected {tuple(np.shape(value))}")
        v.assign(np.asarray(value, dtype=v.dtype))


def trainable_gradients(layer, loss_fn) -> dict:
    """Gradients of ``loss_fn()`` (a scalar) w.r.t. each of ``layer``'s trainable weights.

    Args:
        layer: a built Keras layer (or model).
        loss_fn: a zero-argument function that calls the layer and returns a scalar.

    Returns:
        ``{weight name: np.ndarray}``; a weight the loss does not depend on gets zeros.
    """
    import keras

    names = {id(v): n for n, v in _names(layer).items()}
    variables = list(layer.trainable_weights)
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            loss = loss_fn()
        grads = tape.gradient(loss, [v.value for v in variables],
                              unconnected_gradients=tf.UnconnectedGradients.ZERO)
    elif backend == "jax":
        import jax

        def f(values):
            with keras.StatelessScope(state_mapping=list(zip(variables, values))):
                return loss_fn()

        values = [v.value for v in variables]
        try:  # one compiled program is much faster than compiling every eager op
            grads = jax.jit(jax.grad(f))(values)
        except Exception:  # noqa: BLE001 - e.g. Python control flow on values: stay eager
            grads = jax.grad(f)(values)
    elif backend == "torch":
        import torch

        loss = loss_fn()
        params = [v.value for v in variables]
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        grads = [torch.zeros_like(p) if g is None else g for p, g in zip(params, grads)]
    else:
        raise RuntimeError(f"trainable_gradients: unsupported backend {backend!r}")
    return {names[id(v)]: np.asarray(keras.ops.convert_to_numpy(g), dtype=np.float64)
            for v, g in zip(variables, grads)}


def value_and_grad(loss, torch_threads: int | None = None):
    """``loss`` and its gradients with respect to a list of tensors, on every backend.

    Args:
        loss: ``loss(params, *args) -> scalar`` where ``params`` is a list of tensors.
        torch_threads: on torch, set this many intra-op threads (None: leave torch's).

    Returns:
        ``vg(params, *args) -> (value, [gradient per tensor of params])``; a tensor the
        loss does not use gets a zero gradient on TensorFlow and JAX, None on torch. On JAX
        the function is compiled once, and runs eagerly if it cannot be traced.
    """
    import keras

    backend = keras.backend.backend()
    if backend == "jax":
        import jax

        fn = jax.value_and_grad(loss)
        jitted = jax.jit(fn)

        def vg(params, *args):
            try:
                return jitted(params, *args)
            except Exception:  # noqa: BLE001 - Python control flow on values: stay eager
                return fn(params, *args)

        return vg
    if backend == "torch":
        import torch

        if torch_threads is not None:
            torch.set_num_threads(torch_threads)

        def vg(params, *args):
            params = [p.detach().requires_grad_(True) for p in params]
            value = loss(params, *args)
            return value, torch.autograd.grad(value, params, allow_unused=True)

        return vg
    import tensorflow as tf

    def vg(params, *args):
        with tf.GradientTape() as tape:
            tape.watch(params)
            value = loss(params, *args)
        return value, tape.gradient(value, params,
                                    unconnected_gradients=tf.UnconnectedGradients.ZERO)

    return vg
