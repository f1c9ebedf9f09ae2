"""Building and training one of the seven models for a lesson (``kerasattn.training``), and
``kerasattn train``: train, score on the test split, save a checkpoint."""
from __future__ import annotations

import dataclasses
import sys
import time

from kerasattn.course.data import LessonData
from kerasattn.course.options import QUICK_HPARAMS, Settings


@dataclasses.dataclass
class Trained:
    """A trained model and how its training went."""

    name: str
    model: object
    history: dict
    train_seconds: float
    tokens_per_second: float | None
    epochs_run: int
    params: int
    hparams: dict
    torch_threads: int | None = None  # intra-op threads torch trained with (else None)
    recipe: object = None       # the data-driven Recipe on a real corpus (else None)
    precision: str = "float32"  # the Keras dtype policy it trained with (the returned
    #                             model is float32 either way)


def model_hparams(name: str, quick: bool, **overrides) -> dict:
    """Hyperparameters for ``name``: the model's defaults, shrunk in quick mode."""
    import dataclasses as dc

    from kerasattn.models import registry

    fields = {f.name for f in dc.fields(registry.get_config_class(name))}
    hp = {k: v for k, v in QUICK_HPARAMS.items() if k in fields} if quick else {}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(f"hyperparameter(s) {unknown} are not fields of model {name!r}; "
                         f"expected some of {sorted(fields)}")
    hp.update(overrides)
    return hp


def build(name: str, data: LessonData, quick: bool = False, **hparams):
    """``kerasattn.models.build_model`` with the vocabulary sizes of ``data``."""
    from kerasattn.models import build_model

    hp = model_hparams(name, quick, **hparams)
    return build_model(name, len(data.src_vocab), len(data.tgt_vocab), **hp), hp


def copy_weights_by_path(source, target) -> list[str]:
    """Copy every weight of ``source`` into the weight of ``target`` with the same path
    (``"attention_decoder/attention/W_q"``...) and shape.

    A model built with an addition (``coverage=True``, ``scheduled_sampling=True``) has
    every weight of the plain model plus its own: training it from the copy continues the
    plain model's training with the addition switched on.

    Returns:
        The paths of ``target``'s weights that kept their initial values (no match).
    """
    from keras import ops

    have = {w.path: w for w in source.weights}
    kept = []
    for w in target.weights:
        src = have.get(w.path)
        if src is not None and tuple(src.shape) == tuple(w.shape):
            # a copy, not the same buffer: JAX's compiled training step donates (frees)
            # the buffers of the weights it updates, which would delete the source's too
            w.assign(ops.convert_to_numpy(src.value))
        else:
            kept.append(w.path)
    return kept


def train_model(name: str, data: LessonData, settings: Settings, verbose: int | None = None,
                model_kwargs: dict | None = None, start_from=None,
                **train_kwargs) -> Trained:
    """Build and train model ``name`` on ``data`` with the kit's training path.

    Args:
        name: one of the seven model names.
        data: from :func:`load_data`.
        settings: epochs, batch size, seed, quick.
        verbose: Keras progress output (default: a progress bar per epoch, none when quick).
        model_kwargs: hyperparameter overrides for ``build_model``.
        start_from: a trained model of the same architecture (maybe without the
            additions of ``model_kwargs``): its weights are copied in
            (:func:`copy_weights_by_path`) and training continues from them, with a fresh
            optimizer.
        **train_kwargs: extra arguments of ``kerasattn.training.train`` (label smoothing,
            weight decay, warmup...).

    Returns:
        A :class:`Trained`.
    """
    import keras

    from kerasattn import training
    from kerasattn.backend_utils import set_mixed_precision

    set_mixed_precision(settings.mixed_precision)   # before the model is built
    keras.utils.set_random_seed(settings.seed)
    budget = 60.0 * settings.minutes if settings.minutes else None
    recipe = data.recipe(name, budget) if getattr(data, "real", False) else None
    hparams = dict(model_kwargs or {})
    if recipe is not None and not settings.quick:
        hparams = {**recipe.model_kwargs, **hparams}
    model, hp = build(name, data, quick=settings.quick, **hparams)
    if start_from is not None:
        copy_weights_by_path(start_from, model)
    if verbose is None:
        verbose = 0 if settings.quick else (1 if sys.stdout.isatty() else 2)
    kwargs = dict(epochs=settings.epochs, batch_size=settings.batch_size, seed=settings.seed,
                  verbose=verbose)
    if settings.quick:  # one shape per model (compiling costs more than it saves)
        pass
    elif recipe is not None:  # a real corpus: the settings chosen from its figures
        kwargs.update({k: v for k, v in recipe.train.items() if k != "epochs"})
    else:
        kwargs.update(training.recommended_training(name))
    kwargs.update(train_kwargs)
    if budget:
        kwargs["callbacks"] = list(kwargs.get("callbacks") or []) + [
            training.TimeBudget(budget)]
    start = time.perf_counter()
    result = training.train(model, data.train, data.valid, **kwargs)
    wall = time.perf_counter() - start
    precision = keras.config.dtype_policy().name
    if precision != "float32":
        # mixed precision keeps float32 master weights: decode and save in float32
        set_mixed_precision(None)
        trained_model = model
        model, _ = build(name, data, quick=settings.quick, **hparams)
        model.set_weights(trained_model.get_weights())
    return Trained(name=name, model=model, history=result.history,
                   train_seconds=float(result.train_seconds or wall),
                   tokens_per_second=result.tokens_per_second, epochs_run=result.epochs_run,
                   params=int(model.count_params()), hparams=hp,
                   torch_threads=result.torch_threads, recipe=recipe,
                   precision=precision)


