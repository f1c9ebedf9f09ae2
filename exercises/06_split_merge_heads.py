"""Exercise 06: splitting and merging attention heads.

Multi-head attention runs ``h`` attentions side by side, each on its own slice of
``d_h = d_model / h`` features (Vaswani et al., 2017):

    head_i = Attention(Q W_q^(i), K W_k^(i), V W_v^(i))
    MHA    = [head_1; ...; head_h] W_o

In code, one big projection ``(B, T, d_model)`` is cut into heads and the heads are moved
next to the batch axis, so that one batched matmul attends in every head at once.

Shapes (symbols): ``B`` batch, ``T`` length, ``h`` heads, ``d_h = d_model / h``.

    split_heads : (B, T, d_model) -> (B, T, h, d_h) -> (B, h, T, d_h)
    merge_heads : (B, h, T, d_h)  -> (B, T, h, d_h) -> (B, T, d_model)

Head ``i`` owns features ``i*d_h .. (i+1)*d_h - 1`` of every position, and
``merge_heads(split_heads(x, h))`` must give back ``x`` exactly.

What to fill in: ``split_heads`` and ``merge_heads``.

Hints:
    * Reshape *then* transpose. Reshaping straight to `(B, h, T, d_h)` has the right shape
      but mixes positions into heads: head 0 would see the first T/h
      positions of the *sequence* (the first half when h = 2).
    * ``ops.shape(x)`` gives the sizes; ``-1`` in ``ops.reshape`` lets Keras infer one.
    * ``ops.transpose`` takes the new order of the axes: keep 0 and 3, swap 1 and 2.

What you may use: ``keras.ops``.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``MultiHeadCross``
(``kerasattn.layers.multi_head``), ``keras.layers.MultiHeadAttention``; NumPy on tensors;
the solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/06_split_merge_heads.py --backend all``.
"""
from keras import ops


def split_heads(x, num_heads):
    """Cut the feature axis into ``num_heads`` heads and move heads before time.

    Args:
        x: `(B, T, d_model)`, with `d_model` divisible by `num_heads`.
        num_heads: `h`.

    Returns:
        `(B, h, T, d_h)` with `d_h = d_model // h`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("split_heads: fill in the marked region")
    # END YOUR CODE


def merge_heads(x):
    """Inverse of :func:`split_heads`: concatenate the heads along the features.

    Args:
        x: `(B, h, T, d_h)`.

    Returns:
        `(B, T, h * d_h)`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("merge_heads: fill in the marked region")
    # END YOUR CODE
