"""kerasattn: a Keras 3 course kit from Bahdanau attention to the Transformer.

Runs unchanged on TensorFlow, JAX and PyTorch: pick the backend with the ``KERAS_BACKEND``
environment variable (or ``kerasattn --backend ...``) before keras is imported.
"""

__version__ = "0.1.0"
