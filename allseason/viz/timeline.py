"""The season pattern along the step axis, and the light state bands every time-axis figure
draws behind its traces.

Steps are 0-based; a segment covering steps ``a .. b-1`` is drawn over ``[a, b)``, so its
left edge is its change point (the first step of the new state).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from .layout import INK, base_layout
from .style import state_color, state_label

BAND_OPACITY = 0.45  # with Tol's light colours: bands stay apart under CVD (tests)
MAX_LANES = 8  # above this many states the timeline is a single row
MAX_STATE_LEGEND = 6  # above this many states the bands get no legend entries


def segment_bounds(pattern) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states, starts, stops) of the segments of a pattern, each shape (n_segments,)."""
    states = np.array([s for s, _ in pattern.segments], dtype=np.int64)
    lengths = np.array([n for _, n in pattern.segments], dtype=np.int64)
    stops = np.cumsum(lengths)
    return states, stops - lengths, stops


def _axis_refs(fig: go.Figure, row, col) -> list[tuple[str, str]]:
    """(xref, yref) of the subplots to decorate: the one at (row, col), every subplot of a
    grid when both are None, or the only axes of a plain figure."""
    if fig._grid_ref is None:
        return [("x", "y")]
    if row is None and col is None:
        cells = [(r + 1, c + 1) for r, line in enumerate(fig._grid_ref) for c, _ in enumerate(line)]
    else:
        cells = [(row or 1, col or 1)]
    refs = []
    for r, c in cells:
        sub = fig.get_subplot(r, c)
        if sub is None or not hasattr(sub, "xaxis"):
            continue
        refs.append(
            (sub.xaxis.plotly_name.replace("axis", ""), sub.yaxis.plotly_name.replace("axis", ""))
        )
    return refs


def _band_shapes(refs, states, starts, stops, y0, y1, opacity, ribbon) -> list[dict]:
    """A rectangle per segment in its state's light colour, on every subplot of ``refs``:
    full height below the traces, or an opaque ribbon from ``y0`` to ``y1`` above them."""
    shapes: list[dict] = []
    for xref, yref in refs:
        shapes.extend(
            dict(
                type="rect",
                xref=xref,
                yref=f"{yref} domain",
                x0=int(a),
                x1=int(b),
                y0=y0,
                y1=y1,
                fillcolor=state_color(s),
                opacity=opacity,
                layer="below" if ribbon is None else "above",
                line=dict(width=0),
            )
            for s, a, b in zip(states, starts, stops)
        )
    return shapes


def _ribbon_names(ref, states, starts, stops, y0, y1, horizon) -> list[dict] | None:
    """ "state k" written on the ribbon's wide enough segments (None: too many to write)."""
    xref, yref = ref
    wide = (stops - starts) >= horizon / 40
    if wide.sum() > 60:
        return None
    return [
        dict(
            x=(a + b) / 2,
            y=(y0 + y1) / 2,
            xref=xref,
            yref=f"{yref} domain",
            text=state_label(s),
            showarrow=False,
            font=dict(size=11),
        )
        for s, a, b in zip(states[wide], starts[wide], stops[wide])
    ]


def _band_numbers(refs, states, starts, stops, numbers, horizon) -> list[dict] | None:
    """Each wide band's state number, at the bottom of the plot or just above it, on every
    subplot of ``refs`` (None: too many bands to number)."""
    wide = (stops - starts) >= horizon / 30
    if wide.sum() > 40:
        return None
    y = 0.0 if numbers == "bottom" else 1.0
    notes: list[dict] = []
    for xref, yref in refs:
        notes.extend(
            dict(
                x=(a + b) / 2,
                y=y,
                xref=xref,
                yref=f"{yref} domain",
                yanchor="bottom",
                text=str(int(s)),
                showarrow=False,
                font=dict(size=10, color=state_color(s, strong=True)),
            )
            for s, a, b in zip(states[wide], starts[wide], stops[wide])
        )
    return notes


def _state_legend(ref, states) -> list[dict]:
    """A legend entry per state present (a square, no data), under "true state:"; none
    above ``MAX_STATE_LEGEND`` states."""
    xref, yref = ref
    present = sorted(set(states.tolist()))
    if len(present) > MAX_STATE_LEGEND:
        return []
    return [
        dict(
            type="scatter",
            x=[None],
            y=[None],
            mode="markers",
            name=state_label(s),
            xaxis=xref,
            yaxis=yref,
            hoverinfo="skip",
            legendgroup="seasons",
            legendgrouptitle=dict(text="true state:") if i == 0 else None,
            marker=dict(
                symbol="square",
                size=14,
                color=state_color(s),
                line=dict(width=1, color=state_color(s, strong=True)),
            ),
        )
        for i, s in enumerate(present)
    ]


