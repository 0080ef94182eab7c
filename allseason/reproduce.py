"""Reproduce the paper's real-data tables (section 6): grid search, then the seeds, then the
table beside the paper's.

The protocol is fixed here; where the paper is silent the choice is ours and is written down
(see also :mod:`allseason.envs.classification` for the data, tasks, PCA and patterns):

- Hyperparameters: grid search with the paper's grids (:data:`GRIDS`), lambda = 1 for every
  policy. Each (table, pattern, policy) gets its own choice: the grid point with the highest
  mean reward over :data:`VALIDATION_SEEDS` seeds on the *validation run*, the first 10% of
  the data (3,000 images) played under the same pattern shrunk to 3,000 steps. Why shrunk:
  the first 3,000 steps of the regular pattern hold no change point at all, and a validation
  run without a change cannot tell a non-stationary method's memory apart. Ties go to the
  first grid point.
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
  crc32(policy)))``; validation seeds are 1000, 1001, ... so they never coincide with a test
  seed.

Results are appended run by run to CSV files in the output folder (default
``$ALLSEASON_RESULTS/paper`` or ``results/paper``), so an interrupted reproduction resumes
where it stopped and the app shows them without recomputing:

- ``runs.csv``: one row per run (phase validation|test, table, pattern, policy, params as
  JSON, seed, n, mean_reward, seconds, protocol);
- ``curves.csv``: the test runs' cumulative reward every :data:`CURVE_EVERY` steps;
- ``<table>.csv``: the table as measured beside the paper's (from :func:`table_frame`).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import time
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import paper_tables
from .envs.classification import HORIZON, TABLE_KEYS, paper_setup
from .policies import policy_class
from .sim.runner import play
from .specs import PolicySpec

__all__ = ["GRIDS", "SIGMA2", "LAM", "SEEDS", "VALIDATION_SEEDS", "Job", "Protocol",
           "validation_jobs", "test_jobs", "run_job", "reproduce", "table_frame",
           "load_runs", "load_curves", "results_dir", "format_comparison", "change_points",
           "stored_choice", "live_jobs", "curves_frame", "LIVE_DEFAULTS", "table_status",
           "oracle_frame"]

SIGMA2 = 0.25
LAM = 1.0
SEEDS = 5
VALIDATION_SEEDS = 2
ROOT_SEED = 20_201_102  # fixed once; any value would do
CURVE_EVERY = 100
TAUS = (50, 100, 500, 1000, 5000)
# All-Season's rows of these tables are the paper's printed rule (weighting "batch"), as they
# were measured; rows with the product's default (carried weights) are the real-data issue's.
PRINTED = {"weighting": "batch"}
GRIDS: dict[str, list[dict]] = {
    "allseason-disc": [{"gamma": 1.0 - 1.0 / tau, "n_max": n, **PRINTED}
                       for n in (3, 4, 5) for tau in TAUS],
    "allseason-sw": [{"tau": tau, "n_max": n, **PRINTED} for n in (3, 4, 5) for tau in TAUS],
    "sw-lints": [{"tau": tau} for tau in TAUS],
    "d-lints": [{"gamma": 1.0 - 10.0 ** -k} for k in (1, 3, 5, 10)],
    "denband": [{"tau": tau, "delta_l": dl} for tau in (500, 1000, 2000)
                for dl in (0.1, 0.25, 0.5)],
    "bob": [{"S": s, "L": L} for s in (0.1, 1.0, 10.0) for L in (0.1, 1.0, 10.0)],
    "lints": [{}],
    "random": [{}],
}
POLICIES = paper_tables.ALGORITHMS  # the paper's rows, by registry name
RUN_COLUMNS = ["phase", "table", "pattern", "policy", "params", "seed", "n", "mean_reward",
               "seconds", "protocol"]


@dataclass(frozen=True)
class Protocol:
    """What a run depends on besides its own (table, pattern, policy, params, seed)."""

    n: int = HORIZON
    seeds: int = SEEDS
    validation_seeds: int = VALIDATION_SEEDS

    @property
    def n_validation(self) -> int:
        """The first 10% of the data (at least 50 steps, so a pattern fits)."""
        return max(50, self.n // 10)

    def key(self) -> str:
        """A short hash of everything that fixes the numbers: a changed protocol never
        reuses an old run."""
        text = json.dumps([self.n, SIGMA2, LAM, ROOT_SEED, "v1"])
        return hashlib.sha256(text.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Job:
    """One run: a policy with fixed hyperparameters on one table, pattern and seed."""

    phase: str  # "validation" | "test"
    table: str
    pattern: str
    policy: str
    params: str  # JSON, sorted keys
    seed: int
    n: int

    @property
    def key(self) -> tuple:
        return (self.phase, self.table, self.pattern, self.policy, self.params, self.seed,
                self.n)


def _params_json(params: dict) -> str:
    return json.dumps(params, sort_keys=True)


def _check_tables(tables: Iterable[str]) -> list[str]:
    out = []
    for t in tables:
        if t not in TABLE_KEYS:
            raise ValueError(f"table: unknown {t!r}; known: {', '.join(TABLE_KEYS)}")
        out.append(t)
    return out


def validation_jobs(table: str, protocol: Protocol = Protocol()) -> list[Job]:
    """Every grid point of every policy, on each pattern's validation run."""
    return [Job("validation", table, pattern, policy, _params_json(params), 1000 + k,
                protocol.n_validation)
            for pattern in paper_tables.PATTERNS for policy in POLICIES
            for params in GRIDS[policy]
            for k in range(1 if len(GRIDS[policy]) == 1 or policy_class(policy).deterministic
                           else protocol.validation_seeds)]


