"""Your logged data, evaluated offline: the estimates with their 95% intervals, and the table
the page shows. Input: ``OfflineResult.summary()`` rows (policy, method, events, ess_draw,
estimate, low, high, interval, ci_seeds, n_seeds, biased); the first row is the logger's own
value (method "logged"), shown first in every table and as a band in the figure."""

from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from ..logs.offline import INTERVALS, METHOD_TITLES, MIN_EVENTS
from .layout import INK, base_layout, empty_figure
from .style import policy_colors, policy_name, policy_symbol

LOGGER_NAME = "The logger (what the log measured)"


def estimates_table(rows: list[dict], method: str) -> pd.DataFrame:
    """The logger's row (index "log"), then one method's rows as display strings, best
    estimate first (index "Rank"); every interval says which it is."""
    logger = [r for r in rows if r["method"] == "logged"]
    block = [r for r in rows if r["method"] == method]
    what = "Kept events" if method == "replay" else "Effective sample size"
    draw = method in ("ips", "snips", "dr")

    def cells(r, is_logger):
        out = {
            "Policy": LOGGER_NAME if is_logger else policy_name(r["policy"]),
            what: f"{r['events']:,.0f}" + ("" if is_logger or r["events"] >= MIN_EVENTS else " ⚠"),
            "Estimate (mean reward)": _num(r["estimate"]),
            "95% interval": f"[{_num(r['low'])}, {_num(r['high'])}]",
            "Interval": r["interval"],
            "± over seeds (t)": (
                "—" if is_logger or r["n_seeds"] < 2 else f"± {r['ci_seeds']:.4f}"
            ),
        }
        if draw:
            out["ESS, realised draw"] = "—" if r["ess_draw"] is None else f"{r['ess_draw']:,.0f}"
        return out

    records = [cells(r, True) for r in logger] + [cells(r, False) for r in block]
    index = ["log"] * len(logger) + [str(i + 1) for i in range(len(block))]
    return pd.DataFrame(records, index=pd.Index(index, name="Rank"))


def _num(v) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{v:.4f}"


def estimates_figure(rows: list[dict], method: str) -> go.Figure:
    """Each policy's estimate (a dot, its usual colour and symbol) with its 95% interval (a
    bar), best on top; a dotted line at the largest lower end: intervals that reach it
    cannot be told from the best."""
    block = [r for r in rows if r["method"] == method and r["estimate"] is not None]
    logger = next((r for r in rows if r["method"] == "logged"), None)
    title = f"Estimated mean reward per step, {METHOD_TITLES[method]}" + (
        " (biased here: the logging is not uniform)" if block and block[0]["biased"] else ""
    )
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
    if logger is not None:
        fig.add_vrect(
            x0=logger["low"],
            x1=logger["high"],
            fillcolor=INK,
            opacity=0.08,
            line_width=0,
            annotation_text=f"the logger: {logger['estimate']:.4f}",
            annotation_position="bottom left",
            annotation_font_size=12,
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
            subtitle=f"dot: estimate (mean over seeds); bar: 95% interval, {INTERVALS[method]}; "
            "grey band: the logger (Wilson)",
            height=max(280, 110 + 46 * len(block)),
            showlegend=False,
        )
    )
    fig.update_yaxes(categoryorder="array", categoryarray=names[::-1])
    return fig


__all__ = ["estimates_table", "estimates_figure"]
