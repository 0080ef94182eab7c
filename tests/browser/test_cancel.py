"""Cancel in a real browser (issue 33, a fair queue): with both of the server's slots held by
two visitors' long log evaluations, a third visitor's race waits first in line and a fourth's
behind it; the third presses **Cancel** on the page, its request leaves the queue (one line
says so), the fourth becomes first, and the slot that frees next (the first visitor closes
their tab) goes to the fourth.

Run with ``pytest -m e2e tests/browser/test_cancel.py``; skipped without /usr/bin/chromium or
playwright. Uses the shared ``server`` and ``page`` fixtures (tests/conftest.py,
tests/browser/conftest.py); each visitor is a tab of its own (a Streamlit session)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import CHROMIUM, IDLE

from tests.browser.conftest import new_tab

VIEWPORT = {"width": 1280, "height": 1000}
TIMEOUT_MS = 90_000
# a long race (estimated about 16 CPU-s with the prices of 2026-11-28 at the tests' factor 1:
# above the queue's 5 s "short" line, so it waits its turn instead of borrowing a long
# request's slot; the default policies at d = 20, K = 50 stay under 5 within the page's
# 1,000,000 policy-steps), its seed unlike other tests' (no cache hit)
RACE = (
    "Race?preset=paper-synthetic&horizon=50000&d=20&n_arms=50&n_seeds=5"
    "&policies=dlinucb,denband,allseason-sw,lints&seed={seed}"
)

CANCELLED = re.compile("Cancelled: your request left the queue|your request was stopped: cancelled")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed (apt-get install chromium)"
    ),
]
pytest.importorskip("playwright.sync_api")


def _open(context, server: str, path: str):
    """Another visitor: a new tab (its own Streamlit session) on ``path``."""
    pg = new_tab(context, VIEWPORT, TIMEOUT_MS)
    pg.goto(f"{server}/{path}")
    pg.wait_for_selector("h1")
    pg.wait_for_selector(IDLE)
    return pg


def _text(pg, words: str):
    return pg.get_by_text(words, exact=False).first


def test_a_queued_race_is_cancelled_from_the_page_and_the_slot_goes_to_the_next(server, page):
    opened = []
    try:
        # every page loaded first (while the server is idle), then two visitors take both
        # slots with the example log's evaluation (about 70 CPU-s each)
        holders = []
        for _ in range(2):
            pg = _open(page.context, server, "Your_data")
            opened.append(pg)
            holders.append(pg)
        page.goto(f"{server}/{RACE.format(seed=9301)}")
        page.wait_for_selector(IDLE)
        fourth = _open(page.context, server, RACE.format(seed=9302))
        opened.append(fourth)
        for pg in holders:
            pg.get_by_role("button", name="An Open-Bandit-style click log").click()
        for pg in holders:
            _text(pg, "Replaying: ").wait_for()  # running (a queued one says "Queued")
        # the third visitor (the fixture's page) and a fourth queue a long race each
        page.get_by_role("button", name="Run race").click()
        _text(page, "Queued: number 1 in line").wait_for()
        fourth.get_by_role("button", name="Run race").click()
        _text(fourth, "Queued: number 2 in line").wait_for()

        page.locator('button:has-text("Cancel")').first.click()
        # the click reruns the results section: the queue's one line (or, when the waiting
        # loop read the click first, the section's own)
        page.get_by_text(CANCELLED).first.wait_for()
        _text(fourth, "Queued: number 1 in line").wait_for()  # the fourth moved up
        assert _text(page, "Queued:").count() == 0

        opened[0].close()  # the first visitor closes the tab: their evaluation stops
        _text(fourth, "Running").wait_for()  # ... and goes to the fourth, not the third
        assert _text(page, "Running").count() == 0
        assert page.locator('[data-testid="stException"]').count() == 0
        assert fourth.locator('[data-testid="stException"]').count() == 0
    finally:
        for pg in opened:  # their sessions end: what they still run stops at its next chunk
            try:
                pg.close()
            except Exception:
                pass
