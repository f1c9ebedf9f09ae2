"""kerasattn.training: the one training path (loss masking, validation masks, seed,
early stopping, crash-safe checkpoints, resume, warmup schedule, argument errors)."""
from __future__ import annotations

import inspect
import os

import keras
import numpy as np
import pytest
from conftest import to_numpy
from tiny_models import tiny_bag, tiny_pairs

from kerasattn import backend_utils, files, training
from kerasattn.metrics import masked_sparse_ce
from kerasattn.training import checkpointing
from kerasattn.training.schedules import TransformerSchedule


def _build(fn, seed=7, **kw):
    keras.utils.set_random_seed(seed)
    return fn(**kw)


def _weights_equal(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


# ----------------------------------------------------------------------------- schedule


def test_transformer_schedule_matches_paper_formula():
    d_model, warmup = 64, 10
    sched = TransformerSchedule.from_d_model(d_model, warmup)
    steps = np.array([0, 1, 4, 9, 10, 40, 399])
    got = np.array([float(to_numpy(sched(s))) for s in steps])
    n = steps + 1.0                                      # the paper counts steps from 1
    want = d_model ** -0.5 * np.minimum(n ** -0.5, n * warmup ** -1.5)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert steps[got.argmax()] + 1 == warmup             # peak at step == warmup_steps
    restored = keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(sched))
    assert isinstance(restored, TransformerSchedule)
    assert restored.get_config() == sched.get_config()
    with pytest.raises(ValueError, match="warmup_steps"):
        TransformerSchedule(1e-3, 0)
    with pytest.raises(ValueError, match="peak_learning_rate"):
        TransformerSchedule(-1.0, 10)
    for bad in (0, -5):  # named, not a ZeroDivisionError or a complex peak
        with pytest.raises(ValueError, match=f"`warmup_steps` must be an int >= 1; received "
                                             f"warmup_steps={bad}"):
            TransformerSchedule.from_d_model(64, bad)


def test_warmup_schedule_drives_the_optimizer():
    model = _build(tiny_bag)
    data = tiny_pairs(8)
    result = training.train(model, data, epochs=1, batch_size=4, warmup_steps=4,
                            learning_rate=2e-3, early_stopping_patience=None)
    lr = float(to_numpy(model.optimizer.learning_rate))   # after 2 steps: peak * 3/4
    np.testing.assert_allclose(lr, 2e-3 * 3 / 4, rtol=1e-6)
    assert result.epochs_run == 1


# ----------------------------------------------------------------------------- masking


def test_validation_uses_the_training_masks_and_padding_is_ignored():
    """Frozen weights (lr ~ 0), the kit's Transformer without its two training-only
    randomisations (dropout 0, ``max_position_shift=0``): the training step's
    loss on ``data`` equals the validation loss on the same pairs with extra all-pad
    source and target columns, and a manual masked loss of ``model(x, training=False)``.
    The model derives its causal and padding masks from the token ids, so a mask that
    differed between training and validation (e.g. validation without the causal mask), or
    padding that leaked into the loss, would break the equalities."""
    from kerasattn.models import build_model

    data = tiny_pairs(8)
    padded = {k: np.pad(v, ((0, 0), (0, 3))) for k, v in data.items()}
    keras.utils.set_random_seed(7)
    model = build_model("transformer", 12, 12, d_model=16, num_heads=2, d_ff=16,
                        num_encoder_layers=1, num_decoder_layers=1, dropout=0.0,
                        max_position_shift=0)
    r = training.train(model, data, padded, epochs=1, batch_size=8, learning_rate=1e-12,
                       weight_decay=0.0, label_smoothing=0.1, early_stopping_patience=None)
    np.testing.assert_allclose(r.history["loss"][0], r.history["val_loss"][0], rtol=1e-5)
    x = {k: data[k] for k in ("encoder_inputs", "decoder_inputs")}
    manual = float(to_numpy(masked_sparse_ce(data["labels"], model(x, training=False),
                                             label_smoothing=0.1)))
    np.testing.assert_allclose(r.history["val_loss"][0], manual, rtol=1e-5)


