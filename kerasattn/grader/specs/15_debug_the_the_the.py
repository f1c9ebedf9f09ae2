"""Checks for exercise 15 (debugging): "the the the" with a loss that stays high.

Each fix is checked on its own (initial-weight statistics, score scale, the schedule's
values, the scheduled-sampling choice), then a tiny attention translator built from the
four functions is trained in the child with the backend's own autodiff (60 Adam steps,
36 sentences): the loss must fall below a threshold and the greedy outputs must be right.
"""
import math

import numpy as np

from kerasattn.grader.spec import Case, Compare, Property, Spec, Variant

B, S, D = 3, 5, 64
STEPS_SCHEDULE, MIN_RATIO, K = 100, 0.25, 10.0
INIT_SHAPES = ((64, 64), (16, 48))


def _tensor(x, dtype="float32"):
    import keras

    return keras.ops.convert_to_tensor(np.asarray(x), dtype=dtype)


def _initializer(student, seed):
    import keras

    return keras.initializers.get(student.make_initializer(seed=seed))


# -- case "init": samples of the initializer ------------------------------------------------
def build_init(rng):
    return {}


def run_init(student, inputs):
    from keras import ops

    return {f"init_{i}": ops.convert_to_numpy(_initializer(student, 7 + i)(shape, "float32"))
            for i, shape in enumerate(INIT_SHAPES)}


def _glorot_statistics(outputs, inputs):
    for i, shape in enumerate(INIT_SHAPES):
        w = outputs[f"init_{i}"]
        if w.shape != shape:
            return f"the initializer returned shape {w.shape} for shape {shape}"
        want = math.sqrt(2.0 / (shape[0] + shape[1]))
        std, mean = float(w.std()), float(w.mean())
        if abs(mean) > 0.2 * want or abs(std / want - 1.0) > 0.15:
            return (f"weights of shape {shape}: mean {mean:.3g}, standard deviation "
                    f"{std:.3g}; Xavier (Glorot) initialisation gives mean 0 and "
                    f"sqrt(2 / (fan_in + fan_out)) = {want:.3g}")
    return None


# -- case "scores": attention_scores --------------------------------------------------------
def build_scores(rng):
    return {"s_prev": rng.normal(size=(B, D)), "h_enc": rng.normal(size=(B, S, D)),
            "s_big": rng.normal(size=(64, D)), "h_big": rng.normal(size=(64, 16, D))}


def run_scores(student, inputs):
    return {"scores": student.attention_scores(_tensor(inputs["s_prev"]),
                                               _tensor(inputs["h_enc"])),
            "scores_big": student.attention_scores(_tensor(inputs["s_big"]),
                                                   _tensor(inputs["h_big"]))}


def expected_scores(inputs):
    e = np.einsum("bd,bsd->bs", inputs["s_prev"], inputs["h_enc"]) / math.sqrt(D)
    return {"scores": e}


def _unscaled(inputs):
    return np.einsum("bd,bsd->bs", inputs["s_prev"], inputs["h_enc"])


def _unit_scale(outputs, inputs):
    e = outputs["scores_big"]
    if e.shape != (64, 16):
        return f"scores have shape {e.shape}, expected (B, S) = (64, 16)"
    std = float(e.std())
    if not 0.8 < std < 1.25:
        if std > 1:
            return (f"for unit-variance s and h with d = {D} the scores have a standard "
                    f"deviation of {std:.3g}, expected about 1: a softmax over scores this "
                    f"large saturates; divide s . h by sqrt(d)")
        return (f"for unit-variance s and h with d = {D} the scores have a standard "
                f"deviation of {std:.3g}, expected about 1: a softmax over scores this "
                f"small is nearly uniform; divide s . h by sqrt(d), not by d")
    return None


# -- case "schedule": teacher_forcing_ratio ------------------------------------------------
def build_schedule(rng):
    return {"steps": np.arange(0, 121, 5)}


def run_schedule(student, inputs):
    steps = [int(i) for i in inputs["steps"]]
    return {"linear": np.array([float(student.teacher_forcing_ratio(
                i, STEPS_SCHEDULE, "linear", min_ratio=MIN_RATIO, k=K)) for i in steps]),
            "inverse_sigmoid": np.array([float(student.teacher_forcing_ratio(
                i, STEPS_SCHEDULE, "inverse_sigmoid", min_ratio=MIN_RATIO, k=K))
                for i in steps])}


