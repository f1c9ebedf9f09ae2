"""Exercise 17 (debugging): a training loss too good to be true (a look-ahead leak).

A student's Transformer decoder reaches a very low training loss within a few epochs, yet
at inference it generates the same word over and over ("the the the ...") for every
sentence. Two places in their code let the decoder *see the word it must predict* during
training, so it learns to copy instead of to predict; at inference that word is not there
and the decoder has learnt nothing it can use. (Exercise 15 is the opposite case: the same
"the the the" output with a loss that stays high.)

Part A: ``make_teacher_forcing_arrays`` builds the decoder inputs and labels. With teacher
forcing the decoder reads the target shifted right by one, and predicts the target:

    target           :        y1  y2  y3
    decoder_inputs   : <bos>  y1  y2  y3        (= <bos> followed by y)
    labels           :  y1    y2  y3 <eos>      (= y followed by <eos>)

so that at position t the input is y_{t-1} and the label is y_t.

Part B: ``TinyDecoder.call`` runs a one-layer decoder (embedding, positions, self-attention,
AddNorm, output layer). Its self-attention must be causal: position t may only attend to
positions <= t, or it reads y_{t} from position t+1 of the shifted input.

Shapes (symbols): ``N`` sentences, ``L`` longest target, ``T = L + 1``, ``V`` vocabulary.

    targets          : (N, L) int, right-padded with 0, no <bos>/<eos>
    decoder_inputs   : (N, T) int      labels : (N, T) int     (padding 0 after the end)
    TinyDecoder(decoder_inputs (N, T)) -> logits (N, T, V)

What to do: in both marked regions delete the ``raise`` line, find the bug and fix it.

Hints:
    * Part A: write both arrays out by hand for the target ``[7, 8, 0]`` (bos=2, eos=3):
      decoder_inputs ``[2, 7, 8, 0]``, labels ``[7, 8, 3, 0]``. Compare with what the code
      returns. The <eos> goes right after the last real token of each row.
    * Part B: ``MultiHeadCross`` takes ``use_causal_mask=True``. A test: change the token
      at the last position; the logits at earlier positions must not move.

You may use kit layers taught earlier (``MultiHeadCross``, ``AddNorm``,
``PositionalEncoding``). You may not use the kit's data pipeline (``kerasattn.data``), its
models, its training code or its ``TransformerDecoderBlock``. Use ``keras.ops`` only.
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
        "make_teacher_forcing_arrays: this code has a bug; fix it, then delete this line")
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
            "TinyDecoder.call: this code has a bug; fix it, then delete this line")
        a = self.self_attention(x, x, query_mask=padding, value_mask=padding)  # (N, T, d_model)
        # END YOUR CODE
        y = self.add_norm(x, a)  # (N, T, d_model)
        return self.output_layer(y)  # (N, T, V)
