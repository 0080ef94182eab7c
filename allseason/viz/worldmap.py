"""The map of where All-Season wins: a grid of tuned contests (season length x
signal-to-noise by default), each cell coloured by All-Season minus the best baseline where
the difference is significant, grey where it is not, with named worlds marked on it.

Pure functions: a snapshot dict in (:mod:`allseason.worldmap.snapshot`), a go.Figure out."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from ..worldmap import contest
from ..worldmap.knobs import KNOBS
from ..worldmap.snapshot import axis_levels, cell_at
from .layout import base_layout
from .style import OKABE_ITO

TIE_GREY = "#d9d9d9"
CELLS_TRACE = 2  # the index of the cells' trace (text, hover, click targets): after 2 heatmaps
WIN = OKABE_ITO["blue"]
LOSE = OKABE_ITO["vermillion"]
#: marker symbols of the named worlds, in turn
MARK_SYMBOLS = ("star", "diamond", "triangle-up", "square", "pentagon", "hexagram", "cross", "x")


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 else f"{v:.2g}"


def axis_ticks(snapshot: dict, axis: str) -> list[str]:
    """Tick labels of an axis: the knob's levels; for sigma2, the SNR with sigma2."""
    knob = snapshot[axis]["knob"]
    values = snapshot[axis]["values"]
    if knob == "sigma2":
        return [f"{s:.2g} (σ²={v:g})" for s, v in zip(axis_levels(snapshot, axis), values)]
    return [_fmt(float(v)) for v in values]


def axis_title(snapshot: dict, axis: str) -> str:
    """The axis title of a map's knob."""
    knob = snapshot[axis]["knob"]
    if knob == "sigma2":
        return "signal-to-noise: gap between the two best arms / σ"
    name, unit = KNOBS[knob]
    return f"{name} ({unit})"


def _grids(snapshot: dict, label: str, page=None):
    nx, ny = len(snapshot["x"]["values"]), len(snapshot["y"]["values"])
    z = np.full((ny, nx), np.nan)
    tie = np.full((ny, nx), np.nan)
    text = [["" for _ in range(nx)] for _ in range(ny)]
    hover = [["" for _ in range(nx)] for _ in range(ny)]
    for j in range(ny):
        for i in range(nx):
            c = cell_at(snapshot, i, j, page)
            s = c[label]
            verdict = contest.verdict(c, label)
            if verdict == "tie":
                tie[j, i] = 1.0
            else:
                z[j, i] = s["diff"]
            gap = s["gap_closed"]
            gap_t = f"{gap:.0%}" if math.isfinite(gap) else "–"
            mark = {"wins": "▲", "loses": "▼", "tie": "≈"}[verdict]
            text[j][i] = f"{mark} {s['diff']:+.3f}<br>{gap_t}"
            chosen = ", ".join(
                f"{contest.TITLES[lab]} {k}={v}"
                for lab, p in c["chosen"].items()
                for k, v in p.items()
            )
            hover[j][i] = (
                f"<b>{verdict}</b>: {contest.TITLES[label]} − {contest.TITLES[c['best_baseline']]}"
                f" = {s['diff']:+.4f} ± {s['half']:.4f} per step (95% t, "
                f"{len(c['rewards'][label])} seeds)<br>share of the oracle gap closed: {gap_t}"
                f"<br>{axis_title(snapshot, 'x')}: {c['x']}; σ² = {c['knobs']['sigma2']:g}, "
                f"SNR {c['snr']:.2f}<br>tuned: {chosen}<br><i>click: open this world in Race</i>"
            )
    return z, tie, text, hover


# label offsets (pixels) tried in turn; the first whose box is clear of the other labels and
# marks is taken (cells are about 75 x 58 pixels on a wide screen)
_OFFSETS = (
    (0, -42),
    (0, 42),
    (-80, -36),
    (80, -36),
    (-80, 36),
    (80, 36),
    (0, -78),
    (0, 78),
    (-120, 0),
    (120, 0),
)
_CELL_PX = (75.0, 58.0)


def _label_offsets(points: list[tuple[float, float]], names: list[str], flip_y: bool) -> list:
    """Greedy placement: for each mark, the first offset whose label box overlaps neither
    a label placed before nor any mark."""
    px = [(x * _CELL_PX[0], (y if flip_y else -y) * _CELL_PX[1]) for x, y in points]
    boxes: list[tuple[float, float, float, float]] = []
    out = []
    for (x, y), name in zip(px, names):
        w, h = 7.5 * len(name) + 10, 22
        chosen = _OFFSETS[0]
        for ax, ay in _OFFSETS:
            cx, cy = x + ax, y + ay
            box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            clear = all(
                box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3] for b in boxes
            ) and all(
                not (box[0] - 9 < mx < box[2] + 9 and box[1] - 9 < my < box[3] + 9) for mx, my in px
            )
            if clear:
                chosen = (ax, ay)
                break
        cx, cy = x + chosen[0], y + chosen[1]
        boxes.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
        out.append(chosen)
    return out


