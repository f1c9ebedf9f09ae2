"""``kerasattn backends``: one set of weights run on every installed backend."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from kerasattn.course.data import load_data, spread
from kerasattn.course.options import OUTPUTS, Settings, check_model_name
from kerasattn.course.printing import format_table, heading
from kerasattn.inference.translator import META_FILE, MODEL_FILE


def _child_env(backend: str) -> dict:
    return dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3",
                PYTHONWARNINGS="ignore")


def backends_demo(backends: Sequence[str], model: str = "transformer",
                  checkpoint: str | None = None, epochs: int | None = None,
                  quick: bool = False, out: Path | None = None) -> int:
    """Train once (or reuse ``checkpoint``), then run the SAME weights on each backend.

    Each backend runs in its own process (keras fixes its backend at import): it loads the
    ``.keras`` file, computes teacher-forced logits on a fixed batch of test pairs, and
    greedily translates a few sentences. This process compares the logits (max absolute
    difference against the first backend) and the translations, and prints each backend's
    times.
    """
    import numpy as np

    if checkpoint is None:
        check_model_name(model, "--model")
    out = Path(out) if out else OUTPUTS / "backends_demo"
    out.mkdir(parents=True, exist_ok=True)
    if checkpoint is None:
        ckpt_dir = out / f"checkpoint_{model}"
        heading(f"1. training {model} once, on {backends[0]}")
        cmd = [sys.executable, "-m", "kerasattn", "--backend", backends[0], "train", model,
               "--out", str(ckpt_dir)]
        if quick:
            cmd.append("--quick")
        if epochs:
            cmd += ["--epochs", str(epochs)]
        rc = subprocess.call(cmd, env=_child_env(backends[0]))
        if rc != 0:
            print(f"kerasattn: error: training on {backends[0]} failed (exit {rc})",
                  file=sys.stderr)
            return rc
    else:
        ckpt_dir = Path(checkpoint)
        if not (ckpt_dir / META_FILE).is_file():
            raise ValueError(f"--checkpoint: {str(ckpt_dir)!r} is not a `kerasattn train` "
                             f"checkpoint directory (no {META_FILE})")
    meta = json.loads((ckpt_dir / META_FILE).read_text())
    request = out / "request.json"
    request.write_text(json.dumps(dict(n_pairs=4 if quick else 32, n_sentences=2 if quick
                                       else 6)))
    heading(f"2. the same weights ({ckpt_dir / MODEL_FILE}) on {len(backends)} backends")
    results = {}
    try:
        from tqdm import tqdm
        bar = tqdm(backends, desc="backends", unit="backend", leave=False)
    except ImportError:  # pragma: no cover
        bar = backends
    for b in bar:
        res_path = out / f"result_{b}.json"
        if res_path.exists():
            res_path.unlink()
        cmd = [sys.executable, "-m", "kerasattn", "--backend", b, "_backend_worker",
               str(ckpt_dir), str(request), str(res_path)]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=_child_env(b), capture_output=True, text=True)
        wall = time.perf_counter() - start
        if proc.returncode != 0 or not res_path.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            results[b] = dict(error="\n    ".join(tail) or f"exit {proc.returncode}")
            continue
        r = json.loads(res_path.read_text())
        r["process_seconds"] = wall
        r["logits"] = np.load(out / f"logits_{b}.npy")
        results[b] = r
    ok = [b for b in backends if "error" not in results[b]]
    rows = []
    ref = results[ok[0]] if ok else None
    header = ["backend", "framework", "device", "load s", "logits s", "ms/sentence",
              "max |logit diff|", "same translations"]
    for b in backends:
        r = results[b]
        if "error" in r:
            rows.append([b, "FAILED"] + ["-"] * (len(header) - 2))
            continue
        diff = float(np.max(np.abs(r["logits"] - ref["logits"])))
        same = sum(x == y for x, y in zip(r["translations"], ref["translations"]))
        rows.append([b, r["version"], r.get("device", "?"), f"{r['load_seconds']:.2f}",
                     f"{r['forward_seconds']:.3f}",
                     f"{1000 * r['translate_seconds'] / len(r['translations']):.0f}",
                     f"{diff:.2e}", f"{same}/{len(r['translations'])}"])
    print(f"model: {meta.get('model')} trained on {meta.get('backend')} "
          f"(test BLEU {meta.get('bleu', float('nan')):.1f}); reference backend for "
          f"differences: {ok[0] if ok else '-'}")
    print(format_table(header, rows, align="lllrrrrr"))
    if ok:
        heading("3. translations")
        srcs = ref["sources"]
        for i, s in enumerate(srcs):
            print(f"en: {s}")
            for b in ok:
                print(f"  {b:<10} {results[b]['translations'][i]}")
    for b in backends:
        if "error" in results[b]:
            print(f"\n{b} failed:\n    {results[b]['error']}", file=sys.stderr)
    if not ok:
        return 1
    worst = max(float(np.max(np.abs(results[b]["logits"] - ref["logits"]))) for b in ok)
    all_same = all(results[b]["translations"] == ref["translations"] for b in ok)
    summary = dict(backends=ok, failed=[b for b in backends if b not in ok],
                   max_abs_logit_diff=worst, same_translations=all_same,
                   model=meta.get("model"))
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(f"\nmax |logit difference| across backends: {worst:.2e}; identical "
          f"translations: {'yes' if all_same else 'NO'}")
    return 0 if len(ok) == len(backends) else 1


def backend_worker(checkpoint: str, request: str, result: str) -> int:
    """Child side of :func:`backends_demo`: load, score, translate, write JSON + logits."""
    import importlib

    import keras
    import numpy as np

    from kerasattn import data as kdata
    from kerasattn.backend_utils import compute_device

    backend = keras.backend.backend()
    framework = importlib.import_module(backend)
    req = json.loads(Path(request).read_text())
    from kerasattn.inference import Translator

    start = time.perf_counter()
    ckpt = Translator.load(checkpoint)
    load_seconds = time.perf_counter() - start
    s = ckpt.meta.get("settings", {})
    settings = Settings(quick=bool(s.get("quick")), data=s.get("data"),
                        seed=int(s.get("seed", 0)))
    if ckpt.meta.get("samples"):
        test_pairs = [tuple(p) for p in ckpt.meta["samples"]]
    else:  # no "samples" (e.g. saved by Translator.save from Python): the test split of the
        # corpus its settings record (the built-in one when it records none)
        test_pairs = load_data(settings).test_pairs
    pairs = spread(test_pairs, req["n_pairs"])
    arrays = kdata.make_arrays(pairs, ckpt.src_vocab, ckpt.tgt_vocab)
    x = {"encoder_inputs": arrays["encoder_inputs"], "decoder_inputs": arrays["decoder_inputs"]}
    start = time.perf_counter()  # a direct (eager) call: no predict-loop compilation
    logits = np.asarray(keras.ops.convert_to_numpy(ckpt.model(x, training=False)),
                        dtype=np.float32)
    forward_seconds = time.perf_counter() - start
    srcs = [p[0] for p in spread(test_pairs, req["n_sentences"])]
    decode = dict(normalized=True, detokenized=False, **settings.decode_defaults)
    if not settings.quick:  # warm-up (decoder compilation) outside the timing
        ckpt.translate(srcs[:1], **decode)
    start = time.perf_counter()
    hyps = ckpt.translate(srcs, **decode)
    translate_seconds = time.perf_counter() - start
    out = Path(result)
    np.save(out.parent / f"logits_{backend}.npy", logits)
    out.write_text(json.dumps(dict(
        backend=backend, version=f"{backend} {framework.__version__}",
        device=compute_device(),
        load_seconds=load_seconds, forward_seconds=forward_seconds,
        translate_seconds=translate_seconds, sources=srcs, translations=list(hyps))))
    return 0


