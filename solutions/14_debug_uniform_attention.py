"""Exercise 14 (debugging): the attention that stays uniform.

A student trained a GRU translator with a *scaled* "general" score. Luong et al. (2015)
define the general score as ``s_t^T W h_i``, with no scale; the student divides it by
sqrt(d_k), as the Transformer's scaled dot product does:

    e_{t,i}     = s_t^T W h_i / sqrt(d_k)           (scaled general score)
    alpha_{t,i} = softmax over the source positions i of e_{t,i}    (padding excluded)
    c_t         = sum_i alpha_{t,i} h_i

and reports, exactly as in the course notes' lab:

    * the attention heat-map is flat: every weight is about 1/n, whatever the sentence;
    * the translations are poor and the loss stops improving;
    * the gradient of ``W`` is exactly zero at every step.

The layer below is their code. It has TWO bugs. Find both and fix them.

Shapes (symbols): ``B`` batch, ``T_q`` decoder steps, ``T_k`` source length, ``d_q``
decoder state size, ``d_k`` encoder state size.

    query       : (B, T_q, d_q)   decoder states s_t
    memory      : (B, T_k, d_k)   encoder states h_i
    memory_mask : (B, T_k) bool   True = real source token (optional)
    W           : (d_q, d_k)      weight "W"
    context     : (B, T_q, d_k)
    weights     : (B, T_q, T_k)   every row sums to 1 over the real source tokens

What to do: in ``GeneralAttention.call``, delete the ``raise`` line, find the two bugs and
fix them. Keep the rest of the layer as it is.

Hints:
    * A weight whose gradient is exactly zero does not influence the output at all. What
      could multiply the scores by zero? Evaluate the scale on its own in Python.
    * Print ``ops.sum(weights, axis=-1)``: each decoder step's weights over the source
      must sum to 1. Over which axis does the softmax normalise?

What you may use: ``keras.ops``, ``keras.layers.Layer`` and the kit's ``masked_softmax``
(exercise 03).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``BahdanauAttention``
(``kerasattn.layers.bahdanau``) and ``scaled_dot_product_attention``
(``kerasattn.layers.dot_product``), ``keras.layers.Attention``,
``keras.layers.MultiHeadAttention``, ``keras.ops.dot_product_attention``; NumPy on tensors;
the solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/14_debug_uniform_attention.py --backend all``.
"""
import math

import keras
from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03


class GeneralAttention(keras.layers.Layer):
    """Scaled "general" attention, ``softmax(s W h^T / sqrt(d_k)) h`` (Luong's general
    score ``s W h^T``, divided by ``sqrt(d_k)``).

    Call arguments:
        query: `(B, T_q, d_q)`.
        memory: `(B, T_k, d_k)`.
        memory_mask: optional boolean `(B, T_k)`.

    Returns:
        `(context, weights)`: `(B, T_q, d_k)` and `(B, T_q, T_k)`.
    """

    def build(self, query_shape, memory_shape):
        self.W = self.add_weight(name="W", shape=(query_shape[-1], memory_shape[-1]),
                                 initializer="glorot_uniform")
        self.built = True

    def call(self, query, memory, memory_mask=None):
        # BEGIN YOUR CODE
        d_k = memory.shape[-1]
        scale = 1 / math.sqrt(d_k)  # was 1 // math.sqrt(d_k): floor division gives 0.0
        scores = ops.einsum("bqd,de,bke->bqk", query, self.W, memory) * scale  # (B,T_q,T_k)
        mask = None if memory_mask is None else memory_mask[:, None, :]  # (B, 1, T_k)
        weights = masked_softmax(scores, mask, axis=-1)  # was axis=1: over the keys
        context = ops.matmul(weights, memory)  # (B, T_q, d_k)
        return context, weights
        # END YOUR CODE
