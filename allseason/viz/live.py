"""The Live page's figures: pure functions, a :class:`~allseason.api.LiveFrame` in, a
``go.Figure`` out (no streamlit).

They are redrawn several times a second, so they are light: at most ``max_points`` points
per line (sampled, never averaged: the last step is always drawn), lines rather than bars
(one SVG path per trace), no animation frames. Seasons are numbered from 1 here, as on the
page's buttons ("season 1" is the engine's state 0). ``scale`` enlarges text and lines for
a projector (presenter mode).

- :func:`rate_figure`: the rolling reward rate per contestant over the last steps, on the
  seasons' bands;
- :func:`ribbon_figure`: the true season, and which bandit of the featured All-Season holds
  the top weight (the shadow in pink with white dots), step by step;
- :func:`since_switch_figure`: each contestant's regret since the last switch (flat = it
  found the best arms again);
- :func:`contestants_key` and :func:`bandits_key`: the figures' legends, as HTML.

Nothing in a live figure moves its margins. Plotly lays a figure out again whenever a legend
or an axis pushes a margin (its "auto-margin" redraw), and on a figure redrawn four times a
second that second layout was a third of the browser's Plotly time (measured with chromium's
profiler, docs/performance.md). So the margins are fixed (``autoexpand=False``, no axis
``automargin``), tick labels are not measured against the page (``ticklabeloverflow``
"allow"), and the legends are HTML keys drawn beside the figures.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from ..policies import is_reference
from .layout import INK, base_layout, key_html, swatch
from .race import ORACLE_LABEL, sample_index
from .style import bandit_color, bandit_label, policy_colors, policy_line, policy_name, state_color

MAX_POINTS = 200  # points per line on screen (a rolling mean: smooth at 1 point per 10 steps)
BAND_OPACITY = 0.35
SHADOW_MIN_SHARE = 0.012  # the shadow's segments: at least this share of the window wide


def season_label(state: int) -> str:
    """The Live page's name of a true state: seasons count from 1 (state 0 = season 1)."""
    return f"season {int(state) + 1}"


def runs_of(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, stops) index pairs of the runs of equal consecutive values."""
    values = np.asarray(values)
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    cut = np.flatnonzero(values[1:] != values[:-1]) + 1
    return np.r_[0, cut], np.r_[cut, len(values)]


def x_range(frame, window: int | None = None) -> list[float]:
    """The step axis: the last ``window`` steps, the show's start at the left edge until
    the window is full (so the lines grow from the left, then scroll)."""
    n = window or max(len(frame.steps), 1)
    hi = max(frame.t, n)
    return [hi - n - 0.5, hi - 0.5]


def _name(label: str) -> str:
    return ORACLE_LABEL if is_reference(label) else policy_name(label)


def _line(label: str, color: str, scale: float) -> dict:
    """A contestant's line: its colour and dash (``style``); an oracle grey dashed."""
    if is_reference(label):
        return dict(color=INK, dash="dash", width=2 * scale)
    style = policy_line(label)
    return dict(color=color, dash=style.get("dash", "solid"), width=style["width"] * scale)


# the app's theme replaces the template in the browser; plotly's "none" template costs a tenth
# of "plotly_white" to build (2 ms against 14 ms a figure, measured), which counts 12 times
# a second
TEMPLATE = "none"


def _layout(title: str, scale: float, height: int, **kw) -> dict:
    """The base layout (:func:`~allseason.viz.layout.base_layout`) scaled by ``scale``."""
    layout = base_layout(title, height=int(height))
    layout["template"] = TEMPLATE
    layout["font"] = {**layout["font"], "size": round(14 * scale)}
    layout["title"]["font"] = dict(size=round(17 * scale))
    layout.pop("legend")
    # fixed margins (see the module's docstring), one left margin for every live figure:
    # their step axes line up one under the other; room below for the tick labels
    layout["margin"] = dict(
        l=round(90 * scale), r=20, t=round(44 * scale), b=round(30 * scale), autoexpand=False
    )
    layout.update(uirevision="live", hovermode="x unified", showlegend=False)
    layout.update(kw)
    # the app's theme sets its own, small, tick font
    tick = dict(tickfont=dict(size=round(13 * scale)), automargin=False, ticklabeloverflow="allow")
    for axis in ("xaxis", "yaxis"):
        layout[axis] = {**tick, **layout.get(axis, {})}
        if "title" in layout[axis]:
            layout[axis]["title"] = {"font": dict(size=round(14 * scale)), **layout[axis]["title"]}
    return layout


