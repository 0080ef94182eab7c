"""The oracle references (allseason/policies/oracle.py), the share of the gap closed
(RaceResult.summary()["gap_closed"]) and how the race views draw the oracles apart.

The oracles are checked against what they claim to be, built independently here: LinTS
models run on each state's (or each segment's) steps alone, with the streams the docstring
names (child 2 of the oracle's rng, then child k).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from allseason import api
from allseason.envs import LinearGaussianEnv, Pattern
from allseason.policies import REGISTRY, LinTS, Policy, is_reference, make_policy, role
from allseason.sim import runner
from allseason.sim.trace import gap_closed

D, K, SIGMA2 = 4, 5, 0.1
# seasons that come back, some segments shorter than a batch
SEGMENTS = ((0, 40), (1, 25), (0, 2), (2, 30), (1, 31), (0, 52))


def problem(batch=3, seed=1):
    pattern = Pattern(SEGMENTS)
    rnd = LinearGaussianEnv(pattern, D, K, SIGMA2, rng=seed).next_round(pattern.horizon)
    T = pattern.horizon
    ends = np.arange(batch - 1, T, batch)
    ends = np.append(ends[ends < T - 1], T - 1).astype(np.int64)
    return rnd, ends


def inner_rng(seed, key):
    """The stream of the inner model ``key``: child 2 of the oracle's rng, then child key."""
    models = np.random.default_rng(seed).spawn(3)[2].bit_generator.seed_seq
    return np.random.default_rng(models.spawn(key + 1)[key])


def own_batch_ends(steps, ends):
    """Within the sub-sequence ``steps`` (sorted step indices): the last of them in each
    batch that has any."""
    batch = np.searchsorted(ends, steps)
    return np.array(
        [i for i in range(len(steps)) if i == len(steps) - 1 or batch[i + 1] != batch[i]],
        dtype=np.int64,
    )


def play(policy, rnd, ends):
    return runner.play_round(policy, rnd, ends)


def segments_of(states):
    return np.concatenate([[0], np.cumsum(states[1:] != states[:-1])])


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_oracle_state_is_one_lints_per_state_on_its_own_steps(batch):
    rnd, ends = problem(batch)
    out = play(make_policy("oracle-state", D, rng=5, lam=2.0, sigma2=SIGMA2), rnd, ends)
    np.testing.assert_array_equal(out.player, rnd.state)  # the state played the step
    for s in np.unique(rnd.state):
        steps = np.flatnonzero(rnd.state == s)
        alone = LinTS(D, lam=2.0, sigma2=SIGMA2, rng=inner_rng(5, int(s))).run_chunk(
            rnd.arms[steps], rnd.expected[steps], rnd.noise[steps], own_batch_ends(steps, ends)
        )
        np.testing.assert_array_equal(out.arm[steps], alone.arm)
        np.testing.assert_array_equal(out.reward[steps], alone.reward)


@pytest.mark.parametrize("batch", [1, 3, 7])
def test_oracle_restart_is_a_fresh_lints_per_segment(batch):
    rnd, ends = problem(batch)
    out = play(make_policy("oracle-restart", D, rng=6, sigma2=SIGMA2), rnd, ends)
    seg = segments_of(rnd.state)
    np.testing.assert_array_equal(out.player, seg)
    assert seg.max() == len(SEGMENTS) - 1
    for j in range(len(SEGMENTS)):
        steps = np.flatnonzero(seg == j)
        alone = LinTS(D, sigma2=SIGMA2, rng=inner_rng(6, j)).run_chunk(
            rnd.arms[steps], rnd.expected[steps], rnd.noise[steps], own_batch_ends(steps, ends)
        )
        np.testing.assert_array_equal(out.arm[steps], alone.arm)


def test_memory_is_what_tells_them_apart():
    """Same first segment, same stream: identical; after a season returns, they differ."""
    rnd, ends = problem(1)
    a = play(make_policy("oracle-state", D, rng=3, sigma2=SIGMA2), rnd, ends)
    b = play(make_policy("oracle-restart", D, rng=3, sigma2=SIGMA2), rnd, ends)
    first = SEGMENTS[0][1]
    np.testing.assert_array_equal(a.arm[:first], b.arm[:first])
    assert not np.array_equal(a.arm, b.arm)


