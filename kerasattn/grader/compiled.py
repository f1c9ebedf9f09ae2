"""Running a submission's call compiled (``jax.jit`` / ``tf.function``) to catch NumPy escapes.

On JAX and TensorFlow an eager tensor hands NumPy its memory, so ``np.asarray(x)`` works
eagerly; inside a compiled function it cannot. The guard runs each call of the
submission's code compiled and reads a conversion error as a NumPy escape
(:func:`_numpy_escape`). This is the grader's only backend-specific code.
"""
from __future__ import annotations

__all__ = []


def _numpy_message(what: str, where: str) -> str:
    at = f" at {where}" if where else ""
    return (f"leaves keras.ops for NumPy{at}: converting a tensor to NumPy ({what}) cannot "
            "run inside a compiled function or carry gradients. Use keras.ops only")


def _tensor_leaves(args, kwargs, backend):
    """The backend tensors among the arguments, and a function that puts others back."""
    import keras

    flat_args = list(args)
    flat_kwargs = dict(kwargs)
    slots = []
    for i, a in enumerate(flat_args):
        if _is_eager_tensor(a, keras, backend):
            slots.append(("a", i))
    for k, v in flat_kwargs.items():
        if _is_eager_tensor(v, keras, backend):
            slots.append(("k", k))
    if any(not _is_eager_tensor(v, keras, backend) and keras.ops.is_tensor(v)
           for v in list(flat_args) + list(flat_kwargs.values())):
        return [], None  # already tracing (a symbolic call): run as is
    leaves = [flat_args[s[1]] if s[0] == "a" else flat_kwargs[s[1]] for s in slots]

    def rebuild(values):
        a, k = list(flat_args), dict(flat_kwargs)
        for (where, key), v in zip(slots, values):
            if where == "a":
                a[key] = v
            else:
                k[key] = v
        return a, k

    return leaves, rebuild


def _is_eager_tensor(x, keras, backend) -> bool:
    if not keras.ops.is_tensor(x):
        return False
    if backend == "jax":
        import jax

        return not isinstance(x, jax.core.Tracer)
    if backend == "tensorflow":
        return hasattr(x, "numpy") and callable(getattr(x, "numpy", None)) and \
            type(x).__name__ == "EagerTensor"
    return True


def _run_compiled(func, leaves, rebuild, backend):
    if backend == "jax":
        import jax

        def pure(*values):
            a, k = rebuild(values)
            return func(*a, **k)

        return jax.jit(pure)(*leaves)
    import tensorflow as tf

    def graph(*values):
        a, k = rebuild(values)
        return func(*a, **k)

    return tf.function(graph, autograph=False, reduce_retracing=False)(*leaves)


def _numpy_escape(exc) -> str | None:
    """The conversion a compile error comes from, or None if it is not a NumPy escape."""
    seen = 0
    e = exc
    while e is not None and seen < 10:
        name = type(e).__name__
        text = str(e)
        if name == "TracerArrayConversionError":
            return "np.asarray / np.array of a tensor"
        if name == "NotImplementedError" and "numpy" in text.lower() and "symbolic" in \
                text.lower():
            return "np.asarray / np.array of a tensor"
        if name == "AttributeError" and "has no attribute 'numpy'" in text:
            return "tensor.numpy()"
        if name == "AttributeError" and "has no attribute 'tolist'" in text:
            return "tensor.tolist()"
        e = e.__cause__ or e.__context__
        seen += 1
    return None
