"""Backend-specific code (training knobs, step compilation), kept out of the neutral modules.

Everything here is chosen per ``keras.backend.backend()``; a backend library (torch...) is
imported only inside the function that needs it, and only on that backend.
"""
from __future__ import annotations

import warnings

import keras
from keras import ops

from kerasattn._env import JAX_CACHE_ENV, JAX_CACHE_OFF


def training_jit_compile(jit_compile="auto"):
    """The ``jit_compile`` value :func:`kerasattn.training.compile_for_translation` uses.

    Args:
        jit_compile: ``"auto"``, True or False. True / False are returned unchanged.

    Returns:
        ``"auto"`` resolves to Keras's own choice: XLA on JAX; graph mode without XLA on a
        CPU-only TensorFlow; eager on torch (``torch.compile`` through ``jit_compile=True``
        is slower for these models, see docs/benchmarks_training.md).
    """
    if jit_compile not in ("auto", True, False):
        raise ValueError("`jit_compile` must be 'auto', True or False; received "
                         f"jit_compile={jit_compile!r}.")
    return jit_compile


def training_steps_per_execution(steps_per_execution: int = 1) -> int:
    """``steps_per_execution`` valid on this backend (torch supports only 1)."""
    if isinstance(steps_per_execution, bool) or not isinstance(steps_per_execution, int) \
            or steps_per_execution < 1:
        raise ValueError("`steps_per_execution` must be an int >= 1; received "
                         f"steps_per_execution={steps_per_execution!r}.")
    if keras.backend.backend() == "torch" and steps_per_execution != 1:
        warnings.warn(f"steps_per_execution={steps_per_execution} is not supported by the "
                      "torch backend of keras; using 1.", stacklevel=3)
        return 1
    return steps_per_execution


def cross_entropy_kernel(label_smoothing: float = 0.0) -> str:
    """The route :func:`kerasattn.metrics.masked_token_ce` takes from logits to the loss.

    The three routes give the same value; their speed depends on the backend. Loss and
    gradient of (64, T, 7,900) logits, T in {8, 16, 24}, milliseconds per batch on a 2-core
    CPU (``python benchmarks/bench_cross_entropy.py``, one run per backend):

    ==========  =========  ======  ======  =====
    backend     smoothing  gather  sparse  dense
    ==========  =========  ======  ======  =====
    tensorflow  0          76.7    38.2    50.2
    tensorflow  0.1        103.6   70.6    57.7
    jax         0          35.9    39.1    38.1
    jax         0.1        52.4    53.6    35.3
    torch       0          38.0    52.5    74.4
    torch       0.1        52.1    137.1   87.4
    ==========  =========  ======  ======  =====

    Returns:
        ``"gather"`` (gather ``log p_y`` from a log-softmax), ``"sparse"`` (the fused sparse
        kernel, ``ops.sparse_categorical_crossentropy``) or ``"dense"`` (the fused
        ``categorical_crossentropy`` against the dense, smoothed target ``q``): the fastest
        for this backend and ``label_smoothing``.
    """
    backend = keras.backend.backend()
    if backend == "tensorflow":
        return "dense" if label_smoothing else "sparse"
    if backend == "jax" and label_smoothing:
        return "dense"
    return "gather"


def describe_backend() -> dict:
    """Backend name, version and thread settings, for benchmark reports."""
    import os

    backend = keras.backend.backend()
    info = {"backend": backend, "cpu_count": os.cpu_count()}
    if backend == "torch":
        import torch

        info.update(version=torch.__version__, threads=torch.get_num_threads(),
                    interop_threads=torch.get_num_interop_threads())
    elif backend == "jax":
        import jax

        info.update(version=jax.__version__, devices=len(jax.devices()))
    elif backend == "tensorflow":
        import tensorflow as tf

        info.update(version=tf.__version__,
                    intra_op_threads=tf.config.threading.get_intra_op_parallelism_threads(),
                    inter_op_threads=tf.config.threading.get_inter_op_parallelism_threads())
    return info


