"""Figures of the paper's real-data reproduction: our table against the paper's, cell by
cell, and the reward curves per pattern. Tables in (from :mod:`allseason.paper.reproduce`), figures
out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from allseason.paper.tables import PRINTED_ROWS

from .layout import INK, base_layout
from .style import policy_colors, policy_line
from .style import policy_name as _policy_name

__all__ = ["comparison_figure", "curves_figure", "CURVE_KINDS", "policy_name"]


def policy_name(label: str) -> str:
    """The policy's title; a printed-rule row's is its policy's title + ", printed rule"."""
    if label in PRINTED_ROWS:
        return f"{_policy_name(PRINTED_ROWS[label])}, printed rule"
    return _policy_name(label)


_PATTERNS = ("regular", "realistic", "extreme")
CURVE_KINDS = {"average": "mean reward so far", "cumulative": "cumulative reward"}
MAX_CHANGE_LINES = 20


def comparison_figure(frame: pd.DataFrame, title: str, threshold: float = 0.03) -> go.Figure:
    """Heatmap of ours minus the paper's mean reward (rows: algorithms in the paper's order,
    columns: patterns), from :func:`allseason.paper.tables.compare`'s frame. Each cell says
    both numbers; cells marked ``differs`` (|diff| > ``threshold``) are boxed and their
    difference in bold."""
    algs = list(dict.fromkeys(frame["algorithm"]))
    pats = [p for p in _PATTERNS if p in set(frame["pattern"])]
    z = np.full((len(algs), len(pats)), np.nan)
    text = [["" for _ in pats] for _ in algs]
    shapes = []
    for _, r in frame.iterrows():
        i, j = algs.index(r["algorithm"]), pats.index(r["pattern"])
        paper = f"paper {r['paper_mean']:.2f} ± {r['paper_std']:.2f}"
        if pd.isna(r["mean"]):
            text[i][j] = f"not run<br>{paper}"
            continue
        z[i, j] = r["diff"]
        diff = f"{round(r['diff'], 2) + 0.0:+.2f}".replace("+0.00", "0.00")
        if r["differs"]:
            diff = f"<b>{diff}</b>"
            shapes.append(
                dict(
                    type="rect",
                    x0=j - 0.5,
                    x1=j + 0.5,
                    y0=i - 0.5,
                    y1=i + 0.5,
                    line=dict(color="#222", width=2),
                )
            )
        text[i][j] = f"ours {r['mean']:.2f} ± {r['std']:.2f}<br>{paper}<br>{diff}"
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[p.capitalize() for p in pats],
            y=[policy_name(a) for a in algs],
            text=text,
            texttemplate="%{text}",
            textfont=dict(size=12),
            colorscale="RdBu",
            zmid=0,
            zmin=-0.3,
            zmax=0.3,
            xgap=3,
            ygap=3,
            colorbar=dict(title=dict(text="ours − paper", side="right"), thickness=14),
            hovertemplate="%{y}, %{x}<br>%{text}<extra></extra>",
        )
    )
    fig.update_layout(
        **base_layout(
            title,
            subtitle=f"Blue: we measure more than the paper; red: less. Boxed: differs by "
            f"more than {threshold}.",
            height=150 + 70 * len(algs),
        )
    )
    fig.update_layout(shapes=shapes, margin=dict(l=150, r=30, t=90, b=40))
    fig.update_yaxes(autorange="reversed", showgrid=False)
    fig.update_xaxes(side="top", showgrid=False)
    return fig


def curves_figure(
    curves: pd.DataFrame, title: str, kind: str = "average", change_points: dict | None = None
) -> go.Figure:
    """One panel per pattern: each policy's reward over time, mean over its seeds.

    ``curves``: columns pattern, policy, seed, step, cum_reward. ``kind``: "average" (the
    cumulative reward / step: its last value is the table's cell) or "cumulative".
    ``change_points``: {pattern: steps} drawn as thin vertical lines."""
    if kind not in CURVE_KINDS:
        raise ValueError(f"kind: one of {', '.join(CURVE_KINDS)}, got {kind!r}")
    pats = [p for p in _PATTERNS if p in set(curves["pattern"])]
    cps = change_points or {}
    titles = [p.capitalize() + (f" · {len(cps[p])} changes" if p in cps else "") for p in pats]
    fig = make_subplots(
        rows=1,
        cols=max(len(pats), 1),
        shared_yaxes=True,
        subplot_titles=titles,
        horizontal_spacing=0.03,
    )
    mean = curves.groupby(["pattern", "policy", "step"])["cum_reward"].mean()
    # legend ranked by the mean reward at the end (over the patterns shown)
    last = curves[curves.step == curves.groupby("policy")["step"].transform("max")]
    policies = list(
        last.assign(avg=last.cum_reward / last.step)
        .groupby("policy")["avg"]
        .mean()
        .sort_values(ascending=False)
        .index
    )
    colors = policy_colors(policies)
    for j, pattern in enumerate(pats, 1):
        for pol in policies:
            if (pattern, pol) not in mean.index.droplevel(2):
                continue
            s = mean.loc[pattern, pol]
            y = s.to_numpy() if kind == "cumulative" else s.to_numpy() / s.index.to_numpy()
            fig.add_trace(
                go.Scatter(
                    x=s.index,
                    y=y,
                    mode="lines",
                    name=policy_name(pol),
                    legendgroup=pol,
                    showlegend=j == 1,
                    line=dict(color=colors[pol], **policy_line(pol)),
                    hovertemplate=f"{policy_name(pol)}<br>step %{{x:,}}<br>"
                    f"{CURVE_KINDS[kind]} %{{y:.3f}}<extra></extra>",
                ),
                row=1,
                col=j,
            )
        if len(cps.get(pattern, ())) <= MAX_CHANGE_LINES:
            for cp in cps.get(pattern, ()):
                fig.add_vline(x=cp, line=dict(color=INK, width=1, dash="dot"), row=1, col=j)
    fig.update_layout(
        **base_layout(
            title,
            yaxis_title=CURVE_KINDS[kind].capitalize(),
            subtitle=f"Mean over seeds, legend ranked by the final "
            f"value; grey lines: change points (not drawn "
            f"above {MAX_CHANGE_LINES} per panel).",
            height=460,
        )
    )
    fig.update_xaxes(title_text="step", tickformat="~s")
    return fig
