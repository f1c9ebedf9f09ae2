"""The attention explorer in a real browser: Debian's headless Chromium, driven by playwright,
with every request except the page's own file aborted.

One page (the tiny two-layer Transformer of tests/zoo.py, one five-token sentence), on every
backend pass: it draws with no console error and no request; hovering a source token shows
exactly its links, whose weights (read back from the DOM) are the model's attention to 1e-6,
for another layer and head too, and for the decoder's self-attention; the model view, the
enlarged heatmap and the step view draw the same numbers; the SVG export holds the view on
screen and the PNG export is a PNG; the screenshot is not blank.

Chromium is Debian's (``apt-get install chromium``; ``.ci/run`` installs it), never one
downloaded by ``playwright install``. Without it the test is skipped, unless
``KERASATTN_REQUIRE_BROWSER`` is set (as ``.ci/run`` sets it), where it fails.
"""
from __future__ import annotations

import io
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import zoo

from kerasattn.data import Vocabulary
from kerasattn.explore import collect, render
from kerasattn.inference import Translator

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--no-first-run"]
SENTENCE = "s4 s5 s6 s7 s8"


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    if not os.path.exists(CHROMIUM):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def browser():
    missing = _browser_missing()
    if missing:
        if os.environ.get("KERASATTN_REQUIRE_BROWSER"):
            pytest.fail(f"the browser test must run here: {missing}")
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def links_on(page) -> list:
    """``(head, query, key, weight)`` of every highlighted link, read from the DOM."""
    rows = page.eval_on_selector_all(
        ".kae-stage .kae-link.kae-on",
        "els => els.map(e => [e.dataset.h, e.dataset.q, e.dataset.k, e.dataset.w, "
        "getComputedStyle(e).visibility])")
    assert all(r[4] == "visible" for r in rows)
    return sorted((int(h), int(q), int(k), float(w)) for h, q, k, w, _ in rows)


def visible_links(page) -> int:
    return page.eval_on_selector_all(
        ".kae-stage .kae-link", "els => els.filter(e => getComputedStyle(e).visibility "
        "=== 'visible').length")


def expected_links(weights, head, fixed, side) -> list:
    """What the page must draw for one token: every link of non-zero stored weight."""
    out = []
    for other, w in enumerate(weights):
        if w >= 0.5 / (2 ** 24 - 1):                  # what the page stores as non-zero
            q, k = (fixed, other) if side == "q" else (other, fixed)
            out.append((head, q, k, float(w)))
    return out


def assert_links(got, expected):
    assert [g[:3] for g in got] == [e[:3] for e in expected]
    np.testing.assert_allclose([g[3] for g in got], [e[3] for e in expected], atol=1e-6)


