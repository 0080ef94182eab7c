"""Your logged data, evaluated offline: the estimates with their 95% intervals, and the table
the page shows. Input: ``OfflineResult.summary()`` rows (policy, method, events, estimate,
ci_data, low, high, ci_seeds, n_seeds)."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from ..logs.offline import METHOD_TITLES, MIN_EVENTS
from .style import INK, base_layout, empty_figure, policy_colors, policy_name, policy_symbol


def estimates_table(rows: list[dict], method: str) -> pd.DataFrame:
    """One method's rows as display strings, best estimate first (index "Rank")."""
    block = [r for r in rows if r["method"] == method]
    what = "Kept events" if method == "replay" else "Effective sample size"
    out = pd.DataFrame(
        {
            "Policy": [policy_name(r["policy"]) for r in block],
            what: [
                f"{r['events']:,.0f}" + (" ⚠" if not r["events"] >= MIN_EVENTS else "")
                for r in block
            ],
            "Estimate (mean reward)": [_num(r["estimate"]) for r in block],
            "95% interval": [f"[{_num(r['low'])}, {_num(r['high'])}]" for r in block],
            "± over seeds (t)": [
                ("—" if r["n_seeds"] < 2 else f"± {r['ci_seeds']:.4f}") for r in block
            ],
        },
        index=pd.Index([str(i + 1) for i in range(len(block))], name="Rank"),
    )
    return out


def _num(v) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{v:.4f}"


def estimates_figure(rows: list[dict], method: str) -> go.Figure:
    """Each policy's estimate (a dot, its usual colour and symbol) with its 95% interval (a
    bar), best on top; a dotted line at the largest lower end: intervals that reach it
    cannot be told from the best."""
    block = [r for r in rows if r["method"] == method and math.isfinite(r["estimate"])]
    title = f"Estimated mean reward per step, {METHOD_TITLES[method]}"
    if not block:
        return empty_figure("No estimate: no policy kept an event.", title)
    colors = policy_colors([r["policy"] for r in block])
    fig = go.Figure()
    names = [policy_name(r["policy"]) for r in block]
    for r, name in zip(block, names):
        fig.add_trace(
            dict(
                type="scatter",
                mode="markers",
                x=[r["estimate"]],
                y=[name],
                name=name,
                marker=dict(
                    color=colors[r["policy"]],
                    size=12,
                    symbol=policy_symbol(r["policy"]),
                    line=dict(color="white", width=1),
                ),
                error_x=dict(
                    type="data",
                    symmetric=False,
                    array=[r["high"] - r["estimate"]],
                    arrayminus=[r["estimate"] - r["low"]],
                    color=colors[r["policy"]],
                    thickness=2.5,
                    width=8,
                ),
                hovertemplate=(
                    f"<b>{name}</b><br>estimate %{{x:.4f}}<br>95% interval "
                    f"[{r['low']:.4f}, {r['high']:.4f}]<br>"
                    + ("kept events" if method == "replay" else "ESS")
                    + f" {r['events']:,.0f}<extra></extra>"
                ),
            )
        )
    best_low = max(r["low"] for r in block)
    fig.add_vline(
        x=best_low,
        line=dict(color=INK, width=1, dash="dot"),
        annotation_text="best policy's lower end",
        annotation_position="top",
        annotation_font_size=12,
    )
    fig.update_layout(
        **base_layout(
            title,
            "mean reward per step",
            None,
            subtitle="dot: the estimate (mean over replay seeds); bar: its 95% interval, which "
            "counts the log's own noise",
            height=max(280, 110 + 46 * len(block)),
            showlegend=False,
        )
    )
    fig.update_yaxes(categoryorder="array", categoryarray=names[::-1])
    return fig


__all__ = ["estimates_table", "estimates_figure"]
