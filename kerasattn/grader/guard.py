"""Run-time defences in the sandboxed child: the kit's own answer and NumPy escapes.

The static check (:mod:`kerasattn.grader.static_check`) only sees import statements and
literal names. At run time a submission can still reach the kit's implementation of the
piece it is asked to write (through ``sys.modules``, ``__import__`` / ``importlib`` and
``getattr``, by loading the kit's source file by path, by ``exec`` of the source text) or
compute the answer in NumPy. The :class:`Guard` closes these routes in the forked child,
before the submission runs:

* **Tripwires.** Every function and method of every forbidden object (a forbidden module's
  functions and classes, a forbidden function, a forbidden class's methods; Keras's own
  equivalents included) has its ``__code__`` replaced in place by a trampoline, so every
  route to the object (any module, ``sys.modules``, an alias) reaches the tripwire. A call
  is allowed only when the nearest caller outside libraries is an allowed part of the kit
  (a prerequisite that uses the piece internally); otherwise it is recorded and raises
  :class:`GuardError`.
* **Copies.** An audit hook (:func:`sys.addaudithook`, which cannot be removed) refuses to
  open a forbidden module's source or byte-code file, or any file of the solutions, when
  the submission asks for it, and refuses to ``compile``/``exec``/``marshal.loads`` code
  whose functions are identical (byte code, names and constants) to forbidden ones. A
  function of the submission identical to a forbidden one is reported too, unless the
  exercise file itself gives it.
* **NumPy escapes.** Converting a tensor to NumPy (``np.asarray``, ``.numpy()``,
  ``.tolist()``, ``keras.ops.convert_to_numpy``) from the submission's code is recorded.
  On JAX and TensorFlow, whose tensors also hand NumPy their memory directly, each call of
  the submission's functions and of its layers' methods runs compiled (``jax.jit`` /
  ``tf.function``), where a NumPy conversion cannot work; a conversion error there is a
  NumPy escape, any other failure to compile falls back to the eager call.
* **Processes.** No exercise needs one, and another process runs outside these checks
  (it could read the solutions and hand the text back). The audit hook refuses the events
  that create one (``subprocess.Popen``, ``os.system``, ``os.exec``, ``os.spawn``,
  ``os.posix_spawn``, ``os.fork``, ``os.forkpty``), and ``_posixsubprocess.fork_exec``
  (which ``multiprocessing``'s spawn and forkserver start methods call without an audit
  event) is wrapped, when the nearest caller outside libraries is the submission, or when
  no such caller exists in a thread started after the guard (a thread whose target is
  ``subprocess.run`` itself). The kit and the frameworks may still start processes for
  their own use. This check stays on after :meth:`Guard.finish`.

Every finding is written to a pipe that the worker (outside the child) reads: a submission
that catches :class:`GuardError` still fails the case. The guard runs in the same process
as the submission, so a submission that sets out to dismantle it (editing the guard's own
objects, ``gc``, frames) is not stopped at run time; the static check flags those names.
"""
from __future__ import annotations

import inspect
import os
import sys
import threading
import types

from kerasattn.grader.codeid import (
    _KIT_CODES,
    _function_codes,
    _module_members,
    fingerprint,
    iter_codes,
    module_codes,
    prepare_worker,
)
from kerasattn.grader.compiled import (
    _numpy_escape,
    _numpy_message,
    _run_compiled,
    _tensor_leaves,
)

#: Name of the trampolines' global and file name of their code.
GUARD_GLOBAL = "__kerasattn_guard__"
TRAMPOLINE_FILE = "<kerasattn grader tripwire>"
#: Functions at least this many bytes of byte code are compared with the forbidden ones
#: (tiny functions such as ``return x`` are too common to identify anything).
MIN_COPY_BYTES = 32
_KIT_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../kerasattn
_GRADER_PKG = os.path.join(_KIT_PKG, "grader")
_FRAMEWORK_DIRS = ("numpy", "torch", "jax", "jaxlib", "tensorflow", "tf_keras", "ml_dtypes",
                   "keras")
#: Audit events that create a process (``pty.spawn`` goes through ``os.forkpty``; ``os.popen``,
#: ``asyncio`` and ``concurrent.futures`` through ``subprocess.Popen`` or ``os.fork``).
_PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.spawn",
                             "os.posix_spawn", "os.fork", "os.forkpty", "pty.spawn",
                             "os.startfile"})