def choose(runs: pd.DataFrame, table: str, protocol: Protocol = Protocol()) -> dict:
    """{(pattern, policy): params JSON} with the best mean validation reward of this
    protocol's runs (ties: the first grid point). ValueError if the validation is
    incomplete."""
    v = runs[(runs.phase == "validation") & (runs.table == table)
             & (runs.n == protocol.n_validation) & (runs.protocol == protocol.key())]
    chosen = {}
    for pattern in paper_tables.PATTERNS:
        for policy in POLICIES:
            grid = [_params_json(p) for p in GRIDS[policy]]
            sub = v[(v.pattern == pattern) & (v.policy == policy)]
            means = sub.groupby("params")["mean_reward"].mean()
            missing = [g for g in grid if g not in means.index]
            if missing:
                raise ValueError(f"validation of {policy} on {table}/{pattern} is incomplete")
            chosen[pattern, policy] = max(grid, key=lambda g: (means[g], -grid.index(g)))
    return chosen


def test_jobs(table: str, chosen: dict, protocol: Protocol = Protocol()) -> list[Job]:
    """The chosen hyperparameters on the full data, over the seeds."""
    return [Job("test", table, pattern, policy, chosen[pattern, policy], k, protocol.n)
            for pattern in paper_tables.PATTERNS for policy in POLICIES
            for k in range(1 if policy_class(policy).deterministic else protocol.seeds)]


def _rng(job: Job) -> np.random.Generator:
    key = (job.seed, *(zlib.crc32(s.encode()) for s in (job.table, job.pattern, job.policy)))
    return np.random.default_rng(np.random.SeedSequence(ROOT_SEED, spawn_key=key))


