"""Residual connection followed by layer normalisation (post-norm, Vaswani et al. 2017).

    AddNorm(X, Y) = LayerNorm(X + Dropout(Y))

where ``Y`` is a sublayer's output on ``X`` (attention or feed-forward), e.g.
``x = add_norm(x, attention(x, x))``.
"""
from __future__ import annotations

import keras

from kerasattn.layers._checks import check_rank, dims_match, fmt


@keras.saving.register_keras_serializable(package="kerasattn")
class AddNorm(keras.layers.Layer):
    """`LayerNorm(x + Dropout(y))` over the last axis; the mask of `x` passes through.

    Args:
        dropout: dropout rate on the sublayer output `y`.
        epsilon: LayerNorm epsilon.

    Call arguments:
        x: the residual stream `(B, T, d_model)` (any rank >= 2).
        y: the sublayer output, same shape as `x`.
        training: enables dropout.

    Returns:
        `(B, T, d_model)`. Weights: `layer_norm.gamma`, `layer_norm.beta` `(d_model,)`.
    """

    def __init__(self, dropout=0.0, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.dropout = float(dropout)
        self.epsilon = float(epsilon)
        self.supports_masking = True
        self.dropout_layer = keras.layers.Dropout(self.dropout)
        self.layer_norm = keras.layers.LayerNormalization(epsilon=self.epsilon,
                                                          name="layer_norm")

    def build(self, x_shape, y_shape=None):
        self.layer_norm.build(x_shape)
        self.built = True

    def call(self, x, y, training=None):
        xs = check_rank("AddNorm", "x", x, range(2, 9), "(B, T, d_model)")
        ys = tuple(y.shape)
        if len(xs) != len(ys) or not all(dims_match(a, b) for a, b in zip(xs, ys)):
            raise ValueError(f"AddNorm: `y` must have the shape of `x` {fmt(xs)}; "
                             f"received `y` with shape {fmt(ys)}.")
        return self.layer_norm(x + self.dropout_layer(y, training=training))  # (B,T,d)

    def compute_output_shape(self, x_shape, y_shape=None):
        return x_shape

    def get_config(self):
        config = super().get_config()
        config.update(dropout=self.dropout, epsilon=self.epsilon)
        return config
