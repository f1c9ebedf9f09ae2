"""Training recipes chosen from the data: batch size, learning rate, dropout, tokenizer...

:func:`corpus_stats` measures a corpus (size, sentence lengths, vocabulary, whether a side
is written without spaces) and :func:`recipe_for` turns those figures into the settings of
one model: the arguments of :func:`kerasattn.training.train`, the model hyperparameters
that depend on the data, the tokenizer and its size, and the longest training pair kept.

The built-in corpus gets exactly :func:`kerasattn.training.recommended_training` (the
settings its lessons are measured with). A real corpus gets these rules:

- tokenizer: subword (SentencePiece) when a side is written without spaces (Japanese,
  Chinese) or when most word types are seen once (a word vocabulary would then be mostly
  ``<unk>`` at test time); word level otherwise;
- vocabulary: about one subword piece per 5 training pairs, 1,000 to 8,000 per side; at word
  level, from 5,000 pairs, only words seen twice (a word seen once is noise). The longest
  1 % of training pairs (never under 30 tokens) are left out;
- batches of 64 (32 under 2,000 pairs, so that a small corpus still gets many updates),
  grouped by target length, then source length, each as wide as its longest pair; on JAX,
  where every width compiles the train step once, only from :data:`JAX_BUCKET_PAIRS` pairs,
  with widths rounded up to a multiple of 8 or 16, whichever buys more passes in the budget
  (:func:`choose_pad_multiple`: about :data:`JAX_COMPILE_SECONDS` of compiling per batch
  shape, against the padded positions of an epoch; without a budget, 8);
- a constant learning rate, no warm-up (1e-3 for Transformer decoders, 3e-3 for ``seq2seq``
  and ``bahdanau``, 2e-3 for the multi-head GRU decoders): a run of minutes never reaches
  the useful range of the inverse-square-root decay, and with corpus token weighting a
  warm-up to 2e-3 scored the same as the constant 1e-3 (30.2 against 30.5 BLEU, records
  ``fra_short_transformer_torch_tokw_warm200.json`` / ``..._torch_tokw.json``), so the
  recipe keeps the simpler constant rate. The linear
  decay to 0 at the end of the budget (``training.TimeBudget(seconds, anneal=True)``, Li et
  al., 2020) is off: its figures and commands are in docs/data.md ("Recipes chosen from the
  data");
- no random position shift: real test sentences are as long as the training ones;
- dropout 0.3 under 5,000 pairs, 0.2 under 20,000, 0.1 above, with label smoothing 0.1; but
  neither, and no gradient clipping for a Transformer decoder, when the time budget allows
  fewer than :data:`FEW_EPOCHS` passes over the data (estimated from the target tokens per
  epoch, counted with the recipe's tokenizer, at :data:`CPU_TOKENS_PER_SECOND`, ten times
  that with a GPU): a model that sees each pair a few times has not begun to over-fit, and
  all three slow early learning. From :data:`FEW_EPOCHS` to under
  :data:`SHORT_RUN_EPOCHS` passes a Transformer decoder keeps dropout of at most 0.1
  (without any it over-fits and early stopping ends it) but trains without label smoothing
  or clipping, and, on batches grouped by length, with every target token weighing the
  same in the loss (``token_weighting="corpus"`` of :func:`kerasattn.training.train`).
  Measured with ``python benchmarks/bench_real_data.py FILE``, ``transformer``, one run
  each (the figures of one item on the same code and machine):

  - ``jpn-eng.txt --reverse --budget 150 --backend jax``: BLEU 6.0 without dropout, 1.7 with
    ``--set model.dropout=0.1``;
  - ``jpn-eng.txt --budget 240 --backend torch`` (English to Japanese): BLEU 9.8 without label
    smoothing or clipping, 8.4 with ``--set label_smoothing=0.1``, 8.6 with ``--set
    clipnorm=1.0`` (these two Japanese items have no JSON record);
  - the gettext English-French pairs of at most 8 words a side (``fra_short.txt``, 11,377
    training pairs, about 10 passes in 240 s by the estimate), ``--budget 240 --backend
    torch``: BLEU 24.6 with ``--set model.dropout=0.2 --set label_smoothing=0.1 --set
    clipnorm=1.0``, 26.4 with no dropout, label smoothing or clipping (``--set
    model.dropout=0 --set label_smoothing=0 --set clipnorm=null``; early stopping after 10
    epochs), 28.5 with ``--set model.dropout=0.1 --set label_smoothing=0 --set
    clipnorm=null``, 30.5 with that and ``--set token_weighting=corpus`` (records in
    docs/measured/recipe_trials/, tabulated in docs/data.md);
- recurrent layers 128 wide from 10,000 pairs; ``bahdanau`` projects to the vocabulary
  through ``output_units`` equal to its units (the projection from `[s_t; c_t]` to
  thousands of subwords is most of its arithmetic);
- early stopping after 3 epochs without a better validation loss, then the best epoch's
  weights; except for the ``transformer`` from :data:`FEW_EPOCHS` to under
  :data:`SHORT_RUN_EPOCHS` passes, which the budget ends (without label smoothing its
  validation loss rises after a few passes while its accuracy and BLEU still rise), and
  which has a feed-forward layer :data:`FFN_MULTIPLE` x ``d_model`` wide there;
- that ``transformer`` ends on the moving average of its weights over the training steps
  (``ema_momentum`` = :data:`EMA_MOMENTUM`, about the last 500 steps; at most a third of the
  estimated steps), not on the last step's: at a constant learning rate the weights still
  move from batch to batch when the budget ends. Chosen on the gettext English-Spanish pairs
  of at most 8 words a side (``spa_short.txt``, 11,373 training pairs, about 2,500 steps in
  240 s on JAX), ``bench_real_data.py spa_short.txt --budget 240 --models transformer``, one
  run each (records ``docs/measured/recipe_trials/spa_short_transformer_*.json``): on JAX
  35.8 on the last weights (``spa_short_jax_last_weights.json``; 35.0-36.2 in other runs),
  36.4 with momentum 0.995, 37.5 with 0.998, 33.9 with 0.999 (an average over about 1,000
  steps keeps weights from early in the run); dropout 0.2 or 0 and label smoothing 0.1
  instead scored 32.4, 34.0 and 36.5. On torch 37.6 -> 40.1 with 0.998. Checked on the
  held-out Italian pairs (docs/benchmarks.md, "Real sentences").
"""
from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

