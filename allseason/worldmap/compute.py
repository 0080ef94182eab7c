"""Computing cells on the sweep engine: the two stages of the tuning rule (tune on
:data:`~.contest.TUNE_SEEDS`, then the kept settings on :data:`~.contest.SHOWN_SEEDS`), each
run stored in ``OUT/results.sqlite`` as soon as it finishes (:func:`allseason.sweeps.run_missing`
under the folder lock), so an interrupted computation resumes where it stopped."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..sweeps.execute import SweepError, _folder_lock, check_executor, run_missing, run_unit
from ..sweeps.store import ResultStore
from . import contest


@dataclass
class CellsOutcome:
    """What :func:`run_cells` did: the cells' summaries (None when incomplete), runs stored
    before, run now, failed, seconds, interrupted."""

    cells: list[dict] | None
    n_runs: int = 0
    n_stored_before: int = 0
    n_ran: int = 0
    n_failed: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether every cell is computed."""
        return self.cells is not None


def _describe(u) -> str:
    return f"{u.policy.label} {dict(u.policy.params)} seed {u.seed_index}"


def run_cells(
    scenarios,
    out,
    *,
    world=None,
    progress: bool = True,
    stream=None,
    title: str = "map",
    seeds=contest.SHOWN_SEEDS,
    **executor,
) -> CellsOutcome:
    """Compute one cell per scenario (the tuning rule of :mod:`.contest`) into ``out``.

    Parameters
    ----------
    scenarios : list of Scenario
        One per cell.
    out : path
        Results folder (its store makes the computation resumable).
    world : callable, optional
        The environment factory of every scenario (e.g. a reward table); None: each
        scenario's own world. Runs with a world belong in a folder of their own.
    progress, stream, title
        Progress bar on ``stream`` (stderr), headed ``title``.
    seeds : tuple of int
        The shown seed indices (never among the tuning seeds).
    **executor
        ``processes``, ``workers`` (Dask), ``scheduler`` (Dask) or ``inline=True``, as
        :func:`allseason.sweeps.run_jobs`.

    Returns
    -------
    CellsOutcome
        ``cells[i]`` is :func:`.contest.summarise` of scenario i plus its kept settings
        (``chosen``) and per-seed rewards (``rewards``).
    """
    if set(seeds) & set(contest.TUNE_SEEDS):
        raise ValueError("seeds: the shown seeds must not be tuning seeds")
    check_executor(*(executor.get(k) for k in ("processes", "workers", "scheduler")))
    fn = run_unit if world is None else functools.partial(run_unit, world=world)
    folder = Path(out)
    outcome = CellsOutcome(None)
    t0 = time.perf_counter()
    with ResultStore(folder) as store, _folder_lock(folder):
        tune = [u for sc in scenarios for u in contest.tuning_units(sc)]
        if not _stage(store, tune, fn, f"{title}: tuning", outcome, progress, stream, executor):
            return outcome
        chosen = []
        for sc in scenarios:
            units = contest.tuning_units(sc)
            chosen.append(contest.choose(contest.rows_from_store(store, units)))
        shown = [u for sc, ch in zip(scenarios, chosen) for u in contest.shown_units(sc, ch, seeds)]
        if not _stage(store, shown, fn, f"{title}: shown", outcome, progress, stream, executor):
            return outcome
        cells = []
        for sc, ch in zip(scenarios, chosen):
            rows = contest.rows_from_store(store, contest.shown_units(sc, ch, seeds))
            rewards = contest.per_seed(rows, ch, seeds)
            cell = contest.summarise(rewards)
            cell["chosen"] = contest.describe_choice(ch)
            cell["rewards"] = rewards
            cells.append(cell)
    outcome.cells = cells
    outcome.seconds = time.perf_counter() - t0
    return outcome


def _stage(store, units, fn, title, outcome, progress, stream, executor) -> bool:
    """One stage through run_missing; False (outcome updated) if it did not complete."""
    n_before, done = run_missing(
        store,
        units,
        fn,
        title=title,
        progress=progress,
        stream=stream,
        describe=_describe,
        **executor,
    )
    outcome.n_runs += len(units)
    outcome.n_stored_before += n_before
    outcome.n_ran += done.n_ran
    outcome.n_failed += done.n_failed
    outcome.errors += done.errors
    if done.interrupted:
        outcome.interrupted = True
        return False
    return done.n_failed == 0


__all__ = ["CellsOutcome", "run_cells", "SweepError"]
