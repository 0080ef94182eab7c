"""Colours, names and the base layout shared by every figure.

Colours are keyed by *identity*, never by order of appearance, so the same policy, bandit or
state has the same colour in every figure, every run and every page:

- states: a light qualitative palette (usable as background bands), and a strong twin of it
  for markers (``state_color(s, strong=True)``);
- policies: what each registered policy's ``style`` declares, else the next free entry of
  the palette (Okabe-Ito first), dash and symbol lists; ``random`` grey; unregistered
  labels get a colour from a hash of the label;
- bandits: the shadow (id 0) always magenta; base bandits cycle through a palette by id.

The palettes derive from Okabe & Ito's colour-blind-safe set and ColorBrewer.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from html import escape

import numpy as np
import plotly.graph_objects as go

# -- states ----------------------------------------------------------------------------------
# light colours for bands: Paul Tol's "light" scheme, designed to stay apart under colour-vision
# deficiency (the bands are also labelled "state k" where wide enough); strong twins for
# markers and text
_STATE_LIGHT = (
    "#77aadd",
    "#ee8866",
    "#eedd88",
    "#ffaabb",
    "#99ddff",
    "#44bb99",
    "#bbcc33",
    "#aaaa00",
    "#dddddd",
    "#c5b0d5",
    "#f7b6d2",
    "#c49c94",
)
_STATE_STRONG = (
    "#336699",
    "#c4502e",
    "#9a8500",
    "#c45a76",
    "#2b8cbe",
    "#1f7a5c",
    "#7a8a10",
    "#6b6b00",
    "#666666",
    "#6a51a3",
    "#b0447a",
    "#8c564b",
)


STATE_COLORS = _STATE_LIGHT


def state_color(state: int, strong: bool = False) -> str:
    """Colour of a true state: light (for background bands) or ``strong`` (markers, text)."""
    palette = _STATE_STRONG if strong else _STATE_LIGHT
    return palette[int(state) % len(palette)]


def state_label(state: int) -> str:
    return f"state {int(state)}"


# -- policies ----------------------------------------------------------------------------------
# Okabe & Ito's colour-blind-safe set, by the names a policy's ``style`` may use; yellow is
# left out of the palette (too light on white)
OKABE_ITO = {
    "blue": "#0072b2",
    "vermillion": "#d55e00",
    "black": "#000000",
    "orange": "#e69f00",
    "sky blue": "#56b4e9",
    "bluish green": "#009e73",
    "reddish purple": "#cc79a7",
    "yellow": "#f0e442",
}
RANDOM_GREY = "#bbbbbb"
# other named colours a policy may prefer: Paul Tol's wine (stays apart from Okabe-Ito)
NAMED_COLORS = {**OKABE_ITO, "wine": "#882255", "grey": RANDOM_GREY}
# what a registered policy without a preference gets, first free entry first: Okabe-Ito (but
# black, which the dark theme hides, and yellow), then darker companions that stay apart
POLICY_PALETTE = (
    *(c for k, c in OKABE_ITO.items() if k not in ("black", "yellow")),
    "#8c6d1f",
    "#6a3d9a",
    "#17becf",
    "#bcbd22",
    "#8c564b",
    "#1b9e77",
    "#7570b3",
    "#66a61e",
)
DASHES = (
    "solid",
    "dash",
    "longdash",
    "dashdot",
    "longdashdot",
    "dot",
    "5px,3px,1px,3px",
    "10px,4px",
    "2px,2px",
    "8px,2px,2px,2px,2px,2px",
    "1px,4px",
)
SYMBOLS = (
    "circle",
    "diamond",
    "x",
    "square",
    "triangle-up",
    "triangle-down",
    "cross",
    "star",
    "pentagon",
    "hexagon",
    "star-triangle-up",
    "hourglass",
    "bowtie",
    "asterisk-open",
    "hash-open",
)
_EXTRA_SYMBOLS = SYMBOLS[-5:]  # unregistered labels: one of these, by a hash of the label
_ALLSEASON_EXTRA = ("#4a1486", "#a50f15", "#3f007d", "#00441b")  # strong, for custom labels
_OTHER_EXTRA = (
    "#17becf",
    "#bcbd22",
    "#e377c2",
    "#8c564b",
    "#1b9e77",
    "#7570b3",
    "#66a61e",
    "#e7298a",
)


def registered_styles() -> dict[str, dict[str, str]]:
    """{registry name: {"color", "dash", "symbol"}} for every registered policy: what its
    ``style`` declares (a colour by its Okabe-Ito name, or a hex code), the rest the first
    entries of :data:`POLICY_PALETTE`, :data:`DASHES` and :data:`SYMBOLS` that no policy
    declares or took before it, in registration order. The default race's choices keep its
    seven colours apart under colour-vision deficiency (tests/test_accessibility.py)."""
    from allseason.policies import REGISTRY

    pools = {"color": POLICY_PALETTE, "dash": DASHES, "symbol": SYMBOLS}
    out = {}
    for name, cls in REGISTRY.items():
        pref = dict(getattr(cls, "style", {}) or {})
        if "color" in pref:
            pref["color"] = NAMED_COLORS.get(pref["color"], pref["color"])
        out[name] = {k: v for k, v in pref.items() if k in pools}
    taken = {k: {st[k] for st in out.values() if k in st} for k in pools}
    for i, st in enumerate(out.values()):
        for key, pool in pools.items():
            if key not in st:
                free = [v for v in pool if v not in taken[key]]
                st[key] = free[0] if free else pool[i % len(pool)]
                taken[key].add(st[key])
    return out


def policy_name(label: str) -> str:
    """Human name of a policy label (a registered policy's ``title``); other labels pass
    through unchanged."""
    from allseason.policies import REGISTRY

    cls = REGISTRY.get(label) if isinstance(label, str) else None
    return (cls.title or label) if cls is not None else label


def is_allseason(label: str) -> bool:
    """True for a label of an All-Season policy: its declared family
    (:func:`allseason.policies.label_role`; a figure has only the label to go on)."""
    from allseason.policies import label_role

    r = label_role(label)
    return r is not None and r.family == "allseason"


def policy_colors(labels: Iterable[str]) -> dict[str, str]:
    """Colour of each policy label, stable across calls: registered names have theirs
    (:func:`registered_styles`), other labels one picked by a hash of the label (probing past
    colours already taken)."""
    labels = list(dict.fromkeys(labels))
    styles = registered_styles()
    out = {lab: styles[lab]["color"] for lab in labels if lab in styles}
    taken = set(out.values())
    for lab in sorted(lab for lab in labels if lab not in out):
        palette = _ALLSEASON_EXTRA if is_allseason(lab) else _OTHER_EXTRA
        if str(lab).lower().startswith("random"):
            out[lab] = RANDOM_GREY
            continue
        start = zlib.crc32(str(lab).encode())
        for i in range(len(palette)):
            c = palette[(start + i) % len(palette)]
            if c not in taken:
                break
        out[lab] = c
        taken.add(c)
    return {lab: out[lab] for lab in labels}


def _base_name(label: str, names: Iterable[str]) -> str:
    """The registry name a label starts with ("sw-lints-0.99" -> "sw-lints"), if any."""
    label = str(label)
    for name in sorted(names, key=len, reverse=True):
        if label == name or label.startswith(name + " ") or label.startswith(name + "-"):
            return name
    return label


def policy_line(label: str) -> dict:
    """Line style: All-Season thick, baselines thinner; each policy its own dash (the
    printed rule dashed, random dotted), so no distinction rests on colour alone."""
    styles = registered_styles()
    name = _base_name(label, styles)
    width = 3 if is_allseason(label) else 2
    if name in styles:
        return dict(width=width, dash=styles[name]["dash"])
    if "printed" in str(label):
        return dict(width=width, dash="dash")
    if str(label).lower().startswith("random"):
        return dict(width=width, dash="dot")
    return dict(width=width)


def policy_symbol(label: str) -> str:
    """Marker symbol of a policy: its registered one, else one picked by a hash."""
    styles = registered_styles()
    name = _base_name(label, styles)
    if name in styles:
        return styles[name]["symbol"]
    return _EXTRA_SYMBOLS[zlib.crc32(str(label).encode()) % len(_EXTRA_SYMBOLS)]


def policy_marker(label: str, color: str, n_shown: int = 10) -> dict:
    """Sparse markers along a policy's line (``maxdisplayed``): symbol and colour."""
    return dict(
        symbol=policy_symbol(label),
        size=8,
        color=color,
        maxdisplayed=n_shown,
        line=dict(width=1, color="white"),
    )


# -- bandits -----------------------------------------------------------------------------------
SHADOW = 0
SHADOW_COLOR = "#e7298a"  # pink/magenta, as in the paper's figure 2
# base bandits: 19 colours (a prime count, so ids that recur with a regular stride -- as
# spawns do -- rarely share a colour), none pink/magenta (the shadow's) nor grey ("others")
_BANDIT_PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#17becf",
    "#bcbd22",
    "#393b79",
    "#637939",
    "#1b9e77",
    "#e6550d",
    "#6baed6",
    "#843c39",
    "#31a354",
    "#756bb1",
    "#fdae6b",
    "#5254a3",
    "#b5cf6b",
)
SINGLE_MODEL_COLOR = "#444444"  # id -1: the one model of a non-ensemble policy


