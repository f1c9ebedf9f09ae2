"""A (bidirectional) GRU encoder over right-padded sources, masked by sequence lengths.

The annotations of Bahdanau et al. (2015) read the source both ways:

    h_j(fwd) = GRU(x_j, h_{j-1}(fwd))        j = 1 .. n   (n = the sentence's length)
    h_j(bwd) = GRU(x_j, h_{j+1}(bwd))        j = n .. 1
    h_j      = [h_j(fwd); h_j(bwd)]

Padding must not leak in: the backward GRU has to *start* at word n, not at the last pad.
``keras.layers.Bidirectional(GRU)`` with a mask gets this right; this layer computes the
same masked result while running every GRU unmasked:

- forward: the pads come after word n, so `h_1..h_n` are exact without a mask; the final
  state is the output at position n (a gather), not the one after the pads;
- backward: reverse each sentence *within its length*, `x'_t = x_{n+1-t}` (pads stay at the
  end), run a forward GRU on `x'`, and reverse its outputs back the same way.

Outputs at padded positions are 0. The sources must be right-padded (real tokens first),
which is what the kit's batching produces; the mask only supplies the lengths
`n = sum_j mask_j`.

The two directions have their own weights but the same computation, so they run in *one*
loop: the weights are stacked on a leading axis `D = 2` and each step advances both GRUs
with one batched matmul (``kerasattn.recurrence.gru_step``, Keras's ``GRUCell`` math):
S steps instead of 2S.
"""
from __future__ import annotations

import keras
from keras import ops

from kerasattn.layers._checks import check_mask, check_rank, fmt
from kerasattn.recurrence import gru_step, scan


def reverse_index(lengths, width):
    """Positions that reverse each row within its length: `(B, S)` int32.

    `index[b, t] = n_b - 1 - t` for `t < n_b`, and `t` for the padding (left in place).
    Applying the gather twice gives back the input: the map is its own inverse.
    """
    t = ops.arange(width, dtype="int32")[None, :]  # (1, S)
    n = lengths[:, None]  # (B, 1)
    return ops.where(t < n, n - 1 - t, t)  # (B, S)


def gather_time(x, index):
    """`x[b, index[b, t]]` for `x` `(B, S, D)` and `index` `(B, S')` -> `(B, S', D)`."""
    index = ops.broadcast_to(index[:, :, None], (*ops.shape(index), ops.shape(x)[-1]))
    return ops.take_along_axis(x, index, axis=1)


