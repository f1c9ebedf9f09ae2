"""Exercise 14 (debugging): the attention that stays uniform.

A student's attention layer does not learn where to look. Trained for a second to find one
source word per decoder step (random sentences, the layer alone), then shown "le chat noir
dort ." while it writes "the black cat sleeps", it gives this, run after run
(``python exercises/14_debug_uniform_attention.py``, once the two-line ``raise``
statement is deleted; the same numbers on TensorFlow, JAX and torch):

    Training the layer to find one source word per decoder step (8 epochs, Adam):
      loss by epoch: 0.830 0.830 0.830 0.830 0.830 0.830 0.830 0.830
      largest change of any weight during training: 0.000000

    attention weights: after training (rows: generated, columns: source)
              le  chat  noir  dort     .  <pad>
    ------  ----  ----  ----  ----  ----  -----
    the     0.25  0.25  0.25  0.25  0.25   0.00
    black   0.25  0.25  0.25  0.25  0.25   0.00
    cat     0.25  0.25  0.25  0.25  0.25   0.00
    sleeps  0.25  0.25  0.25  0.25  0.25   0.00
      row sums: 1.25 1.25 1.25 1.25
      rows whose largest weight is on their word (le, noir, chat, dort): 0 of 4

Add a file name to draw the heat-map as well: ``python exercises/14_...py heatmap.png``.

The layer below is the student's code: Luong et al.'s (2015) "general" attention, its
score scaled as in the Transformer (its docstring says what it computes). Find out why it
behaves like this and repair it. A layer that works makes the same run learn: the loss
falls, the weight moves, and each row of the heat-map picks out its own word. Expect more
than one cause: run the file again after each fix and read everything it prints.

What to do: in ``GeneralAttention.call``, delete the two-line ``raise`` statement, run
the file, find the bugs and fix them in place. Keep the rest of the layer as it is.

Shapes (symbols): ``B`` batch, ``T_q`` decoder steps, ``T_k`` source length, ``d_q``
decoder state size, ``d_k`` encoder state size.

    query       : (B, T_q, d_q)   decoder states s_t
    memory      : (B, T_k, d_k)   encoder states h_i
    memory_mask : (B, T_k) bool   True = real source token (optional)
    W           : (d_q, d_k)      weight "W"
    context     : (B, T_q, d_k)
    weights     : (B, T_q, T_k)   the attention of each decoder step over the source

Hints: three of them, each saying more than the one before: where to look
(``kerasattn hint 14``), what to compare (``kerasattn hint 14 2``), the fix
(``kerasattn hint 14 3``).

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


if __name__ == "__main__":
    # The symptom: train the layer for a second and show what it learnt. A file name draws
    # the heat-map too: python exercises/14_debug_uniform_attention.py heatmap.png
    import sys

    from kerasattn.course.symptoms import uniform_attention

    uniform_attention(GeneralAttention, png=sys.argv[1] if len(sys.argv) > 1 else None)
