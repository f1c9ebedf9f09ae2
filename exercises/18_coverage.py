"""Exercise 18 (bonus): coverage, attention that remembers where it has already looked.

An attention decoder can attend to the same source words again and again (it repeats
them) and never to others (it drops them). Coverage (Tu et al., 2016; in the form of See
et al., 2017) keeps a running sum of the attention weights of the previous steps,

    c_t = sum_{t' < t} alpha_{t'}                     (c_1 = 0)          (B, S)

and feeds it into the additive score, so the model can learn to look elsewhere:

    e_tj     = v^T tanh(W_s s_{t-1} + W_h h_j + w_c c_tj)
    alpha_t  = masked softmax over j of e_tj          (padding gets weight 0)
    context  = sum_j alpha_tj h_j

(See et al. score from the current state s_t and add a bias b_attn; the Bahdanau decoder
here scores from s_{t-1}, without a bias.)

A coverage loss penalises attending again to what is already covered:

    covloss_t = sum_j min(alpha_tj, c_tj)             (B,)

It is 0 only when no position gets weight at two different steps (one-hot attention on
distinct words, say). With softmax weights it is positive from the second step on and at
most 1 per step (min(alpha, c) <= alpha, and the alphas sum to 1); uniform attention
reaches that maximum, and it is close to 0 only when each step puts (almost) all its
weight on positions whose coverage is still near 0.

What to fill in:
    1. ``CoverageAttention.call``: the score with the coverage term, the masked softmax,
       the context. ``__init__`` and ``build`` (the weights ``W_s`` `(d_q, a)`, ``W_h``
       `(d_k, a)`, ``w_c`` `(a,)`, ``v`` `(a,)`) are written for you.
    2. ``coverage_loss(weights, coverage)``: ``sum_j min(alpha_tj, c_tj)``.
    3. ``attend_with_coverage``: the loop over the decoder steps that starts from zero
       coverage, attends with the current coverage, adds the step's coverage loss, then
       adds the step's weights to the coverage.

Shapes (symbols): ``B`` batch, ``T`` decoder steps, ``S`` source length, ``d_q`` decoder
state size, ``d_k`` encoder state size, ``a`` attention units.

    query    : (B, d_q)  s_{t-1}      memory  : (B, S, d_k)   coverage : (B, S)
    context  : (B, d_k)               weights : (B, S)
    queries  : (B, T, d_q)  the decoder states s_0 .. s_{T-1} (given, one per step)
    attend_with_coverage -> contexts (B, T, d_k), weights (B, T, S),
                            coverages (B, T, S) (c_t, before step t), loss (B,)

The grader compares the layer, the loss and the loop with a float64 NumPy reference on
its own weights, and checks that the weights sum to 1, that coverage never decreases,
that the loss is 0 when the attention never returns to a covered position, and that every
weight receives a gradient.

What you may use: ``keras.ops``, ``keras.layers.Layer`` (with ``add_weight``) and the kit's
``masked_softmax`` (exercise 03).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``BahdanauAttention``
(``kerasattn.layers.bahdanau``), ``kerasattn.models``, ``kerasattn.training``,
``kerasattn.decoding``, ``kerasattn.steps``; ``keras.layers.AdditiveAttention``,
``keras.layers.Attention``, ``keras.layers.MultiHeadAttention``; NumPy on tensors; the
solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Hints:
    * ``w_c c_tj`` is a vector of size ``a`` for every position j:
      ``coverage[:, :, None] * self.w_c`` has shape `(B, S, a)`.
    * ``ops.minimum`` is elementwise; sum over the source axis.
    * In the loop, compute the step's loss with the coverage *before* adding the step's
      weights: ``c_t`` holds only earlier steps.

Use ``keras.ops`` only. Self-check:
``kerasattn grade exercises/18_coverage.py --backend all``.
"""
import keras
from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03


class CoverageAttention(keras.layers.Layer):
    """Additive attention with a coverage term (See et al., 2017).

    Args:
        units: size `a` of the hidden scoring layer.

    Call arguments:
        query: `(B, d_q)`, the previous decoder state s_{t-1}.
        memory: `(B, S, d_k)`, the encoder states h_j.
        coverage: `(B, S)`, the sum of the previous steps' attention weights.
        memory_mask: optional boolean `(B, S)`, True = real token.

    Returns:
        `(context, weights)` with shapes `(B, d_k)` and `(B, S)`.
    """

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)

    def build(self, query_shape, memory_shape, coverage_shape=None):
        self.W_s = self.add_weight(name="W_s", shape=(query_shape[-1], self.units),
                                   initializer="glorot_uniform")
        self.W_h = self.add_weight(name="W_h", shape=(memory_shape[-1], self.units),
                                   initializer="glorot_uniform")
        self.w_c = self.add_weight(name="w_c", shape=(self.units,),
                                   initializer="glorot_uniform")
        self.v = self.add_weight(name="v", shape=(self.units,),
                                 initializer="glorot_uniform")
        self.built = True

    def call(self, query, memory, coverage, memory_mask=None):
        # BEGIN YOUR CODE
        raise NotImplementedError("CoverageAttention.call: fill in the marked region")
        # END YOUR CODE

    def get_config(self):
        config = super().get_config()
        config.update(units=self.units)
        return config


def coverage_loss(weights, coverage):
    """The coverage loss of one step, ``sum_j min(alpha_tj, c_tj)``.

    Args:
        weights: attention weights `(..., S)`.
        coverage: coverage `(..., S)` before this step.

    Returns:
        The loss `(...)`, e.g. `(B,)` for `(B, S)` inputs.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("coverage_loss: fill in the marked region")
    # END YOUR CODE


def attend_with_coverage(attention, queries, memory, memory_mask=None):
    """Attend once per decoder step, carrying the coverage from step to step.

    Args:
        attention: a built ``CoverageAttention``.
        queries: the decoder states `s_0 .. s_{T-1}`, `(B, T, d_q)`; step t (t = 1..T)
            uses ``queries[:, t - 1]`` = `s_{t-1}`, and ``coverages[:, t - 1]`` holds
            `c_t`.
        memory: the encoder states `(B, S, d_k)`.
        memory_mask: optional boolean `(B, S)`.

    Returns:
        `(contexts, weights, coverages, loss)`: `(B, T, d_k)`, `(B, T, S)`, `(B, T, S)`
        (the coverage each step used) and the summed coverage loss `(B,)`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("attend_with_coverage: fill in the marked region")
    # END YOUR CODE
