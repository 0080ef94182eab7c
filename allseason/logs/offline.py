"""Your logged data, evaluated offline: replay, IPS and self-normalised IPS.

A **logged-bandit CSV** has one row per event (a user was shown one arm and gave a reward):

- ``timestamp``: when (a number: an event counter, or Unix seconds or milliseconds; or an
  ISO 8601 date-time such as ``2019-11-24 00:00:33.474+00:00``, converted to UTC); events
  are replayed in time order, and events at the same time keep their file order (a stable
  sort; they are counted and reported);
- ``arm``: the arm shown (any label, in natural order: ``item_2`` before ``item_10``; also
  read from ``item_id``, ``item``, ``action`` or ``action_id``);
- ``reward``: a number in [0, 1] (also ``click``, ``clicked``, ``conversion`` or ``label``);
  or any number with ``scale="max"`` (divided by the largest) or ``scale="minmax"``;
- ``propensity`` (optional; also ``propensity_score``, ``pscore`` or ``action_prob``): the
  probability, in [1e-9, 1], that the logging policy showed that arm;
- context (optional): the columns named ``x0``, ``x1``, ... (all of them, in number order),
  or the columns named in ``context=`` (a text column, such as a hashed user feature, is
  one-hot on its most frequent values). Any other column (e.g. ``position``, or pandas'
  unnamed index) is ignored, and :attr:`Log.ignored` lists it.

How a file is read (only the columns used, every problem reported at once, the limits):
:mod:`allseason.logs.logfile` and :mod:`allseason.logs.reader`.

**Arms as vectors.** Arm k at event t is ``e_k (x) [c_t, 1]``: each arm has its own weights
on the context and a constant (the *disjoint* linear model of Li et al. 2010). With no
context columns that is the one-hot ``e_k``, so d = K. The compiled kernels keep these
block-diagonal (:class:`~allseason.envs.arms.BlockArms`).

**Estimators** (one run of a policy over the log gives all three):

- **replay** (Li, Chu, Langford, Wang 2011, rejection): the policy chooses at every event;
  the event is *kept* when it chooses the logged arm, and only then does the policy see the
  reward and update (a batch of one). The estimate is the mean reward of the kept events.
  It is unbiased for the policy's online reward when the logging was uniform at random.
- **IPS** (with propensities): ``(1/n) sum_t w_t r_t`` with ``w_t = 1[A_t = a_t] /
  p_t``, where ``A_t`` is the arm the policy *drew* at event t (a Thompson draw: the
  policies are stochastic) and ``a_t``, ``p_t`` the logged arm and propensity. For a
  stochastic policy this is the standard estimator evaluated on its realised draw: its
  expectation over the draw is ``sum_a pi(a|x_t) r / p_t 1[a = a_t]``, the usual IPS
  term. The policy updates on the matched events, as in replay.
- **self-normalised IPS**: ``sum_t w_t r_t / sum_t w_t``; with uniform logging it equals
  replay. The **effective sample size** is ``(sum w)^2 / sum w^2``.

**Intervals.** Each policy is replayed over ``n_seeds`` seeds (its random draws; the log is
the same): ``ci_seeds`` is the half-width of the Student t interval of the mean over seeds
(:func:`allseason.stats.ci95_halfwidth`); it measures how much the result depends on the
policy's luck on *this* log. ``ci_data`` is the half-width of the interval that also counts
the log's own noise: Student's t times the per-event standard error (kept rewards for
replay; the terms ``w_t r_t`` for IPS; the delta method for self-normalised IPS), pooled over
seeds as ``sqrt(mean(se^2))``. The reported interval is ``estimate +- ci_data``.

**Too sparse** (:data:`MIN_EVENTS`): the warning fires when a policy kept fewer than 500
events (for IPS: an effective sample size below 500), or when every policy's 95% interval
shares a point with every other's (the largest lower end is below the smallest upper end),
so the log cannot tell any policy from any other.

The oracles cannot run here: they are told the true seasons, and a log has none.

    >>> log = parse_log(b"timestamp,arm,reward\\n1,0,1\\n2,1,0\\n3,1,1\\n")
    >>> log.n_events, log.arm_names, log.d
    (3, ('0', '1'), 2)
"""

from __future__ import annotations

import copy
import math
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ..defaults import default_params
from ..envs.arms import BlockArms
from ..errors import SpecError
from ..specs import LIMITS, PolicySpec, policy_specs
from ..stats import ci95_halfwidth, t_quantile
from . import logfile

