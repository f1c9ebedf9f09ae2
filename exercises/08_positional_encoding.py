"""Exercise 08: sinusoidal positional encoding (interleaved sin/cos).

Attention is blind to order: permuting the source permutes the outputs the same way. The
Transformer adds a position signal to each embedding (Vaswani et al., 2017):

    PE[pos, 2i]   = sin(pos / W^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / W^(2i / d_model))

with the base ``W = max_wavelength`` (10000 in the paper; the function's argument).

Even feature columns hold sines, odd columns cosines, *interleaved* (sin, cos, sin, cos,
...), and both members of the pair ``(2i, 2i+1)`` use the same frequency. (The TensorFlow
tutorial concatenates all sines then all cosines: a different matrix.)

``start_index`` shifts the positions: rows are ``pos = start_index .. start_index+T-1``.
Incremental decoding needs it, so that the token generated at step t gets position t
(d2l's greedy decoder gives every generated token position 0).

Shapes (symbols): ``T`` length, ``d_model`` (even).

    returns: (T, d_model) float32

What to fill in: ``positional_encoding``.

Hints:
    * Build ``pos`` as a `(T, 1)` column and the frequencies ``1 / max_wavelength^(2i/d_model)``
      for ``2i = 0, 2, 4, ...`` as a `(d_model/2,)` row; their product is `(T, d_model/2)`.
    * Interleave with ``ops.stack([sin, cos], axis=-1)`` -> `(T, d_model/2, 2)`, then
      ``ops.reshape`` to `(T, d_model)`.
    * Compute in float32; ``ops.arange(..., dtype="float32")``.

What you may use: ``keras.ops`` and ``keras.layers.Layer``.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``positional_encoding`` and
``PositionalEncoding`` (``kerasattn.layers.positional``), ``keras_hub`` / ``keras_nlp``;
NumPy on tensors; the solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/08_positional_encoding.py --backend all``.
"""
from keras import ops


def positional_encoding(length, d_model, start_index=0, max_wavelength=10000.0):
    """The sinusoidal positional-encoding matrix.

    Args:
        length: number of positions `T`.
        d_model: feature size (even).
        start_index: position of the first row.
        max_wavelength: the base (10000 in the paper).

    Returns:
        `(T, d_model)` float32 tensor.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("positional_encoding: fill in the marked region")
    # END YOUR CODE
