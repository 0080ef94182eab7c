"""The race over time: cumulative reward or regret per policy, with a band over seeds; and
what the race figures share (the oracles drawn apart, sampling for display, a figure's
legend as an HTML key).

How the race ended is in :mod:`~allseason.viz.leaderboard` (leaderboard, final regret over
seeds) and :mod:`~allseason.viz.per_state` (reward per true state).

Inputs are the tables of ``RaceResult.to_frames()``: ``steps`` (policy, seed, step, state,
reward, best, regret, ...) and ``summary`` (policy, mean_reward, std_reward, ci95,
mean_expected_reward, cum_regret, seconds). Every "95% interval" is Student's t over the
seeds, ``allseason.stats.ci95_halfwidth`` (t.ppf(0.975, n − 1) · std / √n; none with one
seed). Policies keep the order in which they appear in the table unless a figure says it
sorts them.

Downsampling is for display only: the cumulative curves are *sampled* (exact values at
evenly spaced steps, always including the last one), never averaged.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..policies import is_reference
from ..sim.trace import sample_index  # the engine's sampling: figures draw the steps it keeps
from ..stats import CI_LABEL, ci95_halfwidth
from .layout import INK, base_layout, empty_figure, key_html, swatch
from .style import policy_colors, policy_line, policy_marker, policy_name
from .timeline import add_season_bands

METRICS = {
    "reward": ("reward", "Cumulative reward", "cumulative reward (sum of rewards)", True),
    "regret": (
        "regret",
        "Cumulative regret",
        "cumulative regret<br>(best − played, expected)",
        False,
    ),
}
BANDS = {"minmax": "min–max", "std": "mean ± 1 std", "ci95": "mean ± " + CI_LABEL}
ORACLE_LABEL = "oracle (knows the seasons)"  # how the references (oracles) are labelled


def rgba(hex_color: str, alpha: float) -> str:
    """``#rrggbb`` and an opacity as a CSS ``rgba(...)``."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _labels(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["policy"].tolist()))


def _references(table: pd.DataFrame) -> set[str]:
    """Labels of the references (oracles) of a table: its ``reference`` column if it has
    one, else the labels that name a registered reference (:func:`is_reference`)."""
    if "reference" in table.columns:
        return set(table.loc[table["reference"].astype(bool), "policy"].tolist())
    return {lab for lab in _labels(table) if is_reference(lab)}


def _apart(order: list[str], refs: set[str]) -> list[str]:
    """``order`` with the references moved after the contestants (each group kept in order)."""
    return [lab for lab in order if lab not in refs] + [lab for lab in order if lab in refs]


def _seed_curves(steps: pd.DataFrame, col: str, band: str) -> dict:
    """{policy: (steps, mean, lower, upper, n_seeds)}: each policy's cumulative ``col`` over
    its seeds, and the band's edges."""
    curves = {}
    for label, g in steps.groupby("policy", sort=False):
        # one column per seed, one row per step (NaN where a seed has no such step yet: a
        # live race may be ragged); numpy, not DataFrame.pivot: this runs on every race
        step_of, row = np.unique(g["step"].to_numpy(), return_inverse=True)
        _, column = np.unique(g["seed"].to_numpy(), return_inverse=True)
        wide = np.full((len(step_of), column.max() + 1), np.nan)
        wide[row, column] = g[col].to_numpy(dtype=np.float64)
        cum = np.where(np.isnan(wide), np.nan, np.nancumsum(wide, axis=0))
        n_seeds = cum.shape[1]
        mean = np.nanmean(cum, axis=1)
        if band == "minmax":
            lo, hi = np.nanmin(cum, axis=1), np.nanmax(cum, axis=1)
        else:
            sd = np.nanstd(cum, axis=1, ddof=1) if n_seeds > 1 else np.zeros_like(mean)
            if band == "ci95":  # seeds present at each step (a live race may be ragged)
                sd = ci95_halfwidth(sd, np.isfinite(cum).sum(axis=1))
            lo, hi = mean - sd, mean + sd
        curves[label] = (step_of, mean, lo, hi, n_seeds)
    return curves


