"""Files a crash cannot leave half-written: write to a temporary file, then rename.

Every write goes to a temporary file in the target's directory, is flushed to disk
(``os.fsync``), and only then renamed over the target with ``os.replace``, which is atomic
on POSIX and Windows when source and target are on the same file system. A crash (power
loss, kill -9, an exception) during the write leaves the previous file untouched; at worst a
stray ``.tmp-*`` file remains, which :func:`clean_stale_temp_files` removes. Training
checkpoints, translator checkpoints and translated files are all written this way.
"""
from __future__ import annotations

import os
import tempfile
from typing import Callable

__all__ = ["atomic_write", "clean_stale_temp_files", "TMP_PREFIX"]

#: Name prefix of the temporary files (a leftover one is a write that crashed).
TMP_PREFIX = ".tmp-"


def _read_umask() -> int:
    mask = os.umask(0)  # the only way to read it: set, then restore at once
    os.umask(mask)
    return mask


_UMASK = _read_umask()


def atomic_write(path: str, write_fn: Callable[[str], None]) -> str:
    """Write a file so that a crash cannot leave ``path`` half-written.

    Args:
        path: target file. Its directory is created if missing.
        write_fn: called with a temporary path in the same directory (its name ends with
            the target's base name, so writers that check extensions such as
            ``model.save_weights`` accept it); it must write the complete file there.

    Returns:
        ``path``.
    """
    path = os.path.abspath(os.fspath(path))
    directory, base = os.path.split(path)
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix="-" + base, dir=directory)
    os.close(fd)
    try:
        write_fn(tmp)
        with open(tmp, "rb+") as f:          # data on disk before the rename makes it visible
            os.fsync(f.fileno())
        # mkstemp makes the file owner-only (0600): give it, once written, the mode of the
        # file it replaces, or of a file written normally (0666 less the umask)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777 if os.path.exists(path)
                 else 0o666 & ~_UMASK)
        os.replace(tmp, path)                # atomic: readers see old or new, never a mix
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_dir(directory)
    return path


def _fsync_dir(directory: str) -> None:
    """Persist the rename itself (best effort: not every platform can open a directory)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def clean_stale_temp_files(directory: str) -> list[str]:
    """Delete temporary files left by writes that crashed; returns the removed paths."""
    removed = []
    if os.path.isdir(directory):
        for name in os.listdir(directory):
            if name.startswith(TMP_PREFIX):
                p = os.path.join(directory, name)
                os.remove(p)
                removed.append(p)
    return removed
