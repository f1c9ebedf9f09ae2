"""What the debugging exercises 14, 15 and 17 look like from the outside.

Each exercise ends with ``if __name__ == "__main__":`` calling one of these functions on the
student's own code: it trains a tiny model for a few seconds on a CPU (fixed seeds, tiny
shapes) and prints what a practitioner would look at, an attention heat-map, a training log,
the model's outputs. Nothing here knows where the bugs are: the same run shows the symptom
with the broken code and shows a healthy model once the code is repaired. Each function also
returns its measurements as a dict, which the tests use to check both.

* :func:`uniform_attention` (exercise 14): an attention layer trained to find one source
  word per decoder step; its heat-map, loss by epoch and how far its weight moved.
* :func:`the_the_the` (exercise 15): a tiny attention translator trained with scheduled
  sampling; its training log and its greedy translations.
* :func:`look_ahead_leak` (exercise 17): a one-layer decoder trained to continue a count;
  its loss, and its accuracy when it reads the reference (teacher forcing) against when it
  reads its own outputs (free running).
"""
from __future__ import annotations

import re

import numpy as np

__all__ = ["uniform_attention", "the_the_the", "look_ahead_leak"]

_GATE = ("still starts with `raise NotImplementedError`. Delete the `raise` statement of every "
         "marked region in this file (the code under it is the code to debug), then run the "
         "file again to see the symptom.")


def _gated(run):
    """Run ``run()``; if the exercise's ``raise`` statement is still there, say so and return.

    On torch, ``run()`` has one intra-op thread: the tensors are tiny, and more threads
    only wait for each other (and for whatever else keeps the cores busy).
    """
    from kerasattn import backend_utils

    try:
        with backend_utils.torch_threads(1):
            return run()
    except NotImplementedError as exc:
        if "Delete this 2-line raise" not in str(exc) and "Delete this raise" not in str(exc):
            raise
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))  # Keras's bold markers
        found = re.search(r"([A-Za-z_][\w.]*): (?:one bug|two bugs)", text)
        where = found.group(1) if found else "the exercise"
        print(f"{where}: its marked region {_GATE}")
        return {"not_implemented": where}


def _say(verbose: bool, *lines: str) -> None:
    if verbose:
        for line in lines:
            print(line, flush=True)


def _numbers(values, fmt: str = "{:.3f}") -> str:
    return " ".join(fmt.format(float(v)) for v in values)


def _to_numpy(x) -> np.ndarray:
    from keras import ops

    return np.asarray(ops.convert_to_numpy(x))


# ---------------------------------------------------------------------------------------
# Exercise 14: an attention layer that should learn where to look
# ---------------------------------------------------------------------------------------
SOURCE_14 = ["le", "chat", "noir", "dort", ".", "<pad>"]
TARGET_14 = ["the", "black", "cat", "sleeps"]
ALIGN_14 = [0, 2, 1, 3]  # the -> le, black -> noir, cat -> chat, sleeps -> dort


def _alignment_data(rng, n: int, d: int):
    """Random sentences of encoder states; each decoder step looks for one source word.

    The decoder state at step t is a noisy copy of the encoder state of the source word it
    should attend to; the target of the context is that encoder state.
    """
    s, t = len(SOURCE_14), len(TARGET_14)
    memory = rng.normal(size=(n, s, d)).astype("float32")
    lengths = rng.integers(t + 1, s + 1, size=n)  # 5 or 6 real words of 6
    mask = np.arange(s)[None, :] < lengths[:, None]
    align = np.stack([rng.choice(k, size=t, replace=False) for k in lengths])
    target = np.take_along_axis(memory, align[:, :, None], axis=1)
    query = (target + 0.3 * rng.normal(size=target.shape)).astype("float32")
    return query, memory, mask, target


def _right_words(weights: np.ndarray, align) -> int:
    """How many rows put strictly more weight on their aligned column than on any other."""
    right = 0
    for row, a in zip(weights, align):
        others = np.delete(row, a)
        right += int(row[a] > others.max() + 1e-3)
    return right