def _oracle_heading(label: str) -> dict:
    """The references, drawn apart: a legend heading, grey dashed lines below it."""
    return dict(
        type="scatter",
        x=[None],
        y=[None],
        mode="lines",
        name=f"<i>{ORACLE_LABEL}:</i>",
        hoverinfo="skip",
        line=dict(color=policy_colors([label])[label], dash="dash", width=1),
    )


def _curve_traces(label: str, curve, color: str, band_name: str, ref: bool, max_points: int):
    """One policy's band over seeds (one closed shape: along the upper edge, back along the
    lower one) and mean line, at most ``max_points`` sampled steps."""
    x, mean, lo, hi, k = curve
    idx = sample_index(len(x), max_points)
    x, mean, lo, hi = x[idx], mean[idx], lo[idx], hi[idx]
    name = policy_name(label)
    traces = []
    if k > 1:  # one closed shape: along the upper edge, back along the lower one
        traces.append(
            dict(
                type="scatter",
                x=np.r_[x, x[::-1]],
                y=np.r_[hi, lo[::-1]],
                mode="lines",
                line=dict(width=0),
                fill="toself",
                fillcolor=rgba(color, 0.18),
                hoverinfo="skip",
                showlegend=False,
                legendgroup=label,
                name=f"{name} {band_name} over {k} seeds",
            )
        )
    # the hover names the mean only: the band's edges per point would double the data
    # the browser parses and draws (the band itself is drawn)
    traces.append(
        dict(
            type="scatter",
            x=x,
            y=mean,
            mode="lines+markers",
            name=name,
            legendgroup=label,
            line=dict(color=color, **policy_line(label)),
            marker=policy_marker(label, color),  # dash and symbol: not colour alone
            hovertemplate=(
                f"<b>{name}</b>"
                + (f" ({ORACLE_LABEL})" if ref else "")
                + "<br>step %{x:,}<br>mean %{y:,.1f}"
                + (f" over {k} seeds" if k > 1 else "")
                + "<extra></extra>"
            ),
        )
    )
    return traces


def _cumulative_layout(title, ytitle, higher_better, n_seeds, band_name, refs, legend, pattern):
    """Title (with what the lines and bands are), axes, and fixed margins without legend."""
    seeds_txt = (
        f"line: mean over {n_seeds} seeds, band: {band_name} over seeds"
        if n_seeds > 1
        else "1 seed"
    )
    better = "higher is better" if higher_better else "lower is better"
    layout = base_layout(
        f"{title} ({better})",
        "step",
        ytitle,
        subtitle=(
            (
                f"{seeds_txt}; legend sorted best first"
                + ("; grey dashed: oracles (know the seasons), listed apart" if refs else "")
                + "; background: true state"
            )
            if legend
            else f"{seeds_txt}; background: true state"
        ),
        height=500,
        hovermode="closest",
    )
    if pattern is not None:
        layout["xaxis_range"] = [0, pattern.horizon]
    if not legend:
        fixed_margins(layout, l=90, b=56)
    return layout