def expected_schedule(inputs):
    i = inputs["steps"].astype(float)
    return {"linear": np.maximum(MIN_RATIO, 1.0 - (1.0 - MIN_RATIO) * i / STEPS_SCHEDULE),
            "inverse_sigmoid": K / (K + np.exp(i / K))}


def _rising_linear(inputs):
    i = inputs["steps"].astype(float)
    return np.minimum(1.0, MIN_RATIO + (1.0 - MIN_RATIO) * i / STEPS_SCHEDULE)


def _rising_sigmoid(inputs):
    i = inputs["steps"].astype(float)
    return np.exp(i / K) / (K + np.exp(i / K))


def _starts_at_one_and_decays(outputs, inputs):
    eps = outputs["linear"]
    if abs(eps[0] - 1.0) > 1e-6:
        return (f"the linear schedule starts at {eps[0]:.3g}: training must start with "
                f"100% teacher forcing (ratio 1)")
    rises = np.diff(eps) > 1e-9
    if rises.any():
        i = int(np.argmax(rises))
        return (f"the ratio rises from {eps[i]:.3g} to {eps[i + 1]:.3g} between steps "
                f"{inputs['steps'][i]} and {inputs['steps'][i + 1]}: it must only decrease")
    if abs(eps[-1] - MIN_RATIO) > 1e-6:
        return f"after the decay the ratio is {eps[-1]:.3g}, expected min_ratio = {MIN_RATIO}"
    return None


# -- case "mixing": next_decoder_inputs ------------------------------------------------------
def build_mixing(rng):
    n, v = 12, 7
    return {"teacher": rng.integers(0, v, size=n), "logits": rng.normal(size=(n, v)),
            "draws": rng.uniform(size=n), "ratio": np.array(0.5)}


def run_mixing(student, inputs):
    teacher, logits, draws = (_tensor(inputs["teacher"], "int32"), _tensor(inputs["logits"]),
                              _tensor(inputs["draws"]))
    return {"tokens": student.next_decoder_inputs(teacher, logits, float(inputs["ratio"]),
                                                  draws),
            "tokens_all_teacher": student.next_decoder_inputs(teacher, logits, 1.0, draws),
            "tokens_all_model": student.next_decoder_inputs(teacher, logits, 0.0, draws)}


def _mix(inputs, ratio, swap=False):
    use_teacher = inputs["draws"] < ratio
    if swap:
        use_teacher = ~use_teacher
    return np.where(use_teacher, inputs["teacher"], inputs["logits"].argmax(-1))


def expected_mixing(inputs):
    return {"tokens": _mix(inputs, float(inputs["ratio"]))}


def _extremes(outputs, inputs):
    if not np.array_equal(outputs["tokens_all_teacher"], inputs["teacher"]):
        return "with ratio = 1 the decoder must read exactly the reference tokens"
    if not np.array_equal(outputs["tokens_all_model"], inputs["logits"].argmax(-1)):
        return "with ratio = 0 the decoder must read exactly its own argmax"
    return None


# -- case "train": a tiny attention translator built from the four functions ------------------
PAD, BOS, EOS, THE = 0, 1, 2, 3
VS, VT, DT, TRAIN_STEPS, LR = 9, 10, 32, 60, 0.02
WEIGHT_SHAPES = {"src_emb": (VS, DT), "pos": (2, DT), "tgt_emb": (VT, DT),
                 "W": (2 * DT, DT), "U": (DT, DT), "W_o": (2 * DT, VT)}


def build_train(rng):
    x = np.array([(a, b) for a in range(3, 9) for b in range(3, 9)])  # 36 sources
    n = len(x)
    y = np.stack([np.full(n, THE), x[:, 0] + 1, np.full(n, THE), x[:, 1] + 1,
                  np.full(n, EOS)], axis=1)  # "the f(a) the f(b) <eos>"
    return {"x": x, "y": y, "draws": rng.uniform(size=(TRAIN_STEPS, y.shape[1], n))}


