"""Figures everyone can read: colours that stay apart under colour-vision deficiency, and
distinctions that never rest on colour alone.

Colour-vision deficiency is simulated with colorspacious (Machado, Oliveira & Fernandes 2009,
severity 100) and distances are Delta E in CAM02-UCS (about 1 is a just-noticeable
difference). ``python tests/test_accessibility.py`` prints the minimum distances.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

colorspacious = pytest.importorskip("colorspacious")

from allseason import api  # noqa: E402
from allseason.viz import style  # noqa: E402
from allseason.viz.timeline import BAND_OPACITY  # noqa: E402

KINDS = (None, "deuteranomaly", "protanomaly")
MIN_POLICY_DE = 12.0  # between line colours of the default race
MIN_STATE_DE = 8.0    # between background bands as drawn (over white, at BAND_OPACITY)


def rgb(hex_colour: str) -> np.ndarray:
    h = hex_colour.lstrip("#")
    return np.array([int(h[i:i + 2], 16) for i in (0, 2, 4)]) / 255


def seen(colour: np.ndarray, kind) -> np.ndarray:
    if kind is None:
        return colour
    cvd = {"name": "sRGB1+CVD", "cvd_type": kind, "severity": 100}
    return np.clip(colorspacious.cspace_convert(colour, cvd, "sRGB1"), 0, 1)


def min_delta_e(colours: dict) -> tuple[float, tuple]:
    """The smallest pairwise Delta E over normal vision, deuteranopia and protanopia."""
    best = (np.inf, ())
    for kind in KINDS:
        shown = {k: seen(c, kind) for k, c in colours.items()}
        for (a, ca), (b, cb) in itertools.combinations(shown.items(), 2):
            d = float(colorspacious.deltaE(ca, cb, input_space="sRGB1"))
            if d < best[0]:
                best = (d, (kind or "normal", a, b))
    return best


def policy_colours() -> dict:
    labels = list(api.DEFAULT_POLICIES)
    return {k: rgb(c) for k, c in style.policy_colors(labels).items()}


def band_colours(n_states: int) -> dict:
    white = np.ones(3)
    return {s: BAND_OPACITY * rgb(style.state_color(s)) + (1 - BAND_OPACITY) * white
            for s in range(n_states)}


def test_default_race_colours_stay_apart_under_colour_blindness():
    d, where = min_delta_e(policy_colours())
    assert d >= MIN_POLICY_DE, (d, where)


@pytest.mark.parametrize("n_states", [3, 4])
def test_state_bands_stay_apart_under_colour_blindness(n_states):
    d, where = min_delta_e(band_colours(n_states))
    assert d >= MIN_STATE_DE, (d, where)


def test_no_distinction_rests_on_colour_alone():
    labels = list(api.DEFAULT_POLICIES) + ["bob", "denband", "dlinucb"]
    dashes = [style.policy_line(lab).get("dash", "solid") for lab in labels]
    symbols = [style.policy_symbol(lab) for lab in labels]
    assert len(set(symbols)) == len(labels)  # every policy its own marker symbol
    # the two All-Season shadows share a solid line but not a symbol; every other pair differs
    # in dash too
    pairs = [(a, b) for a, b in itertools.combinations(range(len(labels)), 2)
             if dashes[a] == dashes[b]]
    assert pairs == [(0, 1)], [(labels[a], labels[b]) for a, b in pairs]


def test_race_figure_lines_carry_dash_and_markers():
    from allseason.viz import race as vrace

    sc = api.Scenario.from_preset("paper-synthetic", horizon=400)
    result = api.run_race(api.Race(sc, api.default_specs(), 2))
    fig = vrace.cumulative_figure(result.to_frames()["steps"], sc.pattern, "reward")
    lines = {t.name: t for t in fig.data if t.mode and "lines" in t.mode and t.showlegend
             is not False and t.name in {style.policy_name(p) for p in api.DEFAULT_POLICIES}}
    assert len(lines) == len(api.DEFAULT_POLICIES)
    assert len({(t.line.dash or "solid", t.marker.symbol) for t in lines.values()}) == \
        len(lines)


if __name__ == "__main__":
    print("policies:", min_delta_e(policy_colours()))
    for n in (3, 4, 6):
        print(f"bands ({n} states):", min_delta_e(band_colours(n)))
