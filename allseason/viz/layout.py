"""The layout every figure shares, and legends drawn as HTML keys.

Figures follow the app's theme (light or dark): ``st.plotly_chart``'s Streamlit theme sets the
background, grid and text colours in the browser, so the layout names no text colour, and
every neutral mark (error bars, zero lines, ticks, change points) is :data:`INK`, a mid grey
that reads on white and on the dark theme's near-black (tests/viz/test_accessibility.py).

A figure redrawn often, or narrow beside another, shows its legend as an HTML key under it
(:func:`key_html`, one :func:`swatch` per entry): a Plotly legend pushes the figure's margins, which
lays the figure out a second time (see :mod:`allseason.viz.live`), and in a narrow column it
takes the plot's height.
"""

from __future__ import annotations

from html import escape

import plotly.graph_objects as go

# -- layout ------------------------------------------------------------------------------------
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=14)
INK = "#8a8f98"
# the legend: in rows at the bottom of the figure, left-aligned, so it wraps to the width of
# the screen (a legend at the right takes the plot's width on a phone); measured from the
# container, so it never covers the x axis title and the bottom margin grows to hold it
LEGEND_BELOW = dict(
    orientation="h",
    xanchor="left",
    x=0.0,
    yref="container",
    yanchor="bottom",
    y=0.0,
    traceorder="grouped",
    tracegroupgap=8,
    font=dict(size=13),
)
# for animations, whose play button and slider sit under the plot: a short legend at the right
LEGEND_RIGHT = dict(
    orientation="v",
    yanchor="top",
    y=1.0,
    xanchor="left",
    x=1.01,
    traceorder="grouped",
    tracegroupgap=8,
    font=dict(size=13),
)


def base_layout(
    title: str = "",
    xaxis_title: str | None = None,
    yaxis_title: str | None = None,
    *,
    subtitle: str | None = None,
    height: int = 440,
    **overrides,
) -> dict:
    """Keyword arguments for ``fig.update_layout``: white template (replaced by the app's
    theme in the app), large readable font, a title (with an optional one-line subtitle),
    axis titles, the legend in rows under the plot."""
    title_dict = dict(text=title, x=0.0, xanchor="left", y=0.98, yanchor="top", font=dict(size=18))
    if subtitle:
        title_dict["subtitle"] = dict(text=subtitle, font=dict(size=13))
    top = 90 if subtitle else 60
    layout = dict(
        template="plotly_white",
        font=FONT,
        height=height,
        title=title_dict,
        margin=dict(l=70, r=30, t=top, b=60),
        legend=dict(LEGEND_BELOW),
        hoverlabel=dict(font_size=13),
        separators=".,",
    )
    if xaxis_title is not None:
        layout["xaxis_title"] = xaxis_title
    if yaxis_title is not None:
        layout["yaxis_title"] = yaxis_title
    layout.update(overrides)
    return layout


def empty_figure(message: str, title: str = "", height: int = 300) -> go.Figure:
    """A figure that says why there is nothing to draw (instead of raising in the app)."""
    fig = go.Figure()
    fig.update_layout(**base_layout(title, height=height))
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    fig.add_annotation(
        text=message, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, font=dict(size=15)
    )
    return fig


# -- legends as HTML ---------------------------------------------------------------------------
# a figure redrawn often, or narrow beside another, shows its legend as an HTML key under it:
# a Plotly legend pushes the figure's margins, which lays the figure out a second time (see
# allseason.viz.live), and in a narrow column it takes the plot's height
def dasharray(dash: str, width: float) -> str:
    """SVG ``stroke-dasharray`` of a Plotly dash (a name, or a list of lengths such as
    "5px,3px") at a line width, as plotly.js draws it (``Drawing.dashStyle``: the named
    dashes in multiples of the width, at least 3 px)."""
    w = max(float(width), 3.0)
    named = {
        "solid": "",
        "dot": f"{w:g},{w:g}",
        "dash": f"{3 * w:g},{3 * w:g}",
        "longdash": f"{5 * w:g},{5 * w:g}",
        "dashdot": f"{3 * w:g},{w:g},{w:g},{w:g}",
        "longdashdot": f"{5 * w:g},{2 * w:g},{w:g},{2 * w:g}",
    }
    return named.get(dash, str(dash).replace("px", "").replace(" ", ""))


