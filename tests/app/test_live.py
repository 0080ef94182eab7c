"""The Live page under AppTest: the stage's ticks, switching seasons, a new season, pause and
resume, bad speeds, too many seasons, the idle pause, and "Analyse this show".

How the stage is driven: AppTest has no browser, so ``run_every`` never fires on a timer.
Every full run (``at.run()``) runs the stage once inline, as the server does on a page load;
:func:`tick` reruns the stage alone, exactly as the browser's timer asks for it (the
fragment's id in ``RerunData.fragment_id_queue``, the helper of tests/app/test_fragments.py).
A button of the stage is clicked with ``at.button(key=...).click()`` followed by
:func:`tick` (the browser reruns the fragment a widget is in). Each tick plays
``speed × INTERVAL`` steps; the figures' numbers are compared with the engine's
``LiveRun.frame()`` of the session's run.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
pytest.importorskip("plotly")

from conftest import open_app_page, run_fragment
from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.ui import keys, live, state

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
LIVE = "app_pages/8_Live.py"
TIMEOUT = 120


# --- helpers --------------------------------------------------------------------------------
def open_live(query: dict | None = None) -> AppTest:
    return open_app_page(LIVE, query=query, timeout=TIMEOUT, from_home=False)


def tick(at: AppTest, monkeypatch, key: str = "live_stage") -> AppTest:
    """Rerun the stage only, as the browser's ``run_every`` timer (or a click on one of its
    buttons) asks for it."""
    return run_fragment(at, key, monkeypatch)


def click(at: AppTest, key: str, monkeypatch) -> AppTest:
    at.button(key=key).click()
    return tick(at, monkeypatch)


def click_new(at: AppTest, monkeypatch) -> AppTest:
    """Click "New season": its key names the season it makes (``live_new_<k>``)."""
    return click(at, f"{live.NEW_SEASON_KEY}{run_of(at).n_states + 1}", monkeypatch)


def values(v) -> np.ndarray:
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
    return np.asarray(v, dtype=float)


def figures(at: AppTest) -> dict[str, dict]:
    """The stage's figures by their key's name (rate, ribbon, since)."""
    out = {}
    for c in at.get("plotly_chart"):
        fig = json.loads(c.proto.spec)
        title = fig["layout"]["title"]["text"]
        name = (
            "rate"
            if title.startswith("Reward")
            else "since"
            if title.startswith("Regret")
            else "ribbon"
        )
        out[name] = fig
    return out


def run_of(at: AppTest) -> api.LiveRun:
    return at.session_state[live.RUN]


def status(at: AppTest) -> str:
    return next(m.value for m in at.markdown if 'class="live-status"' in m.value)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def assert_figures_match_the_engine(at: AppTest) -> None:
    run = run_of(at)
    frame = run.frame()
    figs = figures(at)
    rate = figs["rate"]["data"]
    assert len(rate) == len(frame.labels)
    for i, trace in enumerate(rate):
        assert values(trace["x"])[-1] == frame.steps[-1]
        assert values(trace["y"])[-1] == pytest.approx(frame.rate[i, -1], abs=1e-12)
    names = [t["name"] for t in rate]
    assert "oracle (knows the seasons)" in names
    since = figs["since"]
    for i, trace in enumerate(since["data"]):
        assert values(trace["y"])[-1] == pytest.approx(frame.regret_since_switch[i], abs=1e-9)
    assert f'data-step="{frame.t}"' in status(at)
    assert f'data-season="{frame.current_state + 1}"' in status(at)


@pytest.fixture(autouse=True)
def no_debounce(monkeypatch):
    """AppTest's clicks come faster than a person's: no debounce (tested on its own)."""
    monkeypatch.setattr(live, "DEBOUNCE", 0.0)


# --- tests ----------------------------------------------------------------------------------
def test_the_stage_ticks_and_its_figures_are_the_engines(monkeypatch):
    at = open_live()
    assert_clean(at)
    per = live.steps_per_frame(live.SPEED_DEFAULT)
    assert run_of(at).t == per  # the page's first run plays one frame
    for k in range(2, 5):
        tick(at, monkeypatch)
        assert_clean(at)
        assert run_of(at).t == k * per
    # a tick sends the stage only: no title, no sidebar settings
    assert not at.title and not at.sidebar.slider
    assert_figures_match_the_engine(at)
    assert [b.label for b in at.button if b.key.startswith("live_season")] == ["1"]


def test_new_season_and_switching_back(monkeypatch):
    at = open_live()
    for _ in range(3):
        tick(at, monkeypatch)
    click_new(at, monkeypatch)
    assert_clean(at)
    run = run_of(at)
    assert (run.n_states, run.state) == (2, 1)
    assert 'data-season="2"' in status(at)
    assert [b.label for b in at.button if b.key.startswith("live_season")] == ["1", "2"]
    ticker = [m.value for m in at.markdown if "live-ticker" in m.value][0]
    assert "new season 2" in ticker
    for _ in range(3):
        tick(at, monkeypatch)
    click(at, "live_season_1", monkeypatch)
    assert_clean(at)
    assert run_of(at).state == 0 and run_of(at).n_states == 2
    assert_figures_match_the_engine(at)
    assert "season 1 is back" in [m.value for m in at.markdown if "live-ticker" in m.value][0]
    # the schedule as played: season 1, 2, then 1 again
    assert [s for s, _ in run_of(at).schedule()] == [0, 1, 0]
    ribbon = figures(at)["ribbon"]
    assert {t["name"] for t in ribbon["data"]} >= {"season 1", "season 2"}


def test_pause_and_resume(monkeypatch):
    at = open_live()
    click(at, live.PAUSE_KEY, monkeypatch)  # the stage asks for the whole page again
    assert_clean(at)
    assert at.session_state[live.PAUSED] is True
    t = run_of(at).t
    for _ in range(3):
        tick(at, monkeypatch)
    at.run()
    assert run_of(at).t == t  # paused: no steps, and the stage has no run_every
    assert "paused" in status(at)
    assert at.button(key=live.RESUME_KEY).label == "Resume"
    assert not [b for b in at.button if b.key == live.PAUSE_KEY]
    # seasons can be switched while paused; the first frame shows the new one
    click_new(at, monkeypatch)
    assert 'data-season="2"' in status(at) and run_of(at).t == t
    click(at, live.RESUME_KEY, monkeypatch)
    assert at.session_state[live.PAUSED] is False
    tick(at, monkeypatch)
    assert run_of(at).t > t
    assert_clean(at)


class Clock:
    """The Live page's clock in a test: ``monotonic()`` (the debounce's) moves only when the
    test moves it; ``time()`` is the wall clock (the idle pause's)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return time.time()


def test_a_double_delivered_click_counts_once(monkeypatch):
    """Chromium can deliver one click on "New season" twice, 0.02-0.2 s apart: the second
    call within DEBOUNCE is dropped, and a click DEBOUNCE later counts. The debounce reads
    the page's clock, set here: with the wall clock, the gap between the two calls was the
    time AppTest took to run the first click's tick, which on a loaded machine exceeded
    DEBOUNCE, and then the repeated click added a third season (the flake)."""
    clock = Clock()
    monkeypatch.setattr(live, "time", clock)
    monkeypatch.setattr(live, "DEBOUNCE", 0.5)
    at = open_live()
    click_new(at, monkeypatch)
    assert run_of(at).n_states == 2
    clock.now += 0.1
    click_new(at, monkeypatch)  # the same click again, 0.1 s later (chromium)
    assert_clean(at)
    assert run_of(at).n_states == 2
    clock.now += 0.5  # a new click, DEBOUNCE after the last counted one: a new season
    click_new(at, monkeypatch)
    assert run_of(at).n_states == 3


def test_a_click_delivered_again_after_the_debounce_adds_no_season(monkeypatch):
    """On a loaded machine the second delivery of one "New season" click came more than
    DEBOUNCE after the first (tests/browser/test_live_shortcuts.py saw season 3 after one N,
    2026-11-27). The button is keyed by the season it makes, so that second delivery is the
    callback of the button the browser showed: its target, season 2, exists by then, and
    nothing changes. The redrawn button is another widget, for season 3."""
    clock = Clock()
    monkeypatch.setattr(live, "time", clock)
    at = open_live()
    assert at.button(key="live_new_2").label == "New season"
    click_new(at, monkeypatch)
    run = run_of(at)
    assert (run.n_states, run.state) == (2, 1)
    assert [b.key for b in at.button if b.key.startswith(live.NEW_SEASON_KEY)] == ["live_new_3"]
    # the late second call of the first click: its button's own arguments, 2 s later
    clock.now += 2.0
    session = {live.RUN: run, live.LAST_CALL: at.session_state[live.LAST_CALL]}
    monkeypatch.setattr(live.st, "session_state", session)
    live._switch(1, "new")
    assert (run.n_states, run.state) == (2, 1)
    live._switch(2, "new")  # whereas the redrawn button's click makes season 3
    assert (run.n_states, run.state) == (3, 2)


def test_a_pause_delivered_again_after_the_debounce_stays_paused(monkeypatch):
    """The same late second delivery, of a "P": the browser showed Pause, the page was
    redrawn with Resume, and the click came again 2 s later (tests/browser/
    test_live_shortcuts.py saw the show play on after "paused", 2026-11-27). Pause and
    Resume are two widgets, so that delivery is Pause's own callback: a no-op, which leaves
    the stage taking keys."""
    clock = Clock()
    monkeypatch.setattr(live, "time", clock)
    at = open_live()
    click(at, live.PAUSE_KEY, monkeypatch)
    assert at.session_state[live.PAUSED] is True
    assert [b.key for b in at.button if b.key in (live.PAUSE_KEY, live.RESUME_KEY)] == [
        live.RESUME_KEY
    ]
    clock.now += 2.0
    session = {live.LAST_CALL: at.session_state[live.LAST_CALL], live.PAUSED: True}
    monkeypatch.setattr(live.st, "session_state", session)
    live._pause(True)  # the Pause button's arguments: still paused
    assert session[live.PAUSED] is True
    # and nothing to redraw: no page run follows, so the stage must not wait for one (set,
    # REDEFINING would drop every later key and click: the stage stopped answering)
    assert live.REDEFINING not in session
    clock.now += 2.0
    live._pause(False)  # whereas Resume's click resumes
    assert session[live.PAUSED] is False
    # the callback never marks the page as redrawn: the stage does, beside its st.rerun
    assert live.REDEFINING not in session


@pytest.mark.parametrize(
    "raw, used, words",
    [
        (1000, live.SPEED_MAX, "got 1000"),
        (0, live.SPEED_MIN, "got 0"),
        ("fast", live.SPEED_DEFAULT, "“fast”"),
        (-3.5, live.SPEED_MIN, "got -3.5"),
        ("inf", live.SPEED_DEFAULT, "“inf”"),
        (None, live.SPEED_DEFAULT, None),
    ],
)
def test_a_bad_speed_in_the_session_gets_a_warning_not_a_traceback(raw, used, words):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state[live.SPEED] = raw
    at.switch_page(LIVE)
    at.run()
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    if words is None:  # no speed set: the default, no warning
        assert not warned
    else:
        assert "Speed" in warned and words in warned and f"{used} is used" in warned
    assert at.session_state[live.SPEED] == used
    assert run_of(at).t == live.steps_per_frame(used)


def test_a_bad_speed_in_the_link_gets_a_warning():
    at = open_live({"speed": "9999"})
    assert not at.exception
    assert any("got 9999" in w.value and "400 is used" in w.value for w in at.warning)
    ok = open_live({"speed": "80"})
    assert not ok.warning and ok.session_state[live.SPEED] == 80


def test_too_many_seasons_gets_a_message(monkeypatch):
    at = open_live()
    for _ in range(8):
        click_new(at, monkeypatch)
    assert run_of(at).n_states == 9
    assert_clean(at)
    click_new(at, monkeypatch)  # a tenth season
    assert not at.exception
    warned = " ".join(w.value for w in at.warning)
    assert "at most 9 seasons" in warned
    assert run_of(at).n_states == 9 and run_of(at).state == 8
    click(at, "live_season_4", monkeypatch)  # the next control clears the message
    assert not at.warning and run_of(at).state == 3


def test_the_show_pauses_by_itself_when_idle(monkeypatch):
    at = open_live()
    at.session_state[live.TOUCHED] = time.time() - live.IDLE_MINUTES * 60 - 1
    t = run_of(at).t
    tick(at, monkeypatch)  # the stage sees the idle clock and reruns the page
    assert at.session_state[live.PAUSED] is True
    assert run_of(at).t == t
    assert any(f"{live.IDLE_MINUTES} minutes" in i.value for i in at.info)
    assert not at.exception


def test_contestants_and_seed_restart_the_show():
    at = open_live()
    at.sidebar.multiselect(key=live.POLICIES_W).set_value(["allseason-sw", "lints"]).run()
    assert_clean(at)
    assert run_of(at).labels == ("allseason-sw", "lints")
    at.sidebar.number_input(key=live.SEED_W).set_value(7).run()
    assert at.session_state[live.CONFIG] == (("allseason-sw", "lints"), 7)
    at.sidebar.multiselect(key=live.POLICIES_W).set_value([]).run()
    assert any("choose at least one" in e.value for e in at.error)
    assert not at.exception and run_of(at).labels == ("allseason-sw", "lints")


def test_presenter_mode_hides_the_settings(monkeypatch):
    at = open_live()
    at.toggle(key=live.PRESENTER).set_value(True).run()
    assert not at.exception
    assert not at.sidebar.slider and not at.title
    assert any("stSidebar" in h.proto.body for h in at.get("html"))
    assert_figures_match_the_engine(at)


def test_analyse_this_show_opens_its_race(monkeypatch):
    at = open_live()
    tick(at, monkeypatch)
    click_new(at, monkeypatch)
    tick(at, monkeypatch)
    click(at, live.PAUSE_KEY, monkeypatch)
    run = run_of(at)
    code = at.get("code")[0].proto.code_text
    sc = run.race().scenario
    assert "/Race?" in code and f"segments={api.Scenario.to_query(sc)['segments']}" in code
    assert "policies=allseason-sw%2Csw-lints%2Cd-lints%2Clints%2Coracle-state" in code
    at.button(key="live_to_race").click().run()
    assert not at.exception
    assert at.session_state[state.SCENARIO] == sc
    assert at.session_state[state.RACE_CHOICE].n_seeds == 1


def test_a_show_over_the_apps_limits_says_so():
    at = open_live()
    run_of(at).advance(state.APP_LIMITS["horizon"] + 1)
    at.run()
    assert not at.exception
    assert any("can not become a race" in w.value and "50,000" in w.value for w in at.warning)


# --- the figures alone (allseason.viz.live: a LiveFrame in, a figure out) --------------------
def test_the_figures_of_an_empty_show_and_of_a_show_without_all_season():
    from allseason.viz import live as vlive

    frame = api.LiveRun(["lints"], seed=1).frame()  # nothing played yet
    for fig in (
        vlive.rate_figure(frame),
        vlive.ribbon_figure(frame),
        vlive.since_switch_figure(frame),
    ):
        assert fig.layout.title.text
    assert "no All-Season" in vlive.ribbon_figure(frame).layout.title.text


def test_the_ribbon_shows_the_shadow_after_a_new_season():
    from allseason.viz import live as vlive

    run = api.LiveRun(["allseason-sw", "lints"], seed=0)
    run.advance(400)
    run.new_state()
    run.advance(60)
    frame = run.frame()
    fig = vlive.ribbon_figure(frame, window=run.window)
    names = [t.name for t in fig.data]
    assert "shadow" in names and "season 2" in names  # pink, and white dots over it
    shadow = next(t for t in fig.data if t.name == "shadow")
    assert shadow.line.color == "#e7298a"
    assert 0 in frame.top_bandit.tolist()
    # the figures stay light: at most MAX_POINTS points per line
    run.advance(3000)
    frame = run.frame()
    rate = vlive.rate_figure(frame, window=run.window, rate_window=run.rate_window)
    assert max(len(t.x) for t in rate.data) <= vlive.MAX_POINTS
    # a scrolled window: the means of fewer than rate_window steps are not drawn, the last
    # point is the frame's last step
    assert rate.data[0].x[0] == frame.steps[run.rate_window - 1]
    assert rate.data[0].y[-1] == frame.rate[0, -1]
    # the regret since the switch ends at the engine's, though the switch left the window
    since = vlive.since_switch_figure(frame)
    for i, trace in enumerate(since.data):
        assert trace.y[-1] == pytest.approx(frame.regret_since_switch[i])
        assert trace.y[0] > 0 or frame.regret_since_switch[i] == 0


def test_no_live_figure_moves_its_margins_and_the_keys_are_its_legends():
    """Plotly lays a figure out twice when a legend or an axis pushes a margin: the live
    figures have fixed margins, no Plotly legend, and HTML keys that show each line as the
    figure draws it (colour, width, dash) and each bandit of the ribbon, the shadow last."""
    import re

    from allseason.viz import live as vlive

    run = api.LiveRun(["allseason-sw", "sw-lints", "d-lints", "lints", "oracle-state"], seed=0)
    run.advance(400)
    run.new_state()
    run.advance(60)
    frame = run.frame()
    rate = vlive.rate_figure(frame, window=run.window, rate_window=run.rate_window)
    ribbon = vlive.ribbon_figure(frame, window=run.window)
    for scale in (1.0, 1.75):
        for fig in (
            vlive.rate_figure(frame, scale=scale),
            vlive.ribbon_figure(frame),
            vlive.since_switch_figure(frame, scale=scale),
        ):
            assert fig.layout.margin.autoexpand is False and fig.layout.showlegend is False
            for axis in (fig.layout.xaxis, fig.layout.yaxis):
                assert axis.automargin is False and axis.ticklabeloverflow == "allow"
    # the contestants' key: one entry per line of the rate figure, in its order and style
    key = vlive.contestants_key(frame.labels)
    entries = re.findall(
        r'stroke="([^"]+)" stroke-width="([^"]+)" stroke-dasharray="([^"]*)"/>'
        r"</svg>([^<]+)</span>",
        key,
    )
    assert len(entries) == len(frame.labels)
    assert [e[3] for e in entries] == [t.name for t in rate.data]
    assert entries[-1][3] == "oracle (knows the seasons)"
    for (color, width, dash, _), trace in zip(entries, rate.data):
        assert color == trace.line.color and float(width) == trace.line.width
        # plotly.js's dashStyle: multiples of the width, at least 3 px (these lines: 2 or 3)
        assert trace.line.width <= 3
        assert (
            dash
            == {
                "solid": "",
                "dash": "9,9",
                "dot": "3,3",
                "longdash": "15,15",
                "dashdot": "9,3,3,3",
                "longdashdot": "15,6,3,6",
            }[trace.line.dash]
        )
    # the bandits' key: the bandits on the ribbon's top-weight lane, the shadow last
    on_ribbon = [
        t.name
        for t in ribbon.data
        if t.name.startswith(("bandit", "shadow")) and t.name != "shadow (dots)"
    ]
    keyed = re.findall(r"</svg>([^<]+)</span>", vlive.bandits_key(frame))
    assert keyed == sorted(on_ribbon, key=lambda n: (n == "shadow", n)) and keyed[-1] == "shadow"
    assert "&lt;" in vlive.contestants_key(["<b>x</b>"])  # a label is text, never HTML


def test_the_page_draws_both_keys(monkeypatch):
    at = open_live()
    tick(at, monkeypatch)
    html = " ".join(m.value for m in at.markdown)
    assert 'aria-label="contestants"' in html and 'aria-label="bandits"' in html


def test_analyse_this_show_in_inside_all_season(monkeypatch):
    at = open_live()
    for _ in range(4):
        tick(at, monkeypatch)
    click_new(at, monkeypatch)
    at.run()  # the whole page: the section below the stage is drawn again
    at.button(key="live_to_inside").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state[live.PAUSED] is True
    race = state.race(at.session_state[state.RACE_CHOICE], at.session_state[state.SCENARIO])
    assert race.scenario == run_of(at).race().scenario
    assert at.session_state[keys.LAST_RACE] == race  # Inside looks into it
    assert any("Inside All-Season" in t.value for t in at.title)
