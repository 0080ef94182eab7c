"""What each of All-Season's bandits learnt: who played each true state, which bandit held
the weight in each season of each year, and how fast the right bandit takes over after each
change point.

Inputs are one run already: the outputs of ``analysis.state_table``,
``analysis.season_year_table`` and ``analysis.recall_table``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .layout import base_layout, empty_figure
from .style import SHADOW, SHADOW_COLOR, bandit_label, state_label

NEVER_COLOR = "#e0453a"  # "never on top": a red that reads on both themes


def state_heatmap(table: pd.DataFrame, max_rows: int = 12) -> go.Figure:
    """Share of each true state's steps played by each bandit (``analysis.state_table``),
    values written in the cells. Rows: the shadow and the bandits with the largest share of
    some state, at most ``max_rows``; the others summed in one "other bandits" row.

    Parameters
    ----------
    table : pandas.DataFrame or None
        ``analysis.state_table`` of one run (bandits x true states).
    max_rows : int, default 12
        The most rows shown one by one.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    title = "Who played each state: share of the state's steps per bandit"
    if table is None or table.size == 0:
        return empty_figure("No steps to show.", title)
    t = table.copy()
    t.index = t.index.astype(int)
    ranked = t.max(axis=1).sort_values(ascending=False, kind="stable")
    important = [b for b in ranked.index if ranked[b] >= 0.01]
    keep = ([SHADOW] if SHADOW in t.index else []) + [b for b in important if b != SHADOW]
    keep = keep[:max_rows]
    rows = t.loc[sorted(keep, key=lambda b: (b != SHADOW, b))]
    labels = [bandit_label(b) for b in rows.index]
    rest = t.loc[~t.index.isin(keep)]
    if len(rest):
        rows = pd.concat([rows, rest.sum(axis=0).to_frame(f"other ({len(rest)})").T])
        labels.append(f"other bandits ({len(rest)}), summed")
    z = rows.to_numpy(dtype=float)
    text = np.where(
        z <= 0,
        "",
        np.where(z < 0.01, "<1%", np.char.add((z * 100).round().astype(int).astype(str), "%")),
    )
    cols = [state_label(s) for s in t.columns]
    fig = go.Figure(
        dict(
            data=[
                dict(
                    type="heatmap",
                    z=z,
                    x=cols,
                    y=labels,
                    zmin=0,
                    zmax=1,
                    colorscale="Blues",
                    text=text,
                    texttemplate="%{text}",
                    textfont=dict(size=13),
                    colorbar=dict(title=dict(text="share", side="right"), tickformat=".0%"),
                    xgap=2,
                    ygap=2,
                    hovertemplate="%{y} played %{z:.1%} of the steps of %{x}<extra></extra>",
                )
            ]
        )
    )
    fig.update_layout(
        **base_layout(
            title,
            "true state",
            None,
            subtitle="each column sums to 100%; 'shadow' = steps played by the short-term bandit",
            height=int(min(max(300, 140 + 34 * len(labels)), 900)),
        )
    )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(side="bottom", type="category")
    return fig


