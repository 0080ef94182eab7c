"""A sweep's results as small multiples: the metric against each hyperparameter, one line
per algorithm.

Input: the table of ``allseason.sweeps.settings_table`` — one row per (scenario, algorithm
label, setting) with ``scenario`` (a description "preset, n states, T=.., d=.., ..."),
``label``, ``setting``, ``n_seeds``, the metric's mean over seeds (e.g. ``mean_reward``) and
std (``mean_reward_std``), and one ``hp.NAME`` column per hyperparameter (NaN where a
setting leaves it at its default).

Rows are scenarios, columns the hyperparameters that vary for at least one algorithm. In a
panel, an algorithm whose settings vary in that hyperparameter is a line: at each value, its
best setting among those with that value (the other hyperparameters at their best), with
± 1 std over seeds as error bars (the spread of the seeds; the hover adds the half-width of
the 95% Student's t interval of the mean, ``allseason.stats.ci95_halfwidth``). An algorithm
that does not vary in it is a dashed horizontal line at its best setting, for reference.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..stats import ci95_halfwidth
from .layout import base_layout, empty_figure
from .style import policy_colors, policy_line, policy_name

METRIC_TEXT = {  # name: (axis title, higher is better)
    "mean_reward": ("mean reward per step", True),
    "mean_expected_reward": ("mean expected reward per step", True),
    "cum_regret": ("cumulative regret", False),
}


def varying_hyperparameters(settings: pd.DataFrame) -> list[str]:
    """Hyperparameters (names without ``hp.``) taking several values for some algorithm."""
    out = []
    for col in [c for c in settings.columns if c.startswith("hp.")]:
        if any(
            g[col].dropna().astype(str).nunique() > 1
            for _, g in settings.groupby("label", sort=False)
        ):
            out.append(col[3:])
    return out


def _is_number(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_)
    )


def _short_scenarios(descriptions: list[str]) -> dict[str, str]:
    """Each description cut to the parts that differ between scenarios."""
    parts = {d: d.split(", ") for d in descriptions}
    common = set.intersection(*(set(p) for p in parts.values())) if parts else set()
    return {d: ", ".join(x for x in p if x not in common) or d for d, p in parts.items()}


def _best_index(frame: pd.DataFrame, metric: str, higher: bool):
    values = frame[metric].to_numpy(dtype=float)
    return frame.index[int(np.nanargmax(values) if higher else np.nanargmin(values))]


def sweep_figure(
    settings: pd.DataFrame,
    metric: str = "mean_reward",
    *,
    title: str = "",
    hyperparameters: list[str] | None = None,
    max_rows: int = 8,
    max_cols: int = 6,
) -> go.Figure:
    """Small multiples (scenario rows x hyperparameter columns) of ``metric`` against each
    hyperparameter, one line per algorithm (see the module docstring).

    Traces, per panel: for each algorithm (in the table's order), one line with error bars
    if it varies in the panel's hyperparameter, else one dashed reference line. Legend
    entries are grouped by algorithm (clicking one hides it in every panel)."""
    if metric not in METRIC_TEXT:
        raise ValueError(f"metric: must be one of {sorted(METRIC_TEXT)}, got {metric!r}")
    ytitle, higher = METRIC_TEXT[metric]
    title = title or "Sweep"
    if settings is None or len(settings) == 0:
        return empty_figure("No runs stored yet: run the sweep first.", title)
    hps = (
        list(hyperparameters) if hyperparameters is not None else varying_hyperparameters(settings)
    )
    scenarios = sorted(dict.fromkeys(settings["scenario"]))
    notes = []
    if len(scenarios) > max_rows:
        notes.append(f"first {max_rows} of {len(scenarios)} scenarios")
        scenarios = scenarios[:max_rows]
    if len(hps) > max_cols:
        notes.append(f"first {max_cols} of {len(hps)} hyperparameters")
        hps = hps[:max_cols]
    # nothing varies: one panel, the algorithms side by side
    columns: list[str | None] = list(hps) or [None]
    labels = list(dict.fromkeys(settings["label"]))
    colors = policy_colors(labels)
    short = _short_scenarios(scenarios)
    fig = make_subplots(
        rows=len(scenarios),
        cols=len(columns),
        shared_yaxes="rows",
        horizontal_spacing=0.04 if len(columns) > 3 else 0.07,
        vertical_spacing=min(0.12, 0.3 / max(len(scenarios) - 1, 1)),
        subplot_titles=[
            ("algorithm" if h is None else h) if r == 0 else ""
            for r in range(len(scenarios))
            for h in columns
        ],
    )
    in_legend: set[str] = set()  # the labels already in the legend
    for r, scen in enumerate(scenarios, start=1):
        rows = settings[settings["scenario"] == scen]
        for c, h in enumerate(columns, start=1):
            _panel(fig, rows, labels, colors, metric, higher, h, r, c, in_legend)
            if h is not None:
                fig.update_xaxes(
                    title_text=h if len(scenarios) == 1 or r == len(scenarios) else None,
                    row=r,
                    col=c,
                )
        y = ytitle if len(scenarios) == 1 else f"{short[scen]}<br>{ytitle}"
        fig.update_yaxes(title_text=y, row=r, col=1)
    subtitle = (
        f"{ytitle}, mean ± 1 std over seeds; at each value the best setting of the "
        f"other hyperparameters; dashed: algorithms that do not vary it"
        + (f" ({'; '.join(notes)})" if notes else "")
    )
    layout = base_layout(title, subtitle=subtitle, height=max(360, 300 * len(scenarios) + 140))
    layout["legend"].update(title_text="algorithm")
    fig.update_layout(**layout)
    if len(scenarios) > 1:
        fig.update_layout(margin=dict(l=130))
    return fig


_CI_HOVER = " (± 1 std error bar; 95% Student's t interval ± %{customdata[2]:.4f})"


def _ci(row, metric: str) -> float:
    """Half-width of the 95% Student's t interval of ``row``'s mean (0 with one seed)."""
    return ci95_halfwidth(row[f"{metric}_std"], int(row["n_seeds"]))


def _panel_axis(fig, rows: pd.DataFrame, col: str | None, r: int, c: int):
    """The values a panel's hyperparameter takes, and its x axis: numbers on a linear or
    log axis with ticks at the grid's values only, else categories. Returns (numeric,
    span): whether they are numbers, and the first and last value (None if none)."""
    present = rows[col].dropna().tolist() if col in rows else []
    numeric = bool(present) and all(_is_number(v) for v in present)
    span: tuple[float, float] | tuple[str, str] | None
    if numeric:
        xs = sorted({float(v) for v in present})
        span = (xs[0], xs[-1])
        log = xs[0] > 0 and xs[-1] / xs[0] >= 20
        # ticks at the grid's values only (a log axis would add 2s and 5s between them)
        fig.update_xaxes(
            type="log" if log else "linear",
            tickmode="array",
            tickvals=xs,
            ticktext=[f"{v:g}" for v in xs],
            row=r,
            col=c,
        )
    else:
        names = list(dict.fromkeys(str(v) for v in present))
        span = (names[0], names[-1]) if names else None
    return numeric, span


def _best_marker(g: pd.DataFrame, name: str, color: str, metric: str, higher: bool, common):
    """Nothing varies: one marker at the algorithm's best setting, ± 1 std."""
    b = g.loc[_best_index(g, metric, higher)]
    return go.Scatter(
        x=[name],
        y=[b[metric]],
        mode="markers",
        marker=dict(color=color, size=11),
        error_y=dict(type="data", array=[b[f"{metric}_std"]], visible=True),
        customdata=[[b["setting"], b["n_seeds"], _ci(b, metric)]],
        hovertemplate=(
            f"<b>{name}</b><br>%{{customdata[0]}}<br>{metric} %{{y:.4f}}"
            f"{_CI_HOVER}<br>seeds %{{customdata[1]}}<extra></extra>"
        ),
        **common,
    )


