"""The Live page survives a key storm. At speed 400, "New season" pressed 12 times,
Restart, then random keys from ``N123456789P`` at 10-12 a second for 15 s: the page went
white in 2 runs of 3 ("Bad delta path index 5", "'setIn' cannot be called on an
ElementNode"); here it did so only with keys faster still ("Bad delta path index 1 (should
be between [0, 0])", 1 run in 3, with keys as fast as Playwright sends them), so each run ends
with a 5 s burst of those. Five runs, each on a fresh session; after each the stage must still be
there and answer (its step counter moves or the show is paused, a key still switches the
season), with no traceback and no such error in the browser's console.

Run with ``pytest -m e2e tests/browser/test_live_key_storm.py`` (about 2-3 minutes); skipped when
/usr/bin/chromium or playwright is missing. Screenshots: ``$SCREENSHOT_DIR/live-storm-*.png``.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest
from conftest import CHROMIUM, SCREENS

VIEWPORT = {"width": 1280, "height": 1000}
TIMEOUT_MS = 90_000
STATUS = ".live-status"
KEYS = "N123456789P"
STORM_SECONDS = 15
BURST_SECONDS = 5
RUNS = 5
BROKEN = ("Bad delta path", "setIn", "cannot be called on", "Minified React error")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed"),
]
pytest.importorskip("playwright.sync_api")


def storm(page, rng: random.Random) -> int:
    """The storm: New season x 12, Restart, random keys, a burst; returns the keys sent."""
    for _ in range(12):
        page.keyboard.press("n")
        page.wait_for_timeout(rng.randint(60, 140))
    page.locator('[data-testid="stSidebar"]').get_by_role("button", name="Restart").click()
    sent, start = 0, time.monotonic()
    due = start
    while time.monotonic() < start + STORM_SECONDS:
        page.keyboard.press(rng.choice(KEYS).lower())
        sent += 1
        due += rng.uniform(1 / 12, 1 / 10)  # 10-12 keys a second, on a fixed schedule
        time.sleep(max(0.0, due - time.monotonic()))
    burst_end = time.monotonic() + BURST_SECONDS
    while time.monotonic() < burst_end:  # then as fast as keys go: turned the page white
        page.keyboard.press(rng.choice(KEYS).lower())  # 1 run in 3 before the key gate
    return sent


def stage_alive(page) -> None:
    """The stage is drawn and answers: not a white page."""
    page.wait_for_selector(STATUS, timeout=20_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator(".st-key-live_buttons button").count() >= 3
    if page.locator(".st-key-live_pause button", has_text="Resume").count():
        page.keyboard.press("p")  # paused by the storm's last P: resume
    before = int(page.evaluate(f"document.querySelector('{STATUS}').dataset.step"))
    page.wait_for_function(
        f"+document.querySelector('{STATUS}')?.dataset.step > {before}", timeout=20_000
    )
    page.keyboard.press("1")
    page.wait_for_function(
        f"document.querySelector('{STATUS}')?.dataset.season === '1'", timeout=20_000
    )


@pytest.mark.parametrize("run", range(RUNS))
def test_the_live_page_survives_a_key_storm(server, browser, run):
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    try:
        page.goto(f"{server}/Live?speed=400")
        page.wait_for_selector(STATUS)
        page.wait_for_timeout(1500)
        sent = storm(page, random.Random(run))
        page.wait_for_timeout(2000)
        page.screenshot(path=str(SCREENS / f"live-storm-{run}.png"))
        broken = [m[:200] for m in console if any(b in m for b in BROKEN)]
        assert not broken, broken
        stage_alive(page)
        with open(SCREENS / "live-storm.txt", "a") as f:
            f.write(f"run {run}: {sent} keys in {STORM_SECONDS} s, page alive\n")
        # 10-12 a second are sent on schedule; on a loaded 2-core machine Playwright's
        # round trips deliver 8-9 a second (measured): still a storm, not a drizzle
        assert sent >= 7.5 * STORM_SECONDS, f"only {sent} keys in {STORM_SECONDS} s"
    finally:
        context.close()
