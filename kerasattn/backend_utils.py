"""Backend-specific knobs for training speed, kept out of the backend-neutral modules.

Everything here is chosen per ``keras.backend.backend()``; a backend library (torch...) is
imported only inside the function that needs it, and only on that backend.
"""
from __future__ import annotations

import warnings

import keras


def training_jit_compile(jit_compile="auto"):
    """The ``jit_compile`` value :func:`kerasattn.training.compile_for_translation` uses.

    Args:
        jit_compile: ``"auto"``, True or False. True / False are returned unchanged.

    Returns:
        ``"auto"`` resolves to Keras's own choice: XLA on JAX; graph mode without XLA on a
        CPU-only TensorFlow; eager on torch (``torch.compile`` through ``jit_compile=True``
        was measured slower here, see docs/benchmarks_training.md).
    """
    if jit_compile not in ("auto", True, False):
        raise ValueError("`jit_compile` must be 'auto', True or False; received "
                         f"jit_compile={jit_compile!r}.")
    return jit_compile


def training_steps_per_execution(steps_per_execution: int = 1) -> int:
    """``steps_per_execution`` valid on this backend (torch supports only 1)."""
    if isinstance(steps_per_execution, bool) or not isinstance(steps_per_execution, int) \
            or steps_per_execution < 1:
        raise ValueError("`steps_per_execution` must be an int >= 1; received "
                         f"steps_per_execution={steps_per_execution!r}.")
    if keras.backend.backend() == "torch" and steps_per_execution != 1:
        warnings.warn(f"steps_per_execution={steps_per_execution} is not supported by the "
                      "torch backend of keras; using 1.", stacklevel=3)
        return 1
    return steps_per_execution
