"""Honest intervals: every "95% interval" over seeds is Student's t, t.ppf(0.975, n - 1) · std
/ √n (allseason.stats), in the CLI's JSON and table, the race's figures, the sweep tables;
with one seed there is no interval (0 in numbers, none drawn)."""

import json
import math

import numpy as np
import pytest
from scipy.stats import t as student_t

from allseason import api
from allseason.cli import main
from allseason.stats import ci95_halfwidth, t_quantile


def _t(n):
    return student_t.ppf(0.975, n - 1)


# -- the helper --------------------------------------------------------------------------------


def test_t_quantile_is_students_not_normal():
    assert t_quantile(3) == pytest.approx(4.302652729749, rel=1e-11)  # tables: 4.303
    assert t_quantile(5) == pytest.approx(2.776445105198, rel=1e-11)  # tables: 2.776
    assert t_quantile(10_000) == pytest.approx(1.96, abs=1e-3)  # the normal limit
    for n in (2, 3, 5, 10, 30):
        assert t_quantile(n) == _t(n) and t_quantile(n) > 1.96
    assert math.isnan(t_quantile(1)) and math.isnan(t_quantile(0))
    assert np.array_equal(np.isnan(t_quantile(np.array([1, 2, 3]))), [True, False, False])


def test_ci95_halfwidth_scalars_arrays_and_one_seed():
    assert ci95_halfwidth(0.3, 3) == pytest.approx(_t(3) * 0.3 / math.sqrt(3), rel=1e-15)
    assert isinstance(ci95_halfwidth(0.3, 3), float)
    # one seed: the interval is undefined and reported as 0, even if the std is NaN
    assert ci95_halfwidth(0.0, 1) == 0.0 and ci95_halfwidth(float("nan"), 1) == 0.0
    std, n = np.array([0.1, 0.2, np.nan, 0.4]), np.array([3, 5, 1, 1])
    got = ci95_halfwidth(std, n)
    assert got.shape == (4,)
    np.testing.assert_allclose(
        got[:2], [_t(3) * 0.1 / math.sqrt(3), _t(5) * 0.2 / math.sqrt(5)], rtol=1e-15
    )
    assert got[2] == 0.0 and got[3] == 0.0


# -- the CLI -------------------------------------------------------------------------------------


