"""Sinusoidal positional encoding (Vaswani et al., 2017), interleaved as in the seeds:

    PE[p, 2i]   = sin(p / 10000^(2i / d_model))
    PE[p, 2i+1] = cos(p / 10000^(2i / d_model))

``start_index`` shifts the positions, so a decoder fed one token at a time at step ``t``
adds ``PE[t]`` (not ``PE[0]``: the d2l inference trap).
"""
from __future__ import annotations

import keras
import numpy as np
from keras import ops

from kerasattn.layers._checks import check_rank, fmt


def _sinusoid_table(length, d_model, start_index=0, max_wavelength=10000.0):
    """NumPy float64 `(T, d_model)` table of positions `start_index .. start_index+T-1`."""
    pos = np.arange(start_index, start_index + length, dtype=np.float64)[:, None]  # (T,1)
    two_i = (np.arange(d_model) // 2 * 2).astype(np.float64)  # 2i for columns 2i, 2i+1
    angle = pos / np.power(float(max_wavelength), two_i / d_model)  # (T, d_model)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angle), np.cos(angle))


def positional_encoding(length, d_model, start_index=0, max_wavelength=10000.0,
                        dtype="float32"):
    """The `(T, d_model)` matrix of positions `start_index .. start_index + T - 1`.

    Computed in float64 (an exact constant table, not traced ops) and returned as a
    tensor of `dtype`.
    """
    table = _sinusoid_table(length, d_model, start_index, max_wavelength)
    return ops.convert_to_tensor(table.astype(dtype))


@keras.saving.register_keras_serializable(package="kerasattn")
class PositionalEncoding(keras.layers.Layer):
    """Adds sinusoidal positions: `Dropout(c * x + PE[start_index : start_index + T])`.

    Args:
        max_length: largest supported `start_index + T`.
        max_wavelength: the base 10000 of the formula.
        dropout: dropout rate applied after the addition.
        scale_inputs: if True, `c = sqrt(d_model)`, else `c = 1`. The paper multiplies the
            embedding weights by `sqrt(d_model)` (section 3.4): Keras embeddings start near
            +-0.05 while the table's entries are +-1, so unscaled, the position signal
            drowns the word identity at the start of training (measured on the built-in
            corpus: the Transformer's validation accuracy was 21 % after 3 epochs unscaled).

    Call arguments:
        x: embeddings `(B, T, d_model)` (mask passes through).
        start_index: absolute position of `x[:, 0]` (int or scalar int tensor; a tensor
            works under `jit`).
        training: enables dropout.

    Returns:
        `(B, T, d_model)`.
    """

    def __init__(self, max_length=2048, max_wavelength=10000.0, dropout=0.0,
                 scale_inputs=False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(scale_inputs, (bool, np.bool_)):
            raise ValueError(f"PositionalEncoding: `scale_inputs` must be True or False; "
                             f"received {scale_inputs!r}.")
        self.scale_inputs = bool(scale_inputs)
        self.max_length = int(max_length)
        self.max_wavelength = float(max_wavelength)
        self.dropout = float(dropout)
        self.supports_masking = True
        self.dropout_layer = keras.layers.Dropout(self.dropout)

    def build(self, input_shape):
        check_rank("PositionalEncoding", "x", input_shape, (3,), "(B, T, d_model)")
        self.d_model = int(input_shape[-1])
        # Kept as a NumPy constant, not a tensor: build() may run inside a symbolic or
        # traced scope (e.g. a parent layer's first call), where a tensor made here would
        # be a tracer that must not outlive that scope.
        # Cast once here: a traced start_index converts the whole table at every call (a
        # decoding step), and a same-dtype conversion is ~3x cheaper than float64 -> float32.
        self._table = _sinusoid_table(
            self.max_length, self.d_model, max_wavelength=self.max_wavelength
        )  # (max_length, d)
        if self.compute_dtype in ("float16", "float32", "float64"):  # NumPy dtypes
            self._table = self._table.astype(self.compute_dtype)
        self.built = True

    def call(self, x, start_index=0, training=None):
        s = check_rank("PositionalEncoding", "x", x, (3,), "(B, T, d_model)")
        if s[-1] is not None and s[-1] != self.d_model:
            raise ValueError(f"PositionalEncoding: `x` must have d_model={self.d_model} "
                             f"features (the size it was built with); received `x` with "
                             f"shape {fmt(s)}.")
        if isinstance(start_index, int) and s[1] is not None and (
                start_index < 0 or start_index + s[1] > self.max_length):
            raise ValueError(
                f"PositionalEncoding: positions start_index..start_index+T-1 = "
                f"{start_index}..{start_index + s[1] - 1} must lie in [0, max_length="
                f"{self.max_length}); received `x` with shape {fmt(s)}.")
        t = ops.shape(x)[1]
        if isinstance(start_index, int) and isinstance(t, int):
            pe = ops.convert_to_tensor(
                self._table[start_index:start_index + t], dtype=self.compute_dtype)  # (T, d_model)
        else:  # a traced start or length: slice the constant table inside the graph
            table = ops.convert_to_tensor(self._table, dtype=self.compute_dtype)  # (max_length, d)
            pe = ops.slice(table, [start_index, 0], [t, self.d_model])  # (T, d_model)
        if self.scale_inputs:
            x = x * ops.cast(np.sqrt(self.d_model), x.dtype)  # sqrt(d_model) * Embed(y)
        return self.dropout_layer(x + pe[None], training=training)  # (B, T, d_model)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(max_length=self.max_length, max_wavelength=self.max_wavelength,
                      dropout=self.dropout, scale_inputs=self.scale_inputs)
        return config