def add_season_bands(
    fig: go.Figure,
    pattern,
    row=None,
    col=None,
    *,
    legend: bool = True,
    opacity: float = BAND_OPACITY,
    ribbon: tuple[float, float] | None = None,
    numbers: str | None = "bottom",
) -> go.Figure:
    """Shade each segment of ``pattern`` in its state's light colour, below the traces.

    row/col: one subplot of a ``make_subplots`` figure; both None = every subplot (or the
    plain axes). legend: add one legend entry per state ("state 0", ...; none above 6
    states), grouped under "true state:". ribbon: (y0, y1) in fractions of the plot height
    to draw the states as an opaque strip there instead of full-height bands (for figures
    whose traces fill the plot, e.g. a stacked area), labelled "state k" in place of the
    legend. Without a ribbon each band wide enough carries its state's number, so the state
    never rests on colour alone: ``numbers`` "bottom" (inside the plot), "top" (just above
    it) or None. Returns ``fig`` (modified in place).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The figure to decorate (changed in place).
    pattern : Pattern
        The season pattern.
    row, col : int, optional
        One subplot of a ``make_subplots`` figure (both None: every subplot).
    legend : bool, default True
        Whether to add a legend entry per state.
    opacity : float, default BAND_OPACITY
        The bands' opacity (a ribbon is opaque).
    ribbon : tuple of float, optional
        (y0, y1): draw the states as a strip there, in fractions of the plot's height.
    numbers : {"bottom", "top", None}, default "bottom"
        Where each wide band writes its state's number (no ribbon only).

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig``.
    """
    y0, y1 = ribbon if ribbon is not None else (0, 1)
    if ribbon is not None:
        opacity = 1.0
    states, starts, stops = segment_bounds(pattern)
    refs = _axis_refs(fig, row, col)
    shapes = list(fig.layout.shapes or ())
    shapes += _band_shapes(refs, states, starts, stops, y0, y1, opacity, ribbon)
    notes = None  # the annotations, if any are added
    if ribbon is not None and refs:  # the ribbon names its states (wide enough segments)
        names = _ribbon_names(refs[0], states, starts, stops, y0, y1, pattern.horizon)
        if names is not None:
            notes = list(fig.layout.annotations or ()) + names
            legend = False
    if ribbon is None and numbers and refs:  # each wide band names its state
        numbered = _band_numbers(refs, states, starts, stops, numbers, pattern.horizon)
        if numbered is not None:
            notes = list(fig.layout.annotations or ()) + numbered
    # one layout update and one add_traces: plotly validates on every call
    fig.update_layout(shapes=shapes, **({} if notes is None else {"annotations": notes}))
    if legend and refs:
        entries = _state_legend(refs[0], states)
        if entries:
            fig.add_traces(entries)
    return fig


def name_states(fig: go.Figure, names) -> go.Figure:
    """Call the states of a figure by their names (``names[k]`` for state k, e.g. a reward
    table's "coat best" or the weather regimes): the legend entries, the ribbon's labels and
    the legend group's title ("true state:" becomes "season:"). Returns ``fig`` (modified).

        >>> from allseason.envs import Pattern
        >>> fig = add_season_bands(go.Figure(), Pattern(((0, 5), (1, 5))))
        >>> [t.name for t in name_states(fig, ["dry", "wet"]).data]
        ['0: dry', '1: wet']
    """
    if not names:
        return fig
    label = {state_label(k): f"{k}: {n}" for k, n in enumerate(names)}
    for t in fig.data:
        if t.name in label:
            t.name = label[t.name]
        if t.legendgrouptitle and t.legendgrouptitle.text == "true state:":
            t.legendgrouptitle.text = "season:"
    for a in fig.layout.annotations or ():
        if a.text in label:
            a.text = label[a.text]
    return fig


