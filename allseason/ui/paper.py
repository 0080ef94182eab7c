"""The Paper tables page: stored reproduction results beside the paper's numbers, the reward
curves, and LinTS's convergence; the two tabs that run on real data now are
:mod:`allseason.ui.paper_runs`. The page of :mod:`allseason.paper`, whose modules it reads
(the rest of the engine through ``allseason.api``).

Results are read only from one server-side folder, :func:`allseason.paper.reproduce.results_dir`
(``$ALLSEASON_RESULTS/paper``, default ``results/paper`` in the checkout: the folder the
``paper`` command writes by default), never a path typed by the user. With nothing stored,
the tracked snapshot (:mod:`allseason.paper.tables_snapshot`) is shown, said to be one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from allseason.paper import reproduce
from allseason.paper import tables as paper_tables
from allseason.paper import tables_snapshot as paper_snapshot
from allseason.viz import paper as vpaper

from .frame import chart, csv_button

FOLDER = reproduce.results_dir()
DEFAULT_VALIDATION = "prefix"


def protocols() -> dict[str, reproduce.Protocol]:
    """The protocols the page reads, the default first."""
    names = [DEFAULT_VALIDATION] + [v for v in reproduce.VALIDATIONS if v != DEFAULT_VALIDATION]
    return {v: reproduce.Protocol(validation=v) for v in names}


def _protocol_name(v: str) -> str:
    return f"{v} (default)" if v == DEFAULT_VALIDATION else v


def _mtime(folder: Path) -> float:
    """The store's last change (WAL mode: the -wal file changes first). The store is the
    sweeps' file (``reproduce.STORE_FILE``), where the reproduction keeps its runs."""
    store = reproduce.STORE_FILE
    paths = (folder / store, folder / f"{store}-wal")
    return max((q.stat().st_mtime for q in paths if q.exists()), default=0.0)


@st.cache_data(show_spinner="Reading the stored results…", max_entries=4)
def _stored(folder: str, mtime: float):
    return reproduce.load_runs(folder), reproduce.load_curves(folder)


def _table_picker() -> str:
    return (
        st.segmented_control(
            "Table",
            paper_tables.TABLES,
            default=paper_tables.TABLES[0],
            key="paper_table",
            format_func=lambda t: paper_tables.CAPTIONS[t],
            required=True,
        )
        or paper_tables.TABLES[0]
    )


def _how_to_run(table: str) -> None:
    st.info(
        f"No stored reproduction of this table yet (looked in `{FOLDER}`). Run it from a "
        f"terminal, then reload this page:\n\n```bash\npython -m allseason paper "
        f"--table {table}     # or --all; --validation both for both protocols\n```\n\n"
        f"It needs the data sets (`make data`) and takes minutes per table on two cores. "
        f"Meanwhile the paper's numbers are shown below.",
        icon=":material/info:",
    )


def _comparison(table: str, frame: pd.DataFrame, n: int, where: str, key: str) -> None:
    """The heatmap of one protocol's table and its numbers."""
    caption = paper_tables.CAPTIONS[table]
    n_diff = int(frame["differs"].sum())
    done = int(frame["mean"].notna().sum())
    st.markdown(
        f"**{caption}**: {done} of {len(frame)} cells measured; **{n_diff}** differ "
        f"from the paper by more than {paper_tables.DIFF_THRESHOLD}. Mean reward per "
        f"step over the first {n:,} images (1 = always right), mean ± std over seeds. "
        f"All-Season: weights carried with fixed share (the default), and the "
        f"paper's printed rule in rows of its own, both compared with the paper's "
        f"All-Season numbers. {where}"
    )
    fig = vpaper.comparison_figure(frame, f"{caption}: ours against the paper")
    chart(
        fig,
        "Each cell: our mean reward ± std over seeds, the paper's, and the "
        "difference. Hyperparameters from our grid search on the first 10% of "
        "the data (below).",
        f"paper-{table}-comparison-{key}",
        key=f"paper_cmp_{table}_{key}",
    )
    cols = [
        c
        for c in [
            "label",
            "pattern",
            "mean",
            "std",
            "paper_mean",
            "paper_std",
            "diff",
            "differs",
            "seeds",
            "params",
            "seconds",
        ]
        if c in frame.columns
    ]
    with st.expander("The numbers, and the hyperparameters each cell used"):
        st.dataframe(
            frame[cols],
            hide_index=True,
            key=f"paper_numbers_{table}_{key}",
            column_config={"seconds": st.column_config.NumberColumn("s per run", format="%.1f")},
        )
        csv_button(
            "CSV of this table", frame[cols], f"paper-{table}-{key}", key=f"csv_paper_{table}_{key}"
        )


