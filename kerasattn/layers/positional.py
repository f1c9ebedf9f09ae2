"""Sinusoidal positional encoding (Vaswani et al., 2017), sines and cosines interleaved:

    PE[p, 2i]   = sin(p / 10000^(2i / d_model))
    PE[p, 2i+1] = cos(p / 10000^(2i / d_model))

``start_index`` shifts the positions, so a decoder fed one token at a time at step ``t``
adds ``PE[t]`` (not ``PE[0]``: the d2l inference trap).

``RandomPositionShift`` draws a random start per sentence during training (SHAPE, Kiyono et
al., 2021): the model then sees positions ``k .. k+T-1`` for random ``k`` and cannot rely on
absolute positions, only on differences, which is what lets it translate sentences longer
than any it was trained on (positions it would otherwise never have seen).
"""
from __future__ import annotations

import keras
import numpy as np
from keras import ops

from kerasattn.layers._checks import check_rank, fmt, static_shape


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
            drowns the word identity at the start of training.

    Call arguments:
        x: embeddings `(B, T, d_model)` (mask passes through).
        start_index: absolute position of `x[:, 0]`: an int or a scalar int tensor (a
            tensor works under `jit`), or an int tensor `(B,)` of one start per row (e.g.
            the offsets of `RandomPositionShift`); `start_index + T <= max_length`.
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
        # A NumPy constant, not a tensor: build() may run inside a traced scope (a parent
        # layer's first call), where a tensor made here would not outlive that scope.
        table = _sinusoid_table(self.max_length, self.d_model,
                                max_wavelength=self.max_wavelength)  # PE: (max_length, d)
        if self.compute_dtype in ("float16", "float32", "float64"):  # NumPy dtypes
            table = table.astype(self.compute_dtype)
        self.table = table
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
        start_shape = static_shape(start_index) if hasattr(start_index, "shape") else ()
        if len(start_shape) not in (0, 1):
            raise ValueError(
                f"PositionalEncoding: `start_index` must be an int, a scalar or a (B,) "
                f"tensor of start positions; received `start_index` with shape "
                f"{fmt(start_shape)}.")
        if len(start_shape) == 1:  # one start per row: positions s_b .. s_b + T - 1
            table = ops.convert_to_tensor(self.table, dtype=self.compute_dtype)  # (max_length, d)
            positions = (ops.expand_dims(ops.cast(start_index, "int32"), 1)
                         + ops.expand_dims(ops.arange(t, dtype="int32"), 0))  # (B, T)
            pe = ops.take(table, positions, axis=0)  # (B, T, d_model)
        elif isinstance(start_index, int) and isinstance(t, int):
            pe = ops.convert_to_tensor(
                self.table[start_index:start_index + t], dtype=self.compute_dtype)[None]
        else:  # a traced start or length: slice the constant table inside the graph
            table = ops.convert_to_tensor(self.table, dtype=self.compute_dtype)  # (max_length, d)
            pe = ops.slice(table, [start_index, 0], [t, self.d_model])[None]  # (1, T, d_model)
        if self.scale_inputs:
            x = x * ops.cast(np.sqrt(self.d_model), x.dtype)  # sqrt(d_model) * Embed(y)
        return self.dropout_layer(x + pe, training=training)  # (B, T, d_model)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(max_length=self.max_length, max_wavelength=self.max_wavelength,
                      dropout=self.dropout, scale_inputs=self.scale_inputs)
        return config


@keras.saving.register_keras_serializable(package="kerasattn")
class RandomPositionShift(keras.layers.Layer):
    """Random start positions for training (SHAPE, Kiyono et al., 2021).

    During training each sentence ``b`` gets an offset ``k_b ~ U{0, ..., max_shift}``,
    passed as `start_index` to the `PositionalEncoding` layers, so its tokens sit at
    positions ``k_b .. k_b + T - 1``. Sinusoids satisfy ``PE[p + k] = R_k PE[p]`` (a fixed
    rotation per frequency), so attention can still read relative positions; what the
    model can no longer do is memorise absolute ones. At inference the offsets are 0: a
    sentence longer than any in training then uses positions the model has met, shifted.
    Sharing one layer's offsets between encoder and decoder keeps their relative
    alignment (source position ``i`` and target position ``j`` both move by ``k_b``).

    Args:
        max_shift: largest offset `K` (int >= 0; 0 = no shift). The positional tables
            must cover `K + T`.
        seed: seed of the offsets (int or None).

    Call arguments:
        token_ids: any tensor `(B, ...)`; only its batch size is used.
        training: offsets are drawn only when True; otherwise all 0.

    Returns:
        int32 offsets `(B,)`.
    """

    def __init__(self, max_shift, seed=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(max_shift, (bool, np.bool_)) or not isinstance(
                max_shift, (int, np.integer)) or max_shift < 0:
            raise ValueError(f"RandomPositionShift: `max_shift` must be an int >= 0; "
                             f"received {max_shift!r}.")
        self.max_shift = int(max_shift)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        self.built = True

    def call(self, token_ids, training=None):
        batch = ops.shape(token_ids)[0]
        if training and self.max_shift > 0:
            k = keras.random.randint((batch,), 0, self.max_shift + 1,
                                     seed=self.seed_generator)  # k_b ~ U{0..K}: (B,)
            return ops.cast(k, "int32")
        return ops.zeros((batch,), dtype="int32")  # (B,)

    def compute_output_spec(self, token_ids, training=None):
        return keras.KerasTensor((token_ids.shape[0],), dtype="int32")

    def get_config(self):
        config = super().get_config()
        config.update(max_shift=self.max_shift, seed=self.seed)
        return config
