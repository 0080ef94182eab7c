"""Figures of the guided tour: the app's own figures, fitted to a 1280 x 720 projector (a
fixed height, shorter titles), plus the two the tour needs in a slightly different cut:
recall at the returns of a season only, and the tracked real-data snapshot's curves.

Nothing here reads Streamlit; the numbers come from the engine or the snapshot.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .learnt import recall_figure
from .paper import curves_figure

HEIGHT = 400  # px: the figure stays on screen at 1280 x 720 with the tour's header
CHANGE_POINTS = ("change point: new state", "change point: return")  # legend entries


def projector(
    fig: go.Figure,
    height: int = HEIGHT,
    *,
    title: str | None = None,
    subtitle: str | None = None,
    unlisted: tuple[str, ...] = (),
) -> go.Figure:
    """``fig`` at ``height`` px, with its title (and subtitle) replaced when given: the app's
    subtitles are written for a full-width figure and would be cut on a narrower one.
    ``subtitle=""`` removes the subtitle and its room (for a taller plot and legend).
    ``unlisted``: names of traces to leave out of the legend (still drawn), for a legend
    that would not fit beside a plot this low.

    The legend always stands at the right, top-aligned, in one column: in the tour's figure
    column a legend in rows under the plot would take the height the plot needs."""
    fig.update_layout(
        height=height,
        legend=dict(
            orientation="v",
            x=1.01,
            xanchor="left",
            y=1.0,
            yanchor="top",
            font=dict(size=12),
            tracegroupgap=4,
        ),
        margin=dict(r=20, b=60),
    )
    if unlisted:
        fig.for_each_trace(
            lambda t: t.update(showlegend=False), selector=lambda t: t.name in unlisted
        )
    if title is not None:
        fig.update_layout(title_text=title)
    if subtitle == "":
        fig.update_layout(title_subtitle_text=None, margin_t=50)
    elif subtitle is not None:
        fig.update_layout(title_subtitle_text=subtitle)
    return fig


def _has_points(trace) -> bool:
    y = getattr(trace, "y", None)
    if y is None:
        return True
    values = pd.to_numeric(pd.Series(list(y), dtype=object), errors="coerce")
    return bool(values.notna().any())


def returns_recall_figure(recall: pd.DataFrame, height: int = HEIGHT) -> go.Figure:
    """:func:`allseason.viz.learnt.recall_figure` on the change points where a season returns
    (``kind == "returning"`` rows of ``analysis.recall_table``), without the legend entries
    left empty by that cut (new states, and "never" when every return was recalled)."""
    rows = recall[recall["kind"] == "returning"] if recall is not None and len(recall) else recall
    fig = recall_figure(rows)
    fig.data = tuple(t for t in fig.data if _has_points(t))
    never = rows is not None and len(rows) and bool(rows["steps_to_top"].isna().any())
    return projector(
        fig,
        height,
        title="When a season returns: steps until its old bandit is on top",
        subtitle="lower is better"
        + ("; ✕ never: the old bandit never took the top weight in that season" if never else ""),
    )


def snapshot_curves(snapshot: dict) -> pd.DataFrame:
    """The snapshot's curves as :func:`allseason.viz.paper.curves_figure` reads them
    (pattern, policy, seed, step, cum_reward)."""
    parts = []
    for label, p in snapshot["policies"].items():
        steps = np.asarray(p["steps"], dtype=np.int64)
        parts.append(
            pd.DataFrame(
                {
                    "pattern": snapshot["pattern"],
                    "policy": label,
                    "seed": snapshot["seed"],
                    "step": steps,
                    "cum_reward": np.asarray(p["mean_reward_so_far"], dtype=float) * steps,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def real_data_figure(snapshot: dict, title: str, height: int = HEIGHT) -> go.Figure:
    """Mean reward so far of every policy of the real-data snapshot
    (:func:`allseason.paper.mnist_snapshot.load`), legend best first, change points as grey
    lines."""
    fig = curves_figure(
        snapshot_curves(snapshot),
        title,
        kind="average",
        change_points={snapshot["pattern"]: snapshot["change_points"]},
    )
    fig.layout.annotations = []  # the panel's title: the subtitle says it
    n = len(snapshot["change_points"])
    return projector(
        fig,
        height,
        subtitle=f"{snapshot['pattern']} pattern, one run; grey "
        f"lines: the {n} change points; higher is better, "
        f"legend best first",
    )


__all__ = [
    "HEIGHT",
    "CHANGE_POINTS",
    "projector",
    "returns_recall_figure",
    "snapshot_curves",
    "real_data_figure",
]
