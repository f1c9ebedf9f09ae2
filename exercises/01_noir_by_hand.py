"""Exercise 01: attention by hand, generating "noir".

The decoder has produced "Le chat" and must now produce "noir" (black). Its state after
"Le chat" is the query ``s_2``; the encoder states of "The black cat sat" are the keys and
the values. Compute the attention it pays to each English word, exactly as on paper.

Shapes (symbols): ``T`` source length (here 4), ``d`` state size (here 2).

    s_prev : (d,)      the decoder state s_{t-1} (here s_2)
    h_enc  : (T, d)    the encoder states h_1 .. h_T

Equations (the dot score of Luong et al., 2015, in the attention of Bahdanau et al., 2015):

    e_i     = s_prev . h_i                       (1) dot-product score
    alpha_i = exp(e_i) / sum_j exp(e_j)          (2) softmax over the source words
    c       = sum_i alpha_i h_i                  (3) context vector

What to fill in: the three functions ``dot_scores``, ``softmax`` and ``context_vector``;
``attend_noir`` glues them together for the course notes' numbers (already written).

Hints:
    * All T dot scores at once are one matrix-vector product: the `(T, d)` states times
      the `(d,)` query give `(T,)` scores.
    * Subtract the maximum score before ``ops.exp``: softmax is unchanged by a shift and
      the exponentials cannot overflow. Do the softmax yourself here (no ``ops.softmax``):
      this exercise is about seeing each step.
    * Work it out on paper first: e_2 = 0.7*0.8 + 0.8*0.9 = 1.28 is the largest score, so
      "black" gets the largest weight.

Answer key, to check your paper work (rounded to 4 decimals):

    e     = [0.23, 1.28, 0.67, 0.29]
    alpha = [0.1545, 0.4415, 0.2399, 0.1641]     "black" gets 44% of the attention
    c     = [0.5378, 0.5406]

What you may use: ``keras.ops`` (``ops.matmul``, ``ops.exp``, ``ops.max``, ``ops.sum`` ...).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): ``keras.ops.softmax`` (also as
``keras.ops.nn.softmax``), ``keras.activations.softmax``, ``keras.layers.Softmax``, and their
``log_softmax`` forms (``keras.ops.log_softmax``, ``keras.activations.log_softmax``); anything
in ``kerasattn.layers``; NumPy on tensors; the solutions, ``kerasattn.reference`` and
``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/01_noir_by_hand.py --backend all``.
"""
from keras import ops

# Encoder states h_1..h_4 for "The", "black", "cat", "sat" (the course notes).
H_ENC = [[0.1, 0.2], [0.8, 0.9], [0.5, 0.4], [0.3, 0.1]]
# Decoder state s_2 after generating "Le chat".
S_PREV = [0.7, 0.8]


def dot_scores(s_prev, h_enc):
    """Dot-product score of the query against every encoder state (equation 1).

    Args:
        s_prev: decoder state `(d,)`.
        h_enc: encoder states `(T, d)`.

    Returns:
        Scores `e` of shape `(T,)`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("dot_scores: fill in the marked region")
    # END YOUR CODE


def softmax(scores):
    """Softmax of a vector of scores (equation 2), written out step by step.

    Args:
        scores: `(T,)`.

    Returns:
        Weights `alpha` of shape `(T,)`: non-negative and summing to 1.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("softmax: fill in the marked region")
    # END YOUR CODE


def context_vector(weights, h_enc):
    """Weighted sum of the encoder states (equation 3).

    Args:
        weights: attention weights `(T,)`.
        h_enc: encoder states `(T, d)`.

    Returns:
        Context `c` of shape `(d,)`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("context_vector: fill in the marked region")
    # END YOUR CODE


def attend_noir():
    """The course notes' hand computation: attention while generating "noir".

    Returns:
        `(scores, weights, context)` with shapes `(4,)`, `(4,)`, `(2,)`.
    """
    h_enc = ops.convert_to_tensor(H_ENC, dtype="float32")  # (T, d)
    s_prev = ops.convert_to_tensor(S_PREV, dtype="float32")  # (d,)
    scores = dot_scores(s_prev, h_enc)  # (T,)
    weights = softmax(scores)  # (T,)
    context = context_vector(weights, h_enc)  # (d,)
    return scores, weights, context


if __name__ == "__main__":
    for name, value in zip(("scores", "weights", "context"), attend_noir()):
        print(name, ops.convert_to_numpy(value).round(4))
