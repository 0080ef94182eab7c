"""Roles declared, not guessed (family, oracle, reference, ceiling), and the compiled state's
public surface: ``kernel_state``, ``posterior_blocks``, ``fork`` and the streams."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import linear_problem

from allseason import api
from allseason.errors import SpecError
from allseason.kernels import LinTSState, copy_state
from allseason.policies import REGISTRY, Policy, label_role, make_policy, role
from allseason.policies.base import Role

FAMILIES = {
    "allseason-sw": "allseason",
    "allseason-disc": "allseason",
    "allseason-sw-printed": "allseason",
    "lints": "lints",
    "sw-lints": "lints",
    "d-lints": "lints",
    "random": "random",
    "bob": "ucb",
    "dlinucb": "ucb",
    "denband": "denband",
    "oracle-state": "oracle",
    "oracle-restart": "oracle",
}


def test_every_registered_policy_declares_its_family():
    assert set(FAMILIES) <= set(REGISTRY)
    for name, family in FAMILIES.items():
        assert REGISTRY[name].family == family  # on the class, not derived from the name
        assert role(name).family == family
    assert all(REGISTRY[n].family for n in FAMILIES)


def test_oracles_are_references_and_only_oracle_state_is_the_ceiling():
    for name in REGISTRY:
        r = role(name)
        assert r.oracle == r.reference == (name in ("oracle-state", "oracle-restart"))
        assert r.oracle == REGISTRY[name].oracle
    assert [n for n in REGISTRY if role(n).ceiling] == ["oracle-state"]


def test_a_class_without_a_family_is_a_family_of_its_own():
    class Greedy(Policy):
        name = "greedy-x"

    assert role(Greedy) == Role("greedy-x", False, False, False)
    with pytest.raises(SpecError, match="unknown name"):
        role("no-such-policy")


@pytest.mark.parametrize(
    "label, family",
    [
        ("allseason-sw", "allseason"),
        ("allseason-sw-printed", "allseason"),
        ("All-Season (Disc)", "allseason"),
        ("Random", "random"),
        ("oracle-state", "oracle"),
        # a label is looked up, never parsed: these name no registered policy
        ("allseason-sw tau=5", None),
        ("sw-lints-0.99", None),
        ("oracle-state-2", None),
        ("my-policy", None),
        ("allseasonal", None),
    ],
)
def test_label_role_looks_the_label_up_among_the_registered_names_and_titles(label, family):
    r = label_role(label)
    assert (r.family if r else None) == family


def test_label_role_reads_a_race_s_own_labels_first():
    names = {"fast": "sw-lints", "lints": "oracle-state"}
    assert label_role("fast", names).family == "lints"
    assert label_role("lints", names).oracle  # the race's lookup wins over the registry
    assert label_role("fast") is None


def test_the_oracle_flag_is_the_role_and_the_default_references_are_read_from_it():
    from allseason import defaults

    assert not hasattr(Policy, "needs_state")  # one flag: ``oracle``
    assert defaults.REFERENCES == tuple(
        n for n in defaults.DEFAULT_POLICIES if REGISTRY[n].reference
    )


def test_race_result_roles_come_from_the_specs_not_the_labels():
    """A label that says nothing (``"mine"``) still gets its policy's role from the spec."""
    sc = api.Scenario.from_preset("paper-synthetic", horizon=200)
    specs = api.policy_specs(
        [
            api.PolicySpec("allseason-sw", label="mine"),
            api.PolicySpec("lints", label="allseason-lookalike"),
            api.PolicySpec("oracle-state", label="o"),
            api.PolicySpec("oracle-restart", label="o2"),
        ]
    )
    res = api.run_race(api.Race(sc, specs, 1))
    assert res.labels_of("allseason") == ["mine"]
    assert res.baselines() == ["allseason-lookalike"]
    assert res.references() == ["o", "o2"]
    gap = res.summary()["mine"]["gap_closed"]
    assert np.isfinite(gap) or np.isnan(gap)  # measured against "o", the ceiling, if any gap


