"""The Transformer a reader of the keras-io English-to-Spanish example writes: the baseline
the kit is measured against on real data.

Nothing of ``kerasattn`` is on its path from text to translation: its own word
vocabulary (lower case, punctuation as words, the 15,000 most frequent words), every
sequence padded or cut to one fixed width, NumPy arrays handed to ``model.fit`` (batches of
64, shuffled), keras-hub's ``TokenAndPositionEmbedding``, two ``TransformerEncoder`` and two
``TransformerDecoder`` layers (d_model 128, 4 heads, feed-forward 256, dropout 0.1), AdamW at
1e-3, a cross-entropy that ignores padding, a wall-clock budget checked after every batch,
and greedy decoding that re-runs the whole model on the prefix (batched, as a reader does
once single sentences are too slow).

``benchmarks/bench_real_data.py FILE --models keras_io ...`` trains it beside the kit on the
same split of FILE and scores its translations against the same references. Run alone::

    python benchmarks/keras_io_script.py FILE [--budget SECONDS] [--width 20]

prints its BLEU on a 95 / 5 split of FILE (sacrebleu, one reference per source).
"""
from __future__ import annotations

import argparse
import collections
import re
import time

import numpy as np

PAD, UNK, START, END = 0, 1, 2, 3
SPECIAL = ["", "[UNK]", "[start]", "[end]"]
_WORDS = re.compile(r"\w+|[^\w\s]")


def words(text: str) -> list[str]:
    """Lower case, each run of letters/digits and each punctuation mark a word."""
    return _WORDS.findall(text.lower())


class WordVocabulary:
    """The ``max_tokens`` most frequent words of ``texts`` (ids from 4; 1 = unknown)."""

    def __init__(self, texts, max_tokens: int = 15000):
        counts = collections.Counter(w for t in texts for w in words(t))
        self.itos = SPECIAL + [w for w, _ in counts.most_common(max_tokens - len(SPECIAL))]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    def __len__(self):
        return len(self.itos)

    def ids(self, text: str) -> list[int]:
        return [self.stoi.get(w, UNK) for w in words(text)]


def vectorize(pairs, src_vocab, tgt_vocab, width: int):
    """``encoder_inputs`` (N, width), ``decoder_inputs`` = [start] y, ``labels`` = y [end],
    each padded or cut to ``width``."""
    n = len(pairs)
    enc = np.zeros((n, width), "int32")
    dec = np.zeros((n, width), "int32")
    lab = np.zeros((n, width), "int32")
    for i, (s, t) in enumerate(pairs):
        x = src_vocab.ids(s)[:width]
        y = tgt_vocab.ids(t)[:width - 1]
        enc[i, :len(x)] = x
        dec[i, :len(y) + 1] = [START] + y
        lab[i, :len(y) + 1] = y + [END]
    return {"encoder_inputs": enc, "decoder_inputs": dec}, lab


def build(src_size: int, tgt_size: int, width: int, d_model=128, heads=4, ffn=256,
          dropout=0.1):
    """keras-hub's encoder-decoder, as in the keras-io example."""
    import keras
    import keras_hub

    src = keras.Input(shape=(None,), dtype="int32", name="encoder_inputs")
    tgt = keras.Input(shape=(None,), dtype="int32", name="decoder_inputs")
    x = keras_hub.layers.TokenAndPositionEmbedding(src_size, width, d_model,
                                                   mask_zero=True)(src)
    for _ in range(2):
        x = keras_hub.layers.TransformerEncoder(ffn, heads, dropout=dropout)(x)
    y = keras_hub.layers.TokenAndPositionEmbedding(tgt_size, width, d_model,
                                                   mask_zero=True)(tgt)
    for _ in range(2):
        y = keras_hub.layers.TransformerDecoder(ffn, heads, dropout=dropout)(y, x)
    logits = keras.layers.Dense(tgt_size)(y)
    model = keras.Model({"encoder_inputs": src, "decoder_inputs": tgt}, logits,
                        name="keras_io")
    model.compile(optimizer=keras.optimizers.AdamW(1e-3),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                  ignore_class=PAD))
    return model