def compute_device() -> str:
    """Where the current backend runs its computations, e.g. ``"cpu"`` or
    ``"gpu (NVIDIA A100, 1 device)"``: the first accelerator the backend sees, else the CPU.
    Nothing in the kit pins a device; this only reports the backend's own choice."""
    backend = keras.backend.backend()
    kinds = []
    if backend == "torch":
        import torch

        if torch.cuda.is_available():
            n = torch.cuda.device_count()
            return f"gpu ({torch.cuda.get_device_name(0)}, {n} device{'s' * (n > 1)})"
        mps = getattr(torch.backends, "mps", None)
        return "mps" if mps is not None and mps.is_available() else "cpu"
    if backend == "jax":
        import jax

        kinds = [(d.platform, getattr(d, "device_kind", d.platform)) for d in jax.devices()]
    elif backend == "tensorflow":
        import tensorflow as tf

        gpus = tf.config.list_logical_devices("GPU")
        kinds = [("gpu", d.name) for d in gpus] or [("cpu", "cpu")]
    if not kinds or kinds[0][0] == "cpu":
        return "cpu"
    n = len(kinds)
    return f"{kinds[0][0]} ({kinds[0][1]}, {n} device{'s' * (n > 1)})"


def set_mixed_precision(policy: str | None) -> str:
    """Set the global Keras dtype policy before a model is built.

    Args:
        policy: None or ``"float32"`` (full precision), ``"auto"`` (``mixed_float16`` on a
            GPU, ``mixed_bfloat16`` elsewhere: CPUs have no fast float16), ``"mixed_float16"``
            or ``"mixed_bfloat16"``.

    Returns:
        The policy name now in force.
    """
    allowed = (None, "float32", "auto", "mixed_float16", "mixed_bfloat16")
    if policy not in allowed:
        raise ValueError(f"policy must be one of {allowed}; received {policy!r}")
    if policy == "auto":
        policy = "mixed_float16" if compute_device().startswith("gpu") else "mixed_bfloat16"
    keras.config.set_dtype_policy(policy or "float32")
    return keras.config.dtype_policy().name


def _proc_stat_times(path="/proc/stat"):
    """`(total, idle)` jiffies of all cores from Linux's ``/proc/stat`` (idle includes iowait)."""
    with open(path) as f:
        fields = [int(x) for x in f.readline().split()[1:9]]  # user .. steal
    if len(fields) < 4:
        raise ValueError(f"unexpected {path} format")
    return sum(fields), fields[3] + (fields[4] if len(fields) > 4 else 0)


def busy_cores(sample_seconds=0.25, stat_path="/proc/stat") -> float:
    """How many cores other processes keep busy now.

    On Linux, the non-idle share of all cores over a short window read from ``/proc/stat``
    (this process sleeps meanwhile, so it counts only the others); elsewhere, or if that
    fails, the 1-minute load average (which reacts to changes only over minutes).
    """
    import os
    import time

    try:
        total0, idle0 = _proc_stat_times(stat_path)
        time.sleep(sample_seconds)
        total1, idle1 = _proc_stat_times(stat_path)
        if total1 > total0:
            return (os.cpu_count() or 1) * (1.0 - (idle1 - idle0) / (total1 - total0))
    except (OSError, ValueError):
        pass
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def auto_torch_threads() -> int:
    """Intra-op threads for torch: the cores not already busy (:func:`busy_cores`), >= 1.

    torch's OpenMP pool defaults to one thread per core and spin-waits; when other processes
    already keep the cores busy (a shared machine, several notebooks) the extra threads
    compete for the same cores and each step gets slower (docs/benchmarks_training.md).
    Samples ``/proc/stat`` for 0.25 s: call it once, not per step.
    """
    import os

    cores = os.cpu_count() or 1
    return max(1, min(cores, int(cores - busy_cores() + 0.5)))


TORCH_THREADS_ENV = "KERASATTN_TORCH_THREADS"
"""Environment variable choosing torch's intra-op threads for training and decoding:
unset or empty = torch's own default (one per core), ``auto`` = :func:`auto_torch_threads`
(measured once per process), or a thread count."""

_configured = {}