#: what one log may hold (the command line; the app uses :data:`APP_LIMITS`); no limit on
#: the number of columns: only the columns used are read
LOG_LIMITS = dict(rows=1_000_000, bytes=200_000_000, context=16)
#: the app's tighter limits (an upload)
APP_LIMITS = dict(rows=200_000, bytes=20_000_000, context=16)
MIN_EVENTS = 500  # fewer kept events (or a smaller ESS) than this: "too sparse"
SIGMA2 = 0.25  # the noise variance the policies assume: the largest a reward in [0, 1] has
#: the contestants by default: the default race without the oracles (no true seasons in a
#: log) and without the printed rule (at a batch of one it spawns a bandit on most kept
#: events: slow, and the default race already shows how it fares)
OFFLINE_POLICIES = ("allseason-sw", "allseason-disc", "lints", "sw-lints", "d-lints", "random")
ALIASES = logfile.ALIASES  # the names each column is read from
METHODS = ("replay", "ips", "snips")
METHOD_TITLES = {"replay": "replay", "ips": "IPS", "snips": "self-normalised IPS"}


@dataclass(frozen=True, eq=False)
class Log:
    """A parsed, checked log, sorted by time. Arrays of shape (n,): ``timestamp``,
    ``arm`` (codes 0..K-1 into ``arm_names``), ``reward`` (in [0, 1]), ``propensity`` (or
    None), ``row`` (the event's row in the file, header = 1); ``contexts`` (n, p): the
    context and a constant 1 (p = 1: none). ``ignored``: columns not used; ``notes``: what
    was done to the data (scaling, sorting, ties, time zones). ``time_kind``: "number" or
    "date" (datetime64[us], UTC); ``ties``: events at the same time as the one before
    them (kept in file order); ``out_of_order``: events the sort by time moved."""

    timestamp: np.ndarray
    arm: np.ndarray
    reward: np.ndarray
    contexts: np.ndarray
    propensity: np.ndarray | None
    row: np.ndarray
    arm_names: tuple[str, ...]
    context_names: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    time_kind: str = "number"
    ties: int = 0
    out_of_order: int = 0

    @property
    def n_events(self) -> int:
        return len(self.arm)

    @property
    def n_arms(self) -> int:
        return len(self.arm_names)

    @property
    def d(self) -> int:
        return self.n_arms * self.contexts.shape[1]

    def arms(self) -> BlockArms:
        """The arms of every event, (n, K, d): ``e_k (x) [c_t, 1]``."""
        return BlockArms(self.contexts, self.n_arms)

    @property
    def uniform(self) -> bool:
        """True when the logging is taken as uniform: no propensities, or all equal."""
        p = self.propensity
        return p is None or bool(np.all(p == p[0]))


def detect_kind(header: Sequence[str]) -> str:
    """'log' (a ``timestamp`` column) or 'table' (a ``time`` column); SpecError if neither."""
    cols = [c.strip().lower() for c in header]
    if "timestamp" in cols:
        return "log"
    if "time" in cols:
        return "table"
    raise SpecError(
        "columns",
        "missing column 'timestamp' (a logged-bandit CSV: timestamp, "
        "arm, reward) or 'time' (a per-arm reward table: time, arm, "
        f"reward); the header has {', '.join(cols[:12])}",
    )


def parse_log(
    source: bytes | str,
    *,
    context=None,
    arms=None,
    scale: str | None = None,
    limits: dict | None = None,
) -> Log:
    """Read and check a logged-bandit CSV as it comes (see the module docstring and
    :mod:`allseason.logs.logfile`). ``context``: None (the ``x0``, ``x1``, ... columns) or
    column names (a list or comma-separated text); ``arms``: None, a number N (arms 0..N-1)
    or the list of arm labels (any other label is an unknown arm); ``scale``: None, "max" or
    "minmax" for the reward. ``limits``: rows, bytes, context (default
    :data:`LOG_LIMITS`). Every problem of the file in ONE SpecError, a line per problem
    naming its row and column (the first 20, then a count)."""
    lim = {**LOG_LIMITS, **(limits or {})}
    return Log(**logfile.read_log(source, context=context, arms=arms, scale=scale, limits=lim))


