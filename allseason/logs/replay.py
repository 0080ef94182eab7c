"""Rejection replay of a policy over a log (Li, Chu, Langford, Wang 2011): the step-by-step
definition and the fast one on the compiled ``run_chunk``, decision for decision the same.

Both take an optional ``on_state(policy, start, stop)``: called before the policy learns,
with the events [start, stop) that it decides with its current state (so that
:class:`~allseason.logs.policy_probs.ProbRecorder` can compute pi_t there), and an optional
``drawn`` array that receives the arm the policy drew at every event (kept or not).
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Callable

import numpy as np

from ..errors import SpecError
from ..specs import PolicySpec

SIGMA2 = 0.25  # the noise variance the policies assume: the largest a reward in [0, 1] has


def _check_policy(spec: PolicySpec) -> None:
    from ..policies import role

    if role(spec.name).oracle:
        raise SpecError(
            "policies",
            f"{spec.name} is an oracle: it is told the true seasons, "
            f"and a log has none, so it cannot be evaluated offline",
        )


def build_policy(spec: PolicySpec, log, seed: int, seed_index: int):
    """The policy of (spec, seed_index) for ``log`` (a :class:`~allseason.logs.offline.Log`):
    its stream is child ``seed_index`` of ``SeedSequence(seed).spawn(n)``, extended by the
    label's crc32 (so adding a contestant changes nobody else's draws)."""
    _check_policy(spec)
    child = np.random.SeedSequence(seed).spawn(seed_index + 1)[seed_index]
    ss = np.random.SeedSequence(
        child.entropy, spawn_key=child.spawn_key + (zlib.crc32(spec.label.encode()),)
    )
    return spec.build(log.d, sigma2=SIGMA2, horizon=log.n_events, rng=np.random.default_rng(ss))


OnState = Callable[[object, int, int], None]


def replay_reference(
    policy, log, on_state: OnState | None = None, drawn: np.ndarray | None = None
) -> np.ndarray:
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
        if on_state is not None:
            on_state(policy, t, t + 1)
        trial = copy.deepcopy(policy)
        a = trial.select(arms[t])
        if drawn is not None:
            drawn[t] = a
        if a == log.arm[t]:
            policy = trial
            policy.update(arms[[t], [a]], log.reward[t : t + 1])
            keep[t] = True
        else:
            policy.restore_streams(trial.streams_state())
    return keep


def replay_fast(
    policy,
    log,
    lookahead: int | None = None,
    on_state: OnState | None = None,
    drawn: np.ndarray | None = None,
) -> np.ndarray:
    """Rejection replay on the policies' compiled ``run_chunk``, decision for decision the
    same as :func:`replay_reference` (tests/logs/test_replay.py checks it).

    Why it is exact: within a batch a policy decides every step with the posterior it had at
    the batch's start, and between two kept events the policy does not change. So from
    event ``pos`` a *copy* of the policy plays the next ``m`` events as one batch; the first
    event where it chose the logged arm, ``pos + j``, is the next kept one (the copy, which
    then learnt all ``m`` steps, is thrown away). The policy itself skips the random draws of
    the ``j`` rejected events (``policy.draw(j)``: the streams give the same numbers drawn one
    at a time or by the chunk) and plays event ``pos + j`` alone, paid the logged reward; a
    different choice there raises RuntimeError (it cannot happen unless a policy breaks the
    batch rule).

    A policy that declares it does not learn (``learns = False``, as ``random``: arm
    ``floor(u K)``) is replayed by one fork playing the whole log as one chunk: its draws
    there are its decisions at every event, kept or not, so the kept events are where they
    equal the logged arm (:func:`_replay_without_learning`; the same mask, draws and final
    streams as the event-by-event loop, which called ``run_chunk`` twice per kept event)."""
    if not type(policy).learns:
        return _replay_without_learning(policy, log, on_state, drawn)
    n, K = log.n_events, log.n_arms
    arms = log.arms()
    m0 = lookahead or max(16, 3 * K)
    keep = np.zeros(n, dtype=bool)
    zeros = np.zeros(max(m0, 1))
    pos, m, seg = 0, m0, 0  # seg: the first event decided with the policy's current state
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
        if drawn is not None:
            stop = m_now if not hit.size else int(hit[0]) + 1
            drawn[pos : pos + stop] = out.arm[:stop]
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
        if on_state is not None:
            on_state(policy, seg, t + 1)
        one = policy.run_chunk(arms[t : t + 1], paid, np.zeros(1), np.array([0]))
        if int(one.arm[0]) != a:
            raise RuntimeError(
                f"fast replay diverged from the step-by-step replay at event "
                f"{t} ({type(policy).__name__})"
            )
        keep[t] = True
        pos, m, seg = t + 1, m0, t + 1
    if on_state is not None and seg < n:
        on_state(policy, seg, n)
    return keep


def _replay_without_learning(
    policy, log, on_state: OnState | None, drawn: np.ndarray | None
) -> np.ndarray:
    """:func:`replay_fast` of a policy that does not learn: a fork plays every event in one
    batch (the policy's streams, which a fork may share, are saved and rewound); the policy
    then spends the draws of every event and counts the kept ones as the steps it played,
    as the event-by-event loop leaves it. Its state (a step counter and
    the streams) never changes a decision: ``on_state`` is called once, for every event."""
    n, K = log.n_events, log.n_arms
    if on_state is not None and n:
        on_state(policy, 0, n)
    if not n:
        return np.zeros(0, dtype=bool)
    states = policy.streams_state()
    trial = policy.fork()
    out = trial.run_chunk(log.arms(), np.zeros((n, K)), np.zeros(n), np.array([n - 1]))
    policy.restore_streams(states)
    keep = out.arm == log.arm
    if drawn is not None:
        drawn[:] = out.arm
    policy.draw(n)  # every event's draw spent, as the event loop leaves the streams
    policy.t += int(keep.sum())  # the steps it played: the kept events (its update is a no-op)
    return keep
