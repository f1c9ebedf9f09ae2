"""``kerasattn explore``: the attention explorer page of one sentence, from a checkpoint."""
from __future__ import annotations

import sys
from pathlib import Path

#: The page's name when ``--out`` is not given: inside the checkpoint directory.
DEFAULT_PAGE = "explorer.html"


def explore_command(checkpoint, sentence: str, beam: int = 1, out=None) -> int:
    """Translate ``sentence`` with the checkpoint and write its explorer page (default
    ``CHECKPOINT/explorer.html``). Returns the exit status."""
    from kerasattn.explore import collect, render
    from kerasattn.inference import Translator

    translator = Translator.load(checkpoint)
    record = collect(translator, sentence, beam=beam)
    page = render(record)
    # the directory the translator loaded (CHECKPOINT may name its model.keras)
    path = Path(out) if out else Path(translator.path) / DEFAULT_PAGE
    page.save(path)
    t = record.translation
    if t.unknown_words:
        print(f"note: not in the source vocabulary (read as <unk>): "
              f"{', '.join(t.unknown_words)}", file=sys.stderr)
    print(t.text)
    print(f"attention explorer written to {path} ({len(page) / 1000:.0f} kB, one file that "
          f"needs no network): open it in a browser")
    return 0
