"""The "When does it help?" page's glue: the shipped map with the named worlds on it, a
cell opened in Race, the regions in sentences, the screening, and the user's own world
(the Pattern builder's scenario, the Your data page's reward table, or an upload) placed,
predicted and raced to check."""

from __future__ import annotations

import re
import tempfile

import streamlit as st

from allseason import api
from allseason.viz import worldmap as vmap
from allseason.worldmap import KNOBS, contest, estimate_knobs, snapshot
from allseason.worldmap.worlds import race_world

from . import frame, keys, pattern, race_settings, runcache, state, yourdata
from .keys import WHEN_CLICKED as CLICKED  # the last cell clicked on the map: (page, i, j)
from .keys import WHEN_MY_RESULT as MY_RESULT  # (key, cell) of the user's world raced
from .keys import WHEN_PAGE as PAGE  # which page of the map (batch size)
from .keys import WHEN_VARIANT as VARIANT

MAX_CHECK_STEPS = api.MAX_CHECK_STEPS  # the user's world raced here (allseason.limits)


@st.cache_data(show_spinner=False, max_entries=2)
def _snapshot() -> dict:
    return snapshot.load()


def _marks(snap: dict, mine: dict | None, page) -> list[dict]:
    """The worlds whose batch size reads this page of the map."""
    marks = [
        {
            "name": w["name"],
            "fx": w["prediction"]["fx"],
            "fy": w["prediction"]["fy"],
            "hover": f"{w['name']}: season {w['knobs']['season_length']:,.0f} obs., "
            f"SNR {w['knobs']['snr']:.2f}, batches of {w['knobs']['batch_size']:g}",
        }
        for w in snap.get("worlds", [])
        if w["prediction"]["page"] == page
    ]
    if mine is not None and mine["pred"]["page"] == page:
        marks.append({"name": "your world", "fx": mine["pred"]["fx"], "fy": mine["pred"]["fy"]})
    return marks


def current_page(snap: dict):
    got = st.session_state.get(PAGE)
    return got if got in snapshot.pages(snap) else snapshot.pages(snap)[0]


def reset() -> None:
    """The map's pickers start again (keys.reset); the user's raced world stays."""
    keys.reset(st.session_state, keys.PAGE_WHEN)


def race_choice_for(cell: dict) -> state.RaceChoice:
    """The Race page's settings for a cell: its six contestants at their tuned settings."""
    tuned = {
        label: {**contest.GRIDS[label][1], **cell["chosen"].get(label, {})}
        for label in contest.GRIDS
    }
    return state.choice_of(list(contest.GRIDS), 5, tuned)


def open_in_race(cell: dict) -> None:
    """Make the cell's world and contest the session's race, run it on arrival, go to Race."""
    sc = cell_scenario(cell)
    pattern.reset()  # the forms start again from the cell's scenario and race
    race_settings.reset()
    state.set_race_choice(race_choice_for(cell))
    state.set_scenario(sc)
    st.session_state[keys.AUTORUN] = True
    st.switch_page("app_pages/2_Race.py")


def cell_scenario(cell: dict) -> api.Scenario:
    from allseason.worldmap import Knobs

    return Knobs(**cell["knobs"]).scenario()


def _picked_cell(snap: dict, event, page) -> dict | None:
    """The cell clicked on the map (the cells' trace, number 2), once per new click."""
    try:
        pts = list(event.selection.points or [])
    except AttributeError:
        return None
    nx = len(snap["x"]["values"])
    for p in pts:
        if p.get("curve_number") != vmap.CELLS_TRACE or p.get("point_index") is None:
            continue
        j, i = divmod(int(p["point_index"]), nx)
        if st.session_state.get(CLICKED) == (page, i, j):
            return None  # the same selection as before (a rerun): nothing new
        st.session_state[CLICKED] = (page, i, j)
        return snapshot.cell_at(snap, i, j, page)
    st.session_state.pop(CLICKED, None)  # nothing picked: the next click counts, even the same
    return None


