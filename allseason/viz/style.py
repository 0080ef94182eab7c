"""Colours, names and the base layout shared by every figure.

Colours are keyed by *identity*, never by order of appearance, so the same policy, bandit or
state has the same colour in every figure, every run and every page:

- states: a light qualitative palette (usable as background bands), and a strong twin of it
  for markers (``state_color(s, strong=True)``);
- policies: All-Season variants strong colours, baselines softer ones, ``random`` grey;
  unknown labels get a colour from a hash of the label;
- bandits: the shadow (id 0) always magenta; base bandits cycle through a palette by id.

The palettes derive from Okabe & Ito's colour-blind-safe set and ColorBrewer.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go

# -- states ------------------------------------------------------------------------------------
# light (ColorBrewer Pastel1/Set3-like) for bands; strong twins for markers and text
_STATE_LIGHT = ("#9ecae1", "#fdd0a2", "#a1d99b", "#d4b9da", "#fdae6b", "#c7e9c0", "#fcbba1",
                "#dadaeb", "#ffffb2", "#c6dbef", "#f2c2a0", "#bcbddc")
_STATE_STRONG = ("#2171b5", "#d94801", "#238b45", "#88419d", "#a63603", "#41ab5d", "#cb181d",
                 "#6a51a3", "#b8a000", "#4292c6", "#a0522d", "#54278f")


def state_color(state: int, strong: bool = False) -> str:
    """Colour of a true state: light (for background bands) or ``strong`` (markers, text)."""
    palette = _STATE_STRONG if strong else _STATE_LIGHT
    return palette[int(state) % len(palette)]


def state_label(state: int) -> str:
    return f"state {int(state)}"


# -- policies ----------------------------------------------------------------------------------
POLICY_NAMES: dict[str, str] = {
    "allseason-sw": "All-Season (SW)",
    "allseason-disc": "All-Season (Disc)",
    "allseason-sw-printed": "All-Season (SW), printed rule",
    "lints": "LinTS",
    "sw-lints": "SW-LinTS",
    "d-lints": "D-LinTS",
    "random": "Random",
    "bob": "BoB",
    "denband": "DenBand",
    "dlinucb": "dLinUCB",
}

RANDOM_GREY = "#9e9e9e"
_POLICY_FIXED = {
    "allseason-sw": "#0072b2",    # strong blue
    "allseason-disc": "#d55e00",  # vermillion
    "allseason-sw-printed": "#08306b",  # dark navy, dashed: the same algorithm, printed rule
    "lints": "#009e73",           # bluish green
    "sw-lints": "#e69f00",        # orange
    "d-lints": "#8c6bb1",         # purple
    "bob": "#56b4e9",             # sky blue
    "denband": "#a6761d",         # ochre
    "dlinucb": "#cc79a7",         # reddish purple
    "random": RANDOM_GREY,
}
_ALLSEASON_EXTRA = ("#4a1486", "#a50f15", "#3f007d", "#00441b")  # strong, for custom labels
_OTHER_EXTRA = ("#17becf", "#bcbd22", "#e377c2", "#8c564b", "#1b9e77", "#7570b3",
                "#66a61e", "#e7298a")


def policy_name(label: str) -> str:
    """Human name of a policy label; unknown labels pass through unchanged."""
    return POLICY_NAMES.get(label, label)


def is_allseason(label: str) -> bool:
    return str(label).lower().startswith("allseason") or str(label).startswith("All-Season")


def policy_colors(labels: Iterable[str]) -> dict[str, str]:
    """Colour of each policy label, stable across calls: known names have a fixed colour,
    other labels one picked by a hash of the label (probing past colours already taken)."""
    labels = list(dict.fromkeys(labels))
    out = {lab: _POLICY_FIXED[lab] for lab in labels if lab in _POLICY_FIXED}
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


def policy_line(label: str) -> dict:
    """Line style: All-Season thick and solid (its printed rule dashed), baselines thinner,
    random dotted."""
    if "printed" in str(label):
        return dict(width=3, dash="dash")
    if is_allseason(label):
        return dict(width=3)
    if str(label).lower().startswith("random"):
        return dict(width=2, dash="dot")
    return dict(width=2)


# -- bandits -----------------------------------------------------------------------------------
SHADOW = 0
SHADOW_COLOR = "#e7298a"  # pink/magenta, as in the paper's figure 2
# base bandits: 19 colours (a prime count, so ids that recur with a regular stride -- as
# spawns do -- rarely share a colour), none pink/magenta (the shadow's) nor grey ("others")
_BANDIT_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                   "#17becf", "#bcbd22", "#393b79", "#637939", "#1b9e77", "#e6550d",
                   "#6baed6", "#843c39", "#31a354", "#756bb1", "#fdae6b", "#5254a3",
                   "#b5cf6b")
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
    cmin=0, cmax=len(_BANDIT_CODES) - 1, showscale=False)


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
FONT = dict(family="Inter, Segoe UI, Helvetica, Arial, sans-serif", size=14, color="#222")


def base_layout(title: str = "", xaxis_title: str | None = None,
                yaxis_title: str | None = None, *, subtitle: str | None = None,
                height: int = 440, **overrides) -> dict:
    """Keyword arguments for ``fig.update_layout``: white template, large readable font, a
    title (with an optional one-line subtitle), axis titles, a legend on the right."""
    title_dict = dict(text=title, x=0.0, xanchor="left", y=0.98, yanchor="top",
                      font=dict(size=18))
    if subtitle:
        title_dict["subtitle"] = dict(text=subtitle, font=dict(size=13, color="#555"))
    top = 90 if subtitle else 60
    layout = dict(
        template="plotly_white", font=FONT, height=height, title=title_dict,
        margin=dict(l=70, r=30, t=top, b=60),
        legend=dict(orientation="v", yanchor="top", y=1.0, xanchor="left", x=1.01,
                    traceorder="grouped", tracegroupgap=8, font=dict(size=13)),
        hoverlabel=dict(font_size=13), separators=".,",
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
    fig.add_annotation(text=message, x=0.5, y=0.5, xref="paper", yref="paper",
                       showarrow=False, font=dict(size=15, color="#555"))
    return fig


__all__ = ["state_color", "state_label", "policy_colors", "policy_name", "policy_line",
           "bandit_color", "bandit_colors", "bandit_color_code", "BANDIT_COLOR_SCALE",
           "bandit_label", "POLICY_NAMES", "SHADOW",
           "SHADOW_COLOR", "RANDOM_GREY", "base_layout", "empty_figure", "is_allseason"]