def bands(
    steps: np.ndarray,
    state: np.ndarray,
    *,
    labels: bool = True,
    scale: float = 1.0,
    window: int | None = None,
) -> tuple[list[dict], list[dict]]:
    """(shapes, annotations) that shade each run of one true state in the window in its
    light colour, full height, below the traces; runs wider than a tenth of the window
    (``window`` steps, default the steps given) carry "season k" at the top."""
    starts, stops = runs_of(state)
    n = max(window or len(steps), 1)
    shapes, notes = [], []
    for a, b in zip(starts.tolist(), stops.tolist()):
        s = int(state[a])
        x0, x1 = float(steps[a]) - 0.5, float(steps[b - 1]) + 0.5
        shapes.append(
            dict(
                type="rect",
                xref="x",
                yref="y domain",
                x0=x0,
                x1=x1,
                y0=0,
                y1=1,
                fillcolor=state_color(s),
                opacity=BAND_OPACITY,
                layer="below",
                line=dict(width=0),
            )
        )
        if labels and (b - a) >= n / 10:
            notes.append(
                dict(
                    x=(x0 + x1) / 2,
                    y=1.0,
                    xref="x",
                    yref="y domain",
                    yanchor="bottom",
                    text=f"<b>{season_label(s)}</b>",
                    showarrow=False,
                    font=dict(size=round(13 * scale), color=state_color(s, strong=True)),
                )
            )
    return shapes, notes


def rate_figure(
    frame,
    *,
    window: int | None = None,
    rate_window: int | None = None,
    max_points: int = MAX_POINTS,
    scale: float = 1.0,
    height: int = 360,
) -> go.Figure:
    """The rolling reward rate of each contestant (``frame.rate``, the mean reward over the
    last ``rate_window`` steps) over the steps in the window, on the seasons' bands.

    Traces: one line per contestant, in ``frame.labels`` order, the oracle grey dashed and
    named "oracle (knows the seasons)"; each line's last point is the frame's last step."""
    steps = frame.steps
    # once the window has scrolled, its first rate_window - 1 means cover fewer steps than
    # the others (the steps before the window are gone): they are not drawn
    first = rate_window - 1 if rate_window and len(steps) and steps[0] > 0 else 0
    idx = first + sample_index(max(len(steps) - first, 0), max_points)
    colors = policy_colors(frame.labels)
    traces = [
        dict(
            type="scatter",
            x=steps[idx],
            y=frame.rate[i, idx],
            mode="lines",
            name=_name(label),
            line=_line(label, colors[label], scale),
            hovertemplate=f"{_name(label)}: %{{y:.2f}}<extra></extra>",
        )
        for i, label in enumerate(frame.labels)
    ]
    shapes, notes = (
        bands(steps, frame.state, scale=scale, window=window) if len(steps) else ([], [])
    )
    per = f"mean of the last {rate_window} steps" if rate_window else "rolling mean"
    rate = frame.rate[:, first:]
    lo = min(0.0, float(np.floor(rate.min() * 4) / 4)) if rate.size else 0.0
    hi = max(1.0, float(np.ceil(rate.max() * 4) / 4)) if rate.size else 1.0
    layout = _layout(
        f"Reward per step ({per})",
        scale,
        height,
        shapes=shapes,
        annotations=notes,
        xaxis=dict(range=x_range(frame, window), showgrid=False),
        yaxis=dict(range=[lo - 0.05, hi + 0.05], zeroline=True, zerolinecolor=INK),
    )
    return go.Figure(data=traces, layout=layout)


def _segments(first: np.ndarray, last: np.ndarray, ids: np.ndarray, lane: str):
    """{id: (x, y)} of thick line segments, one per run of equal ``ids``, from the run's
    first ``first`` to its last ``last`` (None between segments: one SVG path per id), and
    the runs' (starts, stops) indices."""
    starts, stops = runs_of(ids)
    out: dict[int, tuple[list, list]] = {}
    for a, b in zip(starts.tolist(), stops.tolist()):
        xs, ys = out.setdefault(int(ids[a]), ([], []))
        xs += [float(first[a]) - 0.5, float(last[b - 1]) + 0.5, None]
        ys += [lane, lane, None]
    return out, starts, stops


def _lane(xs: list, ys: list, name: str, color: str, width: float, **kw) -> dict:
    """One thick line of a lane (its segments separated by None)."""
    return dict(
        type="scatter",
        x=xs,
        y=ys,
        mode="lines",
        name=name,
        **kw,
        hoverinfo="skip",
        line=dict(color=color, width=width),
    )