# ----------------------------------------------------------------------------- seed, fit


def test_training_overfits_a_few_pairs():
    data = tiny_pairs(8)
    model = _build(tiny_bag)
    r = training.train(model, data, epochs=25, batch_size=8, learning_rate=3e-2,
                       label_smoothing=0.0, early_stopping_patience=None)
    loss = r.history["loss"]
    assert loss[-1] < 0.25 * loss[0], loss
    assert r.target_tokens_per_epoch == int((data["labels"] != 0).sum())
    assert r.tokens_per_second > 0


def test_an_epoch_cut_short_counts_the_batches_it_ran_in_tokens_per_second():
    data = tiny_pairs(8)
    model = _build(tiny_bag)
    r = training.train(model, data, epochs=5, batch_size=2, learning_rate=1e-2,
                       early_stopping_patience=None, shuffle=False,
                       callbacks=[training.StepLimit(6)])   # 4 batches per epoch: 1.5 epochs
    assert r.epochs_run == 2
    assert r.tokens_per_second * r.train_seconds == pytest.approx(
        1.5 * r.target_tokens_per_epoch, rel=1e-6)


def test_corpus_token_weighting_divides_by_the_mean_tokens_of_a_batch():
    data = tiny_pairs(8)
    real = int((data["labels"] != 0).sum())
    model = _build(tiny_bag)
    r = training.train(model, data, epochs=25, batch_size=3, learning_rate=3e-2,
                       label_smoothing=0.0, early_stopping_patience=None,
                       bucket=True, token_weighting="corpus")
    assert model.loss.tokens_per_batch == pytest.approx(real / 3)      # 8 pairs: 3 batches
    assert r.history["loss"][-1] < 0.25 * r.history["loss"][0], r.history["loss"]
    with pytest.raises(ValueError, match="token_weighting.*received token_weighting='token'"):
        training.train(_build(tiny_bag), data, epochs=1, token_weighting="token")
    with pytest.raises(ValueError, match="needs train_data as arrays"):
        training.train(_build(tiny_bag), _dataset(data), epochs=1, token_weighting="corpus")
    with pytest.raises(ValueError, match="weighs the default loss"):
        training.train(_build(tiny_bag), data, epochs=1, token_weighting="corpus",
                       loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))


def _dataset(data):
    from kerasattn.data import TranslationDataset

    return TranslationDataset(data, batch_size=4)


def test_same_seed_same_losses():
    data = tiny_pairs(8)
    runs = []
    for _ in range(2):
        model = _build(tiny_bag, dropout=0.3)             # same initial weights every time
        r = training.train(model, data, epochs=2, batch_size=4, learning_rate=1e-2,
                           early_stopping_patience=None, seed=3)
        runs.append(r.history["loss"])
    assert runs[0] == runs[1]                         # bit-identical on this backend
    # the seed, not the build, sets the dropout streams: another seed, other states
    states = []
    for seed in (3, 3, 4):
        training.seed_everything(model, seed)
        states.append([to_numpy(v).tolist() for v in model.variables
                       if v.name == "seed_generator_state"])
    assert states[0] == states[1] and states[0] != states[2] and states[0]


def test_early_stopping_restores_best_weights():
    train_d = tiny_pairs(8, seed=0)
    valid_d = tiny_pairs(8, seed=1)
    valid_d["labels"] = np.where(valid_d["labels"] > 0, 4, 0).astype("int32")  # unlearnable
    model = _build(tiny_bag)
    r = training.train(model, train_d, valid_d, epochs=30, batch_size=4, learning_rate=3e-2,
                       early_stopping_patience=2)
    val = r.history["val_loss"]
    assert r.stopped_early and len(val) < 30
    assert r.best_epoch == int(np.argmin(val)) + 1 and r.best_loss == min(val)
    now = model.evaluate({k: valid_d[k] for k in ("encoder_inputs", "decoder_inputs")},
                         valid_d["labels"], batch_size=4, verbose=0)
    now = now[0] if isinstance(now, list) else now
    np.testing.assert_allclose(now, min(val), rtol=1e-5)