__all__ = ["Recipe", "Prepared", "PreparedText", "CorpusRun", "corpus_stats", "recipe_for",
           "choose_tokenizer", "prepare_text", "prepare", "DECISIONS",
           "train_on_corpus", "bleu_tokenize_for", "SPACELESS_SHARE", "FEW_EPOCHS",
           "SHORT_RUN_EPOCHS", "EMA_MOMENTUM",
           "CPU_TOKENS_PER_SECOND", "JAX_BUCKET_PAIRS", "JAX_PAD_MULTIPLE",
           "JAX_PAD_MULTIPLES", "JAX_COMPILE_SECONDS", "JAX_EVAL_COMPILE_SECONDS",
           "choose_pad_multiple", "settle_pad_multiple",
           "estimated_epochs"]

#: A side is "written without spaces" when at least this share of its sentences of 8
#: characters or more contain no space.
SPACELESS_SHARE = 0.5
#: A time budget that allows fewer passes over the training data than this trains without
#: dropout.
FEW_EPOCHS = 6
#: A time budget that allows fewer passes than this (and at least :data:`FEW_EPOCHS`) trains
#: a Transformer decoder with dropout at most 0.1, without label smoothing or clipping.
SHORT_RUN_EPOCHS = 20
#: From this many training pairs, JAX trains on batches of similar length too (each batch
#: width is one XLA compilation of the train step; ``jpn-eng.txt``, Japanese to English,
#: 39,393 pairs, 240 s, ``transformer``: 7 widths, 4,598 target tokens/s against 3,981 with
#: every batch padded to the longest pair; a run without a JSON record).
JAX_BUCKET_PAIRS = 10000
#: On JAX, batch widths are rounded up to a multiple of this until the batches are known
#: (:func:`recipe_for`); :func:`prepare` then chooses from :data:`JAX_PAD_MULTIPLES`. Each
#: (source, target) width pair compiles the train step once (seconds for a Transformer).
JAX_PAD_MULTIPLE = 16
#: The multiples :func:`prepare` chooses from on JAX once the batches are known
#: (:func:`choose_pad_multiple`). On the gettext pairs of at most 8 words a side, 240 s,
#: ``bench_real_data.py FILE --budget 240 --models transformer --backend jax``, multiples of
#: 8 make 9-10 training shapes (16: 5) and 0.72-0.77x the padded positions.
#: Spanish: 40.4 BLEU in 17 epochs against 37.5 in 14; French: 35.0 and 34.8 (two runs) in
#: 16-17 against 33.4 in 15 (records ``recipe_trials/{spa,fra}_short_transformer_jax_pm*_
#: ema998*.json``; the Spanish multiples of 16: ``spa_short_transformer_jax_ema998.json``).
JAX_PAD_MULTIPLES = (8, 16)
#: Seconds JAX takes to compile the train step for one new batch shape, and the evaluation
#: step: 3.1-5.1 s and 0.5-0.7 s for the recipe's `transformer` on a 2-core CPU, against
#: 39-130 ms per train step once compiled (``python benchmarks/bench_jax_compile.py``,
#: ``docs/measured/jax_compile.md``).
JAX_COMPILE_SECONDS = 4.5
JAX_EVAL_COMPILE_SECONDS = 0.7
#: The `transformer`'s feed-forward width as a multiple of ``d_model`` where the budget
#: allows 6 to under 20 passes (Vaswani et al. use 2048 / 512 = 4; the model's default is
#: 2). Chosen on the gettext English-French pairs of at most 8 words (``fra_short.txt``,
#: torch, ``bench_real_data.py fra_short.txt --budget 240 --models transformer --set
#: model.d_ff=512``: BLEU 33.5 against 31.6 with 256) and checked on the Spanish pairs
#: (``spa_short.txt``: 38.7 against 35.8 on torch).
FFN_MULTIPLE = 4
#: The momentum of the weights' moving average the `transformer` ends on where the budget
#: allows 6 to under 20 passes (``ema_momentum`` of :func:`kerasattn.training.train`): an
#: average over about the last 1 / (1 - m) = 500 steps. Lower where the budget is estimated
#: to allow under 3 / (1 - m) = 1,500 steps, so that the average spans at most a third of
#: them (the first steps' weights then weigh under e^-3 = 5 % in it).
EMA_MOMENTUM = 0.998
#: Training throughput assumed for the estimate, in target tokens per second: a
#: conservative figure for a busy 2-core laptop CPU (the records of ``bench_real_data.py``
#: on a 2-core server CPU range from about 2,900 to 15,700, median about 7,100, so a fast
#: machine fits more passes than estimated). A GPU is assumed ten times faster.
CPU_TOKENS_PER_SECOND = 5000
#: What a recipe decides, each with its reason (:attr:`Recipe.reasons`).
DECISIONS = ("tokenizer", "vocab", "max_train_tokens", "bucket", "optimizer",
             "regularisation", "early_stopping", "weight_averaging", "token_weighting",
             "clipnorm",
             "position_shift", "width",
             "output_units")
