"""The Inside All-Season page: how All-Season decided in the session's last race. Pick a
contestant and a seed, then one view: its bandits' weights, their births and prunings, which
bandit played which season and how fast the right one came back, carried weights against the
printed rule (:mod:`allseason.ui.weighting`), and the posteriors in the plane (d = 2). Only the
open view is built. The choice is in the link (``view``, ``contestant``, ``inside_seed``).
"""

from __future__ import annotations

import json
import re

import pandas as pd
import streamlit as st

from allseason import api
from allseason.viz.style import policy_name
from allseason.viz.text import md
from allseason.viz.timeline import date_ticks

from . import keys, runcache, state, weighting
from .frame import chart, csv_button, guard, page_link, scenario_line
from .keys import INSIDE_LABEL, INSIDE_LINK_NOTES, INSIDE_LINK_NOW, INSIDE_SEED, INSIDE_VIEW
from .runcache import RaceRun


def reset() -> None:
    """Inside All-Season starts again at its first contestant, seed and view (keys.reset)."""
    keys.reset(st.session_state, keys.PAGE_INSIDE)


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
    "posterior": "Each base bandit's posterior mean (dot) and 2σ ellipse beside the true θ "
    "of every state (stars): watch a bandit's ellipse shrink onto one star.",
}


def allseason_labels(run: RaceRun | None) -> list[str]:
    """The All-Season contestants of a race (the ones with bandit weights to look into)."""
    if run is None:
        return []
    return [p.label for p in run.race.policies if api.role(p.name).family == "allseason"]


def inside_needs_race(run: RaceRun | None) -> None:
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
            runcache.remember(runcache.run_race(race))
        st.rerun()
    page_link("app_pages/2_Race.py", "Go to the Race page")


def inside_picker(run: RaceRun) -> tuple[str, int]:
    """Choose the contestant and seed to look into."""
    race = run.race
    st.markdown(
        f"**Race** ({len(race.policies)} policies × {race.n_seeds} seeds): "
        + scenario_line(race.scenario).removeprefix("**Scenario**: ")
    )
    labels = allseason_labels(run)
    ss = st.session_state
    notes = ss.setdefault(INSIDE_LINK_NOTES, {})  # link messages, until the input changes
    pending = ss.get(keys.LINK_INSIDE) or {}
    if "contestant" in pending:  # a link's contestant and seed, applied once
        raw = str(pending.pop("contestant"))
        if raw in labels:
            ss[INSIDE_LABEL] = raw
        else:
            notes[INSIDE_LABEL] = (
                f"Link parameter “contestant={raw[:40]}”: this race has "
                f"no All-Season contestant of that name (it has "
                f"{', '.join(labels)}); {labels[0]} is shown."
            )
    if "inside_seed" in pending:
        raw = str(pending.pop("inside_seed")).strip()
        if raw.isdigit() and int(raw) < run.race.n_seeds:
            ss[INSIDE_SEED] = int(raw)
        else:
            notes[INSIDE_SEED] = (
                f"Link parameter “inside_seed={raw[:20]}”: seeds are "
                f"numbered 0 to {run.race.n_seeds - 1} in this race; "
                f"seed 0 is shown."
            )
    c1, c2, _ = st.columns([3, 1, 1])
    with c1:
        label = st.selectbox(
            "All-Season contestant",
            labels,
            key=INSIDE_LABEL,
            format_func=lambda lab: f"{policy_name(lab)}: {_params_text(run, lab)}",
            on_change=notes.pop,
            args=(INSIDE_LABEL, None),
        )
        if notes.get(INSIDE_LABEL):
            st.error(md(notes[INSIDE_LABEL]), icon=":material/link_off:")
    with c2:
        seed = st.selectbox(
            "Seed",
            list(range(run.race.n_seeds)),
            key=INSIDE_SEED,
            help="Seeds are numbered from 0, as in the CSV downloads.",
            on_change=notes.pop,
            args=(INSIDE_SEED, None),
        )
        if notes.get(INSIDE_SEED):
            st.error(md(notes[INSIDE_SEED]), icon=":material/link_off:")
    # the link: only what differs from what the page shows first
    ss[INSIDE_LINK_NOW] = {
        **({"contestant": label} if label != labels[0] else {}),
        **({"inside_seed": str(seed)} if seed else {}),
    }
    return label, seed


