"""The Paper tables page's two tabs that run on real data now: a small race (the curves and a
leaderboard) and one 30,000-step All-Season run looked inside. Both wait for a compute slot
(:func:`allseason.ui.runcache.compute_slot`) like the races, and say so when the data sets are
not installed.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import streamlit as st

from allseason import api
from allseason.paper import reproduce
from allseason.paper import tables as paper_tables
from allseason.viz import paper as vpaper

from . import keys, paper, runcache
from .frame import chart, csv_button
from .keys import PAPER_INSIDE_REAL, PAPER_LIVE_RESULT

LIVE_LIMITS = api.PAPER_LIVE_LIMITS  # allseason.limits


def reset() -> None:
    """The Paper tables' forms start again (keys.reset); the runs shown stay (results)."""
    keys.reset(st.session_state, keys.PAGE_PAPER)


def live_race() -> None:
    """A small race on real data, run now: a form, a progress bar, the curves."""
    asked = _live_form()
    if asked is not None and not _run_live(*asked):
        return
    res = st.session_state.get(PAPER_LIVE_RESULT)
    if res is None:
        st.caption("Nothing run yet: pick a problem and press **Run on real data**.")
        return
    _show_live(res)


def _live_form():
    """The problem, pattern, images, algorithms and seeds; (table, pattern, n, policies,
    seeds) when submitted, else None."""
    with st.form("paper_live"):
        c1, c2, c3 = st.columns(3)
        table = c1.selectbox(
            "Problem",
            paper_tables.TABLES,
            key="live_table",
            format_func=lambda t: paper_tables.CAPTIONS[t],
        )
        pattern = c2.selectbox("Season pattern", paper_tables.PATTERNS, index=1, key="live_pattern")
        n = c3.number_input(
            "Images (steps)",
            LIVE_LIMITS["n_min"],
            LIVE_LIMITS["n_max"],
            3000,
            step=500,
            key="live_n",
            help=f"{LIVE_LIMITS['n_min']:,} to {LIVE_LIMITS['n_max']:,} here; "
            "the paper uses 30,000 (run those from the terminal).",
        )
        policies = st.multiselect(
            "Algorithms",
            reproduce.POLICIES,
            default=["allseason-sw", "allseason-disc", "sw-lints", "lints", "random"],
            format_func=lambda p: paper_tables.LABELS[p],
            key="live_policies",
        )
        seeds = st.slider("Seeds", 1, LIVE_LIMITS["seeds"], 2, key="live_seeds")
        go = st.form_submit_button("Run on real data", type="primary", icon=":material/play_arrow:")
    return (table, pattern, int(n), policies, int(seeds)) if go else None


def _run_live(table: str, pattern: str, n: int, policies: list[str], seeds: int) -> bool:
    """Run the small race into ``st.session_state[PAPER_LIVE_RESULT]``; False (and the reason
    on the page) if it could not run."""
    if not policies:
        st.error("Pick at least one algorithm.", icon=":material/error:")
        return False
    params = reproduce.stored_choice(
        table, pattern, paper.FOLDER, paper.protocols()[paper.DEFAULT_VALIDATION]
    )
    jobs = reproduce.live_jobs(table, pattern, policies, n, seeds, params)
    bar = st.progress(0.0, text="Loading the data set…")
    results, t0 = [], time.perf_counter()
    try:
        with runcache.compute_slot(bar):
            for i, job in enumerate(jobs):
                bar.progress(
                    i / len(jobs),
                    text=f"{paper_tables.LABELS[job.policy]}, "
                    f"seed {job.seed} ({i + 1} of "
                    f"{len(jobs)} runs)",
                )
                results.append(reproduce.run_job(job))
    except api.DataUnavailable as e:
        bar.empty()
        st.error(f"{e}", icon=":material/database_off:")
        return False
    bar.progress(1.0, text=f"Done: {len(jobs)} runs in {time.perf_counter() - t0:.1f} s")
    st.session_state[PAPER_LIVE_RESULT] = dict(
        table=table,
        pattern=pattern,
        n=n,
        params=params,
        curves=reproduce.curves_frame(results),
        means=pd.DataFrame(
            [
                dict(algorithm=vpaper.policy_name(j.policy), seed=j.seed, mean_reward=m)
                for j, m, _, _ in results
            ]
        ),
    )
    return True


def _show_live(res: dict) -> None:
    """The small race's curves, its leaderboard and the hyperparameters it used."""
    caption = paper_tables.CAPTIONS[res["table"]]
    fig = vpaper.curves_figure(
        res["curves"],
        f"{caption}, {res['pattern']} pattern, first {res['n']:,} images",
        "average",
        {res["pattern"]: reproduce.change_points(res["n"])[res["pattern"]]},
    )
    chart(
        fig,
        "Mean reward so far (1 = always right); the last value of each line is "
        "its score. Hyperparameters: the stored grid-search choice for this table "
        "and pattern, else the defaults listed below.",
        "paper-live",
        key="paper_live_curves",
    )
    board = (
        res["means"]
        .groupby("algorithm")["mean_reward"]
        .agg(["mean", "std", "count"])
        .sort_values("mean", ascending=False)
        .reset_index()
    )
    board.columns = ["algorithm", "mean reward", "std over seeds", "seeds"]
    c1, c2 = st.columns([3, 2])
    c1.dataframe(
        board,
        hide_index=True,
        key="paper_live_board",
        column_config={
            "mean reward": st.column_config.NumberColumn(format="%.3f"),
            "std over seeds": st.column_config.NumberColumn(format="%.3f"),
        },
    )
    c2.caption(
        "Hyperparameters used: "
        + "; ".join(
            f"{paper_tables.LABELS[p]} " + (", ".join(f"{k} = {x:g}" for k, x in v.items()) or "—")
            for p, v in res["params"].items()
            if p in set(res["curves"]["policy"])
        )
    )
    csv_button("CSV of these curves", res["curves"], "paper-live-curves", key="csv_paper_live")