def budget_callback(seconds: float):
    """Stop ``fit`` once ``seconds`` of training have passed (checked after each batch);
    counts the batches and target tokens each epoch ran."""
    import keras

    class Budget(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.start, self.epoch_seconds, self.batches = time.perf_counter(), [], []

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch_start = time.perf_counter()
            self.batches.append(0)

        def on_train_batch_end(self, batch, logs=None):
            self.batches[-1] = batch + 1
            if time.perf_counter() - self.start >= seconds:
                self.model.stop_training = True

        def on_epoch_end(self, epoch, logs=None):
            self.epoch_seconds.append(time.perf_counter() - self.epoch_start)
            if time.perf_counter() - self.start >= seconds:
                self.model.stop_training = True

    return Budget()


def greedy(model, sources, src_vocab, tgt_vocab, width: int, batch_size: int = 128):
    """Re-run the model on the prefix, one position at a time, until [end] or ``width``."""
    x, _ = vectorize([(s, "") for s in sources], src_vocab, tgt_vocab, width)
    out = []
    for k in range(0, len(sources), batch_size):
        enc = x["encoder_inputs"][k:k + batch_size]
        dec = np.zeros_like(enc)
        dec[:, 0] = START
        done = np.zeros(len(enc), bool)
        for t in range(width - 1):
            logits = model.predict_on_batch({"encoder_inputs": enc, "decoder_inputs": dec})
            nxt = np.asarray(logits)[:, t].argmax(-1)
            nxt[done] = PAD
            dec[:, t + 1] = nxt
            done |= nxt == END
            if done.all():
                break
        for row in dec[:, 1:]:
            ids = [int(i) for i in row]
            ids = ids[:ids.index(END)] if END in ids else ids
            out.append(" ".join(tgt_vocab.itos[i] for i in ids if i != PAD))
    return out


def train_and_translate(train_pairs, valid_pairs, test_sources, budget: float, seed: int = 0,
                        width: int = 20, tiny: bool = False):
    """Train the script on ``train_pairs`` for ``budget`` seconds and translate
    ``test_sources``.

    Returns:
        ``(translations, stats)``: one lower-case, space-separated translation per source;
        ``stats`` has ``epochs``, ``train_seconds``, ``decode_seconds``, ``epoch_seconds``,
        ``tokens_trained``, ``tokens_per_second``, ``params``, ``width``, ``tokenizer``,
        ``src_vocab``, ``tgt_vocab`` (sizes).
    """
    import keras

    keras.utils.set_random_seed(seed)
    src_vocab = WordVocabulary([s for s, _ in train_pairs])
    tgt_vocab = WordVocabulary([t for _, t in train_pairs])
    x, y = vectorize(train_pairs, src_vocab, tgt_vocab, width)
    vx, vy = vectorize(valid_pairs, src_vocab, tgt_vocab, width)
    sizes = dict(d_model=16, heads=2, ffn=32) if tiny else {}
    model = build(len(src_vocab), len(tgt_vocab), width, **sizes)
    budget_cb = budget_callback(budget)
    model.fit(x, y, batch_size=64, epochs=1000, shuffle=True, validation_data=(vx, vy),
              callbacks=[budget_cb], verbose=0)
    # target tokens trained: the pairs of the batches run (the epoch the budget cuts runs
    # a random sample of them), counted at the mean target tokens per pair
    per_pair = float((y != PAD).sum()) / len(y)
    pairs_run = sum(min(b * 64, len(y)) for b in budget_cb.batches)
    seconds = float(sum(budget_cb.epoch_seconds))
    tokens = per_pair * pairs_run
    start = time.perf_counter()
    hyps = greedy(model, test_sources, src_vocab, tgt_vocab, width)
    return hyps, dict(epochs=len(budget_cb.epoch_seconds), train_seconds=seconds,
                      decode_seconds=time.perf_counter() - start, tokenizer="words (own)",
                      src_vocab=len(src_vocab), tgt_vocab=len(tgt_vocab),
                      epoch_seconds=[round(s, 1) for s in budget_cb.epoch_seconds],
                      tokens_trained=int(tokens),
                      tokens_per_second=tokens / seconds if seconds > 0 else None,
                      params=int(model.count_params()), width=width)


def main(argv=None) -> int:
    import sacrebleu

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("file", help="tab-separated: source, target (a Tatoeba file)")
    p.add_argument("--budget", type=float, default=240.0)
    p.add_argument("--width", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    with open(args.file, encoding="utf-8") as f:
        pairs = [tuple(line.rstrip("\n").split("\t")[:2]) for line in f if "\t" in line]
    rng = np.random.default_rng(args.seed)
    pairs = [pairs[i] for i in rng.permutation(len(pairs))]
    n_test = len(pairs) // 20
    test, valid, train = pairs[:n_test], pairs[n_test:2 * n_test], pairs[2 * n_test:]
    hyps, stats = train_and_translate(train, valid, [s for s, _ in test], args.budget,
                                      args.seed, args.width)
    refs = [" ".join(words(t)) for _, t in test]
    bleu = sacrebleu.corpus_bleu(hyps, [refs]).score
    print(f"keras-io script: BLEU {bleu:.1f} on {len(test)} test pairs; {stats['epochs']} "
          f"epochs, {stats['tokens_per_second'] or 0:,.0f} target tokens/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
