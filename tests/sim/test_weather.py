"""The Seattle weather shop (preset ``seattle-weather``, allseason/envs/weather.py): the
checksummed loader, the regime rule on hand-checked days, the sale probabilities against the
stated rules, common random numbers, the preset's round trips and fixed fields, real dates,
the CLI, and the Pattern builder and Inside page with dates (AppTest).

Skipped with the loader's own message (the install command) when vega-datasets is missing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from allseason import api
from allseason.envs import weather
from allseason.sim.runner import WORLDS, make_env, seed_sequence

try:
    weather.load_weather()
except api.SpecError as e:  # pragma: no cover - the package is in requirements.txt
    pytest.skip(str(e), allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
SC = api.Scenario.from_preset("seattle-weather")


# --- the data -------------------------------------------------------------------------------
def test_loader_reads_the_checksummed_file():
    w = weather.load_weather()
    assert set(w) == {"date", "precipitation", "temp_max", "temp_min", "wind"}
    assert all(len(v) == 1461 for v in w.values())
    assert str(w["date"][0]) == "2012-01-01" and str(w["date"][-1]) == "2015-12-31"
    assert np.all(np.diff(w["date"]).astype(int) == 1)  # every day, in order
    raw = weather.csv_path().read_bytes()
    assert hashlib.sha256(raw).hexdigest() == weather.CSV_SHA256
    # the first data row, read by hand: 2012/01/01,0.0,12.8,5.0,4.7,drizzle
    assert raw.decode().splitlines()[1] == "2012/01/01,0.0,12.8,5.0,4.7,drizzle"
    assert (w["precipitation"][0], w["temp_max"][0], w["temp_min"][0], w["wind"][0]) == (
        0.0,
        12.8,
        5.0,
        4.7,
    )


def test_a_changed_file_is_refused_with_the_install_command(tmp_path, monkeypatch):
    bad = tmp_path / "seattle-weather.csv"
    bad.write_bytes(weather.csv_path().read_bytes().replace(b"12.8", b"13.8", 1))
    monkeypatch.setattr(weather, "csv_path", lambda: bad)
    weather.load_weather.cache_clear()
    try:
        with pytest.raises(api.SpecError, match="sha256.*pip install vega-datasets==0.9.0"):
            weather.load_weather()
    finally:
        monkeypatch.undo()
        weather.load_weather.cache_clear()
    assert len(weather.load_weather()["date"]) == 1461


def test_a_missing_package_names_the_install_command(monkeypatch):
    monkeypatch.setattr(weather.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(api.SpecError) as e:
        weather.csv_path()
    assert e.value.field == "preset" and "pip install vega-datasets==0.9.0" in str(e.value)


# --- the rule -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "day, precipitation, temp_max, regime",
    [
        ("2012-01-01", 0.0, 12.8, "mild & dry"),
        ("2012-01-02", 10.9, 10.6, "wet"),
        ("2012-01-10", 1.0, 6.1, "cold"),  # cold comes before wet
        ("2012-07-01", 0.0, 20.0, "warm & dry"),  # 20 deg C is warm (>=); the label says "rain"
        ("2012-07-02", 2.0, 18.9, "wet"),
        ("2013-11-22", 0.0, 9.4, "cold"),
        ("2013-11-23", 0.0, 11.1, "mild & dry"),
    ],
)
def test_regime_rule_on_hand_checked_days(day, precipitation, temp_max, regime):
    w = weather.load_weather()
    i = int(np.flatnonzero(w["date"] == np.datetime64(day))[0])
    assert (w["precipitation"][i], w["temp_max"][i]) == (precipitation, temp_max)
    assert weather.REGIMES[weather.day_states()[i]] == regime
    assert weather.REGIMES[int(weather.regimes(precipitation, temp_max))] == regime


def test_sale_probabilities_follow_the_stated_rules():
    w = weather.load_weather()
    p, t = w["precipitation"], w["temp_max"]
    P = weather.sale_probability(p, t)
    dry, wet, cold = p < 1.0, p >= 1.0, t < 10.0
    warm_dry, mild_dry = dry & ~cold & (t >= 20), dry & ~cold & (t < 20)
    wet = wet & ~cold
    # the docstring's rules, term by term, on every real day
    np.testing.assert_allclose(P[:, 0], 0.4)
    np.testing.assert_allclose(P[:, 1], 0.1 + 0.6 * warm_dry)
    np.testing.assert_allclose(P[:, 2], 0.05 + 0.1 * mild_dry + 0.45 * warm_dry)
    np.testing.assert_allclose(P[:, 3], 0.1 + 0.5 * wet + 0.2 * cold)
    np.testing.assert_allclose(P[:, 4], 0.1 + 0.5 * cold)
    np.testing.assert_allclose(P, weather.SALE_P[weather.day_states()])  # the table
    best = [weather.PRODUCTS[k] for k in weather.SALE_P.argmax(axis=1)]
    assert best == ["coffee", "sunglasses", "umbrella", "coat"]  # one per regime


def test_segments_are_the_regime_runs_in_steps():
    s = weather.day_states()
    segs = SC.segments
    assert SC.horizon == 1461 * 10 and SC.batch_size == 10 and len(segs) == 500
    assert np.array_equal(SC.pattern.states(), np.repeat(s, 10))
    assert all(a != b for (a, _), (b, _) in zip(segs, segs[1:]))  # runs: no repeats
    assert SC.horizon <= api.LIMITS["horizon"]


# --- the world ------------------------------------------------------------------------------
def test_world_pays_sales_and_the_linear_model_is_exact():
    env = make_env(SC, 0)
    assert isinstance(env, weather.WeatherEnv) and WORLDS["seattle-weather"] is weather.world
    rnd = env.next_round(40)
    assert rnd.arms.shape == (40, 5, 5)
    np.testing.assert_array_equal(rnd.arms[7], np.eye(5))  # one-hot products
    # E[reward | s, k] = <theta_s, x_k>, theta_s = P[s]: exact
    np.testing.assert_allclose(
        np.einsum("nkd,nd->nk", rnd.arms, env.thetas[rnd.state]), rnd.expected
    )
    assert set(np.unique(rnd.outcome)) <= {0.0, 1.0} and np.all(rnd.noise == 0)
    np.testing.assert_array_equal(rnd.payoff, rnd.outcome)
    # the uniforms behind the sales: one per (step, arm) from the world's stream
    u = np.random.default_rng(seed_sequence(SC, 0)).random((40, 5))
    np.testing.assert_array_equal(rnd.outcome, (u < rnd.expected).astype(float))


def test_sale_rates_match_the_probabilities():
    env = weather.WeatherEnv(rng=1)
    rnd = env.next_round(env.horizon)
    for s in range(4):
        m = rnd.state == s
        np.testing.assert_allclose(rnd.outcome[m].mean(axis=0), weather.SALE_P[s], atol=0.03)


def test_common_random_numbers_and_chunking():
    a, b = make_env(SC, 2), make_env(SC, 2)
    whole = a.next_round(1000).outcome
    parts = np.vstack([b.next_round(n).outcome for n in (1, 333, 666)])
    np.testing.assert_array_equal(whole, parts)
    assert not np.array_equal(whole, make_env(SC, 3).next_round(1000).outcome)
    race = api.Race(SC, api.policy_specs(["lints", "sw-lints"], tau=100), 2)
    r1, r2 = api.run_race(race), api.run_race(race, chunk_size=777)
    for key, t in r1.traces.items():
        np.testing.assert_array_equal(t.reward, r2.traces[key].reward)
        np.testing.assert_array_equal(t.arm, r2.traces[key].arm)


# --- the preset -----------------------------------------------------------------------------
def test_preset_round_trips():
    assert "seattle-weather" in api.PRESETS
    assert (SC.d, SC.n_arms, SC.sigma2, SC.batch_size) == (5, 5, 0.25, 10)
    q = SC.to_query()
    assert "segments" not in q and q["horizon"] == "14610" and q["n_states"] == "4"
    assert api.parse_scenario(q, "query") == SC
    assert api.parse_scenario(
        {"preset": "seattle-weather"}, "query", defaults=api.Scenario(seed=4)
    ) == api.Scenario.from_preset("seattle-weather", seed=4)  # other defaults do not leak
    assert api.parse_scenario(SC.to_json(), "json") == SC
    assert api.Scenario.from_dict(json.loads(SC.to_json())) == SC


@pytest.mark.parametrize(
    "kw, field",
    [
        (dict(d=3), "d"),
        (dict(n_arms=4), "n_arms"),
        (dict(sigma2=0.1), "sigma2"),
        (dict(batch_size=5), "batch_size"),
        (dict(horizon=5000), "horizon"),
        (dict(n_states=3), "n_states"),
    ],
)
def test_fixed_fields_are_refused_by_name(kw, field):
    with pytest.raises(api.SpecError) as e:
        api.Scenario.from_preset("seattle-weather", **kw)
    assert e.value.field == field and "seattle-weather" in str(e.value)
    with pytest.raises(api.SpecError) as e:
        api.parse_scenario(
            {"preset": "seattle-weather", **{k: str(v) for k, v in kw.items()}}, "query"
        )
    assert e.value.field == field


def test_edited_segments_are_refused():
    segs = list(SC.segments)
    segs[0] = (segs[0][0], segs[0][1] + 10)
    with pytest.raises(api.SpecError, match="cannot be edited") as e:
        api.Scenario(segments=segs, preset="seattle-weather", **weather.FIXED)
    assert e.value.field == "segments"
    # the same segments as a custom pattern are fine (a linear Gaussian world)
    assert api.Scenario(segments=segs, preset="custom").preset == "custom"


def test_step_dates_and_season_year_table():
    d = api.step_dates(SC)
    assert d.shape == (SC.horizon,) and str(d[0]) == str(d[9]) == "2012-01-01"
    assert str(d[10]) == "2012-01-02" and str(d[-1]) == "2015-12-31"
    assert api.step_dates(api.Scenario()) is None and api.state_names(api.Scenario()) is None
    res = api.run_race(api.Race(SC, api.default_specs(("allseason-sw",)), 1))
    trace = res.traces["allseason-sw", 0]
    tab = api.season_year_table(trace, d, api.state_names(SC))
    assert sorted(tab["year"].unique()) == [2012, 2013, 2014, 2015] and len(tab) == 16
    assert tab["n_batches"].sum() == len(SC.batch_ends())
    # a direct count for one cell: the batches of wet days in 2013
    from allseason.analysis import top_bandit

    ends, top = top_bandit(trace)
    m = (trace.state[ends] == 2) & (d[ends].astype("datetime64[Y]").astype(int) == 2013 - 1970)
    ids, counts = np.unique(top[m], return_counts=True)
    row = tab[(tab.year == 2013) & (tab.state == 2)].iloc[0]
    assert row["season"] == "wet" and row["n_batches"] == m.sum()
    assert row["top_bandit"] == ids[np.argmax(counts)]
    assert row["share"] == pytest.approx(counts.max() / m.sum())


def test_date_ticks_label_the_step_axis():
    from allseason.viz import date_ticks, pattern_timeline

    fig = date_ticks(pattern_timeline(SC.pattern), api.step_dates(SC))
    vals, text = list(fig.layout.xaxis.tickvals), list(fig.layout.xaxis.ticktext)
    assert text[:5] == ["2012", "Apr", "Jul", "Oct", "2013"] and len(text) == 16
    assert vals[0] == 0 and vals[1] == 10 * 91  # 1 April 2012: day 91 (a leap year)


# --- the CLI --------------------------------------------------------------------------------
def test_cli_runs_the_preset(capsys):
    from allseason import cli

    assert cli.main(["run", "--pattern", "seattle-weather", "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "pattern seattle-weather | T=14610 d=5 K=5 sigma2=0.25 batch=10" in out
    assert "allseason-sw" in out and "random" in out
    assert cli.main(["run", "--pattern", "seattle-weather", "--d", "3"]) == 2
    assert "d: the seattle-weather preset fixes d = 5" in capsys.readouterr().err
    assert cli.main(["patterns"]) == 0
    line = next(
        ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("seattle-weather")
    )
    assert line.split()[1:4] == ["T=14610", "states=4", "segments=500:"]


# --- the app (AppTest) ----------------------------------------------------------------------
def test_builder_and_inside_page_with_dates():
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    from allseason.ui import runcache, state

    runcache.store().clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("app_pages/1_Pattern_builder.py")  # opened by its link: Home is not checked
    at.run()
    at.selectbox(key="pb_preset").set_value("seattle-weather")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [e.value for e in at.error] == []
    assert at.session_state[state.SCENARIO] == SC
    assert at.slider(key="pb_d").disabled and at.number_input(key="pb_horizon").disabled
    at.switch_page("app_pages/2_Race.py")
    at.run()
    at.multiselect(key="race_policies").set_value(["allseason-sw", "lints"])
    at.slider(key="race_seeds").set_value(1)
    at.run()
    at.button(key="race_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page("app_pages/3_Inside_All-Season.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    figs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [f["layout"]["title"]["text"] for f in figs]
    heat = figs[next(i for i, t in enumerate(titles) if "per season and year" in t)]
    assert heat["data"][0]["x"] == ["2012", "2013", "2014", "2015"]
    assert heat["data"][0]["y"] == list(weather.REGIMES)
    top = figs[next(i for i, t in enumerate(titles) if "most likely bandit" in t)]
    assert top["layout"]["xaxis"]["ticktext"][:2] == ["2012", "Apr"]
    assert any("Real dates" in m.value and "2015-12-31" in m.value for m in at.markdown)
    runcache.store().clear()
