"""Exercise 03: masked softmax.

Sentences in a batch have different lengths, so the source is padded with ``<pad>``
(token id 0). Attention must put *zero* weight on padding, and the remaining weights must
still sum to 1:

    alpha_i = exp(e_i) [m_i] / sum_j exp(e_j) [m_j]

where the mask ``m`` is boolean with ``True`` = keep (a real token) and ``[m_i]`` is 1 or 0.
A row whose entries are *all* masked (for instance a padded query position) has no valid
key at all: return a row of zeros there, never NaN (0/0) and never a uniform 1/n (the trap
in d2l's ``masked_softmax``).

Shapes (symbols): any shape, e.g. ``(B, T_q, T_k)``; the softmax runs over ``axis``.

    scores : (..., T_k)   float
    mask   : broadcastable to scores, bool (True = keep) or None (no masking)
    returns: same shape as scores

What to fill in: ``masked_softmax``.

Hints:
    * The softmax must see a masked score as impossible: which score has an exponential
      of 0 in float32, without being an infinity?
    * Then work out what your softmax gives for a row whose scores are *all* masked, and
      compare it with what is asked for above.
    * Check the direction of the mask: True means *keep*.
    * Never let an ``inf - inf`` or ``0 / 0`` happen: NaN poisons the gradients too.

What you may use: ``keras.ops``, ``ops.softmax`` included.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): anything in ``kerasattn.layers`` (its
``masked_softmax`` is this exercise), ``keras.layers.Softmax``; NumPy on tensors; the
solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/03_masked_softmax.py --backend all``.
"""
from keras import ops


def masked_softmax(scores, mask=None, axis=-1):
    """Softmax over ``axis`` that ignores masked entries; fully masked rows give zeros.

    Args:
        scores: float tensor, e.g. `(B, T_q, T_k)`.
        mask: boolean tensor broadcastable to `scores` (True = keep), or None.
        axis: the axis to normalise over (the keys).

    Returns:
        Weights with the shape of `scores`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("masked_softmax: fill in the marked region")
    # END YOUR CODE