_TRANSFORMER_DECODERS = ("transformer", "transformer_decoder_on_gru")
_RECURRENT = ("seq2seq", "bahdanau", "bahdanau_multihead", "encoder_self_attention",
              "decoder_self_attention", "transformer_decoder_on_gru")


def _side_stats(texts: list[str]) -> dict:
    words = [len(t.split()) for t in texts]
    chars = [len(t) for t in texts]
    counts = Counter(w for t in texts for w in t.split())
    long_ = [t for t in texts if len(t) >= 8]
    spaceless = (sum(" " not in t.strip() for t in long_) / len(long_)) if long_ else 0.0
    return dict(
        mean_words=float(np.mean(words)) if words else 0.0,
        p99_words=int(np.percentile(words, 99)) if words else 0,
        max_words=max(words, default=0),
        mean_chars=float(np.mean(chars)) if chars else 0.0,
        word_types=len(counts),
        singleton_share=(sum(c == 1 for c in counts.values()) / len(counts)) if counts else 0.0,
        spaceless_share=float(spaceless),
        spaceless=bool(spaceless >= SPACELESS_SHARE))


def corpus_is_builtin(corpus) -> bool:
    """Whether ``corpus`` is the kit's generated corpus."""
    return (getattr(corpus, "info", {}) or {}).get("source") == "builtin"


def corpus_stats(corpus) -> dict:
    """The figures a recipe is chosen from, measured on the training split.

    Args:
        corpus: a :class:`kerasattn.data.Corpus`.

    Returns:
        A dict: ``builtin`` (the kit's generated corpus), ``train_pairs``,
        ``train_sources`` (distinct source sentences), and ``src`` / ``tgt`` dicts with
        ``mean_words``, ``p99_words``, ``max_words``, ``mean_chars``, ``word_types``,
        ``singleton_share`` (share of word types seen once), ``spaceless_share`` and
        ``spaceless`` (the side is written without spaces).
    """
    train = list(getattr(corpus, "train", []) or [])
    if not train:
        raise ValueError(f"corpus must have a non-empty training split; received {corpus!r}")
    return dict(builtin=corpus_is_builtin(corpus), train_pairs=len(train),
                train_sources=len({s for s, _ in train}),
                src=_side_stats([s for s, _ in train]),
                tgt=_side_stats([t for _, t in train]))


@dataclasses.dataclass
class Recipe:
    """Settings for one model on one corpus (see :func:`recipe_for`).

    Attributes:
        model: the model name.
        train: keyword arguments of :func:`kerasattn.training.train`.
        model_kwargs: hyperparameters of :func:`kerasattn.models.build_model` that depend
            on the data (empty: the model's defaults).
        tokenizer: ``"word"`` or ``"subword"``.
        vocab: arguments of :func:`kerasattn.data.build_tokenizer` for each side
            (``min_freq`` for words, ``vocab_size`` for subwords).
        max_train_tokens: training pairs with a side longer than this many tokens of the
            chosen tokenizer are left out of training (None: keep all). :func:`prepare`
            sets it for a real corpus: the 99th percentile of the encoded lengths, at
            least 30.
        reasons: the reason of each decision, keyed by what it decides (one of
            :data:`DECISIONS`, or ``"override <what>"`` for a setting a user forced), in
            the order they were taken. Code reads the fields above; ``reasons`` is for
            people (:meth:`describe`, a checkpoint's ``meta.json``).
    """

    model: str
    train: dict
    model_kwargs: dict
    tokenizer: str
    vocab: dict
    max_train_tokens: int | None
    reasons: dict

    def describe(self) -> str:
        """The recipe as readable lines, one per decision."""
        return "\n".join([f"recipe for {self.model}:"]
                         + [f"  - {r}" for r in self.reasons.values()])


