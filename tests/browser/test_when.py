"""The "When does it help?" page in a real browser (Debian's chromium, Playwright): the map
drawn with the named worlds, a cell picked by a click on the map, the batch-10 page, a cell
opened in Race, no traceback; screenshots for a person to look at
(``$SCREENSHOT_DIR/when-*.png``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CHROMIUM

from allseason.worldmap import snapshot
from tests.browser.test_pages import check, go, shot, wait_idle

VIEWPORT = {"width": 1280, "height": 1400}
TIMEOUT_MS = 120_000

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed"),
]
pytest.importorskip("playwright.sync_api")


def test_the_map_is_drawn_and_a_cell_opens_in_race(server, page):
    snap = snapshot.load()
    go(page, server, "When")
    page.locator(".gtitle", has_text="Where All-Season (SW) beats").first.wait_for()
    wait_idle(page)
    check(page)
    for name in ("default race", "regular", "extreme"):
        assert page.locator("svg text", has_text=name).count() >= 1, name
    assert page.get_by_text("The boundary", exact=False).count() == 1
    page.mouse.move(5, 5)
    shot(page, "when-map")

    page.locator('[data-testid="stButtonGroup"] button', has_text="10").first.click()
    page.locator(".gtitle", has_text="batch size 10").first.wait_for()
    wait_idle(page)
    check(page)
    assert page.locator("svg text", has_text="Seattle weather shop").count() >= 1
    page.mouse.move(5, 5)
    shot(page, "when-map-batch10")

    # the picked cell (25 observations, SNR 2.9, batch 10: 225 steps) opened in Race, run
    page.get_by_role("button", name="Open this world in Race").click()
    page.wait_for_url("**/Race**")
    page.get_by_text("225 steps", exact=False).first.wait_for()
    wait_idle(page)
    check(page)
    assert page.get_by_text("All-Season (SW)", exact=False).count() >= 1
    shot(page, "when-race")

    # a click on a cell of the map opens its world in Race at once
    go(page, server, "When")
    page.locator(".gtitle", has_text="batch size 1)").first.wait_for()
    nx, ny = len(snap["x"]["values"]), len(snap["y"]["values"])
    i, j = 4, 1  # 400 observations, σ² = 0.03 (second from the top: SNR grows upwards)
    cell = snapshot.cell_at(snap, i, j)
    steps = 3 * (cell["knobs"]["returns"] + 1) * 400
    box = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
    page.mouse.click(
        box["x"] + (i + 0.5) / nx * box["width"], box["y"] + (j + 0.5) / ny * box["height"]
    )
    page.wait_for_url("**/Race**")
    page.get_by_text(f"{steps:,} steps", exact=False).first.wait_for()
    wait_idle(page)
    check(page)


def test_an_uploaded_reward_table_is_placed_and_predicted(server, page, tmp_path):
    from allseason.logs.examples import seasonal_table

    csv = tmp_path / "my-weekly-sales.csv"
    csv.write_bytes(seasonal_table())
    go(page, server, "When")
    page.get_by_text("A reward table uploaded here").click()
    wait_idle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv))
    page.get_by_text("read on the map for batch size 10", exact=False).first.wait_for()
    wait_idle(page)
    check(page)
    assert page.get_by_text("my-weekly-sales.csv", exact=False).count() >= 1
    page.locator('[data-testid="stButtonGroup"] button', has_text="10").first.click()
    page.locator("svg text", has_text="your world").first.wait_for()
    wait_idle(page)
    check(page)
    page.mouse.move(5, 5)
    shot(page, "when-upload")