@pytest.mark.parametrize("name", ["oracle-state", "oracle-restart"])
def test_decisions_do_not_depend_on_the_chunks(name):
    """One chunk, batch by batch (a live run's small steps), uneven chunks, and the plain
    select/update loop: the same decisions."""
    rnd, ends = problem(3)
    whole = play(make_policy(name, D, rng=9, sigma2=SIGMA2), rnd, ends)
    for cut_every in (1, 4, 11):  # chunks of whole batches
        policy = make_policy(name, D, rng=9, sigma2=SIGMA2)
        arms = []
        cuts = [-1] + list(ends[cut_every - 1 :: cut_every]) + [ends[-1]]
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            if hi <= lo:
                continue
            sl = slice(lo + 1, hi + 1)
            part = runner.Round(rnd.arms[sl], rnd.expected[sl], rnd.noise[sl], rnd.state[sl])
            local = ends[(ends > lo) & (ends <= hi)] - (lo + 1)
            arms.append(play(policy, part, local).arm)
        np.testing.assert_array_equal(np.concatenate(arms), whole.arm)
    plain = make_policy(name, D, rng=9, sigma2=SIGMA2)
    plain.observe_states(rnd.state)
    slow = Policy.run_chunk(plain, rnd.arms, rnd.expected, rnd.noise, ends)
    np.testing.assert_array_equal(slow.arm, whole.arm)
    np.testing.assert_array_equal(slow.player, whole.player)


def test_through_run_race_any_chunk_size_and_seasons_beat_lints():
    sc = api.Scenario.from_preset("paper-synthetic", horizon=3000)
    race = api.Race(sc, api.policy_specs(["lints", "oracle-state", "oracle-restart"]), 3)
    res = api.run_race(race)
    again = api.run_race(race, chunk_size=137, workers=1)
    for key, t in res.traces.items():
        np.testing.assert_array_equal(t.arm, again.traces[key].arm, err_msg=str(key))
    for k in range(3):
        t = res.traces["oracle-state", k]
        np.testing.assert_array_equal(t.player, t.state)
    s = res.summary()
    assert s["oracle-state"]["mean_reward"] > s["lints"]["mean_reward"] + 0.1
    assert s["oracle-restart"]["mean_reward"] > s["lints"]["mean_reward"] + 0.1
    # seasons come back: perfect memory pays less regret than relearning from the prior
    assert s["oracle-state"]["cum_regret"] < s["oracle-restart"]["cum_regret"]
    assert res.references() == ["oracle-state", "oracle-restart"]
    assert res.baselines() == ["lints"]


def test_only_oracles_are_told_the_states(monkeypatch):
    told = []
    monkeypatch.setattr(
        Policy, "observe_states", lambda self, states: told.append(type(self).__name__)
    )
    original = REGISTRY["oracle-state"].observe_states
    seen = []

    def spy(self, states):
        seen.append(np.asarray(states).copy())
        return original(self, states)

    monkeypatch.setattr(REGISTRY["oracle-state"], "observe_states", spy)
    sc = api.Scenario.from_preset("paper-synthetic", horizon=600)
    plain = [n for n in REGISTRY if not REGISTRY[n].oracle and n not in ("denband", "bob")]
    res = api.run_race(api.Race(sc, api.policy_specs(plain + ["oracle-state"]), 1), chunk_size=250)
    assert told == []  # no plain policy was ever told anything
    np.testing.assert_array_equal(np.concatenate(seen), res.traces["oracle-state", 0].state)
    assert [n for n in REGISTRY if REGISTRY[n].oracle] == ["oracle-state", "oracle-restart"]


def test_an_oracle_not_told_refuses_to_play():
    rnd, ends = problem(1)
    policy = make_policy("oracle-state", D, rng=0)
    with pytest.raises(RuntimeError, match="must be told the true state"):
        policy.run_chunk(rnd.arms, rnd.expected, rnd.noise, ends)
    with pytest.raises(TypeError, match="not an oracle"):
        make_policy("lints", D, rng=0).observe_states(rnd.state)


def test_declarations():
    for name in ("oracle-state", "oracle-restart"):
        cls = REGISTRY[name]
        assert cls.reference and cls.oracle and is_reference(name)
        assert cls.title.startswith("Oracle: ")
        assert api.hyperparameters(name) == api.hyperparameters("lints")
    assert not is_reference("lints") and not is_reference("allseason-sw")
    assert REGISTRY["oracle-state"].title == "Oracle: per-state LinTS"