def run_job(job: Job) -> tuple[Job, float, float, np.ndarray]:
    """Run one job: (job, mean reward, seconds, cumulative reward every CURVE_EVERY steps)."""
    dataset, experiment = TABLE_KEYS[job.table]
    setup = paper_setup(dataset, experiment, job.pattern, job.n)
    spec = PolicySpec(job.policy, {**json.loads(job.params), **_shared(job.policy)})
    policy = spec.build(setup.d, rng=_rng(job), horizon=setup.horizon)
    t0 = time.perf_counter()
    trace = play(setup.env(), policy, setup.batch_ends(), label=job.policy,
                 seed_index=job.seed)
    seconds = time.perf_counter() - t0
    cum = np.cumsum(trace.reward)
    steps = np.arange(CURVE_EVERY, job.n + 1, CURVE_EVERY) - 1
    return job, float(trace.reward.mean()), seconds, cum[steps]


def _shared(policy: str) -> dict:
    from .policies import hyperparameters

    hp = hyperparameters(policy)
    return {k: v for k, v in (("lam", LAM), ("sigma2", SIGMA2)) if k in hp}


# -- storage -----------------------------------------------------------------------------------
def results_dir(out: str | os.PathLike | None = None) -> Path:
    """``out``, else ``$ALLSEASON_RESULTS/paper``, else ``results/paper``."""
    if out is not None:
        return Path(out)
    return Path(os.environ.get("ALLSEASON_RESULTS", "results")) / "paper"


def load_runs(out=None) -> pd.DataFrame:
    """Every stored run (empty frame with the columns if none)."""
    path = results_dir(out) / "runs.csv"
    if not path.exists():
        return pd.DataFrame(columns=RUN_COLUMNS)
    return pd.read_csv(path, dtype={"params": str, "protocol": str})


def load_curves(out=None) -> pd.DataFrame:
    """Cumulative reward of the test runs: table, pattern, policy, seed, step, cum_reward."""
    path = results_dir(out) / "curves.csv"
    if not path.exists():
        return pd.DataFrame(columns=["table", "pattern", "policy", "seed", "step",
                                     "cum_reward", "protocol"])
    return pd.read_csv(path, dtype={"protocol": str})


class _Store:
    def __init__(self, folder: Path, protocol: Protocol):
        self.folder, self.protocol = folder, protocol
        folder.mkdir(parents=True, exist_ok=True)
        self.runs_path, self.curves_path = folder / "runs.csv", folder / "curves.csv"
        runs = load_runs(folder)
        runs = runs[runs.protocol == protocol.key()]
        self.done = {(r.phase, r.table, r.pattern, r.policy, r.params, int(r.seed), int(r.n))
                     for r in runs.itertuples()}

    @staticmethod
    def _append(path: Path, header: list[str], rows: list[list]) -> None:
        new = not path.exists() or path.stat().st_size == 0
        with open(path, "a", newline="") as f:
            w = csv.writer(f)
            if new:
                w.writerow(header)
            w.writerows(rows)

    def add(self, job: Job, mean: float, seconds: float, curve: np.ndarray) -> None:
        """Store one finished run: its curve first, then its row in runs.csv (the row marks
        it done, so a crash in between only repeats the run)."""
        key = self.protocol.key()
        if job.phase == "test":
            self._append(self.curves_path, ["table", "pattern", "policy", "seed", "step",
                                            "cum_reward", "protocol"],
                         [[job.table, job.pattern, job.policy, job.seed, (i + 1) * CURVE_EVERY,
                           f"{c:.1f}", key] for i, c in enumerate(curve)])
        self._append(self.runs_path, RUN_COLUMNS,
                     [[job.phase, job.table, job.pattern, job.policy, job.params, job.seed,
                       job.n, repr(mean), f"{seconds:.3f}", key]])
        self.done.add(job.key)


