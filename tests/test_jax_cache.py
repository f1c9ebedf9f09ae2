"""JAX's persistent compilation cache (``backend_utils.jax_compilation_cache``): on by
default in the kit's private cache directory, ``KERASATTN_JAX_CACHE`` chooses another or
turns it off, a cache the user gave JAX is kept with JAX's own settings, a directory that
is not the user's alone warns once and is not used; never in a grader worker that has no
cache of its own. Other backends: nothing happens."""
import os

import keras
from conftest import run_in_backend

from kerasattn import backend_utils
from kerasattn._env import JAX_CACHE_ENV
from kerasattn.grader.engine import Worker

# JAX settings from the parent (tools/test_all_backends.py gives the suite its own cache)
# are removed, so each child starts as a user's process would
CLEAN = {"JAX_COMPILATION_CACHE_DIR": None, "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": None,
         JAX_CACHE_ENV: None, "XDG_CACHE_HOME": None}

CHILD = """
import json, os, warnings
import jax
from kerasattn import backend_utils
out = {"min_before": jax.config.jax_persistent_cache_min_compile_time_secs, "calls": []}
for value in VALUES:
    if value is not None:
        os.environ["KERASATTN_JAX_CACHE"] = value
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = backend_utils.jax_compilation_cache()
    out["calls"].append(dict(path=path, warnings=[str(w.message) for w in caught]))
out["config_dir"] = jax.config.jax_compilation_cache_dir
out["min_after"] = jax.config.jax_persistent_cache_min_compile_time_secs
if out["config_dir"]:
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.jit(lambda a: a * 3.0 + 1.0)(jax.numpy.ones(3))
    out["mode"] = os.stat(out["config_dir"]).st_mode & 0o777
    out["files"] = len(os.listdir(out["config_dir"]))
print(json.dumps(out))
"""


def _child(values, env=None):
    return run_in_backend("jax", f"VALUES = {values!r}\n" + CHILD, env={**CLEAN, **(env or {})})


def test_jax_compilation_cache(tmp_path):
    if keras.backend.backend() != "jax":
        assert backend_utils.jax_compilation_cache() is None   # nothing to do
        return
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    mine = tmp_path / "mine"
    # 'off' in any case; a directory that cannot be made and one others can write to (each
    # warns once, naming it, and is not used); then one that can be made: created private,
    # JAX writes its compilations there, and it stays on for the process
    out = _child(["off", "OFF", str(blocker / "jax"), str(blocker / "jax"), str(shared),
                  str(mine), "off"])
    calls = out["calls"]
    assert calls[0] == calls[1] == dict(path=None, warnings=[])
    for i, where in ((2, blocker / "jax"), (4, shared)):
        assert calls[i]["path"] is None and len(calls[i]["warnings"]) == 1
        assert "KERASATTN_JAX_CACHE: cannot use" in calls[i]["warnings"][0]
        assert str(where) in calls[i]["warnings"][0]
        assert f"received KERASATTN_JAX_CACHE={str(where)!r}" in calls[i]["warnings"][0]
    assert f"others can write to it (mode 777; `chmod go-w {shared}`" in calls[4]["warnings"][0]
    assert calls[3] == dict(path=None, warnings=[])          # the same value: warned once
    assert calls[5]["path"] == calls[6]["path"] == out["config_dir"] == str(mine)
    assert out["mode"] == 0o700
    assert out["min_after"] == backend_utils.JAX_CACHE_MIN_COMPILE_SECONDS
    assert out["files"] >= 1
    # unset: the kit's directory under $XDG_CACHE_HOME, made private if others could write
    # to it; a minimum the user set is kept
    want = tmp_path / "xdg" / "kerasattn" / "jax"
    want.mkdir(parents=True)
    os.chmod(want, 0o777)
    out = _child([None], {"XDG_CACHE_HOME": str(tmp_path / "xdg"),
                          "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "2"})
    assert out["calls"][0] == dict(path=str(want), warnings=[])
    assert out["config_dir"] == str(want) and out["files"] >= 1 and out["mode"] == 0o700
    assert out["min_after"] == 2
    # a cache the user gave JAX wins, with JAX's own settings, even over 'off'
    users = str(tmp_path / "users")
    out = _child([None, "off"], {"JAX_COMPILATION_CACHE_DIR": users})
    assert [c["path"] for c in out["calls"]] == [users, users] == [out["config_dir"]] * 2
    assert out["min_after"] == out["min_before"]


def test_grader_workers_never_get_the_kits_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(JAX_CACHE_ENV, str(tmp_path / "from_the_caller"))
    monkeypatch.setenv("JAX_COMPILATION_CACHE_DIR", str(tmp_path / "callers_jax_cache"))
    for backend in ("jax", "torch"):
        env = Worker(backend, str(tmp_path)).environment()
        assert env[JAX_CACHE_ENV] == "off"
        assert "JAX_COMPILATION_CACHE_DIR" not in env
    own = str(tmp_path / "this_run")
    env = Worker("jax", str(tmp_path), jax_cache=own).environment()
    assert env[JAX_CACHE_ENV] == "off" and env["JAX_COMPILATION_CACHE_DIR"] == own
