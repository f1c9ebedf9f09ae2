"""Exercise 13: assemble step 4, a Transformer decoder on a GRU encoder.

Step 4 of the path keeps a recurrent encoder but replaces the recurrent decoder by
Transformer decoder blocks that run over the whole target in parallel. The kit's step-4
model keeps step 2's encoder (a bidirectional GRU, then self-attention blocks); here a
single GRU stands in for it:

    H_enc  = GRU(Embed(x))                                     (B, S, d_model)
    X      = sqrt(d_model) Embed(y_in) + PE                    (B, T, d_model)
    Z      = DecoderBlock^N(X, H_enc)                          (B, T, d_model)
    logits = Z W_out + b_out                                   (B, T, V_tgt)

with the masks written explicitly from the token ids (token 0 is ``<pad>``):

    encoder_padding_mask = encoder_inputs != 0                 (B, S)
    decoder_padding_mask = decoder_inputs != 0                 (B, T)

Build it with the Keras functional API from kit layers taught earlier:
``kerasattn.layers.PositionalEncoding`` (exercise 08; ``scale_inputs=True`` multiplies
the embeddings by sqrt(d_model), as in the paper) and
``kerasattn.layers.TransformerDecoderBlock`` (exercise 10), plus Keras's ``Embedding``,
``GRU`` and ``Dense``.

Shapes (symbols): ``B`` batch, ``S`` source length, ``T`` target length, ``V_tgt`` target
vocabulary; inputs and output follow the kit's model contract:

    inputs  : {"encoder_inputs": (B, S) int32, "decoder_inputs": (B, T) int32}
    returns : logits (B, T, tgt_vocab_size)

The grader checks the output shape, that the logits at position i do not depend on target
tokens after i (causality), that padding the source with extra ``<pad>`` tokens changes
nothing (padding invariance), that every trainable weight receives a gradient, that the
decoder adds positional encodings, and what the model is made of: built with
``num_layers=2``, it must hold a GRU, two separate ``TransformerDecoderBlock`` layers and a
``PositionalEncoding`` with ``scale_inputs=True``.

What to fill in: ``build_transformer_decoder_on_gru``.

Hints:
    * ``keras.Input(shape=(None,), dtype="int32", name="encoder_inputs")``; pass a dict of
      inputs to ``keras.Model``.
    * ``Embedding(..., mask_zero=True)`` on the source makes the GRU skip the padding;
      ``GRU(d_model, return_sequences=True)`` keeps one state per source position.
    * ``ops.not_equal(encoder_inputs, 0)`` works on symbolic inputs; pass the masks to
      every decoder block as ``decoder_padding_mask=`` / ``encoder_padding_mask=``.
    * The decoder block's self-attention is causal by default (``use_causal_mask=True``).

What you may use: ``keras.ops``, Keras layers and the kit's layers (``kerasattn.layers``).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): ``kerasattn.models`` (the kit's own builders),
``kerasattn.training``, ``kerasattn.decoding``, ``keras_hub`` / ``keras_nlp``; NumPy on
tensors; the solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/13_assemble_step4_model.py --backend all``.
"""
import keras
from keras import ops

from kerasattn.layers import PositionalEncoding, TransformerDecoderBlock  # exercises 08, 10


def build_transformer_decoder_on_gru(src_vocab_size, tgt_vocab_size, d_model=16,
                                     num_heads=2, d_ff=32, num_layers=1, dropout=0.0):
    """Functional step-4 model: GRU encoder, Transformer decoder blocks, output layer.

    Args:
        src_vocab_size: source vocabulary size (ids `0 .. V_src - 1`, 0 = pad).
        tgt_vocab_size: target vocabulary size `V_tgt`.
        d_model: model width (even).
        num_heads: attention heads per decoder block.
        d_ff: feed-forward hidden size.
        num_layers: number of decoder blocks `N`.
        dropout: dropout rate in the decoder.

    Returns:
        A `keras.Model` mapping `{"encoder_inputs": (B, S), "decoder_inputs": (B, T)}` to
        logits `(B, T, V_tgt)`.
    """
    # BEGIN YOUR CODE
    raise NotImplementedError("build_transformer_decoder_on_gru: fill in the marked region")
    # END YOUR CODE
