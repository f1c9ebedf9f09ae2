"""Training: one path that compiles and fits any of the kit's translation models.

Every model in :mod:`kerasattn.models` takes ``{"encoder_inputs": (B, S), "decoder_inputs":
(B, T)}`` int32 token ids and returns logits ``(B, T, V)``; the labels are the decoder
inputs shifted by one (``y <eos>``), padded with ``<pad> = 0``. This module trains them all
the same way:

- loss: masked sparse cross-entropy, padding ignored, optional label smoothing
  (:class:`kerasattn.metrics.MaskedSparseCategoricalCrossentropy`), token accuracy with the
  same mask (:class:`kerasattn.metrics.MaskedAccuracy`);
- optimizer: AdamW (decoupled weight decay, Loshchilov & Hutter 2019) with gradient clipping
  by global norm (``clipnorm``) and, with ``warmup_steps`` (the built-in corpus's settings of
  the Transformer decoders), the warm-up schedule of
  :class:`kerasattn.training.schedules.TransformerSchedule`; optionally it keeps the moving
  average of the weights, which training ends on (``ema_momentum``);
- early stopping on the validation loss (the training loss without validation data),
  restoring the best weights at the end;
- crash-safe checkpoints (:mod:`kerasattn.training.checkpointing`) and resume;
- a ``seed`` that makes a run reproducible on a backend: it seeds Python, NumPy and the
  backend (``keras.utils.set_random_seed``) and re-seeds every dropout layer of the model,
  so the same initial weights + the same seed give the same losses;
- optional data parallelism over all local devices (``distribution="data_parallel"``,
  JAX only in keras 3.15).

Validation uses exactly the masks training uses: the models build their padding and causal
masks from the token ids inside the graph, so ``model.fit``'s validation pass (``training
=False``: no dropout, no random position shift, no scheduled sampling or coverage loss; the
masks are the same) sees the same masks as the training step, and the same loss object scores
both. ``tests/test_training.py`` checks that with a learning rate of 1e-12, dropout 0 and no
position shift the training loss and the validation loss on the same data are equal.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os

import keras
import numpy as np

from kerasattn import backend_utils
from kerasattn.files import clean_stale_temp_files
from kerasattn.training import checkpointing
from kerasattn.training.callbacks import (
    SCHEDULES,
    EpochTimer,
    StepLimit,
    TeacherForcingSchedule,
    TimeBudget,
    _check_positive,
)
from kerasattn.training.distribution import (
    DISTRIBUTIONS,
    data_parallel,
    device_count,
    fit_to_devices,
    lay_out_variables,
    resolve_distribution,
)
from kerasattn.training.schedules import TransformerSchedule

__all__ = ["INPUT_KEYS", "LABEL_KEY", "RECOMMENDED_TRAINING", "recommended_training",
           "make_optimizer", "compile_for_translation", "seed_everything", "TrainResult",
           "train", "EpochTimer", "TimeBudget", "StepLimit", "TeacherForcingSchedule",
           "SCHEDULES", "DISTRIBUTIONS", "data_parallel", "TOKEN_WEIGHTINGS"]

INPUT_KEYS = ("encoder_inputs", "decoder_inputs")
LABEL_KEY = "labels"
#: ``token_weighting`` values of :func:`train`.
TOKEN_WEIGHTINGS = ("batch", "corpus")

# Training settings per model for the built-in corpus on a 2-core CPU, used by the lessons
# and `kerasattn train`; the measurements behind them are in docs/lessons.md ("Why these
# settings"). GRU decoders: a constant rate (3e-3 for seq2seq and bahdanau, no attention or
# one additive head; 2e-3 multi-head), batches of 64. Transformer decoders (post-norm): a
# 200-step warm-up and batches of 32; on a CPU their step is compute-bound (a batch of 32
# costs about half a batch of 64), so batches of 32 give about twice the updates per second
# of the budget. Both peak at 2e-3: with a 4.25-minute budget, `kerasattn train
# transformer_decoder_on_gru --backend B` scores test BLEU 96.1 / 98.3 / 94.7 (TF / JAX /
# torch), 92.5 / 92.5 / 88.1 with a peak of 1e-3 (under-trained when the budget ends); the
# `transformer` after 5 epochs on JAX, 95.2 against 90.3 (docs/lessons.md).
RECOMMENDED_TRAINING = {
    "seq2seq": dict(learning_rate=3e-3),
    "bahdanau": dict(learning_rate=3e-3),
    "bahdanau_multihead": dict(learning_rate=2e-3),
    "encoder_self_attention": dict(learning_rate=2e-3),
    "decoder_self_attention": dict(learning_rate=2e-3),
    "transformer_decoder_on_gru": dict(learning_rate=2e-3, warmup_steps=200, batch_size=32),
    "transformer": dict(learning_rate=2e-3, warmup_steps=200, batch_size=32),
}


def recommended_training(name: str, backend: str | None = None) -> dict:
    """Keyword arguments of :func:`train` that train model ``name`` well on the built-in corpus.

    Args:
        name: one of the seven model names.
        backend: ``"tensorflow"``, ``"jax"`` or ``"torch"`` (default: the current one).

    Returns:
        A new dict: the model's learning rate (and, for Transformer decoders, warm-up and
        batch size 32) from ``RECOMMENDED_TRAINING``, and ``bucket``: ``"source"`` on
        TensorFlow and torch (batches of similar source length: about half the padding;
        TensorFlow traces one shape-generic step, torch runs eagerly; in the built-in corpus
        a target's length follows its source's closely, so grouping by source groups both
        sides, and the lessons' figures are measured with it), False on JAX, where every new
        batch shape is a new XLA compilation (seconds each: a dozen bucket shapes cost more
        of a 2-minute budget than the padding they save).
    """
    if name not in RECOMMENDED_TRAINING:
        raise ValueError(f"recommended_training: `name` must be one of "
                         f"{', '.join(RECOMMENDED_TRAINING)}; received {name!r}")
    backend = backend or keras.backend.backend()
    return dict(bucket="source" if backend != "jax" else False, **RECOMMENDED_TRAINING[name])


# --------------------------------------------------------------------------- compile


def make_optimizer(learning_rate: float = 1e-3, weight_decay: float = 1e-4,
                   clipnorm: float | None = 1.0, warmup_steps: int | None = None,
                   ema_momentum: float | None = None) -> keras.optimizers.AdamW:
    """AdamW with gradient clipping, an optional warmup schedule and weight averaging.

    Args:
        learning_rate: float > 0. With ``warmup_steps`` it is the PEAK rate of the
            Transformer schedule (reached at ``step == warmup_steps``), otherwise constant.
        weight_decay: float >= 0, decoupled weight decay.
        clipnorm: float > 0 or None; gradients are rescaled so that their global norm is at
            most this value (``global_clipnorm`` in Keras terms).
        warmup_steps: int >= 1 or None (no schedule).
        ema_momentum: None, or a float in (0, 1): the optimizer also keeps the exponential
            moving average of the weights, ``w_avg = m * w_avg + (1 - m) * w`` after every
            step (an exponential form of Polyak and Juditsky's averaging, 1992), and
            ``model.fit`` replaces the weights by it when it ends. ``m = 0.998`` averages
            over about the last 1 / (1 - m) = 500 steps.

    Returns:
        A ``keras.optimizers.AdamW``. With a schedule, ``beta_2 = 0.98`` and
        ``epsilon = 1e-9`` as in Vaswani et al. (2017).
    """
    _check_positive("learning_rate", learning_rate)
    if not isinstance(weight_decay, (int, float)) or weight_decay < 0:
        raise ValueError(f"`weight_decay` must be a float >= 0; received "
                         f"weight_decay={weight_decay!r}.")
    if clipnorm is not None:
        _check_positive("clipnorm", clipnorm)
    if ema_momentum is not None and (isinstance(ema_momentum, bool)
                                     or not isinstance(ema_momentum, (int, float))
                                     or not 0.0 < ema_momentum < 1.0):
        raise ValueError("`ema_momentum` must be None or a float in (0, 1); received "
                         f"ema_momentum={ema_momentum!r}.")
    averaging = (dict(use_ema=True, ema_momentum=float(ema_momentum))
                 if ema_momentum is not None else {})
    if warmup_steps is None:
        return keras.optimizers.AdamW(learning_rate=learning_rate,
                                      weight_decay=weight_decay, global_clipnorm=clipnorm,
                                      **averaging)
    schedule = TransformerSchedule(peak_learning_rate=learning_rate, warmup_steps=warmup_steps)
    return keras.optimizers.AdamW(learning_rate=schedule, weight_decay=weight_decay,
                                  global_clipnorm=clipnorm, beta_1=0.9, beta_2=0.98,
                                  epsilon=1e-9, **averaging)


def compile_for_translation(model: keras.Model, *, learning_rate: float = 1e-3,
                            weight_decay: float = 1e-4, clipnorm: float | None = 1.0,
                            label_smoothing: float = 0.0, warmup_steps: int | None = None,
                            pad_id: int = 0, jit_compile="auto",
                            steps_per_execution: int = 1, loss=None, metrics=None,
                            tokens_per_batch: float | None = None,
                            ema_momentum: float | None = None) -> keras.Model:
    """Compile ``model`` with the kit's masked loss, masked accuracy and AdamW.

    Args:
        model: a translation model (logits ``(B, T, V)``).
        learning_rate: see :func:`make_optimizer`.
        weight_decay: see :func:`make_optimizer`.
        clipnorm: see :func:`make_optimizer`.
        label_smoothing: float in [0, 1); mass spread uniformly over the vocabulary.
        warmup_steps: see :func:`make_optimizer`.
        pad_id: label id ignored by the loss and the accuracy.
        jit_compile: ``"auto"`` picks the measured-fastest setting for the current backend
            (:func:`kerasattn.backend_utils.training_jit_compile`), or True / False.
        steps_per_execution: optimizer steps per compiled call (TensorFlow and JAX; torch
            requires 1 and any other value is replaced by 1 with a warning).
        loss: override the loss (default: masked sparse cross-entropy).
        metrics: override the metrics (default: ``[MaskedAccuracy]``).
        tokens_per_batch: None (each batch's loss is the mean over its real tokens), or
            the fixed divisor of the default loss (see
            :func:`kerasattn.metrics.masked_sparse_ce`).
        ema_momentum: see :func:`make_optimizer`.

    Returns:
        ``model``, compiled.
    """
    if not isinstance(label_smoothing, (int, float)) or not 0.0 <= label_smoothing < 1.0:
        raise ValueError("`label_smoothing` must be a float in [0, 1); received "
                         f"label_smoothing={label_smoothing!r}.")
    if loss is None or metrics is None:
        from kerasattn import metrics as ka_metrics

        if loss is None:
            loss = ka_metrics.MaskedSparseCategoricalCrossentropy(
                pad_id=pad_id, label_smoothing=float(label_smoothing),
                tokens_per_batch=tokens_per_batch)
        if metrics is None:
            metrics = [ka_metrics.MaskedAccuracy(pad_id=pad_id)]
    steps_per_execution = backend_utils.training_steps_per_execution(steps_per_execution)
    model.compile(optimizer=make_optimizer(learning_rate, weight_decay, clipnorm,
                                           warmup_steps, ema_momentum),
                  loss=loss, metrics=metrics,
                  jit_compile=backend_utils.training_jit_compile(jit_compile),
                  steps_per_execution=steps_per_execution)
    return model


# --------------------------------------------------------------------------- data


def _as_arrays(data, name: str):
    """``data`` as ``(x dict, labels)`` NumPy arrays, or ``(data, None)`` for a dataset.

    Accepted: the dict of :func:`kerasattn.data.make_arrays` (keys ``encoder_inputs``,
    ``decoder_inputs``, ``labels``), a tuple ``(x_dict, labels)``, or an iterable dataset
    (``keras.utils.PyDataset``, ``tf.data.Dataset``, ...) yielding ``(x_dict, labels)``
    batches, passed to ``model.fit`` unchanged.
    """
    if isinstance(data, dict):
        missing = [k for k in (*INPUT_KEYS, LABEL_KEY) if k not in data]
        if missing:
            raise ValueError(f"`{name}` is missing keys {missing}: expected a dict with keys "
                             f"{[*INPUT_KEYS, LABEL_KEY]} (as made by kerasattn.data."
                             f"make_arrays); received keys {sorted(data)}.")
        x, y = {k: data[k] for k in INPUT_KEYS}, data[LABEL_KEY]
    elif isinstance(data, (tuple, list)) and len(data) == 2 and isinstance(data[0], dict):
        x, y = data
        missing = [k for k in INPUT_KEYS if k not in x]
        if missing:
            raise ValueError(f"`{name}[0]` is missing keys {missing}: expected keys "
                             f"{list(INPUT_KEYS)}; received keys {sorted(x)}.")
    elif isinstance(data, keras.utils.PyDataset) or (
            hasattr(data, "__iter__")
            and not isinstance(data, (str, bytes, list, tuple, np.ndarray))):
        return data, None
    else:
        raise ValueError(f"`{name}` must be a dict of arrays, an (x, labels) tuple or a "
                         f"dataset; received {type(data).__name__}.")
    enc = np.asarray(x["encoder_inputs"])
    dec = np.asarray(x["decoder_inputs"])
    lab = np.asarray(y)
    for key, arr in (("encoder_inputs", enc), ("decoder_inputs", dec), (LABEL_KEY, lab)):
        if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"`{name}` {key!r} must be a 2-D integer array (N, length); "
                             f"received shape {arr.shape} dtype {arr.dtype}.")
    if dec.shape != lab.shape or enc.shape[0] != dec.shape[0]:
        raise ValueError(f"`{name}`: expected encoder_inputs (N, S) and decoder_inputs and "
                         f"labels both (N, T); received encoder_inputs {enc.shape}, "
                         f"decoder_inputs {dec.shape}, labels {lab.shape}.")
    x = {"encoder_inputs": enc.astype("int32"), "decoder_inputs": dec.astype("int32")}
    return x, lab.astype("int32")


def _take(x, y, n):
    return {k: v[:n] for k, v in x.items()}, y[:n]


# --------------------------------------------------------------------------- seeding


def seed_everything(model: keras.Model | None, seed: int) -> None:
    """Seed Python, NumPy and the backend, and re-seed the dropout layers of ``model``.

    Keras draws each dropout layer's seed when the layer is constructed, so without the
    re-seed two runs from the same initial weights could still draw different dropout
    masks. Each ``SeedGenerator`` state becomes ``[f(seed, i), 0]`` for its index ``i``.

    Args:
        model: the model to re-seed (or None).
        seed: int >= 0.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be an int >= 0; received seed={seed!r}.")
    keras.utils.set_random_seed(seed)
    if model is None:
        return
    for i, v in enumerate(checkpointing._seed_state_variables(model)):
        value = (seed * 1_000_003 + 7_919 * (i + 1)) % (2 ** 31 - 1)
        v.assign(keras.ops.convert_to_tensor(np.array([value, 0]), dtype=v.dtype))


# --------------------------------------------------------------------------- train


@dataclasses.dataclass
class TrainResult:
    """What :func:`train` returns.

    Attributes:
        history: per-epoch logs (``loss``, ``masked_accuracy``, ``val_loss``...), including
            epochs of a run this one resumed.
        epochs_run: epochs run in total (resumed ones included; one a budget cut short
            counts).
        initial_epoch: the epoch this call started from (> 0 after a resume).
        best_epoch: 1-based epoch with the lowest monitored loss; with early stopping its
            weights are the model's weights when :func:`train` returns (without, the last
            epoch's are).
        best_loss: the monitored loss at ``best_epoch`` (``val_loss``, or ``loss`` without
            validation data).
        stopped_early: whether early stopping ended training.
        train_seconds: wall time of the training passes of this call (validation excluded,
            first-epoch compilation included).
        target_tokens_per_epoch: non-pad label tokens in one epoch (None for a dataset).
        tokens_per_second: training throughput in target tokens/s over this call (an epoch
            a budget cut short counts the share of its batches it ran).
        checkpoint_dir: where checkpoints were written, or None.
        keras_history: the ``keras.callbacks.History`` of this call's ``fit``.
        torch_threads: torch's intra-op threads during ``fit`` (None on other backends).
    """

    history: dict
    epochs_run: int
    initial_epoch: int
    best_epoch: int | None
    best_loss: float | None
    stopped_early: bool
    train_seconds: float
    target_tokens_per_epoch: int | None
    tokens_per_second: float | None
    checkpoint_dir: str | None
    keras_history: object = dataclasses.field(default=None, repr=False)
    torch_threads: int | None = None


def train(model: keras.Model, train_data, valid_data=None, *, epochs: int = 20,
          batch_size: int = 64, learning_rate: float = 1e-3, weight_decay: float = 1e-4,
          clipnorm: float | None = 1.0, label_smoothing: float = 0.1,
          warmup_steps: int | None = None, early_stopping_patience: int | None = 3,
          checkpoint_dir: str | None = None, resume: bool = False, seed: int = 0,
          verbose: int = 0, callbacks=None, distribution=None, jit_compile="auto",
          steps_per_execution: int = 1, shuffle: bool = True, bucket: bool | str = False,
          pad_multiple: int = 8, torch_threads="auto", pad_id: int = 0, loss=None,
          metrics=None, teacher_forcing=None, token_weighting: str = "batch",
          ema_momentum: float | None = None) -> TrainResult:
    """Compile and fit a translation model: the one training path of the kit.

    Args:
        model: a model from :func:`kerasattn.models.build_model` (or any model with the same
            inputs and logits). Compiled here (any previous compile is replaced).
        train_data: dict of arrays from ``kerasattn.data.make_arrays`` (``encoder_inputs
            (N, S)``, ``decoder_inputs (N, T)``, ``labels (N, T)``), a tuple ``(x_dict,
            labels)``, or a dataset yielding such batches (then ``batch_size`` and
            ``shuffle`` are the dataset's business).
        valid_data: same forms, or None (then early stopping and the best checkpoint follow
            the training loss).
        epochs: maximum number of epochs (counted from 0, including resumed ones).
        batch_size: pairs per optimizer step.
        learning_rate: constant rate, or the schedule's peak with ``warmup_steps``.
        weight_decay: AdamW decoupled weight decay.
        clipnorm: global gradient-norm clip, or None.
        label_smoothing: float in [0, 1).
        warmup_steps: None, or the warmup length of the Transformer schedule.
        early_stopping_patience: epochs without improvement before stopping, or None to
            train until ``epochs`` or a time budget ends training, on the last step's
            weights, or their moving average with ``ema_momentum``. With early stopping the
            best weights are restored at the end, also when a time budget ends training.
        checkpoint_dir: None, or a directory for crash-safe checkpoints (every epoch).
        resume: continue from ``checkpoint_dir/last.ckpt.npz`` if it exists (weights,
            optimizer state, epoch counter, early-stopping state, history).
        seed: int >= 0; same seed + same initial weights + same backend = same losses.
        verbose: passed to ``model.fit``.
        callbacks: extra Keras callbacks.
        distribution: None, ``"data_parallel"`` or a ``keras.distribution.Distribution``
            (JAX only). ``batch_size`` must be a multiple of the device count.
        jit_compile: ``"auto"`` (the measured-fastest setting per backend), True or False.
        steps_per_execution: optimizer steps per compiled call (not on torch).
        shuffle: shuffle the training pairs every epoch (epoch ``e`` with seed
            ``seed + e``, so a resumed run sees the same order as an uninterrupted one).
        bucket: batch pairs of similar length together and trim each batch to its longest
            row (rounded up to ``pad_multiple``): less padding, a few more shapes to
            compile on JAX (TensorFlow traces one shape-generic step; torch runs
            eagerly). True (or ``"target"``) groups by target length,
            then source length; ``"source"`` by source length only (see
            :func:`kerasattn.data.batch_plan`). Batches are made by
            ``kerasattn.data.TranslationDataset``.
        pad_multiple: with ``bucket``, batch widths are multiples of this (larger: fewer
            distinct shapes for JAX to compile, more padding).
        torch_threads: torch backend only: intra-op threads while training (restored
            after); ``"auto"`` uses the cores not already busy
            (:func:`kerasattn.backend_utils.auto_torch_threads`), an int sets it, None
            leaves torch's setting alone.
        pad_id: the padding id ignored by loss and accuracy.
        loss: override the loss (default: masked cross-entropy with ``label_smoothing``).
        metrics: override the metrics (default: masked accuracy).
        teacher_forcing: None (full teacher forcing), or scheduled sampling (Bengio et al.,
            2015) for a model whose recurrent decoder was built with
            ``scheduled_sampling=True``: a :class:`TeacherForcingSchedule`, a ratio in
            [0, 1], or a spec string (see :meth:`TeacherForcingSchedule.parse`, e.g.
            ``"linear:500:0.5"``).
        token_weighting: how the default loss weighs the tokens of a batch. ``"batch"``:
            the mean over the batch's real tokens, so a batch of one-word sentences
            weighs as much as a batch of long ones and each of its tokens many times
            more (with ``bucket`` every batch holds sentences of one length).
            ``"corpus"``: the sum over its real tokens divided by the mean real tokens
            per batch of ``train_data``, so that every target token weighs the same
            (needs arrays, not a dataset). ``loss`` and ``val_loss`` are then that sum
            over the mean, not a mean per token: resume a run with the weighting it
            started with (its saved best loss is on that scale).
        ema_momentum: None, or a float in (0, 1): training ends on the exponential moving
            average of the weights over the steps (see :func:`make_optimizer`), not on the
            last step's weights. The validation loss of each epoch is measured on the
            weights being trained; with early stopping the best epoch's restored weights
            replace the average. Resume with the momentum a run started with (the averages
            are optimizer variables of its checkpoint).

    Returns:
        A :class:`TrainResult`.

    Raises:
        ValueError: on malformed data or arguments, naming the argument.
    """
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"`epochs` must be an int >= 1; received epochs={epochs!r}.")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"`batch_size` must be an int >= 1; received "
                         f"batch_size={batch_size!r}.")
    if early_stopping_patience is not None and (
            not isinstance(early_stopping_patience, int) or early_stopping_patience < 0):
        raise ValueError("`early_stopping_patience` must be an int >= 0 or None; received "
                         f"early_stopping_patience={early_stopping_patience!r}.")
    if resume and checkpoint_dir is None:
        raise ValueError("`resume=True` needs a `checkpoint_dir`; received "
                         "checkpoint_dir=None.")
    backend_utils.torch_threads(torch_threads)              # validates the argument
    backend_utils.jax_compilation_cache()                   # JAX only
    forcing = None
    if teacher_forcing is not None:
        forcing = (teacher_forcing if isinstance(teacher_forcing, TeacherForcingSchedule)
                   else TeacherForcingSchedule.parse(teacher_forcing))
        forcing.decoder_of(model)                           # validates the model
    if token_weighting not in TOKEN_WEIGHTINGS:
        raise ValueError(f"`token_weighting` must be one of {TOKEN_WEIGHTINGS}; received "
                         f"token_weighting={token_weighting!r}.")
    dist = resolve_distribution(distribution)
    x, y = _as_arrays(train_data, "train_data")
    validation = None
    if valid_data is not None:
        vx, vy = _as_arrays(valid_data, "valid_data")
        validation = vx if vy is None else (vx, vy)
    if dist is not None:
        n_dev = device_count(dist)
        if batch_size % n_dev:
            raise ValueError(f"`batch_size` must be a multiple of the {n_dev} devices of the "
                             f"distribution; received batch_size={batch_size}.")
        if y is not None:
            x, y = fit_to_devices(x, y, batch_size, n_dev, "train_data")
        if valid_data is not None and vy is not None:
            validation = fit_to_devices(vx, vy, batch_size, n_dev, "valid_data")

    tokens_per_batch = None
    if token_weighting == "corpus":                 # the rows that train, after fit_to_devices
        if y is None:
            raise ValueError("`token_weighting='corpus'` needs train_data as arrays (it "
                             "counts the tokens per batch); received a dataset.")
        if loss is not None:
            raise ValueError("`token_weighting='corpus'` weighs the default loss; pass "
                             "loss=None or token_weighting='batch'.")
        real = int(np.sum(np.asarray(y) != pad_id))
        tokens_per_batch = max(1.0, real / -(-len(y) // batch_size))   # mean per batch
    monitor = "val_loss" if valid_data is not None else "loss"
    early = None
    if early_stopping_patience is not None:
        early = checkpointing.ResumableEarlyStopping(early_stopping_patience, monitor=monitor,
                                                     verbose=int(verbose > 0))
    scope = dist.scope() if dist is not None else contextlib.nullcontext()
    with scope:
        if dist is not None:
            lay_out_variables(model, dist)
        seed_everything(model, seed)
        compile_for_translation(model, learning_rate=learning_rate,
                                weight_decay=weight_decay, clipnorm=clipnorm,
                                label_smoothing=label_smoothing, warmup_steps=warmup_steps,
                                pad_id=pad_id, jit_compile=jit_compile,
                                steps_per_execution=steps_per_execution, loss=loss,
                                metrics=metrics, tokens_per_batch=tokens_per_batch,
                                ema_momentum=ema_momentum)
        initial_epoch, meta, done, resume_best = 0, {}, False, None
        if checkpoint_dir is not None:
            clean_stale_temp_files(checkpoint_dir)
            last = os.path.join(checkpoint_dir, checkpointing.LAST_CHECKPOINT)
            if resume and os.path.exists(last):
                meta, resume_best = checkpointing.load_training_state(last, model)
                initial_epoch = int(meta["epoch"])
                done = bool(meta.get("early_stopped")) or initial_epoch >= epochs
                if early is not None and "early_stopping" in meta:
                    early.set_state(meta["early_stopping"], resume_best)
        timer = EpochTimer()
        cbs = [timer]
        if early is not None:
            cbs.append(early)
        ckpt = None
        if checkpoint_dir is not None:
            ckpt = checkpointing.TrainingCheckpoint(checkpoint_dir, early_stopping=early,
                                                    monitor=monitor, resume_meta=meta)
            cbs.append(ckpt)                      # after `early`: saves its updated state
        if forcing is not None:
            cbs.append(forcing)
        cbs.extend(callbacks or [])
        keras_history = used_threads = None
        if done:                                  # nothing left: restore the best weights
            if early is not None and resume_best:
                model.set_weights(resume_best)
            elif ema_momentum is not None:        # or the average, as fit would have
                model.optimizer.finalize_variable_values(model.trainable_variables)
        else:
            from kerasattn.data import TranslationDataset

            if y is not None:
                # epoch e is shuffled with seed + e, also after a resume
                x = TranslationDataset({**x, LABEL_KEY: y}, batch_size=batch_size,
                                       shuffle=shuffle, seed=seed + initial_epoch,
                                       bucket=bucket, pad_multiple=pad_multiple)
            if isinstance(validation, tuple):
                validation = TranslationDataset({**validation[0], LABEL_KEY: validation[1]},
                                                batch_size=batch_size, shuffle=False,
                                                bucket=bucket, pad_multiple=pad_multiple)
            # Optimizer slots made now, not inside the first train step: on TensorFlow a
            # step that creates variables is traced twice (seconds per model).
            if not model.optimizer.built:
                model.optimizer.build(model.trainable_variables)
            with backend_utils.torch_threads(torch_threads) as threads:
                used_threads = threads.n
                keras_history = model.fit(x, epochs=epochs, initial_epoch=initial_epoch,
                                          validation_data=validation, callbacks=cbs,
                                          verbose=verbose)

    history = {k: list(v) for k, v in meta.get("history", {}).items()}
    if keras_history is not None:
        for k, v in keras_history.history.items():
            history.setdefault(k, []).extend(float(a) for a in v)
    monitored = history.get(monitor, [])
    best_epoch = int(np.argmin(monitored)) + 1 if monitored else None
    if early is not None and monitored and keras_history is not None:
        best_epoch = int(early.best_epoch) + 1
    tokens = int(np.sum(y != pad_id)) if y is not None else None
    seconds = float(sum(timer.seconds))
    n_run = len(timer.seconds)
    epochs_trained = float(n_run)  # in whole epochs: a cut epoch counts the batches it ran
    n_batches = len(x) if tokens and hasattr(x, "__len__") and not isinstance(x, dict) \
        else None
    if n_batches:
        epochs_trained = sum(min(b, n_batches) / n_batches for b in timer.batches)
    return TrainResult(
        history=history,
        epochs_run=len(monitored) if monitored else initial_epoch + n_run,
        initial_epoch=initial_epoch,
        best_epoch=best_epoch,
        best_loss=float(monitored[best_epoch - 1]) if best_epoch else None,
        stopped_early=bool(early is not None and early.stopped_epoch > 0) or
        bool(meta.get("early_stopped")),
        train_seconds=seconds,
        target_tokens_per_epoch=tokens,
        tokens_per_second=(tokens * epochs_trained / seconds) if tokens and seconds > 0
        else None,
        checkpoint_dir=None if checkpoint_dir is None else os.path.abspath(checkpoint_dir),
        keras_history=keras_history, torch_threads=used_threads)