def _from_snapshot(table: str) -> bool:
    """Show the tracked snapshot's numbers for this table; False if it has none."""
    snap = paper_snapshot.load()
    if not snap:
        return False
    have = [
        v
        for v in protocols()
        if any(c["table"] == table and c["protocol"] == v for c in snap["cells"])
    ]
    if not have:
        return False
    commit = (snap.get("commit") or "")[:10] or "unknown"
    st.info(
        f"No results stored in `{FOLDER}`: these numbers come from the tracked "
        f"snapshot (`allseason/paper/tables_snapshot.json`, commit {commit}, made by "
        f"`{snap.get('command', '')}`). Run `python -m allseason paper --table {table}` "
        f"to measure them here (and see the reward curves).",
        icon=":material/inventory_2:",
    )
    frames = {v: paper_snapshot.frame(snap, table, v) for v in have}
    _protocols_side_by_side(frames)
    v = _pick_protocol(have, f"snap_{table}")
    meta = snap["protocols"][v]
    _comparison(table, frames[v], int(meta["n"]), f"Protocol: {meta['label']}.", f"snap_{v}")
    return True


def _protocols_side_by_side(frames: dict[str, pd.DataFrame]) -> None:
    if len(frames) < 2:
        return
    st.markdown(
        "**Both validation protocols, side by side** (ours under each, and the "
        "paper's). *prefix* (the default, the paper's text): the grid search plays "
        "the first 10% of the season pattern itself; *shrunk*: the whole pattern "
        "shrunk to 10% of the steps."
    )
    st.dataframe(reproduce.side_by_side_frame(frames), key="paper_side_by_side")


def _pick_protocol(names: list[str], key: str) -> str:
    if len(names) == 1:
        return names[0]
    return (
        st.segmented_control(
            "Validation protocol shown below",
            names,
            default=names[0],
            key=f"paper_protocol_{key}",
            format_func=_protocol_name,
            required=True,
        )
        or names[0]
    )


