"""Expensive results that several test files compute alike, made once per test session and
shared by its pytest-xdist workers (issue 34): the first process that asks computes it with
the engine's own function and the same arguments the tests use, under a file lock in the
session's shared data cache (``tests/conftest.py``'s ``_data_cache_dir``, where the MNIST
store lives too); the others read it back. Plain data only (JSON and ``.npz`` without
pickle), written atomically.

- :func:`obd_example_runs`: the runs of ``api.evaluate`` on the OBD-shaped example log (its
  20,000 events, every offline contestant, 2 seeds, root seed 0): 22 CPU-s, which
  ``tests/logs/test_replay.py`` and the Your data page (``tests/app/test_yourdata.py``)
  each made before. They are handed to ``evaluate`` as ``done_runs`` (its documented resume:
  a run depends only on its log, policy, seed index and root seed), so the table, the
  intervals and the warning are still computed by the code under test.
- :func:`deployment_example`: ``api.deployment_example()`` (10,000 decisions through the
  agent, 13 CPU-s), made by ``tests/logs/test_deployed_example.py`` and by the deployed
  page in every process that opened it.

Tests that compare two computations (threads against processes, resume against an
uninterrupted run) never take their results from here: only a result a test reads, never
one it compares against its own recomputation of the same thing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

OBD_SEEDS, OBD_ROOT_SEED = 2, 0


@contextmanager
def _exclusive(path: Path):
    """An OS lock on ``path`` (blocking: the second process waits for the first)."""
    import fcntl

    with open(path, "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _atomic(path: Path, write: Callable[[Path], None]) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    write(tmp)
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def once(folder: Path, name: str, compute, save, load):
    """``load(path)`` of the result ``name`` in ``folder``: ``save(compute(), path)`` by the
    first process of the session that asks (the others wait on the lock, then load)."""
    path = folder / name
    with _exclusive(folder / f"{name}.lock"):
        if not path.exists():
            _atomic(path, lambda tmp: save(compute(), tmp))
    return load(path)


def log_digest(log) -> str:
    """A digest of every field of an ``offline.Log`` (arrays by dtype, shape and bytes)."""
    h = hashlib.sha256()
    for f in dataclasses.fields(log):
        v = getattr(log, f.name)
        h.update(f.name.encode())
        if isinstance(v, np.ndarray):
            h.update(f"{v.dtype}{v.shape}".encode() + np.ascontiguousarray(v).tobytes())
        else:
            h.update(repr(v).encode())
    return h.hexdigest()


# -- the OBD-shaped example's evaluation ----------------------------------------------------


def _save_runs(runs: dict, path: Path) -> None:
    """``{(label, k): run}`` as one .npz: each run's ``sums`` arrays, and its scalars as
    JSON (floats as repr: read back bit for bit, NaN included)."""
    arrays, scalars = {}, []
    for i, ((label, k), run) in enumerate(runs.items()):
        for name, a in run["sums"].items():
            arrays[f"{i}/{name}"] = a
        rest = {n: v for n, v in run.items() if n != "sums"}
        scalars.append([label, k, list(run["sums"]), rest])
    arrays["scalars"] = np.frombuffer(json.dumps(scalars).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False  # shared by the tests of a process: none may change it
    return a


def _load_runs(path: Path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        scalars = json.loads(z["scalars"].tobytes().decode())
        return {
            (label, k): {**rest, "sums": {n: _frozen(z[f"{i}/{n}"]) for n in names}}
            for i, (label, k, names, rest) in enumerate(scalars)
        }


def resume_from(runs: dict) -> dict:
    """A fresh ``done_runs`` dict of ``runs`` (``evaluate`` adds to the one it is given)."""
    return {key: {**run, "sums": dict(run["sums"])} for key, run in runs.items()}


def obd_example_runs(folder: Path) -> tuple[str, dict]:
    """(the example log's digest, its runs): ``api.evaluate(log, n_seeds=2)`` on
    ``api.read_user_file(examples.obd_log())`` (every offline contestant, root seed 0)."""
    from allseason import api
    from allseason.logs import examples

    log = api.read_user_file(examples.obd_log())

    def compute():
        return api.evaluate(log, n_seeds=OBD_SEEDS, seed=OBD_ROOT_SEED).runs

    return log_digest(log), once(folder, "obd-example-runs.npz", compute, _save_runs, _load_runs)


# -- the deployed page's built-in example ---------------------------------------------------

_FILES = ("decisions", "batches", "state_file")


def _save_example(example: dict, path: Path) -> None:
    from allseason.logs.deployed_example import example_scenario

    assert example["scenario"] == example_scenario(), "the stored example is the default's"
    text = {"state": example["state"], "about": example["about"]}
    assert json.loads(json.dumps(text)) == text, "the state summary is plain JSON"
    arrays = {n: np.frombuffer(example[n], dtype=np.uint8) for n in _FILES}
    arrays["text"] = np.frombuffer(json.dumps(text).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def _load_example(path: Path) -> dict:
    from allseason.logs.deployed_example import example_scenario

    with np.load(path, allow_pickle=False) as z:
        out = {n: z[n].tobytes() for n in _FILES}
        out.update(json.loads(z["text"].tobytes().decode()))
    out["scenario"] = example_scenario()  # checked equal to the computed one when saved
    return out


_EXAMPLE: dict[Path, dict] = {}  # per test process: folder -> the example


def deployment_example(folder: Path) -> dict:
    """``api.deployment_example()`` (the default scenario's 10,000 decisions), every key;
    read once per process."""
    from allseason.logs.deployed_example import deployment_example as compute

    if folder not in _EXAMPLE:
        _EXAMPLE[folder] = once(
            folder, "deployment-example.npz", compute, _save_example, _load_example
        )
    return _EXAMPLE[folder]


# -- the fixtures (imported by the conftest.py of tests/app and tests/logs) -----------------


@pytest.fixture(scope="session")
def shared_obd_runs(_data_cache_dir):
    """(digest, runs) of the OBD-shaped example's evaluation: :func:`obd_example_runs`."""
    return obd_example_runs(_data_cache_dir)


@pytest.fixture(scope="session")
def shared_deployment_example(_data_cache_dir):
    """``api.deployment_example()``, once per session: :func:`deployment_example`."""
    return deployment_example(_data_cache_dir)
