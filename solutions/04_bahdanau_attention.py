"""Exercise 04: the context vector and a Bahdanau attention layer.

Put exercises 02 and 03 together into a Keras layer. At decoder step t:

    e_{t,i}     = v^T tanh(W_q s_{t-1} + W_k h_i)          additive score
    alpha_{t,i} = masked softmax over i of e_{t,i}         padding gets weight 0
    c_t         = sum_i alpha_{t,i} h_i                    context vector

Shapes (symbols): ``B`` batch, ``T`` source length, ``d_q`` query size, ``d_k`` memory
size, ``u`` units.

    query       : (B, d_q)      the previous decoder state s_{t-1}
    memory      : (B, T, d_k)   the encoder states h_1 .. h_T
    memory_mask : (B, T) bool   True = real source token (optional)
    context     : (B, d_k)
    weights     : (B, T)

What to fill in:
    1. ``context_vector(weights, h_enc)``: the weighted sum, batched.
    2. ``BahdanauAttention.call``: score, masked softmax, context. ``__init__``, ``build``
       (which creates the weights ``W_q`` `(d_q, u)`, ``W_k`` `(d_k, u)` and ``v`` `(u,)`)
       and ``get_config`` are written for you.

Hints:
    * ``context_vector``: `(B, T)` weights against `(B, T, d_k)` states, summed over T.
      A batched matrix product does it once the weights have a middle axis of size 1
      (`(B, 1, T)` times `(B, T, d_k)` is `(B, 1, d_k)`; drop that axis again); an
      ``ops.einsum`` that sums over the shared t works too.
    * Keras fills ``memory_mask`` automatically when ``memory`` carries a Keras mask,
      because the argument is named ``<arg>_mask``.
    * Every weight must receive a gradient: ``W_q``, ``W_k`` and ``v`` must all be used.

What you may use: ``keras.ops``, ``keras.layers.Layer``, and the kit's ``masked_softmax``
(exercise 03; imported below).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``BahdanauAttention``
(``kerasattn.layers.bahdanau``), ``keras.layers.AdditiveAttention``,
``keras.layers.Attention``, ``keras.layers.MultiHeadAttention``; NumPy on tensors; the
solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/04_bahdanau_attention.py --backend all``.
"""
import keras
from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03


def context_vector(weights, h_enc):
    """Batched weighted sum of encoder states, ``c = sum_i alpha_i h_i``.

    Args:
        weights: attention weights `(B, T)`.
        h_enc: encoder states `(B, T, d_k)`.

    Returns:
        Context vectors `(B, d_k)`.
    """
    # BEGIN YOUR CODE
    return ops.einsum("bt,btd->bd", weights, h_enc)  # (B, d_k)
    # END YOUR CODE


class BahdanauAttention(keras.layers.Layer):
    """Additive attention of one query over a memory (Bahdanau et al., 2015).

    Args:
        units: size `u` of the hidden scoring layer.

    Call arguments:
        query: `(B, d_q)`, the previous decoder state.
        memory: `(B, T, d_k)`, the encoder states.
        memory_mask: optional boolean `(B, T)`, True = real token.

    Returns:
        `(context, weights)` with shapes `(B, d_k)` and `(B, T)`.
    """

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)

    def build(self, query_shape, memory_shape):
        self.W_q = self.add_weight(name="W_q", shape=(query_shape[-1], self.units),
                                   initializer="glorot_uniform")
        self.W_k = self.add_weight(name="W_k", shape=(memory_shape[-1], self.units),
                                   initializer="glorot_uniform")
        self.v = self.add_weight(name="v", shape=(self.units,),
                                 initializer="glorot_uniform")
        self.built = True

    def call(self, query, memory, memory_mask=None):
        # BEGIN YOUR CODE
        query = ops.expand_dims(ops.matmul(query, self.W_q), 1)  # (B, 1, u)
        keys = ops.matmul(memory, self.W_k)  # (B, T, u)
        scores = ops.matmul(ops.tanh(query + keys), self.v)  # (B, T)
        weights = masked_softmax(scores, memory_mask)  # (B, T)
        context = context_vector(weights, memory)  # (B, d_k)
        return context, weights
        # END YOUR CODE

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units)
        return config
