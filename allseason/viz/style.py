"""Colours and names shared by every figure (the base layout and the HTML keys are in
:mod:`allseason.viz.layout`, and importable from here too).

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

import numpy as np

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
    """A state's name in figures."""
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
    seven colours apart under colour-vision deficiency (tests/viz/test_accessibility.py)."""
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
    (:func:`allseason.policies.label_role`: the label looked up, not parsed)."""
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
    """A bandit's name in figures (the shadow has its own)."""
    bandit = int(bandit)
    if bandit == SHADOW:
        return "shadow"
    if bandit < 0:
        return "single model"
    return f"bandit {bandit}"


__all__ = [
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
    "is_allseason",
]
