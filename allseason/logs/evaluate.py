"""Every contestant over every seed on a log: the runs (threads in the app; the sweep engine's
executors on the command line: local processes or Dask), and the table: the logger's own
value first, each estimator with its ESS and its interval, and the "too sparse" rule.

**Too sparse** (:data:`MIN_EVENTS`): a policy kept fewer than 500 events (IPS, SNIPS, DR: an
ESS below 500), or every policy's interval shares a point with every other's. Under it,
:meth:`OfflineResult.decision` says how many events would tell from the logger a policy 20%
better (:func:`~allseason.logs.intervals.events_needed`).
"""

from __future__ import annotations

import functools
import math
import time
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ..defaults import default_params
from ..errors import SpecError
from ..specs import LIMITS, PolicySpec, policy_specs
from ..stats import ci95_halfwidth
from .estimators import (
    RATIOS,
    event_terms,
    fit_reward_model,
    model_at,
)
from .intervals import block_bootstrap, events_needed, reported_interval, wilson
from .policy_probs import ProbRecorder
from .replay import _check_policy, build_policy, replay_fast, replay_reference

MIN_EVENTS = 500  # fewer kept events (or a smaller ESS) than this: "too sparse"
OFFLINE_POLICIES = ("allseason-sw", "allseason-disc", "lints", "sw-lints", "d-lints", "random")
METHODS = ("replay", "ips", "snips", "dr", "dm")
METHOD_TITLES = {
    "logged": "the log itself",
    "replay": "replay",
    "ips": "IPS",
    "snips": "self-normalised IPS",
    "dr": "doubly robust",
    "dm": "direct method",
}
INTERVALS = {
    "logged": "Wilson",
    "replay": "Wilson (kept events)",
    "ips": "block bootstrap + Wilson at the ESS",
    "snips": "block bootstrap + Wilson at the ESS",
    "dr": "block bootstrap + Wilson at the ESS",
    "dm": "block bootstrap + Wilson at the ESS",
}
LOGGER = "logger"  # the first row's policy: what the log itself measured
LIFT = 0.2  # "a policy 20% better than the logger"
COLUMNS = (
    "policy",
    "method",
    "events",
    "ess_draw",
    "estimate",
    "low",
    "high",
    "interval",
    "ci_seeds",
    "n_seeds",
    "biased",
)


def offline_specs(names=None) -> tuple[PolicySpec, ...]:
    """The contestants: :data:`OFFLINE_POLICIES` (or the names given) with the default
    race's hyperparameters; an oracle is refused (SpecError naming it)."""
    names = OFFLINE_POLICIES if names is None else names
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    from ..policies import REGISTRY

    items: list[PolicySpec | str] = []
    for n in names:
        if isinstance(n, PolicySpec):
            items.append(n)
            continue
        n = str(n).strip()
        items.append(PolicySpec(n, default_params(n)) if n in REGISTRY else n)
    specs = policy_specs(items)
    for s in specs:
        _check_policy(s)
    return specs


@functools.lru_cache(maxsize=2)
def _model(log):
    return fit_reward_model(log)


def run_one(log, spec: PolicySpec, seed: int, k: int, fast: bool = True) -> dict:
    """One (policy, seed) run: the replay (the policy learns on its kept events), pi_t at
    every event, and :func:`~allseason.logs.estimators.run_terms`."""
    policy = build_policy(spec, log, seed, k)
    model = _model(log)
    rec = ProbRecorder(log, model)
    drawn = np.zeros(log.n_events, dtype=np.int64)
    replay = replay_fast if fast else replay_reference
    keep = replay(policy, log, on_state=rec.segment, drawn=drawn)
    if rec.known:
        pi_a, dm = rec.pi_a, rec.dm
    else:  # pi unknown: the realised draw's indicator
        pi_a, dm = (drawn == log.arm).astype(float), model_at(model, log, drawn)
    return event_terms(log, keep, pi_a, dm, model_at(model, log, log.arm), rec.known)


def replay_job(job) -> dict:
    """The sweep engine's task (module level, sent to workers): job = (log, spec, k, seed,
    fast)."""
    log, spec, k, seed, fast = job
    return run_one(log, spec, seed, k, fast)


