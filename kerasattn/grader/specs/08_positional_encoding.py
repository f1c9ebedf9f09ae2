"""Checks for exercise 08: interleaved sinusoidal positional encoding."""
import numpy as np

from kerasattn.grader import properties as P
from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant


def build_basic(rng):
    return {"length": 6, "d_model": 8}


def run_basic(student, inputs):
    return {"pe": student.positional_encoding(int(inputs["length"]), int(inputs["d_model"]))}


def expected_basic(inputs):
    from kerasattn.reference import positional_encoding

    return {"pe": positional_encoding(inputs["length"], inputs["d_model"])}


def build_shifted(rng):
    return {"length": 3, "d_model": 6, "start_index": 5, "max_wavelength": 100.0}


def run_shifted(student, inputs):
    return {"pe": student.positional_encoding(
        int(inputs["length"]), int(inputs["d_model"]), start_index=int(inputs["start_index"]),
        max_wavelength=float(inputs["max_wavelength"]))}


def expected_shifted(inputs):
    from kerasattn.reference import positional_encoding

    return {"pe": positional_encoding(inputs["length"], inputs["d_model"],
                                      inputs["start_index"], inputs["max_wavelength"])}


def _angles(i, column_exponent=False):
    T, d = i["length"], i["d_model"]
    pos = np.arange(i.get("start_index", 0), i.get("start_index", 0) + T)[:, None]
    c = np.arange(d)
    two_i = c if column_exponent else c - c % 2
    return pos / i.get("max_wavelength", 10000.0) ** (two_i / d), c


def _concatenated(i):
    ang, c = _angles(i)
    half = ang[:, 0::2]
    return np.concatenate([np.sin(half), np.cos(half)], axis=1)


def _swapped(i):
    ang, c = _angles(i)
    return np.where(c % 2 == 0, np.cos(ang), np.sin(ang))


def _column_exponent(i):
    ang, c = _angles(i, column_exponent=True)
    return np.where(c % 2 == 0, np.sin(ang), np.cos(ang))


def _no_start(i):
    from kerasattn.reference import positional_encoding

    return positional_encoding(i["length"], i["d_model"], 0, i.get("max_wavelength", 1e4))


def _fixed_wavelength(i):
    from kerasattn.reference import positional_encoding

    return positional_encoding(i["length"], i["d_model"], i["start_index"], 10000.0)


VARIANTS = [
    Variant("sin and cos concatenated instead of interleaved", _concatenated,
            "Even columns are sin, odd columns cos: sin, cos, sin, cos, ..."),
    Variant("sin/cos swapped", _swapped, "PE[pos, 2i] = sin, PE[pos, 2i+1] = cos."),
    Variant("exponent uses the column index instead of 2i", _column_exponent,
            "Both columns 2i and 2i+1 use the frequency 1 / max_wavelength^(2i / d_model)."),
]


HINTS = [
    "All the angles form one (T, d_model/2) table: position (a column) times frequency (a row). "
    "The sines and cosines of that table must then be interleaved column by column, not "
    "concatenated.",
    "Positions: ops.arange from start_index to start_index + length in float32, made a (T, 1) "
    "column. Exponents 2i = 0, 2, 4, ...: ops.arange from 0 to d_model in steps of 2, float32, "
    "(d_model/2,). Frequencies: max_wavelength to the power -2i / d_model (ops.power). Stacking "
    "sines and cosines on a new last axis gives (T, d_model/2, 2).",
    "The angles are the (T, 1) positions times the frequencies as a (1, d_model/2) row, (T, "
    "d_model/2). Take ops.sin and ops.cos of the angles, ops.stack the two on the last axis so "
    "that each sine sits next to its cosine, (T, d_model/2, 2), and ops.reshape that to (T, "
    "d_model): the columns come out sin, cos, sin, cos, ...",
]

SPEC = Spec(
    exercise="08_positional_encoding",
    title="Sinusoidal positional encoding",
    forbidden=["kerasattn.layers.positional", "kerasattn.layers.positional_encoding",
               "kerasattn.layers.PositionalEncoding", "keras_hub", "keras_nlp"],
    cases=[Case("basic", build_basic, run_basic, expected_basic),
           Case("shifted", build_shifted, run_shifted, expected_shifted)],
    checks=[
        Compare("PE for T=6, d_model=8", case="basic", output="pe", points=5, atol=1e-5,
                variants=VARIANTS),
        Property("values lie in [-1, 1]", case="basic", fn=P.in_range("pe", -1.0, 1.0),
                 points=1),
        Compare("PE with start_index=5 and max_wavelength=100", case="shifted", output="pe",
                points=4, atol=1e-5, variants=VARIANTS + [
                    Variant("start_index ignored", _no_start,
                            "Rows are positions start_index .. start_index + T - 1."),
                    Variant("max_wavelength ignored (10000 written in)", _fixed_wavelength,
                            "Use the max_wavelength argument in the denominator "
                            "max_wavelength^(2i / d_model).")]),
    ],
)