def uniform_attention(layer_class, epochs: int = 8, png=None, verbose: bool = True,
                      seed: int = 0, lr: float = 0.1) -> dict:
    """Train an attention layer to find one source word per step; show what it learnt.

    The model is the layer alone: its context must reproduce the encoder state of the word
    each decoder state points to (mean squared error, Adam), on 128 random sentences of 5 or
    6 words (states of size 16). Afterwards it attends over "le chat noir dort ." for the
    four decoder steps of "the black cat sleeps".

    Args:
        layer_class: the attention layer; ``layer_class()(query, memory, memory_mask=mask)``
            returns ``(context, weights)``.
        epochs: passes over the 128 sentences (4 steps each).
        png: also draw the heat-map into this PNG file.
        verbose: print the report.
        seed: seed of the data and the weights.
        lr: Adam's learning rate.

    Returns:
        ``losses`` (one per epoch), ``weights`` (the heat-map, ``(4, 6)``), ``row_sums``,
        ``w_change`` (the largest change of any entry of the layer's weights),
        ``row_spread`` (the largest max - min of a heat-map row over its real words) and
        ``right_words`` (how many of the 4 steps put most weight on the right word).
    """
    def run():
        import keras

        keras.utils.set_random_seed(seed)
        rng = np.random.default_rng(seed)
        d = 16
        query, memory, mask, target = _alignment_data(rng, 128, d)
        layer = layer_class()
        layer(query[:2], memory[:2], memory_mask=mask[:2])  # build it eagerly

        class Probe(keras.Model):
            def __init__(self):
                super().__init__()
                self.attention = layer

            def call(self, inputs):
                return self.attention(inputs[0], inputs[1], memory_mask=inputs[2])[0]

        model = Probe()
        before = [_to_numpy(w).copy() for w in layer.trainable_weights]
        model.compile(optimizer=keras.optimizers.Adam(lr), loss="mse")
        history = model.fit([query, memory, mask], target, batch_size=32, epochs=epochs,
                            shuffle=False, verbose=0)
        after = [_to_numpy(w) for w in layer.trainable_weights]
        change = max((float(np.abs(a - b).max()) for a, b in zip(after, before)), default=0.0)

        show = np.random.default_rng(seed + 1)
        h = show.normal(size=(1, len(SOURCE_14), d)).astype("float32")
        m = np.array([[w != "<pad>" for w in SOURCE_14]])
        q = (h[:, ALIGN_14] + 0.3 * show.normal(size=(1, len(ALIGN_14), d))).astype("float32")
        weights = _to_numpy(layer(q, h, memory_mask=m)[1])[0]
        real = m[0]
        out = {"losses": [float(v) for v in history.history["loss"]], "weights": weights,
               "row_sums": weights.sum(-1), "w_change": change,
               "row_spread": float(np.ptp(weights[:, real], axis=-1).max()),
               "right_words": _right_words(weights, ALIGN_14)}
        if verbose:
            from kerasattn.course.printing import format_attention

            print(f"Training the layer to find one source word per decoder step "
                  f"({epochs} epochs, Adam):")
            print(f"  loss by epoch: {_numbers(out['losses'])}")
            print(f"  largest change of any weight during training: {change:.6f}")
            print()
            print(format_attention(weights, SOURCE_14, TARGET_14,
                                   label="after training"))
            print(f"  row sums: {_numbers(out['row_sums'], '{:.2f}')}")
            print(f"  rows whose largest weight is on their word (le, noir, chat, dort): "
                  f"{out['right_words']} of {len(TARGET_14)}")
        if png is not None:
            from kerasattn import plots

            plots.attention_heatmap(weights, SOURCE_14, TARGET_14, path=png,
                                    title="attention after training")
            _say(verbose, f"  heat-map saved to {png}")
        return out

    return _gated(run)


# ---------------------------------------------------------------------------------------
# Exercise 15: a tiny attention translator trained with scheduled sampling
# ---------------------------------------------------------------------------------------
# Word-by-word French -> English: "le petit chat voit le chien" -> "the small cat sees the dog".
SOURCE_15 = ["<pad>", "le", "chat", "chien", "oiseau", "poisson", "petit", "grand", "voit",
             "mange"]
TARGET_15 = ["<pad>", "<bos>", "<eos>", "the", "cat", "dog", "bird", "fish", "small", "big",
             "sees", "eats"]
_BOS_15, _EOS_15 = 1, 2


