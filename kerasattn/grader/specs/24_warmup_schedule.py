"""Checks for exercise 24: the Transformer's warm-up learning-rate schedule (Vaswani et al.
2017, section 5.3), as a function of the 1-based step and as a Keras schedule called with
the optimizer's 0-based iteration counter."""
import numpy as np

from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

D_MODEL, WARMUP = 512, 4000  # the paper's
SMALL_D, SMALL_WARMUP, ITERATIONS = 16, 5, 12  # the schedule's cases
SGD_STEPS = 7


def _lr(step, d_model, warmup, exponent=-1.5, take=np.minimum, scale=True):
    step = np.asarray(step, dtype=np.float64)
    with np.errstate(divide="ignore"):
        decay = np.where(step > 0, np.abs(step) ** -0.5, np.inf)
    rate = take(decay, step * float(warmup) ** exponent)
    return d_model ** -0.5 * rate if scale else rate


# -- case "paper": the function on the paper's settings ------------------------------------
def build_paper(rng):
    return {"steps": np.array([1, 2, 10, 100, 1000, 3999, 4000, 4001, 8000, 100000])}


def run_paper(student, inputs):
    import keras

    steps = keras.ops.convert_to_tensor(inputs["steps"], dtype="int32")
    return {"rates": student.transformer_learning_rate(steps, D_MODEL, WARMUP)}


def expected_paper(inputs):
    from kerasattn.reference import noam_learning_rate

    return {"rates": noam_learning_rate(inputs["steps"], D_MODEL, WARMUP)}


PAPER_VARIANTS = [
    Variant("max instead of min", lambda i: _lr(i["steps"], D_MODEL, WARMUP, take=np.maximum),
            "The rate is the smaller of the two terms: ops.minimum."),
    Variant("warm-up exponent +1.5 instead of -1.5",
            lambda i: _lr(i["steps"], D_MODEL, WARMUP, exponent=1.5),
            "The warm-up term is step * warmup_steps^-1.5 (divide by warmup_steps^1.5)."),
    Variant("missing the d_model^-0.5 scale",
            lambda i: _lr(i["steps"], D_MODEL, WARMUP, scale=False),
            "Multiply by d_model^-0.5."),
]


# -- case "schedule": WarmupSchedule called like an optimizer does --------------------------
def build_schedule(rng):
    return {"iterations": np.arange(ITERATIONS)}


def run_schedule(student, inputs):
    import keras

    schedule = student.WarmupSchedule(SMALL_D, SMALL_WARMUP)
    rates = [schedule(keras.ops.convert_to_tensor(int(i), dtype="int64"))
             for i in inputs["iterations"]]
    return {"rates": keras.ops.stack([keras.ops.reshape(r, ()) for r in rates])}


def expected_schedule(inputs):
    from kerasattn.reference import noam_learning_rate

    return {"rates": noam_learning_rate(inputs["iterations"] + 1, SMALL_D, SMALL_WARMUP)}


SCHEDULE_VARIANTS = [
    Variant("off by one: the optimizer's iteration used as the paper's step",
            lambda i: _lr(i["iterations"], SMALL_D, SMALL_WARMUP),
            "Iteration 0 is the paper's step 1: use step = iteration + 1 (else the first "
            "update has rate 0)."),
    Variant("max instead of min",
            lambda i: _lr(i["iterations"] + 1, SMALL_D, SMALL_WARMUP, take=np.maximum),
            "The rate is the smaller of the two terms: ops.minimum."),
]


def _peak_at_warmup(outputs, inputs):
    rates = outputs["rates"]
    if rates.shape != (ITERATIONS,):
        return f"the schedule gave {rates.shape} values for {ITERATIONS} iterations"
    peak = int(np.argmax(rates))
    if peak != SMALL_WARMUP - 1:
        return (f"with warmup_steps = {SMALL_WARMUP} the rate peaks at iteration {peak} "
                f"(step {peak + 1}); it must peak at step {SMALL_WARMUP}, iteration "
                f"{SMALL_WARMUP - 1}, rise before and fall after")
    if (np.diff(rates[:peak + 1]) <= 0).any() or (np.diff(rates[peak:]) >= 0).any():
        return "the rate must rise during the warm-up and fall after it"
    return None