# ----------------------------------------------------------------------------- checkpoints


def test_crash_during_checkpoint_write_keeps_previous_checkpoint(tmp_path, monkeypatch):
    data = tiny_pairs(8)
    model = _build(tiny_bag)
    training.train(model, data, epochs=1, batch_size=4, checkpoint_dir=str(tmp_path),
                   early_stopping_patience=None)
    last = tmp_path / checkpointing.LAST_CHECKPOINT
    best = tmp_path / checkpointing.BEST_WEIGHTS
    assert last.exists() and best.exists()
    saved = model.get_weights()
    before = last.read_bytes()

    def crash_midway(file, **arrays):                  # writes half a file, then dies
        file.write(b"PK\x03\x04" + b"\x00" * 100)
        raise KeyboardInterrupt("simulated crash during checkpoint write")

    model.set_weights([w + 1.0 for w in saved])
    monkeypatch.setattr(checkpointing.np, "savez", crash_midway)
    with pytest.raises(KeyboardInterrupt):
        checkpointing.save_training_state(str(last), model, {"epoch": 99})
    monkeypatch.undo()

    def half_h5(tmp):
        with open(tmp, "wb") as f:
            f.write(b"\x89HDF\r\n")
        raise OSError("disk full (simulated)")

    with pytest.raises(OSError):
        files.atomic_write(str(best), half_h5)
    assert last.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [checkpointing.LAST_CHECKPOINT, checkpointing.BEST_WEIGHTS])   # no temp files left
    fresh = _build(tiny_bag, seed=99)
    meta, _ = checkpointing.load_training_state(str(last), fresh)
    assert meta["epoch"] == 1 and _weights_equal(fresh.get_weights(), saved)
    fresh2 = _build(tiny_bag, seed=98)
    fresh2.load_weights(str(best))
    assert _weights_equal(fresh2.get_weights(), saved)
    # a crash that killed the process leaves a stale temp file: the next run removes it
    (tmp_path / ".tmp-abc-last.ckpt.npz").write_bytes(b"partial")
    assert len(files.clean_stale_temp_files(str(tmp_path))) == 1