def map_section(snap: dict, mine: dict | None) -> None:
    c1, c2 = st.columns(2)
    with c1:
        label = (
            st.segmented_control(
                "All-Season's shadow",
                list(contest.ALLSEASON),
                default="allseason-sw",
                format_func=contest.TITLES.get,
                key=VARIANT,
            )
            or "allseason-sw"
        )
    with c2:
        pk = snap["page"]["knob"]
        st.segmented_control(
            f"{KNOBS[pk][0].capitalize()} (observations per feedback)",
            snapshot.pages(snap),
            default=snapshot.pages(snap)[0],
            key=PAGE,
        )
    page = current_page(snap)
    fig = vmap.map_figure(snap, label, _marks(snap, mine, page), page=page)
    event = st.plotly_chart(
        fig,
        key=f"when_map_{label}_{page}",
        on_select="rerun",
        selection_mode="points",
        config=frame.PLOTLY_CONFIG,
    )
    fixed = snap["fixed"]
    st.caption(
        f"Each cell: {contest.TITLES[label]} minus the best of SW-LinTS, D-LinTS and LinTS, "
        f"reward per step, mean of {len(snap['shown_seeds'])} seeds (▲/▼ when the 95% "
        f"Student t interval excludes 0), and the share of the gap to the per-state oracle "
        f"closed. Every contestant tuned per cell on 3 other seeds. Fixed: "
        f"{fixed['n_states']} states, each back {fixed['returns']} times, K = "
        f"{fixed['n_arms']}, d = {fixed['d']}. Worlds are marked on the page of their "
        "nearest batch size. Click a cell to open its world in Race (or pick it below)."
    )
    cell = _picked_cell(snap, event, page)
    if cell is not None:  # a new click on a cell: its world in Race
        open_in_race(cell)
    xs = snap["x"]["values"]
    ticks_y = vmap.axis_ticks(snap, "y")
    c1, c2, c3 = st.columns([2, 2, 2], vertical_alignment="bottom")
    i = c1.selectbox(
        "Season length", range(len(xs)), format_func=lambda k: f"{xs[k]:,}", key="when_x"
    )
    j = c2.selectbox(
        "Signal-to-noise", range(len(ticks_y)), format_func=ticks_y.__getitem__, key="when_y"
    )
    picked = snapshot.cell_at(snap, i, j, page)
    if c3.button("Open this world in Race", icon=":material/sports_score:", key="when_open"):
        open_in_race(picked)
    s = picked[label]
    st.markdown(
        f"**This cell**: {contest.verdict(picked, label)} — {contest.TITLES[label]} "
        f"{picked['means'][label]:.4f}, best baseline {contest.TITLES[picked['best_baseline']]} "
        f"{picked['means'][picked['best_baseline']]:.4f}, oracle "
        f"{picked['means'][contest.ORACLE]:.4f}; difference {s['diff']:+.4f} ± {s['half']:.4f}."
    )


def regions_section(snap: dict) -> None:
    label = st.session_state.get(VARIANT) or "allseason-sw"
    page = current_page(snap)
    pk = KNOBS[snap["page"]["knob"]][0]
    st.subheader(f"The regions, in one sentence each ({pk} {page:g})")
    for r in snapshot.regions(snap, label, page):
        st.markdown(f"- {r['sentence']}")
    boundary = snapshot.boundary_sentence(snap, label, page)
    if boundary:
        st.markdown(f"- **The boundary**: {boundary}")


def worlds_section(snap: dict) -> None:
    st.subheader("Where the named worlds fall, and a real race of each")
    rows = []
    for w in snap.get("worlds", []):
        k, p, r = w["knobs"], w["prediction"]["allseason-sw"], w["raced"]
        rows.append(
            {
                "world": w["name"],
                "season (obs.)": round(k["season_length"]),
                "SNR": round(k["snr"], 2),
                "returns": round(k["returns"], 1),
                "batch": k["batch_size"],
                "map predicts": f"{p['verdict']} ({p['diff']:+.3f})",
                "raced": f"{contest.verdict(r)} ({r['allseason-sw']['diff']:+.3f} "
                f"± {r['allseason-sw']['half']:.3f}) vs {contest.TITLES[r['best_baseline']]}",
                "gap closed": f"{r['allseason-sw']['gap_closed']:.0%}",
                "map right?": "yes" if p["verdict"] == contest.verdict(r) else "no",
            }
        )
    st.dataframe(rows, hide_index=True, key="when_worlds")
    st.caption(
        "All-Season (SW). The map predicts from the nearest cell; the race is the same tuned "
        "contest on the world itself (10 seeds). Worlds of 0/1 sales assume σ² = 0.25."
    )