def pattern_timeline(pattern, height: int = 160) -> go.Figure:
    """The season pattern: one lane per state ("state 0", "state 1", ...; a single row above
    8 states), a coloured bar per segment, and the change points as vertical lines --
    solid grey with a down-triangle where a state appears for the first time, dotted grey
    with a circle where a state returns."""
    states, starts, stops = segment_bounds(pattern)
    n_states = int(states.max()) + 1
    lanes = n_states <= MAX_LANES
    fig = go.Figure()
    for s in sorted(set(states.tolist())):
        m = states == s
        y = np.full(m.sum(), s if lanes else 0)
        fig.add_trace(
            dict(
                type="bar",
                orientation="h",
                base=starts[m],
                x=stops[m] - starts[m],
                y=y,
                width=0.8,
                name=state_label(s),
                showlegend=False,
                marker=dict(color=state_color(s), line=dict(width=1, color=state_color(s, True))),
                text=None if lanes else [str(s)] * int(m.sum()),
                textposition="inside",
                insidetextanchor="middle",
                customdata=np.stack([starts[m], stops[m] - 1, stops[m] - starts[m]], axis=1),
                hovertemplate=(
                    f"<b>{state_label(s)}</b><br>steps %{{customdata[0]:,}}"
                    "–%{customdata[1]:,}<br>%{customdata[2]:,} steps<extra></extra>"
                ),
            )
        )
    bottom = (n_states - 0.5) if lanes else 0.5
    top = -0.5  # the y axis is reversed: state 0 on top, markers above the first lane
    add_change_points(fig, pattern, y=top, base=bottom, width=2.0)
    fig.update_layout(
        **base_layout(
            "Season pattern: the true state at each step",
            "step",
            None,
            height=height,
            bargap=0.2,
            barmode="overlay",
            margin=dict(l=70, r=20, t=36, b=40),
        )
    )
    fig.update_layout(
        title=dict(font=dict(size=15)), legend=dict(font=dict(size=12), tracegroupgap=2)
    )
    fig.update_xaxes(range=[0, pattern.horizon], showgrid=False, ticks="outside")
    if lanes:
        fig.update_yaxes(
            tickvals=list(range(n_states)),
            ticktext=[state_label(s) for s in range(n_states)],
            range=[n_states - 0.4, -0.6],
            showgrid=False,
            fixedrange=True,
        )
    else:
        fig.update_yaxes(visible=False, range=[0.6, -0.6], fixedrange=True)
    return fig


def add_change_points(
    fig: go.Figure, pattern, y: float = 1.0, base: float = 0.0, width: float = 1.5
) -> go.Figure:
    """Mark the change points of ``pattern``: a vertical line each from ``base`` to ``y`` in
    data coordinates (solid grey where a state appears for the first time, dotted grey where
    one returns) and a marker at ``y`` (▼ new, ○ return) whose hover names the state."""
    cps, new = pattern.change_points(), pattern.first_seen()
    states, _, _ = segment_bounds(pattern)
    for is_new in (True, False):
        sel = np.flatnonzero(new == is_new)
        if not len(sel):
            continue
        xs = cps[sel]
        color = INK
        name = "change point: new state" if is_new else "change point: return"
        fig.add_trace(
            dict(
                type="scatter",
                mode="lines",
                hoverinfo="skip",
                showlegend=False,
                x=np.column_stack([xs, xs, np.full(len(xs), np.nan)]).ravel(),
                y=np.tile([base, y, np.nan], len(xs)),
                legendgroup=name,
                name=name,
                line=dict(
                    color=color,
                    width=width if is_new else width - 0.5,
                    dash="solid" if is_new else "dot",
                ),
            )
        )
        verb = "first visit of" if is_new else "back to"
        fig.add_trace(
            dict(
                type="scatter",
                x=xs,
                y=np.full(len(xs), y),
                mode="markers",
                name=name,
                legendgroup=name,
                cliponaxis=False,
                marker=dict(
                    symbol="triangle-down" if is_new else "circle-open",
                    size=11,
                    color=color,
                    line=dict(width=2, color=color),
                ),
                customdata=np.stack([states[sel + 1], sel + 1], axis=1),
                hovertemplate=(
                    f"change point %{{customdata[1]}} at step %{{x:,}}<br>{verb} "
                    "state %{customdata[0]}<extra></extra>"
                ),
            )
        )
    return fig


__all__ = [
    "pattern_timeline",
    "add_season_bands",
    "add_change_points",
    "segment_bounds",
    "name_states",
]


def date_ticks(fig: go.Figure, dates, every_months: int = 3, row=None, col=None) -> go.Figure:
    """Label a step axis with real dates: ``dates`` is the date of each step (numpy
    datetime64, e.g. ``api.step_dates(scenario)``); a tick at the first step of every
    ``every_months``-th month (January labelled with its year). The steps stay the x values,
    so the season bands and change points are untouched; the axis title says "date"."""
    d = np.asarray(dates).astype("datetime64[D]")
    months = d.astype("datetime64[M]")
    first = np.flatnonzero(np.r_[True, months[1:] != months[:-1]])
    month_no = months[first].astype(int) % 12  # 0 = January
    keep = first[month_no % every_months == 0]
    text = [
        (
            f"{str(months[i])[:4]}"
            if months[i].astype(int) % 12 == 0
            else [
                "Jan",
                "Feb",
                "Mar",
                "Apr",
                "May",
                "Jun",
                "Jul",
                "Aug",
                "Sep",
                "Oct",
                "Nov",
                "Dec",
            ][months[i].astype(int) % 12]
        )
        for i in keep
    ]
    refs = _axis_refs(fig, row, col)
    for xref, _ in refs:
        name = "xaxis" if xref == "x" else f"xaxis{xref[1:]}"
        fig.layout[name].update(
            tickmode="array", tickvals=keep.tolist(), ticktext=text, title_text="date"
        )
    return fig
