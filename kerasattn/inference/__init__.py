"""The inference path: the one way to load a trained model and translate with it.

:class:`Translator` loads and saves the kit's checkpoint directory (``model.keras``,
``src_vocab.json``, ``tgt_vocab.json``, ``meta.json``), translates a list of sentences or a
file (greedy or beam search) and returns the attention weights the decoder used
(:meth:`Translator.decode`). Searching itself (greedy, beam, the cached single-step
decoders) is :mod:`kerasattn.decoding`.
"""
from kerasattn.inference.translator import (
    CHECKPOINT_FILES,
    META_FILE,
    MODEL_FILE,
    SRC_VOCAB_FILE,
    TGT_VOCAB_FILE,
    Translation,
    Translator,
    output_cap,
    tokens_of,
)

__all__ = ["Translator", "Translation", "output_cap", "tokens_of", "CHECKPOINT_FILES",
           "MODEL_FILE", "SRC_VOCAB_FILE", "TGT_VOCAB_FILE", "META_FILE"]
