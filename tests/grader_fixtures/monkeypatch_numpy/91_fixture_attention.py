"""Hostile: patches NumPy's comparisons to always succeed; forgets 1/sqrt(d_k)."""
import numpy as np
import numpy.testing

np.allclose = lambda *a, **k: True
np.isclose = lambda a, b, *r, **k: np.ones(np.broadcast(a, b).shape, bool)
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
np.all = lambda *a, **k: True
import keras
from keras import ops


def attention(q, k, v, mask=None):
    # BEGIN YOUR CODE
    scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) # (B, T_q, T_k), unscaled
    if mask is not None:
        mask = ops.broadcast_to(mask, ops.shape(scores))
        scores = ops.where(mask, scores, -1e9)
    weights = ops.softmax(scores, axis=-1)
    if mask is not None:
        weights = ops.where(mask, weights, 0.0)
        total = ops.sum(weights, axis=-1, keepdims=True)
        weights = weights / ops.maximum(total, 1e-9)
    return ops.matmul(weights, v), weights
    # END YOUR CODE


class Projection(keras.layers.Layer):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, x_shape):
        self.W = self.add_weight(name="W", shape=(x_shape[-1], self.units))
        self.b = self.add_weight(name="b", shape=(self.units,), initializer="zeros")

    def call(self, x):
        # BEGIN YOUR CODE
        return ops.matmul(x, self.W) + self.b
        # END YOUR CODE