def _first_update_moves(outputs, inputs):
    first = float(outputs["rates"][0])
    if not first > 0:
        return (f"the rate at iteration 0 is {first:.3g}: the first update would not move "
                "the weights (the paper's first step is step 1)")
    return None


# -- case "optimizer": keras.optimizers.SGD driven by the schedule ---------------------------
def build_optimizer(rng):
    return {}


def run_optimizer(student, inputs):
    import keras

    w = keras.Variable(0.0)
    optimizer = keras.optimizers.SGD(learning_rate=student.WarmupSchedule(SMALL_D,
                                                                          SMALL_WARMUP))
    values = []
    for _ in range(SGD_STEPS):  # gradient 1: each update moves w by -lrate
        optimizer.apply_gradients([(keras.ops.convert_to_tensor(1.0), w)])
        values.append(keras.ops.convert_to_numpy(w))
    return {"updates": -np.diff(np.concatenate([[0.0], np.asarray(values, np.float64)]))}


def expected_optimizer(inputs):
    from kerasattn.reference import noam_learning_rate

    return {"updates": noam_learning_rate(np.arange(1, SGD_STEPS + 1), SMALL_D, SMALL_WARMUP)}


HINTS = [
    "Picture the curve first: the rate grows linearly during warm-up, then falls as "
    "1 / sqrt(step). Check your formula at step = warmup_steps: both terms equal "
    "warmup_steps^-0.5 there, so the peak is (d_model * warmup_steps)^-0.5.",
    "Both terms are simple powers of the step: step^-0.5 and step * warmup_steps^-1.5. "
    "Cast the step to float32 first; then one elementwise ops.minimum picks the smaller "
    "term for every step at once, and d_model^-0.5 scales the result.",
    "transformer_learning_rate: cast step to float32 (ops.cast); the decay term is step^-0.5 "
    "(ops.power) and the warm-up term step * warmup_steps^-1.5; return d_model^-0.5 times their "
    "ops.minimum. WarmupSchedule.__call__: the optimizer's first update has iteration 0, the "
    "paper's step 1, so cast the iteration to float32 and add 1, then return "
    "transformer_learning_rate of that step with the schedule's own d_model and warmup_steps.",
]

SPEC = Spec(
    exercise="24_warmup_schedule",
    title="The Transformer's warm-up learning-rate schedule",
    forbidden=["kerasattn.training", "kerasattn.training.schedules", "keras_hub",
               "keras_nlp"],
    cases=[Case("paper", build_paper, run_paper, expected_paper),
           Case("schedule", build_schedule, run_schedule, expected_schedule),
           Case("optimizer", build_optimizer, run_optimizer, expected_optimizer)],
    checks=[
        Compare("d_model = 512, warmup_steps = 4000: rates at steps 1 .. 100000",
                case="paper", output="rates", points=3, atol=1e-10, rtol=1e-5,
                variants=PAPER_VARIANTS),
        Compare("WarmupSchedule at the optimizer's iterations 0 .. 11", case="schedule",
                output="rates", points=2, atol=1e-9, rtol=1e-5, variants=SCHEDULE_VARIANTS),
        Property("the rate peaks at step = warmup_steps", case="schedule",
                 fn=_peak_at_warmup, points=1),
        Property("the first update has a rate > 0", case="schedule", fn=_first_update_moves,
                 points=1),
        Compare("keras.optimizers.SGD with the schedule: the first 7 updates",
                case="optimizer", output="updates", points=1, atol=1e-7, rtol=1e-5,
                variants=[Variant(SCHEDULE_VARIANTS[0].name,
                                  lambda i: _lr(np.arange(SGD_STEPS), SMALL_D, SMALL_WARMUP),
                                  SCHEDULE_VARIANTS[0].hint)]),
    ],
)