def _add_marks(fig: go.Figure, marks: list[dict], nx: int, ny: int, flip_y: bool = False) -> None:
    """Each world: a black symbol at its place (clamped to the grid, an arrow in its label
    when beyond an edge), and its name in a white box on a leader line."""
    pts = [
        (min(max(m["fx"], -0.45), nx - 0.55), min(max(m["fy"], -0.45), ny - 0.55)) for m in marks
    ]
    offsets = _label_offsets(pts, [m["name"] for m in marks], flip_y)
    for k, (m, (fx, fy), (ax, ay)) in enumerate(zip(marks, pts, offsets)):
        arrow = ("← " if m["fx"] < -0.45 else "→ " if m["fx"] > nx - 0.55 else "") + (
            "↓ " if m["fy"] < -0.45 else "↑ " if m["fy"] > ny - 0.55 else ""
        )
        symbol = MARK_SYMBOLS[k % len(MARK_SYMBOLS)]
        fig.add_trace(
            go.Scatter(
                x=[fx],
                y=[fy],
                mode="markers",
                name=m["name"],
                marker=dict(
                    symbol=symbol, size=14, color="#000000", line=dict(color="#ffffff", width=2)
                ),
                hovertext=m.get("hover", m["name"]),
                hoverinfo="text",
            )
        )
        fig.add_annotation(
            x=fx,
            y=fy,
            ax=ax,
            ay=ay,
            text=f"{arrow}{m['name']}",
            showarrow=True,
            arrowhead=0,
            arrowwidth=1.2,
            arrowcolor="#000000",
            bgcolor="rgba(255,255,255,0.9)",
            bordercolor="#000000",
            borderwidth=1,
            borderpad=2,
            font=dict(size=12, color="#000000"),
        )


def _add_cells(fig: go.Figure, snapshot: dict, label: str, page) -> None:
    """The grid: grey ties, coloured differences, and the cells' text, hover and click
    targets (trace :data:`CELLS_TRACE`)."""
    nx, ny = len(snapshot["x"]["values"]), len(snapshot["y"]["values"])
    z, tie, text, hover = _grids(snapshot, label, page)
    finite = np.abs(z[np.isfinite(z)])
    zmax = float(finite.max()) if finite.size else 0.05
    xs, ys = np.arange(nx), np.arange(ny)
    fig.add_trace(
        go.Heatmap(
            x=xs,
            y=ys,
            z=tie,
            colorscale=[[0, TIE_GREY], [1, TIE_GREY]],
            showscale=False,
            hoverinfo="skip",
            xgap=2,
            ygap=2,
            name="no significant difference",
        )
    )
    fig.add_trace(
        go.Heatmap(
            x=xs,
            y=ys,
            z=z,
            zmid=0,
            zmin=-zmax,
            zmax=zmax,
            colorscale=[[0, LOSE], [0.5, "#ffffff"], [1, WIN]],
            xgap=2,
            ygap=2,
            hoverinfo="skip",
            colorbar=dict(
                title=dict(text="reward / step<br>vs best baseline", side="top"),
                thickness=14,
                len=0.8,
            ),
        )
    )
    cx, cy = np.meshgrid(xs, ys)
    fig.add_trace(  # the cells' text, hover and click targets
        go.Scatter(
            x=cx.ravel(),
            y=cy.ravel(),
            mode="markers+text",
            text=[t for row in text for t in row],
            textfont=dict(size=12, color="#222222"),
            hovertext=[h for row in hover for h in row],
            hoverinfo="text",
            marker=dict(symbol="square", size=40, opacity=0.01, color="#000000"),
            customdata=np.stack([cx.ravel(), cy.ravel()], axis=1),
            showlegend=False,
            name="cells",
        )
    )


def _axes(fig: go.Figure, snapshot: dict) -> None:
    """Categorical axes on cell indices, labelled with the knobs' levels (SNR upwards)."""
    nx, ny = len(snapshot["x"]["values"]), len(snapshot["y"]["values"])
    xs, ys = np.arange(nx), np.arange(ny)
    fig.update_xaxes(
        tickvals=list(xs),
        ticktext=axis_ticks(snapshot, "x"),
        range=[-0.5, nx - 0.5],
        showgrid=False,
        zeroline=False,
    )
    y_range = [-0.5, ny - 0.5]
    if snapshot["y"]["knob"] == "sigma2":  # more noise is less signal: SNR grows upwards
        y_range = y_range[::-1]
    fig.update_yaxes(
        tickvals=list(ys),
        ticktext=axis_ticks(snapshot, "y"),
        range=y_range,
        showgrid=False,
        zeroline=False,
    )


def map_figure(
    snapshot: dict,
    label: str = "allseason-sw",
    marks: list[dict] | None = None,
    *,
    title: str | None = None,
    height: int = 620,
    page=None,
) -> go.Figure:
    """The map for one All-Season variant.

    Parameters
    ----------
    snapshot : dict
        A map snapshot (:func:`allseason.worldmap.snapshot.load`).
    label : str
        "allseason-sw" or "allseason-disc".
    marks : list of dict, optional
        Worlds to mark: ``name``, ``fx``, ``fy`` (fractional cell indices, as
        :func:`allseason.worldmap.snapshot.predict` gives them); drawn at the edge (with an
        arrow in the label) when outside the grid.
    title : str, optional
        The figure's title (default: which variant against which baselines).
    height : int
        Pixels.
    page : optional
        Which page of the map (e.g. a batch size); default the first.
    """
    nx, ny = len(snapshot["x"]["values"]), len(snapshot["y"]["values"])
    fig = go.Figure()
    _add_cells(fig, snapshot, label, page)
    _add_marks(fig, marks or [], nx, ny, flip_y=snapshot["y"]["knob"] == "sigma2")
    name = contest.TITLES[label]
    pk = snapshot["page"]["knob"]
    pv = snapshot["page"]["values"][0] if page is None else page
    fig.update_layout(
        **base_layout(
            title or f"Where {name} beats the best baseline ({KNOBS[pk][0]} {pv:g})",
            axis_title(snapshot, "x"),
            axis_title(snapshot, "y"),
            subtitle="blue ▲: wins · vermillion ▼: loses · grey ≈: no significant difference "
            "(95% t); second line: share of the oracle gap closed",
            height=height,
        )
    )
    _axes(fig, snapshot)
    return fig


__all__ = ["map_figure", "axis_ticks", "axis_title", "MARK_SYMBOLS"]