def _season_lane(frame, lane: str, lane_w: float, wide: float) -> tuple[list, list]:
    """(traces, notes) of the true season's lane: one line per season in its light
    colour; a note (a, b, lane, text) for each segment at least ``wide`` steps long."""
    traces = []
    segs, starts, stops = _segments(frame.steps, frame.steps, frame.state, lane)
    for s, (xs, ys) in sorted(segs.items()):
        traces.append(_lane(xs, ys, season_label(s), state_color(s), lane_w, showlegend=False))
    notes = [
        (frame.steps[a], frame.steps[b - 1], lane, season_label(frame.state[a]))
        for a, b in zip(starts.tolist(), stops.tolist())
        if frame.steps[b - 1] - frame.steps[a] >= wide
    ]
    return traces, notes


def _top_weight_lane(frame, lane: str, lane_w: float, wide: float, min_w: float, scale: float):
    """(traces, notes) of the lane of who holds the top weight: one line per bandit, the
    shadow last (on top) with white dots over its pink, its segments at least ``min_w``
    steps wide; a note for each segment at least ``wide`` steps long."""
    # a batch's holder holds it from the step after the previous batch's end
    first = np.r_[frame.top_step[0], frame.top_step[:-1] + 1]
    segs, starts, stops = _segments(first, frame.top_step, frame.top_bandit, lane)
    # the shadow holds the weight for a few steps after a new season (then a bandit is
    # spawned from it): its segments are drawn at least SHADOW_MIN_SHARE of the window
    # wide, on top, so the room sees the moment (the other lanes are to scale)
    if 0 in segs:
        xs = segs[0][0]
        for i in range(0, len(xs), 3):
            xs[i + 1] = max(xs[i + 1], xs[i] + min_w)
    traces = []
    for bid in sorted(segs, key=lambda b: (b == 0, b)):  # the shadow last: on top
        xs, ys = segs[bid]
        traces.append(_lane(xs, ys, bandit_label(bid), bandit_color(bid), lane_w))
        if bid == 0:  # not colour alone: white dots over the shadow's pink
            traces.append(
                dict(
                    type="scatter",
                    x=xs,
                    y=ys,
                    mode="lines",
                    showlegend=False,
                    hoverinfo="skip",
                    name="shadow (dots)",
                    line=dict(color="white", width=3 * scale, dash="dot"),
                )
            )
    notes = [
        (first[a], frame.top_step[b - 1], lane, bandit_label(frame.top_bandit[a]))
        for a, b in zip(starts.tolist(), stops.tolist())
        if frame.top_step[b - 1] - first[a] >= wide
    ]
    return traces, notes


def _lane_names(notes: list, scale: float) -> list[dict]:
    """The segments' names, written in place on a light box."""
    return [
        dict(
            x=(float(a) + float(b)) / 2,
            y=lane,
            xref="x",
            yref="y",
            text=text,
            showarrow=False,
            font=dict(size=round(13 * scale), color="#111111"),
            bgcolor="rgba(255,255,255,0.75)",
        )
        for a, b, lane, text in notes
    ]