def method_interval(
    method: str, runs: list[dict], estimate: float, events: float, rng: np.random.Generator
) -> tuple[float, float]:
    """The 95% interval shown for one (policy, method) over its seeds' runs: Wilson on the
    kept events for replay; for IPS, SNIPS, DM and DR the block bootstrap over time of the
    mean over seeds, widened to at least the Wilson interval at the ESS.

    Parameters
    ----------
    method : str
        One of :data:`METHODS`.
    runs : list of dict
        :func:`~allseason.logs.estimators.run_terms` of each seed.
    estimate, events : float
        The mean estimate over seeds (NaN: none) and the mean kept events or ESS.
    rng : numpy.random.Generator
        The bootstrap's stream.
    """
    if not math.isfinite(estimate):
        return 0.0, 1.0
    if method == "replay":
        return wilson(estimate, events)
    top, bottom = RATIOS[method]
    boot = block_bootstrap(
        np.stack([r["sums"][top] for r in runs]), np.stack([r["sums"][bottom] for r in runs]), rng
    )
    return reported_interval(estimate, boot, events)


class LogRead(Protocol):
    """What a result reads of its log (a :class:`allseason.logs.offline.Log`; that module
    imports this one, so the type is named by what it offers)."""

    @property
    def reward(self) -> np.ndarray: ...

    @property
    def n_events(self) -> int: ...

    @property
    def uniform(self) -> bool: ...


