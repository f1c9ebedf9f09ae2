"""Exercise 23: a masked, label-smoothed cross-entropy loss.

A translator is trained to predict every target token ``y_bt`` from the tokens before it.
Its loss compares the model's distribution ``p = softmax(z_bt)`` with a target
distribution ``q``, token by token, and averages over the *real* tokens only.

Label smoothing (Szegedy et al., 2016; the Transformer of Vaswani et al., 2017, trains with
``eps = 0.1``) replaces the one-hot target by a mix of the one-hot and a uniform
distribution, so that the model is never pushed to make one logit infinitely larger than
the others:

    q_v  = (1 - eps) [v = y] + eps / (V - 1) [v != <pad>]        at a real token y
    q_v  = 0                                                     at a padded position
    l_bt = - sum_v q_v log p_v                 p = softmax(z_bt) over the V ids
    loss = sum_{b,t} l_bt / N                  N = number of real tokens (y_bt != <pad>)

``<pad>`` (id ``pad_id``) is never a right answer, so the uniform part leaves it out: the
``eps`` is spread over the other ``V - 1`` ids (the label included) and ``q`` still sums to
1 at every real token. (Keras's ``label_smoothing`` option and the kit's training loss
spread ``eps / V`` over all ``V`` ids, ``<pad>`` included; here ``<pad>`` gets nothing.)
Padded positions are not words: they add nothing to the sum and are not counted in ``N``,
so the loss does not depend on how much padding a batch has. A batch with no real token
has loss 0, not 0/0.

Shapes (symbols): ``B`` batch, ``T`` target length, ``V`` vocabulary.

    labels  : (B, T) int       the target ids, padded with pad_id
    logits  : (B, T, V) float  the decoder's unnormalised scores z
    targets : (B, T, V) float  q (smoothed_targets)
    loss    : scalar float     (masked_smoothed_cross_entropy)

What to fill in: ``smoothed_targets`` and ``masked_smoothed_cross_entropy``.

Hints:
    * Build ``q`` from two pieces that broadcast: ``ops.one_hot(labels, V)`` `(B, T, V)`
      and a `(V,)` row that is 1 everywhere except at ``pad_id``.
    * Which positions are real? A `(B, T)` comparison of the labels with ``pad_id``; it
      zeroes the padded rows of ``q`` and counts ``N``.
    * ``ops.log_softmax`` gives ``log p`` without computing ``p`` first.
    * Guard the division: a batch of padding only has ``N = 0``.

What you may use: ``keras.ops`` (``ops.log_softmax``, ``ops.one_hot`` included).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's losses and metrics
(``kerasattn.metrics``) and training code (``kerasattn.training``), Keras's losses
(``keras.losses``), ``keras.ops.categorical_crossentropy`` and
``keras.ops.sparse_categorical_crossentropy`` (also as
``keras.ops.nn.categorical_crossentropy`` and ``keras.ops.nn.sparse_categorical_crossentropy``);
NumPy on tensors; the solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/23_label_smoothed_loss.py --backend all``.
"""
from keras import ops


def smoothed_targets(labels, vocab_size, epsilon=0.1, pad_id=0):
    """The label-smoothed target distribution ``q``, zero at padded positions.

    Args:
        labels: int tensor `(B, T)`, padded with ``pad_id``.
        vocab_size: ``V``.
        epsilon: the smoothing ``eps`` in [0, 1).
        pad_id: the ``<pad>`` id.

    Returns:
        Float32 `(B, T, V)`: ``1 - eps + eps / (V - 1)`` on the label, ``eps / (V - 1)`` on
        every other id but ``<pad>``, 0 on ``<pad>``; all zeros at padded positions.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("smoothed_targets: fill in the marked region")
    # END YOUR CODE


def masked_smoothed_cross_entropy(labels, logits, epsilon=0.1, pad_id=0):
    """Mean label-smoothed cross-entropy over the real (non-padding) tokens.

    Args:
        labels: int tensor `(B, T)`, padded with ``pad_id``.
        logits: float tensor `(B, T, V)`.
        epsilon: the smoothing ``eps`` in [0, 1).
        pad_id: the ``<pad>`` id.

    Returns:
        A scalar: ``sum_{b,t} l_bt / N`` over the real tokens, 0 if there are none.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("masked_smoothed_cross_entropy: fill in the marked region")
    # END YOUR CODE
