"""Run policies on a scenario: one policy or a race of several over several seeds.

Random streams: the race's root ``SeedSequence(scenario.seed)``; seed k's environment uses
spawn key (k, 0) and policy ``label`` uses (k, 1, crc32(label)). So every policy in a race
sees the same arms and noise (common random numbers), and adding or removing a contestant
changes nobody else's result. Same scenario, same seed: same trace, bit for bit.

Time advances chunk by chunk (whole batches of about ``chunk_size`` steps) for every
(seed, policy), so :func:`iter_race` can report progress and partial results while it runs.
Every (policy, round) meeting goes through :func:`play_round`: the policy is paid from the
round's ``payoff`` (``expected`` + ``noise``, or a world's own ``outcome``), and a policy that
declares ``oracle`` is told the round's true states first.

The world a race is played in is made by :func:`make_env`: the linear Gaussian environment of
the scenario, a world registered for the scenario's preset in :data:`WORLDS`, or any factory
``world(scenario, seed_index, rng)`` passed to :func:`iter_race` (e.g. a user's reward table).

Within a chunk, once every seed's round is drawn, the (seed, policy) pairs play in ``workers``
threads (one per core by default): the compiled kernels release the GIL, and a pair's policy
and trace belong to it alone, so the result does not depend on the number of threads, bit
for bit (tests/sim/test_runner.py). Pairs rather than seeds: 5 seeds on 2 cores would leave a
core idle a sixth of the time.
"""

from __future__ import annotations

import collections
import os
import time
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..envs import weather
from ..envs.linear import LinearGaussianEnv, Round
from ..errors import SpecError
from ..specs import PolicySpec, Race, Scenario
from .trace import RaceResult, Trace

# preset name -> factory(scenario, seed_index, rng) of the environment of scenarios on that
# preset (worlds other than the linear Gaussian one, e.g. a real-data preset)
WORLDS: dict = {weather.PRESET: weather.world}


def play_round(policy, rnd: Round, batch_end: np.ndarray):
    """Let ``policy`` play one round (a chunk of whole batches ending at ``batch_end``, indices
    within the round); returns its :class:`~allseason.policies.base.ChunkOutcome`.

    An oracle (``policy.oracle``, its role) is told the round's true states before it plays; every
    other policy sees only arms and, after each batch, its own rewards."""
    if policy.oracle:
        policy.observe_states(rnd.state)
    return policy.run_chunk(rnd.arms, rnd.payoff, rnd.noise, batch_end)


def seed_sequence(scenario: Scenario, seed_index: int, label: str | None = None):
    """The SeedSequence of seed ``seed_index``'s environment (label None) or of a policy."""
    key = (seed_index, 0) if label is None else (seed_index, 1, zlib.crc32(label.encode()))
    return np.random.SeedSequence(scenario.seed, spawn_key=key)


def next_chunk(
    batch_ends: np.ndarray, start: int, b0: int, chunk_size: int
) -> tuple[int, int, int, int]:
    """The chunk of whole batches that starts at step ``start`` (batch ``b0``) and holds
    about ``chunk_size`` steps (at least one batch): (start, stop, b0, last batch + 1)."""
    b1 = int(np.searchsorted(batch_ends, start + chunk_size - 1, side="right"))
    b1 = max(b1, b0 + 1)
    return start, int(batch_ends[b1 - 1]) + 1, b0, b1


def chunk_bounds(batch_ends: np.ndarray, chunk_size: int) -> list[tuple[int, int, int, int]]:
    """Split the horizon into chunks of whole batches: (start, stop, first batch, last batch+1)."""
    bounds, start, b0 = [], 0, 0
    while b0 < len(batch_ends):
        bounds.append(next_chunk(batch_ends, start, b0, chunk_size))
        start, b0 = bounds[-1][1], bounds[-1][3]
    return bounds


@dataclass
class Progress:
    """Where a race is: steps done per trace, of the horizon, and the partial result."""

    done: int
    horizon: int
    result: RaceResult

    @property
    def fraction(self) -> float:
        """The share of the horizon done, in [0, 1]."""
        return self.done / self.horizon