#: Audit events of native code reached through ``ctypes`` (a C library's ``system`` starts a
#: process with no audit event of its own).
_NATIVE_EVENTS = frozenset({"ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle"})
_CTYPES_DIR = os.path.join(os.path.dirname(os.__file__), "ctypes") + os.sep
_AUDITED = (frozenset({"open", "compile", "exec", "marshal.loads"}) | _PROCESS_EVENTS
            | _NATIVE_EVENTS)
# Methods of a submission's layers that must run as they are (building, configuration).
_NOT_COMPILED = {"build", "get_config", "from_config", "compute_output_shape",
                 "compute_output_spec", "compute_mask", "get_build_config",
                 "build_from_config", "add_weight", "save_own_variables",
                 "load_own_variables"}


__all__ = ["Guard", "GuardError", "module_codes", "prepare_worker", "GUARD_GLOBAL",
           "TRAMPOLINE_FILE", "MIN_COPY_BYTES"]


class GuardError(RuntimeError):
    """Raised in the submission when it uses what the exercise forbids."""


# ---------------------------------------------------------------------------- the guard
class Guard:
    """The child's run-time checks for one case (see the module docstring).

    Args:
        forbidden: dotted names the exercise forbids (``Spec.all_forbidden``).
        submission: path of the submission file.
        submission_code: the submission's compiled module code (its own functions).
        report_fd: write end of the worker's pipe for findings, or None.
        allow_numpy: the spec allows NumPy on tensors (no NumPy-escape check).
        backend: the Keras backend.
        skeleton: path of the untouched exercise file (code it gives is not a copy).
        solutions_dir: the kit's solutions folder (never readable by the submission).
        extra_grader_codes: code objects of the spec (grader code, not the student's).
    """

    def __init__(self, *, forbidden, submission, submission_code, report_fd=None,
                 allow_numpy=False, backend="tensorflow", skeleton=None,
                 solutions_dir=None, extra_grader_codes=()):
        self.forbidden = tuple(forbidden)
        self.submission = os.path.realpath(submission)
        self.report_fd = report_fd
        self.allow_numpy = allow_numpy
        self.backend = backend
        self.solutions_dir = os.path.realpath(solutions_dir) if solutions_dir else None
        self.active = False
        self.installed = False
        self._threads_at_install: set = set()
        self.findings: list[str] = []
        self._memo: dict = {}
        self._kinds: dict = {}
        self._busy = threading.local()
        self._compiling = threading.local()
        self._wires: list = []
        self._forbidden_prints: dict[int, str] = {}
        self._forbidden_files: dict[str, str] = {}
        self._student_codes = {id(c): c for c in iter_codes(submission_code)}
        self._grader_codes = {id(c): c for root in extra_grader_codes
                              for c in iter_codes(root)}
        self._skeleton_prints = set()
        if skeleton and os.path.isfile(skeleton):
            try:
                with open(skeleton, "rb") as f:
                    sk = compile(f.read(), skeleton, "exec", dont_inherit=True)
                self._skeleton_prints = {fingerprint(c, self._memo) for c in iter_codes(sk)}
            except (SyntaxError, ValueError, OSError):
                pass
        self._submission_code = submission_code
        self._lib_dirs = self._library_dirs()

    # ----------------------------------------------------------------- reporting
    def record(self, message: str) -> None:
        if message in self.findings:
            return
        self.findings.append(message)
        if self.report_fd is not None:
            try:
                os.write(self.report_fd, (message.replace("\n", " ")[:600] + "\n").encode(
                    "utf-8", "replace"))
            except OSError:
                pass

    def _line(self, frame) -> str:
        """'line N: code' of the innermost frame of the submission's own code on the stack."""
        f = frame
        while f is not None:
            if id(f.f_code) in self._student_codes:
                import linecache

                text = linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
                return f"line {f.f_lineno}" + (f": {text}" if text else "")
            f = f.f_back
        return ""

    # ---------------------------------------------------------------- frame kinds
    @staticmethod
    def _library_dirs():
        dirs = set()
        import sysconfig

        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            p = sysconfig.get_paths().get(key)
            if p:
                dirs.add(os.path.realpath(p))
        for m in ("numpy", "keras"):
            mod = sys.modules.get(m)
            if mod is not None and getattr(mod, "__file__", None):
                dirs.add(os.path.dirname(os.path.dirname(os.path.realpath(mod.__file__))))
        dirs.discard(os.path.dirname(_KIT_PKG))  # the kit itself is never "a library"
        return tuple(sorted(dirs))

    def _kind(self, code) -> str:
        """'student', 'kit', 'grader', 'forbidden', 'library' or 'transparent'."""
        key = id(code)
        hit = self._kinds.get(key)
        if hit is not None and hit[0] is code:
            return hit[1]
        if key in self._student_codes:
            kind = "student"
        elif code.co_filename in (TRAMPOLINE_FILE, __file__):
            kind = "transparent"
        elif key in self._grader_codes:
            kind = "grader"
        elif key in _KIT_CODES and _KIT_CODES[key][0] is code:
            kind = _KIT_CODES[key][1]
            if kind == "kit" and fingerprint(code, self._memo) in self._forbidden_prints:
                kind = "forbidden"
        elif fingerprint(code, self._memo) in self._forbidden_prints:
            kind = "forbidden"
        else:
            path = code.co_filename
            real = os.path.realpath(path) if path and not path.startswith("<") else path
            if path.startswith("<frozen") or (
                    real.startswith(self._lib_dirs) and not real.startswith(_KIT_PKG)):
                kind = "library"
            else:
                kind = "student"  # dynamic code, copies, files of the submission's making
        self._kinds[key] = (code, kind)
        return kind

    def _framework(self, code) -> bool:
        path = code.co_filename
        for d in self._lib_dirs:
            if path.startswith(d):
                top = path[len(d):].lstrip(os.sep).split(os.sep, 1)[0]
                if top in _FRAMEWORK_DIRS:
                    return top != "keras" or "convert_to_numpy" in getattr(
                        code, "co_qualname", code.co_name)
        return False

    def _walk(self, frame, rule: str):
        """Decide who asked for a guarded operation, walking outwards from ``frame``.

        ``rule="use"``: a forbidden function; allowed only when the nearest caller outside
        libraries is an allowed part of the kit. ``rule="student"``: a file or code
        operation, or (``rule="numpy"``) a NumPy conversion; refused only when the nearest
        such caller is the submission's code.
        Returns None when allowed, else the frame that decided.
        """
        f = frame
        while f is not None:
            code = f.f_code
            kind = self._kind(code)
            if rule == "numpy":
                if code.co_filename == __file__:
                    return None  # the guard's own compiled pass (tracing machinery)
                if kind == "transparent" or self._framework(code):
                    f = f.f_back
                    continue
                return f if kind == "student" else None
            if kind in ("transparent", "forbidden", "library"):
                f = f.f_back
                continue
            if rule == "use":
                return None if kind == "kit" else f
            return f if kind == "student" else None
        return frame if rule == "use" else None

    # ----------------------------------------------------------------- tripwires
    def _resolve(self, name):
        if name in sys.modules:
            return sys.modules[name]
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            base = sys.modules.get(".".join(parts[:i]))
            if base is None:
                continue
            obj = base
            for attr in parts[i:]:
                try:
                    obj = getattr(obj, attr)
                except Exception:  # noqa: BLE001 - lazy modules may raise anything
                    return None
            return obj
        return None

    def _targets(self):
        """(dotted name, function) of everything forbidden that is loaded, and the files."""
        found = {}
        for name in self.forbidden:
            if name == "kerasattn.grader" or name.startswith("kerasattn.grader."):
                continue  # the grader's own code runs in this process
            modules = [m for n, m in list(sys.modules.items())
                       if isinstance(m, types.ModuleType)
                       and (n == name or n.startswith(name + "."))]
            objs = []
            if modules:
                for m in modules:
                    objs.extend(_module_members(m))
                    path = getattr(m, "__file__", None)
                    if path and os.path.realpath(path).startswith(_KIT_PKG):
                        self._forbidden_files[os.path.realpath(path)] = m.__name__
            else:
                obj = self._resolve(name)
                if obj is not None:
                    objs.append(obj)
                    if isinstance(obj, (types.FunctionType, type)):
                        try:
                            path = os.path.realpath(inspect.getfile(obj))
                        except (TypeError, OSError):
                            path = ""
                        if path.startswith(_KIT_PKG):
                            self._forbidden_files[path] = f"{obj.__module__}"
            for obj in objs:
                for qual, func in _function_codes(obj):
                    found.setdefault(id(func), (qual, func))
        return list(found.values())

    def _install_tripwires(self) -> None:
        for qual, func in self._targets():
            code = func.__code__
            if code.co_filename == TRAMPOLINE_FILE:
                continue
            for c in iter_codes(code):
                if len(c.co_code) >= MIN_COPY_BYTES or c is code:
                    self._forbidden_prints.setdefault(fingerprint(c, self._memo), qual)
            self._wire(func, qual, "use")

    def _wire(self, func, label: str, rule: str) -> None:
        """Replace ``func.__code__`` by a trampoline into :meth:`_dispatch`."""
        original = types.FunctionType(func.__code__, func.__globals__, func.__name__,
                                      func.__defaults__, func.__closure__)
        original.__kwdefaults__ = func.__kwdefaults__
        original.__qualname__ = func.__qualname__
        try:
            func.__signature__ = inspect.signature(original)
        except (TypeError, ValueError):
            pass
        index = len(self._wires)
        self._wires.append((label, original, rule))
        func.__globals__[GUARD_GLOBAL] = self._dispatch
        func.__code__ = _trampoline(index, len(func.__code__.co_freevars))

    def _dispatch(self, index, args, kwargs):
        label, original, rule = self._wires[index]
        if self.active and not getattr(self._busy, "on", False):
            caller = sys._getframe(2)
            decided = self._walk(caller, "use" if rule == "use" else "numpy")
            if decided is not None:
                where = self._line(caller)
                at = f" ({where})" if where else ""
                if rule == "use":
                    whose = "the kit's own " if label.startswith("kerasattn") else ""
                    msg = (f"uses {whose}`{label}`{at}, which this exercise does not allow, "
                           "however it is reached (its docstring lists what you may NOT use)")
                else:
                    msg = _numpy_message(label, where)
                self.record(msg)
                raise GuardError(msg)
        return original(*args, **kwargs)

    def _install_numpy_tripwires(self) -> None:
        try:
            if self.backend == "torch":
                import torch

                self._wire(torch.Tensor.__array__, "np.asarray(tensor)", "numpy")
                for name in ("numpy", "tolist"):
                    native = getattr(torch._C.TensorBase, name)
                    setattr(torch.Tensor, name, _method_proxy(native))
                    self._wire(getattr(torch.Tensor, name), f"tensor.{name}()", "numpy")
            elif self.backend == "tensorflow":
                from tensorflow.python.framework import ops as tf_ops

                for name in ("__array__", "numpy"):
                    fn = vars(tf_ops._EagerTensorBase).get(name)
                    if isinstance(fn, types.FunctionType):
                        self._wire(fn, "np.asarray(tensor)" if name == "__array__"
                                   else "tensor.numpy()", "numpy")
            elif self.backend == "jax":
                import jax

                cls = type(jax.numpy.zeros(()))
                for name in ("__array__", "tolist"):
                    fn = vars(cls).get(name)
                    if isinstance(fn, types.FunctionType):
                        self._wire(fn, "np.asarray(tensor)" if name == "__array__"
                                   else "tensor.tolist()", "numpy")
        except Exception:  # noqa: BLE001, S110 - no such hooks: the compiled pass only
            pass

    # ----------------------------------------------------------------- audit hook
    def _blocked_file(self, path) -> str | None:
        try:
            path = os.fsdecode(os.fspath(path))
        except TypeError:
            return None
        if not path.endswith((".py", ".pyc")) and not (
                self.solutions_dir and "solutions" in path):
            return None
        real = os.path.realpath(path)
        if real == self.submission:
            return None
        if self.solutions_dir and real.startswith(self.solutions_dir + os.sep):
            return "the solutions"
        if real.endswith(".pyc") and os.path.basename(os.path.dirname(real)) == "__pycache__":
            stem = os.path.basename(real).split(".")[0]
            real = os.path.join(os.path.dirname(os.path.dirname(real)), stem + ".py")
        name = self._forbidden_files.get(real)
        return f"the source of `{name}`" if name else None

    def _copied(self, code) -> str | None:
        for c in iter_codes(code):
            if len(c.co_code) < MIN_COPY_BYTES:
                continue
            hit = self._forbidden_prints.get(fingerprint(c, self._memo))
            if hit:
                return hit
        return None

    def _audit(self, event, args):
        if event not in _AUDITED or getattr(self._busy, "on", False):
            return
        if event in _PROCESS_EVENTS or event in _NATIVE_EVENTS:
            if self.installed:
                self._check_process(event, sys._getframe().f_back,
                                    native=event in _NATIVE_EVENTS)
            return
        if not self.active:
            return
        self._busy.on = True
        try:
            self._audit_event(event, args)
        finally:
            self._busy.on = False

    # ------------------------------------------------------------------- processes
    def _check_process(self, what: str, frame, native: bool = False) -> None:
        """Refuse a new process, or native code through ``ctypes``, that the submission
        asks for (see the module docstring). ``ctypes`` is refused only when the submission
        calls it itself: a library it imports (torch loads its own libraries with ``ctypes``)
        may."""
        self._busy.on = True
        try:
            if native:
                while frame is not None and frame.f_code.co_filename.startswith(_CTYPES_DIR):
                    frame = frame.f_back                 # ctypes' own frames
                decided = (frame if frame is not None and self._kind(frame.f_code) == "student"
                           else None)
            else:
                decided = self._walk(frame, "student")
            in_thread = not native and decided is None and (
                threading.get_ident() not in self._threads_at_install)
            if decided is None and not in_thread:
                return
            where = self._line(frame)
            at = f" at {where}" if where else (
                " in a thread it started" if in_thread else "")
            name = os.path.basename(self.submission)
            digits = name.split("_", 1)[0]
            label = f"exercise {digits}" if digits.isdigit() else name
            does = "calls native code through ctypes" if native else "starts a process"
            msg = (f"{label}: your code {does} ({what}{at}); exercises must "
                   "compute their answer in the submission itself")
            self.record(msg)
        finally:
            self._busy.on = False
        raise GuardError(msg)

    def _install_process_wrappers(self) -> None:
        """Wrap ``_posixsubprocess.fork_exec``, which starts a process without an audit event."""
        try:
            import _posixsubprocess
        except ImportError:
            return
        original = _posixsubprocess.fork_exec
        if getattr(original, "__kerasattn_wrapped__", False):
            return
        guard = self

        def fork_exec(*args, **kwargs):
            if not getattr(guard._busy, "on", False):
                guard._check_process("_posixsubprocess.fork_exec", sys._getframe().f_back)
            return original(*args, **kwargs)

        fork_exec.__kerasattn_wrapped__ = True
        _posixsubprocess.fork_exec = fork_exec
        sub = sys.modules.get("subprocess")
        if sub is not None and getattr(sub, "_fork_exec", None) is original:
            sub._fork_exec = fork_exec

    def _audit_event(self, event, args):
        frame = sys._getframe(2)
        if event == "open":
            what = self._blocked_file(args[0]) if args and args[0] is not None else None
            if what and self._walk(frame, "student") is not None:
                where = self._line(frame)
                msg = (f"reads {what}" + (f" ({where})" if where else "")
                       + ": this exercise asks you to write it yourself")
                self.record(msg)
                raise PermissionError(msg)
            return
        code = None
        if event == "exec" and isinstance(args[0], types.CodeType):
            code = args[0]
        elif event == "compile" and args and isinstance(args[0], (str, bytes)):
            if self._walk(frame, "student") is None:
                return
            try:
                code = compile(args[0], "<copy>", "exec", dont_inherit=True)
            except (SyntaxError, ValueError, TypeError):
                return
        elif event == "marshal.loads" and args and isinstance(args[0], (bytes, bytearray)):
            import marshal

            try:
                code = marshal.loads(bytes(args[0]))
            except (ValueError, EOFError, TypeError):
                return
            if not isinstance(code, types.CodeType):
                return
        if code is None:
            return
        hit = self._copied(code)
        if hit and self._walk(frame, "student") is not None:
            where = self._line(frame)
            msg = (f"runs a copy of the kit's own `{hit}`" + (f" ({where})" if where else "")
                   + ": this exercise asks you to write it yourself")
            self.record(msg)
            raise GuardError(msg)

    # ------------------------------------------------------------------- installing
    def install(self) -> Guard:
        """Tripwires, the audit hook and the NumPy hooks; then check the submission's code."""
        import linecache

        linecache.clearcache()  # a source read before now must not be served from memory
        self._install_tripwires()
        if not self.allow_numpy:
            self._install_numpy_tripwires()
        self._install_process_wrappers()
        self._threads_at_install = {t.ident for t in threading.enumerate()}
        sys.addaudithook(self._audit)
        self.installed = True
        for c in iter_codes(self._submission_code):
            if len(c.co_code) < MIN_COPY_BYTES:
                continue
            fp = fingerprint(c, self._memo)
            if fp in self._forbidden_prints and fp not in self._skeleton_prints:
                self.record(f"contains a copy of the kit's own `{self._forbidden_prints[fp]}` "
                            f"(line {c.co_firstlineno}): this exercise asks you to write it "
                            "yourself")
        self.active = True
        return self

    def wrap_student(self, module) -> None:
        """Run the submission's functions and its layers' methods compiled (JAX, TF)."""
        if self.allow_numpy or self.backend not in ("jax", "tensorflow"):
            return
        for name, value in list(vars(module).items()):
            if isinstance(value, types.FunctionType) and id(value.__code__) in \
                    self._student_codes:
                setattr(module, name, self._compiled(value))
            elif isinstance(value, type) and getattr(value, "__module__", "") == \
                    module.__name__:
                for attr, member in list(vars(value).items()):
                    if (isinstance(member, types.FunctionType) and not attr.startswith("__")
                            and attr not in _NOT_COMPILED
                            and id(member.__code__) in self._student_codes):
                        setattr(value, attr, self._compiled(member))

    def _compiled(self, func):
        import functools

        guard = self

        @functools.wraps(func)
        def compiled_call(*args, **kwargs):
            if not guard.active or getattr(guard._compiling, "on", False):
                return func(*args, **kwargs)
            leaves, rebuild = _tensor_leaves(args, kwargs, guard.backend)
            if not leaves:
                return func(*args, **kwargs)
            guard._compiling.on = True
            try:
                return _run_compiled(func, leaves, rebuild, guard.backend)
            except GuardError:
                raise
            except Exception as exc:  # noqa: BLE001 - decide below
                found = _numpy_escape(exc)
                if found is None:
                    pass  # not compilable for another reason: run it eagerly below
                else:
                    where = _student_line(exc.__traceback__, guard)
                    msg = _numpy_message(found, where)
                    guard.record(msg)
                    raise GuardError(msg) from None
            finally:
                guard._compiling.on = False
            return func(*args, **kwargs)

        return compiled_call

    def finish(self) -> None:
        """Stop checking (the grader converts the outputs after this)."""
        self.active = False


# -------------------------------------------------------------------------- helpers
def _trampoline(index: int, n_free: int):
    """A code object that calls the guard's dispatcher, with ``n_free`` free variables."""
    free = [f"_free{i}" for i in range(n_free)]
    lines = ["def _outer():"]
    lines += [f"    {v} = None" for v in free]
    lines += ["    def tripwire(*args, **kwargs):",
              f"        return {GUARD_GLOBAL}({index}, args, kwargs)"]
    lines += [f"        {v}" for v in free]  # dead code: makes them free variables
    lines += ["    return tripwire"]
    namespace = {}
    exec(compile("\n".join(lines), TRAMPOLINE_FILE, "exec"), namespace)  # noqa: S102
    return namespace["_outer"]().__code__


def _method_proxy(native):
    def proxy(self, *args, **kwargs):
        return native(self, *args, **kwargs)

    return proxy



def _student_line(tb, guard) -> str:
    found = ""
    import traceback

    for frame in traceback.extract_tb(tb):
        if os.path.realpath(frame.filename) == guard.submission:
            found = f"line {frame.lineno}: {(frame.line or '').strip()}"
    return found
