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
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..envs.classification import HORIZON, TABLE_KEYS, paper_setup
from ..policies import hyperparameters, policy_class
from ..sim.runner import play
from ..specs import PolicySpec
from ..sweeps.execute import audit
from ..sweeps.spec import _engine_version, canonical_json
from . import tables as paper_tables

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
        """The protocol in words, for tables and captions."""
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
        """The steps of the pattern (``pattern_n``, else ``n``)."""
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
    can be looked inside like a race (``allseason.analysis``, ``allseason.viz.weights``).

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
