"""A deployed All-Season, drawn from its decision log (:mod:`allseason.logs.deployed`): the
paper's figure for the deployment (the weight of the most likely bandit after each batch
update, with spawns, prunings and recalls), the reward over time with a 95% interval per
window, and the distribution of the logged propensities.

Every figure is drawn from tables that are already small (one row per batch, per window, per
bin), so a log of 10**6 decisions draws as fast as one of 10**3: the top weight keeps per
bin the lowest and highest value (:func:`allseason.viz.weights.top_weight_figure_of`, the
builder Inside All-Season uses), the marks beyond :data:`MAX_MARKS` of a kind are binned (one
mark per stretch of steps, its hover counting the events it stands for), the
propensities are binned here. The CSV downloads of the page hold the tables in full.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .layout import base_layout, empty_figure
from .style import OKABE_ITO, bandit_label
from .weights import top_weight_figure_of

MAX_MARKS = 200  # spawns, prunings, recalls: at most this many marks each (binned beyond)
TOP_POINTS = 2000  # the top weight, as Inside All-Season draws it (per bin its lowest, highest)
DISPLAY_POINTS = TOP_POINTS + 3 * MAX_MARKS  # the most points the deployment figure draws
MARKS = "│ spawn, ✕ pruning, ○ recall"
_MORE = "<br>%{customdata[2]} in this stretch of steps (the first shown)"
SPAWN_COLOR, PRUNE_COLOR, RECALL_COLOR = (
    OKABE_ITO["bluish green"],
    OKABE_ITO["vermillion"],
    OKABE_ITO["black"],
)


def _binned(df: pd.DataFrame, n: int = MAX_MARKS) -> tuple[pd.DataFrame, np.ndarray]:
    """The marks to draw of ``df`` (events in step order) and how many events each stands
    for: every one (1 each) when there are at most ``n``; else the first event of each of
    ``n`` equal stretches of steps that hold any (so no event is dropped unseen: its
    mark's hover counts it)."""
    if len(df) <= n:
        return df, np.ones(len(df), dtype=np.int64)
    s = df["step"].to_numpy()
    edges = np.linspace(s.min(), s.max() + 1, n + 1)
    b = np.searchsorted(edges, s, side="right") - 1
    first = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    return df.iloc[first], np.diff(np.r_[first, len(s)])


def _add_recalls(fig: go.Figure, recalls: pd.DataFrame) -> None:
    """A ring around each recall (binned beyond :data:`MAX_MARKS`)."""
    shown, count = _binned(recalls)
    fig.add_trace(
        go.Scatter(
            x=shown["step"].to_numpy(),
            y=shown["weight"].to_numpy(),
            mode="markers",
            name=f"recall ({len(recalls):,})",
            marker=dict(symbol="circle-open", size=15, color=RECALL_COLOR, line=dict(width=1.5)),
            customdata=np.stack(
                [
                    [bandit_label(b) for b in shown["bandit"]],
                    [bandit_label(b) for b in shown["previous"]],
                    count,
                ],
                axis=1,
            ),
            hovertemplate="step %{x:,}<br><b>%{customdata[0]}</b> back on top "
            "(after %{customdata[1]})"
            + (_MORE if len(shown) < len(recalls) else "")
            + "<extra></extra>",
        )
    )


def deployment_figure(
    tops: pd.DataFrame,
    events: pd.DataFrame,
    recalls: pd.DataFrame,
    max_points: int = TOP_POINTS,
    title: str = "Weight of the most likely bandit — your deployment",
) -> go.Figure:
    """The paper's figure for a deployment: after each batch update the weight of the most
    likely bandit (Inside All-Season's figure, same builder, same points), with a tick
    under the curve at each spawn, a cross at each pruning and a ring around each recall.

    Parameters
    ----------
    tops : pandas.DataFrame
        One row per batch update: batch, step, bandit, weight (the top bandit).
    events : pandas.DataFrame
        step, kind ("spawn" | "prune"), bandit, other.
    recalls : pandas.DataFrame
        step, bandit, weight, previous (:func:`allseason.logs.deployed.recalls`).
    max_points : int, default 2000
        The most points of the top weight drawn.

    Returns
    -------
    plotly.graph_objects.Figure
        The Inside traces first, then "spawn", "pruning", "recall" (each only if any).
    """
    fig = top_weight_figure_of(tops, None, max_points, title=title, marks=MARKS)
    if not len(tops):
        return fig
    spawns = events[events["kind"] == "spawn"] if len(events) else events
    prunes = events[events["kind"] == "prune"] if len(events) else events
    marks = [
        (spawns, "spawn", 0.015, dict(symbol="line-ns-open", size=9, color=SPAWN_COLOR)),
        (prunes, "pruning", 0.045, dict(symbol="x-thin-open", size=7, color=PRUNE_COLOR)),
    ]
    for table, name, y, marker in marks:
        if not len(table):
            continue
        shown, count = _binned(table)
        marker["line"] = dict(width=1.5, color=marker["color"])
        fig.add_trace(
            go.Scatter(
                x=shown["step"].to_numpy(),
                y=np.full(len(shown), y),
                mode="markers",
                name=f"{name} ({len(table):,})",
                marker=marker,
                customdata=np.stack(
                    [[bandit_label(b) for b in shown["bandit"]], shown["other"].to_numpy(), count],
                    axis=1,
                ),  # fmt: skip
                hovertemplate=f"step %{{x:,}}<br>{name} of <b>%{{customdata[0]}}</b>"
                + ("<br>closest: bandit %{customdata[1]}" if name == "pruning" else "")
                + (_MORE if len(shown) < len(table) else "")
                + "<extra></extra>",
            )
        )
    if len(recalls):
        _add_recalls(fig, recalls)
    fig.update_xaxes(title_text="decisions learned (step)")
    return fig


def reward_figure(windows: pd.DataFrame, title: str = "Reward over time") -> go.Figure:
    """Mean reward per window of consecutive decisions, with its 95% interval as a band.

    Parameters
    ----------
    windows : pandas.DataFrame
        :func:`allseason.logs.deployed.reward_windows`: first, last, n, mean, low, high,
        interval.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not len(windows):
        return empty_figure("No resolved decision yet: nothing to draw.", title)
    x = ((windows["first"] + windows["last"]) / 2).to_numpy()
    kind = windows["interval"].iloc[0]
    how = "Wilson (0/1 rewards)" if kind == "wilson" else "Student's t"
    n = int(windows["n"].median())
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=np.r_[x, x[::-1]],
            y=np.r_[windows["high"].to_numpy(), windows["low"].to_numpy()[::-1]],
            fill="toself",
            fillcolor="rgba(0,114,178,0.18)",
            line=dict(width=0),
            hoverinfo="skip",
            name="95% interval",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=windows["mean"].to_numpy(),
            mode="lines+markers",
            line=dict(color=OKABE_ITO["blue"], width=2),
            marker=dict(size=4),
            name="mean reward in the window",
            customdata=windows[["first", "last", "low", "high"]].to_numpy(),
            hovertemplate="decisions %{customdata[0]:,}–%{customdata[1]:,}<br>"
            "mean %{y:.3f}, 95% interval %{customdata[2]:.3f}–%{customdata[3]:.3f}"
            "<extra></extra>",
        )
    )
    fig.update_layout(
        **base_layout(
            title,
            "decision (in the order they resolved)",
            "mean reward",
            subtitle=f"{len(windows)} windows of about {n:,} decisions; band: 95% interval, {how}",
            height=380,
        )
    )
    return fig


def propensity_bins(propensity: np.ndarray, n_bins: int = 40) -> pd.DataFrame:
    """The propensities in ``n_bins`` bins evenly spaced in log10 (low, high, count)."""
    p = np.asarray(propensity, dtype=float)
    if not len(p):
        return pd.DataFrame(columns=["low", "high", "count"])
    lo = np.log10(max(p[p > 0].min(), 1e-12) if (p > 0).any() else 1e-12)
    edges = np.linspace(min(lo, -0.001), 0.0, n_bins + 1)
    counts, _ = np.histogram(np.log10(np.clip(p, 1e-12, 1.0)), bins=edges)
    return pd.DataFrame({"low": 10 ** edges[:-1], "high": 10 ** edges[1:], "count": counts})


def propensity_figure(
    bins: pd.DataFrame, n_arms: int, smallest: float, title: str = "Logged propensities"
) -> go.Figure:
    """The distribution of the logged propensities (log scale), with the uniform policy's
    1/K and the smallest marked.

    Parameters
    ----------
    bins : pandas.DataFrame
        :func:`propensity_bins`.
    n_arms : int
        K, for the 1/K line.
    smallest : float
        The smallest propensity.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if not len(bins) or not bins["count"].sum():
        return empty_figure("No propensity logged yet.", title)
    mid = np.sqrt(bins["low"] * bins["high"]).to_numpy()
    fig = go.Figure(
        go.Bar(
            x=mid,
            y=bins["count"].to_numpy(),
            width=(bins["high"] - bins["low"]).to_numpy(),
            marker=dict(color=OKABE_ITO["sky blue"], line=dict(width=0.5, color="#333")),
            customdata=bins[["low", "high"]].to_numpy(),
            hovertemplate="π in %{customdata[0]:.2g}–%{customdata[1]:.2g}: "
            "%{y:,} decisions<extra></extra>",
            name="decisions",
        )
    )
    fig.update_layout(
        **base_layout(
            title,
            "propensity π of the arm played (log scale)",
            "decisions",
            subtitle=f"dotted: 1/K = {1 / max(n_arms, 1):.3g} (uniform); red: the smallest, "
            f"{smallest:.2g}",
            height=380,
        ),
        showlegend=False,
        bargap=0,
    )
    fig.update_xaxes(type="log")
    fig.add_vline(x=1 / max(n_arms, 1), line=dict(dash="dot", color="#333", width=2))
    fig.add_vline(x=smallest, line=dict(color=OKABE_ITO["vermillion"], width=2))
    return fig


__all__ = [
    "deployment_figure",
    "reward_figure",
    "propensity_bins",
    "propensity_figure",
    "MAX_MARKS",
    "TOP_POINTS",
    "DISPLAY_POINTS",
]
