"""Reproduce the paper's real-data tables (section 6): grid search, then the seeds, then the
table beside the paper's. This module is the protocol only (grids, choice, tables, the
comparison); runs are executed and stored by the experiment engine, :mod:`allseason.sweeps`.

The protocol is fixed here; where the paper is silent the choice is ours and is written down
(see also :mod:`allseason.envs.classification` for the data, tasks, PCA and patterns):

- Rows: All-Season with the product's default, weights carried from batch to batch with
  fixed share (``allseason-sw``, ``allseason-disc``: share 1e-4, spawn "handover", their
  declared defaults, not tuned), and All-Season with the paper's printed rule
  (``allseason-sw-printed``, ``allseason-disc-printed``: weighting "batch"), compared with
  the same paper numbers; then the baselines.
- Hyperparameters: grid search with the paper's grids (:data:`GRIDS`), lambda = 1 for every
  policy. Each (table, pattern, row) gets its own choice: the grid point with the highest
  mean reward over :data:`VALIDATION_SEEDS` seeds on the *validation run*, the first 10% of
  the data (3,000 images). Two validation protocols (:data:`VALIDATIONS`):

  * ``"prefix"`` (default; the paper's text, "the first 10% of the data as validation set
    (the initial part of the dataset)"): the first 3,000 steps of the 30,000-step pattern
    itself. Under the regular pattern (6 periods of 5,000) these hold no change point;
  * ``"shrunk"``: the same pattern shrunk to 3,000 steps, so every validation run sees the
    pattern's change points (its extreme periods last 60 steps).

  Ties go to the first grid point.
- All-Season(Disc): the paper tunes "tau" for both versions; for the discounted shadow we
  map the same grid to gamma = 1 - 1/tau (the discount whose effective memory is tau steps).
- D-LinTS: gamma = 1 - 10^-k, k in {1, 3, 5, 10}. BoB: S, L in {0.1, 1, 10}, T = 30,000.
  DenBand: tau in {500, 1000, 2000}, Delta_L in {0.1, 0.25, 0.5}.
- sigma2 = 0.25 (:data:`SIGMA2`) for every model that has a noise variance: rewards are 0/1,
  whose variance is at most 1/4. It is a fixed modelling choice, not tuned.
- Test: the chosen hyperparameters on the first 30,000 images under the full pattern, over
  :data:`SEEDS` seeds (the data order is fixed, as in the paper; the seeds drive the
  policies' own randomness). DenBand and dLinUCB use no randomness: they are run once and
  their std is 0.
- Seeds: ``SeedSequence(ROOT_SEED, spawn_key=(seed, crc32(table), crc32(pattern),
  crc32(policy)))`` with the registry name of the row's policy (a printed-rule row and its
  carried-weights row share their streams); validation seeds are 1000, 1001, ... so they
  never coincide with a test seed.

Storage: the results folder's ``results.sqlite`` (:func:`results_dir`: default
``RESULTS/paper``, RESULTS = :func:`allseason.sweeps.results_root`), table ``paper_runs``: one
row per run (its reward curve included), keyed by :attr:`Job.key`, each one committed as it
finishes, under the folder lock (one driver per folder). An interrupted reproduction resumes
where it stopped; the app shows the results without recomputing. ``<table>-<validation>.csv``
is the finished table.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..envs.classification import HORIZON, TABLE_KEYS, paper_setup
from ..policies import hyperparameters, policy_class
from ..sim.runner import play
from ..specs import PolicySpec
from ..sweeps.execute import SweepError, _folder_lock, audit, check_executor, run_missing
from ..sweeps.spec import _engine_version, canonical_json
from ..sweeps.store import PAPER_TABLE, STORE_FILE, ResultStore, results_root
from . import tables as paper_tables

__all__ = [
    "play_job",
    "GRIDS",
    "SIGMA2",
    "LAM",
    "SEEDS",
    "VALIDATION_SEEDS",
    "VALIDATIONS",
    "Job",
    "Protocol",
    "validation_jobs",
    "test_jobs",
    "run_job",
    "reproduce",
    "reproduce_protocols",
    "execute_jobs",
    "table_frame",
    "load_runs",
    "load_curves",
    "results_dir",
    "format_comparison",
    "format_side_by_side",
    "change_points",
    "stored_choice",
    "live_jobs",
    "curves_frame",
    "LIVE_DEFAULTS",
    "table_status",
    "oracle_frame",
    "row_policy",
    "POLICIES",
    "ROWS",
    "side_by_side_frame",
]

SIGMA2 = 0.25
LAM = 1.0
SEEDS = 5
VALIDATION_SEEDS = 2
ROOT_SEED = 20_201_102  # fixed once; any value would do
CURVE_EVERY = 100
TAUS = (50, 100, 500, 1000, 5000)
VALIDATIONS = ("prefix", "shrunk")
# the paper's printed rule (Algorithm 3: a bandit scored on the last batch alone)
PRINTED = {"weighting": "batch"}
# the product's default: weights carried with fixed share, as declared by the policies
CARRIED = {k: hyperparameters("allseason-sw")[k] for k in ("weighting", "share", "spawn")}
GRIDS: dict[str, list[dict]] = {
    "allseason-disc": [
        {"gamma": 1.0 - 1.0 / tau, "n_max": n, **CARRIED} for n in (3, 4, 5) for tau in TAUS
    ],
    "allseason-disc-printed": [
        {"gamma": 1.0 - 1.0 / tau, "n_max": n, **PRINTED} for n in (3, 4, 5) for tau in TAUS
    ],
    "allseason-sw": [{"tau": tau, "n_max": n, **CARRIED} for n in (3, 4, 5) for tau in TAUS],
    "allseason-sw-printed": [
        {"tau": tau, "n_max": n, **PRINTED} for n in (3, 4, 5) for tau in TAUS
    ],
    "sw-lints": [{"tau": tau} for tau in TAUS],
    "d-lints": [{"gamma": 1.0 - 10.0**-k} for k in (1, 3, 5, 10)],
    "denband": [
        {"tau": tau, "delta_l": dl} for tau in (500, 1000, 2000) for dl in (0.1, 0.25, 0.5)
    ],
    "bob": [{"S": s, "L": L} for s in (0.1, 1.0, 10.0) for L in (0.1, 1.0, 10.0)],
    "lints": [{}],
    "random": [{}],
}
ROWS = paper_tables.ROWS  # our tables' rows: the paper's, plus the printed-rule rows
POLICIES = paper_tables.ALGORITHMS  # registry names of the policies behind the rows
RUN_COLUMNS = [
    "key",
    "phase",
    "table",
    "pattern",
    "policy",
    "params",
    "seed",
    "n",
    "pattern_n",
    "mean_reward",
    "seconds",
    "protocol",
]


def row_policy(row: str) -> str:
    """The registry name of a row's policy (``allseason-sw-printed`` -> ``allseason-sw``)."""
    return paper_tables.paper_row(row)