def _best_per_value(g, col: str, values, numeric: bool, metric: str, higher: bool) -> list:
    """At each value of the hyperparameter, the best setting among those with that value:
    (value, mean, std, setting, seeds, 95% half-width)."""
    pts = []
    for v in sorted(set(values), key=float) if numeric else list(dict.fromkeys(values)):
        if numeric:
            sub = g[g[col].apply(lambda x, v=v: _is_number(x) and float(x) == float(v))]
        else:
            sub = g[g[col].astype(str) == str(v)]
        b = sub.loc[_best_index(sub, metric, higher)]
        pts.append(
            (
                float(v) if numeric else str(v),
                b[metric],
                b[f"{metric}_std"],
                b["setting"],
                b["n_seeds"],
                _ci(b, metric),
            )
        )
    return pts


def _varying_line(pts: list, name: str, h: str, style: dict, metric: str, common):
    """The algorithm's best setting at each value, a line with ± 1 std error bars."""
    x, y, e, s, n, ci = zip(*pts)
    return go.Scatter(
        x=list(x),
        y=list(y),
        mode="lines+markers",
        line=style,
        marker=dict(size=8, color=style["color"]),
        error_y=dict(type="data", array=list(e), visible=True, thickness=1.2, width=4),
        customdata=list(zip(s, n, ci)),
        hovertemplate=(
            f"<b>{name}</b><br>{h} = %{{x}}<br>%{{customdata[0]}}"
            f"<br>{metric} %{{y:.4f}}{_CI_HOVER}<br>seeds "
            "%{customdata[1]}<extra></extra>"
        ),
        **common,
    )