def bandit_color(bandit: int) -> str:
    """Colour of one bandit id (0 = shadow, -1 = the model of a single-model policy)."""
    bandit = int(bandit)
    if bandit == SHADOW:
        return SHADOW_COLOR
    if bandit < 0:
        return SINGLE_MODEL_COLOR
    return _BANDIT_PALETTE[(bandit - 1) % len(_BANDIT_PALETTE)]


# numeric colour codes, for marker colour arrays that must be cheap to build (animations):
# marker=dict(color=bandit_color_code(ids), **BANDIT_COLOR_SCALE) draws exactly bandit_color
_BANDIT_CODES = (SHADOW_COLOR,) + _BANDIT_PALETTE + (SINGLE_MODEL_COLOR,)
BANDIT_COLOR_SCALE = dict(
    colorscale=[[i / (len(_BANDIT_CODES) - 1), c] for i, c in enumerate(_BANDIT_CODES)],
    cmin=0,
    cmax=len(_BANDIT_CODES) - 1,
    showscale=False,
)


def bandit_color_code(ids) -> np.ndarray:
    """Index of each bandit's colour in ``BANDIT_COLOR_SCALE`` (float array)."""
    ids = np.asarray(ids, dtype=np.int64)
    code = (ids - 1) % len(_BANDIT_PALETTE) + 1
    code = np.where(ids == SHADOW, 0, code)
    return np.where(ids < 0, len(_BANDIT_CODES) - 1, code).astype(float)


