"""Exercise 20: step 2 of the path, a Transformer encoder block and its feed-forward network.

Step 2 adds self-attention to the encoder: each source position looks at every other one,
and a position-wise feed-forward network then transforms each position on its own. Both
sublayers are wrapped post-norm, as in Vaswani et al. (2017) and the course notes:

    Z  = AddNorm(H, MHA(H, H, H, mask))          self-attention, padding masked
    H' = AddNorm(Z, FFN(Z))
    FFN(x) = ReLU(x W1 + b1) W2 + b2             the same weights at every position

with ``AddNorm(x, y) = LayerNorm(x + y)`` (exercise 09). The FFN widens each position to
``d_ff`` features, applies the non-linearity there, and projects back to ``d_model``: the
block's output has the input's shape, so blocks stack.

Shapes (symbols): ``B`` batch, ``T`` source length, ``d_model`` width, ``d_ff`` hidden
width of the FFN.

    h            : (B, T, d_model)   H, e.g. the GRU encoder's states or embeddings
    padding_mask : (B, T) bool       True = real token (optional)
    W1: (d_model, d_ff)   b1: (d_ff,)   W2: (d_ff, d_model)   b2: (d_model,)
    returns      : (B, T, d_model)

What to fill in:
    1. ``FeedForward.call``: ``ReLU(x W1 + b1) W2 + b2``. ``build`` creates the weights
       ``W1``, ``b1``, ``W2``, ``b2`` for you.
    2. ``TransformerEncoderBlock.call``: the two sublayers above. ``__init__`` builds
       ``self.attention`` (the kit's ``MultiHeadCross``), ``self.add_norm_1``,
       ``self.add_norm_2`` (the kit's ``AddNorm``, exercise 09) and ``self.ffn`` (your
       ``FeedForward``).

The grader loads its own weights and compares the FFN and the block with a float64 NumPy
reference; it checks that the FFN treats each position on its own, that padded positions
change nothing at the real ones, that each ``AddNorm`` gets the residual first and the
sublayer's output second (its dropout acts on the second, checked in training), and that
every weight receives a gradient (except the self-attention's key bias: it shifts every
key's score for a query alike, which the softmax ignores).

Hints:
    * ``ops.matmul`` applies a `(d_model, d_ff)` matrix at every position of a
      `(B, T, d_model)` tensor. Should the output pass through the ReLU too? It goes
      into a residual sum.
    * ``MultiHeadCross`` is called as ``mha(query, value, query_mask=...,
      value_mask=..., training=...)``; ``AddNorm`` as ``add_norm(x, sublayer_output,
      training=training)``, and it adds ``x`` itself.
    * For the self-attention, ask which sequence asks (the query), which one is looked at
      (the value), and where each of them is padded.
    * Each sublayer reads the output of the one before it, not ``H``.

What you may use: ``keras.ops``, the kit's ``MultiHeadCross`` and ``AddNorm`` (built for
you in ``__init__``), and Keras's ``Layer``.
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``TransformerEncoderBlock``
(``kerasattn.layers.encoder_block``), its ``PositionwiseFeedForward``
(``kerasattn.layers.feed_forward``), ``kerasattn.models``, ``keras_hub`` /
``keras_nlp``; NumPy on tensors; the solutions, ``kerasattn.reference`` and
``kerasattn.grader``. The FFN uses the four weights ``build`` creates: a ``Dense`` layer
inside ``call`` would bring weights of its own, which the grader cannot load.

Self-check: ``kerasattn grade exercises/20_encoder_block.py --backend all``.
"""
import keras
from keras import ops

from kerasattn.layers import AddNorm, MultiHeadCross  # exercise 09 and the kit's MHA


class FeedForward(keras.layers.Layer):
    """Position-wise feed-forward network `ReLU(x W1 + b1) W2 + b2`.

    Args:
        d_ff: hidden width.

    Call arguments:
        x: `(B, T, d_model)`.

    Returns:
        `(B, T, d_model)`.
    """

    def __init__(self, d_ff, **kwargs):
        super().__init__(**kwargs)
        self.d_ff = int(d_ff)

    def build(self, x_shape):
        d_model = x_shape[-1]
        self.W1 = self.add_weight(name="W1", shape=(d_model, self.d_ff),
                                  initializer="glorot_uniform")
        self.b1 = self.add_weight(name="b1", shape=(self.d_ff,), initializer="zeros")
        self.W2 = self.add_weight(name="W2", shape=(self.d_ff, d_model),
                                  initializer="glorot_uniform")
        self.b2 = self.add_weight(name="b2", shape=(d_model,), initializer="zeros")
        self.built = True

    def call(self, x):
        # BEGIN YOUR CODE
        raise NotImplementedError("FeedForward.call: fill in the marked region")
        # END YOUR CODE

    def get_config(self):
        config = super().get_config()
        config.update(d_ff=self.d_ff)
        return config


class TransformerEncoderBlock(keras.layers.Layer):
    """Post-norm encoder block: self-attention + AddNorm, then FFN + AddNorm.

    Args:
        d_model: model width.
        num_heads: attention heads (must divide `d_model`).
        d_ff: hidden width of the feed-forward network.
        dropout: dropout on the attention weights and on each sublayer output.

    Call arguments:
        h: `(B, T, d_model)`.
        padding_mask: optional boolean `(B, T)`, True = real token.
        training: enables dropout.

    Returns:
        `(B, T, d_model)`.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.num_heads, self.d_ff = int(d_model), int(num_heads), int(d_ff)
        self.rate = float(dropout)
        self.attention = MultiHeadCross(num_heads, d_model, dropout=dropout, name="attention")
        self.add_norm_1 = AddNorm(dropout=dropout, name="add_norm_1")
        self.ffn = FeedForward(d_ff, name="ffn")
        self.add_norm_2 = AddNorm(dropout=dropout, name="add_norm_2")

    def call(self, h, padding_mask=None, training=None):
        # BEGIN YOUR CODE
        raise NotImplementedError("TransformerEncoderBlock.call: fill in the marked region")
        # END YOUR CODE

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, num_heads=self.num_heads, d_ff=self.d_ff,
                      dropout=self.rate)
        return config
