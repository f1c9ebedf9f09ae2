"""The model registry: one builder, one config dataclass and one incremental decoder per name.

``build_model(name, src_vocab_size, tgt_vocab_size, **hparams)`` looks the name up here,
validates the hyperparameters against the model's config dataclass and returns a
functional ``keras.Model`` named ``name``. :func:`incremental_decoder` finds the decoder
adapter of a built *or loaded* model from that name.
"""
from __future__ import annotations

import dataclasses

import keras

from kerasattn._env import MODEL_NAMES  # the path of the course, in order

_BUILDERS: dict = {}
_CONFIGS: dict = {}
_ADAPTERS: dict = {}


def register_model(name: str, config_cls, adapter_cls):
    """Decorator registering ``builder(config, src_vocab_size, tgt_vocab_size)``."""
    if name not in MODEL_NAMES:
        raise ValueError(f"register_model: `name` must be one of {MODEL_NAMES}; "
                         f"received name={name!r}.")

    def wrap(builder):
        _BUILDERS[name] = builder
        _CONFIGS[name] = config_cls
        _ADAPTERS[name] = adapter_cls
        return builder

    return wrap


def _check_name(name: str) -> None:
    if name not in _BUILDERS:
        raise ValueError(f"build_model: `name` must be one of {MODEL_NAMES}; "
                         f"received name={name!r}.")


def get_config_class(name: str):
    """The hyperparameter dataclass of model ``name`` (its fields are the defaults)."""
    _check_name(name)
    return _CONFIGS[name]


def make_config(name: str, **hparams):
    """Validate ``hparams`` against model ``name``'s dataclass and return the config."""
    cls = get_config_class(name)
    fields = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(hparams) - fields)
    if unknown:
        raise ValueError(f"build_model({name!r}): unknown hyperparameter(s) {unknown}; "
                         f"expected some of {sorted(fields)}.")
    config = cls(**hparams)
    config.validate()
    return config


def build_model(name: str, src_vocab_size: int, tgt_vocab_size: int,
                **hparams) -> keras.Model:
    """Build one of the course's encoder-decoder models.

    Args:
        name: one of :data:`MODEL_NAMES`.
        src_vocab_size: source vocabulary size (id 0 is `<pad>`).
        tgt_vocab_size: target vocabulary size `V`.
        **hparams: fields of the model's config dataclass (see
            :func:`get_config_class`); anything else raises a `ValueError`.

    Returns:
        A functional `keras.Model` named `name` with inputs
        `{"encoder_inputs": (B, S) int32, "decoder_inputs": (B, T) int32}` and output
        logits `(B, T, V)`.
    """
    _check_name(name)
    for arg, value in (("src_vocab_size", src_vocab_size),
                       ("tgt_vocab_size", tgt_vocab_size)):
        if int(value) < 5:
            raise ValueError(f"build_model: `{arg}` must be >= 5 (4 special tokens and at "
                             f"least one word); received {arg}={value}.")
    config = make_config(name, **hparams)
    return _BUILDERS[name](config, int(src_vocab_size), int(tgt_vocab_size))


def incremental_decoder(model: keras.Model):
    """The incremental-decoding adapter for ``model`` (built here or loaded from .keras).

    The adapter is chosen by ``model.name`` (the registry name the model was built with)
    and fetches the model's layers by name, so it works on a reloaded model too.
    """
    name = getattr(model, "name", None)
    if name not in _ADAPTERS:
        raise ValueError(
            f"incremental_decoder: `model.name` must be one of {MODEL_NAMES} (the name "
            f"build_model gave it); received a model named {name!r}.")
    return _ADAPTERS[name](model)