# --- replay -----------------------------------------------------------------------------------
def _check_policy(spec: PolicySpec) -> None:
    from ..policies import policy_class

    if getattr(policy_class(spec.name), "needs_state", False):
        raise SpecError(
            "policies",
            f"{spec.name} is an oracle: it is told the true seasons, "
            f"and a log has none, so it cannot be evaluated offline",
        )


def build_policy(spec: PolicySpec, log: Log, seed: int, seed_index: int):
    """The policy of (spec, seed_index): its stream is child ``seed_index`` of
    ``SeedSequence(seed).spawn(n)``, extended by the label's crc32 (so adding a contestant
    changes nobody else's draws)."""
    _check_policy(spec)
    child = np.random.SeedSequence(seed).spawn(seed_index + 1)[seed_index]
    ss = np.random.SeedSequence(
        child.entropy, spawn_key=child.spawn_key + (zlib.crc32(spec.label.encode()),)
    )
    return spec.build(log.d, sigma2=SIGMA2, horizon=log.n_events, rng=np.random.default_rng(ss))


def replay_reference(policy, log: Log) -> np.ndarray:
    """Rejection replay, step by step (the definition): at every event a copy of the policy
    ``select``s; when it picks the logged arm the event is kept, the copy becomes the
    policy and ``update``s on it (a batch of one); otherwise the copy is dropped and the
    policy keeps only its spent random draws (a rejected event leaves no other trace: e.g.
    All-Season's plain path notes the bandit that played at ``select``). Returns the kept
    mask, shape (n,). Slow (plain Python and a copy per event): the reference that
    :func:`replay_fast` is checked against."""
    arms = log.arms()
    keep = np.zeros(log.n_events, dtype=bool)
    for t in range(log.n_events):
        trial = copy.deepcopy(policy)
        a = trial.select(arms[t])
        if a == log.arm[t]:
            policy = trial
            policy.update(arms[[t], [a]], log.reward[t : t + 1])
            keep[t] = True
        else:
            policy.restore_streams(trial.streams_state())
    return keep


def replay_fast(policy, log: Log, lookahead: int | None = None) -> np.ndarray:
    """Rejection replay on the policies' compiled ``run_chunk``, decision for decision the
    same as :func:`replay_reference` (tests/test_offline.py checks it).

    Why it is exact: within a batch a policy decides every step with the posterior it had at
    the batch's start, and between two kept events the policy does not change. So from
    event ``pos`` a *copy* of the policy plays the next ``m`` events as one batch; the first
    event where it chose the logged arm, ``pos + j``, is the next kept one (the copy, which
    then learnt all ``m`` steps, is thrown away). The policy itself skips the random draws of
    the ``j`` rejected events (``policy.draw(j)``: the streams give the same numbers drawn one
    at a time or by the chunk) and plays event ``pos + j`` alone, paid the logged reward; a
    different choice there raises RuntimeError (it cannot happen unless a policy breaks the
    batch rule)."""
    n, K = log.n_events, log.n_arms
    arms = log.arms()
    m0 = lookahead or max(16, 3 * K)
    keep = np.zeros(n, dtype=bool)
    zeros = np.zeros(max(m0, 1))
    pos, m = 0, m0
    while pos < n:
        m_now = min(m, n - pos)
        states = policy.streams_state()  # a fork may share the streams: rewound below
        trial = policy.fork()
        out = trial.run_chunk(
            arms[pos : pos + m_now],
            np.zeros((m_now, K)),
            zeros[:m_now] if m_now <= len(zeros) else np.zeros(m_now),
            np.array([m_now - 1]),
        )
        policy.restore_streams(states)
        hit = np.flatnonzero(out.arm == log.arm[pos : pos + m_now])
        if not hit.size:
            policy.draw(m_now)
            pos += m_now
            m = min(2 * m, 4096)  # a policy that rarely agrees with the log: look further
            continue
        j = int(hit[0])
        if j:
            policy.draw(j)
        t = pos + j
        a = int(log.arm[t])
        paid = np.zeros((1, K))
        paid[0, a] = log.reward[t]
        one = policy.run_chunk(arms[t : t + 1], paid, np.zeros(1), np.array([0]))
        if int(one.arm[0]) != a:
            raise RuntimeError(
                f"fast replay diverged from the step-by-step replay at event "
                f"{t} ({type(policy).__name__})"
            )
        keep[t] = True
        pos, m = t + 1, m0
    return keep