def test_cli_json_ci95_is_student_t_at_three_seeds(capsys):
    assert main(["run", "--seeds", "3", "--horizon", "600", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == set(api.DEFAULT_POLICIES)
    for label, row in out.items():
        assert row["std_reward"] > 0, label
        expected = student_t.ppf(0.975, 2) * row["std_reward"] / math.sqrt(3)
        assert row["ci95"] == pytest.approx(expected, rel=1e-12), label
        assert row["ci95"] > 2 * 1.96 * row["std_reward"] / math.sqrt(3)  # not the normal 1.96


def test_cli_one_seed_has_no_interval(capsys):
    args = [
        "run",
        "--seeds",
        "1",
        "--horizon",
        "300",
        "--pattern",
        "regular",
        "--policies",
        "lints,random",
    ]
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert all(row["ci95"] == 0.0 and row["std_reward"] == 0.0 for row in out.values())
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "95% (t)" in text and "one seed: no std and no 95% interval" in text


def test_cli_table_prints_the_t_half_width(capsys):
    args = [
        "run",
        "--seeds",
        "3",
        "--horizon",
        "300",
        "--pattern",
        "regular",
        "--policies",
        "lints",
    ]
    assert main(args + ["--json"]) == 0
    row = json.loads(capsys.readouterr().out)["lints"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert f"±{row['ci95']:.4f}" in text
    assert "Student's t" in text and f"{student_t.ppf(0.975, 2):.3f}" in text


# -- the figures ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def race3():
    sc = api.Scenario.from_preset("regular", horizon=300)
    race = api.Race(sc, api.policy_specs(["lints", "allseason-sw", "random"]), 3)
    return api.run_race(race)


def test_leaderboard_error_bars_are_t(race3):
    from allseason.viz.leaderboard import leaderboard_figure, leaderboard_table
    from allseason.viz.style import policy_name

    summary = race3.summary()
    fig = leaderboard_figure(race3.to_frames()["summary"])
    assert "Student's t" in fig.layout.title.subtitle.text
    for tr in fig.data:
        label = next(lab for lab in summary if policy_name(lab) == tr.name)
        s = summary[label]
        assert tr.error_x.array[0] == pytest.approx(
            _t(3) * s["std_reward"] / math.sqrt(3), rel=1e-12
        )
        assert tr.error_x.visible
    table = leaderboard_table(summary)
    assert "Mean reward / step (± 95% t)" in table.columns


def test_reward_by_state_error_bars_are_t(race3):
    from allseason.viz.per_state import reward_by_state_figure
    from allseason.viz.style import policy_name, state_label

    steps = race3.to_frames()["steps"]
    fig = reward_by_state_figure(steps)
    per_seed = steps.groupby(["policy", "state", "seed"])["reward"].mean()
    bars = [tr for tr in fig.data if tr.type == "bar"]
    assert len(bars) == 3
    for tr in bars:
        label = next(lab for lab in race3.labels if policy_name(lab) == tr.name)
        for x, half in zip(tr.x, tr.error_y.array):
            state = next(s for s in steps["state"].unique() if state_label(s) == x)
            v = per_seed.loc[label, state].to_numpy()
            assert half == pytest.approx(_t(len(v)) * v.std(ddof=1) / math.sqrt(len(v)), rel=1e-12)
    assert "Student's t" in fig.layout.title.subtitle.text


def test_cumulative_ci95_band_is_t(race3):
    from allseason.viz.race import BANDS, cumulative_figure
    from allseason.viz.style import policy_name

    steps = race3.to_frames()["steps"]
    fig = cumulative_figure(steps, race3.race.scenario.pattern, "reward", band="ci95")
    assert "Student's t" in BANDS["ci95"]
    for label in race3.labels:
        name = policy_name(label)
        band = next(tr for tr in fig.data if tr.name == f"{name} {BANDS['ci95']} over 3 seeds")
        mean = next(tr for tr in fig.data if tr.name == name)
        # one closed shape: the upper edge forward, the lower edge backward
        n = len(mean.x)
        assert band.fill == "toself" and list(band.x) == list(mean.x) + list(mean.x)[::-1]
        upper, lower = np.asarray(band.y[:n]), np.asarray(band.y[n:])[::-1]
        np.testing.assert_allclose(upper - mean.y, mean.y - lower, rtol=1e-9, atol=1e-9)
        wide = (
            steps[steps["policy"] == label]
            .pivot(index="step", columns="seed", values="reward")
            .cumsum()
        )
        sd = wide.std(axis=1, ddof=1).to_numpy()[np.asarray(mean.x)]
        np.testing.assert_allclose(
            upper - np.asarray(mean.y), _t(3) * sd / math.sqrt(3), rtol=1e-9, atol=1e-9
        )


def test_one_seed_figures_draw_no_interval():
    from allseason.viz.leaderboard import leaderboard_figure
    from allseason.viz.per_state import reward_by_state_figure
    from allseason.viz.race import cumulative_figure

    sc = api.Scenario.from_preset("regular", horizon=200)
    res = api.run_race(api.Race(sc, api.policy_specs(["lints", "random"]), 1))
    frames = res.to_frames()
    assert (frames["summary"]["ci95"] == 0).all()
    board = leaderboard_figure(frames["summary"])
    assert not any(tr.error_x.visible for tr in board.data)
    assert board.layout.title.subtitle.text == "one seed: no interval"
    states = reward_by_state_figure(frames["steps"])
    bars = [tr for tr in states.data if tr.type == "bar"]
    assert all(not tr.error_y.visible and not np.any(tr.error_y.array) for tr in bars)
    band = cumulative_figure(frames["steps"], sc.pattern, band="ci95")
    assert all(tr.fill is None for tr in band.data)  # no band with one seed


# -- sweeps --------------------------------------------------------------------------------------


def test_sweep_settings_and_report_use_t(tmp_path):
    from allseason import sweeps

    spec = sweeps.SweepSpec(
        scenarios=[api.Scenario.from_preset("regular", horizon=200)],
        policies=[sweeps.PolicyGrid("lints")],
        seeds=3,
        name="t",
    )
    with sweeps.ResultStore(tmp_path) as store:
        for u in spec.units():
            store.add(sweeps.run_unit(u))
    (tmp_path / sweeps.SPEC_FILE).write_text(spec.to_json())
    settings = sweeps.settings_table(sweeps.load_runs(tmp_path))
    row = settings.iloc[0]
    assert row["n_seeds"] == 3
    for m in sweeps.METRICS:
        assert row[f"{m}_ci95"] == pytest.approx(_t(3) * row[f"{m}_std"] / math.sqrt(3), rel=1e-12)
    text, _ = sweeps.report_text(tmp_path)
    assert "95% (t)" in text and f"±{row['mean_reward_ci95']:.4f}" in text
