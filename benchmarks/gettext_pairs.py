"""A second real parallel file for bench_real_data.py, from the machine's own translations.

Every Debian or Ubuntu system ships the translated messages of its programs as gettext
catalogues (``/usr/share/locale/<lang>/LC_MESSAGES/*.mo``): English messages and their
human translations ("could not open file %s" -> "impossible d'ouvrir le fichier %s").
This script writes them as a Tatoeba-format file (``English<TAB>translation<TAB>source``),
so the kit can be measured on real sentences of another language and another style than
Tatoeba's, with no download:

    python benchmarks/gettext_pairs.py --lang fr --max-pairs 20000 --out /tmp/gt/fra.txt
    python benchmarks/bench_real_data.py /tmp/gt/fra.txt --budget 240

The file name's language code (``fra.txt``) tells ``load_tatoeba`` which language it reads.
Kept: messages of 2 to 20 words on one line, with a non-empty translation; left out: the
``iso_*`` catalogues (lists of country and language names, not sentences). The pairs are
shuffled with ``--seed`` (catalogues group messages by program) before ``--max-pairs``
is taken. What a machine holds depends on its installed packages: the script prints the
count per catalogue.
"""
from __future__ import annotations

import argparse
import collections
import gettext
import glob
import os
import random
import sys

LOCALE_DIRS = ("/usr/share/locale", "/usr/share/locale-langpack")


def catalogue_files(lang: str, dirs=LOCALE_DIRS) -> list[str]:
    """The ``.mo`` files of ``lang`` under ``dirs``, without the ``iso_*`` name lists."""
    files = []
    for d in dirs:
        files += glob.glob(os.path.join(d, lang, "LC_MESSAGES", "*.mo"))
    return sorted(f for f in set(files) if not os.path.basename(f).startswith("iso_"))


def read_pairs(path: str, min_words: int = 2, max_words: int = 20) -> list[tuple[str, str]]:
    """(English, translation) pairs of one catalogue; an unreadable file gives none."""
    try:
        with open(path, "rb") as fh:
            catalogue = gettext.GNUTranslations(fh)._catalog
    except (OSError, UnicodeDecodeError, ValueError) as err:
        print(f"skipped {path}: {err}", file=sys.stderr)
        return []
    pairs = []
    for source, target in catalogue.items():
        if not (isinstance(source, str) and isinstance(target, str)):
            continue                                      # plural forms: (msgid, n) keys
        source, target = source.strip(), target.strip()
        if not source or not target or any(c in source + target for c in "\n\t"):
            continue
        if min_words <= len(source.split()) <= max_words:
            pairs.append((source, target))
    return pairs


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lang", default="fr", help="gettext language directory (default fr)")
    p.add_argument("--out", required=True,
                   help="the file to write; name it <code>.txt (fra.txt, deu.txt)")
    p.add_argument("--max-pairs", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--locale-dir", action="append", default=None,
                   help="where the <lang>/LC_MESSAGES folders are (repeatable; default "
                        + " and ".join(LOCALE_DIRS) + ")")
    args = p.parse_args(argv)
    if args.max_pairs is not None and args.max_pairs < 1:
        p.error(f"--max-pairs must be >= 1, received {args.max_pairs}")
    dirs = tuple(args.locale_dir or LOCALE_DIRS)
    files = catalogue_files(args.lang, dirs)
    if not files:
        p.error(f"no gettext catalogues for --lang {args.lang!r} under {', '.join(dirs)}")
    pairs, per_file = [], collections.Counter()
    for f in files:
        got = read_pairs(f)
        per_file[os.path.basename(f)] = len(got)
        pairs += got
    pairs = sorted(set(pairs))
    random.Random(args.seed).shuffle(pairs)
    if args.max_pairs is not None:
        pairs = pairs[:args.max_pairs]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        for source, target in pairs:
            fh.write(f"{source}\t{target}\tgettext catalogue\n")
    print(f"{len(files)} catalogues; largest: "
          + ", ".join(f"{k} {v}" for k, v in per_file.most_common(5)))
    print(f"wrote {len(pairs)} pairs to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
