"""The Live page in a real browser (Debian's chromium, Playwright): the keyboard shortcuts
of the pinned Streamlit (``st.button(..., shortcut=...)``) switch the season -- "N" a new
one, "1" back to the first -- and the stage keeps playing, with no traceback.

Run with ``pytest -m e2e tests/browser/test_live_shortcuts.py``; skipped when /usr/bin/chromium or
playwright is missing. Timings are measured by benchmarks/bench_live.py, not asserted here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import CHROMIUM, SCREENS

VIEWPORT = {"width": 1280, "height": 1000}
TIMEOUT_MS = 90_000
STATUS = ".live-status"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
    ),
]
pytest.importorskip("playwright.sync_api")


def season(pg) -> str:
    return pg.evaluate(f"document.querySelector('{STATUS}').dataset.season")


def step(pg) -> int:
    return int(pg.evaluate(f"document.querySelector('{STATUS}').dataset.step"))


def wait_season(pg, k: int) -> None:
    pg.wait_for_function(
        f"document.querySelector('{STATUS}')?.dataset.season === '{k}'", timeout=15_000
    )


def test_keys_n_and_1_switch_the_season(server, page):
    page.goto(f"{server}/Live")
    page.wait_for_selector(STATUS)
    first = step(page)
    page.wait_for_function(f"+document.querySelector('{STATUS}')?.dataset.step > {first}")
    assert season(page) == "1"
    page.keyboard.press("n")
    wait_season(page, 2)
    page.wait_for_timeout(1500)  # a click may reach the server twice: still one new season
    assert season(page) == "2"
    assert page.locator(".st-key-live_season_2 button").count() >= 1
    assert page.locator(".st-key-live_season_3").count() == 0
    page.keyboard.press("1")
    wait_season(page, 1)
    before = step(page)
    page.wait_for_function(f"+document.querySelector('{STATUS}')?.dataset.step > {before}")
    assert page.locator('[data-testid="stException"]').count() == 0
    ticker = page.locator(".live-ticker").inner_text()
    assert "season 1 is back" in ticker or "is back after" in ticker
    page.screenshot(path=str(SCREENS / "live-keys.png"))
    page.keyboard.press("p")  # pause: the step counter stops
    page.wait_for_function(f"document.querySelector('{STATUS}')?.textContent.includes('paused')")
    paused_at = step(page)
    page.wait_for_timeout(1200)
    assert step(page) == paused_at