def default_workers(n_tasks: int) -> int:
    """Threads for ``n_tasks`` tasks that can run side by side: one per core, at most one per
    task."""
    return max(
        1,
        min(
            n_tasks,
            len(os.sched_getaffinity(0))
            if hasattr(os, "sched_getaffinity")
            else os.cpu_count() or 1,
        ),
    )


def iter_race(
    race: Race,
    chunk_size: int = 2500,
    workers: int | None = None,
    world=None,
    chunk_seconds: float | None = None,
) -> Iterator[Progress]:
    """Run a race, yielding a :class:`Progress` after each chunk of time (all traces advanced).

    ``workers``: threads that play a chunk's (seed, policy) pairs side by side (default: one
    per core, at most one per pair; 1 plays them in turn). ``world``: a factory of the
    environment (see :func:`make_env`); default: the scenario's. ``chunk_seconds``: if given,
    chunks grow (never below ``chunk_size`` steps) so that each takes about that long, e.g. a
    progress bar's pace: a short race then runs in a few chunks, a long one still reports
    often. The result is the same for any ``chunk_size``, ``workers`` and ``chunk_seconds``,
    bit for bit (tests/sim/test_runner.py)."""
    sc = race.scenario
    ends = sc.batch_ends()
    envs, policies, traces = {}, {}, {}
    for k in range(race.n_seeds):
        envs[k] = make_env(sc, k, world)
        for spec in race.policies:
            policies[spec.label, k] = spec.build_for(
                sc, rng=np.random.default_rng(seed_sequence(sc, k, spec.label))
            )
            traces[spec.label, k] = Trace(spec.label, k, sc.horizon)
    result = RaceResult(race, traces)
    pairs = [(spec.label, k) for k in range(race.n_seeds) for spec in race.policies]

    def play_pair(key, rnd, start: int, local_ends: np.ndarray) -> None:
        t0 = time.perf_counter()
        out = play_round(policies[key], rnd, local_ends)
        traces[key].record(
            start, out, rnd.expected, rnd.state, time.perf_counter() - t0, best=rnd.best
        )

    n_workers = default_workers(len(pairs)) if workers is None else int(workers)
    if n_workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    pool = ThreadPoolExecutor(n_workers, thread_name_prefix="race") if n_workers > 1 else None
    start, b0, size = 0, 0, int(chunk_size)
    try:
        while b0 < len(ends):
            start, stop, b0, b1 = next_chunk(ends, start, b0, size)
            local_ends = ends[b0:b1] - start
            t0 = time.perf_counter()
            # each seed's round first (its environment's own streams), then every (seed,
            # policy) pair: a policy's state and trace belong to its pair alone
            n = stop - start
            if pool is None:
                rounds = [envs[k].next_round(n) for k in range(race.n_seeds)]
                for key in pairs:
                    play_pair(key, rounds[key[1]], start, local_ends)
            else:  # .result() re-raises a pair's error here
                rounds = list(pool.map(lambda k, n=n: envs[k].next_round(n), range(race.n_seeds)))
                # the slowest pairs first (by their time so far): the threads finish the
                # chunk together rather than one waiting for the last long pair
                order = sorted(pairs, key=lambda key: -traces[key].seconds)
                for f in [
                    pool.submit(play_pair, key, rounds[key[1]], start, local_ends) for key in order
                ]:
                    f.result()
            if chunk_seconds is not None:
                rate = (stop - start) / max(time.perf_counter() - t0, 1e-6)
                size = max(int(chunk_size), int(rate * chunk_seconds))
            start, b0 = stop, b1
            yield Progress(stop, sc.horizon, result)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def run_race(
    race: Race, chunk_size: int = 2500, workers: int | None = None, world=None
) -> RaceResult:
    """Run a race to the end and return its result (``workers``, ``world``: see
    :func:`iter_race`)."""
    (last,) = collections.deque(iter_race(race, chunk_size, workers, world), maxlen=1)
    return last.result


def run(scenario: Scenario, policy: PolicySpec | str, n_seeds: int = 1, **params) -> RaceResult:
    """Run one policy (a spec, or a registered name with hyperparameters) on a scenario."""
    spec = policy if isinstance(policy, PolicySpec) else PolicySpec(policy, params)
    return run_race(Race(scenario, (spec,), n_seeds))


