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

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..stats import CI_LABEL, ci95_halfwidth
from .style import (INK, base_layout, empty_figure, policy_colors, policy_line, policy_marker,
                    policy_name, state_color, state_label)
from .timeline import add_season_bands

METRICS = {
    "reward": ("reward", "Cumulative reward", "cumulative reward (sum of rewards)", True),
    "regret": ("regret", "Cumulative regret",
               "cumulative regret<br>(best − played, expected)", False),
}
BANDS = {"minmax": "min–max", "std": "mean ± 1 std", "ci95": "mean ± " + CI_LABEL}


def sample_index(n: int, max_points: int) -> np.ndarray:
    """At most ``max_points`` evenly spaced indices into ``range(n)``, first and last kept."""
    if n <= max_points:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, max(int(max_points), 2)).round().astype(np.int64))


def rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _labels(table: pd.DataFrame) -> list[str]:
    return list(dict.fromkeys(table["policy"].tolist()))


def cumulative_figure(steps: pd.DataFrame, pattern, metric: str = "reward",
                      max_points: int = 1000, band: str = "minmax") -> go.Figure:
    """Cumulative reward (or pseudo-regret) over steps: one line per policy, the mean over
    seeds, and a shaded band over seeds (``band="minmax"``: the range of the seeds' curves;
    ``"std"``: mean ± one standard deviation; ``"ci95"``: mean ± the 95% Student's t
    interval of the mean, t.ppf(0.975, n − 1) · std / √n); the true state as background
    bands.

    Traces: for each policy (sorted best first) the band's upper edge, its lower edge (the
    fill), then the mean line; then one legend entry per state. Each trace holds at most
    ``max_points`` points (sampled steps, the last step included)."""
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
        wide = g.pivot(index="step", columns="seed", values=col).sort_index()
        cum = wide.cumsum(skipna=True).where(wide.notna()).to_numpy()
        n_seeds = cum.shape[1]
        mean = np.nanmean(cum, axis=1)
        if band == "minmax":
            lo, hi = np.nanmin(cum, axis=1), np.nanmax(cum, axis=1)
        else:
            sd = np.nanstd(cum, axis=1, ddof=1) if n_seeds > 1 else np.zeros_like(mean)
            if band == "ci95":  # seeds present at each step (a live race may be ragged)
                sd = ci95_halfwidth(sd, np.isfinite(cum).sum(axis=1))
            lo, hi = mean - sd, mean + sd
        curves[label] = (wide.index.to_numpy(), mean, lo, hi, n_seeds)
    order = sorted(labels, key=lambda lab: curves[lab][1][-1], reverse=higher_better)
    n_seeds = max(c[4] for c in curves.values())
    band_name = BANDS[band]
    fig = go.Figure()
    for label in order:
        x, mean, lo, hi, k = curves[label]
        idx = sample_index(len(x), max_points)
        x, mean, lo, hi = x[idx], mean[idx], lo[idx], hi[idx]
        name, color = policy_name(label), colors[label]
        if k > 1:
            fig.add_trace(dict(type="scatter", x=x, y=hi, mode="lines", line=dict(width=0),
                               hoverinfo="skip", showlegend=False, legendgroup=label,
                               name=f"{name} {band_name} (upper)"))
            fig.add_trace(dict(type="scatter", x=x, y=lo, mode="lines", line=dict(width=0),
                               fill="tonexty", fillcolor=rgba(color, 0.18), hoverinfo="skip",
                               showlegend=False, legendgroup=label,
                               name=f"{name} {band_name} over {k} seeds"))
        # the hover names the mean only: the band's edges per point would double the data
        # the browser parses and draws (the band itself is drawn)
        fig.add_trace(dict(
            type="scatter", x=x, y=mean, mode="lines+markers", name=name, legendgroup=label,
            line=dict(color=color, **policy_line(label)),
            marker=policy_marker(label, color),  # dash and symbol: not colour alone
            hovertemplate=(f"<b>{name}</b><br>step %{{x:,}}<br>mean %{{y:,.1f}}"
                           + (f" over {k} seeds" if k > 1 else "") + "<extra></extra>")))
    seeds_txt = (f"line: mean over {n_seeds} seeds, band: {band_name} over seeds"
                 if n_seeds > 1 else "1 seed")
    better = "higher is better" if higher_better else "lower is better"
    fig.update_layout(**base_layout(
        f"{title} ({better})", "step", ytitle,
        subtitle=f"{seeds_txt}; legend sorted best first; background: true state",
        height=500), hovermode="closest")
    if pattern is not None:
        add_season_bands(fig, pattern)
        fig.update_xaxes(range=[0, pattern.horizon])
    return fig


def _summary_frame(summary) -> pd.DataFrame:
    if isinstance(summary, dict):
        summary = pd.DataFrame.from_dict(summary, orient="index")
        summary.index.name = "policy"
    summary = summary.copy()
    if "policy" not in summary.columns:
        summary = summary.reset_index().rename(columns={"index": "policy"})
    return summary.sort_values("mean_reward", ascending=False, kind="stable")


def _pm(mean: float, half: float) -> str:
    return f"{mean:.3f} ± {half:.3f}" if half > 0 else f"{mean:.3f}"


