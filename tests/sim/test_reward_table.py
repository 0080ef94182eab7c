"""A per-arm reward table as a world: seasons (the best arm of each period), the sale rule
with common random numbers, a race on it, and the dates on its steps."""

from __future__ import annotations

import numpy as np
import pytest

from allseason import api
from allseason.logs import examples
from allseason.logs.table import TableEnv, parse_reward_table

TABLE = (
    b"time,arm,reward\n2024-01-01,a,0.9\n2024-01-01,b,0.1\n2024-01-08,a,0.2\n"
    b"2024-01-08,b,0.7\n2024-01-15,b,0.6\n2024-01-15,a,0.3\n"
)


def test_parse_seasons_and_scenario():
    t = parse_reward_table(TABLE)
    assert t.time_kind == "date" and t.arm_names == ("a", "b")
    assert t.rates.tolist() == [[0.9, 0.1], [0.2, 0.7], [0.3, 0.6]]
    assert t.seasons.tolist() == [0, 1, 1] and t.state_names == ["a best", "b best"]
    sc = t.scenario(steps=4)
    assert sc.segments == ((0, 4), (1, 8)) and sc.d == sc.n_arms == 2
    assert sc.batch_size == 4 and sc.sigma2 == 0.25
    dates = api.step_dates(sc, world=t)
    assert [str(d) for d in dates[[0, 3, 4, 11]]] == [
        "2024-01-01",
        "2024-01-01",
        "2024-01-08",
        "2024-01-15",
    ]
    assert api.state_names(sc, world=t) == ["a best", "b best"]


def test_integer_periods_have_no_dates_and_may_skip():
    t = parse_reward_table(b"time,arm,reward\n1,0,0.5\n1,1,0.2\n5,0,0.1\n5,1,0.9\n")
    assert t.time_kind == "number" and t.times.tolist() == [1, 5]
    assert api.step_dates(t.scenario(), world=t) is None


def test_the_sale_rule_and_common_random_numbers():
    t = parse_reward_table(TABLE)
    sc = t.scenario(steps=1000)
    env = TableEnv(t, 2000, np.random.default_rng(0))  # (the env takes any batch)
    rnd = env.next_round(6000)
    assert np.allclose(rnd.expected[:2000], [0.9, 0.1]) and (rnd.noise == 0).all()
    assert rnd.state.tolist() == [0] * 2000 + [1] * 4000
    sales = rnd.outcome[:2000].mean(axis=0)
    assert abs(sales[0] - 0.9) < 0.03 and abs(sales[1] - 0.1) < 0.03
    # the draws do not depend on the chunk size
    env2 = TableEnv(t, 2000, np.random.default_rng(0))
    parts = [env2.next_round(n).outcome for n in (1, 999, 3000, 2000)]
    assert np.array_equal(np.concatenate(parts), rnd.outcome)
    assert sc.horizon == 3000


def test_a_race_on_the_example_table():
    t = api.read_user_file(examples.seasonal_table())
    assert isinstance(t, api.RewardTable) and t.n_periods == examples.WEEKS
    sc = t.scenario(steps=10)
    race = api.Race(sc, api.default_specs(api.OFFLINE_POLICIES + api.REFERENCES), 2)
    result = api.run_race(race, world=t)
    s = result.summary()
    assert s["oracle-state"]["mean_reward"] > s["random"]["mean_reward"] + 0.15
    # the same race twice: the same result (the world is seeded from the scenario)
    again = api.run_race(race, world=t).summary()
    assert again["allseason-sw"]["mean_reward"] == s["allseason-sw"]["mean_reward"]
    dates = api.step_dates(sc, world=t)
    table = api.season_year_table(
        result.traces["allseason-sw", 0], dates, api.state_names(sc, world=t)
    )
    assert set(table["year"]) == {2021, 2022, 2023, 2024}
    assert set(table["season"]) == {"coat best", "coffee best", "sunglasses best", "umbrella best"}


def test_a_world_for_another_scenario_is_refused():
    t = parse_reward_table(TABLE)
    with pytest.raises(api.SpecError, match="RewardTable.scenario"):
        api.run_race(api.Race(api.Scenario(), api.policy_specs(["lints"]), 1), world=t)
