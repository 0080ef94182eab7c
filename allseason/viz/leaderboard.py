"""How the race ended: the leaderboard (a table and a figure) and the final regret of every
seed. The references (oracles, which know the seasons) are ranked apart, below the
contestants.

Inputs are the tables of ``RaceResult``: ``summary`` (policy, mean_reward, std_reward,
ci95, mean_expected_reward, cum_regret, seconds[, gap_closed]) or the dict of
``RaceResult.summary()``, and ``RaceResult.seed_frame()``. Every "95% interval" is
Student's t over the seeds (``allseason.stats.ci95_halfwidth``; none with one seed).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..stats import CI_LABEL
from .layout import INK, base_layout, empty_figure
from .race import ORACLE_LABEL, _apart, _references, fixed_margins
from .style import policy_colors, policy_marker, policy_name


def _summary_frame(summary) -> pd.DataFrame:
    if isinstance(summary, dict):
        summary = pd.DataFrame.from_dict(summary, orient="index")
        summary.index.name = "policy"
    summary = summary.copy()
    if "policy" not in summary.columns:
        summary = summary.reset_index().rename(columns={"index": "policy"})
    refs = _references(summary)
    summary["reference"] = summary["policy"].isin(refs)
    return summary.sort_values(["reference", "mean_reward"], ascending=[True, False], kind="stable")


def _pm(mean: float, half: float) -> str:
    return f"{mean:.3f} ± {half:.3f}" if half > 0 else f"{mean:.3f}"


def _share(v) -> str:
    return "—" if v is None or not np.isfinite(v) else f"{v:.0%}"


# -- the leaderboard ---------------------------------------------------------------------------
def leaderboard_table(summary) -> pd.DataFrame:
    """The leaderboard as display strings: the contestants, best mean reward first, ranked
    1, 2, ...; then the references (oracles), ranked apart (index "oracle"). Index "Rank".

    Columns: Policy (human name), "Mean reward / step (± 95% t)" ("mean ± half-width of
    the 95% Student's t interval" over seeds; no ± with a single seed), "Mean expected
    reward / step", "Cumulative regret" (mean over seeds), "Gap closed" (the share of the
    gap between the best baseline and the per-state oracle, ``gap_closed``; "—" where it
    has no meaning), "Seconds" (compute time summed over seeds).

    Parameters
    ----------
    summary : pandas.DataFrame or dict
        The ``summary`` table of ``to_frames()`` or the dict of ``RaceResult.summary()``.

    Returns
    -------
    pandas.DataFrame
    """
    s = _summary_frame(summary)
    n_ranked = int((~s["reference"]).sum())
    rank = [str(i) for i in range(1, n_ranked + 1)] + ["oracle"] * (len(s) - n_ranked)
    out = pd.DataFrame(
        {
            "Policy": [policy_name(p) for p in s["policy"]],
            "Mean reward / step (± 95% t)": [
                _pm(m, c) for m, c in zip(s["mean_reward"], s["ci95"])
            ],
            "Mean expected reward / step": [f"{v:.3f}" for v in s["mean_expected_reward"]],
            "Cumulative regret": [f"{v:,.0f}" for v in s["cum_regret"]],
            "Gap closed": [
                _share(v)
                for v in (s["gap_closed"] if "gap_closed" in s.columns else [None] * len(s))
            ],
            "Seconds": [f"{v:.2f}" for v in s["seconds"]],
        },
        index=pd.Index(rank, name="Rank"),
    )
    return out


def _leaderboard_bar(row, name: str, color: str) -> dict:
    """One policy's bar, its 95% interval as error bar; the oracles hatched."""
    return dict(
        type="bar",
        orientation="h",
        x=[row.mean_reward],
        y=[name],
        name=name,
        marker=dict(color=color),
        width=0.7,
        error_x=dict(
            type="data",
            array=[row.ci95],
            visible=bool(row.ci95 > 0),
            color=INK,
            thickness=1.5,
            width=6,
        ),
        marker_pattern_shape="/" if row.reference else "",  # the oracles, hatched
        customdata=[[row.ci95, row.cum_regret, row.seconds]],
        hovertemplate=(
            f"<b>{name}</b>"
            + (f" ({ORACLE_LABEL})" if row.reference else "")
            + "<br>mean reward / step %{x:.4f}"
            "<br>95% interval (Student's t) ± %{customdata[0]:.4f}"
            "<br>cumulative regret %{customdata[1]:,.0f}"
            "<br>%{customdata[2]:.2f} s<extra></extra>"
        ),
    )


