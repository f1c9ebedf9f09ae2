"""Position-wise feed-forward network:

    FFN(x) = act(x W1 + b1) W2 + b2

applied to every position separately; the output has the input's width.
"""
from __future__ import annotations

import keras

from kerasattn.layers._checks import check_rank, fmt


@keras.saving.register_keras_serializable(package="kerasattn")
class PositionwiseFeedForward(keras.layers.Layer):
    """Two dense layers with an activation in between; the mask passes through.

    Args:
        d_ff: hidden width.
        activation: activation of the hidden layer ("relu" in Vaswani et al. 2017; the
            course notes write a generic sigma).
        dropout: dropout rate on the hidden activations.

    Call arguments:
        x: `(B, T, d_model)`.
        training: enables dropout.

    Returns:
        `(B, T, d_model)`. Weights: `dense_1` (`W1 (d_model, d_ff)`, `b1`), `dense_2`
        (`W2 (d_ff, d_model)`, `b2`).
    """

    def __init__(self, d_ff, activation="relu", dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.d_ff = int(d_ff)
        self.activation = keras.activations.serialize(keras.activations.get(activation)) \
            if not isinstance(activation, str) else activation
        self.dropout = float(dropout)
        self.supports_masking = True
        self.dense_1 = keras.layers.Dense(self.d_ff, activation=activation, name="dense_1")
        self.dropout_layer = keras.layers.Dropout(self.dropout)
        self.dense_2 = None  # its width is the input's: created in build()

    def build(self, input_shape):
        check_rank("PositionwiseFeedForward", "x", input_shape, range(2, 9),
                   "(B, T, d_model)")
        d_model = int(input_shape[-1])
        self.dense_1.build(input_shape)
        self.dense_2 = keras.layers.Dense(d_model, name="dense_2")
        self.dense_2.build(tuple(input_shape[:-1]) + (self.d_ff,))
        self.built = True

    def call(self, x, training=None):
        s = check_rank("PositionwiseFeedForward", "x", x, range(2, 9), "(B, T, d_model)")
        d_in = self.dense_1.kernel.shape[0]
        if s[-1] is not None and s[-1] != d_in:
            raise ValueError(f"PositionwiseFeedForward: `x` must have {d_in} features "
                             f"(the size it was built with); received shape {fmt(s)}.")
        hidden = self.dropout_layer(self.dense_1(x), training=training)  # act(xW1+b1)
        return self.dense_2(hidden)  # (B, T, d_model)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(d_ff=self.d_ff, activation=self.activation, dropout=self.dropout)
        return config
