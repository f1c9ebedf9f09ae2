"""Exercise 10: the forward pass of a Transformer decoder block.

A decoder block (post-norm, as in Vaswani et al., 2017, and step 4 of the course notes) has
three sublayers, each wrapped in AddNorm:

    Y1 = AddNorm(X,  MHA_causal(X, X, X))          masked self-attention over the target
    Y2 = AddNorm(Y1, MHA(Y1, H_enc, H_enc))        cross-attention to the encoder
    Z  = AddNorm(Y2, FFN(Y2))                      position-wise feed-forward

The self-attention must be causal (position i sees target positions <= i) and must ignore
padded target positions; the cross-attention must ignore padded *source* positions. Both
take the target padding mask as their query mask too, so a padded target position attends
to nothing (its attention output is only the output projection's bias), as in the kit's
block; the grader checks that row as well. ``AddNorm(x, y)`` takes the residual first and
the sublayer's output second (its dropout acts on ``y`` while training): the grader checks
that order in training, with dropout.

Shapes (symbols): ``B`` batch, ``T`` target length, ``S`` source length, ``d_model``.

    decoder_sequence     : (B, T, d_model)   X, the embedded (and position-encoded) target
    encoder_sequence     : (B, S, d_model)   H_enc
    decoder_padding_mask : (B, T) bool or None   True = real target token
    encoder_padding_mask : (B, S) bool or None   True = real source token
    returns              : (B, T, d_model)

What to fill in: ``TransformerDecoderBlock.call``. The sublayers are built for you in
``__init__`` from kit pieces taught earlier: ``self.self_attention`` and
``self.cross_attention`` (``kerasattn.layers.MultiHeadCross``), ``self.add_norm_1..3``
(``kerasattn.layers.AddNorm``, exercise 09) and ``self.ffn``
(``kerasattn.layers.PositionwiseFeedForward``).

Hints:
    * ``MultiHeadCross`` is called as ``mha(query, value, key=None, query_mask=...,
      value_mask=..., use_causal_mask=..., training=...)`` and returns `(B, T_q, d_model)`;
      ``AddNorm`` as ``add_norm(x, sublayer_output, training=training)``.
    * For each attention, ask which sequence asks (the query), which one is looked at (the
      value), and which padding mask belongs to each of the two.
    * Each sublayer reads the output of the one before it, not X.

What you may use: ``keras.ops`` and the kit's ``MultiHeadCross``, ``AddNorm`` and
``PositionwiseFeedForward`` (built for you in ``__init__``).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's ``TransformerDecoderBlock``
(``kerasattn.layers.decoder_block``), ``keras_hub`` / ``keras_nlp``; NumPy on tensors; the
solutions, ``kerasattn.reference`` and ``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/10_decoder_block.py --backend all``.
"""
import keras

from kerasattn.layers import AddNorm, MultiHeadCross, PositionwiseFeedForward


class TransformerDecoderBlock(keras.layers.Layer):
    """Post-norm Transformer decoder block (masked self-attention, cross-attention, FFN).

    Args:
        d_model: model width.
        num_heads: attention heads.
        d_ff: hidden size of the feed-forward sublayer.
        dropout: dropout rate in every sublayer.

    Call arguments:
        decoder_sequence: `(B, T, d_model)`.
        encoder_sequence: `(B, S, d_model)`.
        decoder_padding_mask: optional boolean `(B, T)`.
        encoder_padding_mask: optional boolean `(B, S)`.
        training: enables dropout.

    Returns:
        `(B, T, d_model)`.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.num_heads, self.d_ff = int(d_model), int(num_heads), int(d_ff)
        self.rate = float(dropout)
        self.self_attention = MultiHeadCross(num_heads, d_model, dropout=dropout,
                                             name="self_attention")
        self.add_norm_1 = AddNorm(dropout=dropout, name="add_norm_1")
        self.cross_attention = MultiHeadCross(num_heads, d_model, dropout=dropout,
                                              name="cross_attention")
        self.add_norm_2 = AddNorm(dropout=dropout, name="add_norm_2")
        self.ffn = PositionwiseFeedForward(d_ff, dropout=dropout, name="ffn")
        self.add_norm_3 = AddNorm(dropout=dropout, name="add_norm_3")

    def call(self, decoder_sequence, encoder_sequence, decoder_padding_mask=None,
             encoder_padding_mask=None, training=None):
        x, h_enc = decoder_sequence, encoder_sequence
        # BEGIN YOUR CODE
        a1 = self.self_attention(x, x, query_mask=decoder_padding_mask,
                                 value_mask=decoder_padding_mask, use_causal_mask=True,
                                 training=training)  # (B, T, d_model)
        y1 = self.add_norm_1(x, a1, training=training)  # Y1 = AddNorm(X, MHA_causal(X,X,X))
        a2 = self.cross_attention(y1, h_enc, query_mask=decoder_padding_mask,
                                  value_mask=encoder_padding_mask,
                                  training=training)  # (B, T, d_model)
        y2 = self.add_norm_2(y1, a2, training=training)  # Y2 = AddNorm(Y1, MHA(Y1, H, H))
        z = self.add_norm_3(y2, self.ffn(y2, training=training),
                            training=training)  # Z = AddNorm(Y2, FFN(Y2))
        return z
        # END YOUR CODE

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, num_heads=self.num_heads, d_ff=self.d_ff,
                      dropout=self.rate)
        return config