def _pairs_15(n: int = 96):
    """``n`` sentences "le [petit|grand] N V [le [petit|grand] N]" and their translations.

    Returns:
        `(x, y)`: source ids `(n, 7)` and target ids `(n, 8)` (the words, ``<eos>``, then
        ``<pad>`` = 0).
    """
    rng = np.random.default_rng(15)  # the same sentences for every seed

    def noun_phrase():
        adjective = [] if rng.uniform() < 1 / 3 else [int(rng.integers(6, 8))]
        return [1] + adjective + [int(rng.integers(2, 6))]

    x, y = np.zeros((n, 7), "int32"), np.zeros((n, 8), "int32")
    for i in range(n):
        words = noun_phrase() + [int(rng.integers(8, 10))]
        if rng.uniform() < 0.75:
            words += noun_phrase()
        x[i, :len(words)] = words
        y[i, :len(words)] = [k + 2 for k in words]  # the same order, one word for one
        y[i, len(words)] = _EOS_15
    return x, y


def _translator_15(make_initializer, attention_scores, next_decoder_inputs, d: int,
                   seed: int):
    """A one-layer attention RNN (keys = source embeddings + positions) as a Keras model."""
    import keras
    from keras import ops

    vs, vt, length = len(SOURCE_15), len(TARGET_15), 7

    class Translator(keras.Model):
        def __init__(self):
            super().__init__()
            shapes = {"src_emb": (vs, d), "pos": (length, d), "tgt_emb": (vt, d),
                      "W": (2 * d, d), "U": (d, d), "W_o": (2 * d, vt)}
            for k, (name, shape) in enumerate(shapes.items()):
                init = keras.initializers.get(make_initializer(seed=seed + k))
                setattr(self, name, self.add_weight(name=name, shape=shape,
                                                    initializer=init))
            self.b = self.add_weight(name="b", shape=(d,), initializer="zeros")
            self.b_o = self.add_weight(name="b_o", shape=(vt,), initializer="zeros")

        def decode(self, x, y, ratio=None, draws=None):
            """Logits `(n, T, V)`; reads its own argmax when ``ratio`` is None."""
            n, steps = y.shape
            keys = ops.take(self.src_emb, x, axis=0) + self.pos  # (n, S, d)
            real = ops.not_equal(x, 0)  # (n, S)
            s = ops.zeros((n, d))
            y_prev = ops.full((n,), _BOS_15, "int32")
            out = []
            for t in range(steps):
                scores = ops.where(real, attention_scores(s, keys), -1e9)  # (n, S)
                alpha = ops.softmax(scores, axis=-1)
                c = ops.einsum("bs,bsd->bd", alpha, keys)  # (n, d)
                inp = ops.concatenate([ops.take(self.tgt_emb, y_prev, axis=0), c], axis=-1)
                s = ops.tanh(ops.matmul(inp, self.W) + ops.matmul(s, self.U) + self.b)
                logits = ops.matmul(ops.concatenate([s, c], axis=-1), self.W_o) + self.b_o
                out.append(logits)
                if ratio is None:
                    y_prev = ops.cast(ops.argmax(logits, axis=-1), "int32")
                else:
                    y_prev = ops.cast(next_decoder_inputs(y[:, t], logits, ratio,
                                                          draws[:, t]), "int32")
            return ops.stack(out, axis=1)

        def call(self, inputs):
            x, y, ratio, draws = inputs
            return self.decode(x, y, ratio[0], draws)

    return Translator()


def _words(ids, vocabulary, stop) -> str:
    words = []
    for i in ids:
        if int(i) == 0:
            break
        words.append(vocabulary[int(i)])
        if int(i) == stop:
            break
    return " ".join(words)


def _stutters(ids) -> bool:
    """Whether a translation says a word twice in a row (no reference sentence does)."""
    words = _words(ids, TARGET_15, _EOS_15).split()
    return any(a == b for a, b in zip(words, words[1:]))


