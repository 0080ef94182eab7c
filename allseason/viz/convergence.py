"""The LinTS convergence figure of the paper's section 6: reward per batch on stationary
MNIST, from the snapshot of :mod:`allseason.paper.convergence` (a dict in, a figure out)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .layout import base_layout
from .style import OKABE_ITO, RANDOM_GREY

__all__ = ["convergence_figure"]


def convergence_figure(snap: dict) -> go.Figure:
    """Mean reward per batch of 10 (mean over seeds, averaged over ``curve_every_batches``
    batches), the plateau and its ``level`` line, the measured observations-to-learn
    (median over seeds, with the seeds' range shaded) and the paper's ~2,000."""
    x, y = np.asarray(snap["curve_steps"]), np.asarray(snap["curve"])
    plateau = float(np.mean(snap["plateau"]))
    level = float(snap["level"])
    learnt, med = snap["learnt_at"], float(snap["median_learnt_at"])
    fig = go.Figure()
    fig.add_vrect(
        x0=min(learnt),
        x1=max(learnt) if max(learnt) > min(learnt) else min(learnt) + 1,
        fillcolor=OKABE_ITO["blue"],
        opacity=0.12,
        line_width=0,
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=y,
            mode="lines",
            name=f"LinTS, mean of {snap['seeds']} seeds",
            line=dict(color=OKABE_ITO["orange"], width=2),
            hovertemplate="step %{x}<br>reward per batch %{y:.3f}<extra></extra>",
        )
    )
    for yv, name, dash in (
        (plateau, f"plateau {plateau:.3f} (mean after step {snap['plateau_from']:,})", "dot"),
        (level * plateau, f"{level:.0%} of the plateau", "dash"),
    ):
        fig.add_trace(
            go.Scatter(
                x=[0, int(snap["n"])],
                y=[yv, yv],
                mode="lines",
                name=name,
                line=dict(color="#444", dash=dash, width=1),
                hoverinfo="skip",
            )
        )
    fig.add_hline(
        y=0.1,
        line=dict(color=RANDOM_GREY, dash="dot", width=1),
        annotation_text="random guess (0.1)",
        annotation_position="top right",
    )
    fig.add_vline(
        x=med,
        line=dict(color=OKABE_ITO["blue"], width=2),
        annotation_text=f"measured: {med:,.0f}",
        annotation_position="top right",
    )
    fig.add_vline(
        x=snap["paper_claim"],
        line=dict(color=OKABE_ITO["vermillion"], width=2, dash="dash"),
        annotation_text=f"paper: about {snap['paper_claim']:,}",
        annotation_position="bottom right",
    )
    fig.update_layout(
        **base_layout(
            "LinTS on stationary MNIST: reward per batch",
            "observations (images shown)",
            "mean reward per batch of 10",
            subtitle=(
                f"Ten-arm digit task, one state, d = {snap['d']}; a point averages "
                f"{snap['curve_every_batches']} batches and {snap['seeds']} seeds.<br>"
                f"Learnt: the trailing {snap['window']}-observation mean reaches "
                f"{level:.0%} of the plateau (shaded: the seeds' range)."
            ),
            height=500,
            margin=dict(l=70, r=30, t=110, b=60),
        )
    )
    fig.update_yaxes(range=[0, 1])
    fig.update_xaxes(range=[0, int(snap["n"])])
    return fig
