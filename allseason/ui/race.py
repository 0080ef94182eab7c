"""The Race page's results: the progress of a race, then the finished race's chart (picked
from :data:`RACE_CHARTS`), its leaderboard and its downloads. The settings above them are
:mod:`allseason.ui.race_settings`; the races themselves, cached and streamed,
:mod:`allseason.ui.runcache`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import streamlit as st

from allseason import api
from allseason.viz import leaderboard as vboard
from allseason.viz import per_state as vstate
from allseason.viz import race as vrace
from allseason.viz.timeline import date_ticks

from . import queueing, runcache, state
from .frame import PLOTLY_CONFIG, alt_text, chart, csv_button, guard
from .keys import AUTORUN, LAST_RACE, RACE_CHART, RACE_CHART_PICK, RUN_REQUESTED


def cached_note(run: runcache.RaceRun) -> str:
    return (
        f"{runcache.done_text(run)}, shown from the cache. Change a setting and press "
        f"▶ Run race for a new one."
    )


# --- the race -------------------------------------------------------------------------------
CAPTIONS = {
    "reward": "Look at the slope after each change of background colour: a policy that "
    "recognises a returning season gets its slope back at once.",
    "regret": "Flat means the best arm is being played; the steps up after change points are "
    "the price of adapting. Lower is better.",
    "board": "Mean reward per step over the whole run; bars that overlap within their 95% "
    "intervals are not clearly different. Gap closed: how much of the way from the "
    "best baseline to the per-state oracle a contestant goes (100% = the oracle).",
    "final": "Where each seed ended: one dot per seed. A tight row is a policy you can count "
    "on; the grey dashed rows are the oracles, told the true seasons.",
    "states": "Which seasons each policy handles: compare every bar with the grey tick, the "
    "best reward possible in that state.",
}


FAIRNESS = (
    "**How the default race is set up.** The baselines' hyperparameters are their "
    "best values on the paper's grid on a validation scenario (scenario seed 1000, "
    "3 seeds); All-Season keeps the paper's own setting (τ = 10, γ = 0.9, N_max = 5), "
    "untuned. *All-Season (SW), printed rule* is the paper's Algorithm 3 read "
    "literally: weights from the last batch alone. Docs: *Section 5, the default "
    "race*."
)


@dataclass(frozen=True)
class RaceChart:
    """One chart of the Race page's chart picker.

    ``build(run)`` draws it from a finished race (:class:`runcache.RaceRun`); ``live(steps,
    summary, pattern)``, if given, from a race still running (the sampled steps of
    ``RaceResult.curves_frame`` and ``RaceResult.summary()``). A new chart is one more entry
    of :data:`RACE_CHARTS`: only the chosen chart is built and drawn."""

    label: str  # in the picker
    build: Callable
    caption: str
    name: str  # file name of its HTML download
    live: Callable | None = None
    beside: RaceChart | None = None  # a second, narrower chart drawn to its right
    download: Callable | None = None  # download(run): the HTML download's figure (else build's)


def _cumulative_chart(metric: str, label: str, caption: str, legend: bool = True) -> RaceChart:
    """The cumulative ``metric`` chart; ``legend=False``: drawn without its legend (an HTML
    key beside it), its HTML download with it."""

    def figure(run: runcache.RaceRun, with_legend: bool):
        # the drawn steps only, with exact cumulative values there: the same figure as from
        # all the steps, built from 17,500 rows instead of 350,000
        fig = vrace.cumulative_figure(
            runcache.final_curves(run),
            run.race.scenario.pattern,
            metric,
            max_points=runcache.FINAL_POINTS,
            legend=with_legend,
        )
        dates = api.step_dates(run.race.scenario)  # real dates on the step axis, if any
        return fig if dates is None else date_ticks(fig, dates)

    def live(steps, summary, pattern):
        return vrace.cumulative_figure(steps, pattern, metric, max_points=runcache.LIVE_POINTS)

    return RaceChart(
        label,
        lambda run: figure(run, legend),
        caption,
        f"cumulative-{metric}",
        live,
        download=None if legend else lambda run: figure(run, True),
    )


FINAL_REGRET = RaceChart(
    "Final regret per seed",
    lambda run: vboard.final_regret_figure(run.result.seed_frame()),
    CAPTIONS["final"],
    "final-regret",
)

RACE_CHARTS = {  # key: chart; the first is shown until the reader picks another
    # the curves, and beside them where each seed ended (the distribution over seeds)
    # (in 3/5 of the width: its legend is an HTML key under it, see race_chart)
    "regret": replace(
        _cumulative_chart("regret", "Cumulative regret", CAPTIONS["regret"], legend=False),
        beside=FINAL_REGRET,
    ),
    "reward": _cumulative_chart("reward", "Cumulative reward", CAPTIONS["reward"]),
    "board": RaceChart(
        "Mean reward per step",
        lambda run: vboard.leaderboard_figure(run.frames["summary"]),
        CAPTIONS["board"],
        "leaderboard",
        lambda steps, summary, pattern: vboard.leaderboard_figure(summary),
    ),
    "states": RaceChart(
        "Reward in each state",
        lambda run: vstate.reward_by_state_figure(run.frames["states"]),
        CAPTIONS["states"],
        "reward-by-state",
    ),
}


def race_chart_choice() -> str:
    """The key of the chart the Race page shows (:data:`RACE_CHARTS`)."""
    key = st.session_state.get(RACE_CHART)
    return key if key in RACE_CHARTS else next(iter(RACE_CHARTS))


def _picked_chart() -> None:
    key = st.session_state.get(RACE_CHART_PICK)
    if key in RACE_CHARTS:
        st.session_state[RACE_CHART] = key


def race_slots() -> dict:
    """Placeholders for the race results, in page order (filled live, then final)."""
    return {
        "progress": st.empty(),
        "chart": st.empty(),
        "board": st.empty(),
        "downloads": st.empty(),
    }


def draw_live(slots: dict, steps, summary, tick: int) -> None:
    """Redraw the chart of a race still running (called by ``runcache.stream_race``): the chosen
    chart if it can be drawn from a partial race, else the first one that can."""
    chosen = RACE_CHARTS[race_chart_choice()]
    spec = chosen if chosen.live else next(c for c in RACE_CHARTS.values() if c.live)
    fig = spec.live(steps, summary, slots.get("pattern"))
    with slots["chart"].container():
        st.plotly_chart(
            fig,
            key=f"live_chart_{tick}",
            config=PLOTLY_CONFIG,
            alt=alt_text(fig, "the race so far"),
        )


@st.fragment(key="race_chart")
def race_chart(run_key: str) -> None:
    """The chart picker and the chosen chart of the finished race ``run_key`` (its short key,
    :func:`runcache.key_of`). A fragment: picking another chart reruns this function only, not
    the page, and builds and sends that one figure."""
    with guard("the chart"):
        run = runcache.get_or_recompute(run_key)
        st.session_state[RACE_CHART_PICK] = race_chart_choice()
        key = st.segmented_control(
            "Chart",
            list(RACE_CHARTS),
            key=RACE_CHART_PICK,
            required=True,
            format_func=lambda k: RACE_CHARTS[k].label,
            on_change=_picked_chart,
            label_visibility="collapsed",
        )
        spec = RACE_CHARTS[key]
        if spec.beside is None:
            chart(spec.build(run), spec.caption, spec.name, f"race_{key}")
            return
        left, right = st.columns([3, 2])
        # the curves in 3/5 of the width: a Plotly legend there took most of the figure's
        # height (nine policies and the states), so it is an HTML key under the figure
        # both figures built before either is sent, so the browser gets them together (sent
        # one by one, the second left the server 0.1 s after the first in a timeline trace,
        # the server and the browser sharing 2 cores; click -> done alone: within noise)
        fig, beside = spec.build(run), spec.beside.build(run)
        legend = vrace.legend_key(fig) if fig.layout.showlegend is False else ""
        if legend:
            vrace.drop_legend_entries(fig)
        chart(
            fig,
            spec.caption,
            spec.name,
            f"race_{key}",
            container=left,
            legend=legend,
            download=(lambda: spec.download(run)) if spec.download else None,
        )
        chart(beside, spec.beside.caption, spec.beside.name, f"race_{key}_beside", container=right)


@st.fragment(key=state.RACE_SECTION)
def race_section(race: api.Race | None) -> None:
    """The Race page's results: the progress, then the finished race (:func:`show_race`).
    ``race``: the race the settings describe (None if one is invalid). A fragment: the Run
    button (:func:`race_settings.request_run`) reruns this section only, so the page above it (the
    settings, the season timeline) is neither rerun nor redrawn."""
    ss = st.session_state
    with guard("the race"):
        asked = ss.pop(RUN_REQUESTED, False) | ss.pop(AUTORUN, False)
        slots = race_slots()
        if race is None:
            return
        queueing.note()  # a request cancelled in the queue: said once
        run = runcache.cached(race)
        if run is None and not asked:
            asked = shown_before(race)
        if run is None and asked:
            try:
                run = runcache.stream_race(race, slots, draw_live)
            except queueing.QueueStopped as e:
                slots["progress"].info(f"{e.message}. Press **▶ Run race** to queue it again.")
                return
        elif run is not None:
            slots["progress"].success(cached_note(run), icon=":material/check_circle:")
        if run is None:
            words = api.race_in_words()
            slots["progress"].info(
                f"Press **▶ Run race** to start. The default race (the paper's experiment, "
                f"{words['contestants']}, {words['seeds']}) takes a second or two. "
                f"This one is estimated at {api.estimate_cost(race):.1f} CPU-seconds.",
                icon=":material/touch_app:",
            )
            return
        runcache.remember(run)
        show_race(run, slots)


def shown_before(race: api.Race) -> bool:
    """Whether ``race`` is this session's last race (it ran and was shown here) although the
    shared cache has dropped it since (eight other races run on the server, e.g. a workshop):
    run again, it is shown again (runs are deterministic) instead of "Press Run race". A page
    rerun of its own, without a click: a websocket that reconnects (a browser that did not
    answer the server's ping in time, under load) reruns the page in the same session; before,
    the visitor's race vanished, which looked like a lost click (benchmarks/load_test.py)."""
    last = st.session_state.get(LAST_RACE)
    return last is not None and runcache.key_of(last) == runcache.key_of(race)


def show_race(run: runcache.RaceRun, slots: dict) -> None:
    """The finished race: the chosen chart (a fragment), the leaderboard, the CSVs."""
    with slots["chart"].container():
        race_chart(run.key)
    with slots["board"].container():
        leaderboard(run)
    with slots["downloads"].container():
        downloads(run)


def leaderboard(run: runcache.RaceRun) -> None:
    st.subheader("Leaderboard")
    # a plain HTML table: light for the browser (an interactive grid cost 0.2 s of
    # script per race, measured) and read by screen readers; the Summary CSV has the data
    st.table(vboard.leaderboard_table(run.frames["summary"]), hide_index=False)  # index: rank
    st.caption(
        "Mean ± 95% interval over seeds, Student's t: t·std/√seeds. Regret: best "
        "expected reward − expected reward of the arm played, summed over steps. "
        "Gap closed: (reward − best baseline's) / (per-state oracle's − best "
        "baseline's); baselines are the contestants other than All-Season. The "
        "oracles (knowing the seasons) are ranked apart, below. "
        "Seconds: compute time, summed over seeds."
    )
    if {p.name for p in run.race.policies} & set(api.DEFAULT_POLICIES):
        st.caption(FAIRNESS)


def downloads(run: runcache.RaceRun) -> None:
    """The run's tables as CSV, and the race as JSON (to run again)."""
    frames = run.frames
    st.subheader("Download this run")
    cols = st.columns(5)
    for col, (label, name) in zip(
        cols,
        (
            ("Steps CSV", "steps"),
            ("Summary CSV", "summary"),
            ("Weights CSV", "weights"),
            ("Events CSV", "events"),
        ),
    ):
        with col:
            csv_button(label, lambda name=name: frames[name], f"race-{name}", f"dl_{name}")
    with cols[4]:
        st.download_button(
            "Race JSON",
            data=run.race_json,
            file_name="race.json",
            mime="application/json",
            on_click="ignore",
            key="dl_race_json",
            icon=":material/download:",
        )
    n_rows = sum(t.n_done for t in run.result.traces.values())
    st.caption(
        f"**Steps**: one row per policy, seed and step ({n_rows:,} rows): true "
        f"state, arm, reward, expected and best expected reward, regret and, for "
        f"All-Season, the bandit that played. **Summary**: the leaderboard's "
        f"numbers. **Weights**: All-Season's bandit weights after every batch. "
        f"**Events**: spawns and prunings. **Race JSON**: the settings, to rerun "
        f"it with the Python API."
    )
