"""Exercise 15 (debugging): the decoder that says "the the the" while the loss stays high.

A student's attention translator (a recurrent decoder with dot-product attention over the
encoder states, trained with scheduled sampling) does not learn: the loss stops falling
far above where it should, and every sentence comes out as the most frequent word,
"the the the ...". The course notes trace this symptom to two places:

    Fix 1, initialise properly: Xavier (Glorot) initialisation, and scale the attention
           scores, e_tj = s_{t-1} . h_j / sqrt(d);
    Fix 2, teacher forcing: start at 100% and reduce it gradually (scheduled sampling,
           Bengio et al. 2015).

Scheduled sampling: at every training step i the decoder reads the reference token
y_{t-1} with probability eps_i (the teacher-forcing ratio) and its own greedy prediction
otherwise, one coin flip per token. Bengio et al. (2015) decay eps_i over training:

    linear           eps_i = max(eps_min, 1 - (1 - eps_min) i / decay_steps)
    inverse sigmoid  eps_i = k / (k + exp(i / k))                 (k >= 1)

Four functions below are the student's code, and each has a bug:

    make_initializer       the initializer of every weight matrix and embedding
    attention_scores       the dot-product score of s_{t-1} against every h_j
    teacher_forcing_ratio  eps_i for a training step i
    next_decoder_inputs    scheduled sampling: the decoder's next input tokens

Shapes (symbols): ``B`` batch, ``S`` source length, ``d`` state size, ``V`` vocabulary.

    attention_scores(s_prev (B, d), h_enc (B, S, d)) -> e (B, S)
    next_decoder_inputs(teacher_tokens (B,) int, logits (B, V), ratio scalar,
                        draws (B,) uniform in [0, 1)) -> tokens (B,) int32

What to do: in every marked region delete the ``raise`` line, find the bug and fix it.

The grader checks each fix on its own (the statistics of the initial weights, the scale
of the scores, the schedule's values, the choice of tokens) and then trains a tiny
attention translator built from your four functions (60 Adam steps on 36 sentences such
as "the c the e <eos>"): the loss must fall below 0.05 and the greedy translations must be
right (at least 97% of the tokens), not one repeated token. With the four bugs left in,
the same run stays above that loss.

Hints:
    * Glorot's initializer draws each weight with variance 2 / (fan_in + fan_out);
      ``keras.initializers.GlorotUniform(seed=seed)``. A standard normal has variance 1
      whatever the layer's size: with 64 inputs a unit's pre-activation has a standard
      deviation of about 8, and tanh and the softmax saturate.
    * For random unit-variance s and h, ``s . h`` has variance d: divide by sqrt(d).
    * The linear schedule starts at exactly 1 (pure teacher forcing) at step 0; the
      inverse sigmoid starts at k / (k + 1) (0.91 for k = 10), close to 1. Neither may
      ever increase.
    * With ``ratio = 1`` the decoder must read exactly the reference tokens; with
      ``ratio = 0`` exactly its own argmax. A token uses the reference when its draw is
      below the ratio.

You may use Keras's initializers. You may not use the kit's layers (``kerasattn.layers``),
models, training or decoding code. Use ``keras.ops`` only (and ``math`` for scalars).
Self-check: ``kerasattn grade exercises/15_debug_the_the_the.py --backend all``.
"""
import math

import keras
from keras import ops


def make_initializer(seed=None):
    """The initializer of every weight matrix and embedding of the translator.

    Args:
        seed: int seed, or None.

    Returns:
        A Keras initializer: ``make_initializer(seed)(shape, dtype)`` gives the weights.
    """
    # BEGIN YOUR CODE
    return keras.initializers.GlorotUniform(seed=seed)  # Xavier: var = 2 / (fan_in + fan_out)
    # END YOUR CODE


def attention_scores(s_prev, h_enc):
    """Scaled dot-product scores of the previous decoder state against every h_j.

    Args:
        s_prev: `(B, d)` the decoder state s_{t-1}.
        h_enc: `(B, S, d)` the encoder states h_j.

    Returns:
        Scores `e` `(B, S)`, ``e_j = s_prev . h_j / sqrt(d)``.
    """
    # BEGIN YOUR CODE
    e = ops.einsum("bd,bsd->bs", s_prev, h_enc)  # s . h_j: (B, S)
    return e / math.sqrt(s_prev.shape[-1])  # scaled: unit variance for unit-variance inputs
    # END YOUR CODE


def teacher_forcing_ratio(step, decay_steps, schedule="linear", min_ratio=0.0, k=10.0):
    """The teacher-forcing ratio eps_i at training step ``step`` (Bengio et al. 2015).

    Args:
        step: training step i (0, 1, ...).
        decay_steps: steps of the linear decay from 1 to ``min_ratio``.
        schedule: "linear" or "inverse_sigmoid".
        min_ratio: the floor eps_min of the linear schedule.
        k: the inverse-sigmoid constant (k >= 1; larger k decays later).

    Returns:
        eps_i, a float in [0, 1].
    """
    # BEGIN YOUR CODE
    if schedule == "linear":
        return max(min_ratio, 1.0 - (1.0 - min_ratio) * step / decay_steps)
    return k / (k + math.exp(step / k))  # inverse sigmoid: starts near 1, decays to 0
    # END YOUR CODE


def next_decoder_inputs(teacher_tokens, logits, ratio, draws):
    """Scheduled sampling: the reference token with probability ``ratio``, else the model's.

    Args:
        teacher_tokens: `(B,)` int, the reference tokens y_{t-1}.
        logits: `(B, V)`, the decoder's output at the previous step.
        ratio: the teacher-forcing ratio eps_i (scalar).
        draws: `(B,)` floats uniform in [0, 1), one coin flip per token.

    Returns:
        `(B,)` int32 tokens: ``teacher_tokens`` where ``draws < ratio``, else the argmax.
    """
    # BEGIN YOUR CODE
    predicted = ops.cast(ops.argmax(logits, axis=-1), "int32")  # greedy: (B,)
    use_teacher = ops.less(draws, ratio)  # (B,) bool, True with probability eps_i
    return ops.where(use_teacher, ops.cast(teacher_tokens, "int32"), predicted)
    # END YOUR CODE
