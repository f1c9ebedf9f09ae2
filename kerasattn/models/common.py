"""Pieces shared by the seven models: small glue layers and the incremental-decoder base.

Every model names its layers so that decoding can fetch them from a built *or reloaded*
model with ``model.get_layer``. The names every model has:

- ``encoder_inputs`` / ``decoder_inputs``: the two `Input`s, `(B, S)` and `(B, T)` int32;
- ``source_mask``: the source padding mask `(B, S)` bool, derived from the token ids
  (True = real token) and passed explicitly to every layer that looks at the source;
- ``tgt_embedding``: the target embedding; ``output_projection``: the `Dense` to logits.
"""
from __future__ import annotations

import abc
import dataclasses

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kerasattn")
class SourcePaddingMask(keras.layers.Layer):
    """Boolean padding mask from token ids: `mask = (ids != pad_id)`.

    A layer rather than a raw op so that the functional graph (and its `.keras` file)
    keeps it, and so that it can be fetched by name at decode time.

    Args:
        pad_id: id of `<pad>` (0 in the kit's vocabularies).

    Call arguments:
        token_ids: int tensor `(B, S)`.

    Returns:
        Bool tensor `(B, S)`, True where the token is real.
    """

    def __init__(self, pad_id=0, **kwargs):
        super().__init__(**kwargs)
        self.pad_id = int(pad_id)

    def call(self, token_ids):
        return ops.not_equal(token_ids, self.pad_id)  # (B, S)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def compute_output_spec(self, token_ids):
        return keras.KerasTensor(token_ids.shape, dtype="bool")

    def get_config(self):
        config = super().get_config()
        config.update(pad_id=self.pad_id)
        return config


@keras.saving.register_keras_serializable(package="kerasattn")
class ConcatContext(keras.layers.Layer):
    """Concatenate one context vector to every time step: `[x_t; c]`.

    Used by the `seq2seq` baseline, whose decoder sees the same fixed context `c` at
    every step (Cho et al., 2014).

    Call arguments:
        sequence: `(B, T, E)`.
        context: `(B, D)`.

    Returns:
        `(B, T, E + D)`.
    """

    def call(self, sequence, context):
        steps = ops.shape(sequence)[1]
        tiled = ops.repeat(context[:, None, :], steps, axis=1)  # (B, T, D)
        return ops.concatenate([sequence, ops.cast(tiled, sequence.dtype)], axis=-1)

    def compute_output_shape(self, sequence_shape, context_shape):
        last = None if sequence_shape[-1] is None or context_shape[-1] is None else (
            sequence_shape[-1] + context_shape[-1])
        return tuple(sequence_shape[:-1]) + (last,)


