"""The small paper store the tests of the paper's reproduction read: mnist-2arm at n = 600,
2 seeds (real data: the fixtures skip, with the install command, where MNIST is not
installed).

- :func:`mnist_prefix_store`: under the "prefix" validation protocol alone;
- :func:`mnist_both_store`: under both protocols ("prefix" and "shrunk"): a copy of the
  prefix store, then the shrunk protocol's runs.

Each store is reproduced once per test session, by the first pytest-xdist worker that asks
for it (the others wait for it, under a file lock, in the folder the workers share), and
each test process reads its own copy. Both are read-only for the tests: a test that runs
more into a store copies it first (``shutil.copytree``, or :func:`copy_without`).
``tests/app/test_paper_tables.py`` reads the same stores through :func:`stored`.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from ..shared_results import _exclusive  # one OS lock for every shared test cache

N, SEEDS, TABLE = 600, 2, "mnist-2arm"
_BUILT: dict[str, tuple] = {}  # per test process: "prefix" / "both" -> (folder, frames)


def need_mnist() -> None:
    """Skip (with the install command) where MNIST is not installed."""
    from allseason.envs.classification import paper_setup
    from allseason.envs.datasets import DataUnavailable

    try:
        paper_setup("mnist", "2arm", "regular", n=N)
    except DataUnavailable as exc:
        pytest.skip(str(exc))


def protocols() -> dict:
    """{validation: Protocol} of the small store, "prefix" and "shrunk"."""
    from allseason.paper import reproduce as R

    return {v: R.Protocol(n=N, seeds=SEEDS, validation=v) for v in ("prefix", "shrunk")}


def _todo(kind: str) -> list:
    return [protocols()["prefix"]] if kind == "prefix" else list(protocols().values())


def _shared_root(tmp_path_factory) -> Path:
    """The folder every pytest-xdist worker of this session shares (the parent of the
    worker's base temporary folder; without xdist, the base temporary folder)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _reproduced(kind: str, root: Path) -> Path:
    """The store ``kind`` under ``root``, reproduced by the first process that asks for it;
    the others find it complete (a ``.done`` mark, written after the last run)."""
    from allseason.paper import reproduce as R

    folder, done = root / f"paper-{kind}", root / f"paper-{kind}.done"
    with _exclusive(root / f"paper-{kind}.lock"):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a process that failed half-way
            if kind == "both":  # a copy of the prefix store: the shrunk runs only are run
                shutil.copytree(_reproduced("prefix", root), folder)
            R.reproduce_protocols([TABLE], _todo(kind), out=folder, processes=1)
            done.touch()
    return folder


def stored(kind: str, tmp_path_factory) -> tuple:
    """(folder, {(validation, table): frame}) of the store ``kind`` ("prefix" or "both"):
    this process's own copy of the session's store (:func:`_reproduced`), made on the first
    call in this process."""
    from allseason.paper import reproduce as R

    if kind not in _BUILT:
        need_mnist()
        shared = _reproduced(kind, _shared_root(tmp_path_factory))
        folder = tmp_path_factory.mktemp(f"paper-{kind}") / "store"
        shutil.copytree(shared, folder)
        runs = R.load_runs(folder)
        frames = {(p.validation, TABLE): R.table_frame(TABLE, runs, p) for p in _todo(kind)}
        _BUILT[kind] = folder, frames
    return _BUILT[kind]


def copy_without(store: Path, dest: Path, where: str) -> int:
    """Copy ``store`` to ``dest`` without its finished tables (CSV) and without the runs the
    SQL condition ``where`` selects (e.g. ``"phase = 'test'"``): the store as a run
    stopped before those runs left it. Returns how many runs were taken out."""
    from allseason.sweeps import PAPER_TABLE, STORE_FILE

    shutil.copytree(store, dest, ignore=shutil.ignore_patterns("*.csv"))
    con = sqlite3.connect(dest / STORE_FILE)
    try:
        with con:
            n = con.execute(f"DELETE FROM {PAPER_TABLE} WHERE {where}").rowcount
    finally:
        con.close()
    assert n > 0, f"no run in {store} where {where}"
    return n


@pytest.fixture(scope="session")
def mnist_prefix_store(tmp_path_factory):
    """(folder, frame): mnist-2arm reproduced at n = 600, 2 seeds, validation "prefix" (on
    the first 60 steps); the table's frame."""
    folder, frames = stored("prefix", tmp_path_factory)
    return folder, frames["prefix", TABLE]


@pytest.fixture(scope="session")
def mnist_both_store(tmp_path_factory):
    """(folder, {validation: Protocol}): mnist-2arm at n = 600, 2 seeds, under both
    validation protocols."""
    folder, _ = stored("both", tmp_path_factory)
    return folder, protocols()
