"""Exercise 09: layer normalisation and the AddNorm residual block.

Every Transformer sublayer (attention, feed-forward) is wrapped the same way, post-norm as
in Vaswani et al. (2017) and the course notes:

    AddNorm(x, y) = LayerNorm(x + Dropout(y))          y = Sublayer(x)

    LayerNorm(z) = gamma * (z - mean(z)) / sqrt(var(z) + epsilon) + beta

where mean and variance are taken over the *feature* axis of each position separately
(not over the batch, not over time), and ``gamma``/``beta`` are learned per feature. The
residual ``x + ...`` keeps the input in the sum, so the sublayer adds a correction instead
of replacing it (in this post-norm block the gradient still passes through the LayerNorm;
only the pre-norm form keeps a pure identity path); the normalisation keeps each
position's activations at a stable scale.

Shapes (symbols): ``B`` batch, ``T`` length, ``D`` features (``d_model``).

    x, y   : (B, T, D)     the sublayer's input and output
    gamma  : (D,)          weight "gamma" (initialised to ones)
    beta   : (D,)          weight "beta" (initialised to zeros)
    returns: (B, T, D)

What to fill in:
    1. ``layer_norm(x, gamma, beta, epsilon)``.
    2. ``AddNorm.call``: dropout on ``y`` only, the residual sum, then your ``layer_norm``.
       ``__init__``, ``build`` (weights "gamma" and "beta") and ``get_config`` are given.

Hints:
    * The mean and the variance are taken over the feature axis (the last); keep that
      axis (``keepdims``) so the statistics broadcast back over the features.
    * epsilon goes *inside* the square root.
    * The residual adds the sublayer's *input* ``x``: ``norm(x + y)``, not ``norm(y)``
      (no residual) and not ``x + norm(y)`` (the sublayer's output normalised on its own).
      Neither is the pre-norm block either, ``x + Sublayer(LayerNorm(x))``, which
      normalises the sublayer's *input* and is a different network.
    * Pass ``training`` on to the dropout layer: it says whether this call trains, and
      dropout acts only when it is true.

What you may use: ``keras.ops``, ``keras.layers.Layer`` and ``keras.layers.Dropout``.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``AddNorm``
(``kerasattn.layers.add_norm``), ``keras.layers.LayerNormalization``,
``keras.ops.layer_normalization`` (also as ``keras.ops.nn.layer_normalization``); NumPy on
tensors; the solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/09_add_norm.py --backend all``.
"""
import keras
from keras import ops


def layer_norm(x, gamma, beta, epsilon=1e-5):
    """Layer normalisation over the last axis.

    Args:
        x: `(..., D)`.
        gamma: scale `(D,)`.
        beta: shift `(D,)`.
        epsilon: added to the variance.

    Returns:
        `(..., D)`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("layer_norm: fill in the marked region")
    # END YOUR CODE


class AddNorm(keras.layers.Layer):
    """Post-norm residual connection ``LayerNorm(x + Dropout(y))``.

    Args:
        dropout: dropout rate applied to the sublayer output `y`.
        epsilon: LayerNorm epsilon.

    Call arguments:
        x: the sublayer input `(B, T, D)`.
        y: the sublayer output `(B, T, D)`.
        training: enables dropout.

    Returns:
        `(B, T, D)`.
    """

    def __init__(self, dropout=0.0, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rate = float(dropout)
        self.epsilon = float(epsilon)
        self.dropout = keras.layers.Dropout(self.rate)

    def build(self, x_shape, y_shape):
        self.gamma = self.add_weight(name="gamma", shape=(x_shape[-1],), initializer="ones")
        self.beta = self.add_weight(name="beta", shape=(x_shape[-1],), initializer="zeros")
        self.built = True

    def call(self, x, y, training=None):
        # BEGIN YOUR CODE
        raise NotImplementedError("AddNorm.call: fill in the marked region")
        # END YOUR CODE

    def get_config(self):
        config = super().get_config()
        config.update(dropout=self.rate, epsilon=self.epsilon)
        return config
