"""Scheduled sampling (Bengio et al., 2015) in the recurrent attention decoder."""
import math

import keras
import numpy as np
import pytest

from kerasattn.decoding.search import greedy_decode
from kerasattn.models import build_model
from kerasattn.training import TeacherForcingSchedule, train
from tests.conftest import to_numpy
from tests.tiny_models import tiny_inputs, tiny_pairs

HP = dict(embed_dim=8, units=8, attention_units=8, dropout=0.0)


def _model(**kw):
    keras.utils.set_random_seed(3)
    return build_model("bahdanau", 12, 12, **HP, **kw)


def test_ratio_one_equals_teacher_forcing():
    x = tiny_inputs(n=4)
    plain = _model()
    sampled = _model(scheduled_sampling=True)
    theirs = {v.path: v for v in sampled.weights}
    for v in plain.weights:  # same weights; the extra `teacher_forcing_ratio` stays 1.0
        theirs[v.path].assign(v.value)
    want = to_numpy(plain(x, training=True))  # today's teacher forcing
    got = to_numpy(sampled(x, training=True))  # sampling path, p = 1
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(to_numpy(sampled(x, training=False)),
                                  to_numpy(plain(x, training=False)))


def test_ratio_zero_equals_greedy_feedback():
    model = _model(scheduled_sampling=True)
    model.get_layer("attention_decoder").teacher_forcing_ratio.assign(0.0)
    x = tiny_inputs(n=4)
    t = x["decoder_inputs"].shape[1]
    logits = to_numpy(model(x, training=True))  # (B, T, V), every input its own argmax
    out = greedy_decode(model, x["encoder_inputs"], max_length=t, return_logits=True,
                        compile=False)
    steps = np.asarray(out.step_logits)  # (B, T', V) until every row stopped
    n = min(steps.shape[1], t)
    # rows that emitted <eos> before the end keep feeding argmax in training: compare each
    # row up to and including its first <eos>
    for b in range(logits.shape[0]):
        tokens = np.asarray(out.tokens)[b]
        stop = next((i for i, tok in enumerate(tokens[:n]) if tok == 3), n - 1)
        np.testing.assert_allclose(logits[b, :stop + 1], steps[b, :stop + 1],
                                   rtol=1e-4, atol=1e-5)


def test_ratio_zero_differs_from_teacher_forcing():
    model = _model(scheduled_sampling=True)
    x = tiny_inputs(n=4)
    forced = to_numpy(model(x, training=True))
    model.get_layer("attention_decoder").teacher_forcing_ratio.assign(0.0)
    free = to_numpy(model(x, training=True))
    np.testing.assert_allclose(free[:, 0], forced[:, 0], rtol=1e-5, atol=1e-6)  # <bos>
    assert np.abs(free[:, 1:] - forced[:, 1:]).max() > 1e-4


def test_schedule_values_match_exercise_15():
    lin = TeacherForcingSchedule.parse("linear:10:0.25")
    for i in range(15):
        assert lin.value(i) == pytest.approx(max(0.25, 1 - 0.75 * i / 10))
    inv = TeacherForcingSchedule.parse("inverse_sigmoid:5")
    for i in range(30):
        assert inv.value(i) == pytest.approx(5 / (5 + math.exp(i / 5)))
    assert TeacherForcingSchedule.parse(0.3).value(7) == 0.3
    assert TeacherForcingSchedule.parse("linear:4@epoch").per == "epoch"


@pytest.mark.parametrize("spec", ["linear", "linear:0", "linear:a", "fast:3", 1.5, True,
                                  "inverse_sigmoid:0.5", "constant:2", [1.0]])
def test_bad_specs_are_rejected(spec):
    with pytest.raises(ValueError, match="teacher_forcing|TeacherForcingSchedule"):
        TeacherForcingSchedule.parse(spec)


def test_train_rejects_model_without_sampling():
    with pytest.raises(ValueError, match="scheduled_sampling=True"):
        train(_model(), tiny_pairs(n=8), epochs=1, teacher_forcing="linear:4")


def test_fit_with_schedule_updates_the_ratio(backend):
    model = _model(scheduled_sampling=True)
    schedule = TeacherForcingSchedule.parse("linear:3:0.5")
    result = train(model, tiny_pairs(n=16), epochs=2, batch_size=4,
                   early_stopping_patience=None, teacher_forcing=schedule,
                   torch_threads=None)
    np.testing.assert_allclose(schedule.values, [1.0, 5 / 6, 2 / 3] + [0.5] * 5)
    assert np.isfinite(result.history["loss"]).all()
    ratio = model.get_layer("attention_decoder").teacher_forcing_ratio
    assert float(to_numpy(ratio)) == 0.5


def test_ratio_changed_mid_epoch_reaches_the_train_step(backend):
    # step 0 at ratio 1, then 0: the first epoch's mean loss differs from constant 1.0
    # only if the compiled step reads the value written between batches
    losses = []
    for spec in ("constant:1", "linear:1:0"):
        model = _model(scheduled_sampling=True)
        result = train(model, tiny_pairs(n=16), epochs=1, batch_size=4, shuffle=False,
                       early_stopping_patience=None, teacher_forcing=spec,
                       torch_threads=None)
        losses.append(result.history["loss"][0])
    assert abs(losses[0] - losses[1]) > 1e-4, losses


def test_config_round_trip():
    layer = _model(scheduled_sampling=True).get_layer("attention_decoder")
    config = layer.get_config()
    assert config["scheduled_sampling"] is True
    assert type(layer).from_config(config).scheduled_sampling


def test_a_budget_schedule_spans_the_budget_whatever_the_step_rate():
    """budget_seconds: the linear ratio falls with the share of the wall-clock budget spent
    (1 -> 0.5 here), so it ends at 0.5 on a fast or a slow machine alike."""
    from kerasattn.training import TeacherForcingSchedule

    for times in ((0, 25, 50, 100, 130), (0, 50, 100)):        # a fast and a slow machine
        now = [0.0]
        schedule = TeacherForcingSchedule("linear", min_ratio=0.5, budget_seconds=100,
                                          clock=lambda: now[0])
        seen = []
        schedule._set = lambda progress: seen.append(schedule.value(progress))
        schedule.on_train_begin()
        for t in times:
            now[0] = t
            schedule.on_train_batch_begin(0)
        expected = {0: 1.0, 25: 0.875, 50: 0.75, 100: 0.5, 130: 0.5}
        assert seen == [expected[t] for t in times]
    with pytest.raises(ValueError, match="budget_seconds` needs kind='linear' and "
                                         "per='step'; received kind='inverse_sigmoid'"):
        TeacherForcingSchedule("inverse_sigmoid", budget_seconds=10)
    with pytest.raises(ValueError, match="budget_seconds` must be a number > 0"):
        TeacherForcingSchedule("linear", budget_seconds=0)
