"""The race, state by state: each policy's mean reward per step in each true state, against
the best arm's (the oracle's) expected reward there.

Input: ``RaceResult.state_frame()`` (per policy, seed and state), or a ``steps`` table of
``to_frames()``, reduced to it first (:func:`state_means`). The 95% interval is Student's t
over the seeds (``allseason.stats.ci95_halfwidth``; none with one seed).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..stats import CI_LABEL, ci95_halfwidth
from .layout import INK, base_layout, empty_figure
from .race import _labels
from .style import policy_colors, policy_name, state_color, state_label


def state_means(steps: pd.DataFrame) -> pd.DataFrame:
    """A steps table reduced to ``RaceResult.state_frame()``'s: per policy, seed and state,
    ``n`` steps and the mean ``reward`` and ``best``.

    Parameters
    ----------
    steps : pandas.DataFrame
        The ``steps`` table of ``to_frames()``.

    Returns
    -------
    pandas.DataFrame
        Columns policy, seed, state, n, reward, best.
    """
    g = steps.groupby(["policy", "seed", "state"], sort=False)
    out = g[["reward", "best"]].mean()
    out.insert(0, "n", g.size())
    return out.reset_index()


def _state_bars(label: str, a: pd.DataFrame, xcat: list[str], color: str, n_seeds: int) -> dict:
    """One policy's bars: its mean reward in each state, the 95% interval as error bars."""
    name = policy_name(label)
    return dict(
        type="bar",
        x=xcat,
        y=a["mean"].to_numpy(),
        name=name,
        marker=dict(color=color),
        error_y=dict(
            type="data",
            array=a["ci95"].to_numpy(),
            visible=n_seeds > 1,
            color=INK,
            thickness=1.2,
            width=3,
        ),
        customdata=np.stack([a["ci95"].to_numpy(), a["count"].to_numpy()], axis=1),
        hovertemplate=(
            f"<b>{name}</b><br>%{{x}}: mean reward %{{y:.3f}}"
            "<br>95% interval (Student's t) ± %{customdata[0]:.3f} "
            "(%{customdata[1]} seeds)"
            "<extra></extra>"
        ),
    )


def _best_ticks(means: pd.DataFrame, states: list, xcat: list[str]) -> dict:
    """A grey tick at the best arm's mean expected reward in each state (steps-weighted)."""
    weighted = (means["best"] * means["n"]).groupby(means["state"]).sum()
    best = (weighted / means["n"].groupby(means["state"]).sum()).reindex(states)
    return dict(
        type="scatter",
        x=xcat,
        y=best.to_numpy(),
        mode="markers",
        name="best arm (oracle, expected)",
        marker=dict(symbol="line-ew-open", size=44, color=INK, line=dict(width=3, color=INK)),
        hovertemplate="%{x}: best arm's mean expected reward %{y:.3f}<extra></extra>",
    )


def _shade_states(fig: go.Figure, states: list) -> None:
    """Each state's column shaded in the state's colour, below the bars."""
    for i, s in enumerate(states):
        fig.add_shape(
            type="rect",
            xref="x",
            yref="y domain",
            x0=i - 0.5,
            x1=i + 0.5,
            y0=0,
            y1=1,
            fillcolor=state_color(s),
            opacity=0.3,
            layer="below",
            line=dict(width=0),
        )


def reward_by_state_figure(table: pd.DataFrame) -> go.Figure:
    """Mean reward per step in each true state, grouped bars (one trace per policy, the 95%
    Student's t interval over seeds as error bars; none with one seed), with the mean
    expected reward of the best arm in that state (the oracle) as a grey tick; state
    columns shaded in the state's colour.

    Parameters
    ----------
    table : pandas.DataFrame or None
        ``RaceResult.state_frame()`` (per policy, seed and state), or a steps table (one row
        per step), which is reduced to it first.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    title = "Mean reward per step in each true state (higher is better)"
    if table is None or len(table) == 0:
        return empty_figure("No steps yet: run a race first.", title)
    means = table if "n" in table.columns else state_means(table)
    labels = _labels(means)
    colors = policy_colors(labels)
    per_seed = means.set_index(["policy", "seed", "state"])["reward"]
    agg = per_seed.groupby(level=["policy", "state"], sort=False).agg(["mean", "std", "count"])
    agg["ci95"] = ci95_halfwidth(agg["std"].to_numpy(), agg["count"].to_numpy())
    states = sorted(means["state"].unique().tolist())
    xcat = [state_label(s) for s in states]
    n_seeds = int(agg["count"].max())
    fig = go.Figure()
    for label in labels:
        a = agg.loc[label].reindex(states)
        fig.add_trace(_state_bars(label, a, xcat, colors[label], n_seeds))
    fig.add_trace(_best_ticks(means, states, xcat))
    _shade_states(fig, states)
    fig.update_layout(
        **base_layout(
            title,
            "true state",
            "mean reward per step",
            subtitle=(
                f"bars: mean over {n_seeds} seeds, error bars: {CI_LABEL}; grey tick: best possible"
                if n_seeds > 1
                else "1 seed; grey tick: best possible"
            ),
            barmode="group",
            bargap=0.2,
            bargroupgap=0.05,
        )
    )
    fig.update_yaxes(zeroline=True, zerolinecolor=INK)
    return fig


__all__ = ["reward_by_state_figure", "state_means"]
