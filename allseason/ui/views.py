"""What the pages show: page frame, error boundary, charts with caption and download, and the
race's result panels. Figures come from :mod:`allseason.viz`; nothing here computes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, replace

import streamlit as st

from allseason import api
from allseason.viz import export
from allseason.viz import race as vrace
from allseason.viz.style import policy_name
from allseason.viz.text import md
from allseason.viz.timeline import date_ticks

from . import runs, state

log = logging.getLogger("allseason.ui")

PLOTLY_CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


# (script, title, icon, URL path): the app's pages in sidebar order; Home is the default page
# (URL "/"), the others keep the URL paths they had when they lived in pages/: old links work
PAGES = (
    ("app_pages/0_Home.py", "Home", ":material/eco:", ""),
    (
        "app_pages/1_Pattern_builder.py",
        "Pattern builder",
        ":material/calendar_month:",
        "Pattern_builder",
    ),
    ("app_pages/2_Race.py", "Race", ":material/sports_score:", "Race"),
    (
        "app_pages/3_Inside_All-Season.py",
        "Inside All-Season",
        ":material/troubleshoot:",
        "Inside_All-Season",
    ),
    ("app_pages/4_Sweep_results.py", "Sweep results", ":material/tune:", "Sweep_results"),
    ("app_pages/5_Paper_tables.py", "Paper tables", ":material/table_chart:", "Paper_tables"),
    ("app_pages/6_Guided_tour.py", "Guided tour", ":material/slideshow:", "Guided_tour"),
    ("app_pages/7_Your_data.py", "Your data", ":material/upload_file:", "Your_data"),
    ("app_pages/8_Live.py", "Live", ":material/live_tv:", "Live"),
)


def navigation():
    """The app's pages as ``st.navigation`` (the sidebar's links); ``.run()`` runs the one
    the URL asks for."""
    return st.navigation(
        [
            st.Page(path, title=title, icon=icon, url_path=url or None, default=not url)
            for path, title, icon, url in PAGES
        ]
    )


# --- frame ----------------------------------------------------------------------------------
def page(title: str, purpose: str, icon: str = ":material/eco:", *, header: bool = True) -> None:
    """Page config, title and one-line purpose (``header=False``: the page draws them
    itself, e.g. in a fragment); the sidebar note on downloads."""
    st.set_page_config(page_title=f"{title} · All-Season", page_icon=icon, layout="wide")
    runs.warm_up()  # once per process, in the background: the first visitor's race is warm
    if header:
        st.title(title)
        st.markdown(purpose)
    with st.sidebar:
        st.caption(
            "**Downloads.** Every figure: the **HTML** button under it (interactive, "
            "opens offline); for a **PNG**, the camera icon in the toolbar that appears "
            "at the figure's top right. Every run: **CSV** buttons under the results."
        )


@contextmanager
def guard(what: str = "this part of the page"):
    """Catch errors at the page boundary: a message, never a traceback."""
    try:
        yield
    except api.SpecError as e:
        st.error(md(state.explain(e)), icon=":material/error:")
    except Exception as e:
        log.exception("error in %s", what)
        st.error(
            md(
                f"Something went wrong in {what}: {type(e).__name__}: {e}. Your settings "
                f"are kept; change them or try again.",
            ),
            icon=":material/error:",
        )


def url_errors() -> None:
    """Messages about the link this session was opened with, if any."""
    for message in state.url_errors():
        st.error(md(message), icon=":material/link_off:")


def scenario_line(sc: api.Scenario) -> str:
    n_states = max(s for s, _ in sc.segments) + 1
    batch = state.encode_batch(sc.batch_size).replace("_", ", ")
    return (
        f"**Scenario**: {sc.preset}, {sc.horizon:,} steps, {n_states} states, "
        f"{len(sc.segments) - 1} change points · d = {sc.d}, K = {sc.n_arms} arms, "
        f"σ² = {sc.sigma2:g}, batch {batch}, seed {sc.seed}"
    )


def alt_text(fig, caption: str = "") -> str:
    """A chart's text alternative for screen readers: its title, subtitle and caption."""
    title = fig.layout.title
    parts = [
        title.text if title and title.text else "",
        title.subtitle.text if title and title.subtitle and title.subtitle.text else "",
        caption,
    ]
    text = ". ".join(p.strip().rstrip(".") for p in parts if p and p.strip())
    return re.sub(r"<[^>]+>|\\(?=\S)", "", text)[:1000] or "chart"  # no HTML, no \* escapes