@keras.saving.register_keras_serializable(package="kerasattn")
class EncoderGRU(keras.layers.Layer):
    """GRU (or bidirectional GRU) over right-padded sequences, masked by their lengths.

    Equal, on the real positions, to ``keras.layers.GRU`` /
    ``keras.layers.Bidirectional(GRU, merge_mode="concat")`` called with the same mask,
    computed in one loop for both directions (see the module docstring).

    Args:
        units: state size `u` of each direction.
        bidirectional: also read the sentence backwards and concatenate.

    Call arguments:
        inputs: `(B, S, E)` embedded tokens, real tokens first.
        mask: bool `(B, S)`, True = real token (a prefix of each row); None = no padding.

    Returns:
        bidirectional: `(h (B, S, 2u), s_fwd (B, u), s_bwd (B, u))`: the annotations
        `h_j = [h_j(fwd); h_j(bwd)]`, the forward state after word n and the backward
        state after word 1 (it has read the whole sentence).
        unidirectional: `(h (B, S, u), s (B, u))`, `s` = the state after word n.
        Rows of `h` at padded positions are 0; a row with no real token gives states 0.
        Weights: `forward_gru` (and `backward_gru`), each a `keras.layers.GRU` (its cell's
        `kernel`, `recurrent_kernel`, `bias`); the loop itself is :meth:`run_directions`.
    """

    def __init__(self, units, bidirectional=True, **kwargs):
        super().__init__(**kwargs)
        if int(units) < 1:
            raise ValueError(f"EncoderGRU: `units` must be a positive integer; received "
                             f"units={units!r}.")
        self.units = int(units)
        self.bidirectional = bool(bidirectional)
        self.forward_gru = keras.layers.GRU(self.units, return_sequences=True,
                                            name="forward_gru")
        self.backward_gru = (keras.layers.GRU(self.units, return_sequences=True,
                                              name="backward_gru")
                             if self.bidirectional else None)

    def build(self, inputs_shape):
        check_rank("EncoderGRU", "inputs", inputs_shape, (3,), "(B, S, E)")
        self.forward_gru.build(tuple(inputs_shape))
        if self.backward_gru is not None:
            self.backward_gru.build(tuple(inputs_shape))
        self.built = True

    def run_directions(self, sequences):
        """The GRUs over their inputs, all directions in one loop.

        Args:
            sequences: `[x_fwd]` or `[x_fwd, x_bwd]`, each `(B, S, E)`, one per GRU (the
                backward GRU's input already reversed).

        Returns:
            `(D, B, S, u)`: every GRU's states, unmasked, starting from `s_0 = 0`.
        """
        cells = [self.forward_gru.cell] + ([self.backward_gru.cell]
                                           if self.backward_gru is not None else [])
        cells = cells[:len(sequences)]
        x_proj = ops.stack([ops.matmul(x, c.kernel) + c.bias[0]
                            for x, c in zip(sequences, cells)])  # x W + b_x: (D, B, S, 3u)
        x_proj = ops.transpose(x_proj, (2, 0, 1, 3))  # time-major: (S, D, B, 3u)
        # `.value`: the backend tensor (autocast applied), which ops.stack accepts everywhere
        u = ops.stack([c.recurrent_kernel.value for c in cells])  # U: (D, u, 3u)
        b_s = ops.stack([c.bias.value[1] for c in cells])[:, None, :]  # b': (D, 1, 3u)
        s_0 = ops.zeros((len(cells), ops.shape(x_proj)[2], self.units), dtype=x_proj.dtype)

        def body(s_prev, x_t):
            s_t = gru_step(x_t, s_prev, u, b_s)  # s_t = GRU(x_t, s_{t-1}): (D, B, u)
            return s_t, s_t

        _, h = scan(body, s_0, x_proj)  # (S, D, B, u)
        return ops.transpose(h, (1, 2, 0, 3))  # (D, B, S, u)

    def call(self, inputs, mask=None):
        shape = check_rank("EncoderGRU", "inputs", inputs, (3,), "(B, S, E)")
        check_mask("EncoderGRU", "mask", mask, shape[:2], "(B, S)",
                   f"`inputs` of shape {fmt(shape)}")
        if mask is None:  # no padding: the plain (bidirectional) GRU
            if not self.bidirectional:
                h_fwd = self.run_directions([inputs])[0]  # (B, S, u)
                return h_fwd, h_fwd[:, -1]
            h_fwd, h_rev = ops.unstack(self.run_directions(
                [inputs, ops.flip(inputs, axis=1)]))  # h_rev reads x_S .. x_1: (B, S, u)
            h = ops.concatenate([h_fwd, ops.flip(h_rev, axis=1)], axis=-1)  # (B, S, 2u)
            return h, h_fwd[:, -1], h_rev[:, -1]

        lengths = ops.sum(ops.cast(mask, "int32"), axis=1)  # n: (B,)
        keep = ops.cast(mask, inputs.dtype)[:, :, None]  # (B, S, 1)
        last = ops.maximum(lengths - 1, 0)[:, None]  # position n - 1: (B, 1)
        has_words = ops.cast(lengths > 0, inputs.dtype)[:, None]  # (B, 1)
        if not self.bidirectional:
            h_fwd = self.run_directions([inputs])[0]  # h_j(fwd), exact for j < n: (B, S, u)
            s_fwd = gather_time(h_fwd, last)[:, 0] * has_words  # state after word n: (B, u)
            return h_fwd * keep, s_fwd  # 0 at the pads
        index = reverse_index(lengths, ops.shape(inputs)[1])  # (B, S)
        h_fwd, h_rev = ops.unstack(self.run_directions(
            [inputs, gather_time(inputs, index)]))  # h_rev reads x_n .. x_1: (B, S, u)
        s_fwd = gather_time(h_fwd, last)[:, 0] * has_words  # state after word n: (B, u)
        s_bwd = gather_time(h_rev, last)[:, 0] * has_words  # after word 1: (B, u)
        h_fwd = h_fwd * keep  # 0 at the pads
        h_bwd = gather_time(h_rev, index) * keep  # back in source order: (B, S, u)
        return ops.concatenate([h_fwd, h_bwd], axis=-1), s_fwd, s_bwd  # (B, S, 2u)

    def compute_output_spec(self, inputs, mask=None):
        b, s = inputs.shape[0], inputs.shape[1]
        width = 2 * self.units if self.bidirectional else self.units
        h = keras.KerasTensor((b, s, width), dtype=self.compute_dtype)
        state = keras.KerasTensor((b, self.units), dtype=self.compute_dtype)
        return (h, state, state) if self.bidirectional else (h, state)

    def compute_mask(self, inputs, mask=None):
        """`h` keeps the source mask (as `keras.layers.Bidirectional` does); states have none."""
        if mask is None:
            return None
        return (mask, None, None) if self.bidirectional else (mask, None)

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, bidirectional=self.bidirectional)
        return config