# --- inside All-Season on real data ---------------------------------------------------------
INSIDE_RULES = {
    "carried": "Carried weights (fixed share, the default)",
    "printed": "The paper's printed rule (last batch alone)",
}


@st.cache_data(show_spinner=False, max_entries=16)
def _inside_run(table: str, pattern: str, rule: str, tau: int, n_max: int, seed: int) -> dict:
    """One 30,000-step All-Season(SW) run on real data, looked inside (cached per setting)."""
    row = "allseason-sw" if rule == "carried" else "allseason-sw-printed"
    params = {
        "tau": tau,
        "n_max": n_max,
        **(reproduce.CARRIED if rule == "carried" else reproduce.PRINTED),
    }
    job = reproduce.Job(
        "inside", table, pattern, row, json.dumps(params, sort_keys=True), seed, reproduce.HORIZON
    )
    trace, setup, seconds = reproduce.play_job(job)
    result = api.RaceResult(None, {(trace.label, seed): trace})
    return dict(
        weights=result.weights_frame(),
        pattern=setup.pattern,
        seconds=seconds,
        summary=api.ensemble_summary(trace, setup.pattern),
        learnt=api.learnt_by_text(api.learnt_by(trace, setup.pattern)),
        recall=api.recall_table(trace, setup.pattern),
        label=trace.label,
    )


def inside_real() -> None:
    """All-Season on real data, inside: the paper's figure, bandits, recall of each return."""
    from allseason.viz import learnt as vlearnt
    from allseason.viz import weights as vweights

    st.markdown(
        "The same views as *Inside All-Season*, on the real data: one 30,000-step run "
        "of All-Season (SW) with either weighting. Carried weights should give each "
        "season a bandit of its own and hand the weight back to it when the season "
        "returns; the printed rule spawns a bandit at almost every step."
    )
    ten = [t for t in paper_tables.TABLES if t.endswith("10arm")] + [
        t for t in paper_tables.TABLES if not t.endswith("10arm")
    ]
    with st.form("paper_inside"):
        c1, c2, c3 = st.columns(3)
        table = c1.selectbox(
            "Problem", ten, key="inside_table", format_func=lambda t: paper_tables.CAPTIONS[t]
        )
        pattern = c2.selectbox("Season pattern", paper_tables.PATTERNS, key="inside_pattern")
        rule = c3.radio(
            "Weights", list(INSIDE_RULES), format_func=INSIDE_RULES.get, key="inside_rule"
        )
        c4, c5, c6 = st.columns(3)
        tau = c4.select_slider("τ (shadow window)", reproduce.TAUS, 500, key="inside_tau")
        n_max = c5.select_slider("N_max", (3, 4, 5), 5, key="inside_n_max")
        seed = c6.number_input("Seed", 0, 4, 0, key="paper_inside_seed")
        go = st.form_submit_button("Look inside", type="primary", icon=":material/troubleshoot:")
    if go:
        args = (table, pattern, rule, int(tau), int(n_max), int(seed))
        bar = st.progress(0.0, text="Playing 30,000 images (1-6 s)…")
        try:
            with runcache.compute_slot(bar):
                st.session_state[PAPER_INSIDE_REAL] = (args, _inside_run(*args))
        except api.DataUnavailable as e:
            bar.empty()
            st.error(f"{e}", icon=":material/database_off:")
            return
        bar.empty()
    got = st.session_state.get(PAPER_INSIDE_REAL)
    if got is None:
        st.caption("Nothing run yet: pick a problem and press **Look inside**.")
        return
    (table, pattern, rule, tau, n_max, seed), res = got
    s = res["summary"]
    m = st.columns(4)
    m[0].metric("Mean reward", f"{s['mean_reward']:.3f}")
    m[1].metric("Base bandits created", f"{s['bandits_created']:,}")
    m[2].metric("Batches with top weight > 0.9", f"{s['top_share']:.0%}")
    delays = [d for d in s["recall_delays"] if d == d]
    m[3].metric(
        "Recall delay (median)",
        f"{int(np.median(delays))} steps" if delays else "—",
        help="Steps until the bandit that learnt a returning season holds the top weight again.",
    )
    fig = vweights.top_weight_figure(res["weights"], res["pattern"], policy=res["label"], seed=seed)
    chart(
        fig,
        f"{paper_tables.CAPTIONS[table]}, {pattern} pattern, "
        f"{INSIDE_RULES[rule].lower()}, τ = {tau}, N_max = {n_max}, seed {seed}: "
        f"the weight of the most likely bandit after each batch of 10 images.",
        "real-data-top-weight",
        key="paper_inside_top",
    )
    learnt = res["learnt"].replace("*", "\\*")  # θ*1: not italics
    st.markdown(
        f"**Who learnt which state** (bandits that played at least 10% of a state's "
        f"steps): {learnt}."
    )
    chart(
        vlearnt.recall_figure(res["recall"]),
        "Steps until the right bandit holds the top weight after each change point.",
        "real-data-recall",
        key="paper_inside_recall",
    )
    csv_button(
        "CSV of the change points", res["recall"], "real-data-recall", key="csv_paper_inside_recall"
    )