def configured_torch_threads() -> int | None:
    """The thread count :data:`TORCH_THREADS_ENV` asks for (None = torch's default).

    ``auto`` is measured the first time and remembered for the rest of the process.

    Raises:
        ValueError: the variable holds something other than ``auto`` or an int >= 1.
    """
    import os

    value = os.environ.get(TORCH_THREADS_ENV, "").strip().lower()
    if value in _configured:
        return _configured[value]
    if value in ("", "none", "default"):
        n = None
    elif value == "auto":
        n = auto_torch_threads()
    elif value.isdigit() and int(value) >= 1:
        n = int(value)
    else:
        raise ValueError(f"{TORCH_THREADS_ENV} must be 'auto' or an int >= 1; received "
                         f"{TORCH_THREADS_ENV}={value!r}.")
    _configured[value] = n
    return n


class torch_threads:
    """Context manager: set torch's intra-op threads for a block, restore them after.

    A no-op on other backends (torch is imported only on the torch backend).

    Args:
        threads: an int >= 1, None (leave torch's setting as is) or ``"auto"``: what
            :data:`TORCH_THREADS_ENV` says (:func:`configured_torch_threads`; unset = leave
            as is). Nothing is measured per call.
    """

    def __init__(self, threads="auto"):
        if threads not in ("auto", None) and (isinstance(threads, bool) or
                                              not isinstance(threads, int) or threads < 1):
            raise ValueError("`torch_threads` must be an int >= 1, 'auto' or None; received "
                             f"torch_threads={threads!r}.")
        self.threads = threads
        self.n = None  # the count in force inside the block (torch only)
        self._previous = None

    def __enter__(self):
        if keras.backend.backend() == "torch":
            import torch

            n = configured_torch_threads() if self.threads == "auto" else self.threads
            if n is not None and n != torch.get_num_threads():
                self._previous = torch.get_num_threads()
                torch.set_num_threads(n)
            self.n = torch.get_num_threads()
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            import torch

            torch.set_num_threads(self._previous)
            self._previous = None
        return False


# -- JAX: the persistent compilation cache -------------------------------------------------

#: Compilations shorter than this are not written to the cache (JAX's default is 1 s; the
#: real-data `transformer`'s evaluation step compiles in 0.5-0.9 s, its train step in
#: 3-6 s: ``docs/measured/jax_compile.md``). A value the user gave JAX
#: (``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS``) is kept.
JAX_CACHE_MIN_COMPILE_SECONDS = 0.3

_jax_cache_tried = set()   # values of $KERASATTN_JAX_CACHE already acted on (warned once)


def default_jax_cache_dir() -> str:
    """The kit's JAX compilation cache directory.

    Returns:
        ``$XDG_CACHE_HOME/kerasattn/jax``, else ``~/.cache/kerasattn/jax``.
    """
    import os

    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "kerasattn", "jax")


def _private_dir(path: str, tighten: bool = False) -> None:
    """Create ``path`` (mode 0o700) if needed; raise OSError unless it is a directory of
    this user that no one else can write to (JAX runs what it reads from a cache).

    ``tighten``: a directory of this user that others can write to is made 0o700 instead
    (the kit's own directory). Ownership and modes are not checked on Windows.
    """
    import os
    import stat

    os.makedirs(path, mode=0o700, exist_ok=True)
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(f"not a directory: {path!r}")
    if os.name != "nt":
        if info.st_uid != os.getuid():
            raise PermissionError(f"owned by another user (uid {info.st_uid}): {path!r}")
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            if not tighten:
                raise PermissionError(
                    f"others can write to it (mode {stat.S_IMODE(info.st_mode):o}; "
                    f"`chmod go-w {path}` makes it yours alone): {path!r}")
            os.chmod(path, 0o700)
    if not os.access(path, os.W_OK):
        raise PermissionError(f"not writable: {path!r}")