def estimates(keep: np.ndarray, log: Log) -> dict:
    """Replay, IPS and self-normalised IPS of one run (the kept mask of one seed), with
    their per-event standard errors, the kept count and the effective sample size."""
    r = log.reward
    kept = int(keep.sum())
    out = {"kept": kept}
    if kept:
        rk = r[keep]
        out["replay"] = float(rk.mean())
        out["replay_se"] = float(rk.std(ddof=1) / math.sqrt(kept)) if kept > 1 else math.inf
    else:
        out["replay"], out["replay_se"] = math.nan, math.inf
    out["replay_n"] = float(kept)
    if log.propensity is not None:
        n = log.n_events
        w = keep / log.propensity
        terms = w * r
        out["ips"] = float(terms.mean())
        out["ips_se"] = float(terms.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
        sw, sw2 = float(w.sum()), float((w * w).sum())
        ess = sw * sw / sw2 if sw2 > 0 else 0.0
        out["ips_n"] = out["snips_n"] = ess
        if sw > 0:
            v = float(terms.sum() / sw)
            out["snips"] = v
            out["snips_se"] = float(math.sqrt(float((w * w * (r - v) ** 2).sum())) / sw)
        else:
            out["snips"], out["snips_se"] = math.nan, math.inf
    return out


@dataclass
class OfflineResult:
    """Per (policy label, seed) the estimates of :func:`estimates`; :meth:`summary` makes the
    table (one row per policy and estimator), :meth:`sparsity` the warning."""

    log: Log
    specs: tuple[PolicySpec, ...]
    n_seeds: int
    seed: int
    runs: dict = field(default_factory=dict)  # (label, seed index) -> estimates
    seconds: float = 0.0

    @property
    def methods(self) -> tuple[str, ...]:
        return METHODS if self.log.propensity is not None else ("replay",)

    def summary(self) -> list[dict]:
        """One dict per (method, policy), best estimate first within a method: policy,
        method, events (mean kept events for replay; effective sample size for IPS),
        estimate (mean over seeds), ci_data, low, high, ci_seeds, n_seeds."""
        rows = []
        for method in self.methods:
            block = []
            for spec in self.specs:
                runs = [
                    self.runs[spec.label, k]
                    for k in range(self.n_seeds)
                    if (spec.label, k) in self.runs
                ]
                if not runs:
                    continue
                vals = np.array([r[method] for r in runs])
                ses = np.array([r[f"{method}_se"] for r in runs])
                events = float(np.mean([r[f"{method}_n"] for r in runs]))
                est = float(np.mean(vals)) if np.all(np.isfinite(vals)) else math.nan
                n_t = max(int(events), 2)
                ci_data = float(t_quantile(n_t) * math.sqrt(float(np.mean(ses**2))))
                ci_seeds = (
                    float(ci95_halfwidth(np.std(vals, ddof=1), len(vals)))
                    if len(vals) > 1 and np.all(np.isfinite(vals))
                    else 0.0
                )
                block.append(
                    dict(
                        policy=spec.label,
                        method=method,
                        events=events,
                        estimate=est,
                        ci_data=ci_data,
                        low=est - ci_data,
                        high=est + ci_data,
                        ci_seeds=ci_seeds,
                        n_seeds=len(vals),
                    )
                )
            block.sort(key=lambda r: -r["estimate"] if math.isfinite(r["estimate"]) else 1)
            rows.extend(block)
        return rows

    def frame(self):
        """:meth:`summary` as a pandas DataFrame (the CSV the app and the CLI give)."""
        import pandas as pd

        return pd.DataFrame(
            self.summary(),
            columns=[
                "policy",
                "method",
                "events",
                "estimate",
                "ci_data",
                "low",
                "high",
                "ci_seeds",
                "n_seeds",
            ],
        )

    def sparsity(self, methods=None) -> list[str]:
        """Why the log is too sparse to decide anything (empty: it is not), one sentence per
        reason, for each of ``methods`` (default: all); the rule is in the module docstring
        (:data:`MIN_EVENTS`)."""
        reasons = []
        rows = self.summary()
        for method in self.methods if methods is None else methods:
            block = [r for r in rows if r["method"] == method]
            if not block:
                continue
            what = "kept events" if method == "replay" else "effective sample size"
            few = [r for r in block if not r["events"] >= MIN_EVENTS]
            if few:
                worst = min(few, key=lambda r: r["events"])
                reasons.append(
                    f"{METHOD_TITLES[method]}: {len(few)} of {len(block)} "
                    f"policies have fewer than {MIN_EVENTS} {what} (fewest: "
                    f"{worst['policy']}, {worst['events']:,.0f})"
                )
            if len(block) > 1:
                lo = max(r["low"] for r in block)
                hi = min(r["high"] for r in block)
                if not lo < hi:
                    continue
                reasons.append(
                    f"{METHOD_TITLES[method]}: every policy's 95% interval "
                    f"overlaps every other's (a mean reward of "
                    f"{0.5 * (lo + hi):.4g} lies inside all of them), so no policy "
                    f"can be told from another"
                )
        return reasons


def offline_specs(names=None) -> tuple[PolicySpec, ...]:
    """The contestants: :data:`OFFLINE_POLICIES` (or the names given) with the default
    race's hyperparameters; an oracle is refused (SpecError naming it)."""
    names = OFFLINE_POLICIES if names is None else names
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",") if n.strip()]
    from ..policies import REGISTRY

    items = []
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