def the_the_the(make_initializer, attention_scores, teacher_forcing_ratio,
                next_decoder_inputs, steps: int = 60, verbose: bool = True, seed: int = 0,
                d: int = 32, lr: float = 0.02) -> dict:
    """Train a tiny attention translator with scheduled sampling; show its translations.

    The corpus: 96 French sentences such as "le petit chat voit le chien" and their
    word-by-word English translations ("the small cat sees the dog"). The translator: a
    recurrent decoder of width ``d`` with dot-product attention over the source embeddings
    (plus positions), every weight matrix drawn by ``make_initializer``. At each of
    ``steps`` Adam steps (all 96 sentences) the decoder's next inputs are chosen by
    ``next_decoder_inputs`` with the ratio ``teacher_forcing_ratio(step, steps, "linear",
    min_ratio=0.25)`` and fresh uniform draws. Then it translates the 96 sentences
    greedily, reading its own outputs.

    Args:
        make_initializer: ``make_initializer(seed)`` gives a Keras initializer.
        attention_scores: ``attention_scores(s_prev (B, d), keys (B, S, d)) -> (B, S)``.
        teacher_forcing_ratio: ``teacher_forcing_ratio(step, decay_steps, schedule,
            min_ratio=...)``.
        next_decoder_inputs: ``next_decoder_inputs(reference (B,), logits (B, V), ratio,
            draws (B,)) -> (B,)`` tokens.
        steps: Adam steps.
        verbose: print the report.
        seed: seed of the weights and the draws.
        d: width of the embeddings and of the decoder state.
        lr: Adam's learning rate.

    Returns:
        ``losses`` and ``ratios`` (one per step), ``outputs`` (the greedy translations as
        text), ``accuracy`` (share of the reference's tokens the greedy translation has at
        the same place), ``stutter`` (share of translations that say a word twice in a row,
        which no reference does), ``different`` (how many different translations) and
        ``sources`` (how many different source sentences).
    """
    def run():
        import keras

        keras.utils.set_random_seed(seed)
        rng = np.random.default_rng(seed)
        x, y = _pairs_15()
        n, length = y.shape
        model = _translator_15(make_initializer, attention_scores, next_decoder_inputs,
                               d=d, seed=100 + seed)
        model.compile(optimizer=keras.optimizers.Adam(lr),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                      ignore_class=0))
        losses, ratios = [], []
        for step in range(steps):
            ratio = float(teacher_forcing_ratio(step, steps, "linear", min_ratio=0.25))
            draws = rng.uniform(size=(n, length)).astype("float32")
            loss = model.train_on_batch([x, y, np.full((n,), ratio, "float32"), draws], y)
            losses.append(float(np.asarray(loss).reshape(-1)[0]))
            ratios.append(ratio)
        greedy = _to_numpy(keras.ops.argmax(model.decode(x, y), axis=-1)).astype(int)
        real = y != 0
        outputs = [_words(row, TARGET_15, _EOS_15) for row in greedy]
        sources = {tuple(row) for row in x}
        out = {"losses": losses, "ratios": ratios, "outputs": outputs,
               "accuracy": float((greedy == y)[real].mean()),
               "stutter": float(np.mean([_stutters(row) for row in greedy])),
               "different": len(set(outputs)), "sources": len(sources)}
        if verbose:
            print(f"Training the translator ({steps} Adam steps on {n} sentences):")
            print("   step  teacher forcing   loss")
            for step in sorted({0, *range(9, steps, 10), steps - 1}):
                print(f"  {step + 1:5d}  {ratios[step]:15.2f}  {losses[step]:6.3f}")
            print(f"  (a uniform guess over the {len(TARGET_15) - 2} words it can write "
                  f"costs ln {len(TARGET_15) - 2} = {np.log(len(TARGET_15) - 2):.2f})")
            print()
            print("Greedy translations:")
            for i in range(4):
                print(f"  {_words(x[i], SOURCE_15, None)}")
                print(f"    model:    {outputs[i]}")
                print(f"    expected: {_words(y[i], TARGET_15, _EOS_15)}")
            print(f"  right words: {out['accuracy']:.0%}")
            print(f"  translations that say a word twice in a row: {out['stutter']:.0%}")
            print(f"  different translations: {out['different']}, for {out['sources']} "
                  f"different sentences")
        return out

    return _gated(run)


# ---------------------------------------------------------------------------------------
# Exercise 17: a one-layer decoder trained to continue a count
# ---------------------------------------------------------------------------------------
WORDS_17 = ["<pad>", "<unk>", "<bos>", "<eos>", "one", "two", "three", "four", "five", "six",
            "seven", "eight", "nine"]
_BOS_17, _EOS_17 = 2, 3
_LENGTH_17 = 4


def _counts_17():
    """Six sentences of four words counting up: "one two three four", ..., "six ... nine"."""
    return np.array([[4 + a + k for k in range(_LENGTH_17)] for a in range(6)], dtype="int32")


def _text_17(ids) -> str:
    words = []
    for i in ids:
        words.append(WORDS_17[int(i)])
        if int(i) in (_EOS_17, 0):
            break
    return " ".join(words)


