"""The default race and the rule that sets its hyperparameters (allseason/defaults.py), the
default weighting's evidence, and the tracked real-data snapshot
(allseason/paper/mnist_snapshot.py).

The default race must tell the paper's story on every scenario seed it is reported on (0-4):
an All-Season contestant first, with at most half the best baseline's regret, few bandits
(the paper's figure shows about 16) and a decisive top weight. The printed rule stays in the
race as a contestant of its own and keeps its own behaviour.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from allseason import api, defaults
from allseason.envs.datasets import DataUnavailable
from allseason.paper import mnist_snapshot as snapshot
from allseason.paper import tuning
from allseason.policies import REGISTRY, role


def test_default_race_contestants_and_params():
    race = api.default_race()
    names = [p.name for p in race.policies]
    assert names == list(defaults.DEFAULT_POLICIES)
    assert race.n_seeds == defaults.DEFAULT_SEEDS == 5
    assert race.scenario == api.Scenario() and race.scenario.batch_size == 1
    params = {p.name: dict(p.params) for p in race.policies}
    # All-Season: the paper's section 5 setting, default (carried) weighting
    assert params["allseason-sw"] == {"tau": 10, "n_max": 5}
    assert params["allseason-disc"] == {"gamma": 0.9, "n_max": 5}
    sw = race.policies[0].build(5)
    assert (sw.weighting, sw.spawn, sw.share) == ("fixed-share", "handover", 1e-4)
    printed = race.policies[names.index("allseason-sw-printed")].build(5)
    assert printed.weighting == "batch"
    # the references: LinTS's defaults, drawn and ranked apart
    assert defaults.REFERENCES == ("oracle-state", "oracle-restart")
    assert names[-2:] == list(defaults.REFERENCES)
    assert params["oracle-state"] == params["oracle-restart"] == params["lints"] == {}
    assert all(REGISTRY[n].reference and REGISTRY[n].oracle for n in defaults.REFERENCES)
    # baselines: the tuned values
    assert params["sw-lints"] == defaults.TUNED["sw-lints"]
    assert params["d-lints"] == defaults.TUNED["d-lints"]


@pytest.mark.parametrize("name", ["sw-lints", "d-lints"])
def test_tuned_values_are_what_the_rule_gives(name):
    """The stored TUNED values equal the rule recomputed (BoB and DenBand take ~3 minutes:
    benchmarks/tune_baselines.py recomputes them)."""
    best, scores = tuning.tune(name)
    assert best == defaults.TUNED[name]
    assert len(scores) >= 4  # the paper's grid, every point scored
    assert (
        max(s for _, s in scores)
        == dict((json.dumps(p, sort_keys=True), s) for p, s in scores)[
            json.dumps(best, sort_keys=True)
        ]
    )


def test_tune_rule_takes_the_best_and_ties_go_first(monkeypatch):
    from allseason.paper import reproduce

    monkeypatch.setitem(reproduce.GRIDS, "sw-lints", [{"tau": 5000}, {"tau": 50}, {"tau": 50}])
    best, scores = tuning.tune(
        "sw-lints", api.Scenario.from_preset("paper-synthetic", horizon=600), 1
    )
    assert best == {"tau": 50} and scores[1][1] == scores[2][1] > scores[0][1]


@pytest.mark.parametrize("scenario_seed", [0, 1, 2, 3, 4])
def test_default_race_tells_the_papers_story(scenario_seed):
    race = api.default_race(api.Scenario(seed=scenario_seed))
    result = api.run_race(race)
    summary = result.summary()
    contestants = [k for k in summary if k not in defaults.REFERENCES]  # oracles ranked apart
    first = max(contestants, key=lambda k: summary[k]["mean_reward"])
    assert first in ("allseason-sw", "allseason-disc")
    baselines = [k for k in contestants if role(k).family != "allseason"]
    best_regret = min(summary[k]["cum_regret"] for k in baselines)
    assert summary[first]["cum_regret"] <= 0.5 * best_regret
    pattern = race.scenario.pattern
    for label in ("allseason-sw", "allseason-disc"):
        ens = [api.ensemble_summary(result.traces[label, k], pattern) for k in range(race.n_seeds)]
        assert max(e["bandits_created"] for e in ens) <= 40, (label, ens)
        # over the contestant's runs (each run has as many batches); one run may dip below
        assert np.mean([e["top_share"] for e in ens]) >= 0.9, (label, ens)
        assert min(e["top_share"] for e in ens) >= 0.85, (label, ens)
    # the printed rule is a contestant of its own and behaves as printed: a cloud of bandits
    ens = api.ensemble_summary(result.traces["allseason-sw-printed", 0], pattern)
    assert ens["bandits_created"] > 500 and ens["top_share"] < 0.1


def test_ensemble_summary_counts_from_the_trace():
    sc = api.Scenario.from_preset("paper-synthetic", horizon=800, batch_size=2)
    result = api.run_race(api.Race(sc, api.policy_specs(["allseason-sw-printed"]), 1))
    trace = result.traces["allseason-sw-printed", 0]
    ens = api.ensemble_summary(trace, sc.pattern)
    ends, ids, w = trace.batch_weights()
    assert ens["bandits_created"] == 1 + sum(e.kind == "spawn" for e in trace.events)
    spawned = [e.bandit for e in trace.events if e.kind == "spawn"]
    assert ens["bandits_created"] == max(spawned)  # ids 1, 2, ... in order of creation
    assert ens["top_share"] == pytest.approx(np.mean(w.max(axis=1) > 0.9))
    assert ens["mean_reward"] == pytest.approx(trace.reward.mean())
    n_returning = sum(
        1
        for i, (s, _) in enumerate(sc.pattern.segments[1:], 1)
        if s in {x for x, _ in sc.pattern.segments[:i]}
    )
    assert len(ens["recall_delays"]) == n_returning


def test_learnt_by_reads_who_played_each_state():
    sc = api.Scenario()
    result = api.run_race(api.Race(sc, api.default_specs(["allseason-sw"]), 1))
    trace = result.traces["allseason-sw", 0]
    learnt = api.learnt_by(trace, sc.pattern)
    assert list(learnt) == [0, 1, 2, 3]  # in order of first appearance
    for state, ids in learnt.items():
        steps = trace.player[trace.state == state]
        for i in ids:
            assert i > 0 and np.mean(steps == i) >= 0.1
    text = api.learnt_by_text(learnt)
    assert text.startswith("θ*1 by bandit") and text.count(";") == 3


def test_printed_rule_contestant_equals_weighting_batch():
    """allseason-sw-printed is allseason-sw with weighting="batch", decision for decision."""
    sc = api.Scenario.from_preset("paper-synthetic", horizon=1500)
    specs = (api.PolicySpec("allseason-sw-printed", {}, "x"),)
    a = api.run_race(api.Race(sc, specs, 1)).traces["x", 0]
    specs = (api.PolicySpec("allseason-sw", {"weighting": "batch"}, "x"),)
    b = api.run_race(api.Race(sc, specs, 1)).traces["x", 0]
    np.testing.assert_array_equal(a.arm, b.arm)
    np.testing.assert_array_equal(a.player, b.player)
    assert "weighting" not in api.hyperparameters("allseason-sw-printed")
    assert "allseason-sw-printed" in REGISTRY


def test_cli_default_run_is_the_default_race(capsys):
    from allseason.cli import main

    assert main(["run", "--json", "--seeds", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == list(defaults.DEFAULT_POLICIES)
    assert out["allseason-sw"]["bandits_created_max"] <= 40
    assert out["allseason-sw-printed"]["top_share_mean"] < 0.1
    assert "bandits_created_max" not in out["lints"]


def test_real_data_snapshot_is_recomputed_exactly(private_data_cache):
    """The tracked snapshot equals a fresh computation (needs `make data`)."""
    try:
        fresh = snapshot.compute()
    except DataUnavailable as exc:
        pytest.skip(str(exc))
    tracked = snapshot.load()
    for key in ("table", "pattern", "n", "seed", "change_points", "curve_every"):
        assert fresh[key] == tracked[key]
    assert fresh["policies"] == tracked["policies"]
    assert (
        tracked["policies"]["allseason-sw"]["mean_reward"]
        > tracked["policies"]["allseason-sw-printed"]["mean_reward"]
    )