def jax_compilation_cache() -> str | None:
    """Turn on JAX's persistent compilation cache as ``$KERASATTN_JAX_CACHE`` says.

    On JAX every new batch shape compiles the train step (3-6 s on a 2-core CPU); with the
    cache on, a later run of the same model and shapes (a lesson run again, a second
    ``kerasattn train``) reads the compiled step from disk instead.
    :data:`kerasattn._env.JAX_CACHE_ENV` unset or empty: :func:`default_jax_cache_dir`;
    one of :data:`kerasattn._env.JAX_CACHE_OFF`: none; else the directory to use. The
    directory is created private (mode 0o700; the kit's default one is made so if others
    can write to it); one that is not this user's alone or cannot be created is reported
    (a warning naming it and the value received) and training goes on without a cache:
    JAX runs what it reads there. A cache the user gave JAX (``JAX_COMPILATION_CACHE_DIR``,
    ``jax.config``) is used as it is, whatever the variable says; once a cache is on, JAX
    keeps it for the rest of the process. Called by :func:`kerasattn.training.train` and
    :func:`compile_function`; does nothing on other backends.

    Returns:
        The cache directory JAX uses, or None (another backend, or no cache).
    """
    if keras.backend.backend() != "jax":
        return None
    import os

    import jax

    value = os.environ.get(JAX_CACHE_ENV, "").strip()
    if (value not in _jax_cache_tried and jax.config.jax_compilation_cache_dir is None
            and value.lower() not in JAX_CACHE_OFF):
        _jax_cache_tried.add(value)
        path = os.path.abspath(os.path.expanduser(value or default_jax_cache_dir()))
        try:
            _private_dir(path, tighten=not value)
        except OSError as err:
            warnings.warn(f"{JAX_CACHE_ENV}: cannot use {path!r} for JAX's compilation "
                          f"cache ({err}); compiling without it (received "
                          f"{JAX_CACHE_ENV}={value!r}). Set it to a directory of your own, "
                          "or to 'off'.", stacklevel=3)
        else:
            jax.config.update("jax_compilation_cache_dir", path)
            if "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS" not in os.environ:
                jax.config.update("jax_persistent_cache_min_compile_time_secs",
                                  JAX_CACHE_MIN_COMPILE_SECONDS)
    if not jax.config.jax_enable_compilation_cache:
        return None
    return jax.config.jax_compilation_cache_dir


# -- compiling a decoding step --------------------------------------------------------
# JAX: ``jax.jit`` of a *stateless* call: the model's variable values are arguments (inside
# ``keras.StatelessScope``), so one compiled step serves every later weight update;
# TensorFlow: ``tf.function`` (graph mode; variables are read live); torch: eager (a Python
# loop of small kernels; ``torch.compile`` costs more than it saves for steps this small).
# The step index ``t`` is passed as a scalar int32 tensor so that one trace serves every step.

COMPILE_MODES = ("auto", True, False)


def resolve_compile(compile="auto") -> bool:
    """``"auto"`` -> True on JAX and TensorFlow, False on torch."""
    if compile not in COMPILE_MODES:
        raise ValueError(f"`compile` must be one of {COMPILE_MODES}; received "
                         f"compile={compile!r}.")
    if compile == "auto":
        return keras.backend.backend() in ("jax", "tensorflow")
    return bool(compile) and keras.backend.backend() in ("jax", "tensorflow")


def compile_function(fn, variables, int_args=()):
    """Compile ``fn(*args)`` for the current backend; ``int_args`` positions become int32.

    Args:
        fn: a function of tensors / dicts of tensors that calls Keras layers.
        variables: every `keras.Variable` ``fn`` reads (for JAX's stateless call).
        int_args: positions of Python-int arguments (e.g. the step index) passed as
            scalar int32 tensors, so that they do not trigger a retrace per value.

    Returns:
        A function with ``fn``'s signature.
    """
    backend = keras.backend.backend()
    variables = list(variables)

    def convert(args):
        return tuple(ops.convert_to_tensor(a, "int32") if i in int_args else a
                     for i, a in enumerate(args))

    if backend == "tensorflow":
        import tensorflow as tf

        traced = tf.function(fn, reduce_retracing=True, autograph=False)
        return lambda *args: traced(*convert(args))
    if backend == "jax":
        import jax

        jax_compilation_cache()

        def stateless(values, *args):
            with keras.StatelessScope(state_mapping=list(zip(variables, values))):
                return fn(*args)

        jitted = jax.jit(stateless)
        return lambda *args: jitted([v.value for v in variables], *convert(args))
    return fn
