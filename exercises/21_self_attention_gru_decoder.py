"""Exercise 21: step 3 of the path, masked self-attention and cross-attention before a GRU.

Step 3 keeps a recurrent decoder but lets each target position first look at its own
history (masked self-attention), then at the source (cross-attention), before the GRU
runs over the result (the kit's ``decoder_self_attention`` model; the course notes):

    Y   = AddNorm(X, MHA(X, X, X, M_causal))       masked self-attention over the target
    Z   = AddNorm(Y, MHA(Y, H_enc, H_enc))         cross-attention, source padding masked
    s_t = GRU(z_t, s_{t-1})   for t = 1 .. T       starting from s_0

``X`` is the embedded target input ``y_<t`` (teacher forcing). The causal mask
``M_causal`` lets position ``i`` see positions ``j <= i`` only: with teacher forcing the
whole target is in ``X`` at once, and without the mask position ``i`` could read the word
it has to predict. The GRU that follows carries the word order, so there is no positional
encoding yet (step 4 adds it). Padded target positions sit after the real ones, so the
causal mask already keeps every real position from seeing them: the only padding mask
needed is the source's, in the cross-attention.

Shapes (symbols): ``B`` batch, ``T`` target length, ``S`` source length, ``d_model``
width of ``X``, ``H_enc`` and both attentions, ``u`` GRU state size.

    x                    : (B, T, d_model)   X, the embedded target input
    h_enc                : (B, S, d_model)   H_enc, the encoder states
    initial_state        : (B, u)            s_0
    encoder_padding_mask : (B, S) bool       True = real source token (optional)
    returns              : (B, T, u)         the GRU states s_1 .. s_T

What to fill in: ``SelfAttentionGRUDecoder.call``. ``__init__`` builds the sublayers:
``self.self_attention`` and ``self.cross_attention`` (the kit's ``MultiHeadCross``),
``self.add_norm_1`` and ``self.add_norm_2`` (the kit's ``AddNorm``, exercise 09) and
``self.gru`` (Keras's ``GRU(u, return_sequences=True)``).

The grader loads its own weights and compares the GRU states with a float64 NumPy
reference; it checks that changing later target positions leaves earlier states
unchanged, that padded source positions change nothing, that each ``AddNorm`` gets the
residual first and the sublayer's output second (its dropout acts on the second, checked in
training), and that every weight receives a gradient (the attention key biases excepted: a
key bias shifts every key's score for a query alike, which the softmax ignores).

Hints:
    * ``MultiHeadCross`` is called as ``mha(query, value, value_mask=...,
      use_causal_mask=..., training=...)`` and returns `(B, T_q, d_model)`; ``AddNorm``
      as ``add_norm(x, sublayer_output, training=training)``.
    * For each attention, ask which sequence asks (the query), which one is looked at
      (the value), and which of its keys a query must not see.
    * Each sublayer reads the output of the one before it, not X.
    * ``self.gru`` runs over all `T` positions at once; it takes its start state as
      ``initial_state=``, and without it starts from zeros, not from ``s_0``.

What you may use: ``keras.ops``, the kit's ``MultiHeadCross`` and ``AddNorm`` and Keras's
``GRU`` (built for you in ``__init__``).
What you may NOT use (the grader watches every call while your code runs, however a name is
reached, and fails the check that used it): the kit's models (``kerasattn.models``, whose
``decoder_self_attention`` builds this decoder), its decoding steps (``kerasattn.steps``),
its ``TransformerDecoderBlock`` (``kerasattn.layers.decoder_block``), ``keras_hub`` /
``keras_nlp``; NumPy on tensors; the solutions, ``kerasattn.reference`` and
``kerasattn.grader``.

Self-check: ``kerasattn grade exercises/21_self_attention_gru_decoder.py --backend all``.
"""
import keras

from kerasattn.layers import AddNorm, MultiHeadCross  # exercise 09 and the kit's MHA


class SelfAttentionGRUDecoder(keras.layers.Layer):
    """Masked self-attention, cross-attention (each with AddNorm), then a GRU.

    Args:
        d_model: width of the target embeddings, the encoder states and the attentions.
        num_heads: attention heads (must divide `d_model`).
        units: GRU state size `u`.
        dropout: dropout on the attention weights and on each sublayer output.

    Call arguments:
        x: the embedded target input `(B, T, d_model)`.
        h_enc: the encoder states `(B, S, d_model)`.
        initial_state: `s_0` `(B, u)`.
        encoder_padding_mask: optional boolean `(B, S)`, True = real source token.
        training: enables dropout.

    Returns:
        The GRU states `(B, T, u)`.
    """

    def __init__(self, d_model, num_heads, units, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.d_model, self.num_heads, self.units = int(d_model), int(num_heads), int(units)
        self.rate = float(dropout)
        self.self_attention = MultiHeadCross(num_heads, d_model, dropout=dropout,
                                             name="self_attention")
        self.add_norm_1 = AddNorm(dropout=dropout, name="add_norm_1")
        self.cross_attention = MultiHeadCross(num_heads, d_model, dropout=dropout,
                                              name="cross_attention")
        self.add_norm_2 = AddNorm(dropout=dropout, name="add_norm_2")
        self.gru = keras.layers.GRU(units, return_sequences=True, name="gru")

    def call(self, x, h_enc, initial_state, encoder_padding_mask=None, training=None):
        # BEGIN YOUR CODE
        raise NotImplementedError("SelfAttentionGRUDecoder.call: fill in the marked region")
        # END YOUR CODE

    def get_config(self):
        config = super().get_config()
        config.update(d_model=self.d_model, num_heads=self.num_heads, units=self.units,
                      dropout=self.rate)
        return config
