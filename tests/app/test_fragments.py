"""Controls that change one part of a page rerun only that part (``st.fragment``).

The browser sends a widget change inside a fragment as a rerun of that fragment alone; AppTest
always reruns the whole script, so :func:`run_fragment` sends what the browser sends (the
widget states, and the fragment's id in ``RerunData.fragment_id_queue``) through AppTest's own
runner. The element tree of such a run holds only what that run sent: a part of the page that
is not in it was neither rerun nor re-sent. Spies count the page-level calls and the engine's
races; the figures' numbers are checked against the engine's run of the same race.

The Run button needs no such help: its callback (``race_settings.request_run``) asks for a rerun of
the results section by key (``st.rerun(key)``), which AppTest's runner carries out as the
server does.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("streamlit")
pytest.importorskip("plotly")

from conftest import run_fragment
from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.ui import frame, keys, race_settings, runcache, state, tour
from allseason.ui import race as race_results
from allseason.viz.style import policy_name

from .conftest import APP, figures, title_of, values

pytestmark = pytest.mark.usefixtures("fresh_cache")

RACE, INSIDE, TOUR = (
    "app_pages/2_Race.py",
    "app_pages/3_Inside_All-Season.py",
    "app_pages/6_Guided_tour.py",
)
TIMEOUT = 120
SMALL = api.Scenario(
    segments=((0, 300), (1, 200), (0, 200), (2, 150)),
    d=2,
    n_arms=4,
    sigma2=0.1,
    batch_size=5,
    seed=3,
    preset="custom",
)
POLICIES = ["allseason-sw", "lints"]


# --- helpers (the shared ones: tests/app/conftest.py) ---------------------------------------
def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def counting(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.name`` by a wrapper that records each call; returns the record."""
    calls, real = [], getattr(owner, name)

    @functools.wraps(real)
    def spy(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(owner, name, spy)
    return calls


def no_engine(monkeypatch) -> None:
    """From here on, any race computed fails the test."""

    def boom(*a, **k):
        raise AssertionError("the race was computed again")

    monkeypatch.setattr(api, "iter_race", boom)
    monkeypatch.setattr(api, "run_race", boom)


def mean_final(race: api.Race, column: str) -> dict[str, float]:
    """Per contestant, the mean over seeds of the summed ``column`` (reward or regret), from
    the engine directly."""
    result = api.run_race(race)
    out = {}
    for p in race.policies:
        traces = [result.traces[p.label, k] for k in range(race.n_seeds)]
        per_seed = [
            float(np.sum(t.reward) if column == "reward" else np.sum(t.regret)) for t in traces
        ]
        out[p.label] = float(np.mean(per_seed))
    return out


def last_points(fig: dict) -> dict[str, tuple[float, float]]:
    """(last x, last y) of each contestant's mean line, by its name."""
    return {
        t["name"]: (float(values(t["x"])[-1]), float(values(t["y"])[-1]))
        for t in fig["data"]
        if t.get("mode") == "lines+markers"
    }


@pytest.fixture
def race_page(monkeypatch):
    """The Race page with the small race set (two policies, two seeds), not run yet; and
    the race it describes."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.session_state[state.SCENARIO] = SMALL
    at.switch_page(RACE)
    at.run()
    at.multiselect(key="race_policies").set_value(POLICIES)
    at.slider(key="race_seeds").set_value(2)
    at.run()
    assert_clean(at)
    choice = replace(state.default_choice(), policies=POLICIES, n_seeds=2)
    return at, state.race(choice, SMALL)


# --- the Race page --------------------------------------------------------------------------
def test_run_reruns_only_the_results_section(race_page, monkeypatch):
    at, race = race_page
    settings = counting(monkeypatch, race_settings, "race_settings")
    timeline = counting(monkeypatch, frame, "pattern_preview")
    raced = counting(monkeypatch, api, "iter_race")
    at.button(key="race_run").click().run()
    assert_clean(at)
    assert (len(settings), len(timeline), len(raced)) == (0, 0, 1)
    # what this run sent: the results only (no title, no settings, no season timeline)
    assert not at.title and not at.get("multiselect") and not at.get("slider")
    # the regret curves, and beside them the final regret of each seed
    assert [title_of(f) for f in figures(at)] == [
        "Cumulative regret (lower is better)",
        "Final regret over seeds (lower is better)",
    ]
    # in 3/5 of the width the curves have no Plotly legend: an HTML key under them
    assert figures(at)[0]["layout"]["showlegend"] is False
    assert sum('aria-label="legend"' in m.value for m in at.markdown) == 1
    assert not [t for t in figures(at)[0]["data"] if t["x"] == [None]]  # no legend-only trace
    # its HTML download is the figure with its legend (no key beside it there)
    spec = race_results.RACE_CHARTS["regret"]
    full = spec.download(runcache.get_or_recompute(runcache.key_of(race)))
    assert full.layout.showlegend is not False and len(full.data) > len(figures(at)[0]["data"])
    assert len(at.table) == 1 and len(at.table[0].value) == len(POLICIES)
    assert at.session_state[keys.LAST_RACE] == race
    # the figure's numbers are the engine's: each mean line ends on the mean cumulative
    # regret over the seeds, at the last step
    want = mean_final(race, "regret")
    got = last_points(figures(at)[0])
    assert set(got) == {policy_name(p) for p in POLICIES}
    for label, value in want.items():
        x, y = got[policy_name(label)]
        assert x == SMALL.horizon - 1 and y == pytest.approx(value, rel=1e-12)


def test_a_setting_changed_with_the_click_reruns_the_whole_page(race_page, monkeypatch):
    """A value typed and the button pressed in one interaction: the race is built from the
    new value (the whole page reruns, not the section with the old race)."""
    at, _ = race_page
    settings = counting(monkeypatch, race_settings, "race_settings")
    at.slider(key="race_seeds").set_value(3)
    at.button(key="race_run").click().run()
    assert_clean(at)
    assert len(settings) == 1 and at.title[0].value == "Race"
    assert at.session_state[keys.LAST_RACE].n_seeds == 3


def test_the_chart_picker_reruns_only_the_chart(race_page, monkeypatch):
    at, _ = race_page
    at.button(key="race_run").click().run()
    assert_clean(at)
    no_engine(monkeypatch)
    settings = counting(monkeypatch, race_settings, "race_settings")
    section = counting(monkeypatch, runcache, "cached")  # the results section looks the race up
    for key, title in (
        ("reward", "Cumulative reward"),
        ("board", "Leaderboard"),
        ("states", "each true state"),
        ("regret", "Cumulative regret"),
    ):
        at.segmented_control(key=race_results.RACE_CHART_PICK).set_value(key)
        run_fragment(at, "race_chart", monkeypatch)
        assert_clean(at)
        # what this run sent: the picker, one chart (the regret curves: with the final regret
        # per seed beside them), its caption and download; not the leaderboard table, the
        # downloads of the run or anything above
        n = 2 if key == "regret" else 1
        assert len(figures(at)) == n and title in title_of(figures(at)[0])
        assert not at.table and not at.title and not at.get("multiselect")
        assert [b.label for b in at.get("download_button")] == ["HTML"] * n
        assert at.session_state[race_results.RACE_CHART] == key
    assert (len(settings), len(section)) == (0, 0)
    # the choice is kept: a whole-page rerun shows the chart last picked
    at.segmented_control(key=race_results.RACE_CHART_PICK).set_value("reward")
    run_fragment(at, "race_chart", monkeypatch)
    at.run()
    assert_clean(at)
    assert [title_of(f).split(" (")[0] for f in figures(at)] == [
        "Season pattern: the true state at each step",
        "Cumulative reward",
    ]


def test_the_charts_show_the_engines_numbers(race_page, monkeypatch):
    at, race = race_page
    at.button(key="race_run").click().run()
    want = mean_final(race, "reward")
    no_engine(monkeypatch)
    at.segmented_control(key=race_results.RACE_CHART_PICK).set_value("reward")
    run_fragment(at, "race_chart", monkeypatch)
    got = last_points(figures(at)[0])
    for label, value in want.items():
        assert got[policy_name(label)][1] == pytest.approx(value, rel=1e-12)
    at.segmented_control(key=race_results.RACE_CHART_PICK).set_value("board")
    run_fragment(at, "race_chart", monkeypatch)
    board = figures(at)[0]
    bars = {t["name"]: float(values(t["x"])[0]) for t in board["data"] if t["type"] == "bar"}
    for label, value in want.items():  # mean reward per step = summed reward / horizon
        assert bars[policy_name(label)] == pytest.approx(value / SMALL.horizon, rel=1e-9)


def test_every_chart_of_the_picker_builds_from_a_finished_race():
    """The registry's contract: every chart builds from a finished race, and the live ones
    from a race still running (a new chart is one more entry)."""
    race = api.Race(SMALL, api.policy_specs(POLICIES), 2)
    run = runcache.RaceRun(runcache.key_of(race), race, api.run_race(race))
    steps = run.result.curves_frame(runcache.LIVE_POINTS)
    for key, chart in race_results.RACE_CHARTS.items():
        fig = chart.build(run)
        assert fig.layout.title.text and chart.caption and chart.name, key
        if chart.live:
            assert chart.live(steps, run.result.summary(), SMALL.pattern).data, key
    assert next(iter(race_results.RACE_CHARTS)) == "regret"  # shown first
    assert runcache.final_curves(run) is runcache.final_curves(run)  # sampled once per run


# --- Inside All-Season ----------------------------------------------------------------------
def test_inside_view_picker_reruns_only_the_views(race_page, monkeypatch):
    at, _ = race_page
    at.button(key="race_run").click().run()
    at.switch_page(INSIDE)
    at.run()
    assert_clean(at)
    assert at.radio(key="inside_view").value == "Weights"
    no_engine(monkeypatch)
    page_calls = counting(monkeypatch, runcache, "last_run")
    at.radio(key="inside_view").set_value("Births & prunings")
    run_fragment(at, "inside_views", monkeypatch)
    assert_clean(at)
    assert not page_calls and not at.title  # the page around the views was not rerun
    assert [title_of(f).split(" —")[0] for f in figures(at)] == ["Lives of the base bandits"]
    assert at.query_params["view"] in ("births", ["births"])  # the link follows
    seed0 = figures(at)[0]
    at.selectbox(key="inside_seed").set_value(1)
    run_fragment(at, "inside_views", monkeypatch)
    assert_clean(at)
    assert at.query_params["inside_seed"] in ("1", ["1"])
    seed1 = figures(at)[0]
    assert title_of(seed1) == title_of(seed0) and seed1["data"] != seed0["data"]
    assert not page_calls


# --- the guided tour ------------------------------------------------------------------------
def test_tour_next_reruns_only_the_step(monkeypatch):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(TOUR)
    at.query_params["step"] = "2"
    at.run()
    assert_clean(at)
    frames = counting(monkeypatch, tour, "page_frame")
    at.button(key="tour_next").click()
    run_fragment(at, "tour_step", monkeypatch)
    assert_clean(at)
    assert not frames  # the page frame (config, sidebar) was not rerun
    assert at.title[0].value == "Step 3 of 7 · Who holds the weight"
    assert at.query_params["step"] in ("3", ["3"])
    assert len(figures(at)) == 1 and at.segmented_control(key="tour_pick").value == 3
    at.segmented_control(key="tour_pick").set_value(6)
    run_fragment(at, "tour_step", monkeypatch)
    assert_clean(at)
    assert at.title[0].value.startswith("Step 6 of 7") and not frames