def _free_running_17(decoder, targets):
    """Greedy decoding: ``<bos>`` and each sentence's first word, then the model's own words.

    Returns:
        `(N, L)` int: the word predicted after the first word, and so on up to ``<eos>``.
    """
    from keras import ops

    n, length = targets.shape
    tokens = np.zeros((n, length + 1), dtype="int32")  # the decoder's input, padded with 0
    tokens[:, 0], tokens[:, 1] = _BOS_17, targets[:, 0]
    generated = []
    for t in range(1, length + 1):
        logits = decoder(ops.convert_to_tensor(tokens))
        word = _to_numpy(ops.argmax(logits[:, t], axis=-1)).astype("int32")
        generated.append(word)
        if t < length:
            tokens[:, t + 1] = word
    return np.stack(generated, axis=1)


def look_ahead_leak(make_teacher_forcing_arrays, decoder_class, epochs: int = 60,
                    verbose: bool = True, seed: int = 0) -> dict:
    """Train a one-layer decoder to continue a count; compare its two accuracies.

    The data are six sentences counting up ("three four five six"). The arrays of
    ``make_teacher_forcing_arrays`` train ``decoder_class(13, d_model=16, num_heads=2)``
    (cross-entropy over the non-padding labels, Adam). Then two measurements over the
    words after the first one:

    * teacher-forced accuracy: the decoder reads the training arrays, as in training;
    * free-running accuracy: the decoder reads ``<bos>`` and the first word of each
      sentence, then its own previous outputs, as when it is used (greedy decoding).

    Args:
        make_teacher_forcing_arrays: ``(targets (N, L)) -> (decoder_inputs, labels)``, both
            `(N, L + 1)`.
        decoder_class: ``decoder_class(vocab_size, d_model=..., num_heads=...)`` maps
            decoder inputs `(N, T)` to logits `(N, T, V)`.
        epochs: Adam steps (one batch of the six sentences each).
        verbose: print the report.
        seed: seed of the weights.

    Returns:
        ``losses`` (one per epoch), ``teacher_forced`` and ``free_running`` (accuracies
        over the words after the first) and ``outputs`` (the free-running continuations
        as text).
    """
    def run():
        import keras
        from keras import ops

        keras.utils.set_random_seed(seed)
        targets = _counts_17()
        decoder_inputs, labels = (_to_numpy(a).astype("int32") for a in
                                  make_teacher_forcing_arrays(targets, bos_id=_BOS_17,
                                                              eos_id=_EOS_17))
        decoder = decoder_class(len(WORDS_17), d_model=16, num_heads=2)

        class Model(keras.Model):
            def __init__(self):
                super().__init__()
                self.decoder = decoder

            def call(self, inputs):
                return self.decoder(inputs)

        model = Model()
        model(ops.convert_to_tensor(decoder_inputs))  # build on concrete shapes
        model.compile(optimizer=keras.optimizers.Adam(0.02),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                      ignore_class=0))
        history = model.fit(decoder_inputs, labels, batch_size=len(targets), epochs=epochs,
                            shuffle=False, verbose=0)
        losses = [float(v) for v in history.history["loss"]]
        n, length = targets.shape
        reference = np.concatenate([targets[:, 1:], np.full((n, 1), _EOS_17)], axis=1)
        forced = _to_numpy(ops.argmax(decoder(ops.convert_to_tensor(decoder_inputs)),
                                      axis=-1))[:, 1:length + 1]
        free = _free_running_17(decoder, targets)
        outputs = [_text_17(row) for row in free]
        out = {"losses": losses, "teacher_forced": float((forced == reference).mean()),
               "free_running": float((free == reference).mean()), "outputs": outputs}
        if verbose:
            print(f"Training the decoder ({epochs} Adam steps on {n} sentences):")
            shown = sorted({0, 9, 19, 39, epochs - 1} & set(range(epochs)))
            print("  " + "  ".join(f"step {k + 1}: {losses[k]:.3f}" for k in shown))
            print()
            print(f"  teacher-forced accuracy (reading the training arrays): "
                  f"{out['teacher_forced']:.0%}")
            print(f"  free-running accuracy (reading its own outputs):        "
                  f"{out['free_running']:.0%}")
            print()
            print("Greedy continuations (after <bos> and the first word):")
            for i in (0, 2, 5):
                first = WORDS_17[targets[i, 0]]
                print(f"  {first:6s} -> {outputs[i]:28s} (expected: "
                      f"{_text_17(reference[i])})")
        return out

    return _gated(run)
