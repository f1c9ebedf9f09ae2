"""Exercise 16: the attention lab model, Bahdanau et al. (2015) encoder-decoder with attention.

The lab's translator reads the source with a bidirectional GRU and lets every decoder step
look back at all of it (the "RNNsearch" model of Bahdanau, Cho and Bengio, 2015):

    encoder   x_j = Embed_src(x)_j                                  (B, S, E)
              h_j = [GRU_fwd(x)_j ; GRU_bwd(x)_j]                   (B, S, 2u)
              s_0 = tanh(W_s h_1(bwd) + b_s)                        (B, u)
    decoder   for t = 1 .. T:
              c_t, alpha_t = Attention(s_{t-1}, h)                  (B, 2u), (B, S)
              s_t = GRUCell([Embed_tgt(y_{t-1}) ; c_t], s_{t-1})    (B, u)
              logits_t = W_o [s_t ; c_t] + b_o                      (B, V_tgt)

The attention uses the *previous* decoder state s_{t-1} as its query, with the additive
score ``e_tj = v^T tanh(W_q s_{t-1} + W_k h_j)``, and its context enters the GRU's input:
attention sits inside the recurrence. ``h_1(bwd)`` is the backward GRU's final state (it
has read the whole sentence and ended at the first word). The output layer reads
``[s_t ; c_t]``, a simplification of the paper's deep output layer. Token 0 is ``<pad>``:
the encoder must read only the real source words and the attention must give padded
positions weight 0.

``LabModel.__init__`` creates every layer for you (the grader loads its own weights into
them, then compares your forward pass with a float64 NumPy reference):

    src_embedding  Embedding(V_src, E)           tgt_embedding  Embedding(V_tgt, E)
    encoder        Bidirectional(GRU(u, return_sequences=True, return_state=True))
    bridge         Dense(u, activation="tanh")   attention      BahdanauAttention(a)
    decoder_cell   GRUCell(u)                    output_layer   Dense(V_tgt)

What to fill in:
    1. ``encode``: source mask, embedding, bidirectional GRU (masked), ``s_0``.
    2. ``decode_step``: one decoder step, the three equations inside the decoder's loop
       above.
    3. ``call``: encode, then the loop over the target positions with teacher forcing
       (the input of step t = 1 .. T is ``decoder_inputs[:, t-1]`` = y_{t-1}, with
       y_0 = ``<bos>``), stacking the logits.

Shapes (symbols): ``B`` batch, ``S`` source length, ``T`` target length, ``E`` embedding
size, ``u`` GRU units, ``a`` attention units, ``V_tgt`` target vocabulary; inputs and output
follow the kit's model contract:

    inputs  : {"encoder_inputs": (B, S) int32, "decoder_inputs": (B, T) int32}
    returns : logits (B, T, V_tgt)

The grader checks ``encode`` and ``decode_step`` against the reference, the whole model's
logits against the reference, the output shape, causality (the logits at step t do not
depend on decoder inputs after t), source-padding invariance (extra ``<pad>`` tokens
change nothing), that every trainable weight receives a gradient, and that 6 Adam steps
on a batch of two sentences at least halve the loss (the model can learn).

You may use the kit's ``BahdanauAttention`` (exercise 04; created for you) and Keras's
layers. You may not use the kit's own Bahdanau model or decoder (``kerasattn.models``:
``AttentionGRUDecoder``, the ``bahdanau`` builder), its encoder (``EncoderGRU``), its
recurrence helpers (``kerasattn.recurrence``), its decoding steps (``kerasattn.steps``),
its training or decoding code.

Hints:
    * ``Bidirectional(GRU(..., return_state=True))`` called with ``mask=`` returns
      ``(h, s_fwd, s_bwd)``; with the mask, each direction reads only the real words.
    * ``self.attention(s_prev, h_enc, memory_mask=source_mask)`` returns
      ``(context (B, 2u), weights (B, S))`` for a 2-D query.
    * ``self.decoder_cell(x_t, s_prev)`` returns ``(s_t, s_t)`` (output and new state).
    * In ``call`` the target length is known: a Python ``for`` loop over
      ``range(decoder_inputs.shape[1])`` and ``ops.stack(..., axis=1)`` are enough.

Use ``keras.ops`` only. Self-check:
``kerasattn grade exercises/16_lab_bahdanau_model.py --backend all``.

Then run ``kerasattn lab``: it grades this file, trains your ``LabModel`` beside the kit's
``seq2seq`` on the same data and budget (two minutes in all), translates the test sentences
with your ``encode`` / ``decode_step`` (and your ``greedy_decode`` of exercise 25 once it
is done) and writes ``outputs/lab/report.md``: test BLEU, BLEU by sentence length against
seq2seq, your model's attention on a test sentence and what to look for.
"""
import keras
from keras import ops

