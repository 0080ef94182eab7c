"""Hostile input in the app (AppTest): links and race files with numbers memory or arithmetic
cannot bear get one message naming the field, never "Something went wrong" or a traceback,
and the default value is used."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("streamlit")

from conftest import open_app_page

from allseason.ui.race_settings import RACE_UPLOAD

RACE = "app_pages/2_Race.py"


@pytest.mark.parametrize(
    "query, needle",
    [
        ({"sigma2": "1e-320"}, "Noise σ²: must be a number in [1e-06, 1e+06]"),
        ({"allseason-sw.n_max": "1000000"}, "allseason-sw, n_max: must be an integer in [1, 100]"),
        ({"allseason-sw.n_max": "30000"}, "allseason-sw, n_max: must be an integer in [1, 100]"),
        ({"allseason-sw.tau": "1000000000000"}, "allseason-sw, tau"),
        ({"lints.lam": "1e-320"}, "lints, lam: must be a number in [1e-06, 1e+06]"),
        ({"seed": "-1"}, "Seed: must be between 0 and"),
    ],
)
def test_a_link_out_of_range_is_named_and_the_default_used(query, needle):
    at = open_app_page(RACE, query=query, from_home=False)
    assert not at.exception
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any(needle in m for m in shown), shown
    assert not any("Something went wrong" in m for m in shown), shown


def test_a_race_file_with_n_max_1000000_is_named_and_settings_kept():
    at = open_app_page(RACE)
    race = {
        "scenario": {"segments": [[0, 200]]},
        "policies": [{"name": "allseason-sw", "params": {"n_max": 1_000_000}}],
        "n_seeds": 1,
    }
    at.file_uploader(key=RACE_UPLOAD).set_value(
        ("big.json", json.dumps(race).encode(), "application/json")
    )
    at.run()
    assert not at.exception
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any("n_max: must be an integer in [1, 100]" in m for m in shown), shown