def play(
    env,
    policy,
    batch_ends: np.ndarray,
    *,
    label: str = "",
    seed_index: int = 0,
    chunk_size: int = 2500,
) -> Trace:
    """Play one policy on any environment with ``next_round`` (e.g. a
    :class:`~allseason.envs.ClassificationEnv`) to the end of ``batch_ends``; return its
    trace."""
    ends = np.asarray(batch_ends, dtype=np.int64)
    trace = Trace(label, seed_index, int(ends[-1]) + 1)
    for start, stop, b0, b1 in chunk_bounds(ends, chunk_size):
        rnd = env.next_round(stop - start)
        t0 = time.perf_counter()
        out = play_round(policy, rnd, ends[b0:b1] - start)
        trace.record(start, out, rnd.expected, rnd.state, time.perf_counter() - t0)
    return trace


def make_env(scenario: Scenario, seed_index: int = 0, world=None):
    """The environment of seed ``seed_index`` of a scenario (the one a race uses), from the
    stream ``seed_sequence(scenario, seed_index)``: ``world(scenario, seed_index, rng)`` if
    given, else the world registered for the scenario's preset in :data:`WORLDS`, else the
    linear Gaussian environment. Any of them has ``next_round(n)`` returning a Round."""
    rng = np.random.default_rng(seed_sequence(scenario, seed_index))
    factory = world if world is not None else WORLDS.get(scenario.preset)
    if factory is not None:
        return factory(scenario, seed_index, rng)
    return LinearGaussianEnv(
        scenario.pattern, scenario.d, scenario.n_arms, scenario.sigma2, rng=rng
    )


def posterior_history(scenario: Scenario, spec: PolicySpec, seed_index: int = 0, every: int = 100):
    """Replay one (policy, seed) of a race and snapshot its posteriors every ``every`` steps.

    Only a policy that keeps a Gaussian posterior has one to show: the LinTS family and
    All-Season (:meth:`~allseason.policies.base.Policy.posterior_blocks`); for any other
    (UCB, DenBand, random, the oracles) this raises a SpecError naming it.

    Parameters
    ----------
    scenario : Scenario
        The race's scenario.
    spec : PolicySpec
        The policy, as in the race.
    seed_index : int, default 0
        Which of the race's seeds.
    every : int, default 100
        Steps between two snapshots.

    Returns
    -------
    table : pandas.DataFrame
        One row per (step, bandit) holding the posterior mean ``mean_i`` and covariance
        ``cov_ij`` (i <= j) of every live bandit (bandit -1 for single-model policies), and
        the true state.
    thetas : ndarray, shape (n_states, d)
        The true parameters.

    Notes
    -----
    The decisions are those of the race (same streams), whatever ``every`` is.
    """
    import pandas as pd

    env = make_env(scenario, seed_index)
    policy = spec.build_for(
        scenario, rng=np.random.default_rng(seed_sequence(scenario, seed_index, spec.label))
    )
    ends = scenario.batch_ends()
    rows = []
    d = scenario.d
    iu = np.triu_indices(d)
    for start, stop, b0, b1 in chunk_bounds(ends, every):
        rnd = env.next_round(stop - start)
        play_round(policy, rnd, ends[b0:b1] - start)
        slots = policy.posterior_blocks()
        if slots is None:
            raise SpecError(
                "policy",
                f"{spec.label} keeps no Gaussian posterior (only the LinTS family and "
                f"All-Season do): it has no posterior history",
            )
        from scipy.linalg import block_diag  # slow to import: only when used

        for bid, M_blocks, mu_blocks in slots:  # (G, p, p), (G, p): block-diagonal posterior
            cov = block_diag(*np.linalg.inv(M_blocks))
            mu = mu_blocks.ravel()
            row = {"step": stop - 1, "bandit": bid, "state": int(rnd.state[-1])}
            row.update({f"mean_{i}": mu[i] for i in range(d)})
            row.update({f"cov_{i}{j}": cov[i, j] for i, j in zip(*iu)})
            rows.append(row)
    return pd.DataFrame(rows), env.thetas.copy()
