"""Code identity: what a function *does* (byte code, names, constants), wherever it lives.

The guard (:mod:`kerasattn.grader.guard`) compares a submission's functions, and code it
compiles or loads, with the kit's forbidden ones by these fingerprints, and tells a frame
of the kit's own code (recorded once per worker by :func:`prepare_worker`) from a copy.
"""
from __future__ import annotations

import sys
import types

__all__ = ["iter_codes", "fingerprint", "module_codes", "prepare_worker"]


def iter_codes(code):
    """``code`` and every code object nested in its constants."""
    todo = [code]
    while todo:
        c = todo.pop()
        yield c
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))


def fingerprint(code, memo=None) -> int:
    """A hash of what a function does: byte code, names and constants (not file or lines)."""
    if memo is not None and id(code) in memo and memo[id(code)][0] is code:
        return memo[id(code)][1]
    consts = tuple(fingerprint(k, memo) if isinstance(k, types.CodeType)
                   else (type(k).__name__, repr(k)[:300]) for k in code.co_consts)
    value = hash((code.co_code, code.co_names, code.co_varnames[:code.co_argcount], consts))
    if memo is not None:
        memo[id(code)] = (code, value)
    return value


def _function_codes(obj):
    """(qualname, function) of a function, or of every method a class defines itself."""
    if isinstance(obj, types.FunctionType):
        return [(f"{obj.__module__}.{obj.__qualname__}", obj)]
    out = []
    if isinstance(obj, type):
        for name, member in list(vars(obj).items()):
            funcs = []
            if isinstance(member, (staticmethod, classmethod)):
                funcs = [member.__func__]
            elif isinstance(member, property):
                funcs = [f for f in (member.fget, member.fset, member.fdel) if f]
            elif isinstance(member, types.FunctionType):
                funcs = [member]
            for f in funcs:
                if isinstance(f, types.FunctionType):
                    out.append((f"{obj.__module__}.{obj.__qualname__}.{name}", f))
    return out


def _module_members(module):
    """Functions and classes defined in ``module`` itself (not imported into it)."""
    out = []
    for value in list(vars(module).values()):
        if isinstance(value, (types.FunctionType, type)) and getattr(
                value, "__module__", None) == module.__name__:
            out.append(value)
    return out


def module_codes(module) -> list:
    """The code of every function and method ``module`` defines (for a spec module)."""
    if module is None:
        return []
    return [func.__code__ for member in _module_members(module)
            for _, func in _function_codes(member)]


#: Filled in the worker before it forks: id -> (code, kind, name) of the kit's own code.
_KIT_CODES: dict = {}


def prepare_worker() -> None:
    """Import the whole kit once in the worker and record the identity of its code.

    Children inherit both, so no kit module is loaded (or re-executed) while a submission
    runs, and a frame of the kit's own code is told apart from a copy of it.
    """
    import importlib

    for name in ("kerasattn.layers", "kerasattn.steps", "kerasattn.recurrence",
                 "kerasattn.models", "kerasattn.decoding", "kerasattn.training.fit",
                 "kerasattn.data", "kerasattn.reference", "kerasattn.metrics",
                 "kerasattn.training.schedules"):
        importlib.import_module(name)
    _KIT_CODES.clear()
    for modname, module in list(sys.modules.items()):
        if not (modname == "kerasattn" or modname.startswith("kerasattn.")):
            continue
        kind = "grader" if modname.startswith("kerasattn.grader") else "kit"
        for member in _module_members(module):
            for qual, func in _function_codes(member):
                for code in iter_codes(func.__code__):
                    _KIT_CODES[id(code)] = (code, kind, qual)