# -- the share of the gap closed ----------------------------------------------------------
@pytest.fixture(scope="module")
def race():
    sc = api.Scenario.from_preset("paper-synthetic", horizon=2000, seed=3)
    return api.run_race(api.Race(sc, api.default_specs(), 3))


def test_gap_closed_is_the_hand_computation(race):
    s = race.summary()
    mean = {
        lab: np.mean([race.traces[lab, k].reward.mean() for k in range(3)]) for lab in race.labels
    }
    best = max(mean[lab] for lab in ("lints", "sw-lints", "d-lints", "random"))
    for lab in (
        "allseason-sw",
        "allseason-disc",
        "allseason-sw-printed",
        "lints",
        "sw-lints",
        "d-lints",
        "random",
    ):
        want = (mean[lab] - best) / (mean["oracle-state"] - best)
        assert s[lab]["gap_closed"] == pytest.approx(want, rel=1e-12), lab
    assert max(s[lab]["gap_closed"] for lab in ("lints", "sw-lints", "d-lints")) == 0.0
    assert math.isnan(s["oracle-state"]["gap_closed"])
    assert math.isnan(s["oracle-restart"]["gap_closed"])


def test_gap_closed_has_no_meaning_without_oracle_or_gap():
    nan = gap_closed({"a": 0.5, "b": 0.6, "o": 0.55}, ["b"], "o", ["o"])  # o below b
    assert all(math.isnan(v) for v in nan.values())
    assert all(math.isnan(v) for v in gap_closed({"a": 0.5, "b": 0.4}, ["b"], None).values())
    assert all(math.isnan(v) for v in gap_closed({"a": 0.5, "o": 0.9}, [], "o").values())
    assert gap_closed(
        {"a": 0.7, "b": 0.2, "c": 0.4, "o": 0.9}, ["b", "c"], "o", ["o"]
    ) == pytest.approx({"a": 0.6, "b": -0.4, "c": 0.0, "o": math.nan}, nan_ok=True)
    sc = api.Scenario.from_preset("paper-synthetic", horizon=300)
    res = api.run_race(api.Race(sc, api.policy_specs(["allseason-sw", "lints"]), 2))
    assert math.isnan(res.summary()["allseason-sw"]["gap_closed"])  # no oracle in the race