def _add_value(fig: go.Figure, row, name: str) -> None:
    """The value (± interval) written past the end of the bar's error bar."""
    end = row.mean_reward + np.sign(row.mean_reward or 1) * row.ci95
    fig.add_annotation(
        x=end,
        y=name,
        text=_pm(row.mean_reward, row.ci95),
        xanchor="left" if end >= 0 else "right",
        xshift=6 if end >= 0 else -6,
        showarrow=False,
        font=dict(size=13),
    )


def _leaderboard_axes(fig: go.Figure, s: pd.DataFrame, names: list[str]) -> None:
    """Best on top; the reward axis from 0 (or the lowest interval) with room for values."""
    reach = (s["mean_reward"].abs() + s["ci95"]).max() or 1.0
    fig.update_yaxes(categoryorder="array", categoryarray=names[::-1])
    lo = min(0.0, float((s["mean_reward"] - s["ci95"]).min()))
    hi = max(0.0, float((s["mean_reward"] + s["ci95"]).max()))
    pad = 0.3 * reach
    fig.update_xaxes(
        range=[lo - (pad if lo < 0 else 0.02 * reach), hi + pad],
        zeroline=True,
        zerolinecolor=INK,
        zerolinewidth=1,
    )


def leaderboard_figure(summary) -> go.Figure:
    """Horizontal bars of the mean reward per step, best on top, with error bars of the 95%
    Student's t interval over seeds (``summary["ci95"]``; none with one seed); one trace per
    policy (its usual colour), value written past each bar.

    Parameters
    ----------
    summary : pandas.DataFrame or dict
        The ``summary`` table of ``to_frames()`` or the dict of ``RaceResult.summary()``.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    s = _summary_frame(summary)
    if not len(s):
        return empty_figure("No results yet: run a race first.", "Leaderboard")
    colors = policy_colors(s["policy"])
    names = [policy_name(p) for p in s["policy"]]
    fig = go.Figure()
    for (_, row), name in zip(s.iterrows(), names):
        fig.add_trace(_leaderboard_bar(row, name, colors[row.policy]))
        _add_value(fig, row, name)
    any_ci = bool((s["ci95"] > 0).any())
    n_ref = int(s["reference"].sum())
    if n_ref and n_ref < len(s):  # a divider above the references, ranked apart
        fig.add_hline(
            y=n_ref - 0.5,
            line=dict(color=INK, width=1, dash="dot"),
            annotation_text=f"below: {ORACLE_LABEL}, ranked apart",
            annotation_position="top right",
            annotation_font_size=12,
        )
    fig.update_layout(
        **base_layout(
            "Leaderboard: mean reward per step (higher is better)",
            "mean reward per step",
            None,
            subtitle=(f"error bars: {CI_LABEL} over seeds" if any_ci else "one seed: no interval"),
            height=max(260, 90 + 48 * len(s)),
            showlegend=False,
            bargap=0.25,
        )
    )
    _leaderboard_axes(fig, s, names)
    return fig


# -- final regret over seeds -------------------------------------------------------------------
def _seed_dots(per: dict, order: list[str], refs: set, ypos: dict, colors: dict, max_jitter):
    """Every seed's dot, row by row (seeds spread vertically in seed order), and each row's
    range: (x, y, colour, symbol, hover, ranges)."""
    x, y, color, symbol, hover, ranges = [], [], [], [], [], []
    for lab in order:
        g, y0, ref = per[lab], ypos[lab], lab in refs
        name = policy_name(lab) + (f" ({ORACLE_LABEL})" if ref else "")
        v = g["cum_regret"].to_numpy(dtype=float)
        k = len(v)
        jitter = np.linspace(-max_jitter, max_jitter, k) if k > 1 else np.zeros(1)
        x += v.tolist()
        y += (y0 + jitter).tolist()
        color += [colors[lab]] * k
        symbol += [policy_marker(lab, colors[lab])["symbol"]] * k
        hover += [[name, int(s)] for s in g["seed"]]
        ranges.append((lab, float(v.min()), float(v.max()), y0, ref))
    return x, y, color, symbol, hover, ranges


def _seed_traces(dots, per: dict, order: list[str], mean: dict, ypos: dict) -> list[dict]:
    """Two traces in all: every seed's dot, then every row's mean tick (a trace per policy
    and per range made the figure a third slower to draw, and Streamlit draws a figure two
    or three times when it arrives)."""
    x, y, color, symbol, hover, _ = dots
    return [
        dict(
            type="scatter",
            x=x,
            y=y,
            mode="markers",
            name="seeds",
            showlegend=False,
            marker=dict(
                color=color, size=9, symbol=symbol, opacity=0.85, line=dict(width=1, color="white")
            ),
            customdata=hover,
            hovertemplate="<b>%{customdata[0]}</b><br>seed %{customdata[1]}: final regret "
            "%{x:,.1f}<extra></extra>",
        ),
        dict(
            type="scatter",
            x=[mean[lab] for lab in order],
            y=[ypos[lab] for lab in order],
            mode="markers",
            name="mean",
            showlegend=False,
            marker=dict(symbol="line-ns-open", size=18, color=INK, line=dict(width=3)),
            customdata=[[policy_name(lab), len(per[lab])] for lab in order],
            hovertemplate="<b>%{customdata[0]}</b><br>mean over %{customdata[1]} seeds: "
            "%{x:,.1f}<extra></extra>",
        ),
    ]


def _final_axes(layout: dict, order: list[str], ypos: dict, n_rows: int, log: bool) -> None:
    """Rows from the top (a reversed axis), each with room above its dots for its name; the
    regret axis linear from 0, or logarithmic with a label per decade (``layout`` in place)."""
    layout["yaxis"] = dict(
        tickvals=[ypos[lab] for lab in order],
        showticklabels=False,
        range=[n_rows - 0.5, -0.62],
        zeroline=False,
        showgrid=False,
        fixedrange=True,
    )
    layout["xaxis"] = dict(
        title=dict(text=layout.pop("xaxis_title")),
        **(
            dict(type="log", dtick=1)
            if log  # a label per decade
            else dict(rangemode="tozero")
        ),
    )


def _row_names(order: list[str], refs: set, ypos: dict) -> list[dict]:
    """Each row's name above its dots, at the plot's left edge (not a tick label: beside the
    curves, in a narrow column, names at the left took most of its width)."""
    ticks = [policy_name(lab) + (" (oracle)" if lab in refs else "") for lab in order]
    return [
        dict(
            text=tick,
            x=0,
            xref="x domain",
            xanchor="left",
            y=ypos[lab] - 0.38,
            yref="y",
            yanchor="middle",
            showarrow=False,
            font=dict(size=13),
        )
        for lab, tick in zip(order, ticks)
    ]


def _range_shapes(ranges: list, colors: dict) -> list[dict]:
    """Each row's range, min to max over the seeds, in its policy's colour (the oracles'
    dashed), below the dots (a shape's x is in data units, on a log axis too: checked in
    chromium)."""
    return [
        dict(
            type="line",
            xref="x",
            x0=lo,
            x1=hi,
            yref="y",
            y0=y0,
            y1=y0,
            layer="below",
            name=f"{policy_name(lab)}: min–max",
            line=dict(color=colors[lab], width=2, dash="dash" if ref else "solid"),
        )
        for lab, lo, hi, y0, ref in ranges
    ]


def _divider(n_con: int) -> tuple[dict, dict]:
    """The line above the references, and their label (what ``add_hline`` draws)."""
    line = dict(
        type="line",
        xref="x domain",
        x0=0,
        x1=1,
        yref="y",
        y0=n_con,
        y1=n_con,
        name="divider",
        line=dict(color=INK, width=1, dash="dot"),
    )
    label = dict(
        text=f"below: {ORACLE_LABEL}, ranked apart",
        font=dict(size=12),
        showarrow=False,
        x=1,
        xanchor="right",
        xref="x domain",
        y=n_con,
        yanchor="bottom",
        yref="y",
    )
    return line, label


def final_regret_figure(
    seeds: pd.DataFrame, max_jitter: float = 0.14, log_above: float = 30.0
) -> go.Figure:
    """Final cumulative regret as a distribution over seeds: one row per policy, one dot per
    seed (spread vertically in a fixed order, so the same table gives the same figure), a
    line from the smallest to the largest seed and a tick at the mean. Contestants first,
    lowest mean first; then, below a divider, the references (oracles: grey, dashed range,
    labelled ``ORACLE_LABEL``), not ranked with them. The x axis is logarithmic when the
    largest final regret exceeds ``log_above`` times the smallest (all positive).

    Traces: every seed's dot (``customdata`` [policy name, seed], rows in order, seeds in
    seed order, coloured and shaped by policy), then every mean tick (no legend); each
    row's range is a line shape named "<policy>: min–max". Each row's name is written above
    its dots (an annotation at the plot's left edge, not a tick label: beside the curves, in
    a narrow column, names at the left took most of its width); the margins are fixed
    (:func:`~allseason.viz.race.fixed_margins`).

    Parameters
    ----------
    seeds : pandas.DataFrame or None
        ``RaceResult.seed_frame()`` (policy, seed, cum_regret[, reference]).
    max_jitter : float, default 0.14
        How far apart (in rows) a row's seeds spread vertically.
    log_above : float, default 30.0
        The ratio of the largest to the smallest final regret above which the axis is
        logarithmic.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    title = "Final regret over seeds (lower is better)"
    if seeds is None or len(seeds) == 0:
        return empty_figure("No results yet: run a race first.", title)
    refs = _references(seeds)
    per = {lab: g.sort_values("seed") for lab, g in seeds.groupby("policy", sort=False)}
    mean = {lab: float(g["cum_regret"].mean()) for lab, g in per.items()}
    order = _apart(sorted(per, key=lambda lab: mean[lab]), refs)
    n_con = sum(lab not in refs for lab in order)
    # rows from the top: contestants 0 .. n_con - 1, a gap, then the references
    ypos = {lab: i + (1 if lab in refs and n_con else 0) for i, lab in enumerate(order)}
    colors = policy_colors(order)
    dots = _seed_dots(per, order, refs, ypos, colors, max_jitter)
    traces = _seed_traces(dots, per, order, mean, ypos)
    n_seeds = max(len(g) for g in per.values())
    values = seeds["cum_regret"].to_numpy(dtype=float)
    # regrets that span decades (random against an oracle): a log axis keeps every row legible
    log = bool(np.all(values > 0) and values.max() > log_above * values.min())
    n_rows = len(order) + (1 if refs and n_con else 0)
    layout = base_layout(
        title,
        "final cumulative regret" + (" (log scale)" if log else ""),
        None,
        subtitle=f"dot: a seed ({n_seeds}) · line: min–max · tick: mean",
        height=max(260, 110 + 52 * n_rows),
        showlegend=False,
    )
    _final_axes(layout, order, ypos, n_rows, log)
    fixed_margins(layout, l=20, r=24, b=56)
    layout["annotations"] = _row_names(order, refs, ypos)
    layout["shapes"] = _range_shapes(dots[5], colors)
    if refs and n_con:  # the divider, and the references' label
        line, label = _divider(n_con)
        layout["shapes"].append(line)
        layout["annotations"].append(label)
    return go.Figure(data=traces, layout=layout)  # built once: plotly validates each call


__all__ = ["leaderboard_table", "leaderboard_figure", "final_regret_figure"]
