"""Names needed before Keras is imported: backends, model names, backend selection, errors.

Keras fixes its backend the first time it is imported, so everything that chooses a backend
(the ``kerasattn`` command, a lesson script's ``--backend`` option, the grader's child
processes) works from this module, which imports neither keras nor a backend framework.
It also keeps TensorFlow's start-up log lines (oneDNN, CUDA, absl, CPU-feature notices) out
of the kit's output: :func:`quiet_tensorflow` runs when ``kerasattn`` is imported.
"""
from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import os
import re
import sys
import tempfile

BACKENDS = ("tensorflow", "jax", "torch")
"""The Keras backends the kit runs on."""

MODEL_NAMES = ("seq2seq", "bahdanau", "bahdanau_multihead", "encoder_self_attention",
               "decoder_self_attention", "transformer_decoder_on_gru", "transformer")
"""The seven models, in course order: each step changes one thing in the architecture
(``kerasattn.models.MODEL_NAMES`` is this tuple)."""

_FRAMEWORK = {"tensorflow": "tensorflow", "jax": "jax", "torch": "torch"}


class UsageError(Exception):
    """A mistake in what the user asked for (an option, a path, a name).

    The command prints it as ``kerasattn: error: ...`` (exit status 2), without a traceback.
    """


def installed_backends() -> list[str]:
    """The backends whose framework can be imported here (checked without importing it)."""
    return [b for b in BACKENDS if importlib.util.find_spec(_FRAMEWORK[b]) is not None]


def check_backend(name: str, source: str = "--backend") -> str:
    """Return ``name`` if it is a backend whose framework is installed (``source``: where
    the name came from, for the message: ``--backend`` or ``$KERAS_BACKEND``).

    Raises:
        UsageError: an unknown name, or a backend whose framework is not installed (the
            message says how to install it and which backends are available).
    """
    if name not in BACKENDS:
        raise UsageError(f"{source} must be one of {', '.join(BACKENDS)}; received {name!r}")
    if importlib.util.find_spec(_FRAMEWORK[name]) is None:
        have = ", ".join(installed_backends()) or "none"
        raise UsageError(f"backend {name!r} is not installed (the Python package "
                         f"{_FRAMEWORK[name]!r} cannot be imported). Install it with "
                         f"`pip install 'kerasattn[{name}]'`, or pick an installed "
                         f"backend: {have}.")
    return name


def keras_backend_in_use() -> str | None:
    """The backend of an already imported keras, else None (keras not imported yet)."""
    keras_mod = sys.modules.get("keras")
    if keras_mod is None:
        return None
    try:
        return keras_mod.backend.backend()
    except Exception:  # a half-imported keras
        return "unknown"


def select_backend(name: str | None) -> str | None:
    """Make ``name`` the Keras backend of this process (sets ``KERAS_BACKEND``).

    Args:
        name: a backend name, or None to keep ``$KERAS_BACKEND`` (checked if set).

    Returns:
        The backend that will be used, or None for Keras's own default.

    Raises:
        UsageError: ``name`` is not an installed backend, or keras was already imported
            with another backend (restart Python with ``KERAS_BACKEND=name``).
    """
    if name is None:
        env = os.environ.get("KERAS_BACKEND")
        return check_backend(env, "$KERAS_BACKEND") if env else None
    check_backend(name)
    current = keras_backend_in_use()
    if current is not None and current != name:
        raise UsageError(f"keras is already imported with backend {current!r}; start a new "
                         f"Python process with KERAS_BACKEND={name} to use {name!r}")
    os.environ["KERAS_BACKEND"] = name
    return name


def default_backend() -> str:
    """The backend Keras would choose here: ``$KERAS_BACKEND``, else the ``backend`` of
    ``~/.keras/keras.json``, else ``"tensorflow"`` (Keras's own default).

    Raises:
        UsageError: the backend named there is unknown or not installed.
    """
    import json
    from pathlib import Path

    name, source = os.environ.get("KERAS_BACKEND"), "$KERAS_BACKEND"
    if not name:
        config = Path(os.environ.get("KERAS_HOME", Path.home() / ".keras")) / "keras.json"
        source = f"the backend in {config}"
        try:
            with open(config) as f:
                name = json.load(f).get("backend")
        except (OSError, ValueError, AttributeError):
            name = None
    return check_backend(name, source) if name else check_backend("tensorflow")