from kerasattn.layers import BahdanauAttention  # exercise 04


class LabModel(keras.Model):
    """Bidirectional-GRU encoder and Bahdanau attention decoder (teacher forcing).

    Args:
        src_vocab_size: source vocabulary size `V_src` (0 = pad).
        tgt_vocab_size: target vocabulary size `V_tgt`.
        embed_dim: embedding size `E` (source and target).
        units: GRU units `u` (each encoder direction, and the decoder).
        attention_units: hidden size `a` of the additive score.

    Call arguments:
        inputs: `{"encoder_inputs": (B, S) int32, "decoder_inputs": (B, T) int32}`.

    Returns:
        Logits `(B, T, V_tgt)`.
    """

    def __init__(self, src_vocab_size, tgt_vocab_size, embed_dim=8, units=8,
                 attention_units=8, **kwargs):
        super().__init__(**kwargs)
        self.embed_dim, self.units = int(embed_dim), int(units)
        self.src_embedding = keras.layers.Embedding(src_vocab_size, embed_dim,
                                                    name="src_embedding")
        self.encoder = keras.layers.Bidirectional(
            keras.layers.GRU(units, return_sequences=True, return_state=True),
            name="encoder")
        self.bridge = keras.layers.Dense(units, activation="tanh", name="bridge")
        self.tgt_embedding = keras.layers.Embedding(tgt_vocab_size, embed_dim,
                                                    name="tgt_embedding")
        self.attention = BahdanauAttention(attention_units, name="attention")
        self.decoder_cell = keras.layers.GRUCell(units, name="decoder_cell")
        self.output_layer = keras.layers.Dense(tgt_vocab_size, name="output_layer")

    def build(self, inputs_shape=None):
        # Build every sublayer eagerly, on the sizes above.
        e, u = self.embed_dim, self.units
        self.src_embedding.build((None, None))
        self.encoder.build((None, None, e))
        self.bridge.build((None, u))
        self.tgt_embedding.build((None,))
        self.attention.build((None, u), (None, None, 2 * u))
        self.decoder_cell.build((None, e + 2 * u))
        self.output_layer.build((None, u + 2 * u))
        self.built = True

    def encode(self, encoder_inputs):
        """Read the source.

        Args:
            encoder_inputs: `(B, S)` int token ids, right-padded with 0.

        Returns:
            `(h_enc, s_0, source_mask)`: annotations `(B, S, 2u)`, the decoder's initial
            state `(B, u)` and the boolean source mask `(B, S)` (True = real token).
        """
        # BEGIN YOUR CODE
        raise NotImplementedError("LabModel.encode: fill in the marked region")
        # END YOUR CODE

    def decode_step(self, y_prev, s_prev, h_enc, source_mask):
        """One decoder step t.

        Args:
            y_prev: previous target tokens y_{t-1}, `(B,)` int.
            s_prev: previous decoder state s_{t-1}, `(B, u)`.
            h_enc: annotations `(B, S, 2u)`.
            source_mask: bool `(B, S)`.

        Returns:
            `(logits_t, s_t, alpha_t)`: `(B, V_tgt)`, `(B, u)`, `(B, S)`.
        """
        # BEGIN YOUR CODE
        raise NotImplementedError("LabModel.decode_step: fill in the marked region")
        # END YOUR CODE

    def call(self, inputs):
        # BEGIN YOUR CODE
        raise NotImplementedError("LabModel.call: fill in the marked region")
        # END YOUR CODE
