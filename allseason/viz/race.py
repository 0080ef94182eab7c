"""The race: cumulative reward or regret over time, the leaderboard, reward per true state.

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
from ..stats import CI_LABEL, ci95_halfwidth
from .style import (
    INK,
    base_layout,
    empty_figure,
    key_html,
    policy_colors,
    policy_line,
    policy_marker,
    policy_name,
    state_color,
    state_label,
    swatch,
)
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


def sample_index(n: int, max_points: int) -> np.ndarray:
    """At most ``max_points`` evenly spaced indices into ``range(n)``, first and last kept."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max(int(max_points), 2)).round().astype(np.int64))


def rgba(hex_color: str, alpha: float) -> str:
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
    the figure) and the margins fixed (:func:`fixed_margins`)."""
    if metric not in METRICS:
        raise ValueError(f"metric: must be one of {sorted(METRICS)}, got {metric!r}")
    if band not in BANDS:
        raise ValueError(f"band: must be one of {sorted(BANDS)}, got {band!r}")
    col, title, ytitle, higher_better = METRICS[metric]
    if steps is None or len(steps) == 0:
        return empty_figure("No steps yet: run a race first.", title)
    labels = _labels(steps)
    colors = policy_colors(labels)
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
    refs = {lab for lab in labels if is_reference(lab)}
    order = _apart(sorted(labels, key=lambda lab: curves[lab][1][-1], reverse=higher_better), refs)
    n_seeds = max(c[4] for c in curves.values())
    band_name = BANDS[band]
    traces = []
    for label in order:
        if label in refs and label == next(lab for lab in order if lab in refs):
            # the references, drawn apart: a legend heading, grey dashed lines below it
            traces.append(
                dict(
                    type="scatter",
                    x=[None],
                    y=[None],
                    mode="lines",
                    name=f"<i>{ORACLE_LABEL}:</i>",
                    hoverinfo="skip",
                    line=dict(color=policy_colors([label])[label], dash="dash", width=1),
                )
            )
        x, mean, lo, hi, k = curves[label]
        idx = sample_index(len(x), max_points)
        x, mean, lo, hi = x[idx], mean[idx], lo[idx], hi[idx]
        name, color = policy_name(label), colors[label]
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
                    + (f" ({ORACLE_LABEL})" if label in refs else "")
                    + "<br>step %{x:,}<br>mean %{y:,.1f}"
                    + (f" over {k} seeds" if k > 1 else "")
                    + "<extra></extra>"
                ),
            )
        )
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
    """The legend of ``fig`` as an HTML key (:func:`~allseason.viz.style.key_html`), for a
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


def leaderboard_table(summary) -> pd.DataFrame:
    """The leaderboard as display strings: the contestants, best mean reward first, ranked
    1, 2, ...; then the references (oracles), ranked apart (index "oracle"). Index "Rank".

    Columns: Policy (human name), "Mean reward / step (± 95% t)" ("mean ± half-width of
    the 95% Student's t interval" over seeds; no ± with a single seed), "Mean expected
    reward / step", "Cumulative regret" (mean over seeds), "Gap closed" (the share of the
    gap between the best baseline and the per-state oracle, ``gap_closed``; "—" where it
    has no meaning), "Seconds" (compute time summed over seeds). ``summary``: the
    ``summary`` table of ``to_frames()`` or the dict of ``RaceResult.summary()``."""
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


