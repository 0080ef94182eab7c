"""The Sweep results page: find stored sweeps, load them (cached), show them.

The page of :mod:`allseason.sweeps`, which it reads through that package's public face.
Sweeps are looked for only under one server-side folder,
:func:`allseason.sweeps.results_root` (``$ALLSEASON_RESULTS``, default ``results/`` in the
checkout), the CLI's default: the user picks one by name from a list, never types a path.
"""

from __future__ import annotations

import re
import sqlite3

import streamlit as st

from allseason import sweeps
from allseason.viz import sweep as vsweep

from . import frame

ROOT = sweeps.results_root()


def available() -> list[str]:
    """Names of the folders under ROOT that hold a sweep's results store (a paper
    reproduction's folder holds the store without a sweep: left out)."""
    if not ROOT.is_dir():
        return []
    return sorted(
        p.name
        for p in ROOT.iterdir()
        if (p / sweeps.STORE_FILE).is_file() and (p / sweeps.SPEC_FILE).is_file()
    )


@st.cache_data(show_spinner="Reading the sweep's results…", max_entries=8)
def _settings(name: str, mtime: float):
    return sweeps.settings_table(sweeps.load_runs(ROOT / name))


def show() -> None:
    names = available()
    if not names:
        st.info(
            f"No sweep results yet under `{ROOT}`. Run one from a terminal, for example\n\n"
            "```bash\npython -m allseason sweep examples/sweep_small.toml "
            "--out results/small\n```\n\nthen reload this page.",
            icon=":material/info:",
        )
        return
    c1, c2 = st.columns([3, 2])
    name = c1.selectbox("Sweep", names, help=f"folders under {ROOT} holding results.sqlite")
    metric = c2.selectbox(
        "Metric", list(vsweep.METRIC_TEXT), format_func=lambda m: vsweep.METRIC_TEXT[m][0]
    )
    try:  # a store that cannot be read (a disk gone, a damaged file): one line, no traceback
        settings = _settings(name, (ROOT / name / sweeps.STORE_FILE).stat().st_mtime)
    except (OSError, sqlite3.Error) as e:
        why = re.sub(r"([\\`*_\[\]<>#~|$])", r"\\\1", str(e)[:300])  # shown literally
        st.error(f"Cannot read this sweep's results: {why}", icon=":material/error:")
        return
    if settings is None or not len(settings):
        st.warning("This sweep has no finished run yet.", icon=":material/hourglass:")
        return
    fig = vsweep.sweep_figure(settings, metric, title=f"Sweep “{name}”")
    frame.chart(
        fig,
        "Each panel: the metric against one hyperparameter, one line per "
        "algorithm (at each value, the best setting of the others); a flat line "
        "means the algorithm does not care.",
        f"sweep-{name}",
        key=f"sweep_{name}",
    )
    best = sweeps.best_settings(settings, metric)
    cols = ["scenario", "label", "setting", metric, f"{metric}_std", "n_seeds"]
    st.subheader("Best setting per algorithm")
    st.dataframe(best[cols], hide_index=True, key="sweep_best_table")
    frame.csv_button(
        "CSV of every setting",
        settings.drop(columns=["params"]),
        f"sweep-{name}-settings",
        key=f"csv_sweep_{name}",
    )