@dataclass
class OfflineResult:
    """Per (policy label, seed) the runs of :func:`run_one`; :meth:`summary` makes the table,
    :meth:`sparsity` the warning, :meth:`decision` what would decide."""

    log: LogRead
    specs: tuple[PolicySpec, ...]
    n_seeds: int
    seed: int
    runs: dict = field(default_factory=dict)  # (label, seed index) -> run_terms
    seconds: float = 0.0
    _rows: list | None = field(default=None, repr=False)

    @property
    def methods(self) -> tuple[str, ...]:
        """The estimators, in the order shown: on a non-uniform log IPS first and replay,
        biased there, last."""
        if self.log.uniform:
            return METHODS
        return ("ips", "snips", "dr", "dm", "replay")

    def logger_row(self) -> dict:
        """The logging policy's own row of the table (its mean reward, interval)."""
        r = self.log.reward
        n = len(r)
        est = float(r.mean())
        lo, hi = wilson(est, n)
        return dict(
            policy=LOGGER,
            method="logged",
            events=float(n),
            ess_draw=None,
            estimate=est,
            low=lo,
            high=hi,
            interval=INTERVALS["logged"],
            ci_seeds=0.0,
            n_seeds=1,
            biased=False,
        )

    def _row(self, spec: PolicySpec, method: str) -> dict | None:
        runs = [
            self.runs[spec.label, k] for k in range(self.n_seeds) if (spec.label, k) in self.runs
        ]
        if not runs:
            return None
        vals = np.array([r[method] for r in runs])
        events = float(np.mean([r[f"{method}_n"] for r in runs]))
        ok = np.isfinite(vals)
        est = float(vals[ok].mean()) if ok.any() else math.nan
        lo, hi = method_interval(method, runs, est, events, self._stream(spec, method))
        ci_seeds = (
            float(ci95_halfwidth(np.std(vals, ddof=1), len(vals)))
            if len(vals) > 1 and ok.all()
            else 0.0
        )
        return dict(
            policy=spec.label,
            method=method,
            events=events,
            ess_draw=float(np.mean([r["ess_draw"] for r in runs]))
            if method in ("ips", "snips", "dr")
            else None,
            estimate=est if ok.any() else None,
            low=lo,
            high=hi,
            interval=INTERVALS[method],
            ci_seeds=ci_seeds,
            n_seeds=len(vals),
            biased=method == "replay" and not self.log.uniform,
        )

    def _stream(self, spec: PolicySpec, method: str) -> np.random.Generator:
        """The bootstrap's stream of (policy, method): ``SeedSequence(seed)`` with the
        label's crc32 and the method's index as its spawn key."""
        key = (zlib.crc32(spec.label.encode()), METHODS.index(method))
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))

    def summary(self) -> list[dict]:
        """The logger's row first (what the log measured), then one dict per (method,
        policy) in :attr:`methods` order, best estimate first within a method; keys
        :data:`COLUMNS` (``events``: kept events for replay, the ESS for IPS, SNIPS and DR,
        and DM; ``ess_draw``: the ESS with the realised draw in place of pi)."""
        if self._rows is not None:
            return self._rows
        rows = [self.logger_row()]
        for method in self.methods:
            block = [r for r in (self._row(s, method) for s in self.specs) if r is not None]
            block.sort(key=lambda r: -r["estimate"] if r["estimate"] is not None else 1)
            rows.extend(block)
        self._rows = rows
        return rows

    def frame(self):
        """:meth:`summary` as a pandas DataFrame (the CSV the app and the CLI give)."""
        import pandas as pd

        return pd.DataFrame(self.summary(), columns=list(COLUMNS))

    def decision(self, method: str) -> dict:
        """What would decide, for ``method``: ``p0`` (the logger's mean reward),
        ``ess_share`` (the median over policies of ESS / n), ``needed`` (events to tell
        from the logger a policy 20% better, 95% confidence, 80% power) and ``n_events``."""
        n = self.log.n_events
        block = [r for r in self.summary() if r["method"] == method]
        share = float(np.median([r["events"] for r in block])) / n if block else 0.0
        p0 = float(self.log.reward.mean())
        return dict(p0=p0, ess_share=share, needed=events_needed(p0, share, LIFT), n_events=n)

    def sparsity(self, methods=None) -> list[str]:
        """Why the log is too sparse to decide anything (empty: it is not), one sentence per
        reason, for each of ``methods`` (default: all)."""
        reasons = []
        rows = self.summary()
        for method in self.methods if methods is None else methods:
            block = [r for r in rows if r["method"] == method]
            if not block:
                continue
            title = METHOD_TITLES[method]
            what = (
                f"fewer than {MIN_EVENTS} kept events"
                if method == "replay"
                else f"an effective sample size below {MIN_EVENTS}"
            )
            few = [r for r in block if not r["events"] >= MIN_EVENTS]
            if few:
                worst = min(few, key=lambda r: r["events"])
                reasons.append(
                    f"{title}: {len(few)} of {len(block)} policies have {what} (fewest: "
                    f"{worst['policy']}, {worst['events']:,.0f})"
                )
            lo = max(r["low"] for r in block)
            hi = min(r["high"] for r in block)
            if len(block) > 1 and lo < hi:
                reasons.append(
                    f"{title}: every policy's 95% interval overlaps every other's (a mean "
                    f"reward of {0.5 * (lo + hi):.4g} lies inside all of them), so no policy "
                    f"can be told from another"
                )
        return reasons

    def best_method(self) -> str:
        """The estimator that would decide soonest (fewest events needed), replay excluded
        when it is biased (a non-uniform log)."""
        usable = [m for m in self.methods if self.log.uniform or m != "replay"]
        return min(usable, key=lambda m: self.decision(m)["needed"])

    def decision_text(self, method: str) -> str:
        """One sentence: what the events that would decide ``method``'s verdict are."""
        d = self.decision(method)
        if not math.isfinite(d["needed"]):
            return "no number of events would decide at this reward rate (none, or all, rewarded)"
        return (
            f"to tell from the logger a policy {LIFT:.0%} better (95% confidence, 80% power) "
            f"at this reward rate ({d['p0']:.4g}) and this ESS share ({d['ess_share']:.3g} of "
            f"the events, the median policy's, {METHOD_TITLES[method]}) would take about "
            f"{d['needed']:,.0f} events; the log has {d['n_events']:,}"
        )


