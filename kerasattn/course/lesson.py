"""The :class:`Lesson` runner: data, training, scoring, figures and ``results.json``."""
from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path
from typing import Sequence

from kerasattn.course.data import LessonData, load_data, spread
from kerasattn.course.options import Settings
from kerasattn.course.printing import clip, format_table, heading
from kerasattn.course.train import Trained, train_model
from kerasattn.course.translate import lesson_translator
from kerasattn.files import atomic_write

LENGTH_BUCKETS = (0, 10, 20, 30, float("inf"))
"""Source-length buckets of BLEU by length: 1-10, 11-20, 21-30, 31+ words."""


# ---------------------------------------------------------------------------------------
# The lesson object
# ---------------------------------------------------------------------------------------
class Lesson:
    """Runs one lesson: data, training, scoring, figures and the record of results.

    Args:
        number: the lesson number (0-6).
        title: shown in the header.
        settings: from :func:`parse_lesson_args`.
    """

    def __init__(self, number: int, title: str, settings: Settings):
        import keras

        self.number, self.title, self.settings = number, title, settings
        self.backend = keras.backend.backend()
        self.out = Path(settings.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.figures: list[Path] = []
        self.results: dict[str, dict] = {}
        self.histories: dict[str, dict] = {}
        self.measurements: dict[str, object] = {}
        self._data = None
        self._last_trained: Trained | None = None
        self._pictured: dict[tuple, object] = {}
        self._start = time.perf_counter()
        from kerasattn.backend_utils import compute_device

        self.device = compute_device()
        mode = "quick (tiny, for tests)" if settings.quick else "default"
        precision = f" | precision: {settings.mixed_precision}" if \
            settings.mixed_precision else ""
        print(f"Lesson {number:02d}: {title}\nbackend: {self.backend} on {self.device} | "
              f"mode: {mode} | epochs: {settings.epochs}{precision} | figures -> "
              f"{self.out}/", flush=True)

    # -- data --------------------------------------------------------------------------
    @property
    def data(self) -> LessonData:
        if self._data is None:
            from kerasattn._env import UsageError

            try:
                self._data = load_data(self.settings)
            except UsageError as exc:  # e.g. --data LANG with no network: no traceback
                print(f"lesson {self.number:02d}: error: {exc}", file=sys.stderr)
                raise SystemExit(2) from None
            d = self._data
            print(f"data: {d.description}; vocabularies {len(d.src_vocab)} ({d.src_lang}) "
                  f"/ {len(d.tgt_vocab)} ({d.tgt_lang}), {d.tokenizer} tokens", flush=True)
            for line in d.text_reasons.values():
                print(f"  - {line}")
        return self._data

    # -- training and scoring ------------------------------------------------------------
    def train(self, name: str, model_kwargs: dict | None = None, label: str | None = None,
              data: LessonData | None = None, start_from: Trained | None = None,
              budget_share: float = 1.0, **train_kwargs) -> Trained:
        """Build and train model ``name``; print the time and parameter count.

        Args:
            name: one of the seven model names.
            model_kwargs: hyperparameter overrides (e.g. ``{"coverage": True}``).
            label: what the lesson calls this run in its tables and figures (default
                ``name``).
            data: train on this instead of the lesson's data (same test split).
            start_from: continue from this trained model's weights
                (:func:`kerasattn.course.train.train_model`).
            budget_share: this run's wall-clock budget in units of the per-model budget
                (``settings.minutes``).
            **train_kwargs: passed to :func:`kerasattn.training.train`.
        """
        import dataclasses

        label = label or name
        heading(f"training {label}")
        settings = self.settings
        if budget_share != 1.0 and settings.minutes:
            settings = dataclasses.replace(settings, minutes=settings.minutes * budget_share)
        t = train_model(name, data or self.data, settings, model_kwargs=model_kwargs,
                        start_from=None if start_from is None else start_from.model,
                        **train_kwargs)
        t.name = label
        self.histories[label] = t.history
        if data is None or data.src_vocab is self.data.src_vocab:
            self._last_trained = t     # the model example_sentence asks by default
        if t.recipe is not None:
            print(t.recipe.describe() + (" (quick mode: tiny model, 1 epoch)"
                                         if self.settings.quick else ""), flush=True)
        tps = f"{t.tokens_per_second:,.0f} target tokens/s" if t.tokens_per_second else ""
        threads = f" (torch: {t.torch_threads} threads)" if t.torch_threads else ""
        print(f"{label}: {t.params:,} parameters, {t.epochs_run} epochs in "
              f"{t.train_seconds:.1f} s {tps}{threads}", flush=True)
        return t

    def translator(self, trained: Trained, data: LessonData | None = None):
        """``trained`` as a :class:`kerasattn.inference.Translator` with this lesson's data
        (or ``data``: its vocabularies and languages) and decoding settings."""
        return lesson_translator(trained.model, data or self.data, self.settings,
                                 trained.name)

    def evaluate(self, trained: Trained, beam: int = 1, data: LessonData | None = None
                 ) -> dict:
        """BLEU and exact match on the test split (greedy unless ``beam`` > 1) of the
        lesson's data, or of ``data``."""
        from kerasattn import metrics

        d = data or self.data
        srcs = [s for s, _ in d.test_pairs]
        refs = [t for _, t in d.test_pairs]
        start = time.perf_counter()
        hyps = self.translator(trained, d).translate(srcs, beam=beam, normalized=True,
                                                     detokenized=False,
                                                     progress=not self.settings.quick)
        decode_seconds = time.perf_counter() - start
        res = dict(model=trained.name, params=trained.params,
                   train_seconds=trained.train_seconds,
                   tokens_per_second=trained.tokens_per_second,
                   epochs=trained.epochs_run, torch_threads=trained.torch_threads,
                   bleu=float(metrics.corpus_bleu(hyps, refs)),
                   exact_match=float(metrics.exact_match(hyps, refs)),
                   decode_seconds=decode_seconds, backend=self.backend,
                   n_test=len(refs))
        if d.real:
            # a real corpus: lengths in the tokenizer's tokens, and BLEU against every
            # reference of each distinct source (Tatoeba has several translations of many)
            from kerasattn.inference import tokens_of

            lens = [" ".join(tokens_of(d.src_vocab, s)) for s in srcs]
            res["by_length"] = metrics.bleu_by_length(lens, hyps, refs, buckets=LENGTH_BUCKETS)
            first = {}
            for s, h in zip(srcs, hyps):
                first.setdefault(s, h)
            grouped = metrics.evaluate_grouped([first[s] for s in d.test_sources],
                                               d.test_references, tokenize=d.bleu_tokenize)
            res["bleu"] = float(metrics.multi_reference_bleu(hyps, [[r] for r in refs],
                                                             tokenize=d.bleu_tokenize))
            res.update(bleu_single=grouped["bleu_single"], bleu_multi=grouped["bleu_multi"],
                       bleu_tokenize=d.bleu_tokenize, n_sources=grouped["sources"])
        else:
            res["by_length"] = metrics.bleu_by_length(srcs, hyps, refs,
                                                      buckets=LENGTH_BUCKETS)
        res["_hyps"] = hyps
        self.results[trained.name] = res
        print(f"{trained.name}: test BLEU {res['bleu']:.1f}, exact match "
              f"{res['exact_match']:.1%} on {len(refs)} sentences (decoded in "
              f"{decode_seconds:.1f} s)", flush=True)
        if d.real:
            print(f"{trained.name}: {res['n_sources']} distinct test sources: BLEU "
                  f"{res['bleu_single']:.1f} against one reference, {res['bleu_multi']:.1f} "
                  f"against all of each source's references (sacrebleu, tokenize="
                  f"{d.bleu_tokenize})", flush=True)
        return res

    def samples(self, trained: Trained, n: int = 5) -> None:
        """Print ``n`` test translations next to their references (short to long)."""
        res = self.results.get(trained.name)
        pairs = self.data.test_pairs
        src_vocab = self.data.src_vocab   # tokens, not spaces: Japanese has none
        idx = spread(sorted(range(len(pairs)), key=lambda i: len(src_vocab.encode(pairs[i][0]))),
                     n)
        if res is None:
            hyps = self.translator(trained).translate([pairs[i][0] for i in idx],
                                                      normalized=True, detokenized=False)
        else:
            hyps = [res["_hyps"][i] for i in idx]
        rows = []
        for i, h in zip(idx, hyps):
            src, ref = pairs[i]
            rows.append([clip(src), clip(ref), ("= " if h == ref else "x ") + clip(h)])
        print(format_table(["source", "reference", f"{trained.name} (= exact)"], rows,
                           align="lll"))

    # -- figures -------------------------------------------------------------------------
    def _path(self, fname: str) -> Path:
        path = self.out / fname
        self.figures.append(path)
        return path

    def example_sentence(self, min_len: int = 6, max_len: int = 12,
                         trained: Trained | None = None) -> tuple[str, str]:
        """The test pair the lesson's figures picture: ``(source, reference)``.

        Built-in corpus: the first test pair of ``min_len`` to ``max_len`` words. Real
        corpus (``--data``): the choice of :meth:`pictured` for ``trained`` (default: the
        model this lesson trained last), a source of ``min_len`` to ``max_len`` tokens with
        no unknown token whose translation has no ``<unk>`` and the highest sentence BLEU.

        Args:
            min_len, max_len: the source length range (words, or the tokenizer's tokens).
            trained: the model whose translations decide on a real corpus.
        """
        d = self.data
        if d.real:
            p = self.pictured(trained, min_len=min_len, max_len=max_len)
            return p.source, p.reference
        pairs = d.test_pairs
        mid = [p for p in pairs if min_len <= len(p[0].split()) <= max_len] or pairs
        return mid[0]

    def pictured(self, trained: Trained | None = None, min_len: int = 6, max_len: int = 12):
        """The real-corpus test sentence the figures of ``trained`` picture, and why.

        The rule is :func:`kerasattn.course.pictured.choose_pictured`'s: up to 64 test
        sources of ``min_len`` to ``max_len`` tokens with no unknown token (the nearest
        lengths when none has such a length), translated in one batch by ``trained``;
        among those whose translation has no ``<unk>`` and is not one token repeated, the
        one with the highest sentence BLEU against the source's references, ties to the
        most concentrated attention. The choice is printed once and kept for the figures
        and the explorer.

        Args:
            trained: the model (default: the one this lesson trained last; with none, the
                choice looks at the sources alone).
            min_len, max_len: the source length range, in tokens.

        Returns:
            A :class:`kerasattn.course.pictured.Pictured`.
        """
        from kerasattn.course.pictured import choose_pictured
        from kerasattn.inference import output_cap

        trained = trained or self._last_trained
        key = (None if trained is None else id(trained.model), min_len, max_len)
        if key in self._pictured:
            return self._pictured[key]
        d = self.data
        decode = None
        if trained is not None:
            translator = self.translator(trained)

            def decode(sources):
                # one output cap for all: the candidates decode as one batch
                cap = self.settings.decode_defaults.get("max_length") or output_cap(
                    max(len(d.src_vocab.encode(s)) for s in sources))
                return translator.decode(sources, normalized=True, detokenized=False,
                                         attention=True, max_length=cap,
                                         batch_size=len(sources))

        p = choose_pictured(d.test_pairs, d.src_vocab, decode, min_len=min_len,
                            max_len=max_len, tokenize=d.bleu_tokenize)
        print(p.describe(), flush=True)
        self._pictured[key] = p
        return p

    def attention_figure(self, trained: Trained, fname: str, sentence: str | None = None,
                         kind: str = "cross", layer: int = -1, title: str | None = None):
        """Heatmap of the attention ``trained`` uses when translating ``sentence``.

        Args:
            trained: the model.
            fname: the PNG's file name in the lesson's output folder.
            sentence: the source to translate (default: :meth:`example_sentence` of
                ``trained``).
            kind: ``"cross"`` (over the source) or ``"self"`` (over the earlier outputs).
            layer: the decoder layer (-1: the last).
            title: the figure's title (default: the model and the kind).

        Returns:
            The Figure, or None when ``trained`` has no attention of that kind.
        """
        from kerasattn import plots

        if sentence is None:
            sentence = self.example_sentence(trained=trained)[0]
        # the translation :meth:`pictured` chose this sentence by, when it is one
        t = next((p.translation for (model, _, _), p in self._pictured.items()
                  if model == id(trained.model) and p.source == sentence
                  and p.translation is not None), None)
        if t is None:
            t = self.translator(trained).decode([sentence], attention=True)[0]
        w = t.attention_map(kind, layer)                         # (h, T_out, K)
        if w is None:
            print(f"{trained.name} has no {kind}-attention to draw")
            return None
        keys = t.source_tokens if kind == "cross" else ["<bos>"] + t.target_tokens[:-1]
        label = title or f"{trained.name}: {kind}-attention"
        return plots.attention_heatmap(
            w, keys, t.target_tokens, self._path(fname), title=label,
            xlabel="source" if kind == "cross" else "decoder input (earlier outputs)")

    def explorer(self, trained: Trained, fname: str, sentence: str | None = None,
                 beam: int = 1):
        """The attention explorer page of ``trained`` translating ``sentence`` (default: the
        example sentence), written beside the figures; a notebook shows it inline when it
        is a cell's value."""
        from kerasattn.explore import collect, render

        if sentence is None:
            sentence = self.example_sentence(trained=trained)[0]
        page = render(collect(self.translator(trained), sentence, beam=beam))
        path = page.save(self._path(fname))
        print(f"attention explorer: {path} ({len(page) / 1000:.0f} kB; open it in a browser)")
        return page

    def architecture(self, name: str):
        """The architecture diagram of model ``name``."""
        from kerasattn import plots

        return plots.architecture_diagram(name, self._path(f"architecture_{name}.png"))

    def curves(self, names: Sequence[str], fname: str, title: str | None = None):
        """Training / validation loss of the models ``names`` trained (or recorded)."""
        from kerasattn import plots

        hist = {n: self.histories[n] for n in names if n in self.histories}
        return plots.training_curves(hist, self._path(fname), title=title)

    def figure(self, fn, fname: str, *args, **kwargs):
        """Call a :mod:`kerasattn.plots` function with this lesson's output path."""
        return fn(*args, path=self._path(fname), **kwargs)

    # -- records -------------------------------------------------------------------------
    def record(self, name: str, value) -> None:
        """Keep a figure the lesson printed (a table's rows as plain numbers and strings)
        in ``results.json``, under ``measurements[name]``.

        Raises:
            ValueError: ``value`` cannot be written as JSON.
        """
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"Lesson.record({name!r}, ...): the value must be JSON "
                             f"(numbers, strings, lists, dicts); received "
                             f"{type(value).__name__}: {exc}") from None
        self.measurements[name] = value

    def recorded(self, lesson_numbers: Sequence[int] = range(6)) -> dict[str, dict]:
        """Results of other lessons run with the same settings and backend (for reuse)."""
        found = {}
        parent = self.out.parent
        for k in lesson_numbers:
            f = parent / f"lesson_{k:02d}" / "results.json"
            if not f.exists():
                continue
            try:
                rec = json.loads(f.read_text())
            except ValueError as exc:  # half-written or edited by hand: skip, say so
                print(f"ignoring {f}: not valid JSON ({exc})")
                continue
            if rec.get("settings") == self.settings.signature() and \
                    rec.get("backend") == self.backend:
                for name, r in rec.get("models", {}).items():
                    found[name] = r
        return found

    def finish(self) -> dict:
        """Print the results table and the figures; write ``results.json``."""
        heading("summary")
        if self.results:
            print(format_table(
                ["model", "params", "epochs", "train s", "tokens/s", "BLEU", "exact"],
                [[r["model"], f"{r['params']:,}", r["epochs"], f"{r['train_seconds']:.1f}",
                  f"{r['tokens_per_second']:,.0f}" if r.get("tokens_per_second") else "-",
                  f"{r['bleu']:.1f}", f"{r['exact_match']:.1%}"]
                 for r in self.results.values()]))
        record = dict(lesson=self.number, backend=self.backend,
                      settings=self.settings.signature(),
                      wall_seconds=time.perf_counter() - self._start,
                      python=platform.python_version(),
                      models={k: {**{kk: vv for kk, vv in v.items() if not kk.startswith("_")},
                                  "history": self.histories.get(k)}
                              for k, v in self.results.items()},
                      figures=[str(p.name) for p in self.figures])
        if self.measurements:
            record["measurements"] = self.measurements
        text = json.dumps(record, indent=1)

        def write(tmp):
            Path(tmp).write_text(text)

        atomic_write(self.out / "results.json", write)
        print(f"\nfigures written to {self.out}/:")
        for p in self.figures:
            print(f"  {p.name}")
        print(f"lesson {self.number:02d} finished in {record['wall_seconds']:.0f} s "
              f"on {self.backend}")
        return record


