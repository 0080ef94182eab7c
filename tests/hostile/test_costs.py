"""The cost of a request, known before it runs (issue 33, item 1): estimates from the stored
per-step prices, growing with the request, and a budget refused with its number and the
command line. ``benchmarks/cost_check.py`` compares the estimates with measured times."""

import pytest

from allseason import api, costs
from allseason.sweeps.calibration import calibration_seconds
from allseason.sweeps.spec import SweepSpec
from allseason.worldmap.grid import MapGrid


def _race(horizon=2000, d=5, k=5, names=("lints", "allseason-sw"), seeds=2):
    sc = api.Scenario.from_preset("paper-synthetic", horizon=horizon, d=d, n_arms=k)
    return api.Race(sc, api.default_specs(names), seeds)


def test_every_policy_has_a_price_and_estimates_grow_with_the_request():
    for name in api.policy_names():
        assert costs.step_price(name, 5, 5) > 0
    small = api.estimate_cost(_race())
    assert 0 < small < api.estimate_cost(_race(horizon=20_000))
    assert small < api.estimate_cost(_race(seeds=4)) < api.estimate_cost(_race(d=20, k=50, seeds=4))
    assert small < api.estimate_cost(_race(names=("lints", "allseason-sw", "dlinucb")))


def test_sweeps_maps_and_cells_are_estimated():
    spec = SweepSpec.from_file("examples/sweep_small.toml")
    assert api.estimate_cost(spec) == pytest.approx(costs.estimate_units(spec.units()))
    grid = MapGrid.from_file("examples/map_small.toml")
    cells = [k.scenario() for k in grid.cells()]
    assert api.estimate_cost(grid) == pytest.approx(sum(api.estimate_cost(c) for c in cells))
    with pytest.raises(TypeError):
        api.estimate_cost("a race")


def test_a_race_above_the_budget_is_refused_with_the_budget_and_the_command_line():
    race = _race(horizon=50_000, d=20, k=50, names=tuple(api.DEFAULT_POLICIES), seeds=10)
    est = api.estimate_cost(race)
    assert api.check_cost(race, budget=est * 2) == est
    with pytest.raises(api.SpecError) as e:
        api.check_cost(race, budget=est / 2)
    text = str(e.value)
    assert f"at most {est / 2:,.0f} per request" in text and "limits.COST_BUDGET_SECONDS" in text
    assert "python -m allseason run --pattern paper-synthetic --horizon 50000 --d 20" in text


def test_this_machines_factor_scales_every_estimate(monkeypatch):
    race = _race()
    monkeypatch.setenv(costs.FACTOR_ENV, "1")
    one, n_one = api.estimate_cost(race), costs.events_within(60.0, 10, 10, ["lints"], 2)
    one_replay = costs.estimate_replay(5000, 10, 10, ["lints", "random"], 2)
    monkeypatch.setenv(costs.FACTOR_ENV, "2.5")
    assert api.estimate_cost(race) == pytest.approx(2.5 * one)
    assert costs.estimate_replay(5000, 10, 10, ["lints", "random"], 2) == pytest.approx(
        2.5 * one_replay
    )
    # the steps that fit a budget: the inverse, on this machine too
    n = costs.events_within(60.0, 10, 10, ["lints"], 2)
    assert n < n_one and costs.estimate_runs(n, 10, 10, ["lints"], 2) <= 60.0
    assert costs.estimate_runs(n + 1, 10, 10, ["lints"], 2) > 60.0


@pytest.mark.parametrize("text", ["fast", "0", "-1", "nan", "1e9"])
def test_a_bad_factor_in_the_environment_is_one_clear_line(monkeypatch, text):
    monkeypatch.setenv(costs.FACTOR_ENV, text)
    with pytest.raises(api.SpecError) as e:
        costs.machine_factor()
    assert costs.FACTOR_ENV in str(e.value) and "\n" not in str(e.value)


def test_calibrate_measures_the_stored_runs_here(monkeypatch):
    """The factor is the calibration's time here over its time where the prices were
    measured (a fixed time here stands for a machine 3 times slower); the real measurement
    runs the same short runs and gives a positive, finite time."""
    monkeypatch.delenv(costs.FACTOR_ENV)
    monkeypatch.setattr(costs, "_factor", [None])
    assert costs.machine_factor() == 1.0  # not measured yet
    stored = costs.prices()["calibration_s"]
    assert costs.calibrate(lambda: 3 * stored) == pytest.approx(3.0)
    assert costs.machine_factor() == pytest.approx(3.0)
    assert costs.calibrate(lambda: 1e6) == costs.FACTOR_RANGE[1]  # a broken clock, bounded
    assert 0 < calibration_seconds(repeats=1) < float("inf")


def test_the_factor_from_the_environment_is_not_measured(monkeypatch):
    monkeypatch.setenv(costs.FACTOR_ENV, "1.5")
    assert costs.calibrate(lambda: pytest.fail("measured")) == 1.5