def chart(
    fig, caption: str, name: str, key: str, *, container=None, legend: str = "", download=None
) -> None:
    """A Plotly figure with its alt text, its one-line caption and an HTML download.
    ``legend``: an HTML key drawn under the figure (a figure shown without its legend);
    ``download``: the figure the HTML download holds, made on click (default ``fig``)."""
    target = container if container is not None else st.container()
    with target:
        st.plotly_chart(
            fig,
            key=key,
            alt=alt_text(fig, caption),
            config={
                **PLOTLY_CONFIG,
                "toImageButtonOptions": {**PLOTLY_CONFIG["toImageButtonOptions"], "filename": name},
            },
        )
        if legend:
            st.markdown(legend, unsafe_allow_html=True)
        c1, c2 = st.columns([3, 1], vertical_alignment="top")
        c1.caption(caption)
        c2.download_button(
            "HTML",
            data=lambda: export.figure_html(download() if download is not None else fig),
            file_name=f"{name}.html",
            mime="text/html",
            on_click="ignore",
            key=f"dl_{key}",
            icon=":material/download:",
            type="tertiary",
            help="Download the interactive figure as one HTML file "
            "(PNG: camera icon in the figure's toolbar).",
        )


def csv_button(label: str, df, name: str, key: str) -> None:
    """A CSV download of ``df`` (a table, or a function returning one), made on click."""
    st.download_button(
        label,
        data=lambda: export.frames_csv(df() if callable(df) else df),
        file_name=f"{name}.csv",
        mime="text/csv",
        on_click="ignore",
        key=key,
        icon=":material/download:",
    )


def pattern_preview(
    sc: api.Scenario, container, key: str = "pb_timeline", lane_px: int = 34
) -> None:
    """The timeline of the scenario's seasons (``lane_px`` pixels per state's lane)."""
    from allseason.viz import timeline

    n_states = max(s for s, _ in sc.segments) + 1
    fig = timeline.pattern_timeline(sc.pattern, height=150 + lane_px * min(n_states, 8))
    chart(
        fig,
        "Each bar is a season; ▼ marks a state seen for the first time (All-Season "
        "must grow a new bandit), ○ a state coming back (it should recall an old one).",
        "season-pattern",
        key,
        container=container,
    )