def _execute(jobs: list[Job], store: _Store, processes: int,
             progress: Callable[[str], None]) -> None:
    todo = [j for j in jobs if j.key not in store.done]
    if not todo:
        return
    # slow first, so the pool's tail is short
    todo.sort(key=lambda j: (j.policy not in ("denband", "bob", "allseason-disc"), j.key))
    t0 = time.perf_counter()
    if processes <= 1:
        results = map(run_job, todo)
        for i, res in enumerate(results, 1):
            store.add(*res)
            progress(f"{todo[0].phase} {todo[0].table}: {i}/{len(todo)} runs "
                     f"({time.perf_counter() - t0:.0f} s)")
        return
    with ProcessPoolExecutor(processes) as pool:
        futures = [pool.submit(run_job, j) for j in todo]
        try:
            for i, fut in enumerate(as_completed(futures), 1):
                store.add(*fut.result())
                if i % max(1, len(todo) // 20) == 0 or i == len(todo):
                    progress(f"{todo[0].phase} {todo[0].table}: {i}/{len(todo)} runs "
                             f"({time.perf_counter() - t0:.0f} s)")
        except BaseException:  # a failed job or Ctrl-C: stop now; finished runs are stored
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def reproduce(tables: Iterable[str], *, protocol: Protocol = Protocol(), out=None,
              processes: int = 1, progress: Callable[[str], None] = lambda s: None
              ) -> dict[str, pd.DataFrame]:
    """Grid search, test runs and comparison for each table; returns {table: frame} (see
    :func:`table_frame`) and writes ``<table>.csv``. Runs already stored are not redone."""
    tables = _check_tables(tables)
    folder = results_dir(out)
    store = _Store(folder, protocol)
    for table in tables:  # load (and cache) the data before forking
        dataset, experiment = TABLE_KEYS[table]
        paper_setup(dataset, experiment, "regular", protocol.n)
    frames = {}
    for table in tables:
        _execute(validation_jobs(table, protocol), store, processes, progress)
        chosen = choose(load_runs(folder), table, protocol)
        _execute(test_jobs(table, chosen, protocol), store, processes, progress)
        frames[table] = table_frame(table, load_runs(folder), protocol)
        frames[table].to_csv(folder / f"{table}.csv", index=False)
    return frames


def table_status(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> dict:
    """How far a table's reproduction is: {"validation": (done, total), "test": (done,
    total)}; the test total is known only once the validation is complete."""
    runs = runs[(runs.table == table) & (runs.protocol == protocol.key())]
    done = {(r.phase, r.table, r.pattern, r.policy, r.params, int(r.seed), int(r.n))
            for r in runs.itertuples()}
    val = validation_jobs(table, protocol)
    out = {"validation": (sum(j.key in done for j in val), len(val)), "test": (0, None)}
    try:
        tests = test_jobs(table, choose(runs, table, protocol), protocol)
    except ValueError:
        return out
    out["test"] = (sum(j.key in done for j in tests), len(tests))
    return out


def table_frame(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> pd.DataFrame:
    """Our test results beside the paper's, one row per cell (see
    :func:`allseason.paper_tables.compare`), plus the chosen ``params``, ``seeds`` run and
    mean ``seconds`` per run. Cells not measured yet (validation or test unfinished) are NaN."""
    t = runs[(runs.phase == "test") & (runs.table == table) & (runs.n == protocol.n)
             & (runs.protocol == protocol.key())]
    try:
        chosen = choose(runs, table, protocol) if len(t) else {}
    except ValueError:  # validation unfinished
        chosen = {}
    rows = []
    for (pattern, policy), params in chosen.items():
        sub = t[(t.pattern == pattern) & (t.policy == policy) & (t.params == params)]
        if not len(sub):
            continue
        vals = sub["mean_reward"].to_numpy(dtype=float)
        rows.append(dict(algorithm=policy, pattern=pattern, mean=vals.mean(),
                         std=vals.std(ddof=1) if len(vals) > 1 else 0.0, seeds=len(vals),
                         params=params, seconds=sub["seconds"].astype(float).mean()))
    measured = pd.DataFrame(rows, columns=["algorithm", "pattern", "mean", "std", "seeds",
                                           "params", "seconds"])
    cmp = paper_tables.compare(table, measured[["algorithm", "pattern", "mean", "std"]])
    return cmp.merge(measured[["algorithm", "pattern", "seeds", "params", "seconds"]],
                     on=["algorithm", "pattern"], how="left")


def oracle_frame(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> pd.DataFrame:
    """Diagnostic (``benchmarks/paper_grid_oracle.py`` stores its runs with phase "oracle"):
    per (pattern, policy), on the full test data and one seed, the score of the protocol's
    choice beside the best grid point in hindsight (so the cost is never negative). The
    oracle peeks at the test data: it says what the validation run's choice cost, never what
    the algorithm scores."""
    runs = runs[runs.protocol == protocol.key()]
    o = runs[(runs.phase == "oracle") & (runs.table == table)]
    cols = ["pattern", "algorithm", "protocol_mean", "oracle_mean", "cost", "chosen_params",
            "oracle_params"]
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
        rows.append(dict(pattern=pattern, algorithm=policy, protocol_mean=score,
                         chosen_params=chosen[pattern, policy],
                         oracle_mean=float(best.mean_reward), oracle_params=best.params,
                         cost=float(best.mean_reward) - score))
    out = pd.DataFrame(rows, columns=cols)
    order = {p: i for i, p in enumerate(paper_tables.PATTERNS)}
    return out.sort_values(["pattern", "algorithm"], key=lambda c: c.map(order)
                           if c.name == "pattern" else c).reset_index(drop=True)


def format_comparison(table: str, frame: pd.DataFrame) -> str:
    """The table as text: per pattern, ours ± std | paper | diff; '*' marks |diff| > 0.03."""
    head = f"{paper_tables.CAPTIONS[table]} ({table}): mean reward per step, ours vs paper"
    lines = [head, "=" * len(head)]
    cols = "".join(f"{p:^30}" for p in paper_tables.PATTERNS)
    lines.append(f"{'':18}{cols}")
    lines.append(f"{'':18}" + "".join(f"{'ours':>13}{'paper':>8}{'diff':>8} "
                                      for _ in paper_tables.PATTERNS))
    for alg in paper_tables.ALGORITHMS:
        cells = []
        for p in paper_tables.PATTERNS:
            r = frame[(frame.algorithm == alg) & (frame.pattern == p)].iloc[0]
            ours = "—" if pd.isna(r["mean"]) else f"{r['mean']:.3f}±{r['std']:.3f}"
            diff = "" if pd.isna(r["diff"]) else f"{r['diff']:+.3f}"
            mark = "*" if r["differs"] else " "
            cells.append(f"{ours:>13}{r['paper_mean']:>8.2f}{diff:>8}{mark}")
        lines.append(f"{paper_tables.LABELS[alg]:18}" + "".join(cells))
    n_diff = int(frame["differs"].sum())
    lines.append(f"* |ours - paper| > {paper_tables.DIFF_THRESHOLD}: {n_diff} of "
                 f"{len(frame)} cells")
    return "\n".join(lines)


# -- command line ------------------------------------------------------------------------------
def cli(argv: list[str]) -> int:
    """``python -m allseason paper --table T [--table T2 ...] | --all``: one line and exit 2
    on a user error (including missing data, with the command that installs it)."""
    import argparse
    import sys

    from .data import DataUnavailable

    class _Parser(argparse.ArgumentParser):
        def error(self, message):
            raise ValueError(message)

    p = _Parser(prog="python -m allseason paper",
                description="Reproduce the paper's section 6 tables: grid search on the first "
                            "10% of the data, then the seeds; print ours beside the paper's.")
    p.add_argument("--table", action="append", choices=list(TABLE_KEYS),
                   help="a table to reproduce (repeat for several)")
    p.add_argument("--all", action="store_true", help="all four tables")
    p.add_argument("--seeds", type=int, default=SEEDS, help=f"test seeds (default {SEEDS})")
    p.add_argument("--n", type=int, default=HORIZON,
                   help=f"observations (default {HORIZON:,}, the paper's; fewer for a quick look)")
    p.add_argument("--processes", type=int, default=min(os.cpu_count() or 1, 64),
                   help="worker processes (default: one per CPU)")
    p.add_argument("--out", default=None,
                   help="results folder (default $ALLSEASON_RESULTS/paper or results/paper)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    try:
        args = p.parse_args(argv)
        if bool(args.all) == bool(args.table):
            raise ValueError("give --table NAME (one or more) or --all")
        if not 1 <= args.seeds <= 100:
            raise ValueError(f"--seeds: must be in 1..100, got {args.seeds}")
        if not 500 <= args.n <= HORIZON:
            raise ValueError(f"--n: must be in 500..{HORIZON}, got {args.n}")
        if not 1 <= args.processes <= 64:
            raise ValueError(f"--processes: must be in 1..64, got {args.processes}")
        tables = list(TABLE_KEYS) if args.all else list(dict.fromkeys(args.table))
        protocol = Protocol(n=args.n, seeds=args.seeds)
        say = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr,
                                                                   flush=True))
        t0 = time.perf_counter()
        frames = reproduce(tables, protocol=protocol, out=args.out, processes=args.processes,
                           progress=say)
    except DataUnavailable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for table, frame in frames.items():
        print(format_comparison(table, frame))
        print()
    folder = results_dir(args.out)
    print(f"saved in {folder}/ ({', '.join(f'{t}.csv' for t in frames)}, runs.csv, curves.csv) "
          f"in {time.perf_counter() - t0:.0f} s")
    return 0


# -- for the app: stored results, and a small live race -----------------------------------------
LIVE_DEFAULTS: dict[str, dict] = {  # used where no grid search is stored for the table
    "allseason-sw": {"tau": 100, "n_max": 4}, "allseason-disc": {"gamma": 0.99, "n_max": 4},
    "sw-lints": {"tau": 500}, "d-lints": {"gamma": 0.999}, "denband": {"tau": 1000,
                                                                        "delta_l": 0.25},
    "bob": {"S": 1.0, "L": 1.0}, "lints": {}, "random": {}}


def change_points(n: int = HORIZON) -> dict[str, list[int]]:
    """{pattern: the steps where the state changes} of the paper's patterns at horizon n."""
    from .envs.patterns import preset
    from .envs.classification import N_STATES

    return {p: [int(c) for c in preset(p, n, N_STATES).change_points()]
            for p in paper_tables.PATTERNS}


def stored_choice(table: str, pattern: str, out=None,
                  protocol: Protocol = Protocol()) -> dict[str, dict]:
    """{policy: params} chosen by a complete stored grid search for (table, pattern), else
    the :data:`LIVE_DEFAULTS`."""
    try:
        chosen = choose(load_runs(out), table, protocol)
    except ValueError:  # no (complete) grid search stored
        return {k: dict(v) for k, v in LIVE_DEFAULTS.items()}
    return {pol: json.loads(chosen[pattern, pol]) for pol in POLICIES}


def live_jobs(table: str, pattern: str, policies: Iterable[str], n: int, seeds: int,
              params: dict[str, dict]) -> list[Job]:
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
            jobs.append(Job("live", table, pattern, pol, _params_json(params.get(pol, {})), k,
                            int(n)))
    return jobs


def curves_frame(results: Iterable[tuple[Job, float, float, np.ndarray]]) -> pd.DataFrame:
    """Results of :func:`run_job` as a curves table (pattern, policy, seed, step,
    cum_reward)."""
    rows = []
    for job, _mean, _sec, curve in results:
        steps = np.arange(1, len(curve) + 1) * CURVE_EVERY
        rows.append(pd.DataFrame({"pattern": job.pattern, "policy": job.policy,
                                  "seed": job.seed, "step": steps, "cum_reward": curve}))
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(
        columns=["pattern", "policy", "seed", "step", "cum_reward"])
