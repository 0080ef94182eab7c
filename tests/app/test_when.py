"""The "When does it help?" page (AppTest): the map with the named worlds and the user's
world on it, a cell opened in Race, the user's world raced to check."""

from __future__ import annotations

import json

from conftest import open_app_page

from allseason import api
from allseason.worldmap import Knobs, snapshot

PAGE = "app_pages/9_When_does_it_help.py"


def _figure(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def test_page_shows_the_map_the_worlds_and_the_regions():
    at = open_app_page(PAGE)
    assert not at.exception, at.exception
    names = {t.get("name") for t in _figure(at)["data"]}
    snap = snapshot.load()
    first = snapshot.pages(snap)[0]  # the page shown first: batches of 1
    on_first = [w["name"] for w in snap["worlds"] if w["prediction"]["page"] == first]
    assert len(on_first) >= 4  # the default race and the paper's three patterns
    for name in on_first:
        assert name in names
    others = [w["name"] for w in snap["worlds"] if w["name"] not in on_first]
    assert not set(others) & names  # the batch-10 worlds are on the other page
    assert "your world" in names  # the Pattern builder's scenario (the default race)
    text = " ".join(m.value for m in at.markdown)
    assert "wins in" in text and "The boundary" in text
    assert any("should" in i.value or "expected" in i.value for i in at.info)
    assert len(at.dataframe) >= 2  # the named worlds, the screening


def test_a_cell_opens_in_race_with_its_tuned_contest():
    at = open_app_page(PAGE)
    snap = snapshot.load()
    at.selectbox(key="when_x").set_value(1)
    at.selectbox(key="when_y").set_value(2)
    at.run()
    at.button(key="when_open").click()
    at.run()
    assert not at.exception, at.exception
    cell = snapshot.cell_at(snap, 1, 2)
    assert at.session_state["scenario"] == Knobs(**cell["knobs"]).scenario()
    choice = at.session_state["race_choice"]
    assert list(choice.policies[:2]) == ["allseason-sw", "allseason-disc"]
    assert choice.params["sw-lints"]["tau"] == cell["chosen"]["sw-lints"]["tau"]
    # the race Race runs is the cell's: its 5 seeds are the cell's first 5, bit for bit
    specs = [
        api.PolicySpec(n, {k: v for k, v in choice.params[n].items() if v is not None})
        for n in choice.policies
    ]
    res = api.run_race(api.Race(at.session_state["scenario"], specs, choice.n_seeds))
    frame = res.seed_frame()
    for label, rewards in cell["rewards"].items():
        got = frame[frame.policy == label].sort_values("seed").mean_reward.tolist()
        assert got == rewards[: choice.n_seeds], label


def test_your_world_is_raced_to_check():
    at = open_app_page(PAGE)
    at.session_state["scenario"] = api.Scenario.from_preset("regular", horizon=600, n_states=2)
    at.run()
    at.button(key="when_check").click()
    at.run()
    assert not at.exception, at.exception
    assert any("Raced: All-Season (SW)" in s.value for s in at.success)


def test_the_your_data_pages_reward_table_is_placed_on_the_batch_10_map():
    from allseason.logs.examples import seasonal_table

    at = open_app_page(PAGE)
    at.session_state["yd_source"] = {
        "name": "seasonal-reward-table.csv",
        "data": seasonal_table(),
        "origin": "example",
    }
    at.radio(key="when_source").set_value("The reward table of the Your data page")
    at.run()
    assert not at.exception, at.exception
    told = " ".join(i.value for i in at.info)
    assert "batch size 10" in told and "observations" in told
    text = " ".join(m.value for m in at.markdown)
    assert r"seasonal\-reward\-table\.csv" in text and "4 states" in text  # escaped
    # raced on the page: the same numbers as the shipped check of the example table
    at.button(key="when_check").click()
    at.run()
    assert not at.exception, at.exception
    (raced,) = [
        w["raced"] for w in snapshot.load()["worlds"] if w["name"] == "example reward table"
    ]
    want = f"{raced['allseason-sw']['diff']:+.4f} ± {raced['allseason-sw']['half']:.4f}"
    assert any(want in s.value and "loses" in s.value for s in at.success), want