def screening_section(snap: dict) -> None:
    rows = (snap.get("screening") or {}).get("allseason-sw")
    if not rows:
        return
    st.subheader("Which knobs decide it: the screening")
    table = []
    for r in rows:
        table.append(
            {
                "knob": r["title"],
                "low · base · high": f"{r['low']:g} · {r['base']:g} · {r['high']:g}",
                "gap closed": f"{r['gap_low']:.0%} · {r['gap_base']:.0%} · {r['gap_high']:.0%}",
                "effect on gap closed": f"{r['gap_effect']:+.0%} ± {r['gap_effect_half']:.0%}",
                "effect on reward/step": f"{r['effect']:+.3f} ± {r['effect_half']:.3f}",
            }
        )
    st.dataframe(table, hide_index=True, key="when_screening")
    st.caption(
        "One knob at a time around a base world (200 observations per season, 3 states each "
        "back twice, K = d = 5, σ² = 0.1, batches of 1), each point a tuned contest on 10 "
        "seeds; effects (high − low) with 95% Welch t intervals; reward/step is All-Season "
        "(SW) minus the best baseline. Sorted by the swing of the share of the "
        "oracle gap closed: the top two are the map's axes."
    )


# --- the user's own world ----------------------------------------------------------------
def _md(text: str) -> str:
    """A user's text (a file name) shown literally in Markdown: every mark escaped."""
    return re.sub(r"([\\`*_\[\]<>#~|$:!{}()+\-.=])", r"\\\1", str(text)[:120])


def _table_from(data: bytes, origin: str):
    try:
        return api.read_user_file(data, kind="table")
    except api.SpecError as e:
        st.error(f"{origin}: {state.explain(e)}", icon=":material/error:")
        return None


def your_world_inputs():
    """(name, scenario, world) of the user's world, or None; inputs and errors shown."""
    source = st.radio(
        "Which world?",
        [
            "The Pattern builder's scenario",
            "The reward table of the Your data page",
            "A reward table uploaded here",
        ],
        key="when_source",
        horizontal=True,
    )
    if source.startswith("The Pattern"):
        sc = state.scenario()
        st.caption(frame.scenario_line(sc))
        return "the Pattern builder's scenario", sc, None
    if source.startswith("The reward table"):
        src = st.session_state.get(yourdata.SOURCE)
        if not src:
            st.info(
                "The Your data page holds no file yet: open it and upload a reward table "
                "(or press its example button), or upload one here.",
                icon=":material/info:",
            )
            return None
        table, name = _table_from(src["data"], "The Your data page's file"), src["name"]
    else:
        up = st.file_uploader(
            "A reward table (CSV: time, arm, reward)",
            type=["csv"],
            key="when_upload",
            max_upload_size=yourdata.MAX_MB,
        )
        if up is None:
            return None
        table, name = (
            _table_from(up.getvalue()[: yourdata.LIMITS["bytes"] + 1], "The upload"),
            up.name,
        )
    if table is None:
        return None
    steps = st.number_input(
        "Customers per period",
        1,
        1000,
        10,
        key="when_steps",
        help="Each period of the table is one batch of this many customers.",
    )
    try:
        sc = table.scenario(int(steps))
    except api.SpecError as e:
        st.error(state.explain(e), icon=":material/error:")
        return None
    return name, sc, table


@st.cache_data(show_spinner="Estimating the world's knobs…", max_entries=16)
def _knobs(key: str, _sc, _world) -> dict:
    return estimate_knobs(_sc, _world)