@dataclass(frozen=True)
class Protocol:
    """What a run depends on besides its own (table, pattern, row, params, seed):
    ``n`` steps (images), test ``seeds``, ``validation_seeds`` and the ``validation``
    protocol, "prefix" or "shrunk" (see the module docstring)."""

    n: int = HORIZON
    seeds: int = SEEDS
    validation_seeds: int = VALIDATION_SEEDS
    validation: str = "prefix"

    def __post_init__(self):
        if self.validation not in VALIDATIONS:
            raise ValueError(
                f"validation: one of {', '.join(VALIDATIONS)}, got {self.validation!r}"
            )

    @property
    def n_validation(self) -> int:
        """The first 10% of the data (at least 50 steps, so a pattern fits)."""
        return max(50, self.n // 10)

    @property
    def validation_pattern_n(self) -> int:
        """Horizon of the pattern the validation run plays the first steps of: the full
        pattern (prefix) or the pattern shrunk to the validation run (shrunk)."""
        return self.n if self.validation == "prefix" else self.n_validation

    @property
    def label(self) -> str:
        return {
            "prefix": "validation on the first 10% of the pattern (the paper's text)",
            "shrunk": "validation on the pattern shrunk to 10%",
        }[self.validation]

    def key(self) -> str:
        """A short hash of everything that fixes the numbers: a changed protocol never
        reuses an old run. (The "shrunk" key is the one runs had before "prefix" existed.)"""
        parts = [self.n, SIGMA2, LAM, ROOT_SEED, "v1"]
        if self.validation != "shrunk":
            parts.append(self.validation)
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Job:
    """One run: a row's policy with fixed hyperparameters on one table, pattern and seed;
    the first ``n`` steps of the pattern scaled to ``pattern_n`` (0: to n)."""

    phase: str  # "validation" | "test" | "oracle" | "live" | ...
    table: str
    pattern: str
    policy: str  # the row (a registry name, or a printed-rule row)
    params: str  # JSON, sorted keys
    seed: int
    n: int
    pattern_n: int = 0
    protocol: str = ""  # Protocol.key()

    @property
    def horizon_of_pattern(self) -> int:
        return self.pattern_n or self.n

    @property
    def key(self) -> str:
        """sha256 of the run's identity: one stored row per key."""
        ident = [
            self.protocol,
            self.phase,
            self.table,
            self.pattern,
            self.policy,
            json.loads(self.params),
            self.seed,
            self.n,
            self.horizon_of_pattern,
        ]
        return hashlib.sha256(canonical_json(ident).encode()).hexdigest()


def _params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


def _check_tables(tables: Iterable[str]) -> list[str]:
    out = []
    for t in tables:
        if t not in TABLE_KEYS:
            raise ValueError(f"table: unknown {t!r}; known: {', '.join(TABLE_KEYS)}")
        out.append(t)
    return out


def _deterministic(row: str) -> bool:
    return policy_class(row_policy(row)).deterministic


def validation_jobs(table: str, protocol: Protocol = Protocol()) -> list[Job]:
    """Every grid point of every row, on each pattern's validation run."""
    return [
        Job(
            "validation",
            table,
            pattern,
            row,
            _params_json(params),
            1000 + k,
            protocol.n_validation,
            protocol.validation_pattern_n,
            protocol.key(),
        )
        for pattern in paper_tables.PATTERNS
        for row in ROWS
        for params in GRIDS[row]
        for k in range(
            1 if len(GRIDS[row]) == 1 or _deterministic(row) else protocol.validation_seeds
        )
    ]


def choose(runs: pd.DataFrame, table: str, protocol: Protocol = Protocol()) -> dict:
    """{(pattern, row): params JSON} with the best mean validation reward of this
    protocol's runs (ties: the first grid point). ValueError if the validation is
    incomplete."""
    v = runs[
        (runs.phase == "validation")
        & (runs.table == table)
        & (runs.n == protocol.n_validation)
        & (runs.protocol == protocol.key())
    ]
    chosen = {}
    for pattern in paper_tables.PATTERNS:
        for row in ROWS:
            grid = [_params_json(p) for p in GRIDS[row]]
            sub = v[(v.pattern == pattern) & (v.policy == row)]
            means = sub.groupby("params")["mean_reward"].mean()
            missing = [g for g in grid if g not in means.index]
            if missing:
                raise ValueError(f"validation of {row} on {table}/{pattern} is incomplete")
            chosen[pattern, row] = max(grid, key=lambda g: (means[g], -grid.index(g)))
    return chosen


def test_jobs(table: str, chosen: dict, protocol: Protocol = Protocol()) -> list[Job]:
    """The chosen hyperparameters on the full data, over the seeds."""
    return [
        Job(
            "test",
            table,
            pattern,
            row,
            chosen[pattern, row],
            k,
            protocol.n,
            protocol.n,
            protocol.key(),
        )
        for pattern in paper_tables.PATTERNS
        for row in ROWS
        for k in range(1 if _deterministic(row) else protocol.seeds)
    ]


def _rng(job: Job) -> np.random.Generator:
    key = (
        job.seed,
        *(zlib.crc32(s.encode()) for s in (job.table, job.pattern, row_policy(job.policy))),
    )
    return np.random.default_rng(np.random.SeedSequence(ROOT_SEED, spawn_key=key))


def play_job(
    job: Job,
    *,
    sigma2: float | None = None,
    lam: float | None = None,
    rng: np.random.Generator | None = None,
    label: str | None = None,
):
    """Play one job: (its :class:`~allseason.sim.trace.Trace`, its
    :class:`~allseason.envs.classification.PaperSetup`, seconds). The trace holds every
    decision, and for All-Season the weights and the spawns and prunings, so a real-data run
    can be looked inside like a race (``allseason.analysis``, ``allseason.viz.inside``).

    ``sigma2`` (the model's noise variance) and ``lam`` (the prior precision, M = lam I + ...)
    override the protocol's :data:`SIGMA2` and :data:`LAM` for a policy that has them (a
    sensitivity study: such a run is not a table's run, so it is never stored). ``rng``
    replaces the job's own stream (:func:`_rng`) and ``label`` the trace's label."""
    dataset, experiment = TABLE_KEYS[job.table]
    setup = paper_setup(
        dataset, experiment, job.pattern, job.n, pattern_horizon=job.pattern_n or None
    )
    policy_name = row_policy(job.policy)
    shared = _shared(policy_name)
    for key, value in (("sigma2", sigma2), ("lam", lam)):
        if value is not None and key in shared:
            shared[key] = value
    spec = PolicySpec(policy_name, {**json.loads(job.params), **shared})
    policy = spec.build(setup.d, rng=_rng(job) if rng is None else rng, horizon=setup.horizon)
    t0 = time.perf_counter()
    trace = play(
        setup.env(),
        policy,
        setup.batch_ends(),
        label=job.policy if label is None else label,
        seed_index=job.seed,
    )
    return trace, setup, time.perf_counter() - t0


def run_job(job: Job) -> tuple[Job, float, float, np.ndarray]:
    """Run one job: (job, mean reward, seconds, cumulative reward every CURVE_EVERY steps)."""
    trace, _, seconds = play_job(job)
    cum = np.cumsum(trace.reward)
    steps = np.arange(CURVE_EVERY, job.n + 1, CURVE_EVERY) - 1
    return job, float(trace.reward.mean()), seconds, cum[steps]


def _shared(policy: str) -> dict:
    hp = hyperparameters(policy)
    return {k: v for k, v in (("lam", LAM), ("sigma2", SIGMA2)) if k in hp}


def run_row(job: Job) -> dict:
    """Run one job and return its store row (the executor's run function)."""
    audit("start", job.key)
    _, mean, seconds, curve = run_job(job)
    row = dict(
        key=job.key,
        protocol=job.protocol,
        phase=job.phase,
        table_name=job.table,
        pattern=job.pattern,
        policy=job.policy,
        params=job.params,
        seed=job.seed,
        n=job.n,
        pattern_n=job.horizon_of_pattern,
        mean_reward=mean,
        seconds=seconds,
        curve=json.dumps([float(c) for c in curve]),
        curve_every=CURVE_EVERY,
        worker=f"{socket.gethostname()}:{os.getpid()}",
        engine=_engine_version(),
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    audit("done", job.key)
    return row


# -- storage -----------------------------------------------------------------------------------
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


def table_status(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> dict:
    """How far a table's reproduction is: {"validation": (done, total), "test": (done,
    total)}; the test total is known only once the validation is complete."""
    runs = runs[(runs.table == table) & (runs.protocol == protocol.key())]
    done = set(runs["key"])
    val = validation_jobs(table, protocol)
    out = {"validation": (sum(j.key in done for j in val), len(val)), "test": (0, None)}
    try:
        tests = test_jobs(table, choose(runs, table, protocol), protocol)
    except ValueError:
        return out
    out["test"] = (sum(j.key in done for j in tests), len(tests))
    return out


def table_frame(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> pd.DataFrame:
    """Our test results beside the paper's, one row per cell of :data:`ROWS` (see
    :func:`allseason.paper.tables.compare`), plus the chosen ``params``, ``seeds`` run,
    mean ``seconds`` per run, the ``per_seed`` mean rewards and their seeds
    (``seed_list``). Cells not measured yet (validation or test unfinished) are NaN."""
    t = runs[
        (runs.phase == "test")
        & (runs.table == table)
        & (runs.n == protocol.n)
        & (runs.protocol == protocol.key())
    ]
    try:
        chosen = choose(runs, table, protocol) if len(t) else {}
    except ValueError:  # validation unfinished
        chosen = {}
    rows = []
    for (pattern, policy), params in chosen.items():
        sub = t[(t.pattern == pattern) & (t.policy == policy) & (t.params == params)]
        if not len(sub):
            continue
        sub = sub.sort_values("seed")
        vals = sub["mean_reward"].to_numpy(dtype=float)
        rows.append(
            dict(
                algorithm=policy,
                pattern=pattern,
                mean=vals.mean(),
                std=vals.std(ddof=1) if len(vals) > 1 else 0.0,
                seeds=len(vals),
                params=params,
                seconds=sub["seconds"].astype(float).mean(),
                per_seed=[float(v) for v in vals],
                seed_list=[int(k) for k in sub["seed"]],
            )
        )
    extra = ["seeds", "params", "seconds", "per_seed", "seed_list"]
    measured = pd.DataFrame(rows, columns=["algorithm", "pattern", "mean", "std", *extra])
    cmp = paper_tables.compare(table, measured[["algorithm", "pattern", "mean", "std"]], rows=ROWS)
    return cmp.merge(
        measured[["algorithm", "pattern", *extra]], on=["algorithm", "pattern"], how="left"
    )


def oracle_frame(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> pd.DataFrame:
    """Diagnostic (``benchmarks/paper_grid_oracle.py`` stores its runs with phase "oracle"):
    per (pattern, policy), on the full test data and one seed, the score of the protocol's
    choice beside the best grid point in hindsight (so the cost is never negative). The
    oracle peeks at the test data: it says what the validation run's choice cost, never what
    the algorithm scores."""
    runs = runs[runs.protocol == protocol.key()]
    o = runs[(runs.phase == "oracle") & (runs.table == table)]
    cols = [
        "pattern",
        "algorithm",
        "protocol_mean",
        "oracle_mean",
        "cost",
        "chosen_params",
        "oracle_params",
    ]
    if not len(o):
        return pd.DataFrame(columns=cols)
    chosen = choose(runs, table, protocol)
    rows = []
    for (pattern, policy), sub in o.groupby(["pattern", "policy"], sort=False):
        best = sub.loc[sub["mean_reward"].astype(float).idxmax()]
        mine = sub[sub.params == chosen[pattern, policy]]  # the same seed as the oracle
        if not len(mine):
            continue
        score = float(mine["mean_reward"].iloc[0])
        rows.append(
            dict(
                pattern=pattern,
                algorithm=policy,
                protocol_mean=score,
                chosen_params=chosen[pattern, policy],
                oracle_mean=float(best.mean_reward),
                oracle_params=best.params,
                cost=float(best.mean_reward) - score,
            )
        )
    out = pd.DataFrame(rows, columns=cols)
    order = {p: i for i, p in enumerate(paper_tables.PATTERNS)}
    return out.sort_values(
        ["pattern", "algorithm"], key=lambda c: c.map(order) if c.name == "pattern" else c
    ).reset_index(drop=True)


def _width(frame: pd.DataFrame) -> int:
    return 2 + max(len(paper_tables.ROW_LABELS[a]) for a in dict.fromkeys(frame.algorithm))


def format_comparison(table: str, frame: pd.DataFrame, protocol: Protocol | None = None) -> str:
    """The table as text: per pattern, ours ± std | paper | diff; '*' marks |diff| > 0.03."""
    head = f"{paper_tables.CAPTIONS[table]} ({table}): mean reward per step, ours vs paper"
    lines = [head, "=" * len(head)]
    if protocol is not None:
        lines.append(f"protocol {protocol.validation!r}: {protocol.label}")
    w = _width(frame)
    cols = "".join(f"{p:^30}" for p in paper_tables.PATTERNS)
    lines.append(f"{'':{w}}{cols}")
    lines.append(
        f"{'':{w}}"
        + "".join(f"{'ours':>13}{'paper':>8}{'diff':>8} " for _ in paper_tables.PATTERNS)
    )
    for alg in dict.fromkeys(frame.algorithm):
        cells = []
        for p in paper_tables.PATTERNS:
            r = frame[(frame.algorithm == alg) & (frame.pattern == p)].iloc[0]
            ours = "—" if pd.isna(r["mean"]) else f"{r['mean']:.3f}±{r['std']:.3f}"
            diff = "" if pd.isna(r["diff"]) else f"{r['diff']:+.3f}"
            mark = "*" if r["differs"] else " "
            cells.append(f"{ours:>13}{r['paper_mean']:>8.2f}{diff:>8}{mark}")
        lines.append(f"{paper_tables.ROW_LABELS[alg]:{w}}" + "".join(cells))
    n_diff = int(frame["differs"].sum())
    lines.append(
        f"* |ours - paper| > {paper_tables.DIFF_THRESHOLD}: {n_diff} of {len(frame)} cells"
    )
    return "\n".join(lines)


def format_side_by_side(table: str, frames: dict[str, pd.DataFrame]) -> str:
    """Both validation protocols' tables in one: per pattern, ours under each protocol
    ({validation: frame}) and the paper's; '*' marks a cell off the paper by > 0.03."""
    names = list(frames)
    head = (
        f"{paper_tables.CAPTIONS[table]} ({table}): mean reward per step, ours ("
        + " | ".join(names)
        + ") vs paper"
    )
    lines = [head, "=" * len(head)]
    first = frames[names[0]]
    w = _width(first)
    cw = 8 * len(names) + 8
    lines.append(f"{'':{w}}" + "".join(f"{p:^{cw}}" for p in paper_tables.PATTERNS))
    lines.append(
        f"{'':{w}}"
        + "".join(
            "".join(f"{n:>8}" for n in names) + f"{'paper':>8}" for _ in paper_tables.PATTERNS
        )
    )
    for alg in dict.fromkeys(first.algorithm):
        cells = []
        for p in paper_tables.PATTERNS:
            cell = ""
            for n in names:
                f = frames[n]
                r = f[(f.algorithm == alg) & (f.pattern == p)].iloc[0]
                txt = "—" if pd.isna(r["mean"]) else f"{r['mean']:.3f}"
                cell += f"{txt + ('*' if r['differs'] else ' '):>8}"
            cells.append(cell + f"{r['paper_mean']:>8.2f}")
        lines.append(f"{paper_tables.ROW_LABELS[alg]:{w}}" + "".join(cells))
    lines.append(
        f"* |ours - paper| > {paper_tables.DIFF_THRESHOLD}; "
        + "; ".join(
            f"{n}: {int(frames[n]['differs'].sum())} of {len(frames[n])} cells" for n in names
        )
    )
    return "\n".join(lines)


def side_by_side_frame(frames: dict[str, pd.DataFrame], digits: int = 3) -> pd.DataFrame:
    """{validation: table frame} as one wide table: a row per table row (its label), per
    pattern a column per protocol ("regular · prefix", ...) and the paper's; cells
    "mean ± std" ("—" where not measured)."""
    names = list(frames)
    first = frames[names[0]]
    out = {}
    for p in paper_tables.PATTERNS:
        for n in names:
            f = frames[n].set_index(["algorithm", "pattern"])
            out[f"{p} · {n}"] = [
                "—"
                if pd.isna(f.loc[(a, p), "mean"])
                else f"{f.loc[(a, p), 'mean']:.{digits}f} ± {f.loc[(a, p), 'std']:.{digits}f}"
                for a in dict.fromkeys(first.algorithm)
            ]
        f = first.set_index(["algorithm", "pattern"])
        out[f"{p} · paper"] = [
            f"{f.loc[(a, p), 'paper_mean']:.2f} ± {f.loc[(a, p), 'paper_std']:.2f}"
            for a in dict.fromkeys(first.algorithm)
        ]
    return pd.DataFrame(
        out, index=[paper_tables.ROW_LABELS[a] for a in dict.fromkeys(first.algorithm)]
    )


# -- command line ------------------------------------------------------------------------------
# -- for the app: stored results, and a small live race -----------------------------------------
LIVE_DEFAULTS: dict[str, dict] = {  # used where no grid search is stored for the table
    "allseason-sw": {"tau": 100, "n_max": 4},
    "allseason-disc": {"gamma": 0.99, "n_max": 4},
    "sw-lints": {"tau": 500},
    "d-lints": {"gamma": 0.999},
    "denband": {"tau": 1000, "delta_l": 0.25},
    "bob": {"S": 1.0, "L": 1.0},
    "lints": {},
    "random": {},
}


def change_points(n: int = HORIZON) -> dict[str, list[int]]:
    """{pattern: the steps where the state changes} of the paper's patterns at horizon n."""
    from ..envs.classification import N_STATES
    from ..envs.patterns import preset

    return {
        p: [int(c) for c in preset(p, n, N_STATES).change_points()] for p in paper_tables.PATTERNS
    }


def stored_choice(
    table: str, pattern: str, out=None, protocol: Protocol = Protocol()
) -> dict[str, dict]:
    """{policy: params} chosen by a complete stored grid search for (table, pattern), else
    the :data:`LIVE_DEFAULTS` (All-Season: the carried-weights rows' choice)."""
    try:
        chosen = choose(load_runs(out), table, protocol)
    except ValueError:  # no (complete) grid search stored
        return {k: dict(v) for k, v in LIVE_DEFAULTS.items()}
    return {pol: json.loads(chosen[pattern, pol]) for pol in POLICIES}


def live_jobs(
    table: str, pattern: str, policies: Iterable[str], n: int, seeds: int, params: dict[str, dict]
) -> list[Job]:
    """Jobs of a small race on real data (phase "live"; never stored): each policy with
    ``params[policy]`` on the first n images, seeds 0 .. seeds-1."""
    _check_tables([table])
    if pattern not in paper_tables.PATTERNS:
        raise ValueError(f"pattern: one of {', '.join(paper_tables.PATTERNS)}, got {pattern!r}")
    if not 600 <= int(n) <= HORIZON:
        raise ValueError(f"n: must be in 600..{HORIZON}, got {n!r}")
    jobs = []
    for pol in policies:
        if pol not in POLICIES:
            raise ValueError(f"policy: one of {', '.join(POLICIES)}, got {pol!r}")
        for k in range(1 if policy_class(pol).deterministic else int(seeds)):
            jobs.append(
                Job("live", table, pattern, pol, _params_json(params.get(pol, {})), k, int(n))
            )
    return jobs


def curves_frame(results: Iterable[tuple[Job, float, float, np.ndarray]]) -> pd.DataFrame:
    """Results of :func:`run_job` as a curves table (pattern, policy, seed, step,
    cum_reward)."""
    rows = []
    for job, _mean, _sec, curve in results:
        steps = np.arange(1, len(curve) + 1) * CURVE_EVERY
        rows.append(
            pd.DataFrame(
                {
                    "pattern": job.pattern,
                    "policy": job.policy,
                    "seed": job.seed,
                    "step": steps,
                    "cum_reward": curve,
                }
            )
        )
    return (
        pd.concat(rows, ignore_index=True)
        if rows
        else pd.DataFrame(columns=["pattern", "policy", "seed", "step", "cum_reward"])
    )