def cumulative_figure(
    steps: pd.DataFrame,
    pattern,
    metric: str = "reward",
    max_points: int = 1000,
    band: str = "minmax",
    legend: bool = True,
) -> go.Figure:
    """Cumulative reward (or pseudo-regret) over steps: one line per policy, the mean over
    seeds, and a shaded band over seeds (``band="minmax"``: the range of the seeds' curves;
    ``"std"``: mean ± one standard deviation; ``"ci95"``: mean ± the 95% Student's t
    interval of the mean, t.ppf(0.975, n − 1) · std / √n); the true state as background
    bands.

    Traces: for each policy (sorted best first) its band (one closed shape: the upper edge
    forward, then the lower edge backward; a trace per edge doubled the SVG the browser
    builds), then the mean line; then one legend entry per state. Each line holds at most
    ``max_points`` points (sampled steps, the last step included).

    ``legend=False``: for a narrow column, the legend hidden (show :func:`legend_key` under
    the figure) and the margins fixed (:func:`fixed_margins`).

    Parameters
    ----------
    steps : pandas.DataFrame
        The ``steps`` table of ``to_frames()`` (policy, seed, step, reward, regret, ...).
    pattern : Pattern or None
        The scenario's season pattern (None: no state bands).
    metric : {"reward", "regret"}, default "reward"
        What is summed.
    max_points : int, default 1000
        The most points per line.
    band : {"minmax", "std", "ci95"}, default "minmax"
        The band drawn over seeds.
    legend : bool, default True
        Whether the figure shows its own legend.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    if metric not in METRICS:
        raise ValueError(f"metric: must be one of {sorted(METRICS)}, got {metric!r}")
    if band not in BANDS:
        raise ValueError(f"band: must be one of {sorted(BANDS)}, got {band!r}")
    col, title, ytitle, higher_better = METRICS[metric]
    if steps is None or len(steps) == 0:
        return empty_figure("No steps yet: run a race first.", title)
    labels = _labels(steps)
    colors = policy_colors(labels)
    curves = _seed_curves(steps, col, band)
    refs = {lab for lab in labels if is_reference(lab)}
    order = _apart(sorted(labels, key=lambda lab: curves[lab][1][-1], reverse=higher_better), refs)
    n_seeds = max(c[4] for c in curves.values())
    band_name = BANDS[band]
    traces = []
    for label in order:
        if label in refs and label == next(lab for lab in order if lab in refs):
            traces.append(_oracle_heading(label))
        traces += _curve_traces(
            label, curves[label], colors[label], band_name, label in refs, max_points
        )
    layout = _cumulative_layout(
        title, ytitle, higher_better, n_seeds, band_name, refs, legend, pattern
    )
    fig = go.Figure(data=traces, layout=layout)  # built once: plotly validates each call
    if pattern is not None:
        add_season_bands(fig, pattern)
    return fig


def fixed_margins(layout: dict, **margin) -> dict:
    """Fix a layout's margins (``margin``: l, r, t, b in px, over its own) and hide its
    legend: nothing pushes a margin, so plotly.js lays the figure out once, not twice (its
    auto-margin redraw; measured in chromium, docs/performance.md). Tick labels are not
    measured against the page either. Returns ``layout`` (changed in place)."""
    layout["margin"] = {**layout.get("margin", {}), **margin, "autoexpand": False}
    layout["showlegend"] = False
    for axis in ("xaxis", "yaxis"):
        layout[axis] = {**layout.get(axis, {}), "automargin": False, "ticklabeloverflow": "allow"}
    return layout


def legend_key(fig: go.Figure, *, indent: int = 90) -> str:
    """The legend of ``fig`` as an HTML key (:func:`~allseason.viz.layout.key_html`), for a
    figure drawn without its own: every trace the legend would list, in its order, with
    its line, marker and name; a legend group's title before its first entry."""
    items = []
    for t in fig.data:
        if t.showlegend is False or not t.name:
            continue
        if t.legendgrouptitle and t.legendgrouptitle.text:
            items.append(("", _plain(t.legendgrouptitle.text)))
        mode = t.mode or "lines"
        line = (
            dict(color=t.line.color or INK, width=t.line.width or 2, dash=t.line.dash or "solid")
            if "lines" in mode
            else None
        )
        symbol = (t.marker.symbol or "circle") if "markers" in mode else None
        items.append((swatch(line, symbol=symbol, color=t.marker.color), _plain(t.name)))
    return key_html(items, "legend", indent=indent)


def drop_legend_entries(fig: go.Figure) -> go.Figure:
    """Remove the traces that only make a legend entry (no data: the states' squares, the
    oracles' heading) from a figure shown without its legend, once :func:`legend_key` has
    read them: each trace is SVG the browser builds on every draw. Returns ``fig``
    (changed in place)."""
    fig.data = [t for t in fig.data if not _legend_only(t)]
    return fig


def _legend_only(trace) -> bool:
    x = trace.x
    return x is not None and len(x) == 1 and x[0] is None


def _plain(text: str) -> str:
    """A legend name without its HTML tags ("<i>oracle…:</i>" → "oracle…:")."""
    return re.sub(r"<[^>]+>", "", str(text))


__all__ = [
    "cumulative_figure",
    "fixed_margins",
    "legend_key",
    "drop_legend_entries",
    "ORACLE_LABEL",
    "sample_index",
    "rgba",
]