def _key(sc, world) -> str:
    tag = "" if world is None else str(hash((world.rates.tobytes(), world.arm_names)))
    return sc.to_json() + tag


def your_world(snap: dict) -> dict | None:
    """The user's world: inputs, knobs, prediction, and the check race (a button)."""
    got = your_world_inputs()
    if got is None:
        return None
    name, sc, world = got
    key = _key(sc, world)
    knobs = _knobs(key, sc, world)
    pred = snapshot.predict(snap, knobs)
    return {"name": name, "scenario": sc, "world": world, "key": key, "knobs": knobs, "pred": pred}


def your_world_result(snap: dict, mine: dict) -> None:
    k = mine["knobs"]
    name = mine["name"]
    name = name[0].upper() + name[1:] if name.startswith("the ") else _md(name)
    st.markdown(
        f"**{name}**: seasons of {k['season_length']:,.0f} observations on average, "
        f"{k['n_states']} states, each back {k['returns']:.1f} times, K = {k['n_arms']}, "
        f"d = {k['d']}, batches of {k['batch_size']:g}, signal-to-noise {k['snr']:.2f}. "
        "Marked “your world” on the map."
    )
    st.info(snapshot.prediction_sentence(snap, k, mine["pred"]), icon=":material/map:")
    if mine["world"] is not None:
        st.caption(
            "A reward table is a world of fixed one-hot arms and 0/1 sales whose rates may "
            "drift inside a season; the map's worlds have fresh random arms and Gaussian "
            "noise. On the example reward table the map predicted a tie and the race was a "
            "clear loss: race yours to check."
        )
    sc = mine["scenario"]
    if sc.horizon > MAX_CHECK_STEPS:
        st.warning(
            f"Racing it here is limited to {MAX_CHECK_STEPS:,} steps; this world has "
            f"{sc.horizon:,}.",
            icon=":material/block:",
        )
        return
    cost = api.estimate_cost(sc)  # known before it runs: refused above the budget
    if cost > api.COST_BUDGET_SECONDS:
        st.warning(
            f"Racing it here is estimated at {cost:,.0f} CPU-seconds; at most "
            f"{api.COST_BUDGET_SECONDS:,} per request in this app. From a terminal: "
            "`python -m allseason map --grid FILE` with a grid of this world's knobs.",
            icon=":material/block:",
        )
        return
    ss = st.session_state
    if st.button(
        "Race it to check",
        icon=":material/sports_score:",
        key="when_check",
        help="The same tuned contest as a map cell, on this world: 3 tuning seeds, "
        f"then 10 shown seeds (about 100 runs), about {cost:,.0f} CPU-seconds (estimated).",
    ):
        bar = st.progress(0.0, text="Racing the tuned contest on your world…")
        with runcache.compute_slot(bar), st.spinner("Racing the tuned contest on your world…"):
            with tempfile.TemporaryDirectory() as tmp:  # a store of its own, then gone
                cell = race_world(sc, mine["world"], tmp, inline=True, progress=False)
        bar.empty()
        ss[MY_RESULT] = (mine["key"], cell)
    got = ss.get(MY_RESULT)
    if got and got[0] == mine["key"] and got[1] is not None:
        r = got[1]
        s = r["allseason-sw"]
        st.success(
            f"Raced: All-Season (SW) {contest.verdict(r)} against "
            f"{contest.TITLES[r['best_baseline']]}: {s['diff']:+.4f} ± {s['half']:.4f} reward per "
            f"step (95% t, 10 seeds), {s['gap_closed']:.0%} of the oracle gap closed. The map "
            f"predicted: {mine['pred']['allseason-sw']['verdict']}.",
            icon=":material/check_circle:",
        )


def show() -> None:
    snap = _snapshot()
    map_slot = st.container()
    regions_slot = st.container()
    st.subheader("Your world on the map")
    mine = None
    with frame.guard("your world"):
        mine = your_world(snap)
        if mine is not None:
            your_world_result(snap, mine)
    with map_slot:
        map_section(snap, mine)
    with regions_slot:
        regions_section(snap)
    worlds_section(snap)
    screening_section(snap)
