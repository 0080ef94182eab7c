"""The "When does it help?" page in a real browser (Debian's chromium, Playwright): the map
drawn with the named worlds, no traceback, a cell opened in Race; screenshots for a person
to look at (``$SCREENSHOT_DIR/when-*.png``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CHROMIUM
from test_e2e_browser import check, go, shot, wait_idle

VIEWPORT = {"width": 1280, "height": 1400}
TIMEOUT_MS = 120_000

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed"),
]
pytest.importorskip("playwright.sync_api")


def test_the_map_is_drawn_and_a_cell_opens_in_race(server, page):
    go(page, server, "When")
    page.locator(".gtitle", has_text="Where All-Season (SW) beats").first.wait_for()
    wait_idle(page)
    check(page)
    for name in ("default race", "regular", "extreme"):
        assert page.locator("svg text", has_text=name).count() >= 1, name
    assert page.get_by_text("The boundary", exact=False).count() == 1
    page.mouse.move(5, 5)
    shot(page, "when-map")

    page.get_by_role("button", name="10").first.click()  # the batch-10 page
    page.locator(".gtitle", has_text="batch size 10").first.wait_for()
    wait_idle(page)
    check(page)
    assert page.locator("svg text", has_text="Seattle weather shop").count() >= 1
    page.mouse.move(5, 5)
    shot(page, "when-map-batch10")

    page.get_by_role("button", name="Open this world in Race").click()
    page.wait_for_url("**/Race**")
    wait_idle(page)
    check(page)
    assert page.get_by_text("All-Season (SW)", exact=False).count() >= 1
