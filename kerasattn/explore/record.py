"""What the attention explorer shows, read from the kit's one translation path.

:func:`collect` decodes one sentence with :meth:`kerasattn.inference.Translator.decode`
(``attention=True``; with a beam, ``trace=True`` too) and keeps what the decoder used:
the cross-attention of every output step and the masked self-attention of the decoders
that have it, for the translation and for every hypothesis a beam kept. The encoder's
self-attention is not part of decoding: :func:`encoder_self_attention` reads it from the
model's own encoder blocks, each called on the input the model gives it, with
``return_attention_scores=True``.

Shapes (``T`` output steps, ``S`` source tokens, ``L`` layers, ``h`` heads):

- ``cross``: ``(T, L, h, S)``, row ``t`` is the attention of the step that produced output
  token ``t`` (the recurrent decoders: ``L = 1``; Bahdanau's additive score: ``h = 1``);
- ``self``: ``(T, L, h, T)``, the decoder inputs ``<bos>, y_1 .. y_{T-1}`` as keys, zero
  above the diagonal (a step sees only earlier positions);
- ``encoder``: ``(L, h, S, S)``.
"""
from __future__ import annotations

import dataclasses
import weakref

import numpy as np

__all__ = ["AttentionRecord", "collect", "encoder_self_attention", "encoder_blocks"]


@dataclasses.dataclass
class AttentionRecord:
    """One sentence as the explorer shows it.

    Attributes:
        model: the model's registry name.
        backend: the Keras backend that decoded it.
        source: the source as the model read it (normalised).
        source_tokens: the source's tokens (words, or subword pieces).
        source_subword, target_subword: each side's tokens are SentencePiece pieces
            (``▁`` starts a word).
        unknown: indices of source tokens the model reads as ``<unk>``.
        hypotheses: the translation first, then (beam search) the other finished
            hypotheses, best first: :class:`~kerasattn.inference.Translation` objects whose
            ``attention`` holds ``cross`` / ``self`` as above (None for ``seq2seq``).
        steps: beam search: per output step, the hypotheses the beam kept (dicts
            ``target_tokens``, ``log_prob``, ``score``, ``finished``); None for greedy.
        beam: the beam size (1: greedy).
        encoder: the encoder's self-attention ``(L, h, S, S)``, None for the models
            without encoder self-attention.
        coverage_in_score: the decoder feeds its coverage vector (the attention summed
            over the earlier steps) into its score (``coverage=True``).
    """

    model: str
    backend: str
    source: str
    source_tokens: list
    source_subword: bool
    target_subword: bool
    unknown: list
    hypotheses: list
    steps: list | None
    beam: int
    encoder: np.ndarray | None
    coverage_in_score: bool

    @property
    def translation(self):
        """The translation (the best hypothesis)."""
        return self.hypotheses[0]


def collect(translator, sentence: str, *, beam: int = 1, **decode_kwargs) -> AttentionRecord:
    """Decode ``sentence`` and gather every attention weight the explorer shows.

    Args:
        translator: a :class:`~kerasattn.inference.Translator`.
        sentence: the raw source sentence.
        beam: 1 for greedy decoding, ``k > 1`` for beam search (the page then shows the
            beam's hypotheses at each step).
        **decode_kwargs: passed to :meth:`~kerasattn.inference.Translator.decode`
            (``max_length``, ``normalized``, ``alpha``...).

    Returns:
        An :class:`AttentionRecord`.

    Raises:
        ValueError: ``sentence`` is not a non-empty string.
    """
    import keras

    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"sentence: expected a non-empty string; received {sentence!r}")
    kwargs = dict(decode_kwargs, attention=True)
    if beam > 1:
        kwargs["trace"] = True
    t = translator.decode([sentence], beam=beam, **kwargs)[0]
    if not t.source_tokens:
        raise ValueError(f"sentence: {sentence!r} has no tokens after normalisation")
    src_vocab, tgt_vocab = translator.src_vocab, translator.tgt_vocab
    ids = src_vocab.encode(t.source)[:len(t.source_tokens)]
    unk = _unk_id(src_vocab)
    model = translator.model
    return AttentionRecord(
        model=translator.name, backend=keras.backend.backend(), source=t.source,
        source_tokens=list(t.source_tokens),
        source_subword=hasattr(src_vocab, "pieces"),
        target_subword=hasattr(tgt_vocab, "pieces"),
        unknown=[i for i, x in enumerate(ids) if x == unk],
        hypotheses=t.hypotheses or [t], steps=t.steps, beam=int(beam),
        encoder=encoder_self_attention(model, ids),
        coverage_in_score=any(getattr(layer, "coverage", None) is True
                              for layer in model._flatten_layers()))


def _unk_id(vocab) -> int:
    try:
        return int(vocab.token_to_id("<unk>"))
    except (KeyError, ValueError, AttributeError):
        return 1


def encoder_blocks(model) -> list:
    """The model's Transformer encoder blocks (``encoder_block_0``, ``_1``...), in order."""
    from kerasattn.layers import TransformerEncoderBlock

    blocks = [layer for layer in model._flatten_layers()
              if isinstance(layer, TransformerEncoderBlock)
              and layer.name.startswith("encoder_block_")]
    return sorted(blocks, key=lambda b: int(b.name.rsplit("_", 1)[1]))


_READERS = weakref.WeakKeyDictionary()


def _block_inputs(model, blocks):
    """A model from the source ids to what the model feeds each encoder block: its input
    ``x`` and its padding mask (built once per model)."""
    import keras

    if model not in _READERS:
        outputs = []
        for block in blocks:
            arguments = block._inbound_nodes[0].arguments   # the block's call in the model
            outputs += [arguments.args[0], arguments.kwargs["padding_mask"]]
        _READERS[model] = keras.Model(model.get_layer("encoder_inputs").output, outputs)
    return _READERS[model]


def encoder_self_attention(model, source_ids) -> np.ndarray | None:
    """The encoder's self-attention weights on one source, ``(L, h, S, S)``.

    Each block ``l`` is called on the very input the model gives it (read with a small
    ``keras.Model`` over the model's own graph) with ``return_attention_scores=True``;
    row ``i`` of head ``k`` is how source token ``i`` attends to every source token.

    Args:
        model: one of the kit's models (built or loaded).
        source_ids: the source's token ids, no padding.

    Returns:
        float32 ``(L, h, S, S)``, or None when the model has no encoder self-attention.
    """
    import keras

    blocks = encoder_blocks(model)
    if not blocks:
        return None
    src = np.asarray([list(source_ids)], dtype=np.int32)            # (1, S)
    inputs = _block_inputs(model, blocks)(src, training=False)
    weights = []
    for b, block in enumerate(blocks):
        x, mask = inputs[2 * b], inputs[2 * b + 1]
        _, w = block(x, padding_mask=mask, return_attention_scores=True, training=False)
        weights.append(np.asarray(keras.ops.convert_to_numpy(w), dtype=np.float32)[0])
    return np.stack(weights)                                          # (L, h, S, S)