def _translator(student, x, y):
    """Logits `(n, T, V)` of a one-layer attention RNN; params given as a list."""
    from keras import ops

    names = sorted(list(WEIGHT_SHAPES) + ["b", "b_o"])
    n, steps = y.shape

    def forward(plist, ratio, draws, free=False):
        p = dict(zip(names, plist))
        keys = ops.matmul(ops.one_hot(_tensor(x, "int32"), VS), p["src_emb"]) + p["pos"]
        s = ops.zeros((n, DT))
        y_prev = ops.full((n,), BOS, "int32")
        out = []
        for t in range(steps):
            alpha = ops.softmax(student.attention_scores(s, keys), axis=-1)  # (n, S)
            c = ops.einsum("bs,bsd->bd", alpha, keys)  # (n, d)
            inp = ops.concatenate([ops.matmul(ops.one_hot(y_prev, VT), p["tgt_emb"]), c], -1)
            s = ops.tanh(ops.matmul(inp, p["W"]) + ops.matmul(s, p["U"]) + p["b"])
            logits = ops.matmul(ops.concatenate([s, c], -1), p["W_o"]) + p["b_o"]
            out.append(logits)
            if free:
                y_prev = ops.cast(ops.argmax(logits, axis=-1), "int32")
            else:
                y_prev = ops.cast(student.next_decoder_inputs(
                    _tensor(y[:, t], "int32"), logits, ratio, draws[t]), "int32")
        return ops.stack(out, axis=1)  # (n, T, V)

    def loss(plist, ratio, draws):
        logits = forward(plist, ratio, draws)
        z = logits - ops.max(logits, axis=-1, keepdims=True)
        logp = z - ops.log(ops.sum(ops.exp(z), axis=-1, keepdims=True))
        return -ops.mean(ops.sum(logp * ops.one_hot(_tensor(y, "int32"), VT), axis=-1))

    return names, forward, loss


def run_train(student, inputs):
    from keras import ops

    from kerasattn.grader.childtools import value_and_grad

    x, y = np.asarray(inputs["x"]), np.asarray(inputs["y"])
    names, forward, loss = _translator(student, x, y)
    params = []
    for i, name in enumerate(names):
        if name in WEIGHT_SHAPES:
            params.append(ops.convert_to_tensor(
                _initializer(student, 100 + i)(WEIGHT_SHAPES[name], "float32")))
        else:
            params.append(ops.zeros((DT if name == "b" else VT,)))
    vg = value_and_grad(loss, torch_threads=1)  # tiny tensors: threads only add contention
    m = [ops.zeros_like(p) for p in params]
    v = [ops.zeros_like(p) for p in params]
    losses, ratios = [], []
    for step in range(TRAIN_STEPS):  # Adam, beta = (0.9, 0.999)
        ratio = float(student.teacher_forcing_ratio(step, TRAIN_STEPS, "linear",
                                                    min_ratio=MIN_RATIO, k=K))
        value, grads = vg(params, ops.convert_to_tensor(ratio),
                          _tensor(inputs["draws"][step]))
        m = [0.9 * a + 0.1 * g for a, g in zip(m, grads)]
        v = [0.999 * a + 0.001 * g * g for a, g in zip(v, grads)]
        c1, c2 = 1 - 0.9 ** (step + 1), 1 - 0.999 ** (step + 1)
        params = [p - LR * (a / c1) / (ops.sqrt(b / c2) + 1e-8)
                  for p, a, b in zip(params, m, v)]
        losses.append(float(ops.convert_to_numpy(value)))
        ratios.append(ratio)
    greedy = ops.argmax(forward(params, 0.0, inputs["draws"][0], free=True), axis=-1)
    return {"losses": np.array(losses), "ratios": np.array(ratios),
            "greedy": ops.convert_to_numpy(greedy)}


LOSS_THRESHOLD = 0.05


def _loss_falls(outputs, inputs):
    losses = outputs["losses"]
    if not np.isfinite(losses).all():
        return "the training loss became NaN or infinite"
    final = float(losses[-5:].mean())
    if final > LOSS_THRESHOLD:
        return (f"after {TRAIN_STEPS} steps the loss is {final:.3g} (it started at "
                f"{losses[0]:.3g}); a repaired model reaches less than {LOSS_THRESHOLD}")
    return None


def _greedy_right(outputs, inputs):
    pred, y = outputs["greedy"].astype(int), np.asarray(inputs["y"])
    if pred.shape != y.shape:
        return f"greedy outputs have shape {pred.shape}, expected {y.shape}"
    repeated = float(np.mean([len(set(row)) == 1 for row in pred]))
    accuracy = float((pred == y).mean())
    if repeated > 0 or accuracy < 0.97:
        row = " ".join(str(t) for t in pred[0])
        return (f"greedy translations: {accuracy:.0%} of tokens right, {repeated:.0%} of "
                f"sentences one repeated token (first sentence: {row}; expected "
                f"{' '.join(str(t) for t in y[0])})")
    return None


