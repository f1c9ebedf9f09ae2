"""kerasattn._env (backend selection, TensorFlow start-up filter) and the torch thread setting."""
from __future__ import annotations

import os

import keras
import pytest

from kerasattn import _env, backend_utils


def test_select_backend_refuses_a_second_backend_once_keras_is_imported(monkeypatch):
    current = keras.backend.backend()
    other = next(b for b in _env.BACKENDS if b != current)
    monkeypatch.setattr(_env, "check_backend", lambda name, source="--backend": name)
    with pytest.raises(_env.UsageError, match=f"already imported with backend '{current}'"):
        _env.select_backend(other)
    monkeypatch.setenv("KERAS_BACKEND", current)
    assert _env.select_backend(current) == current and _env.select_backend(None) == current


def test_every_model_name_has_a_builder_and_nothing_else_does():
    from kerasattn.models import registry

    assert set(registry._BUILDERS) == set(_env.MODEL_NAMES) == set(registry._CONFIGS)
    with pytest.raises(_env.UsageError, match="MODEL must be one of seq2seq, .*; received 'x'"):
        _env.check_model_name("x")


def test_stderr_filter_drops_tensorflow_noise_and_keeps_the_rest(capfd):
    with _env._filtered_stderr():
        os.write(2, b"WARNING: All log messages before absl::InitializeLog() is called\n"
                    b"I0000 00:00:17955 port.cc:153] oneDNN custom operations are on.\n"
                    b"a real warning\n")
    assert capfd.readouterr().err == "a real warning\n"


def test_torch_threads_are_left_alone_unless_asked(monkeypatch):
    """Thread tuning is opt-in (KERASATTN_TORCH_THREADS) and never samples the CPU load per
    call: `torch_threads("auto")` with the variable unset changes nothing."""
    def no_sampling(*args, **kwargs):
        raise AssertionError("busy_cores was called")

    monkeypatch.setattr(backend_utils, "busy_cores", no_sampling)
    monkeypatch.setattr(backend_utils, "_configured", {})
    monkeypatch.delenv(backend_utils.TORCH_THREADS_ENV, raising=False)
    assert backend_utils.configured_torch_threads() is None
    if keras.backend.backend() == "torch":
        import torch

        before = torch.get_num_threads()
        with backend_utils.torch_threads("auto") as t:
            assert t.n == before == torch.get_num_threads()
        monkeypatch.setenv(backend_utils.TORCH_THREADS_ENV, "1")
        with backend_utils.torch_threads("auto") as t:
            assert t.n == 1 == torch.get_num_threads()
        assert torch.get_num_threads() == before
    monkeypatch.setenv(backend_utils.TORCH_THREADS_ENV, "3")
    assert backend_utils.configured_torch_threads() == 3
    monkeypatch.setenv(backend_utils.TORCH_THREADS_ENV, "lots")
    with pytest.raises(ValueError, match="KERASATTN_TORCH_THREADS must be 'auto'"):
        backend_utils.configured_torch_threads()


def test_auto_torch_threads_is_measured_once_per_process(monkeypatch):
    calls = []
    monkeypatch.setattr(backend_utils, "busy_cores", lambda *a: calls.append(1) or 0.0)
    monkeypatch.setattr(backend_utils, "_configured", {})
    monkeypatch.setenv(backend_utils.TORCH_THREADS_ENV, "auto")
    first = backend_utils.configured_torch_threads()
    assert first == (os.cpu_count() or 1)          # idle machine: every core
    assert backend_utils.configured_torch_threads() == first and len(calls) == 1


def test_importing_kerasattn_installs_the_tensorflow_filter_only_before_tensorflow():
    from conftest import run_in_backend

    res = run_in_backend(keras.backend.backend(), """
        import json, sys
        import kerasattn
        from kerasattn import _env
        print(json.dumps([type(f).__name__ for f in sys.meta_path
                          if isinstance(f, _env._QuietTensorFlowFinder)]))
    """)
    assert res == ["_QuietTensorFlowFinder"]   # a fresh process: tensorflow not imported yet


def test_default_backend_and_the_one_backend_error(monkeypatch, tmp_path):
    """The grader and the rest of the kit choose and check the backend the same way: an
    unknown $KERAS_BACKEND is an error naming it, not a silent fall-back."""
    from kerasattn.grader import cli as grader_cli

    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    monkeypatch.setenv("KERAS_BACKEND", "")
    assert _env.default_backend() == "tensorflow"                 # no env, no keras.json
    (tmp_path / "keras.json").write_text('{"backend": "jax"}')
    assert _env.default_backend() == "jax"
    monkeypatch.setenv("KERAS_BACKEND", "theano")
    with pytest.raises(_env.UsageError, match=r"\$KERAS_BACKEND must be one of tensorflow, "
                                              "jax, torch; received 'theano'"):
        _env.default_backend()
    assert grader_cli.main(["--quiet", str(tmp_path)]) == 2       # the same error


def test_one_backend_option_everywhere():
    import argparse

    from kerasattn import cli
    from kerasattn.grader import cli as grader_cli

    def backend_action(parser):
        return next(a for a in parser._actions if "--backend" in a.option_strings)

    subparsers = next(a for a in cli.build_parser()._actions
                      if isinstance(a, argparse._SubParsersAction)).choices
    # every command that loads keras takes it; `data` (a download) and `hint` (text) do
    # not load keras, and `grade` has its own parser
    keras_free = {"data", "hint", "grade"}
    helps = {backend_action(p).help for name, p in subparsers.items()
             if name not in keras_free}
    assert {"lesson", "train", "translate", "explore", "backends"} <= set(subparsers)
    helps.add(backend_action(cli.build_parser()).help)
    assert len(helps) == 1
    (text,) = helps
    assert all(b in text for b in _env.BACKENDS)
    assert "or all" in backend_action(grader_cli.build_parser()).help
