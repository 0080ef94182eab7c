"""Compiled ``run_chunk`` against the plain step loop ``Policy.run_chunk``, decision by decision.

Every policy in the registry that overrides ``run_chunk`` is covered (baselines added later
are picked up automatically with their default hyperparameters); All-Season is run in every
combination of shadow (window / discount), weighting and pruning. The problem has an abrupt
change and a season that comes back, and ``n_max`` is small, so bandits are spawned and
pruned many times.
"""

from __future__ import annotations

import math
from itertools import cycle

import numpy as np
import pytest
from conftest import linear_problem

from allseason.policies import REGISTRY, hyperparameters, make_policy
from allseason.policies.base import Policy

# 750 steps (1,500 until 2026-11-27): every All-Season case still spawns and prunes (asserted
# below) and the first season comes back, at half the plain loop's CPU
T, N_ARMS, D, SIGMA2 = 750, 5, 4, 0.1
SWITCHES = [250, 500]  # seasons A, B, A

# hyperparameters that make the plain/compiled comparison bite (windows that wrap, forgetting
# that matters, frequent pruning); every other registered policy runs with its defaults
SPECIAL = {
    "allseason-sw": [
        dict(tau=10, n_max=2, weighting=w, pruning=p, share=0.05, spawn=sw)
        for w, sw in (("batch", "copy"), ("fixed-share", "copy"), ("fixed-share", "handover"))
        for p in ("kl", "mean")
    ],
    "allseason-disc": [
        dict(gamma=0.9, n_max=2, weighting=w, pruning=p, share=0.05, spawn=sw)
        for w, sw in (("batch", "copy"), ("fixed-share", "copy"), ("fixed-share", "handover"))
        for p in ("kl", "mean")
    ],
    "sw-lints": [dict(tau=50)],
    "d-lints": [dict(gamma=0.95)],
    "denband": [{}, dict(tau=50, delta_l=0.1, max_idle=100)],
}
MAKES_EVENTS = {"allseason-sw", "allseason-disc"}


def overrides_run_chunk(name: str) -> bool:
    return REGISTRY[name].run_chunk is not Policy.run_chunk


def build(name, params, seed, d=D):
    params = dict(params)
    if "sigma2" in hyperparameters(name):
        params.setdefault("sigma2", SIGMA2)
    policy = make_policy(name, d, rng=seed, **params)
    if policy.oracle:  # an oracle is told the true segment of each of the T steps
        policy.observe_states(np.searchsorted(SWITCHES, np.arange(T), side="right"))
    return policy


CONFIGS = [
    (name, params)
    for name in REGISTRY
    if overrides_run_chunk(name)
    for params in SPECIAL.get(name, [{}])
]


def _config_id(config):
    name, params = config
    return "-".join([name] + [str(v) for v in params.values()])


def mixed_batches(n):
    """Inhomogeneous batch sizes, the last batch ending at n - 1."""
    ends, t = [], -1
    for size in cycle([3, 1, 7, 2, 10, 1, 1, 5, 4, 13]):
        t = min(t + size, n - 1)
        ends.append(t)
        if t == n - 1:
            return np.array(ends, dtype=np.int64)


SCHEMES = {
    "batch1": lambda n: np.arange(n, dtype=np.int64),
    "batch10": lambda n: np.arange(9, n, 10, dtype=np.int64),
    "mixed": mixed_batches,
}

# each config sees every scheme; seeds rotate so that each config and each scheme sees 3 seeds
CASES = [
    pytest.param(config, scheme, seed, id=f"{_config_id(config)}-{scheme}-s{seed}")
    for ci, config in enumerate(CONFIGS)
    for si, scheme in enumerate(SCHEMES)
    for seed in [(ci + si) % 3]
]


def _weight_rows(outcome):
    """Per batch: {bandit id: weight}, whatever the slot layout."""
    if outcome.weights is None:
        return None
    return [
        {int(i): float(w) for i, w in zip(ids, ws) if i != -1}
        for ids, ws in zip(outcome.weight_ids, outcome.weights)
    ]


def assert_same_outcome(fast, slow):
    np.testing.assert_array_equal(fast.batch_end, slow.batch_end, err_msg="batch_end")
    np.testing.assert_array_equal(fast.arm, slow.arm, err_msg="arm")
    np.testing.assert_array_equal(fast.reward, slow.reward, err_msg="reward")
    np.testing.assert_array_equal(fast.player, slow.player, err_msg="player (bandit id)")
    wf, ws = _weight_rows(fast), _weight_rows(slow)
    assert (wf is None) == (ws is None)
    if wf is not None:
        assert len(wf) == len(ws) == len(fast.batch_end)
        for b, (rf, rs) in enumerate(zip(wf, ws)):
            assert rf.keys() == rs.keys(), f"batch {b}: live bandits differ"
            for k in rf:
                assert rf[k] == pytest.approx(rs[k], rel=1e-7, abs=1e-9), f"batch {b}, id {k}"
    assert len(fast.events) == len(slow.events)
    for ef, es in zip(fast.events, slow.events):
        assert (ef.step, ef.kind, ef.bandit, ef.other) == (es.step, es.kind, es.bandit, es.other)
        if math.isnan(es.value):
            assert math.isnan(ef.value)
        else:
            assert ef.value == pytest.approx(es.value, rel=1e-7, abs=1e-10)