# -- the views ----------------------------------------------------------------------------------
def test_final_regret_figure_shows_every_seed_and_the_oracles_apart(race):
    from allseason.viz import leaderboard as vboard
    from allseason.viz import race as vrace
    from allseason.viz.style import policy_colors, policy_name

    seeds = race.seed_frame()
    assert len(seeds) == 9 * 3
    for row in seeds.itertuples():
        assert row.cum_regret == pytest.approx(race.traces[row.policy, row.seed].regret.sum())
    fig = vboard.final_regret_figure(seeds)
    dots, means = fig.data  # every seed's dot in one trace, every mean tick in another
    assert means.name == "mean"
    rows = {}  # policy name -> its dots: (x, y, seed, colour)
    for x, y, (name, seed), color in zip(dots.x, dots.y, dots.customdata, dots.marker.color):
        rows.setdefault(name, []).append((x, y, seed, color))
    names = list(rows)
    oracles = [
        policy_name(lab) + f" ({vrace.ORACLE_LABEL})" for lab in ("oracle-state", "oracle-restart")
    ]
    assert sorted(names[-2:]) == sorted(oracles)
    mean = seeds.groupby("policy")["cum_regret"].mean()
    contestants = [lab for lab in race.labels if not role(lab).oracle]
    assert names[:-2] == [policy_name(lab) for lab in sorted(contestants, key=mean.get)]
    label_of = {
        policy_name(lab) + (f" ({vrace.ORACLE_LABEL})" if role(lab).oracle else ""): lab
        for lab in race.labels
    }
    for name, pts in rows.items():  # one dot per seed, at the seed's final regret
        lab = label_of[name]
        want = seeds[seeds.policy == lab].sort_values("seed")
        assert [p[2] for p in pts] == want["seed"].tolist()
        np.testing.assert_allclose([p[0] for p in pts], want["cum_regret"].to_numpy())
        assert {p[3] for p in pts} == {policy_colors([lab])[lab]}
    assert [c[0] for c in means.customdata] == [policy_name(label_of[n]) for n in names]
    np.testing.assert_allclose(means.x, [mean[label_of[n]] for n in names])
    # each row's range: a line shape from its smallest to its largest seed, in its colour;
    # the oracles' dashed and grey (in data units, on a log axis too)
    ranges = {
        s.name.removesuffix(": min–max"): s
        for s in fig.layout.shapes
        if s.name and s.name.endswith(": min–max")
    }
    for name, pts in rows.items():
        lab, r = label_of[name], ranges[policy_name(label_of[name])]
        lo, hi = min(p[0] for p in pts), max(p[0] for p in pts)
        assert (r.x0, r.x1) == pytest.approx((lo, hi))
        assert r.line.color == policy_colors([lab])[lab]
        assert r.line.dash == ("dash" if role(lab).oracle else "solid")
    for lab in ("oracle-state", "oracle-restart"):
        grey = ranges[policy_name(lab)].line.color.lstrip("#")
        assert grey[:2] * 3 == grey
    text = " ".join(a.text for a in fig.layout.annotations)
    assert vrace.ORACLE_LABEL in text
    dots = [[p[1] for p in pts] for pts in rows.values()]
    # each row's name is written above its dots (the y axis is reversed: above = smaller),
    # at the plot's left edge, in the rows' order; no dot reaches up to its name
    rows = list(fig.layout.yaxis.tickvals)
    labels = [a for a in fig.layout.annotations if a.xref == "x domain" and a.x == 0]
    assert [a.text for a in labels] == names[:-2] + [
        policy_name(label_of[n]) + " (oracle)" for n in names[-2:]
    ]
    for a, row, ys in zip(labels, rows, dots):
        assert row - 0.5 < a.y < row and a.y < min(ys) - 0.15
    assert fig.layout.margin.autoexpand is False and not fig.layout.yaxis.showticklabels
    # the oracles' rows sit below the divider
    divider = next(s.y0 for s in fig.layout.shapes if s.name == "divider")
    assert all(v > divider for v in rows[-2:])
    assert all(v < divider for v in rows[:-2])


def test_race_figures_and_table_rank_the_oracles_apart(race):
    from allseason.viz import leaderboard as vboard
    from allseason.viz import race as vrace
    from allseason.viz.style import policy_name

    frames = race.to_frames()
    assert frames["summary"]["reference"].tolist() == [False] * 7 + [True] * 2
    table = vboard.leaderboard_table(frames["summary"])
    assert list(table.index) == ["1", "2", "3", "4", "5", "6", "7", "oracle", "oracle"]
    assert set(table["Policy"][-2:]) == {policy_name("oracle-state"), policy_name("oracle-restart")}
    s = race.summary()
    sw = table.set_index("Policy").loc[policy_name("allseason-sw"), "Gap closed"]
    assert sw == f"{s['allseason-sw']['gap_closed']:.0%}"
    assert (table["Gap closed"][-2:] == "—").all()
    fig = vrace.cumulative_figure(frames["steps"], race.race.scenario.pattern, "regret")
    legend = [
        t.name for t in fig.data if t.showlegend is not False and not t.name.startswith("state ")
    ]
    head = legend.index(f"<i>{vrace.ORACLE_LABEL}:</i>")
    assert set(legend[head + 1 :]) == {policy_name("oracle-state"), policy_name("oracle-restart")}
    assert len(legend[:head]) == 7
    board = vboard.leaderboard_figure(frames["summary"])
    assert [t.name for t in board.data][-2:] == list(table["Policy"][-2:])
    assert all(t.marker.pattern.shape == "/" for t in board.data[-2:])


def test_cli_prints_the_oracles_apart(capsys):
    from allseason.cli import main

    assert main(["run", "--seeds", "2", "--horizon", "1500"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("-- references"))
    assert "oracle (knows the seasons)" in lines[head]
    assert {line.split()[0] for line in lines[head + 1 : head + 3]} == {
        "oracle-state",
        "oracle-restart",
    }
    ranked = [line.split()[0] for line in lines[2:head]]
    assert len(ranked) == 7 and not any(role(r).oracle for r in ranked)
    assert "gap closed" in lines[1]
