"""Compiling a decoding step per backend (the only backend-specific code of decoding).

- JAX: ``jax.jit`` of a *stateless* call: the model's variable values are arguments (inside
  ``keras.StatelessScope``), so one compiled step serves every later weight update;
- TensorFlow: ``tf.function`` (graph mode; variables are read live);
- torch: eager (a Python loop of small kernels; ``torch.compile`` costs more than it saves
  for decoding steps this small).

Backend libraries are imported lazily, only on their own backend. The step index ``t`` is
passed as a scalar int32 tensor so that one trace serves every step.
"""
from __future__ import annotations

import keras
from keras import ops

COMPILE_MODES = ("auto", True, False)


def resolve_compile(compile="auto") -> bool:
    """``"auto"`` -> True on JAX and TensorFlow, False on torch."""
    if compile not in COMPILE_MODES:
        raise ValueError(f"`compile` must be one of {COMPILE_MODES}; received "
                         f"compile={compile!r}.")
    if compile == "auto":
        return keras.backend.backend() in ("jax", "tensorflow")
    return bool(compile) and keras.backend.backend() in ("jax", "tensorflow")


def compile_function(fn, variables, int_args=()):
    """Compile ``fn(*args)`` for the current backend; ``int_args`` positions become int32.

    Args:
        fn: a function of tensors / dicts of tensors that calls Keras layers.
        variables: every `keras.Variable` ``fn`` reads (for JAX's stateless call).
        int_args: positions of Python-int arguments (e.g. the step index) passed as
            scalar int32 tensors, so that they do not trigger a retrace per value.

    Returns:
        A function with ``fn``'s signature.
    """
    backend = keras.backend.backend()
    variables = list(variables)

    def convert(args):
        return tuple(ops.convert_to_tensor(a, "int32") if i in int_args else a
                     for i, a in enumerate(args))

    if backend == "tensorflow":
        import tensorflow as tf

        traced = tf.function(fn, reduce_retracing=True, autograph=False)
        return lambda *args: traced(*convert(args))
    if backend == "jax":
        import jax

        def stateless(values, *args):
            with keras.StatelessScope(state_mapping=list(zip(variables, values))):
                return fn(*args)

        jitted = jax.jit(stateless)
        return lambda *args: jitted([v.value for v in variables], *convert(args))
    return fn