def leaderboard_table(summary) -> pd.DataFrame:
    """The leaderboard as display strings, best mean reward first; index "Rank" (1, 2, ...).

    Columns: Policy (human name), "Mean reward / step (± 95% t)" ("mean ± half-width of
    the 95% Student's t interval" over seeds; no ± with a single seed), "Mean expected
    reward / step", "Cumulative regret" (mean over seeds), "Seconds" (compute time summed
    over seeds). ``summary``: the ``summary`` table
    of ``to_frames()`` or the dict of ``RaceResult.summary()``."""
    s = _summary_frame(summary)
    out = pd.DataFrame({
        "Policy": [policy_name(p) for p in s["policy"]],
        "Mean reward / step (± 95% t)": [_pm(m, c)
                                          for m, c in zip(s["mean_reward"], s["ci95"])],
        "Mean expected reward / step": [f"{v:.3f}" for v in s["mean_expected_reward"]],
        "Cumulative regret": [f"{v:,.0f}" for v in s["cum_regret"]],
        "Seconds": [f"{v:.2f}" for v in s["seconds"]],
    }, index=pd.RangeIndex(1, len(s) + 1, name="Rank"))
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
        fig.add_trace(dict(
            type="bar", orientation="h", x=[row.mean_reward], y=[name], name=name,
            marker=dict(color=colors[row.policy]), width=0.7,
            error_x=dict(type="data", array=[row.ci95], visible=bool(row.ci95 > 0),
                         color=INK, thickness=1.5, width=6),
            customdata=[[row.ci95, row.cum_regret, row.seconds]],
            hovertemplate=(f"<b>{name}</b><br>mean reward / step %{{x:.4f}}"
                           "<br>95% interval (Student's t) ± %{customdata[0]:.4f}"
                           "<br>cumulative regret %{customdata[1]:,.0f}"
                           "<br>%{customdata[2]:.2f} s<extra></extra>")))
        end = row.mean_reward + np.sign(row.mean_reward or 1) * row.ci95
        fig.add_annotation(x=end, y=name, text=_pm(row.mean_reward, row.ci95),
                           xanchor="left" if end >= 0 else "right", xshift=6 if end >= 0 else -6,
                           showarrow=False, font=dict(size=13))
    any_ci = bool((s["ci95"] > 0).any())
    fig.update_layout(**base_layout(
        "Leaderboard: mean reward per step (higher is better)",
        "mean reward per step", None,
        subtitle=(f"error bars: {CI_LABEL} over seeds" if any_ci
                  else "one seed: no interval"),
        height=max(260, 90 + 48 * len(s)), showlegend=False, bargap=0.25))
    fig.update_yaxes(categoryorder="array", categoryarray=names[::-1])
    lo = min(0.0, float((s["mean_reward"] - s["ci95"]).min()))
    hi = max(0.0, float((s["mean_reward"] + s["ci95"]).max()))
    pad = 0.3 * reach
    fig.update_xaxes(range=[lo - (pad if lo < 0 else 0.02 * reach), hi + pad],
                     zeroline=True, zerolinecolor=INK, zerolinewidth=1)
    return fig


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
        fig.add_trace(dict(
            type="bar", x=xcat, y=a["mean"].to_numpy(), name=name,
            marker=dict(color=colors[label]),
            error_y=dict(type="data", array=a["ci95"].to_numpy(), visible=n_seeds > 1,
                         color=INK, thickness=1.2, width=3),
            customdata=np.stack([a["ci95"].to_numpy(), a["count"].to_numpy()], axis=1),
            hovertemplate=(f"<b>{name}</b><br>%{{x}}: mean reward %{{y:.3f}}"
                           "<br>95% interval (Student's t) ± %{customdata[0]:.3f} "
                           "(%{customdata[1]} seeds)"
                           "<extra></extra>")))
    weighted = (means["best"] * means["n"]).groupby(means["state"]).sum()
    best = (weighted / means["n"].groupby(means["state"]).sum()).reindex(states)
    fig.add_trace(dict(
        type="scatter", x=xcat, y=best.to_numpy(), mode="markers",
        name="best arm (oracle, expected)",
        marker=dict(symbol="line-ew-open", size=44, color=INK,
                    line=dict(width=3, color=INK)),
        hovertemplate="%{x}: best arm's mean expected reward %{y:.3f}<extra></extra>"))
    for i, s in enumerate(states):
        fig.add_shape(type="rect", xref="x", yref="y domain", x0=i - 0.5, x1=i + 0.5, y0=0,
                      y1=1, fillcolor=state_color(s), opacity=0.3, layer="below",
                      line=dict(width=0))
    fig.update_layout(**base_layout(
        title, "true state", "mean reward per step",
        subtitle=(f"bars: mean over {n_seeds} seeds, error bars: {CI_LABEL}; "
                  "grey tick: best possible" if n_seeds > 1 else
                  "1 seed; grey tick: best possible"),
        barmode="group", bargap=0.2, bargroupgap=0.05))
    fig.update_yaxes(zeroline=True, zerolinecolor=INK)
    return fig


__all__ = ["cumulative_figure", "leaderboard_table", "leaderboard_figure",
           "reward_by_state_figure", "state_means", "sample_index", "rgba"]
