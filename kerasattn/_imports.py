"""Importing a Python file by its path (a grader spec, a student's exercise file)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def import_path(path: str | Path, name: str) -> ModuleType:
    """Import the file at ``path`` as the module ``name`` (kept in ``sys.modules``, which
    dataclasses and pickling of its objects need; removed again if the import fails).

    Raises:
        ImportError: ``path`` is not a file Python can import.
        Exception: whatever the file's own code raises while it is imported.
    """
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be imported as a Python module; expected a .py "
                          f"file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