def test_resume_continues_exactly_where_it_stopped(tmp_path):
    data = tiny_pairs(8)
    kw = dict(batch_size=8, learning_rate=1e-2, shuffle=False, early_stopping_patience=5)
    full = _build(tiny_bag)
    r_full = training.train(full, data, epochs=4, **kw)
    part = _build(tiny_bag)
    r1 = training.train(part, data, epochs=2, checkpoint_dir=str(tmp_path), **kw)
    resumed = _build(tiny_bag, seed=123)                  # different init: all comes from disk
    r2 = training.train(resumed, data, epochs=4, checkpoint_dir=str(tmp_path), resume=True,
                        **kw)
    assert r1.epochs_run == 2 and r2.initial_epoch == 2 and r2.epochs_run == 4
    assert int(to_numpy(resumed.optimizer.iterations)) == 4      # 4 epochs x 1 step
    np.testing.assert_allclose(r2.history["loss"], r_full.history["loss"], rtol=1e-5)
    for a, b in zip(resumed.get_weights(), full.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


class _TrainableAfterEachEpoch(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_epoch_end(self, epoch, logs=None):
        self.seen.append([to_numpy(v).copy() for v in self.model.trainable_variables])


def test_weight_averaging_ends_on_the_moving_average_of_the_steps(tmp_path):
    data, m = tiny_pairs(8), 0.5
    kw = dict(epochs=3, batch_size=8, learning_rate=1e-2, shuffle=False,  # 1 step per epoch
              early_stopping_patience=None, ema_momentum=m)
    model, seen = _build(tiny_bag), _TrainableAfterEachEpoch()
    training.train(model, data, callbacks=[seen], **kw)
    want = seen.seen[0]                                  # the first step: w_avg = w_1
    for step in seen.seen[1:]:
        want = [m * a + (1 - m) * w for a, w in zip(want, step)]
    got = [to_numpy(v) for v in model.trainable_variables]
    for g, w, last in zip(got, want, seen.seen[-1]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert not all(np.allclose(g, last) for g, last in zip(got, seen.seen[-1]))
    # a finished run resumed trains nothing and also returns the average
    training.train(_build(tiny_bag), data, checkpoint_dir=str(tmp_path), **kw)
    again = _build(tiny_bag, seed=123)
    r = training.train(again, data, checkpoint_dir=str(tmp_path), resume=True, **kw)
    assert r.initial_epoch == 3
    for g, w in zip(again.trainable_variables, want):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-5, atol=1e-6)
    for bad in (0.0, 1.0, True, "0.9"):
        with pytest.raises(ValueError, match=r"`ema_momentum` must be None or a float in "
                                             rf"\(0, 1\); received ema_momentum={bad!r}"):
            training.make_optimizer(ema_momentum=bad)


def test_a_run_a_step_limit_stopped_can_be_resumed(tmp_path):
    data = tiny_pairs(8)
    kw = dict(batch_size=4, learning_rate=1e-2, shuffle=False, early_stopping_patience=5)
    r1 = training.train(_build(tiny_bag), data, epochs=4, checkpoint_dir=str(tmp_path),
                        callbacks=[training.StepLimit(2)], **kw)   # stopped after epoch 1
    assert r1.epochs_run == 1 and not r1.stopped_early   # a limit is not early stopping
    r2 = training.train(_build(tiny_bag), data, epochs=4, checkpoint_dir=str(tmp_path),
                        resume=True, **kw)
    assert r2.initial_epoch == 1 and r2.epochs_run == 4


# ----------------------------------------------------------------------------- errors


def test_bad_arguments_raise_clear_value_errors():
    data = tiny_pairs(4)
    model = tiny_bag()
    with pytest.raises(ValueError, match=r"missing keys \['labels'\]"):
        training.train(model, {k: data[k] for k in ("encoder_inputs", "decoder_inputs")},
                       epochs=1)
    bad = dict(data, labels=data["labels"][:, :-1])
    with pytest.raises(ValueError, match=r"labels \(4, 4\)"):
        training.train(model, bad, epochs=1)
    with pytest.raises(ValueError, match="train_data"):
        training.train(model, [("a b", "c d")], epochs=1)
    with pytest.raises(ValueError, match="epochs"):
        training.train(model, data, epochs=0)
    with pytest.raises(ValueError, match="label_smoothing"):
        training.train(model, data, epochs=1, label_smoothing=1.5)
    with pytest.raises(ValueError, match="checkpoint_dir"):
        training.train(model, data, epochs=1, resume=True)
    with pytest.raises(ValueError, match="distribution"):
        training.train(model, data, epochs=1, distribution="model_parallel")


def test_data_parallel_off_jax_names_the_backend(backend):
    if backend == "jax":
        dist = training.data_parallel()                     # all local devices
        assert isinstance(dist, keras.distribution.DataParallel)
        return
    with pytest.raises(ValueError, match=f"(?s)'{backend}'.*JAX"):
        training.train(tiny_bag(), tiny_pairs(4), epochs=1, distribution="data_parallel")


def test_torch_threads_are_set_during_training_and_restored(backend):
    seen = []

    class Probe(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            if backend == "torch":
                import torch

                seen.append(torch.get_num_threads())

    if backend == "torch":
        import torch

        before = torch.get_num_threads()
    result = training.train(tiny_bag(), tiny_pairs(4), epochs=1, batch_size=4,
                            torch_threads=1, early_stopping_patience=None,
                            callbacks=[Probe()])
    if backend == "torch":
        assert seen == [1] and torch.get_num_threads() == before
        assert result.torch_threads == 1  # reported with the result
    else:
        assert result.torch_threads is None
    assert 1 <= backend_utils.auto_torch_threads() <= (os.cpu_count() or 1)
    with pytest.raises(ValueError, match="torch_threads"):
        training.train(tiny_bag(), tiny_pairs(4), epochs=1, torch_threads=0)


def test_busy_cores_reads_proc_stat_and_falls_back(tmp_path, monkeypatch):
    """`auto_torch_threads` counts the cores busy *now* (Linux /proc/stat), not the slow
    1-minute load average; without /proc/stat it falls back to the load average."""
    import time

    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    assert backend_utils._proc_stat_times(str(stat)) == (1000, 850)  # total, idle + iowait
    # a 4-core machine; during the sample window the counters move to the second snapshot:
    # user +500, system +250, idle +200, iowait +50 jiffies: 1000 in all, 250 of them idle
    # (idle + iowait), so 3/4 of the cores' time is busy: 3.0 cores
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.5, 2.0, 1.5))
    snapshots = []

    def sleep(seconds):
        snapshots.append(seconds)
        stat.write_text(after)

    monkeypatch.setattr(time, "sleep", sleep)
    before = "cpu  100 0 50 800 50 0 0 0 0 0\n"
    after = "cpu  600 0 300 1000 100 0 0 0 0 0\n"
    stat.write_text(before)
    assert backend_utils.busy_cores(0.25, stat_path=str(stat)) == pytest.approx(3.0)
    assert snapshots == [0.25]                          # one window of the asked length
    # only idle time passes (+400 idle): no core is busy
    after = "cpu  100 0 50 1200 50 0 0 0 0 0\n"
    stat.write_text(before)
    assert backend_utils.busy_cores(0.25, stat_path=str(stat)) == pytest.approx(0.0)
    # steal counts as busy, guest (columns 9-10, already inside user) is not counted twice:
    # +100 user, +100 steal, +200 idle, +100 guest -> 200 busy of 400 on 4 cores: 2.0
    after = "cpu  200 0 50 1000 50 0 0 100 100 0\n"
    stat.write_text(before)
    assert backend_utils.busy_cores(0.25, stat_path=str(stat)) == pytest.approx(2.0)
    # the counters did not move (a window shorter than a jiffy): the load average
    after = before
    stat.write_text(before)
    assert backend_utils.busy_cores(0.25, stat_path=str(stat)) == 2.5
    # no /proc/stat, or a malformed one: the load average, no crash
    missing = str(tmp_path / "no_such_file")
    assert backend_utils.busy_cores(0.0, stat_path=missing) == 2.5
    stat.write_text("cpu  1 2\n")
    assert backend_utils.busy_cores(0.0, stat_path=str(stat)) == 2.5
    # auto_torch_threads: the cores left idle, rounded, at least 1
    for busy, threads in ((3.0, 1), (1.4, 3), (0.0, 4), (3.9, 1), (6.0, 1)):
        monkeypatch.setattr(backend_utils, "busy_cores", lambda busy=busy: busy)
        assert backend_utils.auto_torch_threads() == threads, busy


def test_recommended_training_covers_every_model_and_trains():
    from kerasattn.cli import MODEL_NAMES

    for name in MODEL_NAMES:
        kw = training.recommended_training(name)
        assert kw["bucket"] == ("source" if keras.backend.backend() != "jax" else False)
        assert kw["learning_rate"] > 0
        assert set(kw) <= set(inspect.signature(training.train).parameters)
    kw["learning_rate"] = -1.0                        # a copy: the table is unchanged
    assert training.recommended_training(name)["learning_rate"] > 0
    with pytest.raises(ValueError, match=r"`name`.*received 'gpt'"):
        training.recommended_training("gpt")


def test_atomic_write_gives_the_mode_of_a_normally_written_file(tmp_path):
    def write(tmp):
        with open(tmp, "w") as f:
            f.write("x")

    path = files.atomic_write(str(tmp_path / "new.txt"), write)
    # not mkstemp's owner-only 0600: the mode a plain open() would give (the process umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~files._UMASK
    os.chmod(path, 0o440)                                # read-only, as a shared file may be
    files.atomic_write(path, write)                      # a replaced file keeps its mode
    assert os.stat(path).st_mode & 0o777 == 0o440