def _spec(run: RaceRun, label: str) -> api.PolicySpec:
    return next(p for p in run.race.policies if p.label == label)


def _params_text(run: RaceRun, label: str) -> str:
    spec = _spec(run, label)
    params = dict(spec.params)
    keys = [k for k in ("tau", "gamma", "n_max", "weighting") if k in params]
    return ", ".join(f"{k} = {params[k]}" for k in keys)


def weights_panel(run: RaceRun, label: str, seed: int) -> None:
    from allseason.viz import learnt as vlearnt
    from allseason.viz import weights as vweights

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
            vlearnt.season_year_figure(api.season_year_table(trace, dates, names)),
            INSIDE["season_year"],
            "season-year",
            "in_season_year",
        )
    fig = vweights.top_weight_figure(w, pattern, policy=label, seed=seed)
    chart(fig if dates is None else date_ticks(fig, dates), INSIDE["top"], "top-weight", "in_top")
    st.markdown(
        f"**Who learnt which state** (bandits that played at least 10% of a state's "
        f"steps): {learnt}. "
        f"{ens['bandits_created']:,} base bandits were created in this run; the top "
        f"weight exceeds 0.9 in {ens['top_share']:.0%} of the batches."
    )
    chart(
        vweights.weights_animation(w, pattern, n_frames=150, policy=label, seed=seed),
        INSIDE["animation"],
        "weights-animation",
        "in_anim",
    )
    fig = vweights.weights_area_figure(w, pattern, policy=label, seed=seed)
    chart(
        fig if dates is None else date_ticks(fig, dates), INSIDE["area"], "weights-area", "in_area"
    )


def lives_panel(run: RaceRun, label: str, seed: int) -> None:
    from allseason.viz import lifelines as vlives

    pruning = dict(_spec(run, label).params).get("pruning", "kl")
    own = run.frames_for(label, seed)
    fig = vlives.lifelines_figure(
        own["events"],
        own["weights"],
        run.race.scenario.pattern,
        policy=label,
        seed=seed,
        distance_name="mean distance" if pruning == "mean" else "symmetric KL",
    )
    chart(fig, INSIDE["lives"], "lifelines", "in_lives")


def seasons_panel(run: RaceRun, label: str, seed: int) -> None:
    from allseason.viz import learnt as vlearnt

    trace = run.result.traces[label, seed]
    pattern = run.race.scenario.pattern
    recall = api.recall_table(trace, pattern)
    st.markdown(f"**Verdict** — {recall_verdict(recall)}")
    chart(vlearnt.recall_figure(recall), INSIDE["recall"], "recall", "in_recall")
    with st.expander("The recall table"):
        st.dataframe(recall, hide_index=True, key="in_recall_table")
        st.caption(
            "right_bandit: the shadow (0) for a new state, else the live base bandit "
            "that played this state most before; steps_to_top: steps until it held "
            "the top weight; spawns: base bandits created in the segment."
        )
        csv_button("Recall table (CSV)", recall, "recall", "dl_recall")
    table = api.state_table(trace)
    chart(vlearnt.state_heatmap(table), INSIDE["states"], "bandit-by-state", "in_states")


def inside_view_picker() -> str:
    """Which view of Inside All-Season to build (one at a time: the others cost nothing).
    In the link as ``view=<first word of the view's name>`` (e.g. ``view=births``), with
    the contestant and seed :func:`inside_picker` chose."""
    ss = st.session_state
    notes = ss.setdefault(INSIDE_LINK_NOTES, {})
    views = list(INSIDE_VIEWS)
    slugs = {re.match(r"\w+", v).group().lower(): v for v in views}
    pending = ss.get(keys.LINK_INSIDE) or {}
    if "view" in pending:
        raw = str(pending.pop("view")).strip()
        want = slugs.get(raw.lower()) or (raw if raw in INSIDE_VIEWS else None)
        if want:
            ss[INSIDE_VIEW] = want
        else:
            notes[INSIDE_VIEW] = (
                f"Link parameter “view={raw[:40]}”: no such view (known: "
                f"{', '.join(slugs)}); {views[0]} is shown."
            )
    if not pending:
        ss.pop(keys.LINK_INSIDE, None)
    view = st.radio(
        "View",
        views,
        horizontal=True,
        key=INSIDE_VIEW,
        label_visibility="collapsed",
        on_change=notes.pop,
        args=(INSIDE_VIEW, None),
    )
    if notes.get(INSIDE_VIEW):
        st.error(md(notes[INSIDE_VIEW]), icon=":material/link_off:")
    link = dict(ss.get(INSIDE_LINK_NOW, {}))
    if view != views[0]:
        link["view"] = re.match(r"\w+", view).group().lower()
    state.sync_url(link)
    return view


