"""The paper command under stress (small n, real data): killed and resumed, it redoes only
what was not stored and ends on the table of an uninterrupted run; a second command into the
same folder is refused by the folder lock (one line, exit 2) and leaves no duplicate row.

The commands start from the store of an uninterrupted run without its test runs (as a run
stopped after the grid search leaves it: :func:`tests.paper.conftest.copy_without`), so they
run the test phase (54 runs, on the driver's process pool or inline), not the whole
reproduction again: every cell of the table they end on is computed by them."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from allseason import sweeps
from allseason.envs.classification import paper_setup
from allseason.envs.datasets import DataUnavailable
from allseason.paper import reproduce as R

from .conftest import copy_without

pytestmark = pytest.mark.usefixtures("private_data_cache")  # see conftest.py

SMALL = R.Protocol(n=600, seeds=2)


def _cmd(out: Path, processes: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "allseason",
        "paper",
        "--table",
        "mnist-2arm",
        "--n",
        "600",
        "--seeds",
        "2",
        "--out",
        str(out),
        "--processes",
        str(processes),
    ]


def _env(audit: Path | None = None) -> dict:
    env = dict(os.environ)
    root = str(Path(R.__file__).resolve().parents[1])  # this checkout, whatever the cwd
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    if audit is not None:
        env[sweeps.AUDIT_ENV] = str(audit)
    return env


def _stored(out: Path) -> int:
    db = out / sweeps.STORE_FILE
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute(f"SELECT COUNT(*) FROM {sweeps.PAPER_TABLE}").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0


def _wait_for(out: Path, n: int, proc: subprocess.Popen, limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while _stored(out) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)


def _audit(path: Path) -> Counter:
    lines = path.read_text().split("\n") if path.exists() else []
    return Counter(tuple(line.split()[:2]) for line in lines if line)


@pytest.fixture
def reference(mnist_prefix_store):
    """The table of an uninterrupted run (the shared store of tests/paper/conftest.py)."""
    return mnist_prefix_store[1]


def _same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    cols = ["algorithm", "pattern", "mean", "std", "seeds", "params"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


def _after_the_grid_search(store: Path, out: Path) -> tuple[set, list]:
    """``store`` copied to ``out`` without its test runs: (the keys kept, the test jobs)."""
    n_removed = copy_without(store, out, "phase = 'test'")
    kept = R.load_runs(out)
    tests = R.test_jobs("mnist-2arm", R.choose(kept, "mnist-2arm", SMALL), SMALL)
    assert n_removed == len(tests) and not {j.key for j in tests} & set(kept["key"])
    return set(kept["key"]), tests


def test_killed_paper_run_resumes_and_ends_on_the_uninterrupted_table(mnist_prefix_store, tmp_path):
    """Killed (SIGKILL to its process group: the driver, its pool and the pool's workers)
    once 20 of the test runs are stored, then run again."""
    store, reference = mnist_prefix_store
    out, log = tmp_path / "out", tmp_path / "audit.log"
    kept, tests = _after_the_grid_search(store, out)
    cmd = _cmd(out, processes=2)
    proc = subprocess.Popen(
        cmd,
        env=_env(log),
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _wait_for(out, len(kept) + 20, proc)
    with contextlib.suppress(ProcessLookupError):  # (if it ended, the assert below says so)
        os.killpg(proc.pid, signal.SIGKILL)  # the driver, its pool and the pool's workers
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
    proc.stderr.close()
    before = set(R.load_runs(out)["key"]) - kept  # stored by the killed run
    assert 20 <= len(before) < len(tests)

    done = subprocess.run(
        cmd, env=_env(log), cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert f"{len(kept)} runs, {len(kept)} already stored, 0 to run" in done.stderr
    assert f"{len(tests)} runs, {len(before)} already stored" in done.stderr
    runs = R.load_runs(out)
    assert runs["key"].is_unique and (runs["n_results"] == 1).all()
    assert set(runs["key"]) == kept | {j.key for j in tests}
    audit = _audit(log)
    assert not any(audit["start", key] for key in kept)  # the grid search: never again
    for key in before:  # stored before the kill: started once, never again
        assert audit["start", key] == 1 and audit["done", key] == 1
    repeated = [k for k in runs["key"] if audit["start", k] > 1]
    # only runs in flight at the kill ran twice: at most the executor's window (2 x 2
    # processes, counting results finished in a worker but not yet stored by the driver)
    assert len(repeated) <= 4 and not set(repeated) & before
    _same_table(R.table_frame("mnist-2arm", runs, SMALL), reference)


def test_second_paper_run_into_the_same_folder_is_refused(reference, tmp_path):
    """While another driver holds the folder's lock, ``paper`` into it says so in one line
    and exits 2 (the lock is held here, so the test does not race a run's speed)."""
    from allseason.sweeps.execute import _folder_lock

    out = tmp_path / "out"
    out.mkdir()
    with _folder_lock(out):
        second = subprocess.run(
            _cmd(out, processes=1),
            env=_env(),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert second.returncode == 2
    assert "another sweep or paper run is writing into" in second.stderr
    assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr
    assert _stored(out) == 0


def test_two_concurrent_paper_runs_leave_no_duplicate_rows(mnist_prefix_store, tmp_path):
    """Two ``paper`` commands started together into one folder: one runs, the other is
    refused by the lock (or, if it arrives after the first has finished, finds everything
    stored); either way one row per run and the table of an uninterrupted run."""
    store, reference = mnist_prefix_store
    out = tmp_path / "out"
    kept, tests = _after_the_grid_search(store, out)
    procs = [
        subprocess.Popen(
            _cmd(out, processes=1),
            env=_env(),
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 0], [0, 2]), results
    for code, err in results:
        if code == 2:
            assert "another sweep or paper run is writing into" in err
            assert err.count("\n") == 1 and "Traceback" not in err
    runs = R.load_runs(out)
    assert runs["key"].is_unique and (runs["n_results"] == 1).all()
    assert set(runs["key"]) == kept | {j.key for j in tests}
    _same_table(R.table_frame("mnist-2arm", runs, SMALL), reference)


def test_dask_runs_give_the_same_numbers_as_the_driver(tmp_path):
    pytest.importorskip("distributed")
    try:
        paper_setup("mnist", "2arm", "regular", n=600)
    except DataUnavailable as exc:
        pytest.skip(str(exc))
    jobs = [
        R.Job("test", "mnist-2arm", "extreme", row, "{}", 0, 600, 600, SMALL.key())
        for row in ("lints", "random")
    ]
    assert R.execute_jobs(jobs, tmp_path / "dask", workers=1, processes=None) == 0
    assert R.execute_jobs(jobs, tmp_path / "inline", processes=1) == 0
    dask, inline = (
        R.load_runs(tmp_path / k).set_index("key")["mean_reward"] for k in ("dask", "inline")
    )
    pd.testing.assert_series_equal(dask.sort_index(), inline.sort_index())
