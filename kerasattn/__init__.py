"""kerasattn: a Keras 3 course kit from Bahdanau attention to the Transformer.

Runs unchanged on TensorFlow, JAX and PyTorch: pick the backend with the ``KERAS_BACKEND``
environment variable (or ``kerasattn --backend ...``) before keras is imported. Importing
this package imports no keras; it only keeps TensorFlow's start-up messages quiet.
"""

from kerasattn._env import quiet_tensorflow as _quiet_tensorflow

__version__ = "0.1.0"

_quiet_tensorflow()