HINTS = [
    "Where to look: each of the four functions has a bug (teacher_forcing_ratio one in each "
    "of its two branches), and the run's log points at most of them. The first loss is about "
    "14 where a uniform guess costs 2.30: before any training the model is confidently "
    "wrong, so look at how large the initial weights (make_initializer) "
    "and the attention scores (attention_scores) are. Read the teacher-forcing column: which "
    "way should it go during training? Then look at which token next_decoder_inputs returns "
    "and what it does with the ratio and the draws.",
    "What to compare: the standard deviation of make_initializer(0)((64, 64), \"float32\") "
    "against Glorot's (Xavier's) sqrt(2 / (fan_in + fan_out)) = 0.125 (a standard normal has "
    "1 whatever the layer's size, so a unit with 64 inputs starts with a pre-activation of "
    "standard deviation 8 and tanh saturates); the standard deviation of attention_scores for "
    "unit-variance s and h with d = 64 against 1 (s . h has variance d); teacher_forcing_ratio "
    "at step 0 against 1 (linear) and k / (k + 1) (inverse sigmoid), and whether it ever "
    "rises; next_decoder_inputs with ratio = 1 (must return the reference tokens) and ratio = 0 "
    "(the argmax).",
    "The fix: one change per function, two in teacher_forcing_ratio. make_initializer: Glorot "
    "(Xavier) uniform initialisation, keras.initializers.GlorotUniform with the same seed, "
    "instead of a standard normal. attention_scores: divide the dot products by the square root "
    "of the state size d, the last dimension of s_prev. teacher_forcing_ratio: the linear "
    "schedule falls from 1 to its floor, eps_i = max(eps_min, 1 - (1 - eps_min) i / decay_steps),"
    " a max with the floor where the code has a min with 1; the inverse sigmoid is eps_i = k / (k"
    " + exp(i / k)), with k, not exp(i / k), in the numerator. next_decoder_inputs: keep the "
    "argmax, and choose row by row with ops.where: the reference token (cast to int32) where the "
    "draw is below the ratio (ops.less), the prediction elsewhere.",
]

SPEC = Spec(
    exercise="15_debug_the_the_the",
    title="Debugging: 'the the the' and a loss that stays high",
    forbidden=["kerasattn.models", "kerasattn.training", "kerasattn.decoding",
               "kerasattn.layers", "keras_hub", "keras_nlp"],
    cases=[Case("init", build_init, run_init),
           Case("scores", build_scores, run_scores, expected_scores),
           Case("schedule", build_schedule, run_schedule, expected_schedule),
           Case("mixing", build_mixing, run_mixing, expected_mixing),
           Case("train", build_train, run_train, timeout=240)],
    checks=[
        Property("Xavier (Glorot) initialisation: mean 0, std sqrt(2/(fan_in+fan_out))",
                 case="init", fn=_glorot_statistics, points=2),
        Compare("attention scores e_j = s . h_j / sqrt(d)", case="scores", output="scores",
                points=2, variants=[Variant("scores not scaled", _unscaled,
                                            "Divide s . h_j by sqrt(d).")]),
        Property("scores of unit-variance inputs have unit scale", case="scores",
                 fn=_unit_scale, points=1),
        Compare("linear teacher-forcing schedule", case="schedule", output="linear",
                points=1, variants=[Variant("the ratio rises from min_ratio to 1",
                                            _rising_linear,
                                            "Start at 1 and decay to min_ratio.")]),
        Compare("inverse-sigmoid schedule k / (k + exp(i / k))", case="schedule",
                output="inverse_sigmoid", points=1, variants=[
                    Variant("1 - k / (k + exp(i / k)): the ratio rises", _rising_sigmoid,
                            "eps_i = k / (k + exp(i / k)) starts near 1.")]),
        Property("teacher forcing starts at 100% and only decreases", case="schedule",
                 fn=_starts_at_one_and_decays, points=1),
        Compare("scheduled sampling picks the reference where draw < ratio", case="mixing",
                output="tokens", points=2, atol=0, rtol=0, variants=[
                    Variant("reference and prediction swapped",
                            lambda inputs: _mix(inputs, float(inputs["ratio"]), swap=True),
                            "Use the reference token when draw < ratio."),
                    Variant("always the model's own prediction",
                            lambda inputs: inputs["logits"].argmax(-1),
                            "The ratio decides which token the decoder reads.")]),
        Property("ratio 1 reads the reference, ratio 0 the model's argmax", case="mixing",
                 fn=_extremes, points=1),
        Property(f"tiny training run: the loss falls below {LOSS_THRESHOLD}", case="train",
                 fn=_loss_falls, points=2),
        Property("tiny training run: greedy outputs are right, not one repeated token",
                 case="train", fn=_greedy_right, points=2),
    ],
)