# marker symbols as SVG paths in a 10x10 box centred on (0, 0); any other symbol: a circle
_SYMBOL_PATHS = {
    "square": "M-4,-4H4V4H-4Z",
    "diamond": "M0,-5L5,0L0,5L-5,0Z",
    "triangle-up": "M0,-5L5,4H-5Z",
    "triangle-down": "M0,5L5,-4H-5Z",
    "x": "M-4,-2.5L-2.5,-4L0,-1.5L2.5,-4L4,-2.5L1.5,0L4,2.5L2.5,4L0,1.5L-2.5,4L-4,2.5L-1.5,0Z",
    "cross": "M-1.5,-5H1.5V-1.5H5V1.5H1.5V5H-1.5V1.5H-5V-1.5H-1.5Z",
}


def _symbol_svg(symbol: str, color: str, x: float, y: float, size: float) -> str:
    path = _SYMBOL_PATHS.get(str(symbol))
    k = size / 10
    body = (
        f'<circle r="4.5" fill="{color}"/>'
        if path is None
        else f'<path d="{path}" fill="{color}"/>'
    )
    return (
        f'<g transform="translate({x:g},{y:g}) scale({k:g})" stroke="white" '
        f'stroke-width="1">{body}</g>'
    )


def swatch(
    line: dict | None,
    *,
    symbol: str | None = None,
    color: str | None = None,
    scale: float = 1.0,
    over: dict | None = None,
) -> str:
    """A small SVG of a trace's look for a key: its ``line`` (Plotly's dict: color, width,
    dash), a marker ``symbol`` in the middle, and an ``over`` line drawn on top (the
    shadow's white dots)."""
    w, h = round(34 * scale), round(14 * scale)
    parts = []
    for spec in (line, over):
        if spec:
            width = float(spec.get("width", 2))
            parts.append(
                f'<line x1="1" x2="{w - 1}" y1="{h / 2:g}" y2="{h / 2:g}" '
                f'stroke="{spec["color"]}" stroke-width="{width:g}" '
                f'stroke-dasharray="{dasharray(spec.get("dash", "solid"), width)}"/>'
            )
    if symbol is not None:
        parts.append(
            _symbol_svg(symbol, color or (line or {}).get("color", INK), w / 2, h / 2, 9 * scale)
        )
    return f'<svg width="{w}" height="{h}" aria-hidden="true">{"".join(parts)}</svg>'


def key_html(
    items, label: str, *, indent: int = 0, scale: float = 1.0, title: str | None = None
) -> str:
    """An HTML key (a legend): ``items`` (swatch SVG, name) in a row that wraps, from
    ``indent`` px (the plot's left edge), text scaled; names are text, never HTML."""
    head = f'<span style="opacity: 0.75">{escape(title)}</span>' if title else ""
    entries = "".join(
        f'<span role="listitem" style="display: inline-flex; align-items: '
        f'center; gap: 0.35rem; white-space: nowrap">{svg}{escape(text)}</span>'
        for svg, text in items
    )
    return (
        f'<div class="fig-key" role="list" aria-label="{escape(label)}" style="'
        f"display: flex; flex-wrap: wrap; align-items: center; gap: 0.15rem 1rem; "
        f'margin: -0.6rem 0 0.4rem {indent}px; font-size: {0.85 * scale:.2f}rem">'
        f"{head}{entries}</div>"
    )


__all__ = [
    "FONT",
    "INK",
    "LEGEND_BELOW",
    "LEGEND_RIGHT",
    "base_layout",
    "empty_figure",
    "dasharray",
    "swatch",
    "key_html",
]
