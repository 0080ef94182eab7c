"""The Live page survives a key storm. At speed 400, "New season" pressed 12 times,
Restart, then random keys from ``N123456789P`` at 10-12 a second for 15 s: the page went
white in 2 runs of 3 ("Bad delta path index 5", "'setIn' cannot be called on an
ElementNode"); here it did so only with keys faster still ("Bad delta path index 1 (should
be between [0, 0])", 1 run in 3, with keys as fast as Playwright sends them), so each run ends
with a 5 s burst of those. Five runs, each on a fresh session; after each the stage must still be
there and answer (its step counter moves or the show is paused, a key still switches the
season), with no traceback and no such error in the browser's console.

The runs storm one at a time (AT_ONCE; $E2E_STORMS_AT_ONCE sets more), each in its own
browser context (a Streamlit session of its own) on the one app server. Two at a time was
measured and refused (2026-11-27, load 8-17): each page then took 47-87 keys in 15 s, under
the storm's pace (the same machine, one at a time: 131-165), since a playing show costs its
page about 0.7 of a core (docs/live.md, "Measured").

Run with ``pytest -m e2e tests/browser/test_live_key_storm.py`` (about 2-3 minutes); skipped when
/usr/bin/chromium or playwright is missing. Screenshots: ``$SCREENSHOT_DIR/live-storm-*.png``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import CHROMIUM, LAUNCH_ARGS, SCREENS

VIEWPORT = {"width": 1280, "height": 1000}
TIMEOUT_MS = 90_000
STATUS = ".live-status"
KEYS = "N123456789P"
STORM_SECONDS = 15
BURST_SECONDS = 5
RUNS = 5
# storms at the same time: 1 (see the module's docstring: two starve the key pace on 2 cores)
AT_ONCE = int(os.environ.get("E2E_STORMS_AT_ONCE", "1"))
BROKEN = ("Bad delta path", "setIn", "cannot be called on", "Minified React error")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.xdist_group("live_key_storm"),  # the storms run in one module fixture
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed"),
]
pytest.importorskip("playwright.async_api")


async def storm(page, rng: random.Random) -> int:
    """The storm: New season x 12, Restart, random keys, a burst; returns the keys sent."""
    loop = asyncio.get_running_loop()
    for _ in range(12):
        await page.keyboard.press("n")
        await page.wait_for_timeout(rng.randint(60, 140))
    await page.locator('[data-testid="stSidebar"]').get_by_role("button", name="Restart").click()
    sent, start = 0, loop.time()
    due = start
    while loop.time() < start + STORM_SECONDS:
        await page.keyboard.press(rng.choice(KEYS).lower())
        sent += 1
        due += rng.uniform(1 / 12, 1 / 10)  # 10-12 keys a second, on a fixed schedule
        await asyncio.sleep(max(0.0, due - loop.time()))
    burst_end = loop.time() + BURST_SECONDS
    while loop.time() < burst_end:  # then as fast as keys go: turned the page white
        await page.keyboard.press(rng.choice(KEYS).lower())  # 1 run in 3 before the key gate
    return sent


async def stage_alive(page) -> None:
    """The stage is drawn and answers: not a white page."""
    await page.wait_for_selector(STATUS, timeout=20_000)
    assert await page.locator('[data-testid="stException"]').count() == 0, "a traceback"
    assert await page.locator(".st-key-live_buttons button").count() >= 3, "no season buttons"
    if await page.locator(".st-key-live_pause button", has_text="Resume").count():
        await page.keyboard.press("p")  # paused by the storm's last P: resume
    before = int(await page.evaluate(f"document.querySelector('{STATUS}').dataset.step"))
    await page.wait_for_function(
        f"+document.querySelector('{STATUS}')?.dataset.step > {before}", timeout=20_000
    )
    await page.keyboard.press("1")
    await page.wait_for_function(
        f"document.querySelector('{STATUS}')?.dataset.season === '1'", timeout=20_000
    )


async def one_run(browser, server: str, run: int) -> dict:
    """One storm on a fresh session: the keys sent, the console's errors of the broken
    kind, and whether the stage answered afterwards (``alive``: None, or what failed)."""
    context = await browser.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    out: dict = {"run": run, "sent": 0, "alive": "not reached"}
    try:
        await page.goto(f"{server}/Live?speed=400")
        # the five sessions' first runs come together (on a fresh server, each its first
        # show): not what is tested, so waited for generously
        await page.wait_for_selector(STATUS, timeout=3 * TIMEOUT_MS)
        await page.wait_for_timeout(1500)
        out["sent"] = await storm(page, random.Random(run))
        await page.wait_for_timeout(2000)
        await page.screenshot(path=str(SCREENS / f"live-storm-{run}.png"))
        out["broken"] = [m[:200] for m in console if any(b in m for b in BROKEN)]
        try:
            await stage_alive(page)
            out["alive"] = None
        except Exception as e:  # reported by the run's own test
            out["alive"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    except Exception as e:
        out["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        with contextlib.suppress(Exception):
            await page.screenshot(path=str(SCREENS / f"live-storm-{run}-failed.png"))
    finally:
        out.setdefault("broken", [m[:200] for m in console if any(b in m for b in BROKEN)])
        await context.close()
    return out


async def all_runs(server: str) -> list[dict]:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            gate = asyncio.Semaphore(AT_ONCE)

            async def gated(run: int) -> dict:
                async with gate:
                    return await one_run(browser, server, run)

            return list(await asyncio.gather(*(gated(r) for r in range(RUNS))))
        finally:
            await browser.close()


@pytest.fixture(scope="module")
def storms(server) -> list[dict]:
    """The five storms, up to AT_ONCE at a time, on the session's app server."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    # in a thread of its own: its asyncio loop must not meet the loop that Playwright's sync
    # API leaves running in this thread when other browser tests ran first
    with ThreadPoolExecutor(1) as pool:
        results = pool.submit(asyncio.run, all_runs(server)).result()
    with open(SCREENS / "live-storm.txt", "a") as f:
        for r in results:
            f.write(f"run {r['run']}: {r['sent']} keys in {STORM_SECONDS} s, {r}\n")
    return results


@pytest.mark.parametrize("run", range(RUNS))
def test_the_live_page_survives_a_key_storm(storms, run):
    r = storms[run]
    assert "error" not in r, r
    assert not r["broken"], r["broken"]
    assert r["alive"] is None, f"the stage did not answer after the storm: {r['alive']}"
    # 10-12 a second are sent on schedule; on a loaded 2-core machine Playwright's round
    # trips delivered 8-9 a second to one page alone (measured): still a storm, not a drizzle
    assert r["sent"] >= 7.5 * STORM_SECONDS, f"only {r['sent']} keys in {STORM_SECONDS} s"
