"""Running the reproduction: the store of runs (:func:`results_dir`, :func:`load_runs`), and the
driver that runs the grid search, then the test seeds, on the sweep engine's executors
(:func:`reproduce`, :func:`reproduce_protocols`, :func:`execute_jobs`). The protocol itself is
:mod:`allseason.paper.protocol`."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ..envs.classification import HORIZON, TABLE_KEYS, paper_setup
from ..sweeps.execute import SweepError, _folder_lock, check_executor, run_missing
from ..sweeps.store import PAPER_TABLE, STORE_FILE, ResultStore, results_root
from .protocol import (
    RUN_COLUMNS,
    Job,
    Protocol,
    _check_tables,
    choose,
    row_policy,
    run_row,
    test_jobs,
    validation_jobs,
)
from .report import table_frame


def results_dir(out: str | os.PathLike | None = None) -> Path:
    """``out``, else ``RESULTS/paper`` (RESULTS: :func:`allseason.sweeps.results_root`)."""
    if out is not None:
        return Path(out)
    return results_root() / "paper"


def _stored_rows(out) -> list[dict]:
    folder = results_dir(out)
    if not (folder / STORE_FILE).is_file():
        return []
    with ResultStore(folder, create=False, table=PAPER_TABLE) as store:
        return store.rows()


def load_runs(out=None) -> pd.DataFrame:
    """Every stored run, one row each (:data:`RUN_COLUMNS`; empty frame if none)."""
    rows = _stored_rows(out)
    frame = pd.DataFrame(rows).rename(columns={"table_name": "table"})
    if frame.empty:
        return pd.DataFrame(columns=RUN_COLUMNS)
    return frame[RUN_COLUMNS + ["n_results"]]


def load_curves(out=None) -> pd.DataFrame:
    """Cumulative reward of the test runs: table, pattern, policy, seed, step, cum_reward,
    protocol."""
    cols = ["table", "pattern", "policy", "seed", "step", "cum_reward", "protocol"]
    parts = []
    for r in _stored_rows(out):
        if r["phase"] != "test":
            continue
        curve = json.loads(r["curve"])
        parts.append(
            pd.DataFrame(
                {
                    "table": r["table_name"],
                    "pattern": r["pattern"],
                    "policy": r["policy"],
                    "seed": r["seed"],
                    "step": np.arange(1, len(curve) + 1) * r["curve_every"],
                    "cum_reward": curve,
                    "protocol": r["protocol"],
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


def _slow_first(job: Job) -> tuple:
    return (
        row_policy(job.policy) not in ("denband", "bob", "allseason-disc", "allseason-sw"),
        job.key,
    )


def _run_phase(
    store: ResultStore, jobs: list[Job], title: str, executor: dict, progress: bool, stream
) -> int:
    """Run and store the jobs the store does not hold (slow ones first). Returns how many
    failed; KeyboardInterrupt if interrupted."""
    _, done = run_missing(
        store,
        sorted(jobs, key=_slow_first),
        run_row,
        title=title,
        progress=progress,
        stream=stream,
        **executor,
        describe=lambda j: f"{j.phase} {j.table}/{j.pattern} {j.policy} {j.params} seed {j.seed}",
    )
    for line in done.errors[:5]:
        stream.write(f"failed: {line}\n")
    if done.interrupted:
        raise KeyboardInterrupt
    return done.n_failed


def _executor(processes, workers, scheduler) -> dict:
    check_executor(processes, workers, scheduler)
    if processes == 1:  # one process: run in the driver (data loaded once)
        return dict(inline=True)
    return dict(processes=processes, workers=workers, scheduler=scheduler)


def execute_jobs(
    jobs: list[Job],
    out=None,
    *,
    processes: int | None = 1,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    stream=None,
    title: str = "paper",
) -> int:
    """Run and store the jobs ``out``'s store does not hold yet (e.g. a diagnostic's),
    under the folder lock. Returns the number of failed runs."""
    folder = results_dir(out)
    executor = _executor(processes, workers, scheduler)
    stream = stream if stream is not None else sys.stderr
    with ResultStore(folder, table=PAPER_TABLE) as store, _folder_lock(folder):
        return _run_phase(store, jobs, title, executor, progress, stream)


class RunsFailed(SweepError):
    """Some runs raised (not stored; a rerun retries them)."""


def reproduce_protocols(
    tables: Iterable[str],
    protocols: Iterable[Protocol],
    *,
    out=None,
    processes: int | None = 1,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    stream=None,
) -> dict[tuple[str, str], pd.DataFrame]:
    """Grid search, test runs and comparison for each table under each protocol; returns
    {(validation, table): frame} (see :func:`table_frame`) and writes
    ``<table>-<validation>.csv``. Runs already stored are not redone.

    Every validation run (all tables, all protocols) goes to the executor at once, then
    every test run. Raises :class:`RunsFailed` if some runs failed, KeyboardInterrupt if
    interrupted (every finished run is stored)."""
    tables = _check_tables(tables)
    protocols = list(protocols)
    folder = results_dir(out)
    executor = _executor(processes, workers, scheduler)
    stream = stream if stream is not None else sys.stderr
    for table in tables:  # the data are there (one clear error, before any run)
        dataset, experiment = TABLE_KEYS[table]
        paper_setup(dataset, experiment, "regular", protocols[0].n if protocols else HORIZON)
    with ResultStore(folder, table=PAPER_TABLE) as store, _folder_lock(folder):
        val = [j for p in protocols for t in tables for j in validation_jobs(t, p)]
        failed = _run_phase(store, val, "paper, grid search", executor, progress, stream)
        if failed:
            raise RunsFailed(
                f"{failed} validation runs failed (not stored): run the same "
                "command again to retry them"
            )
        runs = load_runs(folder)
        tests = [j for p in protocols for t in tables for j in test_jobs(t, choose(runs, t, p), p)]
        failed = _run_phase(store, tests, "paper, test", executor, progress, stream)
        if failed:
            raise RunsFailed(
                f"{failed} test runs failed (not stored): run the same command again to retry them"
            )
    runs = load_runs(folder)
    frames = {}
    for p in protocols:
        for table in tables:
            frames[p.validation, table] = frame = table_frame(table, runs, p)
            frame.to_csv(folder / f"{table}-{p.validation}.csv", index=False)
    return frames


def reproduce(
    tables: Iterable[str],
    *,
    protocol: Protocol = Protocol(),
    out=None,
    processes: int | None = 1,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = False,
    stream=None,
) -> dict[str, pd.DataFrame]:
    """:func:`reproduce_protocols` under one protocol: {table: frame}."""
    frames = reproduce_protocols(
        tables,
        [protocol],
        out=out,
        processes=processes,
        workers=workers,
        scheduler=scheduler,
        progress=progress,
        stream=stream,
    )
    return {t: f for (_, t), f in frames.items()}