def tables() -> None:
    """Our table beside the paper's (heatmap of the differences), the chosen
    hyperparameters, and the reward curves per pattern; both validation protocols side by
    side when both are stored; the tracked snapshot when nothing is."""
    table = _table_picker()
    runs_, curves = _stored(str(FOLDER), _mtime(FOLDER))
    protos = protocols()
    frames = {v: reproduce.table_frame(table, runs_, p) for v, p in protos.items()}
    for v, p in protos.items():
        status = reproduce.table_status(table, runs_, p)
        (v_done, v_all), (t_done, t_all) = status["validation"], status["test"]
        if (v_done or t_done) and (t_all is None or t_done < t_all):
            flag = "" if v == DEFAULT_VALIDATION else f" --validation {v}"
            st.info(
                f"Reproduction of this table ({_protocol_name(v)} protocol) in progress "
                f"(or stopped): grid search {v_done} of {v_all} runs, test {t_done} of "
                f"{t_all if t_all is not None else '?'} runs. Run "
                f"`python -m allseason paper --table {table}{flag}` to go on (it "
                f"resumes); reload to see more.",
                icon=":material/hourglass_top:",
            )
    measured = [v for v, f in frames.items() if f["mean"].notna().any()]
    if not measured:
        if _from_snapshot(table):
            return
        if runs_.empty:
            _how_to_run(table)
        paper = paper_tables.paper_frame(table)
        st.markdown(
            f"**The paper's table: {paper_tables.CAPTIONS[table]}** (mean reward "
            f"per step ± std over seeds, first 30,000 images)"
        )
        st.dataframe(paper_tables.wide(paper, "paper"), key="paper_only_table")
        return
    _protocols_side_by_side({v: frames[v] for v in measured})
    v = _pick_protocol(measured, table)
    protocol = protos[v]
    _comparison(table, frames[v], protocol.n, f"Protocol: {protocol.label}.", v)
    oracle = reproduce.oracle_frame(table, runs_, protocol)
    if len(oracle):
        with st.expander("Diagnostic: what did the grid search on the first 10% cost?"):
            st.caption(
                "Every grid point run on the full test data (one seed) and the best "
                "one in hindsight, beside the protocol's choice. The oracle peeks at "
                "the test data, so it is never our result: a large cost means the "
                "validation run chose badly, not that the algorithm cannot do better."
            )
            st.dataframe(
                oracle,
                hide_index=True,
                key=f"paper_oracle_{table}",
                column_config={
                    c: st.column_config.NumberColumn(format="%.3f")
                    for c in ("protocol_mean", "oracle_mean", "cost")
                },
            )
    sub = curves[(curves.table == table) & (curves.protocol == protocol.key())]
    if len(sub):
        kind = st.radio(
            "Curves show",
            list(vpaper.CURVE_KINDS),
            horizontal=True,
            format_func=vpaper.CURVE_KINDS.get,
            key="paper_curve_kind",
        )
        fig = vpaper.curves_figure(
            sub,
            f"{paper_tables.CAPTIONS[table]}: reward over time",
            kind,
            reproduce.change_points(protocol.n),
        )
        chart(
            fig,
            "One panel per season pattern, one line per algorithm (mean over "
            "seeds). A line bending down after a grey change point is an "
            "algorithm still playing the old season's answers.",
            f"paper-{table}-curves",
            key=f"paper_curves_{table}",
        )


@st.cache_data(show_spinner=False)
def _convergence_snapshot() -> dict:
    from allseason.paper import convergence as conv

    return conv.load()


def convergence() -> None:
    """Section 6's LinTS convergence figure, from the tracked snapshot, beside the paper's
    statement."""
    from allseason.paper import convergence as conv
    from allseason.viz.convergence import convergence_figure

    snap = _convergence_snapshot()
    st.markdown("**The paper says** (section 6, *Datasets*):")
    st.markdown(f"> {conv.PAPER_QUOTE}")
    learnt = snap["learnt_at"]
    st.markdown(
        f"**We measured** LinTS (λ = 1, σ² = {reproduce.SIGMA2}) on the ten-arm digit task "
        f"with one state, the first {snap['n']:,} MNIST images in order, batches of "
        f"{snap['batch_size']}, {snap['seeds']} seeds: it needs "
        f"**{snap['median_learnt_at']:,.0f} observations** to learn (median; "
        f"{min(learnt):,}–{max(learnt):,} over the seeds), against the paper's about "
        f"{snap['paper_claim']:,}. *Learnt* is our definition (the paper gives none): the mean "
        f"reward over the last {snap['window']} observations reaches "
        f"{snap['level']:.0%} of the run's plateau (its mean after step "
        f"{snap['plateau_from']:,}: {min(snap['plateau']):.3f}–{max(snap['plateau']):.3f}). "
        f"At 90% of the plateau: {int(np.median(snap['learnt_at_90'])):,} (median; "
        f"{min(snap['learnt_at_90']):,}–{max(snap['learnt_at_90']):,})."
    )
    chart(
        convergence_figure(snap),
        "Reward per batch of LinTS on stationary MNIST (the paper's figure "
        "fig:lints_LT, whose image is missing from the paper's source). Tracked "
        f"snapshot; `{snap['command']}` recomputes it (needs `make data`).",
        "lints-convergence",
        key="paper_convergence",
    )
    st.dataframe(
        pd.DataFrame(
            {
                "seed": range(snap["seeds"]),
                "learnt at (95%)": learnt,
                "learnt at (90%)": snap["learnt_at_90"],
                "plateau": snap["plateau"],
            }
        ),
        hide_index=True,
        key="paper_convergence_table",
    )