def _problem(seed):
    return linear_problem(T, N_ARMS, D, SIGMA2, seed, thetas=None, switch_at=SWITCHES)


@pytest.mark.parametrize("config,scheme,seed", CASES)
def test_compiled_run_chunk_matches_plain_loop(config, scheme, seed):
    name, params = config
    arms, expected, noise = _problem(seed)
    batch_end = SCHEMES[scheme](T)
    fast = build(name, params, seed).run_chunk(arms, expected, noise, batch_end)
    slow = Policy.run_chunk(build(name, params, seed), arms, expected, noise, batch_end)
    assert_same_outcome(fast, slow)
    if name in MAKES_EVENTS:
        kinds = {e.kind for e in slow.events}
        assert {"spawn", "prune"} <= kinds, "the run should exercise spawning and pruning"


def test_every_compiled_policy_is_covered():
    assert {name for name, _ in CONFIGS} == {n for n in REGISTRY if overrides_run_chunk(n)}
    assert {"allseason-sw", "allseason-disc"} <= {name for name, _ in CONFIGS}


def _concat(outcomes, offsets):
    """Chunk outcomes glued together (batch ends made global again)."""
    glue = dict(
        arm=np.concatenate([o.arm for o in outcomes]),
        reward=np.concatenate([o.reward for o in outcomes]),
        player=np.concatenate([o.player for o in outcomes]),
        batch_end=np.concatenate([o.batch_end + off for o, off in zip(outcomes, offsets)]),
        events=[e for o in outcomes for e in o.events],
    )
    if outcomes[0].weights is not None:  # a growing ensemble (DenBand) widens the rows
        width = max(o.weights.shape[1] for o in outcomes)
        pad = [((0, 0), (0, width - o.weights.shape[1])) for o in outcomes]
        glue["weight_ids"] = np.concatenate(
            [np.pad(o.weight_ids, w, constant_values=-1) for o, w in zip(outcomes, pad)]
        )
        glue["weights"] = np.concatenate([np.pad(o.weights, w) for o, w in zip(outcomes, pad)])
    return glue


CUT = 300  # the second chunk's end: after the first change point (250)


@pytest.mark.parametrize("config", [pytest.param(c, id=_config_id(c)) for c in CONFIGS])
def test_consecutive_chunks_equal_one_chunk(config):
    """State carries over between run_chunk calls: chunks of 1 + 300 + rest give exactly the
    same as one chunk (cut at batch boundaries)."""
    name, params = config
    arms, expected, noise = _problem(7)
    batch_end = mixed_batches(T)
    whole = build(name, params, 7).run_chunk(arms, expected, noise, batch_end)
    cuts = [0, int(batch_end[0]) + 1, int(batch_end[np.searchsorted(batch_end, CUT)]) + 1, T]
    policy = build(name, params, 7)
    parts = []
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        ends = batch_end[(batch_end >= lo) & (batch_end < hi)] - lo
        parts.append(policy.run_chunk(arms[lo:hi], expected[lo:hi], noise[lo:hi], ends))
    glued = _concat(parts, cuts[:-1])
    np.testing.assert_array_equal(glued["batch_end"], whole.batch_end)
    np.testing.assert_array_equal(glued["arm"], whole.arm)
    np.testing.assert_array_equal(glued["reward"], whole.reward)
    np.testing.assert_array_equal(glued["player"], whole.player)
    assert _same_events(glued["events"], whole.events)
    if whole.weights is not None:
        np.testing.assert_array_equal(glued["weight_ids"], whole.weight_ids)
        np.testing.assert_array_equal(glued["weights"], whole.weights)
    assert policy.t == T


def _same_events(a, b):  # NaN != NaN, so compare field by field
    return len(a) == len(b) and all(
        x[:4] == y[:4] and (x.value == y.value or (math.isnan(x.value) and math.isnan(y.value)))
        for x, y in zip(a, b)
    )


@pytest.mark.parametrize(
    "name,params",
    [
        ("allseason-sw", dict(tau=1, n_max=1)),
        ("allseason-sw", dict(tau=10, n_max=1, pruning="mean")),
        ("allseason-disc", dict(n_max=1)),
    ],
)
def test_pruning_identical_twins_agrees(name, params):
    """With n_max = 1 and single-step batches, a spawned copy of the shadow is often identical
    to the base bandit (both learnt the same steps): an exact tie on the trace, which both
    paths must break the same way (drop the larger id)."""
    for seed in range(3):
        arms, expected, noise = linear_problem(300, 3, 1, SIGMA2, seed, switch_at=150)
        ends = np.arange(300, dtype=np.int64)
        fast = build(name, params, seed, d=1).run_chunk(arms, expected, noise, ends)
        slow = Policy.run_chunk(build(name, params, seed, d=1), arms, expected, noise, ends)
        assert_same_outcome(fast, slow)