def ribbon_figure(
    frame, *, window: int | None = None, scale: float = 1.0, height: int = 190
) -> go.Figure:
    """Two lanes over the steps in the window: the true season (its light colour, "season
    k"), and which bandit of the featured All-Season held the top weight after each batch
    (colour by bandit id, stable across the show; the shadow pink with white dots,
    "shadow", drawn at least ``SHADOW_MIN_SHARE`` of the window wide). Segments wider than
    an eighth of the window are named in place (a bandit
    with its top weight at the segment's end).

    Parameters
    ----------
    frame : LiveFrame
        The show's state (``api.LiveRun.frame()``).
    window : int, optional
        Steps shown (default: the frame's).
    scale : float, default 1.0
        Text and line size (presenter mode: larger).
    height : int, default 190
        The figure's height in pixels.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    lane_w = 20 * scale
    season, top = "season", "top weight"
    n = max(window or len(frame.steps), 1)
    wide = n / 8  # steps a segment needs to be named
    traces, notes = _season_lane(frame, season, lane_w, wide)
    if frame.featured is not None and len(frame.top_step):
        more, more_notes = _top_weight_lane(frame, top, lane_w, wide, n * SHADOW_MIN_SHARE, scale)
        traces += more
        notes += more_notes
        title = f"Who holds the top weight in {policy_name(frame.featured)}"
    else:
        title = "The true season (no All-Season among the contestants)"
    layout = _layout(
        title,
        scale,
        height,
        annotations=_lane_names(notes, scale),
        hovermode=False,
        xaxis=dict(range=x_range(frame, window), showgrid=False),
        yaxis=dict(
            categoryorder="array",
            categoryarray=[top, season],
            showgrid=False,
            fixedrange=True,
            range=[-0.6, 1.6],
        ),
    )
    return go.Figure(data=traces, layout=layout)


def since_switch_figure(
    frame, *, max_points: int = MAX_POINTS, scale: float = 1.0, height: int = 360
) -> go.Figure:
    """Each contestant's cumulative regret since the last switch (``frame.since_switch``,
    raised by what the steps that left the window added), against the steps since the switch; its
    name and value (``frame.regret_since_switch``)
    written at the line's end. A line that turns flat has found the best arms again: the
    first to flatten recovered first. The oracle grey dashed."""
    m = frame.since_switch.shape[1]
    colors = policy_colors(frame.labels)
    since = frame.t - frame.switch_step  # steps since the switch (some may be out of window)
    x = np.arange(since - m, since) + 1
    idx = sample_index(m, max_points)
    traces, ends = [], []
    for i, label in enumerate(frame.labels):
        # the curve in the window, raised by the regret of the steps since the switch that
        # have left the window: it ends at regret_since_switch
        y = frame.since_switch[i, idx] + (
            frame.regret_since_switch[i] - (frame.since_switch[i, -1] if m else 0.0)
        )
        traces.append(
            dict(
                type="scatter",
                x=x[idx],
                y=y,
                mode="lines",
                name=_name(label),
                showlegend=False,
                line=_line(label, colors[label], scale),
                hovertemplate=f"{_name(label)}: %{{y:.1f}}<extra></extra>",
            )
        )
        ends.append((float(frame.regret_since_switch[i]), label))
    # the names at the lines' ends, spread so that they do not overlap
    top = max([v for v, _ in ends] + [1.0])
    gap = top * 0.12 * scale
    notes: list[dict] = []
    placed: list[float] = []  # the names' heights so far
    for v, label in sorted(ends):
        y = max(v, placed[-1] + gap) if placed else v
        placed.append(y)
        notes.append(
            dict(
                x=max(since, 1) * 1.02,
                y=y,
                xref="x",
                yref="y",
                xanchor="left",
                text=f"{'oracle' if is_reference(label) else _name(label)}  {v:,.0f}",
                showarrow=False,
                font=dict(
                    size=round(12 * scale), color=INK if is_reference(label) else colors[label]
                ),
            )
        )
    when = f"the switch at step {frame.switch_step:,}" if frame.switch_step else "the start"
    # room at the right for the names (about 27 characters)
    layout = _layout(
        "Regret since the switch (flat = recovered)",
        scale,
        height,
        annotations=notes,
        hovermode="x unified",
        xaxis=dict(
            range=[0, max(since, 10) * 2.1], showgrid=False, title=dict(text=f"steps since {when}")
        ),
        yaxis=dict(range=[0, max([top] + placed) * 1.12]),
    )
    layout["margin"].update(r=10, b=round(54 * scale))
    return go.Figure(data=traces, layout=layout)


# --- the legends, as HTML -------------------------------------------------------------------
def contestants_key(labels, *, scale: float = 1.0) -> str:
    """The legend of :func:`rate_figure` and :func:`since_switch_figure` (HTML): each
    contestant's line (colour, dash and width, as drawn) and name, in ``labels`` order."""
    colors = policy_colors(labels)
    return key_html(
        [(swatch(_line(lab, colors[lab], scale), scale=scale), _name(lab)) for lab in labels],
        "contestants",
        indent=round(90 * scale),
        scale=scale,
    )


def bandits_key(frame, *, scale: float = 1.0) -> str:
    """The legend of :func:`ribbon_figure` (HTML): the bandits that hold the top weight in
    the window, by id, the shadow last (pink, dotted white)."""
    ids = sorted(set(np.asarray(frame.top_bandit).tolist()), key=lambda b: (b == 0, b))
    items = []
    for bid in ids:
        line = dict(color=bandit_color(bid), width=10 * scale)
        # the shadow: white dots over the pink, as on the ribbon
        dots = dict(color="white", width=3 * scale, dash="dot") if bid == 0 else None
        items.append((swatch(line, scale=scale, over=dots), bandit_label(bid)))
    return key_html(items, "bandits", indent=round(90 * scale), scale=scale)


__all__ = [
    "rate_figure",
    "ribbon_figure",
    "since_switch_figure",
    "contestants_key",
    "bandits_key",
    "bands",
    "season_label",
    "runs_of",
    "x_range",
    "MAX_POINTS",
]
