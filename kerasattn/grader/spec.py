"""The check-spec vocabulary (see docs/GRADER_FORMAT.md).

A spec module defines ``SPEC = Spec(...)``. Specs are loaded both in the grader (parent),
which builds inputs, computes the float64 expected values and decides scores, and in the
sandboxed child, which only calls ``Case.run``. This module imports nothing heavy.
"""
from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from kerasattn._imports import import_path

#: Names no submission may import, whatever the exercise.
ALWAYS_FORBIDDEN = ("solutions", "kerasattn.reference", "kerasattn.grader")

DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY_MB = 1024


@dataclass(frozen=True)
class Variant:
    """A known wrong answer: ``fn(inputs) -> np.ndarray`` computed in the parent."""

    name: str
    fn: Callable[[dict], Any]
    hint: str = ""


@dataclass(frozen=True)
class Case:
    """One sandboxed run of the student's code.

    Args:
        name: unique within the spec.
        build: ``build(rng) -> dict`` of inputs (parent; NumPy arrays and plain scalars).
        run: ``run(student, inputs) -> dict`` of raw outputs (child).
        expected: ``expected(inputs) -> dict`` of float64 reference outputs (parent).
        seed: seed of the ``np.random.default_rng`` handed to ``build``.
        timeout: wall-clock seconds for the child.
        memory_mb: memory the child may allocate beyond the worker's own.
    """

    name: str
    build: Callable[[Any], dict]
    run: Callable[[Any, dict], dict]
    expected: Callable[[dict], dict] | None = None
    seed: int = 0
    timeout: float | None = None
    memory_mb: int | None = None


@dataclass(frozen=True)
class _Check:
    name: str
    _: KW_ONLY
    case: str
    points: float
    hidden: bool = False


@dataclass(frozen=True, kw_only=True)
class Compare(_Check):
    """``outputs[output]`` against ``expected(inputs)[expected_key or output]``."""

    output: str = ""
    atol: float = 1e-4
    rtol: float = 1e-3
    variants: Sequence[Variant] = ()
    expected_key: str | None = None


@dataclass(frozen=True, kw_only=True)
class Property(_Check):
    """``fn(outputs, inputs) -> None | message`` evaluated in the parent."""

    fn: Callable[[dict, dict], str | None] | None = None


@dataclass(frozen=True, kw_only=True)
class GradientCheck(_Check):
    """Every output named ``prefix + weight`` must be a finite, non-zero gradient.

    A key projection's bias is exempt from the non-zero rule: it adds ``q . b_k`` to every
    key's score for a query alike, which the softmax over the keys ignores, so its true
    gradient is zero (a float32 one is round-off). :func:`is_key_bias` names them.
    """

    prefix: str = "grad/"


def is_key_bias(weight_name: str) -> bool:
    """Whether ``weight_name`` is an attention key projection's bias: ``.../key/bias`` (the
    kit's ``MultiHeadCross`` and Keras's ``MultiHeadAttention`` name their key projection
    ``key``), ``.../key_dense/bias``, or a weight named ``key_bias`` (exercise 19)."""
    parts = weight_name.split("/")
    return parts[-1].endswith("key_bias") or (
        len(parts) >= 2 and parts[-1] == "bias" and parts[-2] in ("key", "key_dense"))


@dataclass
class Spec:
    """All the checks of one exercise.

    Args:
        exercise: the exercise's file stem (``05_scaled_dot_product``).
        title: shown in the report.
        cases: the sandboxed runs.
        checks: ``Compare`` / ``Property`` / ``GradientCheck`` on the cases' outputs.
        forbidden: dotted names the submission may not use (statically and at run time).
        allow_numpy: the graded code may convert tensors to NumPy (off by default: such a
            submission fails with "leaves keras.ops for NumPy").
    """

    exercise: str
    title: str
    cases: Sequence[Case]
    checks: Sequence[_Check]
    forbidden: Sequence[str] = ()
    allow_numpy: bool = False
    path: str = ""
    _cases_by_name: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self._cases_by_name = {}
        for case in self.cases:
            if case.name in self._cases_by_name:
                raise ValueError(f"spec {self.exercise}: duplicate case name {case.name!r}")
            self._cases_by_name[case.name] = case
        names = set()
        for check in self.checks:
            if check.case not in self._cases_by_name:
                raise ValueError(f"spec {self.exercise}: check {check.name!r} refers to "
                                 f"unknown case {check.case!r}; cases: "
                                 f"{sorted(self._cases_by_name)}")
            if check.name in names:
                raise ValueError(f"spec {self.exercise}: duplicate check name {check.name!r}")
            if check.points < 0:
                raise ValueError(f"spec {self.exercise}: check {check.name!r} has negative "
                                 f"points {check.points}")
            if isinstance(check, Compare) and not check.output:
                raise ValueError(f"spec {self.exercise}: Compare {check.name!r} needs output=")
            if isinstance(check, Property) and check.fn is None:
                raise ValueError(f"spec {self.exercise}: Property {check.name!r} needs fn=")
            names.add(check.name)

    def case(self, name: str) -> Case:
        return self._cases_by_name[name]

    @property
    def max_score(self) -> float:
        return float(sum(c.points for c in self.checks))

    @property
    def all_forbidden(self) -> tuple[str, ...]:
        return tuple(self.forbidden) + ALWAYS_FORBIDDEN


SPEC_DIR = Path(__file__).resolve().parent / "specs"


def load_spec(path: str | Path) -> Spec:
    """Import a spec file by path and return its ``SPEC``."""
    path = Path(path).resolve()
    name = "_kerasattn_spec_" + path.stem
    module = import_path(path, name)
    spec = getattr(module, "SPEC", None)
    if not isinstance(spec, Spec):
        raise ValueError(f"{path} does not define SPEC = Spec(...)")
    if spec.exercise != path.stem:
        raise ValueError(f"{path}: SPEC.exercise is {spec.exercise!r}, expected the file "
                         f"stem {path.stem!r}")
    spec.path = str(path)
    return spec


def spec_paths(spec_dir: str | Path | None = None) -> dict[str, Path]:
    """``{stem: path}`` of every spec file in ``spec_dir`` (default: the kit's specs)."""
    spec_dir = Path(spec_dir) if spec_dir else SPEC_DIR
    return {p.stem: p for p in sorted(spec_dir.glob("[0-9]*.py"))}