def test_the_explorer_in_headless_chromium(browser, tmp_path):
    src = Vocabulary([f"s{i}" for i in range(4, zoo.SRC_VOCAB)])
    tgt = Vocabulary([f"t{i}" for i in range(4, zoo.TGT_VOCAB)])
    tr = Translator(zoo.trained("transformer")[0], src, tgt)
    record = collect(tr, SENTENCE, normalized=True, detokenized=False)
    t = record.translation
    cross, self_ = t.attention["cross"], t.attention["self"]          # (T, L, h, K)
    T, L, H, S = cross.shape
    assert L == 2 and H == 2 and S == 5 and T >= 3
    path = tmp_path / "explorer.html"
    render(record).save(path)
    url = path.as_uri()

    context = browser.new_context(accept_downloads=True, viewport={"width": 1000,
                                                                   "height": 800})
    page = context.new_page()
    requests, blocked, errors = [], [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def only_the_file(route):
        if route.request.url == url:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_file)
    page.goto(url)
    page.wait_for_selector("div.kae[data-rendered]", timeout=10_000)

    # head view, cross-attention, layer 1, all heads: hover source token 2
    page.hover('.kae-stage .kae-tok[data-side="k"][data-i="2"]')
    expected = sorted(link for h in range(H)
                      for link in expected_links(cross[:, 0, h, 2], h, 2, "k"))
    got = links_on(page)
    assert_links(got, expected)
    assert visible_links(page) == len(got)       # the others are hidden

    # layer 2, head 2: an output token's links, then a source token's
    page.select_option("select.kae-layer", "1")
    page.click('.kae-heads button[data-head="1"]')
    assert page.eval_on_selector_all(".kae-link", "els => new Set(els.map(e => "
                                     "e.dataset.h)).size") == 1
    page.hover('.kae-stage .kae-tok[data-side="q"][data-i="1"]')
    assert_links(links_on(page), expected_links(cross[1, 1, 1, :], 1, 1, "q"))
    page.hover('.kae-stage .kae-tok[data-side="k"][data-i="4"]')
    assert_links(links_on(page), expected_links(cross[:, 1, 1, 4], 1, 4, "k"))

    # pinned by a click, the view exports as SVG with only that token's links
    page.click('.kae-stage .kae-tok[data-side="k"][data-i="4"]')
    page.mouse.move(5, 5)
    assert_links(links_on(page), expected_links(cross[:, 1, 1, 4], 1, 4, "k"))
    with page.expect_download() as download:
        page.click("button.kae-export-svg")
    assert download.value.suggested_filename == "transformer_head_cross_L2_H2.svg"
    svg = ET.parse(download.value.path()).getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    lines = svg.findall(".//{http://www.w3.org/2000/svg}line[@data-w]")
    assert_links(sorted((int(e.get("data-h")), int(e.get("data-q")), int(e.get("data-k")),
                         float(e.get("data-w"))) for e in lines),
                 expected_links(cross[:, 1, 1, 4], 1, 4, "k"))
    with page.expect_download() as download:                          # and as PNG
        page.click("button.kae-export-png")
    assert download.value.suggested_filename.endswith(".png")
    assert open(download.value.path(), "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    page.click('.kae-stage .kae-tok[data-side="k"][data-i="4"]')       # release

    # the decoder's masked self-attention: a decoder input's links come from later steps
    page.select_option("select.kae-kind", "self")
    page.hover('.kae-stage .kae-tok[data-side="k"][data-i="1"]')
    expected = expected_links(self_[:, 1, 1, 1], 1, 1, "k")
    assert expected and all(q >= 1 for _, q, _, _ in expected)
    assert_links(links_on(page), expected)

    # model view: L x h heatmaps; one enlarged holds every weight of its head
    page.select_option("select.kae-kind", "cross")
    page.click('button[data-view="model"]')
    assert page.locator(".kae-thumb").count() == L * H
    page.click('.kae-thumb[data-l="0"][data-h="1"]')
    cells = page.eval_on_selector_all(".kae-cell", "els => els.map(e => [+e.dataset.i, "
                                      "+e.dataset.j, +e.dataset.w])")
    assert len(cells) == T * S
    np.testing.assert_allclose([w for _, _, w in sorted(cells)], cross[:, 0, 1, :].ravel(),
                               atol=1e-6)

    # step view: the alignment of step 3 (head 1, layer 2) and its coverage
    page.click('button[data-view="steps"]')
    page.click("button.kae-next")
    page.click("button.kae-next")
    page.select_option("select.kae-layer", "1")
    page.click('.kae-heads button[data-head="0"]')
    bars = page.eval_on_selector_all(".kae-stage rect[data-j]", "els => els.map(e => "
                                     "+e.dataset.w)")
    np.testing.assert_allclose(bars[:S], cross[2, 1, 0, :], atol=1e-6)
    np.testing.assert_allclose(bars[S:], cross[:3, 1, 0, :].sum(0), atol=1e-5)

    # back to the head view for the picture: not blank
    page.click('button[data-view="head"]')
    from PIL import Image

    shot = page.screenshot(full_page=True)
    (tmp_path / "explorer.png").write_bytes(shot)
    pixels = np.asarray(Image.open(io.BytesIO(shot)).convert("L"), dtype=np.float64)
    assert pixels.std() > 10 and (pixels < 128).mean() > 0.005

    assert errors == []
    assert blocked == [] and set(requests) == {url}
    context.close()
