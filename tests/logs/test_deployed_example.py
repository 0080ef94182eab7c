"""The built-in example of "Your deployed bandit" (allseason/logs/deployed_example.py) is the
default race's All-Season (SW) run of seed 0 played through the agent: the same decisions,
the same weights after every batch, and so the page's figure is Inside All-Season's for the
same run, point for point."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from allseason import api
from allseason.viz import deployed as vdep
from allseason.viz import weights as inside


@pytest.fixture(scope="module")
def example(shared_deployment_example):
    """``api.deployment_example()`` (made once per session, tests/shared_results.py: the
    deployed page's tests show the same one) and the race it is checked against."""
    files = shared_deployment_example
    sc = files["scenario"]
    result = api.run_race(api.Race(sc, api.policy_specs(["allseason-sw"]), 1))
    return files, result


def test_the_example_is_the_default_scenario_and_the_races_decisions(example):
    files, result = example
    sc = files["scenario"]
    assert sc == api.Scenario() and sc.horizon == 10_000
    frame = pd.read_csv(io.BytesIO(files["decisions"]))
    trace = result.traces["allseason-sw", 0]
    np.testing.assert_array_equal(frame["arm"].astype(int).to_numpy(), trace.arm)
    np.testing.assert_allclose(frame["reward"].to_numpy(), trace.reward, rtol=1e-12)


def test_the_deployed_figure_is_inside_all_seasons_for_the_same_run(example):
    files, result = example
    w = result.to_frames()["weights"]
    theirs_top = inside.top_of_each_batch(w)
    dep = api.Deployment.from_bytes(files["decisions"], files["batches"])
    views = dep.views()
    ours_top = views["tops"]
    assert len(ours_top) == len(theirs_top) == 10_000
    np.testing.assert_array_equal(ours_top["step"].to_numpy(), theirs_top["step"].to_numpy())
    np.testing.assert_array_equal(ours_top["bandit"].to_numpy(), theirs_top["bandit"].to_numpy())
    np.testing.assert_allclose(ours_top["weight"], theirs_top["weight"], rtol=1e-9, atol=1e-12)
    ours = vdep.deployment_figure(views["tops"], views["events"], views["recalls"])
    theirs = inside.top_weight_figure(w, None, policy="allseason-sw", seed=0)
    assert len(theirs.data) >= 2
    for a, b in zip(ours.data, theirs.data):
        assert a.name == b.name
        np.testing.assert_array_equal(a.x, b.x)
        np.testing.assert_allclose(a.y, b.y, rtol=1e-9, atol=1e-12)
    kinds = [e.kind for e in result.traces["allseason-sw", 0].events]
    assert (views["events"]["kind"] == "spawn").sum() == kinds.count("spawn")
    assert (views["events"]["kind"] == "prune").sum() == kinds.count("prune")


def test_the_example_shows_seasonal_memory(example):
    """Each season that comes back brings back the bandit that held it last time: at the end
    of every segment, the top bandit is the one on top at the end of that state's previous
    segment (the example's point; with the agent class's sigma2 = 1.0, against the world's
    0.1, one bandit held the top through every change)."""
    files, _ = example
    sc = files["scenario"]
    dep = api.Deployment.from_bytes(files["decisions"], files["batches"])
    views = dep.views()
    top = views["tops"].set_index("step")["bandit"]
    last_holder, returns = {}, 0
    end = 0
    for state, length in sc.segments:
        end += length
        holder = int(top.loc[end - 1])
        if state in last_holder:
            returns += 1
            assert holder == last_holder[state], (state, end, holder, last_holder)
        else:
            assert holder not in last_holder.values(), (state, end, holder)  # a new season
        last_holder[state] = holder
    assert returns == 5 and len(views["recalls"]) >= 4
    assert "5 bring back a season seen before" in files["about"]