def add_backend_option(parser, *, default=None, allow_all: bool = False) -> None:
    """Add the kit's one ``--backend NAME`` option to an argparse ``parser``.

    Args:
        parser: the parser or subparser.
        default: the value when the option is absent (``argparse.SUPPRESS`` leaves a value
            set by an enclosing parser alone).
        allow_all: also accept ``all`` (every backend: the grader).

    The value is checked where it is used (:func:`select_backend`, :func:`check_backend`),
    so an unknown or missing backend gives the same :class:`UsageError` everywhere.
    """
    names = ", ".join(BACKENDS) + (", or all (every installed backend)" if allow_all else "")
    parser.add_argument("--backend", default=default, metavar="NAME",
                        help=f"Keras backend: {names} (default: $KERAS_BACKEND, else "
                             f"Keras's default from ~/.keras/keras.json, else tensorflow)")


def check_model_name(name: str, argument: str = "MODEL") -> str:
    """``name`` if it is one of the seven models, else a :class:`UsageError` naming
    ``argument`` (the positional ``MODEL``, or a flag such as ``--model``)."""
    if name not in MODEL_NAMES:
        raise UsageError(f"{argument} must be one of {', '.join(MODEL_NAMES)}; received "
                         f"{name!r}")
    return name


# ---------------------------------------------------------------------------------------
# TensorFlow start-up noise
# ---------------------------------------------------------------------------------------
def fast_xla_compile(env: dict) -> dict:
    """``env`` with XLA told to skip its expensive LLVM passes (JAX processes on tiny
    shapes, where compile time, not run time, is the cost: the grader's cases and the test
    suite). Appends to any ``XLA_FLAGS`` already set; returns ``env``."""
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0"
                        " --xla_llvm_disable_expensive_passes=true").strip()
    return env


JAX_CACHE_ENV = "KERASATTN_JAX_CACHE"
"""Environment variable for JAX's persistent compilation cache
(:func:`kerasattn.backend_utils.jax_compilation_cache`): unset or empty = the kit's cache
directory (``$XDG_CACHE_HOME/kerasattn/jax``, else ``~/.cache/kerasattn/jax``), ``off`` (or
``0``, ``false``, ``none``) = none, anything else = the directory to use. JAX runs what it
reads from the cache: give it a directory only you can write to."""

JAX_CACHE_OFF = ("off", "0", "false", "none")
"""Values of :data:`JAX_CACHE_ENV` that turn the kit's cache off (any letter case)."""


QUIET_ENV = {"TF_CPP_MIN_LOG_LEVEL": "3",  # C++ INFO/WARNING/ERROR logs (cuInit, ...)
             "GRPC_VERBOSITY": "ERROR"}
"""Environment set (unless already set) before TensorFlow is imported."""

# Lines TensorFlow's shared libraries write to stderr while they load, before its log level
# applies: removed from what the import printed, everything else is passed on.
_NOISE = re.compile(
    r"absl::InitializeLog|oneDNN custom operations|cudart_stub|cuda_platform|cuInit|"
    r"cpu_feature_guard|To enable the following instructions|rebuild TensorFlow with|"
    r"Unable to register cu(DNN|FFT|BLAS) factory|computation placer already registered|"
    r"TF-TRT Warning|Could not find cuda drivers|I0000 00:00")


@contextlib.contextmanager
def _filtered_stderr():
    """Send file descriptor 2 to a temporary file; pass on the lines that are not noise."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no real stderr (some notebooks)
        yield
        return
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield
        finally:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            kept = [line for line in tmp.read().decode("utf-8", "replace").splitlines(True)
                    if not _NOISE.search(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


class _QuietLoader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        sys.meta_path[:] = [f for f in sys.meta_path
                            if not isinstance(f, _QuietTensorFlowFinder)]  # done after this
        with _filtered_stderr():
            self._loader.exec_module(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _QuietTensorFlowFinder(importlib.abc.MetaPathFinder):
    """Wraps the import of the ``tensorflow`` package in :func:`_filtered_stderr`."""

    _searching = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "tensorflow" or self._searching:
            return None
        self._searching = True  # the other finders locate the package
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._searching = False
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _QuietLoader(spec.loader)
        return spec


def quiet_tensorflow() -> None:
    """Silence TensorFlow's start-up messages in this process and its children.

    Sets :data:`QUIET_ENV` (values already in the environment win) and, if TensorFlow is
    not imported yet, filters the lines its libraries print while loading. Real errors
    and warnings still reach stderr.
    """
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    if "tensorflow" not in sys.modules and not any(
            isinstance(f, _QuietTensorFlowFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _QuietTensorFlowFinder())