_LOG: Log | None = None  # the log of a worker process (set by its initializer)


def _set_log(log: Log) -> None:
    global _LOG
    _LOG = log


def _job(spec: PolicySpec, k: int, seed: int, fast: bool) -> dict:
    """One (policy, seed) replay in a worker process, on its :data:`_LOG`."""
    replay = replay_fast if fast else replay_reference
    return estimates(replay(build_policy(spec, _LOG, seed, k), _LOG), _LOG)


def evaluate(
    log: Log,
    specs=None,
    n_seeds: int = 5,
    seed: int = 0,
    *,
    workers: int | None = None,
    fast: bool = True,
    processes: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> OfflineResult:
    """Replay every policy of ``specs`` (default :func:`offline_specs`) over ``n_seeds``
    seeds on the log; (policy, seed) runs go to ``workers`` threads (default: one per core;
    the compiled kernels release the GIL, but much of a replay is Python between kernel
    calls), or with ``processes=True`` to worker processes (about twice as fast on 2 cores;
    the command line's choice). ``progress(done, total)`` after each run. ``fast=False``
    uses the step-by-step :func:`replay_reference`. Results do not depend on ``workers``
    nor ``processes``."""
    specs = offline_specs() if specs is None else offline_specs(specs)
    if not 1 <= int(n_seeds) <= LIMITS["n_seeds"]:
        raise SpecError("seeds", f"must be between 1 and {LIMITS['n_seeds']}, got {n_seeds}")
    n_seeds = int(n_seeds)
    result = OfflineResult(log, specs, n_seeds, int(seed))
    jobs = [(spec, k) for k in range(n_seeds) for spec in specs]
    replay = replay_fast if fast else replay_reference

    def one(job):
        spec, k = job
        policy = build_policy(spec, log, seed, k)
        return job, estimates(replay(policy, log), log)

    from ..sim.runner import default_workers

    n_workers = default_workers(len(jobs)) if workers is None else max(1, int(workers))
    t0 = time.perf_counter()
    done = 0
    if n_workers == 1:
        outs = map(one, jobs)
        for (spec, k), est in outs:
            result.runs[spec.label, k] = est
            done += 1
            if progress:
                progress(done, len(jobs))
    elif processes:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, as_completed

        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(
            n_workers, mp_context=ctx, initializer=_set_log, initargs=(log,)
        ) as pool:
            futures = {pool.submit(_job, spec, k, int(seed), fast): (spec, k) for spec, k in jobs}
            for fut in as_completed(futures):
                spec, k = futures[fut]
                result.runs[spec.label, k] = fut.result()
                done += 1
                if progress:
                    progress(done, len(jobs))
    else:
        with ThreadPoolExecutor(n_workers, thread_name_prefix="replay") as pool:
            for (spec, k), est in pool.map(one, jobs):
                result.runs[spec.label, k] = est
                done += 1
                if progress:
                    progress(done, len(jobs))
    result.seconds = time.perf_counter() - t0
    return result


__all__ = [
    "Log",
    "parse_log",
    "detect_kind",
    "replay_reference",
    "replay_fast",
    "estimates",
    "evaluate",
    "OfflineResult",
    "offline_specs",
    "build_policy",
    "MIN_EVENTS",
    "LOG_LIMITS",
    "APP_LIMITS",
    "OFFLINE_POLICIES",
    "SIGMA2",
    "METHODS",
    "METHOD_TITLES",
]