def cached_note(run: runs.RaceRun) -> str:
    return (
        f"{runs.done_text(run)}, shown from the cache. Change a setting and press "
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


RACE_CHART = "race_chart_shown"  # the chart the Race page shows (canonical, not a widget's)
RACE_CHART_PICK = "race_chart_pick"  # the picker's widget key


@dataclass(frozen=True)
class RaceChart:
    """One chart of the Race page's chart picker.

    ``build(run)`` draws it from a finished race (:class:`runs.RaceRun`); ``live(steps,
    summary, pattern)``, if given, from a race still running (the sampled steps of
    :func:`runs.partial_steps` and ``RaceResult.summary()``). A new chart is one more entry
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

    def figure(run: runs.RaceRun, with_legend: bool):
        # the drawn steps only, with exact cumulative values there: the same figure as from
        # all the steps, built from 17,500 rows instead of 350,000
        fig = vrace.cumulative_figure(
            runs.final_curves(run),
            run.race.scenario.pattern,
            metric,
            max_points=runs.FINAL_POINTS,
            legend=with_legend,
        )
        dates = api.step_dates(run.race.scenario)  # real dates on the step axis, if any
        return fig if dates is None else date_ticks(fig, dates)

    def live(steps, summary, pattern):
        return vrace.cumulative_figure(steps, pattern, metric, max_points=runs.LIVE_POINTS)

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
    lambda run: vrace.final_regret_figure(run.result.seed_frame()),
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
        lambda run: vrace.leaderboard_figure(run.frames["summary"]),
        CAPTIONS["board"],
        "leaderboard",
        lambda steps, summary, pattern: vrace.leaderboard_figure(summary),
    ),
    "states": RaceChart(
        "Reward in each state",
        lambda run: vrace.reward_by_state_figure(run.frames["states"]),
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
    """Redraw the chart of a race still running (called by ``runs.stream_race``): the chosen
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
    """The chart picker and the chosen chart of the finished race ``run_key`` (its
    ``Race.to_json()``). A fragment: picking another chart reruns this function only, not
    the page, and builds and sends that one figure."""
    with guard("the chart"):
        run = runs.run_of(run_key)
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
    button (:func:`forms.request_run`) reruns this section only, so the page above it (the
    settings, the season timeline) is neither rerun nor redrawn."""
    ss = st.session_state
    with guard("the race"):
        asked = ss.pop(state.RUN_REQUESTED, False) | ss.pop(state.AUTORUN, False)
        slots = race_slots()
        if race is None:
            return
        run = runs.cached(race)
        if run is None and asked:
            run = runs.stream_race(race, slots, draw_live)
        elif run is not None:
            slots["progress"].success(cached_note(run), icon=":material/check_circle:")
        if run is None:
            slots["progress"].info(
                "Press **▶ Run race** to start. The default race (the "
                "paper's experiment, 7 policies and 2 oracles, 5 seeds) takes a "
                "second or "
                "two.",
                icon=":material/touch_app:",
            )
            return
        runs.remember(run)
        show_race(run, slots)


def show_race(run: runs.RaceRun, slots: dict) -> None:
    """The finished race: the chosen chart (a fragment), the leaderboard, the CSVs."""
    frames = run.frames
    summary = frames["summary"]
    with slots["chart"].container():
        race_chart(run.key)
    with slots["board"].container():
        st.subheader("Leaderboard")
        # a plain HTML table: light for the browser (an interactive grid cost 0.2 s of
        # script per race, measured) and read by screen readers; the Summary CSV has the data
        st.table(vrace.leaderboard_table(summary), hide_index=False)  # the index is the rank
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
    with slots["downloads"].container():
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
                data=run.key,
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


# --- inside All-Season ----------------------------------------------------------------------
INSIDE = {
    "animation": "Press ▶ Play or drag the slider: after each change point the weight should "
    "jump to one bar — an old bandit when a season returns, the pink shadow when "
    "a season is new.",
    "top": "The paper's figure: the weight of the most likely bandit after each batch. "
    "Triangles are base bandits (colour = id), pink dashes the shadow; near 1 means "
    "All-Season is sure which bandit fits the season.",
    "area": "All weights at once (they sum to 1): when a season returns, the area should go "
    "back to the colour it had the last time that season was on.",
    "lives": "One lane per base bandit, from spawn (▶) to pruning (✕); hover a ✕ for the "
    "twin it was closest to. The long lanes are the memories of the seasons.",
    "season_year": "Read along a row: the same weather regime in each year. The same bandit "
    "in every year of a row means All-Season recognised the regime when it came "
    "back; a dark cell means that bandit held the top weight most of the time.",
    "states": "Read down a column: the share of that state's steps played by each bandit. "
    "One dark cell per column means one bandit per season.",
    "recall": "Steps until the right bandit holds the top weight after each change point; "
    "short bars are quick recognitions, ✕ means never in that season.",
    "pair": "Same scenario, same arms and noise, first seed: compare how quickly and how "
    "firmly each weighting settles on one bandit after a change point.",
    "posterior": "Each base bandit's posterior mean (dot) and 2σ ellipse beside the true θ "
    "of every state (stars): watch a bandit's ellipse shrink onto one star.",
}


def allseason_labels(run: runs.RaceRun | None) -> list[str]:
    """The All-Season contestants of a race (the ones with bandit weights to look into)."""
    if run is None:
        return []
    return [p.label for p in run.race.policies if p.name.startswith("allseason")]


def inside_needs_race(run: runs.RaceRun | None) -> None:
    """No All-Season to look into yet: say so and offer to run the default race."""
    if run is None:
        st.info(
            "No race has run in this session yet. Run one on the Race page, or run the "
            "default race (All-Season against the baselines) on the current scenario "
            "here.",
            icon=":material/sports_score:",
        )
    else:
        st.info(
            "Your last race had no All-Season contestant. Add allseason-sw or "
            "allseason-disc on the Race page, or run the default race here.",
            icon=":material/sports_score:",
        )
    if st.button(
        "▶ Run the default race on the current scenario", type="primary", key="inside_run_default"
    ):
        race = state.race(state.default_choice())
        with st.spinner("Running the default race…"):
            runs.remember(runs.run_race(race))
        st.rerun()
    st.page_link("app_pages/2_Race.py", label="Go to the Race page", icon=":material/sports_score:")


def inside_picker(run: runs.RaceRun) -> tuple[str, int]:
    """Choose the contestant and seed to look into."""
    race = run.race
    st.markdown(
        f"**Race** ({len(race.policies)} policies × {race.n_seeds} seeds): "
        + scenario_line(race.scenario).removeprefix("**Scenario**: ")
    )
    labels = allseason_labels(run)
    ss = st.session_state
    notes = ss.setdefault("inside_link_notes", {})  # link messages, until the input changes
    pending = ss.get(state.LINK_INSIDE) or {}
    if "contestant" in pending:  # a link's contestant and seed, applied once
        raw = str(pending.pop("contestant"))
        if raw in labels:
            ss["inside_label"] = raw
        else:
            notes["inside_label"] = (
                f"Link parameter “contestant={raw[:40]}”: this race has "
                f"no All-Season contestant of that name (it has "
                f"{', '.join(labels)}); {labels[0]} is shown."
            )
    if "inside_seed" in pending:
        raw = str(pending.pop("inside_seed")).strip()
        if raw.isdigit() and int(raw) < run.race.n_seeds:
            ss["inside_seed"] = int(raw)
        else:
            notes["inside_seed"] = (
                f"Link parameter “inside_seed={raw[:20]}”: seeds are "
                f"numbered 0 to {run.race.n_seeds - 1} in this race; "
                f"seed 0 is shown."
            )
    c1, c2, _ = st.columns([3, 1, 1])
    with c1:
        label = st.selectbox(
            "All-Season contestant",
            labels,
            key="inside_label",
            format_func=lambda lab: f"{policy_name(lab)}: {_params_text(run, lab)}",
            on_change=notes.pop,
            args=("inside_label", None),
        )
        if notes.get("inside_label"):
            st.error(md(notes["inside_label"]), icon=":material/link_off:")
    with c2:
        seed = st.selectbox(
            "Seed",
            list(range(run.race.n_seeds)),
            key="inside_seed",
            help="Seeds are numbered from 0, as in the CSV downloads.",
            on_change=notes.pop,
            args=("inside_seed", None),
        )
        if notes.get("inside_seed"):
            st.error(md(notes["inside_seed"]), icon=":material/link_off:")
    # the link: only what differs from what the page shows first
    ss["inside_link_now"] = {
        **({"contestant": label} if label != labels[0] else {}),
        **({"inside_seed": str(seed)} if seed else {}),
    }
    return label, seed


def _spec(run: runs.RaceRun, label: str) -> api.PolicySpec:
    return next(p for p in run.race.policies if p.label == label)


def _params_text(run: runs.RaceRun, label: str) -> str:
    spec = _spec(run, label)
    params = dict(spec.params)
    keys = [
        k
        for k in ("tau", "gamma", "n_max", "weighting")
        if k in params and not (k == "gamma" and spec.name == "allseason-sw")
    ]
    return ", ".join(f"{k} = {params[k]}" for k in keys)


def weights_panel(run: runs.RaceRun, label: str, seed: int) -> None:
    from allseason.viz import inside

    pattern, w = run.race.scenario.pattern, run.frames_for(label, seed)["weights"]
    trace = run.result.traces[label, seed]
    ens = api.ensemble_summary(trace, pattern)
    learnt = api.learnt_by_text(api.learnt_by(trace, pattern)).replace("*", "\\*")  # not italics
    dates = api.step_dates(run.race.scenario)  # real dates (a preset from data) or None
    if dates is not None:
        names = api.state_names(run.race.scenario)
        regimes = ", ".join(f"{i} = {n}" for i, n in enumerate(names))
        st.markdown(
            f"**Real dates**: {dates[0]} to {dates[-1]}; the true states are the "
            f"weather regimes ({regimes})."
        )
        chart(
            inside.season_year_figure(api.season_year_table(trace, dates, names)),
            INSIDE["season_year"],
            "season-year",
            "in_season_year",
        )
    fig = inside.top_weight_figure(w, pattern, policy=label, seed=seed)
    chart(fig if dates is None else date_ticks(fig, dates), INSIDE["top"], "top-weight", "in_top")
    st.markdown(
        f"**Who learnt which state** (bandits that played at least 10% of a state's "
        f"steps): {learnt}. "
        f"{ens['bandits_created']:,} base bandits were created in this run; the top "
        f"weight exceeds 0.9 in {ens['top_share']:.0%} of the batches."
    )
    chart(
        inside.weights_animation(w, pattern, n_frames=150, policy=label, seed=seed),
        INSIDE["animation"],
        "weights-animation",
        "in_anim",
    )
    fig = inside.weights_area_figure(w, pattern, policy=label, seed=seed)
    chart(
        fig if dates is None else date_ticks(fig, dates), INSIDE["area"], "weights-area", "in_area"
    )


def lives_panel(run: runs.RaceRun, label: str, seed: int) -> None:
    from allseason.viz import inside

    pruning = dict(_spec(run, label).params).get("pruning", "kl")
    own = run.frames_for(label, seed)
    fig = inside.lifelines_figure(
        own["events"],
        own["weights"],
        run.race.scenario.pattern,
        policy=label,
        seed=seed,
        distance_name="mean distance" if pruning == "mean" else "symmetric KL",
    )
    chart(fig, INSIDE["lives"], "lifelines", "in_lives")


def seasons_panel(run: runs.RaceRun, label: str, seed: int) -> None:
    from allseason.viz import inside

    trace = run.result.traces[label, seed]
    pattern = run.race.scenario.pattern
    recall = api.recall_table(trace, pattern)
    st.markdown(f"**Verdict** — {runs.recall_verdict(recall)}")
    chart(inside.recall_figure(recall), INSIDE["recall"], "recall", "in_recall")
    with st.expander("The recall table"):
        st.dataframe(recall, hide_index=True, key="in_recall_table")
        st.caption(
            "right_bandit: the shadow (0) for a new state, else the live base bandit "
            "that played this state most before; steps_to_top: steps until it held "
            "the top weight; spawns: base bandits created in the segment."
        )
        csv_button("Recall table (CSV)", recall, "recall", "dl_recall")
    table = api.state_table(trace)
    chart(inside.state_heatmap(table), INSIDE["states"], "bandit-by-state", "in_states")


def weighting_panel(run: runs.RaceRun, label: str) -> None:
    from allseason.viz import inside

    sc = run.race.scenario
    with st.spinner("Running both weightings…"):
        pair, rules, n_seeds = runs.weighting_pair(run, label)
    where = (
        f"this race, mean over its {n_seeds} seeds"
        if pair is run
        else "this scenario, first seed (your race has only one of the two rules)"
    )
    st.markdown(
        f"**The same All-Season, two ways of weighting its bandits** ({where}). "
        "Carried weights are the default; the printed rule is the paper's "
        "Algorithm 3 read literally."
    )
    st.dataframe(runs.weighting_table(pair, rules, n_seeds), key="in_pair_table")
    st.caption(
        "Bandits created: base bandits ever made (bandit 1 plus one per spawn). Recall "
        "delay: steps after a season returns until the bandit that learnt it first holds "
        "the top weight (median over seeds); *right bandit on top*: how much of the "
        "returning seasons it then keeps it. The paper's figure shows about 16 bandits "
        "and a top weight near 1 after each change."
    )
    for title, lab in rules:
        fig = inside.top_weight_figure(
            pair.frames_for(lab, 0)["weights"], sc.pattern, policy=lab, seed=0
        )
        fig.update_layout(
            title_text=f"{title}: weight of the most likely bandit, seed 0", height=460
        )
        chart(
            fig,
            INSIDE["pair"],
            f"top-weight-{lab.replace(' · ', '-').replace(' ', '-')}",
            f"in_pair_{lab}",
        )
    st.caption(
        "Carried weights are our reconstruction, not the paper's text: the paper "
        "prints the last-batch rule, and its own section-5 figure (about 16 bandits, "
        "top weight near 1) is what carried weights reproduce (docs: *Fidelity*). "
        "Fixed share (Herbster & Warmuth) carries each bandit's weight from "
        "batch to batch and mixes in a share α of uniform weight; a newborn bandit "
        "takes the shadow's weight over. The printed rule scores each bandit on the "
        "last batch alone, so at batch size 1 the top weight flips from step to step "
        "and a bandit is spawned on most steps."
    )


def inside_view_picker() -> str:
    """Which view of Inside All-Season to build (one at a time: the others cost nothing).
    In the link as ``view=<first word of the view's name>`` (e.g. ``view=births``), with
    the contestant and seed :func:`inside_picker` chose."""
    ss = st.session_state
    notes = ss.setdefault("inside_link_notes", {})
    views = list(INSIDE_VIEWS)
    slugs = {re.match(r"\w+", v).group().lower(): v for v in views}
    pending = ss.get(state.LINK_INSIDE) or {}
    if "view" in pending:
        raw = str(pending.pop("view")).strip()
        want = slugs.get(raw.lower()) or (raw if raw in INSIDE_VIEWS else None)
        if want:
            ss["inside_view"] = want
        else:
            notes["inside_view"] = (
                f"Link parameter “view={raw[:40]}”: no such view (known: "
                f"{', '.join(slugs)}); {views[0]} is shown."
            )
    if not pending:
        ss.pop(state.LINK_INSIDE, None)
    view = st.radio(
        "View",
        views,
        horizontal=True,
        key="inside_view",
        label_visibility="collapsed",
        on_change=notes.pop,
        args=("inside_view", None),
    )
    if notes.get("inside_view"):
        st.error(md(notes["inside_view"]), icon=":material/link_off:")
    link = dict(ss.get("inside_link_now", {}))
    if view != views[0]:
        link["view"] = re.match(r"\w+", view).group().lower()
    state.sync_url(link)
    return view


@st.fragment(key="inside_views")
def inside_views(run_key: str) -> None:
    """The contestant and seed pickers, the view picker and the open view, for the race
    ``run_key`` (its ``Race.to_json()``). A fragment: a picker reruns this part only, not
    the page, and only the open view is built."""
    with guard("Inside All-Season"):
        run = runs.run_of(run_key)
        label, seed = inside_picker(run)
        view = inside_view_picker()  # only the open view is built
        with guard(f"the view {view}"):
            INSIDE_VIEWS[view](run, label, seed)


def posterior_panel(run: runs.RaceRun, label: str, seed: int) -> None:
    from allseason.viz import inside

    sc = run.race.scenario
    if sc.d != 2:
        st.info(
            f"This animation draws each bandit's posterior in the plane, so it needs "
            f"d = 2 (this race has d = {sc.d}). Set **Dimension d = 2** in the Pattern "
            f"builder and run the race again.",
            icon=":material/straighten:",
        )
        st.page_link(
            "app_pages/1_Pattern_builder.py",
            label="Open the Pattern builder",
            icon=":material/calendar_month:",
        )
        return
    with st.spinner("Replaying the run to snapshot the posteriors…"):
        history, thetas = runs.posterior_history(sc, _spec(run, label), seed)
    chart(
        inside.posterior_animation(history, thetas, n_frames=100),
        INSIDE["posterior"],
        "posterior-animation",
        "in_post",
    )


INSIDE_VIEWS = {  # label: panel(run, label, seed)
    "Weights": weights_panel,
    "Births & prunings": lives_panel,
    "Seasons & recall": seasons_panel,
    "Carried weights vs the printed rule": lambda run, label, seed: weighting_panel(run, label),
    "Posteriors (d = 2)": posterior_panel,
}


def home_picture() -> None:
    """The paper's synthetic pattern: seasons that change suddenly and come back."""
    from allseason.viz import timeline

    sc = api.Scenario()
    chart(
        timeline.pattern_timeline(sc.pattern, height=330),
        "The paper's synthetic experiment: four states, eight change points. At each ▼ a "
        "state appears for the first time and All-Season must grow a new bandit; at each "
        "○ a state comes back and it should recall the bandit that learnt it.",
        "paper-pattern",
        "home_pattern",
    )