@st.fragment(key="inside_views")
def inside_views(run_key: str) -> None:
    """The contestant and seed pickers, the view picker and the open view, for the race
    ``run_key`` (its short key, :func:`runcache.key_of`). A fragment: a picker reruns this part
    only, not the page, and only the open view is built."""
    with guard("Inside All-Season"):
        run = runcache.get_or_recompute(run_key)
        label, seed = inside_picker(run)
        view = inside_view_picker()  # only the open view is built
        with guard(f"the view {view}"):
            INSIDE_VIEWS[view](run, label, seed)


def posterior_panel(run: RaceRun, label: str, seed: int) -> None:
    from allseason.viz import posterior as vposterior

    sc = run.race.scenario
    if sc.d != 2:
        st.info(
            f"This animation draws each bandit's posterior in the plane, so it needs "
            f"d = 2 (this race has d = {sc.d}). Set **Dimension d = 2** in the Pattern "
            f"builder and run the race again.",
            icon=":material/straighten:",
        )
        page_link("app_pages/1_Pattern_builder.py", "Open the Pattern builder")
        return
    with st.spinner("Replaying the run to snapshot the posteriors…"):
        history, thetas = posterior_history(sc, _spec(run, label), seed)
    chart(
        vposterior.posterior_animation(history, thetas, n_frames=100),
        INSIDE["posterior"],
        "posterior-animation",
        "in_post",
    )


INSIDE_VIEWS = {  # label: panel(run, label, seed)
    "Weights": weights_panel,
    "Births & prunings": lives_panel,
    "Seasons & recall": seasons_panel,
    "Carried weights vs the printed rule": lambda run, label, seed: weighting.panel(run, label),
    "Posteriors (d = 2)": posterior_panel,
}


@st.cache_data(max_entries=8, show_spinner=False)
def _posterior_history(scenario_json: str, spec_json: str, seed: int, every: int):
    sc = api.Scenario.from_json(scenario_json)
    spec_d = json.loads(spec_json)
    spec = api.PolicySpec(spec_d["name"], spec_d["params"], spec_d["label"])
    return api.posterior_history(sc, spec, seed, every=every)


def posterior_history(
    scenario: api.Scenario, spec: api.PolicySpec, seed: int, n_snapshots: int = 100
):
    """(table, thetas) of :func:`allseason.api.posterior_history`, about ``n_snapshots``
    snapshots, cached."""
    every = max(1, scenario.horizon // n_snapshots)
    return _posterior_history(
        scenario.to_json(), json.dumps(spec.to_dict(), sort_keys=True), int(seed), every
    )


def recall_verdict(recall: pd.DataFrame) -> str:
    """One line on how well the right bandit was recalled at the change points."""
    if recall is None or not len(recall):
        return "No change point in this run: nothing to recall."
    parts = []
    for kind, who in (
        ("returning", "its old base bandit"),
        ("new", "the shadow (or a fresh copy of it)"),
    ):
        rows = recall[recall["kind"] == kind]
        if not len(rows):
            continue
        hit = rows["steps_to_top"].notna()
        med = rows.loc[hit, "steps_to_top"].median() if hit.any() else None
        when = (
            f", after {med:,.0f} step{'' if med == 1 else 's'} (median)" if med is not None else ""
        )
        kept = (
            f", and held it {rows['share_top_right'].median():.0%} of the season (median)"
            if kind == "returning"
            else ""
        )
        parts.append(
            f"{kind} states: {who} took the top weight at {int(hit.sum())} of "
            f"{len(rows)} change points{when}{kept}"
        )
    spare = int(recall.loc[recall["kind"] == "returning", "spawns"].sum())
    text = "; ".join(parts) + "."
    text = text[0].upper() + text[1:]
    if spare:
        text += (
            f" {spare:,} spawns happened in returning seasons (not needed; pruning removes them)."
        )
    return text