def _reference_line(g, span, name: str, h: str, color: str, metric: str, higher: bool, common):
    """An algorithm that does not vary ``h``: a dashed line at its best setting."""
    b = g.loc[_best_index(g, metric, higher)]
    return go.Scatter(
        x=list(span),
        y=[b[metric]] * 2,
        mode="lines",
        line=dict(color=color, width=1.5, dash="dash"),
        customdata=[[b["setting"], b["n_seeds"]]] * 2,
        hovertemplate=(
            f"<b>{name}</b> (does not vary {h})<br>%{{customdata[0]}}"
            f"<br>{metric} %{{y:.4f}}<br>seeds %{{customdata[1]}}"
            "<extra></extra>"
        ),
        **common,
    )


def _panel(fig, rows, labels, colors, metric, higher, h, r, c, in_legend):
    """One panel: ``metric`` against hyperparameter ``h`` (None: nothing varies), one trace
    per algorithm (each algorithm in the legend once, in its first panel)."""
    col = None if h is None else f"hp.{h}"
    numeric, span = _panel_axis(fig, rows, col, r, c)
    for label in labels:
        g = rows[rows["label"] == label]
        if g.empty:
            continue
        name = policy_name(label)
        show = label not in in_legend
        in_legend.add(label)
        common = dict(name=name, legendgroup=label, showlegend=show)
        if h is None:  # nothing varies: one marker per algorithm
            trace = _best_marker(g, name, colors[label], metric, higher, common)
            fig.add_trace(trace, row=r, col=c)
            continue
        values = g[col].dropna() if col in g else pd.Series(dtype=object)
        if values.astype(str).nunique() > 1:
            pts = _best_per_value(g, col, values, numeric, metric, higher)
            style = dict(color=colors[label], **policy_line(label))
            fig.add_trace(_varying_line(pts, name, h, style, metric, common), row=r, col=c)
        elif span is not None:
            trace = _reference_line(g, span, name, h, colors[label], metric, higher, common)
            fig.add_trace(trace, row=r, col=c)


__all__ = ["sweep_figure", "varying_hyperparameters", "METRIC_TEXT"]