def leaderboard_figure(summary) -> go.Figure:
    """Horizontal bars of the mean reward per step, best on top, with error bars of the 95%
    Student's t interval over seeds (``summary["ci95"]``; none with one seed); one trace per
    policy (its usual colour), value written past each bar."""
    s = _summary_frame(summary)
    if not len(s):
        return empty_figure("No results yet: run a race first.", "Leaderboard")
    colors = policy_colors(s["policy"])
    names = [policy_name(p) for p in s["policy"]]
    fig = go.Figure()
    reach = (s["mean_reward"].abs() + s["ci95"]).max() or 1.0
    for (_, row), name in zip(s.iterrows(), names):
        fig.add_trace(
            dict(
                type="bar",
                orientation="h",
                x=[row.mean_reward],
                y=[name],
                name=name,
                marker=dict(color=colors[row.policy]),
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
        )
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
    return fig


def final_regret_figure(
    seeds: pd.DataFrame, max_jitter: float = 0.14, log_above: float = 30.0
) -> go.Figure:
    """Final cumulative regret as a distribution over seeds: one row per policy, one dot per
    seed (spread vertically in a fixed order, so the same table gives the same figure), a
    line from the smallest to the largest seed and a tick at the mean. Contestants first,
    lowest mean first; then, below a divider, the references (oracles: grey, dashed range,
    labelled ``ORACLE_LABEL``), not ranked with them. The x axis is logarithmic when the
    largest final regret exceeds ``log_above`` times the smallest (all positive).

    ``seeds``: ``RaceResult.seed_frame()`` (policy, seed, cum_regret[, reference]).
    Traces: every seed's dot (``customdata`` [policy name, seed], rows in order, seeds in
    seed order, coloured and shaped by policy), then every mean tick (no legend); each
    row's range is a line shape named "<policy>: min–max". Each row's name is written above
    its dots (an annotation at the plot's left edge, not a tick label: beside the curves, in
    a narrow column, names at the left took most of its width); the margins are fixed
    (:func:`fixed_margins`)."""
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
    # every seed's dot in one trace and each row's range a line shape: two traces in all
    # (a trace per policy and per range made the figure a third slower to draw, and
    # Streamlit draws a figure two or three times when it arrives)
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
    traces = [
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
        )
    ]
    # every mean tick in one trace: fewer traces for the browser to draw
    traces.append(
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
        )
    )
    ticks = [policy_name(lab) + (" (oracle)" if lab in refs else "") for lab in order]
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
    # rows from the top (a reversed axis), each with room above its dots for its name
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
    fixed_margins(layout, l=20, r=24, b=56)
    layout["annotations"] = [
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
    # each row's range, min to max over the seeds, in its policy's colour (the oracles'
    # dashed), below the dots (a shape's x is in data units, on a log axis too: checked in
    # chromium)
    layout["shapes"] = [
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
    if refs and n_con:  # the divider, and the references' label (what add_hline draws)
        layout["shapes"].append(
            dict(
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
        )
        layout["annotations"].append(
            dict(
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
        )
    return go.Figure(data=traces, layout=layout)  # built once: plotly validates each call


def state_means(steps: pd.DataFrame) -> pd.DataFrame:
    """A steps table reduced to ``RaceResult.state_frame()``'s: per policy, seed and state,
    ``n`` steps and the mean ``reward`` and ``best``."""
    g = steps.groupby(["policy", "seed", "state"], sort=False)
    out = g[["reward", "best"]].mean()
    out.insert(0, "n", g.size())
    return out.reset_index()


def reward_by_state_figure(table: pd.DataFrame) -> go.Figure:
    """Mean reward per step in each true state, grouped bars (one trace per policy, the 95%
    Student's t interval over seeds as error bars; none with one seed), with the mean
    expected reward of the best arm in that state (the oracle) as a grey tick; state
    columns shaded in the state's colour.

    ``table``: ``RaceResult.state_frame()`` (per policy, seed and state), or a steps table
    (one row per step), which is reduced to it first."""
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
        name = policy_name(label)
        fig.add_trace(
            dict(
                type="bar",
                x=xcat,
                y=a["mean"].to_numpy(),
                name=name,
                marker=dict(color=colors[label]),
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
        )
    weighted = (means["best"] * means["n"]).groupby(means["state"]).sum()
    best = (weighted / means["n"].groupby(means["state"]).sum()).reindex(states)
    fig.add_trace(
        dict(
            type="scatter",
            x=xcat,
            y=best.to_numpy(),
            mode="markers",
            name="best arm (oracle, expected)",
            marker=dict(symbol="line-ew-open", size=44, color=INK, line=dict(width=3, color=INK)),
            hovertemplate="%{x}: best arm's mean expected reward %{y:.3f}<extra></extra>",
        )
    )
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


__all__ = [
    "cumulative_figure",
    "fixed_margins",
    "legend_key",
    "drop_legend_entries",
    "leaderboard_table",
    "leaderboard_figure",
    "final_regret_figure",
    "ORACLE_LABEL",
    "reward_by_state_figure",
    "state_means",
    "sample_index",
    "rgba",
]
