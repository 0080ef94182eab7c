"""Figures everyone can read: colours that stay apart under colour-vision deficiency, and
distinctions that never rest on colour alone.

Colour-vision deficiency is simulated with colorspacious (Machado, Oliveira & Fernandes 2009,
severity 100) and distances are Delta E in CAM02-UCS (about 1 is a just-noticeable
difference). ``python tests/viz/test_accessibility.py`` prints the minimum distances.
"""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path

import numpy as np
import pytest

colorspacious = pytest.importorskip("colorspacious")

from allseason import api  # noqa: E402
from allseason.viz import layout, style  # noqa: E402
from allseason.viz.timeline import BAND_OPACITY  # noqa: E402

KINDS = (None, "deuteranomaly", "protanomaly")
MIN_POLICY_DE = 12.0  # between line colours of the default race
MIN_STATE_DE = 8.0  # between background bands as drawn (over the background, at BAND_OPACITY)
MIN_BACKGROUND_DE = 20.0  # between every line colour (and INK) and both themes' backgrounds
CONFIG = tomllib.loads(
    (Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text()
)
BACKGROUNDS = {theme: CONFIG["theme"][theme]["backgroundColor"] for theme in ("light", "dark")}


def rgb(hex_colour: str) -> np.ndarray:
    h = hex_colour.lstrip("#")
    return np.array([int(h[i : i + 2], 16) for i in (0, 2, 4)]) / 255


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


def band_colours(n_states: int, background: str = "#ffffff") -> dict:
    under = rgb(background)
    return {
        s: BAND_OPACITY * rgb(style.state_color(s)) + (1 - BAND_OPACITY) * under
        for s in range(n_states)
    }


def test_default_race_colours_stay_apart_under_colour_blindness():
    d, where = min_delta_e(policy_colours())
    assert d >= MIN_POLICY_DE, (d, where)


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("n_states", [3, 4])
def test_state_bands_stay_apart_under_colour_blindness(n_states, theme):
    d, where = min_delta_e(band_colours(n_states, BACKGROUNDS[theme]))
    assert d >= MIN_STATE_DE, (d, where)


def test_the_app_has_a_light_and_a_dark_theme():
    assert set(BACKGROUNDS) == {"light", "dark"}
    assert "base" not in CONFIG["theme"]  # both offered: the reader picks in the menu


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_lines_and_neutral_marks_stand_out_from_both_backgrounds(theme):
    """Figures follow the theme (the background changes, the trace colours do not): every
    policy colour of the default race and INK must read on either background."""
    colours = {**policy_colours(), "INK": rgb(layout.INK), "shadow": rgb(style.SHADOW_COLOR)}
    background = rgb(BACKGROUNDS[theme])
    worst = min(
        (
            float(colorspacious.deltaE(seen(c, k), seen(background, k), input_space="sRGB1")),
            name,
            k or "normal",
        )
        for name, c in colours.items()
        for k in KINDS
    )
    assert worst[0] >= MIN_BACKGROUND_DE, worst


def test_figures_name_no_text_colour_so_they_follow_the_theme():
    base = layout.base_layout("t", "x", "y", subtitle="s")
    assert "color" not in base["font"]
    assert "color" not in base["title"]["subtitle"]["font"]
    assert base["legend"]["orientation"] == "h"  # rows under the plot: fits a phone


def test_no_distinction_rests_on_colour_alone():
    labels = list(api.DEFAULT_POLICIES) + ["bob", "denband", "dlinucb"]
    dashes = [style.policy_line(lab).get("dash", "solid") for lab in labels]
    symbols = [style.policy_symbol(lab) for lab in labels]
    assert len(set(symbols)) == len(labels)  # every policy its own marker symbol
    # the two All-Season shadows share a solid line but not a symbol; every other pair differs
    # in dash too
    pairs = [
        (a, b) for a, b in itertools.combinations(range(len(labels)), 2) if dashes[a] == dashes[b]
    ]
    assert pairs == [(0, 1)], [(labels[a], labels[b]) for a, b in pairs]


def test_race_figure_lines_carry_dash_and_markers():
    from allseason.viz import race as vrace

    sc = api.Scenario.from_preset("paper-synthetic", horizon=400)
    result = api.run_race(api.Race(sc, api.default_specs(), 2))
    fig = vrace.cumulative_figure(result.to_frames()["steps"], sc.pattern, "reward")
    lines = {
        t.name: t
        for t in fig.data
        if t.mode
        and "lines" in t.mode
        and t.showlegend is not False
        and t.name in {style.policy_name(p) for p in api.DEFAULT_POLICIES}
    }
    assert len(lines) == len(api.DEFAULT_POLICIES)
    assert len({(t.line.dash or "solid", t.marker.symbol) for t in lines.values()}) == len(lines)


if __name__ == "__main__":
    print("policies:", min_delta_e(policy_colours()))
    for theme, background in BACKGROUNDS.items():
        for n in (3, 4, 6):
            print(f"bands ({n} states, {theme}):", min_delta_e(band_colours(n, background)))
