"""Data for the course: the built-in corpus, the Tatoeba loader, vocabularies and batches.

Public API::

    from kerasattn.data import (builtin_corpus, generate_corpus, load_tatoeba, Corpus,
                                Vocabulary, make_arrays, batch_iterator, TranslationDataset,
                                normalize, detokenize, fetch_tatoeba, build_tokenizer,
                                load_tokenizer, SubwordTokenizer)

Everything except ``TranslationDataset`` (a ``keras.utils.PyDataset``) works without
importing keras; that one is imported on first use.
"""
from kerasattn.data.batching import (
    INPUT_KEYS,
    LABEL_KEY,
    batch_iterator,
    batch_plan,
    encode_batch,
    make_arrays,
)
from kerasattn.data.corpus import SPLITS, Corpus, crossing_links, is_monotonic
from kerasattn.data.synthetic import DEFAULTS, builtin_corpus, generate_corpus, generate_pair
from kerasattn.data.tatoeba import (
    DEFAULT_URL,
    LICENCE,
    LoadReport,
    TatoebaDownloadError,
    fetch_tatoeba,
    load_tatoeba,
    read_pairs,
    resolve_data,
    tatoeba_url,
)
from kerasattn.data.text import detokenize, normalize, tokenize
from kerasattn.data.tokenizers import TOKENIZERS, SubwordTokenizer, build_tokenizer, load_tokenizer
from kerasattn.data.vocab import SPECIAL_TOKENS, Vocabulary

__all__ = [
    "Corpus", "SPLITS", "crossing_links", "is_monotonic",
    "builtin_corpus", "generate_corpus", "generate_pair", "DEFAULTS",
    "load_tatoeba", "read_pairs", "LoadReport", "TatoebaDownloadError", "DEFAULT_URL",
    "fetch_tatoeba", "tatoeba_url", "resolve_data", "LICENCE",
    "build_tokenizer", "load_tokenizer", "SubwordTokenizer", "TOKENIZERS",
    "normalize", "tokenize", "detokenize",
    "Vocabulary", "SPECIAL_TOKENS",
    "make_arrays", "encode_batch", "batch_plan", "batch_iterator", "TranslationDataset",
    "INPUT_KEYS", "LABEL_KEY",
]


def __getattr__(name):
    if name == "TranslationDataset":
        from kerasattn.data.dataset import TranslationDataset

        return TranslationDataset
    raise AttributeError(f"module 'kerasattn.data' has no attribute {name!r}")
