"""Exercise 19: step 1 of the path, a GRU decoder step with multi-head attention.

Step 1 keeps the Bahdanau decoder loop (Bahdanau et al., 2015) and changes only its
score: instead of one additive score, ``h`` scaled dot-product heads (Vaswani et al.,
2017) compare the previous decoder state ``s_{t-1}`` with the encoder states, each in its
own learned subspace. The query is still ``s_{t-1}``, and the context still enters the
GRU's input (the kit's ``bahdanau_multihead`` model). For head ``i = 1 .. h``
(``d_h = d_model / h``):

    q_i     = s_{t-1} W_q^(i) + b_q^(i)                       (B, h, d_h)   one query
    K_i     = H_enc W_k^(i) + b_k^(i)                         (B, h, S, d_h)
    V_i     = H_enc W_v^(i) + b_v^(i)                         (B, h, S, d_h)
    alpha_i = masked softmax over j of q_i . K_ij / sqrt(d_h)   (B, h, S)
    head_i  = sum_j alpha_ij V_ij                             (B, h, d_h)
    c_t     = [head_1; ...; head_h] W_o + b_o                 (B, d_model)
    s_t     = GRU([y_{t-1}; c_t], s_{t-1})                    (B, u)

Padded source positions (``source_mask`` False) get weight exactly 0 in every head.

Shapes (symbols): ``B`` batch, ``S`` source length, ``D`` encoder state size, ``E``
target embedding size, ``u`` GRU state size, ``h`` heads, ``d_h`` head size,
``d_model = h d_h`` context size.

    y_prev      : (B, E)        the embedded previous token y_{t-1}
    s_prev      : (B, u)        the previous decoder state s_{t-1}
    h_enc       : (B, S, D)     the encoder states H_enc
    source_mask : (B, S) bool   True = real source token (optional)
    returns     : (s_t (B, u), c_t (B, d_model), alpha (B, h, S))

The weights are created for you in ``build``, in the layout of the kit's
``MultiHeadCross`` (and Keras's ``MultiHeadAttention``): ``query_kernel`` `(u, h, d_h)`,
``key_kernel`` and ``value_kernel`` `(D, h, d_h)`, their biases `(h, d_h)`,
``output_kernel`` `(h, d_h, d_model)` and ``output_bias`` `(d_model,)`; ``self.cell`` is
a Keras ``GRUCell(u)`` whose input is ``[y_{t-1}; c_t]``.

What to fill in:
    1. ``attend``: the multi-head attention of the one query ``s_{t-1}`` over ``H_enc``,
       returning ``(c_t, alpha)``.
    2. ``call``: one decoder step, attention first, then the GRU update.

The grader loads its own weights into the layer and compares ``alpha``, ``c_t`` and
``s_t`` with a float64 NumPy reference; it checks that each head's weights sum to 1, that
padded positions get weight 0 and change nothing, and that every weight receives a
gradient (except the key bias ``b_k``: it adds ``q_i . b_k`` to every source position's
score alike, which the softmax ignores, so it has no effect on the output).

Hints:
    * One query per row: ``s_{t-1}`` has no time axis, so neither have ``q_i`` and
      ``head_i``. ``ops.einsum`` projects into every head at once, and merges the heads
      with ``W_o`` in one contraction.
    * Which size belongs in the scale? Each head multiplies vectors of its own size.
    * The mask is per source position and the same for every head: give it the axis it
      lacks to broadcast against the `(B, h, S)` scores.
    * ``self.cell(x, s_prev)`` returns ``(s_t, s_t)`` (the output and the new state); the
      order of its input is the one in the last equation.

What you may use: ``keras.ops``, the GRU cell created for you, and the kit's
``masked_softmax`` (exercise 03) and ``scaled_dot_product_attention`` (exercise 05).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``MultiHeadCross``
(``kerasattn.layers.multi_head``), its decoding steps (``kerasattn.steps``, e.g.
``attend_step``), its recurrence helpers (``kerasattn.recurrence``), its models
(``kerasattn.models``, e.g. ``AttentionGRUDecoder``), ``keras.layers.MultiHeadAttention``,
``keras_hub`` / ``keras_nlp``; NumPy on tensors; the solutions, ``kerasattn.reference``
and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/19_multihead_decoder_step.py --backend all``.
"""
import math

import keras
from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03


class MultiHeadDecoderStep(keras.layers.Layer):
    """One Bahdanau decoder step whose attention has `h` scaled dot-product heads.

    Args:
        units: GRU state size `u`.
        num_heads: number of heads `h`.
        d_model: context size; each head has `d_h = d_model // h` dimensions.

    Call arguments:
        y_prev: the embedded previous token `(B, E)`.
        s_prev: the previous state `s_{t-1}` `(B, u)`.
        h_enc: the encoder states `(B, S, D)`.
        source_mask: optional boolean `(B, S)`, True = real source token.

    Returns:
        `(s_t, c_t, alpha)`: `(B, u)`, `(B, d_model)`, `(B, h, S)`.
    """

    def __init__(self, units, num_heads, d_model, **kwargs):
        super().__init__(**kwargs)
        if int(d_model) % int(num_heads) != 0:
            raise ValueError(f"MultiHeadDecoderStep: d_model={d_model} must be a multiple "
                             f"of num_heads={num_heads}.")
        self.units, self.num_heads, self.d_model = int(units), int(num_heads), int(d_model)
        self.d_h = self.d_model // self.num_heads
        self.cell = keras.layers.GRUCell(self.units, name="gru_cell")

    def build(self, y_prev_shape, s_prev_shape, h_enc_shape):
        h, d_h, d_enc = self.num_heads, self.d_h, h_enc_shape[-1]

        def weight(name, shape, init="glorot_uniform"):
            return self.add_weight(name=name, shape=shape, initializer=init)

        self.query_kernel = weight("query_kernel", (self.units, h, d_h))
        self.query_bias = weight("query_bias", (h, d_h), "zeros")
        self.key_kernel = weight("key_kernel", (d_enc, h, d_h))
        self.key_bias = weight("key_bias", (h, d_h), "zeros")
        self.value_kernel = weight("value_kernel", (d_enc, h, d_h))
        self.value_bias = weight("value_bias", (h, d_h), "zeros")
        self.output_kernel = weight("output_kernel", (h, d_h, self.d_model))
        self.output_bias = weight("output_bias", (self.d_model,), "zeros")
        self.cell.build((None, y_prev_shape[-1] + self.d_model))
        self.built = True

    def attend(self, s_prev, h_enc, source_mask=None):
        """Multi-head attention of the query `s_{t-1}` over the encoder states.

        Args:
            s_prev: `(B, u)`.
            h_enc: `(B, S, D)`.
            source_mask: optional boolean `(B, S)`.

        Returns:
            `(c_t, alpha)`: the context `(B, d_model)` and every head's weights
            `(B, h, S)`.
        """
        # BEGIN YOUR CODE
        raise NotImplementedError("MultiHeadDecoderStep.attend: fill in the marked region")
        # END YOUR CODE

    def call(self, y_prev, s_prev, h_enc, source_mask=None):
        # BEGIN YOUR CODE
        raise NotImplementedError("MultiHeadDecoderStep.call: fill in the marked region")
        # END YOUR CODE

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units, num_heads=self.num_heads, d_model=self.d_model)
        return config
