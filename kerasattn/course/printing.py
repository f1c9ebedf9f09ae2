"""Plain-text output of the lessons and the command: tables, attention matrices, headings."""
from __future__ import annotations

from typing import Sequence


def format_table(header: Sequence[str], rows: Sequence[Sequence], align: str | None = None
                 ) -> str:
    """A plain-text table with a rule under the header (numbers right-aligned).

    Args:
        header: column titles.
        rows: the rows (values converted with ``str``).
        align: one ``l``/``r`` per column (default: right for numbers, left otherwise).

    Returns:
        The table as text.
    """
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    if align is None:
        def numeric(s):
            return s.replace(",", "").replace(".", "").replace("%", "").replace(
                "-", "").replace("e", "").strip().isdigit()
        align = "".join("r" if rows and all(numeric(str(r[i])) for r in rows) else "l"
                        for i in range(len(header)))
    lines = []
    for k, r in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if a == "r" else c.ljust(w)
                               for c, w, a in zip(r, widths, align)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_attention(weights, src_tokens, tgt_tokens, label: str = "") -> str:
    """An attention matrix as text: rows = generated tokens, columns = source tokens."""
    import numpy as np

    w = np.asarray(weights, dtype=float)
    if w.ndim == 3:  # heads: show their mean, say so
        label = f"{label} (mean over {w.shape[0]} heads)"
        w = w.mean(axis=0)
    w = w[:len(tgt_tokens), :len(src_tokens)]
    rows = [[t] + [f"{v:.2f}" for v in row] for t, row in zip(tgt_tokens, w)]
    head = f"attention weights{': ' + label if label else ''} (rows: generated, "\
           f"columns: source)\n"
    return head + format_table([""] + list(src_tokens), rows,
                               align="l" + "r" * len(src_tokens))


def heading(text: str) -> None:
    """Print a section heading (scripts; notebooks show the markdown cells instead)."""
    print(f"\n== {text} " + "=" * max(0, 70 - len(text)), flush=True)




def clip(text: str, n: int = 48) -> str:
    return text if len(text) <= n else text[:n - 3] + "..."

