"""LiveRun (allseason/sim/live.py): a race stepped by hand, replayed through run_race.

The replay test: a live run with at least 6 switches, including returns and a
new season, replayed as a pattern through ``run_race`` with the same seed, gives identical
decisions and rewards for every contestant, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from allseason import api
from allseason.errors import SpecError
from allseason.sim import live as live_mod
from allseason.sim.live import LiveRun

EVERYONE = (
    "allseason-sw",
    "allseason-disc",
    "allseason-sw-printed",
    "lints",
    "sw-lints",
    "d-lints",
    "bob",
    "denband",
    "random",
    "oracle-state",
    "oracle-restart",
)


def show(run: LiveRun, script):
    """Play a script of ("go", k), ("to", s) and ("new",) steps."""
    for step in script:
        if step[0] == "go":
            run.advance(step[1])
        elif step[0] == "to":
            run.switch(step[1])
        else:
            run.new_state()
    return run


# 7 switches: 3 returns (to 0, to 1, to 0), 2 new seasons after the start (2, 3), uneven k
SCRIPT = [
    ("go", 130),
    ("new",),
    ("go", 95),
    ("to", 0),
    ("go", 61),
    ("new",),
    ("go", 240),
    ("to", 1),
    ("go", 77),
    ("to", 0),
    ("go", 33),
    ("go", 40),
    ("new",),
    ("go", 150),
    ("to", 2),
    ("go", 129),
]


def assert_replays(run: LiveRun, labels):
    replay = api.run_race(run.race(), chunk_size=97)
    for label in labels:
        trace = replay.traces[label, 0]
        assert trace.n_done == run.t
        np.testing.assert_array_equal(trace.arm, run.arms(label), err_msg=label)
        np.testing.assert_array_equal(trace.reward, run.rewards(label), err_msg=label)
        assert trace.reward.tobytes() == run.rewards(label).tobytes()  # bit for bit
    return replay


@pytest.mark.parametrize("batch_size", [1, 3])
def test_a_show_replays_bit_for_bit_through_run_race(batch_size):
    specs = [api.PolicySpec(n, api.default_params(n)) for n in EVERYONE]
    run = show(LiveRun(specs, batch_size=batch_size, seed=11, record=True), SCRIPT)
    sched = run.schedule()
    assert len(sched) - 1 >= 6
    states = [s for s, _ in sched]
    assert states == [0, 1, 0, 2, 1, 0, 3, 2]
    assert run.n_states == 4 and run.t == sum(n for _, n in sched)
    replay = assert_replays(run, run.labels)
    # the replay's true states are the show's, step by step
    np.testing.assert_array_equal(
        replay.traces["lints", 0].state, run.race().scenario.pattern.states()
    )


def test_a_new_season_gets_the_same_theta_as_in_the_replay():
    run = show(
        LiveRun(["lints"], seed=5, record=True),
        [("go", 10), ("new",), ("go", 10), ("new",), ("go", 10)],
    )
    env = api.Scenario(segments=run.schedule(), preset="custom", seed=5)
    from allseason.sim.runner import make_env

    np.testing.assert_array_equal(run._env.thetas, make_env(env, 0).thetas)


def test_the_default_contestants_and_their_streams():
    run = LiveRun(seed=2, record=True)
    assert [s.name for s in run.specs] == list(live_mod.LIVE_POLICIES)
    assert run.featured == "allseason-sw"
    show(run, [("go", 300), ("new",), ("go", 300), ("to", 0), ("go", 300)])
    assert_replays(run, run.labels)


def test_bob_gets_a_pinned_horizon_so_the_replay_gives_it_the_same_T():
    run = LiveRun(["bob"], seed=1)
    assert dict(run.specs[0].params)["horizon"] == live_mod.LIVE_HORIZON


def test_memory_is_bounded_by_the_window():
    run = LiveRun(["allseason-sw", "lints"], seed=0, window=500)
    for i in range(60):
        run.advance(50)
        if i % 7 == 6:
            run.switch(
                (run.state + 1) % run.n_states
            ) if i % 2 else run.new_state() if run.n_states < run.max_states else run.switch(0)
    f = run.frame()
    assert run.t == 3000
    assert f.steps.shape == (500,) and f.reward.shape == (2, 500) and f.rate.shape == (2, 500)
    assert len(f.top_step) <= 500 and len(run.ticker) <= live_mod.TICKER_LEN
    np.testing.assert_array_equal(f.steps, np.arange(2500, 3000))


def test_rolling_rate_and_regret_since_switch_against_direct_computation():
    run = LiveRun(["lints", "random"], seed=4, rate_window=25, record=True)
    show(run, [("go", 120), ("new",), ("go", 80)])
    f = run.frame()
    rewards = run.rewards("lints")
    for j in (0, 10, 24, 25, 150, 199):
        lo = max(0, j + 1 - 25)
        assert f.rate[0, j] == pytest.approx(rewards[lo : j + 1].mean(), abs=1e-12)
    replay = api.run_race(run.race())
    for i, label in enumerate(run.labels):
        regret = replay.traces[label, 0].regret
        assert f.regret_since_switch[i] == pytest.approx(regret[120:].sum(), abs=1e-9)
        assert f.since_switch[i, -1] == pytest.approx(regret[120:].sum(), abs=1e-9)
        assert run.total_regret[i] == pytest.approx(regret.sum(), abs=1e-9)
    assert f.switch_step == 120


def test_ticker_says_new_season_shadow_and_returns():
    run = LiveRun(["allseason-sw"], seed=0)
    show(run, [("go", 1500), ("new",), ("go", 1000), ("to", 0), ("go", 1000)])
    kinds = [x.kind for x in run.ticker]
    texts = [x.text for x in run.ticker]
    assert "new" in kinds and "switch" in kinds
    assert any(t.startswith("the shadow took over") for t in texts), texts
    assert any(" is back after " in t for t in texts), texts
    f = run.frame()
    assert set(np.unique(f.top_bandit)) >= {0}  # the shadow held the top weight at times
    assert np.all((f.top_weight > 0) & (f.top_weight <= 1 + 1e-12))


def test_bad_controls_get_a_message_naming_the_field():
    run = LiveRun(["lints"], max_states=3)
    run.advance(5)
    run.new_state()
    run.new_state()
    with pytest.raises(SpecError, match="at most 3 seasons"):
        run.new_state()
    for bad in (7, -1, "2", 1.5, True):
        with pytest.raises(SpecError, match="state"):
            run.switch(bad)
    for bad in (0, -3, 10**9, 2.5, "10"):
        with pytest.raises(SpecError, match="steps"):
            run.advance(bad)
    with pytest.raises(SpecError, match="max_states"):
        LiveRun(["lints"], max_states=10)
    with pytest.raises(SpecError, match="batch_size"):
        LiveRun(["lints"], batch_size=(1, 2))
    with pytest.raises(SpecError, match="segments"):
        LiveRun(["lints"]).race()  # nothing played yet
    with pytest.raises(ValueError, match="record=True"):
        run.arms("lints")


def test_switching_before_any_step_and_to_the_same_state_leaves_no_empty_segment():
    run = LiveRun(["lints"], seed=0, record=True)
    run.new_state()
    run.switch(1)
    run.advance(10)
    run.switch(0)
    run.switch(1)  # back before any step in state 0
    run.advance(10)
    assert run.schedule() == ((1, 20),)
    assert_replays(run, run.labels)