def evaluate(
    log,
    specs=None,
    n_seeds: int = 5,
    seed: int = 0,
    *,
    workers: int | None = None,
    fast: bool = True,
    processes: bool | int = False,
    dask_workers: int | None = None,
    scheduler: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    done_runs: dict | None = None,
) -> OfflineResult:
    """Replay every policy of ``specs`` (default :func:`offline_specs`) over ``n_seeds``
    seeds on the log and estimate each with pi.

    Parameters
    ----------
    log : Log
        The parsed log.
    specs : sequence or None
        Policy names or specs.
    n_seeds, seed : int
        Replay seeds, and the root seed.
    workers : int or None
        Threads in this process (the app; default one per core).
    fast : bool
        The fast replay (False: the step-by-step reference).
    processes, dask_workers, scheduler
        Run the (policy, seed) tasks on the sweep engine's executors instead
        (:func:`allseason.sweeps.execute.run_jobs`): ``processes`` local processes (True:
        every usable core), ``dask_workers`` a Dask LocalCluster, ``scheduler`` a running
        Dask scheduler. Results do not depend on the executor.
    progress : callable or None
        ``progress(done, total)`` after each run.
    done_runs : dict or None
        Runs already made, ``{(label, seed index): run}``, kept across calls: the runs found
        there are not made again, and each run made is added as soon as it ends. An
        evaluation that is interrupted (an exception from ``progress``: the app's rerun, a
        cancel) and then called again with the same dict resumes where it stopped, with the
        same result (each run depends only on its policy, its seed index and ``seed``). The
        caller keys the dict by the log, ``seed`` and the policies.
    """
    specs = offline_specs() if specs is None else offline_specs(specs)
    if not 1 <= int(n_seeds) <= LIMITS["n_seeds"]:
        raise SpecError("seeds", f"must be between 1 and {LIMITS['n_seeds']}, got {n_seeds}")
    if not 0 <= int(seed) < 2**63:
        raise SpecError("seed", f"must be a non-negative integer, got {seed}")
    n_seeds, seed = int(n_seeds), int(seed)
    result = OfflineResult(log, specs, n_seeds, seed)
    every = jobs = [(spec, k) for k in range(n_seeds) for spec in specs]
    kept = {} if done_runs is None else done_runs
    for spec, k in jobs:
        if (spec.label, k) in kept:
            result.runs[spec.label, k] = kept[spec.label, k]
    total, done = len(jobs), [len(result.runs)]
    jobs = [(spec, k) for spec, k in jobs if (spec.label, k) not in kept]

    def store(job, est):
        result.runs[job[0].label, job[1]] = kept[job[0].label, job[1]] = est
        done[0] += 1
        if progress:
            progress(done[0], total)

    t0 = time.perf_counter()
    # the log was checked while it was read (allseason.logs.logfile): every propensity is
    # in [MIN_PROPENSITY, 1], so 1 / propensity is finite, and every reward is in [0, 1]
    if jobs and (processes or dask_workers is not None or scheduler is not None):
        _on_executor(log, jobs, seed, fast, store, processes, dask_workers, scheduler)
    elif jobs:
        _in_threads(log, jobs, seed, fast, store, kept, workers)
    result.seconds = time.perf_counter() - t0
    result.runs = {(spec.label, k): result.runs[spec.label, k] for spec, k in every}
    result.summary()
    return result


def _in_threads(log, jobs, seed, fast, store, kept, workers) -> None:
    """The (policy, seed) runs of ``jobs`` on ``workers`` threads of this process, each kept
    in ``kept`` as soon as it ends (also while an interrupted call winds down: the runs in
    flight end, those not begun are dropped), then ``store``d in order."""
    from ..sim.runner import default_workers

    n_workers = default_workers(len(jobs)) if workers is None else max(1, int(workers))

    def one(job):
        est = kept[job[0].label, job[1]] = run_one(log, job[0], seed, job[1], fast)
        return job, est

    if n_workers == 1:
        for job, est in map(one, jobs):
            store(job, est)
        return
    pool = ThreadPoolExecutor(n_workers, thread_name_prefix="replay")
    try:
        for job, est in pool.map(one, jobs):
            store(job, est)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _on_executor(log, jobs, seed, fast, store, processes, dask_workers, scheduler) -> None:
    from ..sweeps.execute import run_jobs

    procs = None if processes is True or not processes else int(processes)
    tasks = [(log, spec, k, seed, fast) for spec, k in jobs]
    outcome = run_jobs(
        tasks,
        replay_job,
        lambda task, est: store((task[1], task[2]), est),
        processes=procs if not (dask_workers or scheduler) else None,
        workers=dask_workers,
        scheduler=scheduler,
        describe=lambda task: f"{task[1].label}, seed {task[2]}",
    )
    if outcome.n_failed or outcome.interrupted:
        first = outcome.errors[0] if outcome.errors else "interrupted"
        if first.split(": ", 2)[1:2] == ["SpecError"]:
            raise SpecError("log", first.split(": ", 2)[2])
        raise RuntimeError(f"{outcome.n_failed} replay(s) failed; the first: {first}")


__all__ = [
    "OfflineResult",
    "evaluate",
    "offline_specs",
    "run_one",
    "replay_job",
    "method_interval",
    "MIN_EVENTS",
    "OFFLINE_POLICIES",
    "METHODS",
    "METHOD_TITLES",
    "INTERVALS",
    "LOGGER",
    "COLUMNS",
]
