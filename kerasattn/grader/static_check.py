"""Static (AST) checks of a submission, done in the parent before anything runs.

* forbidden names: imports (``import``, ``from ... import``, ``__import__("...")``,
  ``importlib.import_module("...")``) and attribute chains resolved through import aliases
  (``from keras import ops as K; K.dot_product_attention``), plus string arguments that
  point into the solutions or the kit's reference (``open("solutions/05.py")``);
* process creation (``subprocess``, ``multiprocessing``, ``pty``, ``os.system``,
  ``os.popen``, ``os.fork``, ``os.exec*``, ``os.spawn*``, ``os.posix_spawn*`` ...), through
  imports, aliases, ``from os import system``, ``getattr(os, "fork")`` and
  ``__import__`` / ``importlib.import_module`` with a literal name: no exercise needs a
  process, and a process runs outside the grader's run-time checks;
* backend-native calls (``torch.*``, ``jax.*``, ``tensorflow.*``): not an error by
  themselves, but named when a check passes on one backend and fails on another.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

BACKEND_MODULES = {"torch": "torch", "jax": "jax", "jaxlib": "jax", "tensorflow": "tensorflow",
                   "tf_keras": "tensorflow", "flax": "jax", "optax": "jax"}
# calls that open, load or run a file or module named by a string argument
_FILE_CALLS = {"open", "exec", "execfile", "compile", "spec_from_file_location", "run_path",
               "run_module", "Path", "PurePath", "import_module", "__import__", "read_text",
               "read_bytes", "load", "loadtxt", "genfromtxt", "SourceFileLoader", "listdir",
               "scandir", "glob", "iglob", "walk", "copy", "copyfile", "system", "popen",
               "run", "Popen", "check_output", "call", "fdopen", "FileIO"}
_SUSPICIOUS_PATHS = ("solutions/", "solutions\\", "kerasattn/reference", "grader/specs")
# Names no exercise needs, with which a submission could take the run-time guard apart
# (kerasattn/grader/guard.py): call tracing, the garbage collector's object lists, native
# memory access, the guard's own dispatcher, and reading or rewriting other functions' code.
_TAMPER_MODULES = ("ctypes", "gc")
_TAMPER_ATTRS = ("__code__", "__closure__", "__kerasattn_guard__")
_TAMPER_CALLS = ("sys.addaudithook", "sys.settrace", "sys.setprofile", "sys._getframe",
                 "threading.settrace", "threading.setprofile")
_TAMPER_RULE = ("inspects or rewrites other code or the grader's run-time checks; no "
                "exercise needs it")
# Modules whose only purpose is starting processes, and the functions of ``os`` that do.
_PROCESS_MODULES = ("subprocess", "multiprocessing", "pty", "_posixsubprocess",
                    "concurrent.futures.process", "concurrent.futures.ProcessPoolExecutor",
                    "asyncio.subprocess", "asyncio.create_subprocess_exec",
                    "asyncio.create_subprocess_shell", "pexpect")
_OS_MODULES = ("os", "posix", "nt")
_OS_PROCESS_FUNCS = ("system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp",
                     "startfile")
_OS_PROCESS_PREFIXES = ("exec", "spawn")


def _starts_process(name: str) -> bool:
    """Whether the dotted ``name`` is a module or function that starts a process."""
    if any(name == m or name.startswith(m + ".") for m in _PROCESS_MODULES):
        return True
    parts = name.split(".")
    return (len(parts) >= 2 and parts[0] in _OS_MODULES
            and (parts[1] in _OS_PROCESS_FUNCS or parts[1].startswith(_OS_PROCESS_PREFIXES)))


def _exercise_label(filename: str) -> str:
    match = re.match(r"(\d+)_", filename.rsplit("/", 1)[-1])
    return f"exercise {match.group(1)}" if match else filename


@dataclass
class StaticReport:
    """Result of :func:`check_source`."""

    syntax_error: str | None = None
    forbidden: list = field(default_factory=list)  # [(line, name, rule)]
    backend_calls: list = field(default_factory=list)  # [(line, dotted name, backend)]
    processes: list = field(default_factory=list)  # [(line, what)]: code starting a process

    @property
    def ok(self) -> bool:
        return self.syntax_error is None and not self.forbidden and not self.processes

    def message(self, filename: str) -> str:
        if self.syntax_error:
            return f"{filename} does not parse: {self.syntax_error}"
        lines = [f"{filename} line {line}: uses `{name}`, forbidden in this exercise "
                 f"({rule})" for line, name, rule in self.forbidden]
        if self.processes:
            where = "; ".join(f"{what} at line {line}" for line, what in self.processes)
            lines.append(f"{_exercise_label(filename)}: your code starts a process ({where}); "
                         "exercises must compute their answer in the submission itself")
        return "\n".join(lines)


def _matches(name: str, forbidden) -> str | None:
    for f in forbidden:
        if name == f or name.startswith(f + "."):
            return f
    return None


def _rule(f: str) -> str:
    if f == "solutions":
        return "a submission may not use the solutions"
    if f == "kerasattn.reference":
        return "a submission may not use the grader's float64 reference"
    if f == "kerasattn.grader":
        return "a submission may not use the grader"
    return (f"`{f}` may not be used in this exercise (its docstring lists what you may "
            "NOT use)")


def _dotted(node) -> list[str] | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


def check_source(source: str, forbidden, filename: str = "<submission>") -> StaticReport:
    """Scan ``source`` for forbidden names and backend-native calls."""
    report = StaticReport()
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as exc:
        report.syntax_error = f"SyntaxError line {exc.lineno}: {exc.msg}"
        return report
    forbidden = tuple(forbidden)
    aliases: dict[str, str] = {}
    hits = set()

    def flag(line, name):
        f = _matches(name, forbidden)
        if f and (line, name) not in hits:
            hits.add((line, name))
            report.forbidden.append((line, name, _rule(f)))
        root = name.split(".")[0]
        if root in BACKEND_MODULES:
            report.backend_calls.append((line, name, BACKEND_MODULES[root]))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                flag(node.lineno, a.name)
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            module = ("." * node.level) + (node.module or "")
            flag(node.lineno, module)
            for a in node.names:
                if a.name == "*":
                    for f in forbidden:
                        if f.startswith(module + ".") and "." not in f[len(module) + 1:]:
                            hits.add((node.lineno, f))
                            report.forbidden.append(
                                (node.lineno, f"from {module} import *", _rule(f)))
                    continue
                full = f"{module}.{a.name}"
                flag(node.lineno, full)
                aliases[a.asname or a.name] = full
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)) and isinstance(
                getattr(node, "ctx", None), ast.Load):
            parts = _dotted(node)
            if parts and parts[0] in aliases:
                flag(node.lineno, ".".join([aliases[parts[0]]] + parts[1:]))
        if isinstance(node, ast.Call):
            func = _dotted(node.func) or []
            resolved = ".".join([aliases.get(func[0], func[0])] + func[1:]) if func else ""
            if resolved in ("__import__", "importlib.import_module") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    flag(node.lineno, arg.value)
            if not func or func[-1] not in _FILE_CALLS:
                continue
            for arg in list(node.args) + [k.value for k in node.keywords]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    text = arg.value.replace("\\", "/")
                    if any(p in text for p in _SUSPICIOUS_PATHS) or text in (
                            "solutions", "kerasattn.reference"):
                        if (node.lineno, text) not in hits:
                            hits.add((node.lineno, text))
                            report.forbidden.append(
                                (node.lineno, f"{resolved or 'call'}({arg.value!r})",
                                 "a submission may not read the solutions, the reference "
                                 "or the grader's files"))
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Import):
            name = next((a.name for a in node.names
                         if a.name.split(".")[0] in _TAMPER_MODULES), None)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in _TAMPER_MODULES:
                name = node.module
            elif node.module == "sys" and any(f"sys.{a.name}" in _TAMPER_CALLS
                                              for a in node.names):
                name = "sys." + next(a.name for a in node.names
                                     if f"sys.{a.name}" in _TAMPER_CALLS)
        elif isinstance(node, ast.Attribute) and node.attr in _TAMPER_ATTRS:
            name = f"*.{node.attr}"
        elif isinstance(node, ast.Name) and node.id in _TAMPER_ATTRS:
            name = node.id
        elif isinstance(node, ast.Attribute):
            parts = _dotted(node)
            if parts:
                dotted = ".".join([aliases.get(parts[0], parts[0])] + parts[1:])
                if dotted in _TAMPER_CALLS:
                    name = dotted
        elif isinstance(node, ast.Constant) and node.value in _TAMPER_ATTRS + _TAMPER_MODULES:
            name = repr(node.value)
        if name and (node.lineno, name) not in hits:
            hits.add((node.lineno, name))
            report.forbidden.append((node.lineno, name, _TAMPER_RULE))
    report.processes = [(line, what) for line, what, _ in _longest_per_line(
        (line, what, None) for line, what in _process_uses(tree, aliases))]
    # an attribute chain is visited once per prefix (a.b.c, a.b, a): keep the longest per line
    report.backend_calls = _longest_per_line(report.backend_calls)
    report.forbidden = _longest_per_line(report.forbidden)
    return report


def _process_uses(tree, aliases):
    """(line, what) of every import, name or call that starts a process."""
    aliases = dict(aliases)
    for node in ast.walk(tree):  # from os import *: system, fork ... become bare names
        if (isinstance(node, ast.ImportFrom) and node.level == 0
                and node.module in _OS_MODULES and any(a.name == "*" for a in node.names)):
            for name in _OS_PROCESS_FUNCS:
                aliases.setdefault(name, f"{node.module}.{name}")

    def resolve(node):
        if isinstance(node, ast.Name):
            return aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            base = resolve(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and node.args:
            func = _dotted(node.func) or []
            called = ".".join([aliases.get(func[0], func[0])] + func[1:]) if func else ""
            literal = [a.value for a in node.args
                       if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            if called in ("__import__", "importlib.import_module") and literal and \
                    literal[0] == getattr(node.args[0], "value", None):
                return literal[0]
            if called == "getattr" and len(node.args) >= 2 and isinstance(
                    node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                base = resolve(node.args[0])
                return f"{base}.{node.args[1].value}" if base else None
        return None

    # module = __import__("os"), run = getattr(os, "system"): the name stands for it
    for _ in range(3):
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
                    node.targets[0], ast.Name):
                target = resolve(node.value)
                if target and node.targets[0].id not in aliases:
                    aliases[node.targets[0].id] = target
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, f"import {a.name}") for a in node.names
                      if _starts_process(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for a in node.names:
                if _starts_process(node.module) or (
                        a.name == "*" and node.module in _OS_MODULES) or \
                        _starts_process(f"{node.module}.{a.name}"):
                    found.append((node.lineno, f"from {node.module} import {a.name}"))
        elif (isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load)) \
                or isinstance(node, ast.Call):
            name = resolve(node)
            if name and _starts_process(name):
                if isinstance(node, ast.Call):
                    name = ast.unparse(node.func) + f"({ast.unparse(node.args[0])}" + (
                        f", {ast.unparse(node.args[1])})" if len(node.args) > 1 else ")")
                found.append((node.lineno, name))
    return found


def _longest_per_line(items):
    best = {}
    for line, name, extra in items:
        if line not in best or len(name) > len(best[line][1]):
            best[line] = (line, name, extra)
    return sorted(best.values())
