"""The environment seams: states chosen as the run goes, worlds with their own outcomes, and
oracles told the true states (allseason/envs/linear.py, allseason/sim/runner.py)."""

import numpy as np
import pytest

from allseason import api
from allseason.envs import LinearGaussianEnv, Pattern, Round
from allseason.policies import Policy
from allseason.sim import runner


def test_thetas_do_not_depend_on_when_a_state_first_appears():
    pattern = Pattern(((0, 10), (1, 10), (2, 10), (3, 10)))
    eager = LinearGaussianEnv(pattern, 4, 3, 0.1, rng=7)
    lazy = LinearGaussianEnv(Pattern(((0, 40),)), 4, 3, 0.1, rng=7)
    assert len(lazy.thetas) == 1
    lazy.ensure_states(2)
    lazy.ensure_states(4)
    np.testing.assert_array_equal(eager.thetas, lazy.thetas)
    np.testing.assert_allclose(np.linalg.norm(lazy.thetas, axis=1), 1.0)


def test_given_states_replay_the_pattern_bit_for_bit():
    pattern = Pattern(((0, 7), (2, 5), (1, 9), (0, 4)))
    on_pattern = LinearGaussianEnv(pattern, 3, 4, 0.2, rng=3)
    live = LinearGaussianEnv(Pattern(((0, 1),)), 3, 4, 0.2, rng=3)
    states = pattern.states()
    a = on_pattern.next_round(25)
    parts = [live.next_round(n, states[i : i + n]) for i, n in ((0, 6), (6, 10), (16, 9))]
    for col in ("arms", "expected", "noise", "state"):
        np.testing.assert_array_equal(
            getattr(a, col), np.concatenate([getattr(p, col) for p in parts])
        )


def test_bad_states_are_refused():
    env = LinearGaussianEnv(Pattern(((0, 5),)), 2, 2, 0.1, rng=0, thetas=np.eye(2))
    with pytest.raises(ValueError, match="states"):
        env.next_round(2, [0, -1])
    with pytest.raises(ValueError, match="thetas"):
        env.next_round(1, [5])


def test_a_world_with_its_own_outcomes_pays_them_and_regret_uses_expected():
    class Coin:  # every arm pays 1 with probability p_k, drawn once per (step, arm)
        def __init__(self, scenario, seed_index, rng):
            self.rng, self.p = rng, np.array([0.2, 0.8])

        def next_round(self, n):
            outcome = (self.rng.random((n, 2)) < self.p).astype(float)
            return Round(
                np.tile(np.eye(2), (n, 1, 1)),
                np.tile(self.p, (n, 1)),
                np.zeros(n),
                np.zeros(n, dtype=np.int64),
                outcome,
            )

    sc = api.Scenario(segments=((0, 400),), d=2, n_arms=2, preset="custom")
    race = api.Race(sc, api.policy_specs(["lints", "random"]), 2)
    res = api.run_race(race, world=Coin)
    for t in res.traces.values():
        assert set(np.unique(t.reward)) <= {0.0, 1.0}
        np.testing.assert_allclose(t.regret, 0.8 - t.expected)
    again = api.run_race(race, world=Coin)
    for key, t in res.traces.items():
        np.testing.assert_array_equal(t.arm, again.traces[key].arm)
    assert res.summary()["lints"]["cum_regret"] < res.summary()["random"]["cum_regret"]


def test_play_round_tells_an_oracle_the_states_and_nobody_else():
    seen = []

    class Peek(Policy):
        oracle = True

        def observe_states(self, states):
            seen.append(np.asarray(states).copy())

        def run_chunk(self, arms, expected, noise, batch_end):
            return Policy.run_chunk(self, arms, expected, noise, batch_end)

        def _select(self, arms, u, z):
            return 0

        def update(self, xs, rs):
            pass

    env = LinearGaussianEnv(Pattern(((0, 3), (1, 2))), 2, 2, 0.1, rng=0)
    rnd = env.next_round(5)
    runner.play_round(Peek(2, rng=0), rnd, np.arange(5))
    np.testing.assert_array_equal(seen[0], [0, 0, 0, 1, 1])
    with pytest.raises(TypeError, match="not an oracle"):
        Policy(2).observe_states(rnd.state)
