"""The :class:`Corpus` container shared by the built-in corpus and the Tatoeba loader."""
from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

__all__ = ["Corpus", "SPLITS", "crossing_links", "is_monotonic"]

SPLITS = ("train", "valid", "test")
Pair = tuple[str, str]
Alignment = list[tuple[int, int]]


def crossing_links(alignment: Alignment) -> int:
    """Count pairs of alignment links that cross.

    Links ``(i1, j1)`` and ``(i2, j2)`` (source index, target index) cross when
    ``i1 < i2`` and ``j1 > j2``: the translation reorders those words.
    """
    links = sorted(set(alignment))
    count = 0
    for a in range(len(links)):
        i1, j1 = links[a]
        for b in range(a + 1, len(links)):
            i2, j2 = links[b]
            if i2 > i1 and j2 < j1:
                count += 1
    return count


def is_monotonic(alignment: Alignment) -> bool:
    """True when no two links of ``alignment`` cross (word order is preserved)."""
    links = sorted(set(alignment))
    best = -1  # largest target index seen for strictly smaller source indices
    prev_i, max_j_at_prev = None, -1
    for i, j in links:
        if i != prev_i:
            best = max(best, max_j_at_prev)
            prev_i, max_j_at_prev = i, -1
        if j < best:
            return False
        max_j_at_prev = max(max_j_at_prev, j)
    return True


@dataclasses.dataclass
class Corpus:
    """A parallel corpus with train / valid / test splits of normalised sentence pairs.

    Attributes:
        train, valid, test: lists of ``(source, target)`` strings, already normalised
            (see :func:`kerasattn.data.text.normalize`): tokens separated by single spaces.
        alignments: for a generated corpus, ``{split: [alignment, ...]}`` where an
            alignment is the list of ``(source_index, target_index)`` word links the
            generator produced; ``None`` for real corpora.
        info: how the corpus was made (generator settings, source file ...).
        report: for a loaded file, the loader's report (lines read, skipped, filtered).
    """

    train: list[Pair]
    valid: list[Pair]
    test: list[Pair]
    alignments: dict[str, list[Alignment]] | None = None
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    report: Any = None

    def split(self, name: str) -> list[Pair]:
        """Return the pairs of split ``name`` (``"train"``, ``"valid"`` or ``"test"``)."""
        if name not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, received {name!r}")
        return getattr(self, name)

    def select(self, name: str, min_len: int = 0, max_len: int | None = None) -> list[Pair]:
        """Pairs of split ``name`` whose source length (tokens) is in [min_len, max_len]."""
        hi = float("inf") if max_len is None else max_len
        return [p for p in self.split(name) if min_len <= len(p[0].split()) <= hi]

    def sources(self, name: str) -> list[str]:
        return [s for s, _ in self.split(name)]

    def targets(self, name: str) -> list[str]:
        return [t for _, t in self.split(name)]

    def stats(self, bucket_width: int = 5) -> dict[str, Any]:
        """Statistics of the corpus.

        Args:
            bucket_width: width of the source-length histogram buckets (tokens).

        Returns:
            A dict with, per split: ``pairs``, ``src_len`` / ``tgt_len`` (min, mean, max),
            ``length_histogram`` (``{"lo-hi": count}`` over source lengths) and, when
            alignments are known, ``non_monotonic_share`` (fraction of pairs with at
            least one pair of crossing word links); plus ``src_vocab`` / ``tgt_vocab``
            (distinct tokens in train and in all splits), and
            ``test_longer_than_train`` (test pairs whose source is longer than every
            training source).
        """
        if bucket_width < 1:
            raise ValueError(f"bucket_width must be >= 1, received {bucket_width}")
        out: dict[str, Any] = {"splits": {}}
        for name in SPLITS:
            pairs = self.split(name)
            s_len = [len(s.split()) for s, _ in pairs]
            t_len = [len(t.split()) for _, t in pairs]
            hist = Counter((n // bucket_width) * bucket_width for n in s_len)
            entry: dict[str, Any] = {
                "pairs": len(pairs),
                "src_len": _summary(s_len),
                "tgt_len": _summary(t_len),
                "length_histogram": {f"{lo}-{lo + bucket_width - 1}": hist[lo]
                                     for lo in sorted(hist)},
            }
            if self.alignments is not None and name in self.alignments:
                al = self.alignments[name]
                entry["non_monotonic_share"] = (
                    sum(not is_monotonic(a) for a in al) / len(al) if al else 0.0)
            out["splits"][name] = entry
        train_src = {w for s, _ in self.train for w in s.split()}
        train_tgt = {w for _, t in self.train for w in t.split()}
        all_src = {w for n in SPLITS for s, _ in self.split(n) for w in s.split()}
        all_tgt = {w for n in SPLITS for _, t in self.split(n) for w in t.split()}
        out["src_vocab"] = {"train": len(train_src), "all": len(all_src)}
        out["tgt_vocab"] = {"train": len(train_tgt), "all": len(all_tgt)}
        max_train = max((len(s.split()) for s, _ in self.train), default=0)
        out["max_train_src_len"] = max_train
        out["test_longer_than_train"] = sum(len(s.split()) > max_train for s, _ in self.test)
        return out

    def format_stats(self, bucket_width: int = 5) -> str:
        """:meth:`stats` as a readable text table."""
        st = self.stats(bucket_width)
        lines = ["split   pairs  src len (min/mean/max)  tgt len (min/mean/max)  non-monotonic"]
        for name, e in st["splits"].items():
            nm = e.get("non_monotonic_share")
            nm_txt = "n/a" if nm is None else f"{100 * nm:.1f}%"
            s, t = e["src_len"], e["tgt_len"]
            lines.append(f"{name:<6} {e['pairs']:>6}  {s['min']:>4}/{s['mean']:>5.1f}/{s['max']:<4}"
                         f"            {t['min']:>4}/{t['mean']:>5.1f}/{t['max']:<4}"
                         f"            {nm_txt:>6}")
        lines.append(f"vocabulary (distinct tokens, train/all): source {st['src_vocab']['train']}"
                     f"/{st['src_vocab']['all']}, target {st['tgt_vocab']['train']}"
                     f"/{st['tgt_vocab']['all']}")
        lines.append(f"longest training source: {st['max_train_src_len']} tokens; test pairs "
                     f"longer than that: {st['test_longer_than_train']}")
        lines.append("source-length histogram (tokens: train / valid / test):")
        keys = sorted({k for e in st["splits"].values() for k in e["length_histogram"]},
                      key=lambda k: int(k.split("-")[0]))
        for k in keys:
            counts = " / ".join(str(st["splits"][n]["length_histogram"].get(k, 0))
                                for n in SPLITS)
            lines.append(f"  {k:>7}: {counts}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"Corpus(train={len(self.train)}, valid={len(self.valid)}, "
                f"test={len(self.test)}, source={self.info.get('source', '?')!r})")


def _summary(lengths: list[int]) -> dict[str, float]:
    if not lengths:
        return {"min": 0, "mean": 0.0, "max": 0}
    return {"min": min(lengths), "mean": sum(lengths) / len(lengths), "max": max(lengths)}
