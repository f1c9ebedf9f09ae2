"""Exercise 22: assemble step 5, the full Transformer, and check that it learns to copy.

Step 5 removes the last recurrence (Vaswani et al., 2017; the course notes): the GRU
encoder of step 4 becomes a stack of Transformer encoder blocks, and both sides get
sinusoidal positions, since attention alone does not see word order:

    H_0    = sqrt(d_model) Embed_src(x) + PE                   (B, S, d_model)
    H_enc  = EncoderBlock^N(H_0)                               (B, S, d_model)
    X      = sqrt(d_model) Embed_tgt(y_in) + PE                (B, T, d_model)
    Z      = DecoderBlock^N(X, H_enc)                          (B, T, d_model)
    logits = Z W_out + b_out                                   (B, T, V_tgt)

Each encoder block reads the previous block's output; each decoder block reads the
previous decoder block's output and attends to ``H_enc``, the output of the *last*
encoder block. The masks come from the token ids (token 0 is ``<pad>``):

    encoder_padding_mask = encoder_inputs != 0                 (B, S)
    decoder_padding_mask = decoder_inputs != 0                 (B, T)

The encoder blocks mask the source padding in their self-attention, the decoder blocks
in their cross-attention.

Build the model with the Keras functional API from kit layers taught earlier:
``kerasattn.layers.PositionalEncoding`` (exercise 08; ``scale_inputs=True`` multiplies
the embeddings by sqrt(d_model)), ``kerasattn.layers.TransformerEncoderBlock`` (exercise
20) and ``kerasattn.layers.TransformerDecoderBlock`` (exercise 10), plus Keras's
``Input``, ``Embedding``, ``Dense`` and ``Model``. Give the layers with weights these
names: the grader loads its own weights into your model by name.

    src_embedding                        Embedding(V_src, d_model)
    tgt_embedding                        Embedding(V_tgt, d_model)
    encoder_block_0 .. encoder_block_{N-1}   TransformerEncoderBlock
    decoder_block_0 .. decoder_block_{N-1}   TransformerDecoderBlock
    output_projection                    Dense(V_tgt)

Shapes (symbols): ``B`` batch, ``S`` source length, ``T`` target length, ``N`` blocks per
side, ``V_src`` / ``V_tgt`` vocabularies; inputs and output follow the kit's model
contract:

    inputs  : {"encoder_inputs": (B, S) int32, "decoder_inputs": (B, T) int32}
    returns : logits (B, T, V_tgt)

The grader checks the output shape, the logits on its own weights against a float64
NumPy reference (with N = 2), that the logits at position i do not depend on target
tokens after i (causality), that extra ``<pad>`` tokens in the source change nothing, that
every trainable weight receives a gradient, and then a sanity check that the model can
learn: it trains your model (from its own initialisation, N = 1) for a few seconds on a
copy task, where the translation of a random sentence is the sentence itself, and checks
that the loss falls and that the model copies sentences it was not trained on. To copy,
decoder position i must find source position i: only the positional encodings tell the
positions apart (a model that cannot tell them apart learns much of its training
sentences by heart, and copies about 60% of the words of a new one).

What to fill in: ``build_transformer``.

Hints:
    * Start as in exercise 13: two ``keras.Input`` with ``dtype="int32"`` and the two masks
      from the token ids; pass a dict of inputs to ``keras.Model``.
    * ``PositionalEncoding(scale_inputs=True)`` does both the scaling and the addition;
      each side needs one.
    * The blocks are called as ``encoder_block(h, padding_mask=...)`` and
      ``decoder_block(y, h_enc, decoder_padding_mask=..., encoder_padding_mask=...)`` (its
      self-attention is causal by default). A Python ``for`` loop builds each stack: ask
      what each block reads, and which encoder output every decoder block attends to.

What you may use: ``keras.ops``, Keras layers and the kit's layers (``kerasattn.layers``).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): ``kerasattn.models`` (the kit's own builders,
``transformer`` among them), ``kerasattn.training``, ``kerasattn.decoding``,
``keras_hub`` / ``keras_nlp``; NumPy on tensors; the solutions, ``kerasattn.reference``
and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/22_assemble_transformer.py --backend all``.
"""
import keras
from keras import ops

from kerasattn.layers import (  # exercises 08, 20, 10
    PositionalEncoding,
    TransformerDecoderBlock,
    TransformerEncoderBlock,
)


def build_transformer(src_vocab_size, tgt_vocab_size, d_model=16, num_heads=2, d_ff=32,
                      num_layers=1, dropout=0.0):
    """Functional step-5 model: Transformer encoder and decoder stacks, output layer.

    Args:
        src_vocab_size: source vocabulary size (ids `0 .. V_src - 1`, 0 = pad).
        tgt_vocab_size: target vocabulary size `V_tgt`.
        d_model: model width (even).
        num_heads: attention heads per block.
        d_ff: feed-forward hidden size.
        num_layers: blocks per side `N`.
        dropout: dropout rate after the positional encodings and in every block.

    Returns:
        A `keras.Model` mapping `{"encoder_inputs": (B, S), "decoder_inputs": (B, T)}` to
        logits `(B, T, V_tgt)`.
    """
    # BEGIN YOUR CODE
    encoder_inputs = keras.Input(shape=(None,), dtype="int32", name="encoder_inputs")
    decoder_inputs = keras.Input(shape=(None,), dtype="int32", name="decoder_inputs")
    encoder_padding_mask = ops.not_equal(encoder_inputs, 0)  # (B, S)
    decoder_padding_mask = ops.not_equal(decoder_inputs, 0)  # (B, T)

    h = keras.layers.Embedding(src_vocab_size, d_model, name="src_embedding")(encoder_inputs)
    h = PositionalEncoding(dropout=dropout, scale_inputs=True)(h)  # H_0 = sqrt(d) Embed(x) + PE
    for i in range(num_layers):
        h = TransformerEncoderBlock(d_model, num_heads, d_ff, dropout=dropout,
                                    name=f"encoder_block_{i}")(
            h, padding_mask=encoder_padding_mask)  # (B, S, d_model)

    y = keras.layers.Embedding(tgt_vocab_size, d_model, name="tgt_embedding")(decoder_inputs)
    y = PositionalEncoding(dropout=dropout, scale_inputs=True)(y)  # X = sqrt(d) Embed(y) + PE
    for i in range(num_layers):
        y = TransformerDecoderBlock(d_model, num_heads, d_ff, dropout=dropout,
                                    name=f"decoder_block_{i}")(
            y, h, decoder_padding_mask=decoder_padding_mask,
            encoder_padding_mask=encoder_padding_mask)  # (B, T, d_model)
    logits = keras.layers.Dense(tgt_vocab_size, name="output_projection")(y)  # (B, T, V_tgt)
    return keras.Model({"encoder_inputs": encoder_inputs, "decoder_inputs": decoder_inputs},
                       logits, name="transformer")
    # END YOUR CODE