# -- the compiled state's public surface ----------------------------------------------------
def _problem(T, d, seed, batch=3):
    """Arms, expected rewards, noise, true states (a switch at T // 2) and batch ends."""
    arms, expected, noise = linear_problem(T, 4, d, 0.1, seed, switch_at=T // 2)
    states = (np.arange(T) >= T // 2).astype(np.int64)
    ends = np.append(np.arange(batch - 1, T - 1, batch), T - 1)
    return arms, expected, noise, states, np.unique(ends)


def _play(policy, T=120, seed=0):
    arms, expected, noise, _, ends = _problem(T, policy.d, seed)
    return policy.run_chunk(arms, expected, noise, ends)


def test_kernel_state_is_a_typed_state_created_by_run_chunk():
    policy = make_policy("sw-lints", 3, tau=7, rng=0)
    assert policy.kernel_state is None and policy.posterior_blocks() is None
    _play(policy)
    f = policy.kernel_state
    assert isinstance(f, LinTSState) and f.M.shape == (1, 3, 3) and f.window.x.shape == (7, 3)
    (post,) = policy.posterior_blocks()
    assert post.bandit == -1 and post.M is f.M and post.mu is f.mu


def test_posterior_blocks_of_all_season_are_its_live_bandits():
    policy = make_policy("allseason-sw", 2, tau=5, n_max=3, rng=1)
    _play(policy, T=300)
    ids, _ = policy.weights()
    blocks = policy.posterior_blocks()
    assert [b.bandit for b in blocks] == ids.tolist()
    assert all(b.M.shape == (1, 2, 2) and b.mu.shape == (1, 2) for b in blocks)


@pytest.mark.parametrize("name", ["bob", "denband", "dlinucb", "random", "oracle-state"])
def test_posterior_history_refuses_a_policy_without_a_gaussian_posterior(name):
    sc = api.Scenario.from_preset("paper-synthetic", horizon=200)
    with pytest.raises(SpecError, match="keeps no Gaussian posterior"):
        api.posterior_history(sc, api.PolicySpec(name), 0, every=100)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_fork_plays_as_the_policy_would_and_leaves_it_unchanged(name):
    """fork + streams_state/restore_streams: the copy's next chunk is the policy's next chunk,
    and the policy, rewound, still plays it the same (what the fast replay relies on)."""
    policy = make_policy(name, 3, rng=2)
    arms, expected, noise, state, ends = _problem(80, 3, 3, batch=4)
    if policy.oracle:
        policy.observe_states(state[:40])
    policy.run_chunk(arms[:40], expected[:40], noise[:40], ends[ends < 40])
    before = None if policy.kernel_state is None else copy_state(policy.kernel_state)
    states = policy.streams_state()
    twin = policy.fork()
    rest = ends[ends >= 40] - 40
    if policy.oracle:
        twin.observe_states(state[40:])
    a = twin.run_chunk(arms[40:], expected[40:], noise[40:], rest)
    policy.restore_streams(states)
    if before is not None:  # the fork's kernel state is its own
        for x, y in zip(_leaves(before), _leaves(policy.kernel_state)):
            np.testing.assert_array_equal(x, y)
    if policy.oracle:
        policy.observe_states(state[40:])
    b = policy.run_chunk(arms[40:], expected[40:], noise[40:], rest)
    np.testing.assert_array_equal(a.arm, b.arm)
    np.testing.assert_array_equal(a.player, b.player)


def _leaves(state):
    for v in state:
        if isinstance(v, tuple):
            yield from _leaves(v)
        else:
            yield v


def test_only_random_declares_it_does_not_learn_and_no_reward_changes_its_decisions():
    """``learns = False`` is declared, not guessed from the family; it is what the replay's
    one-batch shortcut reads, so it must be true of the class: the same streams give the
    same arms whatever the rewards (a learner given other rewards plays otherwise)."""
    assert [n for n in REGISTRY if not REGISTRY[n].learns] == ["random"]
    arms, expected, noise = linear_problem(300, 5, 3, 0.1, seed=7)
    ends = np.arange(9, 300, 10)
    for name, differs in (("random", False), ("lints", True)):
        plays = [
            make_policy(name, 3, rng=11).run_chunk(arms, scale * expected, noise, ends).arm
            for scale in (1.0, -1.0)
        ]
        assert (not np.array_equal(*plays)) == differs, name