def bandit_colors(ids: Iterable[int]) -> dict[int, str]:
    """Colour of each bandit id, a function of the id only (the shadow is always magenta)."""
    return {int(b): bandit_color(b) for b in ids}


def bandit_label(bandit: int) -> str:
    bandit = int(bandit)
    if bandit == SHADOW:
        return "shadow"
    if bandit < 0:
        return "single model"
    return f"bandit {bandit}"


# -- layout ------------------------------------------------------------------------------------
# Figures follow the app's theme (light or dark): ``st.plotly_chart``'s Streamlit theme sets the
# background, grid and text colours in the browser, so the layout names no text colour, and
# every neutral mark (error bars, zero lines, ticks, change points) is INK, a mid grey that
# reads on white and on the dark theme's near-black (tests/test_accessibility.py)
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
    "dasharray",
    "swatch",
    "key_html",
    "state_color",
    "state_label",
    "policy_colors",
    "policy_name",
    "policy_line",
    "policy_symbol",
    "policy_marker",
    "STATE_COLORS",
    "bandit_color",
    "bandit_colors",
    "bandit_color_code",
    "BANDIT_COLOR_SCALE",
    "bandit_label",
    "registered_styles",
    "OKABE_ITO",
    "SHADOW",
    "SHADOW_COLOR",
    "RANDOM_GREY",
    "INK",
    "LEGEND_BELOW",
    "LEGEND_RIGHT",
    "base_layout",
    "empty_figure",
    "is_allseason",
]
