"""The small paper store the tests of the paper's reproduction read: mnist-2arm at n = 600,
2 seeds, reproduced once per test process (real data: the fixtures skip, with the install
command, where MNIST is not installed).

- :func:`mnist_prefix_store`: under the "prefix" validation protocol alone;
- :func:`mnist_both_store`: under both protocols ("prefix" and "shrunk"): a copy of the
  prefix store, then the shrunk protocol's runs.

Both are read-only for the tests: a test that runs more into a store copies it first
(``shutil.copytree``). ``tests/app/test_paper_tables.py`` reads the same stores through
:func:`stored`.
"""

from __future__ import annotations

import shutil

import pytest

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


def stored(kind: str, tmp_path_factory) -> tuple:
    """(folder, {(validation, table): frame}) of the store ``kind`` ("prefix" or "both"),
    reproduced on the first call in this process."""
    from allseason.paper import reproduce as R

    if kind not in _BUILT:
        need_mnist()
        if kind == "prefix":
            folder = tmp_path_factory.mktemp("paper-prefix")
            todo = [protocols()["prefix"]]
        else:
            prefix_folder, _ = stored("prefix", tmp_path_factory)
            folder = tmp_path_factory.mktemp("paper-both") / "store"
            shutil.copytree(prefix_folder, folder)  # the shrunk runs only are run
            todo = list(protocols().values())
        frames = R.reproduce_protocols([TABLE], todo, out=folder, processes=1)
        _BUILT[kind] = folder, frames
    return _BUILT[kind]


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
