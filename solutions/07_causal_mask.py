"""Exercise 07: the causal (look-ahead) mask.

While training, the decoder sees the whole target sentence at once (teacher forcing). Its
self-attention must still not look at the future: position ``i`` may attend to positions
``j <= i`` only, or the model learns to copy the next word and fails at inference time.

With an ``offset`` the queries are the newest tokens of a longer sequence (incremental
decoding with a cache, exercise 11): query ``i`` sits at absolute position ``i + offset``.

    mask[i, j] = (j <= i + offset)          True = may attend

For ``query_length = key_length = 4`` and ``offset = 0``:

    [[ True, False, False, False],
     [ True,  True, False, False],
     [ True,  True,  True, False],
     [ True,  True,  True,  True]]

Shapes (symbols): ``T_q`` query length, ``T_k`` key length (defaults to ``T_q``).

    returns: (T_q, T_k) bool

What to fill in: ``causal_mask``.

Hints:
    * ``ops.arange(T_q)[:, None]`` is a column, ``ops.arange(T_k)[None, :]`` a row;
      comparing them broadcasts to the full `(T_q, T_k)` matrix.
    * The diagonal is allowed: a token may attend to itself.
    * Return booleans, not 0/1 floats (``ops.less_equal`` etc. give booleans).

What you may use: ``keras.ops`` (``ops.arange``, comparisons, ``ops.expand_dims`` ...).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``causal_mask`` and everything else in
``kerasattn.layers.masking``, ``kerasattn.layers.multi_head``, ``keras.ops.tril``,
``keras.ops.triu``; NumPy on tensors; the solutions, ``kerasattn.reference`` and
``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/07_causal_mask.py --backend all``.
"""
from keras import ops


def causal_mask(query_length, key_length=None, offset=0):
    """Boolean causal mask, ``mask[i, j] = j <= i + offset``.

    Args:
        query_length: `T_q` (int).
        key_length: `T_k` (int); defaults to `query_length`.
        offset: absolute position of query 0 (int).

    Returns:
        Boolean tensor `(T_q, T_k)`.
    """
    # BEGIN YOUR CODE
    if key_length is None:
        key_length = query_length
    i = ops.arange(query_length)[:, None] + offset  # (T_q, 1) absolute query positions
    j = ops.arange(key_length)[None, :]  # (1, T_k) key positions
    return ops.less_equal(j, i)  # (T_q, T_k)
    # END YOUR CODE