def train_and_save(name: str, settings: Settings, beam: int = 1) -> dict:
    """``kerasattn train``: train ``name``, score it on the test split, save a checkpoint.

    Args:
        name: one of the seven model names.
        settings: from :func:`kerasattn.course.options.settings_from_args`; the checkpoint
            goes to ``settings.out``.
        beam: ``k > 1`` also scores the test split decoded by beam search of width ``k``
            (the translator's length penalty), kept under ``"beam"``.

    Returns:
        The checkpoint's ``meta.json`` record (scores, timings, settings, history,
        decoding defaults).
    """
    import keras

    from kerasattn.course.data import load_data, spread
    from kerasattn.course.options import check_model_name
    from kerasattn.course.translate import lesson_translator

    check_model_name(name)
    d = load_data(settings)
    print(f"data: {d.description}; vocabularies {len(d.src_vocab)} ({d.src_lang}) / "
          f"{len(d.tgt_vocab)} ({d.tgt_lang}), {d.tokenizer} tokens", flush=True)
    recipe = d.recipe(name, 60.0 * settings.minutes if settings.minutes else None)
    if recipe is not None:
        print(recipe.describe() + ("\n  (quick mode: tiny model, 1 epoch, the recipe's "
                                   "tokenizer only)" if settings.quick else ""), flush=True)
    trained = train_model(name, d, settings)
    from kerasattn import metrics

    srcs = [s for s, _ in d.test_pairs]
    refs = [t for _, t in d.test_pairs]
    translator = lesson_translator(trained.model, d, settings, name)

    def scores(k: int) -> dict:
        """BLEU and exact match of the test split decoded with beam width ``k``."""
        start = time.perf_counter()
        hyps = translator.translate(srcs, normalized=True, detokenized=False, beam=k)
        got = dict(bleu=float(metrics.corpus_bleu(hyps, refs)),
                   exact_match=float(metrics.exact_match(hyps, refs)),
                   decode_seconds=time.perf_counter() - start)
        if d.real:
            # one translation per distinct test source, scored against all of its references
            first = dict(zip(srcs, hyps))
            grouped = metrics.evaluate_grouped([first[s] for s in d.test_sources],
                                               d.test_references, tokenize=d.bleu_tokenize)
            got.update(bleu=float(metrics.multi_reference_bleu(
                           hyps, [[r] for r in refs], tokenize=d.bleu_tokenize)),
                       bleu_single=grouped["bleu_single"], bleu_multi=grouped["bleu_multi"],
                       exact_match_multi=grouped["exact_match_multi"],
                       test_sources=grouped["sources"])
        return got

    result = dict(model=name, backend=keras.backend.backend(), epochs=trained.epochs_run,
                  train_seconds=trained.train_seconds,
                  tokens_per_second=trained.tokens_per_second or 0.0,
                  params=trained.params, hparams=trained.hparams, **scores(1),
                  settings=settings.signature(), example_source=srcs[0],
                  src_lang=d.src_lang, tgt_lang=d.tgt_lang, tokenizer=d.tokenizer,
                  precision=trained.precision,
                  history=trained.history,
                  # a fixed sample of test pairs: the backend demo scores these everywhere
                  samples=[list(p) for p in spread(d.test_pairs, 32)])
    if beam > 1:
        result["beam"] = dict(width=beam, **scores(beam))
    if d.real:
        result.update(bleu_tokenize=d.bleu_tokenize, recipe=recipe.reasons,
                      data=str(settings.data))
        result["example_source"] = min(d.test_sources, key=lambda s: abs(len(s) - 30))
    translator.meta.update(result)
    translator.save(settings.out)
    return translator.meta
