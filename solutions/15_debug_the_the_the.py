"""Exercise 15 (debugging): a decoder that repeats itself ("the dog dog"), a high loss.

A student's attention translator does not learn. Its loss starts far above what a blind
guess costs and is still above it at the end; its translations ignore the source, stutter
("the dog dog") and stop in the wrong place. Trained for a few seconds on a tiny
French-English corpus (96 sentences such as "le petit chat voit le chien" -> "the small
cat sees the dog", one English word for each French word), it prints this
(``python exercises/15_debug_the_the_the.py``, once the four ``raise`` statements are deleted;
on TensorFlow; JAX and torch give other numbers and the same picture):

    Training the translator (60 Adam steps on 96 sentences):
       step  teacher forcing   loss
          1             0.25  13.817
         10             0.36   8.860
         20             0.49   5.988
         30             0.61   4.843
         40             0.74   3.613
         50             0.86   3.346
         60             0.99   3.165
      (a uniform guess over the 10 words it can write costs ln 10 = 2.30)

    Greedy translations:
      le grand poisson voit le petit poisson
        model:    the big dog sees <eos>
        expected: the big fish sees the small fish <eos>
      le petit chien voit le petit poisson
        model:    the small fish eats sees the <eos>
        expected: the small dog sees the small fish <eos>
      le petit oiseau mange le grand chien
        model:    the bird cat the fish eats small fish
        expected: the small bird eats the big dog <eos>
      le chien voit
        model:    the dog dog eats <eos>
        expected: the dog sees <eos>
      right words: 36%
      translations that say a word twice in a row: 22%
      different translations: 57, for 81 different sentences

(Exercise 17 is the opposite case: a loss that falls too far.)

The translator is built from the four functions below, which are the student's code; the
rest of the run (the recurrent decoder, the loss, Adam) is the kit's and is right. Find out
why it behaves like this and repair the code: once it works, the same run's loss falls
below 0.01 and its greedy translations are right. Expect more than one cause, and causes
that the run alone does not show: a bug that only slows learning down can hide behind the
others, or sit in code the run never reaches (the inverse-sigmoid branch), so check each
function against what it is meant to do.

    make_initializer       the initializer of every weight matrix and embedding
    attention_scores       the dot-product score of s_{t-1} against every h_j
    teacher_forcing_ratio  eps_i for a training step i
    next_decoder_inputs    scheduled sampling: the decoder's next input tokens

Scheduled sampling (Bengio et al. 2015), which the last two implement: at every training
step i the decoder reads the reference token y_{t-1} with probability eps_i (the
teacher-forcing ratio) and its own greedy prediction otherwise, one coin flip per token.
Bengio et al. decay eps_i over training, on one of three schedules (linear, exponential
eps_i = k^i with k < 1, inverse sigmoid); this exercise implements two:

    linear           eps_i = max(eps_min, 1 - (1 - eps_min) i / decay_steps)
    inverse sigmoid  eps_i = k / (k + exp(i / k))                 (k >= 1)

Shapes (symbols): ``B`` batch, ``S`` source length, ``d`` state size, ``V`` vocabulary.

    attention_scores(s_prev (B, d), h_enc (B, S, d)) -> e (B, S)
    next_decoder_inputs(teacher_tokens (B,) int, logits (B, V), ratio scalar,
                        draws (B,) uniform in [0, 1)) -> tokens (B,) int32

What to do: in every marked region delete the two-line ``raise`` statement, run the file,
find the bugs and fix them in place.

The grader checks each function on its own, then trains a tiny attention translator of its
own built from your four functions (60 Adam steps on 36 sentences such as "the c the e
<eos>"): the loss must fall below 0.05 and the greedy translations must be right (at
least 97% of the tokens), not one repeated token.

Hints: three of them, each saying more than the one before: where to look
(``kerasattn hint 15``), what to compare (``kerasattn hint 15 2``), the fix
(``kerasattn hint 15 3``).

You may use Keras's initializers. You may not use the kit's layers (``kerasattn.layers``),
models, training or decoding code. Use ``keras.ops`` only (and ``math`` for scalars).
Self-check: ``kerasattn grade exercises/15_debug_the_the_the.py --backend all``.
"""
import math

import keras
from keras import ops


def make_initializer(seed=None):
    """The initializer of every weight matrix and embedding of the translator.

    Meant to be Xavier/Glorot (Glorot and Bengio, 2010): mean 0 and variance
    2 / (fan_in + fan_out), so that a layer's outputs keep the scale of its inputs.

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


if __name__ == "__main__":
    # The symptom: train the translator for a few seconds and show its translations.
    from kerasattn.course.symptoms import the_the_the

    the_the_the(make_initializer, attention_scores, teacher_forcing_ratio, next_decoder_inputs)