def season_year_figure(table: pd.DataFrame) -> go.Figure:
    """Which bandit held the weight in each season of each year
    (``analysis.season_year_table``): rows the seasons (true states, by name), columns the
    years; each cell names the bandit most often on top after that season's batches of that
    year and is shaded by the share of those batches it held the top weight.

    Parameters
    ----------
    table : pandas.DataFrame or None
        ``analysis.season_year_table`` of one run.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    title = "Which bandit held the weight, per season and year"
    if table is None or not len(table):
        return empty_figure("No batches to show.", title)
    seasons = table.sort_values("state").drop_duplicates("state")["season"].tolist()
    years = sorted(table["year"].unique().tolist())
    z = np.full((len(seasons), len(years)), np.nan)
    text = np.full(z.shape, "", dtype=object)
    hover = np.full(z.shape, "", dtype=object)
    for r in table.itertuples():
        i, j = seasons.index(r.season), years.index(r.year)
        z[i, j] = r.share
        text[i, j] = f"{bandit_label(r.top_bandit)}<br>{r.share:.0%}"
        hover[i, j] = (
            f"{r.season}, {r.year}: {bandit_label(r.top_bandit)} on top after "
            f"{r.share:.0%} of {r.n_batches:,} batches; {r.bandits_on_top} "
            f"bandits were on top at some point"
        )
    fig = go.Figure(
        dict(
            data=[
                dict(
                    type="heatmap",
                    z=z,
                    x=[str(y) for y in years],
                    y=seasons,
                    zmin=0,
                    zmax=1,
                    colorscale="Blues",
                    text=text,
                    texttemplate="%{text}",
                    textfont=dict(size=13),
                    customdata=hover,
                    hovertemplate="%{customdata}<extra></extra>",
                    xgap=2,
                    ygap=2,
                    colorbar=dict(title=dict(text="share on top", side="right"), tickformat=".0%"),
                )
            ]
        )
    )
    fig.update_layout(
        **base_layout(
            title,
            "year",
            None,
            subtitle="cell: the bandit most often on top after the season's batches that year, "
            "and the share of them it held the top",
            height=int(min(max(300, 160 + 60 * len(seasons)), 700)),
        )
    )
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category")
    return fig


def _recall_customdata(r: pd.DataFrame) -> np.ndarray:
    """Per change point: the right bandit, the one most often on top, the right one's share
    of the segment on top (%), the spawns in the segment, and the kind (new, returning)."""
    return np.stack(
        [
            [bandit_label(b) if b >= 0 else "none alive" for b in r["right_bandit"]],
            [bandit_label(b) if b >= 0 else "–" for b in r["most_often_top"]],
            (100 * r["share_top_right"].astype(float)).round(0),
            r["spawns"],
            r["kind"],
        ],
        axis=1,
    )


_RECALL_HOVER = (
    "<b>%{x}</b> (%{customdata[4]} state)<br>right bandit: %{customdata[0]}<br>"
    "steps to top: %{y:,}<br>most often on top: %{customdata[1]}<br>"
    "right bandit on top %{customdata[2]}% of the segment<br>"
    "spawns in the segment: %{customdata[3]}<extra></extra>"
)
_RECALL_COLORS = {"new": SHADOW_COLOR, "returning": "#2171b5"}
_RECALL_NAMES = {
    "new": "new state (the shadow should take over)",
    "returning": "returning state (its old bandit should take over)",
}


def _recall_bars(r: pd.DataFrame, x: list[str], cd: np.ndarray) -> list[dict]:
    """One bar trace per kind of change point (new state, returning state)."""
    traces = []
    for kind in ("new", "returning"):
        m = (r["kind"] == kind).to_numpy()
        y = r["steps_to_top"].where(m).to_numpy(dtype=float)
        traces.append(
            dict(
                type="bar",
                x=x,
                y=y,
                name=_RECALL_NAMES[kind],
                marker=dict(color=_RECALL_COLORS[kind]),
                customdata=cd,
                texttemplate="%{y:,}",
                textposition="outside",
                cliponaxis=False,
                hovertemplate=_RECALL_HOVER,
            )
        )
    return traces


def _never_marks(x: list[str], never: np.ndarray, cd: np.ndarray) -> dict:
    """A ✕ "never" on the axis where the right bandit never held the top weight."""
    return dict(
        type="scatter",
        x=[v for v, n in zip(x, never) if n],
        y=np.zeros(int(never.sum())),
        mode="markers+text",
        name="never on top in the segment",
        text=["never"] * int(never.sum()),
        textposition="top center",
        textfont=dict(color=NEVER_COLOR, size=13),
        marker=dict(symbol="x", size=13, color=NEVER_COLOR),
        customdata=cd[never],
        hovertemplate=_RECALL_HOVER.replace("steps to top: %{y:,}", "never on top"),
        cliponaxis=False,
    )


def recall_figure(recall: pd.DataFrame) -> go.Figure:
    """Steps until the right bandit holds the top weight, per change point
    (``analysis.recall_table``): bars coloured by new state (the shadow should take over) or
    returning state (the bandit that learnt it should); "never" (NaN) as a ✕ on the axis.

    Parameters
    ----------
    recall : pandas.DataFrame or None
        ``analysis.recall_table`` of one run.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    title = "How fast the right bandit takes over after each change point"
    if recall is None or not len(recall):
        return empty_figure("No change points in this run.", title)
    r = recall.reset_index(drop=True)
    x = [
        f"#{int(c)} · step {int(s):,}<br>→ {state_label(st)}"
        for c, s, st in zip(r["change_point"], r["step"], r["state"])
    ]
    cd = _recall_customdata(r)
    fig = go.Figure()
    for trace in _recall_bars(r, x, cd):
        fig.add_trace(trace)
    never = r["steps_to_top"].isna().to_numpy()
    fig.add_trace(_never_marks(x, never, cd))
    ymax = float(np.nanmax(r["steps_to_top"].to_numpy(dtype=float))) if (~never).any() else 1
    fig.update_layout(
        **base_layout(
            title,
            "change point",
            "steps until the right bandit is on top",
            subtitle="lower is better; ✕ never: the right bandit never had the top weight in the "
            "segment",
            height=460,
        ),
        barmode="overlay",
        bargap=0.35,
    )
    fig.update_yaxes(range=[0, ymax * 1.18 + 1], rangemode="tozero")
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=x)
    return fig


__all__ = ["state_heatmap", "season_year_figure", "recall_figure", "NEVER_COLOR"]