class IncrementalDecoder(abc.ABC):
    """Base class of the per-model decoding adapters.

    An adapter turns a trained model into the two functions search needs:

    - ``encode(src, max_length) -> state``: run the encoder once; `state` is a dict of
      tensors whose first axis is the batch (so beams can be cloned / reordered with
      :meth:`repeat` / :meth:`reorder`);
    - ``step(token, state, t) -> (logits, new_state, attention)``: feed the token of
      output position `t` (`<bos>` at `t = 0`), get the logits `(B, V)` for position
      `t`; `attention` is a dict of the weights actually used at this step, each
      `(B, L, h, K)` (layers, heads, keys): ``"cross"`` over the `S` source positions,
      and for decoders with self-attention ``"self"`` over the `max_length` cached
      positions (zeros after `t`).

    The encoder is a sub-model of the saved graph (inputs ``encoder_inputs``, outputs the
    layers listed in :attr:`encoder_outputs`), so it is the very computation training used.
    """

    #: layer names whose outputs form the initial state (subclasses set this)
    encoder_outputs: tuple = ("encoder_memory", "source_mask")

    def __init__(self, model: keras.Model):
        self.model = model
        src_input = model.get_layer("encoder_inputs").output
        outputs = [self._layer_output(name) for name in self.encoder_outputs]
        self.encoder = keras.Model(src_input, outputs, name=f"{model.name}_encoder")
        self.output_projection = model.get_layer("output_projection")
        self.tgt_embedding = model.get_layer("tgt_embedding")

    def _layer_output(self, name):
        out = self.model.get_layer(name).output
        return out[0] if isinstance(out, (list, tuple)) else out

    @property
    def layers(self) -> list:
        """Every layer the step uses (their variables are what a compiled step reads)."""
        return [self.model]

    def encode(self, src, max_length: int) -> dict:
        """Run the encoder once. Returns the initial decoding state (a dict)."""
        outs = self.encoder(src, training=False)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        state = dict(zip(self.encoder_outputs, outs))
        return self.init_state(state, max_length)

    def init_state(self, state: dict, max_length: int) -> dict:
        return state

    @abc.abstractmethod
    def step(self, token, state: dict, t):
        """One decoding step: `(B,)` tokens at position `t` -> `(logits, state, attention)`."""

    @abc.abstractmethod
    def attention_shapes(self, state: dict, max_length: int) -> dict:
        """The `(L, h, K)` of each attention tensor :meth:`step` returns (a batch row's
        shape), e.g. ``{"cross": (L, h, S)}``; ``{}`` without attention. Lets a compiled
        loop allocate its `(B, T_max, L, h, K)` buffers before the first step."""

    @staticmethod
    def repeat(state: dict, k: int) -> dict:
        """Clone every batch row ``k`` times (row b -> rows b*k .. b*k+k-1), for beams."""
        return keras.tree.map_structure(lambda x: ops.repeat(x, k, axis=0), state)

    @staticmethod
    def reorder(state: dict, indices) -> dict:
        """Gather batch rows: beam `i` continues from row `indices[i]`."""
        return keras.tree.map_structure(lambda x: ops.take(x, indices, axis=0), state)

    def embed_step(self, token):
        """Target embedding of one token per row, `(B,)` -> `(B, E)`, without the layer
        call machinery (decoding's fast path; see :mod:`kerasattn.steps`)."""
        return self.tgt_embedding.call(token)  # E[y]: (B, E)


@dataclasses.dataclass
class ModelConfig:
    """Base of the per-model hyperparameter dataclasses (field defaults = the defaults)."""

    def validate(self) -> None:
        """Raise a `ValueError` naming the first bad field."""
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name == "dropout":
                if not 0.0 <= float(value) < 1.0:
                    raise ValueError(f"{type(self).__name__}: `dropout` must be in [0, 1); "
                                     f"received dropout={value!r}.")
            elif field.type in ("int", int) and (isinstance(value, bool) or
                                                 not isinstance(value, int) or value < 0):
                raise ValueError(f"{type(self).__name__}: `{field.name}` must be an int "
                                 f">= 0; received {field.name}={value!r}.")
            elif field.name == "output_units" and value is not None and (
                    isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{type(self).__name__}: `output_units` must be None or an "
                                 f"int >= 1; received output_units={value!r}.")
        d_model, heads = getattr(self, "d_model", None), getattr(self, "num_heads", None)
        if d_model is not None and heads is not None and (heads < 1 or d_model % heads):
            raise ValueError(f"{type(self).__name__}: `d_model` must be a positive multiple "
                             f"of `num_heads`; received d_model={d_model}, "
                             f"num_heads={heads}.")
        for name in ("embed_dim", "units", "d_model", "d_ff", "attention_units",
                     "max_length"):
            if getattr(self, name, 1) == 0:
                raise ValueError(f"{type(self).__name__}: `{name}` must be >= 1; received "
                                 f"{name}=0.")


def model_inputs():
    """The two `Input`s every model takes: `(B, S)` and `(B, T)` int32 token ids."""
    src = keras.Input(shape=(None,), dtype="int32", name="encoder_inputs")
    tgt = keras.Input(shape=(None,), dtype="int32", name="decoder_inputs")
    return src, tgt


def finish_model(name, src, tgt, logits) -> keras.Model:
    return keras.Model({"encoder_inputs": src, "decoder_inputs": tgt}, logits, name=name)
