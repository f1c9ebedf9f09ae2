#!/usr/bin/env python
"""Size and render time of the attention explorer page (``kerasattn explore``).

The page of a 30-token sentence on the two-layer Transformer at the course's default sizes
(``d_model`` 128, 4 heads, 2 encoder and 2 decoder layers; untrained weights: the numbers
do not change the size), for three decodings:

- greedy, 31 output steps (a translation as long as its source, and ``<eos>``);
- greedy, 64 output steps: the output cap of a 30-token source, the largest greedy page;
- beam search with ``k = 4``, 31 steps: every hypothesis the beam finished, with its own
  attention, and the beam of every step.

Each page is opened ``--repeats`` times in Debian's headless Chromium (playwright, every
other request aborted) and the median is printed of: the script's own time (read the
JSON, decode the weights, draw the head view with every head: ``data-render-ms``), the
time from the start of the navigation to the first frame painted with the drawing, and the time to
redraw as the model view (a grid of every layer and head). Targets: <= 300 kB and <= 1 s.

Usage:
    python benchmarks/bench_explorer.py [--tokens 30] [--repeats 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]


def pages(tokens: int, out: Path) -> list:
    """``[(label, path, size in bytes)]`` of the three pages."""
    import keras

    from kerasattn.data import Vocabulary
    from kerasattn.explore import collect, render
    from kerasattn.inference import Translator
    from kerasattn.models import build_model

    keras.utils.set_random_seed(0)
    words = [f"w{i}" for i in range(200)]
    src, tgt = Vocabulary(words), Vocabulary(words)
    model = build_model("transformer", len(src), len(tgt))          # the default sizes
    translator = Translator(model, src, tgt, meta={"decode": {"compile": False}})
    sentence = " ".join(words[(7 * i) % 200] for i in range(tokens))
    out.mkdir(parents=True, exist_ok=True)
    found = []
    for label, kwargs in ((f"greedy, {tokens + 1} steps", dict(max_length=tokens + 1)),
                          ("greedy, at the output cap", {}),
                          (f"beam 4, {tokens + 1} steps", dict(beam=4, max_length=tokens + 1))):
        record = collect(translator, sentence, normalized=True, **kwargs)
        page = render(record)
        path = out / f"explorer_{len(found)}.html"
        page.save(path)
        found.append((f"{label} ({len(record.translation.target_tokens)} output tokens)", path,
                      len(page)))
    return found


def measure(path: Path, repeats: int) -> dict:
    """Median times (ms) of ``repeats`` loads of the page in headless Chromium."""
    from playwright.sync_api import sync_playwright

    url = path.as_uri()
    script, first_frame, model_view = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(repeats):
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.route("**/*", lambda route: route.continue_() if route.request.url == url
                       else route.abort())
            page.goto(url)
            page.wait_for_selector("div.kae[data-painted-at]")
            script.append(float(page.get_attribute("div.kae", "data-render-ms")))
            first_frame.append(float(page.get_attribute("div.kae", "data-painted-at")))
            model_view.append(page.evaluate(
                "() => { const t = performance.now(); document.querySelector("
                "'div.kae button[data-view=model]').click(); return performance.now() - t; }"))
            page.close()
        browser.close()
    return {name: statistics.median(values) for name, values in
            (("script", script), ("first_frame", first_frame), ("model_view", model_view))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=30, help="source tokens (default 30)")
    parser.add_argument("--repeats", type=int, default=5, help="loads per page (default 5)")
    args = parser.parse_args(argv)
    if not os.path.exists(CHROMIUM):
        print(f"bench_explorer: no Chromium at {CHROMIUM} (apt-get install chromium)",
              file=sys.stderr)
        return 1
    import keras

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        found = pages(args.tokens, Path(tmp))
        built = time.perf_counter() - start
        print(f"attention explorer: a {args.tokens}-token sentence on the two-layer "
              f"Transformer (d_model 128, 4 heads), backend {keras.backend.backend()}; "
              f"pages built in {built:.1f} s; load average "
              f"{os.getloadavg()[0]:.1f}; median of {args.repeats} loads in headless "
              f"Chromium")
        print(f"{'page':<44} {'size (kB)':>9} {'script (ms)':>11} {'to frame (ms)':>13} "
              f"{'model view (ms)':>15}")
        for label, path, size in found:
            t = measure(path, args.repeats)
            print(f"{label:<44} {size / 1000:>9.1f} {t['script']:>11.1f} "
                  f"{t['first_frame']:>13.1f} {t['model_view']:>15.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
