"""The guided tour in a real browser at a projector's size (1280 x 720): Debian's chromium,
driven by Playwright's Python API, against ``streamlit run app.py`` on 127.0.0.1 (a free port,
started and stopped by a module fixture; the pattern of ``tests/browser/test_pages.py``).

Walks the whole tour with the Next button, failing on any Streamlit exception element; checks
that each step's figure lies fully inside the 720 px high viewport, saves one screenshot per
step to ``$SCREENSHOT_DIR`` (default ``/tmp/allseason-screens``) as ``tour-step-K.png``, and
times each step from the click to the idle page (printed, and written to
``$SCREENSHOT_DIR/tour-timings.json``). The times are recorded, not asserted: a step's pace is
``benchmarks/ui_clicks.py --parts tour``'s claim (4 s a step), since a loaded CI machine once
took 4.65 s for a step that takes 0.5 s here; the test bounds a hang only (TIMEOUT_MS).

Run with ``pytest tests/browser/test_tour.py -s``; skipped when /usr/bin/chromium or
playwright is missing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from conftest import CHROMIUM, IDLE, SCREENS

VIEWPORT = {"width": 1280, "height": 720}
CHART = '[data-testid="stPlotlyChart"]'
TIMEOUT_MS = 90_000
N_STEPS = 7

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
    ),
]
sync_api = pytest.importorskip("playwright.sync_api")


# fixtures: conftest.py's server and browser (one each per session) and page (a new tab, a
# new Streamlit session, at this module's VIEWPORT: tests/browser/conftest.py)


# --- helpers --------------------------------------------------------------------------------
def heading(k: int) -> str:
    return f"Step {k} of {N_STEPS}"


def wait_step(pg, k: int) -> None:
    """Until step k's heading is shown, the script has finished and its figure is drawn."""
    pg.locator("h1", has_text=heading(k)).first.wait_for()
    pg.wait_for_selector(IDLE)
    pg.locator(f"{CHART} .main-svg").first.wait_for()
    pg.wait_for_timeout(150)
    pg.wait_for_selector(IDLE)


def check(pg) -> None:
    assert pg.locator('[data-testid="stException"]').count() == 0, "a traceback is shown"
    shown = [e.inner_text() for e in pg.locator('[data-testid="stAlertContentError"]').all()]
    assert not shown, shown


def figure_box(pg) -> dict:
    charts = pg.locator(CHART)
    assert charts.count() == 1, f"{charts.count()} figures on the step"
    box = charts.first.bounding_box()
    assert box is not None, "the figure is not rendered"
    return box


def _record(timings: dict) -> None:
    path = SCREENS / "tour-timings.json"
    path.write_text(json.dumps(timings, indent=2))
    print("\ntour timings (s):", json.dumps(timings))


# --- tests ----------------------------------------------------------------------------------
def test_walk_the_whole_tour_with_next(server, page):
    t0 = time.perf_counter()
    page.goto(f"{server}/Guided_tour")
    wait_step(page, 1)
    timings = {"step_1_first_load": round(time.perf_counter() - t0, 2)}
    for k in range(1, N_STEPS + 1):
        check(page)
        assert f"step={k}" in page.url
        box = figure_box(page)
        assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], (
            f"step {k}: the figure spans y = {box['y']:.0f} to "
            f"{box['y'] + box['height']:.0f}, the screen is {VIEWPORT['height']} px high"
        )
        assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORT["width"], box
        page.screenshot(path=str(SCREENS / f"tour-step-{k}.png"))
        nxt = page.get_by_role("button", name="Next")
        if k == N_STEPS:
            assert nxt.is_disabled()
            break
        t0 = time.perf_counter()
        nxt.click()
        wait_step(page, k + 1)
        timings[f"step_{k + 1}"] = round(time.perf_counter() - t0, 2)
    _record(timings)  # the pace is benchmarks/ui_clicks.py's (--parts tour), not asserted here


def test_a_bad_step_link_a_step_link_and_back_then_home(server, page):
    """One tab, three checks in turn (they were three tests, three tabs and four page loads):
    a bad step in the link gets a message; a link opens its step and Back goes to the one
    before; the tour's ``step`` is not a scenario parameter: a session opened on the tour by a
    step link and moved to Home must not report it as an unknown link parameter (last: it
    opens the sidebar, which Streamlit then keeps open for the tab's later pages)."""
    # a bad step in the link gets a message
    page.goto(f"{server}/Guided_tour?step=99")
    wait_step(page, 1)
    assert page.locator('[data-testid="stException"]').count() == 0
    warning = page.locator('[data-testid="stAlertContentWarning"]')
    assert warning.count() == 1 and "no step “99”" in warning.inner_text()
    assert "step=1" in page.url
    box = figure_box(page)  # the message stands beside the figure, which stays on screen
    assert box["y"] + box["height"] <= VIEWPORT["height"], box
    page.screenshot(path=str(SCREENS / "tour-bad-step.png"))

    # a step from its link, and back
    page.goto(f"{server}/Guided_tour?step=5")
    wait_step(page, 5)
    check(page)
    assert page.locator("h1", has_text="Step 5 of 7 · A season returns").count() == 1
    assert figure_box(page)["y"] >= 0
    page.get_by_role("button", name="Back").click()
    wait_step(page, 4)
    check(page)
    assert "step=4" in page.url

    # leaving the tour (opened by a step link) for Home shows no link error
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    page.locator('[data-testid="stSidebar"] a', has_text="Home").first.click()
    page.locator("h1", has_text="All-Season").first.wait_for()
    page.wait_for_selector(IDLE)
    page.wait_for_timeout(500)
    check(page)
