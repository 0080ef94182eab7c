"""The Paper tables page's glue: stored reproduction results beside the paper's numbers, the
reward curves, and a small live race on real data.

Results are read only from one server-side folder (``$ALLSEASON_RESULTS/paper``, default
``results/paper`` beside the app), written by ``python -m allseason paper``; the user picks a
table from a fixed list, never a path.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import streamlit as st

from allseason import paper_tables, reproduce
from allseason.data import DataUnavailable
from allseason.viz import paper as vpaper

from . import runs, views

FOLDER = Path(os.environ.get("ALLSEASON_RESULTS",
                             Path(__file__).resolve().parents[2] / "results")) / "paper"
LIVE_LIMITS = dict(n_min=600, n_max=5000, seeds=3)


def _mtime(path: Path) -> float:
    return path.stat().st_mtime if path.exists() else 0.0


@st.cache_data(show_spinner="Reading the stored results…", max_entries=4)
def _stored(mtime_runs: float, mtime_curves: float):
    return reproduce.load_runs(FOLDER), reproduce.load_curves(FOLDER)


def _table_picker() -> str:
    return st.segmented_control(
        "Table", paper_tables.TABLES, default=paper_tables.TABLES[0], key="paper_table",
        format_func=lambda t: paper_tables.CAPTIONS[t], required=True) or paper_tables.TABLES[0]


def _how_to_run(table: str) -> None:
    st.info(f"No stored reproduction of this table yet (looked in `{FOLDER}`). Run it from a "
            f"terminal, then reload this page:\n\n```bash\npython -m allseason paper "
            f"--table {table}     # or --all\n```\n\nIt needs the data sets (`make data`) and "
            f"takes minutes per table on two cores. Meanwhile the paper's numbers are shown "
            f"below.", icon=":material/info:")


def tables() -> None:
    """Our table beside the paper's (heatmap of the differences), the chosen
    hyperparameters, and the reward curves per pattern."""
    table = _table_picker()
    runs, curves = _stored(_mtime(FOLDER / "runs.csv"), _mtime(FOLDER / "curves.csv"))
    protocol = reproduce.Protocol()
    frame = reproduce.table_frame(table, runs, protocol)
    caption = paper_tables.CAPTIONS[table]
    status = reproduce.table_status(table, runs, protocol)
    (v_done, v_all), (t_done, t_all) = status["validation"], status["test"]
    started = bool(v_done or t_done)
    if started and (t_all is None or t_done < t_all):
        st.info(f"Reproduction of this table in progress (or stopped): grid search "
                f"{v_done} of {v_all} runs, test {t_done} of "
                f"{t_all if t_all is not None else '?'} runs. Run "
                f"`python -m allseason paper --table {table}` to go on (it resumes); "
                f"reload to see more.", icon=":material/hourglass_top:")
    if frame["mean"].isna().all():
        if not started:
            _how_to_run(table)
        paper = paper_tables.paper_frame(table)
        st.markdown(f"**The paper's table: {caption}** (mean reward per step ± std over "
                    f"seeds, first 30,000 images)")
        st.dataframe(paper_tables.wide(paper, "paper"), key="paper_only_table")
        return
    n_diff = int(frame["differs"].sum())
    done = int(frame["mean"].notna().sum())
    st.markdown(f"**{caption}**: {done} of {len(frame)} cells measured; **{n_diff}** differ "
                f"from the paper by more than {paper_tables.DIFF_THRESHOLD}. Mean reward per "
                f"step over the first {protocol.n:,} images (1 = always right), mean ± std "
                f"over seeds.")
    fig = vpaper.comparison_figure(frame, f"{caption}: ours against the paper")
    views.chart(fig, "Each cell: our mean reward ± std over seeds, the paper's, and the "
                     "difference. Hyperparameters from our grid search on the first 10% of "
                     "the data (below).", f"paper-{table}-comparison", key=f"paper_cmp_{table}")
    cols = ["label", "pattern", "mean", "std", "paper_mean", "paper_std", "diff", "differs",
            "seeds", "params", "seconds"]
    with st.expander("The numbers, and the hyperparameters each cell used"):
        st.dataframe(frame[cols], hide_index=True, key=f"paper_numbers_{table}",
                     column_config={"seconds": st.column_config.NumberColumn(
                         "s per run", format="%.1f")})
        views.csv_button("CSV of this table", frame[cols], f"paper-{table}",
                         key=f"csv_paper_{table}")
    oracle = reproduce.oracle_frame(table, runs, protocol)
    if len(oracle):
        with st.expander("Diagnostic: what did the grid search on the first 10% cost?"):
            st.caption("Every grid point run on the full test data (one seed) and the best "
                       "one in hindsight, beside the protocol's choice. The oracle peeks at "
                       "the test data, so it is never our result: a large cost means the "
                       "validation run chose badly, not that the algorithm cannot do better.")
            st.dataframe(oracle, hide_index=True, key=f"paper_oracle_{table}",
                         column_config={c: st.column_config.NumberColumn(format="%.3f")
                                        for c in ("protocol_mean", "oracle_mean", "cost")})
    sub = curves[(curves.table == table) & (curves.protocol == protocol.key())]
    if len(sub):
        kind = st.radio("Curves show", list(vpaper.CURVE_KINDS), horizontal=True,
                        format_func=vpaper.CURVE_KINDS.get, key="paper_curve_kind")
        fig = vpaper.curves_figure(sub, f"{caption}: reward over time", kind,
                                   reproduce.change_points(protocol.n))
        views.chart(fig, "One panel per season pattern, one line per algorithm (mean over "
                         "seeds). A line bending down after a grey change point is an "
                         "algorithm still playing the old season's answers.",
                    f"paper-{table}-curves", key=f"paper_curves_{table}")


def live_race() -> None:
    """A small race on real data, run now: a form, a progress bar, the curves."""
    ss = st.session_state
    with st.form("paper_live"):
        c1, c2, c3 = st.columns(3)
        table = c1.selectbox("Problem", paper_tables.TABLES, key="live_table",
                             format_func=lambda t: paper_tables.CAPTIONS[t])
        pattern = c2.selectbox("Season pattern", paper_tables.PATTERNS, index=1,
                               key="live_pattern")
        n = c3.number_input("Images (steps)", LIVE_LIMITS["n_min"], LIVE_LIMITS["n_max"],
                            3000, step=500, key="live_n",
                            help=f"{LIVE_LIMITS['n_min']:,} to {LIVE_LIMITS['n_max']:,} here; "
                                 "the paper uses 30,000 (run those from the terminal).")
        policies = st.multiselect(
            "Algorithms", reproduce.POLICIES, default=["allseason-sw", "allseason-disc",
                                                       "sw-lints", "lints", "random"],
            format_func=lambda p: paper_tables.LABELS[p], key="live_policies")
        seeds = st.slider("Seeds", 1, LIVE_LIMITS["seeds"], 2, key="live_seeds")
        go = st.form_submit_button("Run on real data", type="primary",
                                   icon=":material/play_arrow:")
    if go:
        if not policies:
            st.error("Pick at least one algorithm.", icon=":material/error:")
            return
        params = reproduce.stored_choice(table, pattern, FOLDER)
        jobs = reproduce.live_jobs(table, pattern, policies, int(n), int(seeds), params)
        bar = st.progress(0.0, text="Loading the data set…")
        results, t0 = [], time.perf_counter()
        try:
            with runs.compute_slot(bar):
                for i, job in enumerate(jobs):
                    bar.progress(i / len(jobs), text=f"{paper_tables.LABELS[job.policy]}, "
                                                     f"seed {job.seed} ({i + 1} of "
                                                     f"{len(jobs)} runs)")
                    results.append(reproduce.run_job(job))
        except DataUnavailable as e:
            bar.empty()
            st.error(f"{e}", icon=":material/database_off:")
            return
        bar.progress(1.0, text=f"Done: {len(jobs)} runs in {time.perf_counter() - t0:.1f} s")
        ss["live_result"] = dict(table=table, pattern=pattern, n=int(n), params=params,
                                 curves=reproduce.curves_frame(results),
                                 means=pd.DataFrame([dict(algorithm=vpaper.policy_name(j.policy),
                                                          seed=j.seed, mean_reward=m)
                                                     for j, m, _, _ in results]))
    res = ss.get("live_result")
    if res is None:
        st.caption("Nothing run yet: pick a problem and press **Run on real data**.")
        return
    caption = paper_tables.CAPTIONS[res["table"]]
    fig = vpaper.curves_figure(res["curves"], f"{caption}, {res['pattern']} pattern, first "
                               f"{res['n']:,} images", "average",
                               {res["pattern"]: reproduce.change_points(res["n"])[res["pattern"]]})
    views.chart(fig, "Mean reward so far (1 = always right); the last value of each line is "
                     "its score. Hyperparameters: the stored grid-search choice for this table "
                     "and pattern, else the defaults listed below.", "paper-live",
                key="paper_live_curves")
    board = (res["means"].groupby("algorithm")["mean_reward"].agg(["mean", "std", "count"])
             .sort_values("mean", ascending=False).reset_index())
    board.columns = ["algorithm", "mean reward", "std over seeds", "seeds"]
    c1, c2 = st.columns([3, 2])
    c1.dataframe(board, hide_index=True, key="paper_live_board",
                 column_config={"mean reward": st.column_config.NumberColumn(format="%.3f"),
                                "std over seeds": st.column_config.NumberColumn(format="%.3f")})
    c2.caption("Hyperparameters used: " + "; ".join(
        f"{paper_tables.LABELS[p]} " + (", ".join(f"{k} = {x:g}" for k, x in v.items()) or "—")
        for p, v in res["params"].items() if p in set(res["curves"]["policy"])))
    views.csv_button("CSV of these curves", res["curves"], "paper-live-curves",
                     key="csv_paper_live")