def recipe_for(model_name: str, stats: dict, backend: str | None = None,
               tokenizer: str | None = None, budget_seconds: float | None = None,
               gpu: bool | None = None) -> Recipe:
    """Choose the training settings of ``model_name`` from the figures of a corpus.

    Args:
        model_name: one of the seven model names.
        stats: from :func:`corpus_stats`.
        backend: ``"tensorflow"``, ``"jax"`` or ``"torch"`` (default: the current one).
        tokenizer: ``"word"`` or ``"subword"`` to override the choice, or None.
        budget_seconds: the wall-clock training budget, or None (epochs and early
            stopping end training).
        gpu: whether training runs on a GPU (default: whether the backend computes on an
            accelerator).

    Returns:
        A :class:`Recipe`. For the built-in corpus ``recipe.train`` is
        ``recommended_training(model_name, backend)`` unchanged, with the word tokenizer.
    """
    from kerasattn import training

    base = training.recommended_training(model_name, backend)       # validates the name
    if backend is None:
        import keras

        backend = keras.backend.backend()
    _check_tokenizer(tokenizer)
    if not isinstance(stats, dict) or not {"builtin", "train_pairs", "src", "tgt"} <= set(stats):
        raise ValueError("stats must be the dict of "
                         "kerasattn.training.recipes.corpus_stats(corpus); "
                         f"received {type(stats).__name__}")
    if stats["builtin"]:
        kind = tokenizer or "word"
        return Recipe(model=model_name, train=base, model_kwargs={}, tokenizer=kind,
                      vocab=dict(min_freq=1) if kind == "word" else dict(vocab_size=1000),
                      max_train_tokens=None,
                      reasons={"optimizer": "built-in corpus: the lessons' measured settings "
                               f"({', '.join(f'{k}={v}' for k, v in base.items())})",
                               "tokenizer": f"{kind} tokens"})
    n = int(stats["train_pairs"])
    kind, vocab, reasons = choose_tokenizer(stats, tokenizer)
    # the length cap needs the tokenizers: prepare() sets it from the encoded lengths
    max_train_tokens = None
    # batching and optimisation
    batch_size = 32 if n < 2000 else 64
    # GRU decoders: the built-in corpus's rates (training.RECOMMENDED_TRAINING); on
    # jpn-eng.txt (150 s, JAX, no dropout) bahdanau reaches BLEU 5.5 at 3e-3, 3.5 at 2e-3
    # (a run without a JSON record). Transformer decoders: 1e-3 constant, no warm-up (the
    # module docstring)
    learning_rate = (1e-3 if model_name in _TRANSFORMER_DECODERS
                     else 3e-3 if model_name in ("seq2seq", "bahdanau") else 2e-3)
    dropout = 0.3 if n < 5000 else (0.2 if n < 20000 else 0.1)
    passes = estimated_epochs(stats, budget_seconds, gpu)
    # JAX compiles each new batch shape once (seconds): the built-in recipe keeps one shape,
    # a large real corpus saves more in padding than the few bucket widths cost to compile
    bucket = bool(base["bucket"] or n >= JAX_BUCKET_PAIRS)
    # TensorFlow traces one shape-generic step and torch runs eagerly: a batch can be
    # exactly as wide as its longest pair. JAX compiles every width: multiples of 16 until
    # prepare() sees the batches (choose_pad_multiple)
    pad_multiple = JAX_PAD_MULTIPLE if backend == "jax" else 1
    train = dict(bucket=bucket, pad_multiple=pad_multiple, batch_size=batch_size,
                 learning_rate=learning_rate, warmup_steps=None, label_smoothing=0.1,
                 early_stopping_patience=3, epochs=30)
    if bucket:
        why = (f" ({n:,} training pairs: the padding saved outweighs compiling one step per "
               "batch width)" if not base["bucket"] else "")
        reasons["bucket"] = ("batches grouped by target length, then source length, each as "
                             "wide " + ("as its longest pair" if pad_multiple == 1 else
                                        f"as its longest pair rounded up to {pad_multiple}")
                             + why)
    reasons["optimizer"] = (f"batches of {batch_size}, constant learning rate "
                            f"{learning_rate:g} (AdamW, no warm-up)")
    reasons["early_stopping"] = ("early stopping after 3 epochs without a lower validation "
                                 "loss, then the best epoch's weights")
    transformer_decoder = model_name in _TRANSFORMER_DECODERS
    if passes is not None and passes < FEW_EPOCHS:
        dropout = 0.0
        train["label_smoothing"] = 0.0
        reasons["regularisation"] = (f"no dropout and no label smoothing: the "
                                     f"{budget_seconds:g} s budget allows about {passes:.1f} "
                                     "passes over the data, too few to over-fit")
    elif passes is not None and passes < SHORT_RUN_EPOCHS and transformer_decoder:
        dropout = min(dropout, 0.1)
        train["label_smoothing"] = 0.0
        reasons["regularisation"] = (f"dropout {dropout}, no label smoothing: the "
                                     f"{budget_seconds:g} s budget allows about {passes:.1f} "
                                     "passes over the data, where a Transformer decoder "
                                     "learns more with less regularisation")
        if model_name == "transformer":
            # Without label smoothing the validation loss rises after about 11 passes (the
            # model grows over-confident) while validation accuracy and BLEU keep rising:
            # stopping on it, and going back to its best epoch, throws the rest of the budget
            # away. `bench_real_data.py FILE --budget 240 --models transformer --set
            # early_stopping_patience=null` against early stopping after 3 epochs, BLEU one
            # run each (docs/measured/recipe_trials/*_early_stopping_3.json ->
            # *_day3_*no_es*.json): fra_short.txt (tuned on) TensorFlow 29.7 -> 36.0, torch
            # 33.5 -> 34.0, JAX 31.9 -> 32.7; deu_short.txt (held out) TensorFlow 31.6 -> 34.0.
            train["early_stopping_patience"] = None
            reasons["early_stopping"] = (
                "no early stopping: without label smoothing the validation loss rises after "
                "a few passes while accuracy keeps rising; the budget ends training")
            # the average must forget the first steps' weights: it spans at most a third
            # of the steps the budget is estimated to allow
            steps = passes * -(-n // batch_size)
            momentum = round(min(EMA_MOMENTUM, 1 - 3 / steps), 4)
            train["ema_momentum"] = momentum
            reasons["weight_averaging"] = (
                f"training ends on the moving average of the weights (momentum "
                f"{momentum:g}, about the last {round(1 / (1 - momentum)):,} of some "
                f"{steps:,.0f} steps), not on the last step's: at a constant learning rate "
                "the weights still jump from batch to batch when the budget ends")
        if bucket:
            train["token_weighting"] = "corpus"
            reasons["token_weighting"] = (
                "every target token weighs the same in the loss (`token_weighting="
                "'corpus'`): batches of one length would otherwise give a short "
                "sentence's tokens many times the weight of a long one's")
    else:
        reasons["regularisation"] = (f"dropout {dropout} ({n:,} training pairs), label "
                                     f"smoothing {train['label_smoothing']:g}")
    if transformer_decoder and passes is not None and passes < SHORT_RUN_EPOCHS:
        train["clipnorm"] = None
        reasons["clipnorm"] = ("no gradient clipping (a Transformer decoder at a constant "
                               "1e-3 learns faster unclipped in a short budget)")
    model_kwargs = dict(dropout=dropout)
    if (model_name == "transformer" and passes is not None
            and FEW_EPOCHS <= passes < SHORT_RUN_EPOCHS):
        d_model = _config_default(model_name, "d_model")
        model_kwargs["d_ff"] = FFN_MULTIPLE * d_model
        reasons["width"] = (f"feed-forward {FFN_MULTIPLE * d_model} wide (d_ff = "
                            f"{FFN_MULTIPLE} x d_model, the paper's ratio): in a budget of "
                            f"6 to 20 passes the wider layer learns more per pass")
    if model_name in ("transformer", "transformer_decoder_on_gru"):
        model_kwargs["max_position_shift"] = 0
        model_kwargs["max_length"] = 256
        reasons["position_shift"] = ("no random position shift (real test sentences are as "
                                     "long as the training ones)")
    if model_name in _RECURRENT and n >= 10000:
        model_kwargs.update(_wide_recurrent(model_name))
        reasons["width"] = "recurrent layers 128 wide (10,000 training pairs or more)"
    if "output_units" in _config_fields(model_name):
        units = model_kwargs.get("units", _config_default(model_name, "units"))
        model_kwargs["output_units"] = units
        reasons["output_units"] = (f"the vocabulary projection through {units} units "
                                   "(`output_units`): a third of its cost from [s_t; c_t]")
    return Recipe(model=model_name, train=train, model_kwargs=model_kwargs, tokenizer=kind,
                  vocab=vocab, max_train_tokens=max_train_tokens, reasons=reasons)


def _check_tokenizer(tokenizer) -> None:
    if tokenizer not in (None, "word", "subword"):
        raise ValueError(f"tokenizer must be 'word', 'subword' or None; received "
                         f"{tokenizer!r}")


def choose_tokenizer(stats: dict, tokenizer: str | None = None) -> tuple[str, dict, dict]:
    """The tokenizer of a real corpus and its size, from :func:`corpus_stats` figures.

    Subword pieces when a side is written without spaces or when most word types are seen
    once; words otherwise. Does not depend on the model.

    Args:
        stats: from :func:`corpus_stats`.
        tokenizer: ``"word"`` or ``"subword"`` to force the kind, or None.

    Returns:
        ``(kind, vocab, reasons)``: ``"word"`` or ``"subword"``, the arguments of
        :func:`kerasattn.data.build_tokenizer`, and the reasons of the ``"tokenizer"`` and
        ``"vocab"`` decisions.
    """
    _check_tokenizer(tokenizer)
    n = int(stats["train_pairs"])
    src, tgt = stats["src"], stats["tgt"]
    rare = max(src["singleton_share"], tgt["singleton_share"])
    if tokenizer is not None:
        kind, why = tokenizer, f"{tokenizer} tokens (as asked)"
    elif src["spaceless"] or tgt["spaceless"]:
        side = "source" if src["spaceless"] else "target"
        kind, why = "subword", (f"subword tokens: the {side} side is written without spaces "
                                f"({100 * max(src['spaceless_share'], tgt['spaceless_share']):.0f}"
                                " % of its sentences have none)")
    elif rare > 0.5:
        kind, why = "subword", f"subword tokens: {100 * rare:.0f} % of the word types are seen once"
    else:
        kind, why = "word", f"word tokens: {100 * rare:.0f} % of the word types are seen once"
    if kind == "subword":
        size = int(min(8000, max(1000, round(n / 5, -2))))
        vocab = dict(vocab_size=size)
        vocab_why = (f"about {size} subword pieces per side, more if a side has more "
                     f"distinct characters ({n:,} training pairs)")
    else:
        min_freq = 2 if n >= 5000 else 1
        vocab = dict(min_freq=min_freq)
        vocab_why = f"words seen at least {min_freq}x ({n:,} training pairs)"
    return kind, vocab, {"tokenizer": why, "vocab": vocab_why}


def estimated_epochs(stats: dict, budget_seconds: float | None,
                     gpu: bool | None = None) -> float | None:
    """Passes over the training data a time budget allows, estimated (None: no budget).

    Target tokens per epoch are ``train_pairs * (mean target tokens + 1)``: the tokens the
    target tokenizer makes (``stats["tgt"]["mean_tokens"]``, which :func:`prepare` measures
    once the tokenizers are built) or, before that, the mean words of the target side, or
    its mean characters when it is written without spaces (a word count means nothing
    there, and a subword piece covers at least one character). The rate is
    :data:`CPU_TOKENS_PER_SECOND`, ten times that when ``gpu`` (default: whether the
    backend computes on an accelerator, :func:`kerasattn.backend_utils.compute_device`).
    """
    if budget_seconds is None:
        return None
    if isinstance(budget_seconds, bool) or not isinstance(budget_seconds, (int, float)) \
            or not budget_seconds > 0:
        raise ValueError(f"budget_seconds must be a number > 0 or None; received "
                         f"{budget_seconds!r}")
    if gpu is None:
        from kerasattn.backend_utils import compute_device

        gpu = compute_device() != "cpu"      # a GPU (or Apple's mps)
    rate = CPU_TOKENS_PER_SECOND * (10 if gpu else 1)
    tgt = stats["tgt"]
    per_sentence = tgt.get("mean_tokens")
    if per_sentence is None:
        per_sentence = tgt["mean_chars"] if tgt.get("spaceless") else tgt["mean_words"]
    tokens = stats["train_pairs"] * (per_sentence + 1.0)
    return float(budget_seconds) * rate / max(tokens, 1.0)


def _config_fields(model_name: str) -> set:
    from kerasattn.models import registry

    return {f.name for f in dataclasses.fields(registry.get_config_class(model_name))}


def _config_default(model_name: str, field: str):
    from kerasattn.models import registry

    return getattr(registry.get_config_class(model_name)(), field)


def _wide_recurrent(model_name: str) -> dict:
    fields = _config_fields(model_name)
    return {k: 128 for k in ("embed_dim", "units", "attention_units", "encoder_units",
                             "decoder_units") if k in fields}


@dataclasses.dataclass
class Prepared:
    """A corpus made ready for one model by its recipe (see :func:`prepare`).

    Attributes:
        recipe: the :class:`Recipe`.
        src_vocab, tgt_vocab: tokenizers trained on the training split only.
        train, valid: arrays of :func:`kerasattn.data.make_arrays`.
        test_sources: distinct test source sentences (normalised).
        test_references: for each test source, all of its references.
        dropped: training pairs left out as longer than ``recipe.max_train_tokens``.
        stats: :func:`corpus_stats` of the corpus, with the mean target tokens of the kept
            training pairs (``stats["tgt"]["mean_tokens"]``) that the recipe was chosen with.
    """

    recipe: Recipe
    src_vocab: object
    tgt_vocab: object
    train: dict
    valid: dict
    test_sources: list
    test_references: list
    dropped: int = 0
    stats: dict | None = None


@dataclasses.dataclass
class PreparedText:
    """A corpus's tokenizers and kept training pairs (see :func:`prepare_text`): what does
    not depend on the model.

    Attributes:
        tokenizer: ``"word"`` or ``"subword"``.
        vocab: the arguments the tokenizers were built with.
        src_vocab, tgt_vocab: tokenizers trained on the training split only.
        train_pairs: the training pairs kept (not longer than ``max_train_tokens``).
        max_train_tokens: the length cap (None for the built-in corpus).
        dropped: training pairs left out as longer than it.
        stats: :func:`corpus_stats`, with ``stats["tgt"]["mean_tokens"]`` (the mean target
            tokens of the kept pairs) for a real corpus.
        reasons: the reasons of the ``"tokenizer"``, ``"vocab"`` and
            ``"max_train_tokens"`` decisions.
    """

    tokenizer: str
    vocab: dict
    src_vocab: object
    tgt_vocab: object
    train_pairs: list
    max_train_tokens: int | None
    dropped: int
    stats: dict
    reasons: dict


def prepare_text(corpus, tokenizer: str | None = None,
                 vocab: dict | None = None) -> PreparedText:
    """Choose and build the tokenizers of ``corpus`` and its training length cap.

    Args:
        corpus: a :class:`kerasattn.data.Corpus`.
        tokenizer: ``"word"``, ``"subword"`` or None (chosen from the corpus).
        vocab: arguments of :func:`kerasattn.data.build_tokenizer` overriding the chosen
            ones (``{"vocab_size": 4000}``, ``{"min_freq": 1}``), or None.

    Returns:
        A :class:`PreparedText`.
    """
    from kerasattn.data import build_tokenizer

    stats = corpus_stats(corpus)
    builtin = corpus_is_builtin(corpus)
    if builtin:
        kind = tokenizer or "word"
        chosen = dict(min_freq=1) if kind == "word" else dict(vocab_size=1000)
        reasons = {"tokenizer": f"{kind} tokens"}
        _check_tokenizer(tokenizer)
    else:
        kind, chosen, reasons = choose_tokenizer(stats, tokenizer)
    if vocab:
        unknown = set(vocab) - {"min_freq", "max_size", "vocab_size"}
        if unknown:
            raise ValueError(f"vocab keys must be min_freq, max_size or vocab_size; received "
                             f"{sorted(unknown)}")
        chosen = {**chosen, **vocab}
        reasons["override vocab"] = f"tokenizer size as asked: {vocab}"
    src_vocab = build_tokenizer(kind, [s for s, _ in corpus.train], **chosen)
    tgt_vocab = build_tokenizer(kind, [t for _, t in corpus.train], **chosen)
    train_pairs, dropped, cap = list(corpus.train), 0, None
    if not builtin:
        tgt_tokens = [len(tgt_vocab.encode(t)) for _, t in train_pairs]
        lengths = [max(len(src_vocab.encode(s)), n_t + 1)
                   for (s, _), n_t in zip(train_pairs, tgt_tokens)]
        cap = max(30, int(np.ceil(np.percentile(lengths, 99))))
        kept = [i for i, n in enumerate(lengths) if n <= cap]
        dropped = len(lengths) - len(kept)
        train_pairs = [train_pairs[i] for i in kept]
        # the passes a budget allows are estimated from the tokens the model will read
        stats["tgt"] = dict(stats["tgt"],
                            mean_tokens=float(np.mean([tgt_tokens[i] for i in kept])))
        reasons["max_train_tokens"] = (f"training pairs longer than {cap} tokens left out "
                                       f"({dropped:,} of {len(lengths):,})")
    return PreparedText(tokenizer=kind, vocab=chosen, src_vocab=src_vocab,
                        tgt_vocab=tgt_vocab, train_pairs=train_pairs, max_train_tokens=cap,
                        dropped=dropped, stats=stats, reasons=reasons)


def prepare(corpus, model_name: str, backend: str | None = None,
            tokenizer: str | None = None, budget_seconds: float | None = None,
            vocab: dict | None = None) -> Prepared:
    """Choose the recipe of ``model_name`` for ``corpus``, build its tokenizers and arrays.

    The tokenizers see the training split only (:func:`prepare_text`); the test split is
    grouped by source sentence (:func:`kerasattn.metrics.group_references`) for single- and
    multi-reference BLEU.

    Args:
        corpus: a :class:`kerasattn.data.Corpus`.
        model_name: one of the seven model names.
        backend: see :func:`recipe_for`.
        tokenizer: ``"word"``, ``"subword"`` or None (the recipe chooses).
        budget_seconds: the training budget, or None (see :func:`recipe_for`).
        vocab: see :func:`prepare_text`.

    Returns:
        A :class:`Prepared`.
    """
    from kerasattn.data import make_arrays
    from kerasattn.metrics import group_references

    text = prepare_text(corpus, tokenizer, vocab)
    recipe = recipe_for(model_name, text.stats, backend, text.tokenizer, budget_seconds)
    recipe.vocab, recipe.max_train_tokens = text.vocab, text.max_train_tokens
    recipe.reasons = {**text.reasons, **{k: v for k, v in recipe.reasons.items()
                                         if k not in text.reasons}}
    if text.max_train_tokens is not None and "max_length" in recipe.model_kwargs:
        recipe.model_kwargs["max_length"] = max(256, 2 * text.max_train_tokens)
    valid_pairs = list(corpus.valid) or list(corpus.train[:1])
    sources, references = group_references(corpus.test)
    train = make_arrays(text.train_pairs, text.src_vocab, text.tgt_vocab)
    valid = make_arrays(valid_pairs, text.src_vocab, text.tgt_vocab)
    settle_pad_multiple(recipe, train, budget_seconds, valid)
    return Prepared(recipe=recipe, src_vocab=text.src_vocab, tgt_vocab=text.tgt_vocab,
                    train=train, valid=valid,
                    test_sources=sources, test_references=references, dropped=text.dropped,
                    stats=text.stats)


def settle_pad_multiple(recipe: Recipe, arrays: dict, budget_seconds: float | None,
                        valid: dict | None = None) -> None:
    """Round a JAX recipe's bucket widths to the multiple :func:`choose_pad_multiple` picks
    for these arrays (in place, with its reason). Other recipes are unchanged.

    Args:
        recipe: from :func:`recipe_for`, not settled yet (its widths rounded up to
            :data:`JAX_PAD_MULTIPLE`).
        arrays: the training arrays the recipe will train on
            (:func:`kerasattn.data.make_arrays`).
        budget_seconds: the training budget the recipe was chosen for, or None.
        valid: the validation arrays, or None.
    """
    if not recipe.train.get("bucket") or recipe.train.get("pad_multiple", 1) != JAX_PAD_MULTIPLE:
        return
    multiple, why = choose_pad_multiple(arrays, recipe.train["batch_size"], budget_seconds,
                                        valid)
    recipe.train["pad_multiple"] = multiple
    recipe.reasons["bucket"] = recipe.reasons["bucket"].replace(
        f"rounded up to {JAX_PAD_MULTIPLE}", f"rounded up to {multiple} ({why})")


def _exact_widths(arrays: dict, batch_size: int, shuffle: bool) -> list[tuple[int, int, int]]:
    """(rows, source width, target width) of each length-grouped batch of one epoch, before
    rounding. With grouping, the batches' lengths do not depend on the shuffle's seed."""
    from kerasattn.data.batching import _trimmed_widths, batch_plan

    keys = ("encoder_inputs", "decoder_inputs", "labels")
    return [(len(idx), *_trimmed_widths(*(arrays[k][idx] for k in keys), 1))
            for idx in batch_plan(arrays, batch_size, shuffle, 0, True)]


def choose_pad_multiple(arrays: dict, batch_size: int, budget_seconds: float | None,
                        valid: dict | None = None,
                        multiples=JAX_PAD_MULTIPLES) -> tuple[int, str]:
    """The multiple JAX rounds batch widths up to, chosen from the batches themselves.

    Each distinct batch shape (rows, source width, target width) compiles the train step
    once, :data:`JAX_COMPILE_SECONDS`, and each validation shape the evaluation step,
    :data:`JAX_EVAL_COMPILE_SECONDS`; an epoch's time grows with its padded positions. A
    larger multiple makes fewer shapes and more padding. For each candidate, the budget
    left after compiling its shapes, divided by the padded positions (source + target) of
    one epoch, measures the passes it buys; the candidate with the most wins (ties: fewer
    shapes). Without a budget, compiling is paid once over a run of many epochs: the
    candidate with the fewest padded positions.

    Args:
        arrays: training arrays of :func:`kerasattn.data.make_arrays`.
        batch_size: rows per batch.
        budget_seconds: the training budget in seconds (a number > 0), or None.
        valid: the validation arrays (their shapes are counted too), or None.
        multiples: the candidates, ints >= 1.

    Returns:
        ``(multiple, reason)``.

    Raises:
        ValueError: if ``multiples`` or ``budget_seconds`` is not valid.
    """
    if not multiples or any(isinstance(m, bool) or not isinstance(m, int) or m < 1
                            for m in multiples):
        raise ValueError(f"multiples must be ints >= 1; received {multiples!r}")
    if budget_seconds is not None and (isinstance(budget_seconds, bool) or not isinstance(
            budget_seconds, (int, float)) or not budget_seconds > 0):
        raise ValueError(f"budget_seconds must be a number > 0 or None; received "
                         f"{budget_seconds!r}")
    caps = (arrays["encoder_inputs"].shape[1], arrays["labels"].shape[1])

    def rounded(widths, m, caps):
        return [(rows, min(caps[0], -(-s // m) * m), min(caps[1], -(-t // m) * m))
                for rows, s, t in widths]

    train = _exact_widths(arrays, batch_size, True)
    checked = [] if valid is None else _exact_widths(valid, batch_size, False)
    valid_caps = (None if valid is None else
                  (valid["encoder_inputs"].shape[1], valid["labels"].shape[1]))
    figures = {}
    for m in sorted(set(multiples)):
        batches = rounded(train, m, caps)
        positions = sum(rows * (s + t) for rows, s, t in batches)
        shapes = len(set(batches))
        valid_shapes = len(set(rounded(checked, m, valid_caps))) if checked else 0
        compile_seconds = JAX_COMPILE_SECONDS * shapes + JAX_EVAL_COMPILE_SECONDS * valid_shapes
        passes = (None if budget_seconds is None
                  else max(0.0, budget_seconds - compile_seconds) / max(positions, 1))
        figures[m] = (shapes, valid_shapes, positions, passes)
    if budget_seconds is None:
        best = min(figures, key=lambda m: (figures[m][2], figures[m][0]))
    else:
        best = max(figures, key=lambda m: (figures[m][3], -figures[m][0], -figures[m][2]))
    shapes, valid_shapes, positions, _ = figures[best]
    what = (f"{shapes} training and {valid_shapes} validation batch shapes to compile, at "
            f"about {JAX_COMPILE_SECONDS:g} s and {JAX_EVAL_COMPILE_SECONDS:g} s each,")
    others = "; ".join(f"{figures[m][0]} and {figures[m][1]} shapes and "
                       f"{figures[m][2] / positions:.2f}x the padded positions with "
                       f"multiples of {m}" for m in figures if m != best)
    why = what + (f" against {others}" if others else "") + (
        f": the most passes in the {budget_seconds:g} s budget" if budget_seconds is not None
        else ": the fewest padded positions, in a run without a time budget")
    return best, why


#: sacrebleu tokenizers for targets written without spaces (manythings.org codes).
BLEU_TOKENIZE = {"jpn": "char", "cmn": "zh", "yue": "zh", "wuu": "zh", "tha": "char",
                 "khm": "char", "lao": "char", "mya": "char"}


def bleu_tokenize_for(lang: str | None) -> str:
    """The sacrebleu tokenizer for a target language code (``"13a"`` for most)."""
    return BLEU_TOKENIZE.get(str(lang or "").lower(), "13a")


@dataclasses.dataclass
class CorpusRun:
    """What :func:`train_on_corpus` returns.

    Attributes:
        translator: the trained model with its tokenizers
            (:class:`kerasattn.inference.Translator`).
        prepared: the :class:`Prepared` data (recipe, tokenizers, arrays, test groups).
        result: the :class:`kerasattn.training.TrainResult`.
        scores: :func:`kerasattn.metrics.evaluate_grouped` on the test split, plus
            ``bleu_tokenize``.
        hypotheses: one translation (normalised tokens) per distinct test source.
    """

    translator: object
    prepared: Prepared
    result: object
    scores: dict
    hypotheses: list


def train_on_corpus(model_name: str, corpus, *, budget_seconds: float | None = None,
                    tokenizer: str | None = None, seed: int = 0, out=None,
                    model_kwargs: dict | None = None, beam: int = 1, verbose: int = 0,
                    max_test: int | None = None, **train_kwargs) -> CorpusRun:
    """Prepare ``corpus`` for ``model_name`` by its recipe, train, score, and save.

    Args:
        model_name: one of the seven model names.
        corpus: a :class:`kerasattn.data.Corpus` (built-in or loaded).
        budget_seconds: wall-clock training budget (None: the recipe's epochs and early
            stopping decide).
        tokenizer: ``"word"``, ``"subword"`` or None (the recipe chooses).
        seed: seed of weights, dropout and batch order.
        out: a directory to save the translator to (:meth:`kerasattn.inference.
            Translator.save`), or None.
        model_kwargs: hyperparameters overriding the model's defaults and the recipe's.
        beam: 1 for greedy test decoding, k > 1 for beam search.
        verbose: passed to ``model.fit``.
        max_test: score only this many distinct test sources, spread evenly over the split
            (None: all).
        **train_kwargs: arguments of :func:`kerasattn.training.train` overriding the
            recipe's (``epochs``, ``batch_size``...).

    Returns:
        A :class:`CorpusRun`; ``scores`` has single- and multi-reference BLEU.
    """
    import keras

    from kerasattn import metrics, training
    from kerasattn.inference import Translator
    from kerasattn.models import build_model

    prepared = prepare(corpus, model_name, tokenizer=tokenizer, budget_seconds=budget_seconds)
    if max_test is not None and max_test < len(prepared.test_sources):
        keep = np.linspace(0, len(prepared.test_sources) - 1, max_test).round().astype(int)
        prepared.test_sources = [prepared.test_sources[i] for i in keep]
        prepared.test_references = [prepared.test_references[i] for i in keep]
    recipe = prepared.recipe
    keras.utils.set_random_seed(seed)
    hparams = {**recipe.model_kwargs, **(model_kwargs or {})}
    model = build_model(model_name, len(prepared.src_vocab), len(prepared.tgt_vocab),
                        **hparams)
    kwargs = {**recipe.train, **train_kwargs}
    if budget_seconds is not None:
        kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + [
            training.TimeBudget(budget_seconds)]
    result = training.train(model, prepared.train, prepared.valid, seed=seed, verbose=verbose,
                            **kwargs)
    info = getattr(corpus, "info", {}) or {}
    meta = dict(model=model_name, src_lang=info.get("src_lang", "en"),
                tgt_lang=info.get("tgt_lang", "fr"), tokenizer=recipe.tokenizer,
                recipe=recipe.reasons, hparams=hparams, source=str(info.get("source", "")))
    translator = Translator(model, prepared.src_vocab, prepared.tgt_vocab, meta=meta)
    hyps = translator.translate(prepared.test_sources, beam=beam, normalized=True,
                                detokenized=False)
    bleu_tok = bleu_tokenize_for(meta["tgt_lang"])
    scores = dict(metrics.evaluate_grouped(hyps, prepared.test_references, tokenize=bleu_tok),
                  bleu_tokenize=bleu_tok)
    translator.meta.update(scores=scores, epochs=result.epochs_run,
                           train_seconds=result.train_seconds,
                           tokens_per_second=result.tokens_per_second)
    if out is not None:
        translator.save(out)
    return CorpusRun(translator=translator, prepared=prepared, result=result, scores=scores,
                     hypotheses=hyps)
