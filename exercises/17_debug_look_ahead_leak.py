"""Exercise 17 (debugging): a training loss too good to be true.

A student's Transformer decoder reaches a near-zero training loss within a few epochs, yet
when it writes on its own it says the same word over and over. A one-layer version of
their decoder, trained for a few seconds on six sentences that count up ("one two three
four", ..., "six seven eight nine"), does the same. Once both ``raise`` statements are deleted,
``python exercises/17_debug_look_ahead_leak.py`` prints (on TensorFlow; JAX and torch give
other numbers and the same picture):

    Training the decoder (60 Adam steps on 6 sentences):
      step 1: 2.804  step 10: 0.892  step 20: 0.061  step 40: 0.003  step 60: 0.001

      teacher-forced accuracy (reading the training arrays): 100%
      free-running accuracy (reading its own outputs):        4%

    Greedy continuations (after <bos> and the first word):
      one    -> one nine nine nine           (expected: two three four <eos>)
      three  -> three three three three      (expected: four five six <eos>)
      six    -> six six six six              (expected: seven eight nine <eos>)

Both accuracies are over the words after the first. The teacher-forced one measures the
decoder as training sees it: it reads the training arrays. The free-running one measures
it as it is used: it reads ``<bos>`` and the first word of each sentence, then its own
previous outputs (greedy decoding). (Exercise 15 is the opposite case: "the the the" with
a loss that stays high.)

The code below is the student's: ``make_teacher_forcing_arrays`` builds the decoder's
inputs and labels from the target sentences, and ``TinyDecoder`` is the decoder
(embedding, positions, self-attention, AddNorm, output layer). Find out why it does so
well in training and so badly on its own, and repair the code: once it works, the same run
gives 100% on both accuracies and its loss stops where an honest model's must. Expect more
than one cause: run the file again after each fix.

Shapes (symbols): ``N`` sentences, ``L`` longest target, ``T = L + 1``, ``V`` vocabulary.

    targets          : (N, L) int, right-padded with 0, no <bos>/<eos>
    decoder_inputs   : (N, T) int      labels : (N, T) int     (padding 0 after the end)
    TinyDecoder(decoder_inputs (N, T)) -> logits (N, T, V)

What to do: in both marked regions delete the two-line ``raise`` statement, run the file,
find the bugs and fix them in place.

Hints: three of them, each saying more than the one before: where to look
(``kerasattn hint 17``), what to compare (``kerasattn hint 17 2``), the fix
(``kerasattn hint 17 3``).

You may use kit layers taught earlier (``MultiHeadCross``, ``AddNorm``) and
``PositionalEncoding`` (sinusoidal positions, taught in lesson 04: here it is given). You
may not use the kit's data pipeline (``kerasattn.data``), its models, its training code or
its ``TransformerDecoderBlock``. Use ``keras.ops`` only.
Self-check: ``kerasattn grade exercises/17_debug_look_ahead_leak.py --backend all``.
"""
import keras
from keras import ops

from kerasattn.layers import AddNorm, MultiHeadCross, PositionalEncoding


def make_teacher_forcing_arrays(targets, bos_id=2, eos_id=3):
    """Decoder inputs ``<bos> y`` and labels ``y <eos>`` from padded targets.

    Args:
        targets: `(N, L)` int token ids, right-padded with 0.
        bos_id: id of `<bos>`.
        eos_id: id of `<eos>`.

    Returns:
        `(decoder_inputs, labels)`, both `(N, L + 1)` int32.
    """
    targets = ops.convert_to_tensor(targets, "int32")
    # BEGIN YOUR CODE
    raise NotImplementedError(
        "make_teacher_forcing_arrays: one bug. Delete this 2-line raise, run the file, fix it")
    n, length = targets.shape
    pad = ops.zeros((n, 1), "int32")
    lengths = ops.sum(ops.cast(ops.not_equal(targets, 0), "int32"), axis=1)  # (N,)
    positions = ops.arange(length + 1, dtype="int32")[None, :]  # (1, T)
    labels = ops.where(ops.equal(positions, lengths[:, None]), eos_id,
                       ops.concatenate([targets, pad], axis=1))  # y <eos>
    decoder_inputs = labels
    return decoder_inputs, labels
    # END YOUR CODE


class TinyDecoder(keras.layers.Layer):
    """One-layer decoder-only language model over the target (no encoder).

    Args:
        vocab_size: `V`.
        d_model: model width.
        num_heads: attention heads.

    Call arguments:
        decoder_inputs: `(N, T)` int token ids (0 = pad).

    Returns:
        Logits `(N, T, V)`.
    """

    def __init__(self, vocab_size, d_model=8, num_heads=2, **kwargs):
        super().__init__(**kwargs)
        self.embedding = keras.layers.Embedding(vocab_size, d_model, name="embedding")
        self.positions = PositionalEncoding(name="positions")
        self.self_attention = MultiHeadCross(num_heads, d_model, name="self_attention")
        self.add_norm = AddNorm(name="add_norm")
        self.output_layer = keras.layers.Dense(vocab_size, name="output_layer")
        self.d_model = int(d_model)

    def build(self, decoder_inputs_shape):
        # Build every sublayer eagerly, on concrete shapes.
        features = tuple(decoder_inputs_shape) + (self.d_model,)  # (N, T, d_model)
        self.embedding.build(decoder_inputs_shape)
        self.positions.build(features)
        self.self_attention.build(features, features)
        self.add_norm.build(features, features)
        self.output_layer.build(features)
        self.built = True

    def call(self, decoder_inputs):
        padding = ops.not_equal(decoder_inputs, 0)  # (N, T)
        x = self.positions(self.embedding(decoder_inputs))  # (N, T, d_model)
        # BEGIN YOUR CODE
        raise NotImplementedError(
            "TinyDecoder.call: one bug. Delete this 2-line raise, run the file, fix it")
        a = self.self_attention(x, x, query_mask=padding, value_mask=padding)  # (N, T, d_model)
        # END YOUR CODE
        y = self.add_norm(x, a)  # (N, T, d_model)
        return self.output_layer(y)  # (N, T, V)


if __name__ == "__main__":
    # The symptom: train the decoder for a few seconds, then measure it reading the training
    # arrays and reading its own outputs.
    from kerasattn.course.symptoms import look_ahead_leak

    look_ahead_leak(make_teacher_forcing_arrays, TinyDecoder)
