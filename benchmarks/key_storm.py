"""The Live page under a key storm, in real browsers: the driver of
``tests/browser/test_live_key_storm.py`` and the benchmark of its pace.

One storm, on a fresh session (a browser context of its own) of ``/Live?speed=400``: "New
season" pressed 12 times, Restart, then random keys from ``N123456789P`` at 10-12 a second
(on a fixed schedule), then a 5 s burst as fast as Playwright sends them. Afterwards the stage
must be there and answer (its step counter moves or the show is paused, a key still switches
the season), with no traceback and no "Bad delta path" / "setIn" error in the browser's
console (they turned the page white: docs/security.md).

The storm's length is set in seconds (``--seconds``, the benchmark: how many keys the page
took on this machine, the pace claim "at least 7.5 keys a second", 112 in 15 s) or in keys
(``keys=``, the CI test: the same storm whatever the machine's load, only its duration
varies). The runs storm one at a time (``--at-once`` more): two at a time starve the key pace
on 2 cores (2026-11-27, load 8-17: 47-87 keys in 15 s each, against 131-165 alone), since a
playing show costs its page about 0.7 of a core (docs/live.md, "Measured").

    python benchmarks/key_storm.py [--runs 5] [--seconds 15] [--at-once 1]

Prints one line per run and exits 1 if a run broke the page or sent under 7.5 keys a second.
Needs /usr/bin/chromium and playwright. Screenshots: ``$SCREENSHOT_DIR/live-storm-*.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from appserver import CHROMIUM, LAUNCH_ARGS, LOG_DIR, Server

VIEWPORT = {"width": 1280, "height": 1000}
TIMEOUT_MS = 90_000
STATUS = ".live-status"
KEYS = "N123456789P"
STORM_SECONDS = 15
BURST_SECONDS = 5
MIN_PACE = 7.5  # keys a second: on a loaded 2-core machine Playwright delivered 8-9 alone
BROKEN = ("Bad delta path", "setIn", "cannot be called on", "Minified React error")


async def storm(page, rng: random.Random, seconds: float | None, keys: int | None) -> dict:
    """The storm: New season x 12, Restart, random keys at 10-12 a second for ``seconds``
    (or ``keys`` of them), a burst; returns the keys sent on schedule and how long they took."""
    loop = asyncio.get_running_loop()
    for _ in range(12):
        await page.keyboard.press("n")
        await page.wait_for_timeout(rng.randint(60, 140))
    await page.locator('[data-testid="stSidebar"]').get_by_role("button", name="Restart").click()
    sent, start = 0, loop.time()
    due = start
    while (keys is not None and sent < keys) or (
        seconds is not None and loop.time() < start + seconds
    ):
        await page.keyboard.press(rng.choice(KEYS).lower())
        sent += 1
        due += rng.uniform(1 / 12, 1 / 10)  # 10-12 keys a second, on a fixed schedule
        await asyncio.sleep(max(0.0, due - loop.time()))
    storm_s = loop.time() - start
    burst_end = loop.time() + BURST_SECONDS
    while loop.time() < burst_end:  # then as fast as keys go: turned the page white
        await page.keyboard.press(rng.choice(KEYS).lower())  # 1 run in 3 before the key gate
    return {"sent": sent, "storm_s": round(storm_s, 1)}


async def stage_alive(page) -> None:
    """The stage is drawn and answers: not a white page."""
    await page.wait_for_selector(STATUS, timeout=20_000)
    assert await page.locator('[data-testid="stException"]').count() == 0, "a traceback"
    assert await page.locator(".st-key-live_buttons button").count() >= 3, "no season buttons"
    if await page.locator(".st-key-live_resume button").count():
        await page.keyboard.press("p")  # paused by the storm's last P: resume
    before = int(await page.evaluate(f"document.querySelector('{STATUS}').dataset.step"))
    await page.wait_for_function(
        f"+document.querySelector('{STATUS}')?.dataset.step > {before}", timeout=20_000
    )
    await page.keyboard.press("1")
    await page.wait_for_function(
        f"document.querySelector('{STATUS}')?.dataset.season === '1'", timeout=20_000
    )


def _line(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


async def one_run(
    browser,
    server: str,
    run: int,
    seconds: float | None,
    keys: int | None,
    screens: Path,
    context=None,
) -> dict:
    """One storm on a fresh session: the keys sent, the console's errors of the broken
    kind, and whether the stage answered afterwards (``alive``: None, or what failed). The
    session is a browser context of its own, or (``context``) a new tab of that context:
    a Streamlit session all the same (the app keeps nothing in the browser), and the page's
    scripts come from the context's cache after the first run."""
    own = context is None
    if own:
        context = await browser.new_context(viewport=VIEWPORT)
    page = await context.new_page()
    if not own:
        await page.set_viewport_size(VIEWPORT)
    page.set_default_timeout(TIMEOUT_MS)
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(str(e)))
    out: dict = {"run": run, "sent": 0, "alive": "not reached"}
    try:
        await page.goto(f"{server}/Live?speed=400")
        # the sessions' first runs (on a fresh server, each its first show): not what is
        # tested, so waited for generously
        await page.wait_for_selector(STATUS, timeout=3 * TIMEOUT_MS)
        await page.wait_for_timeout(1500)
        out.update(await storm(page, random.Random(run), seconds, keys))
        await page.wait_for_timeout(2000)
        await page.screenshot(path=str(screens / f"live-storm-{run}.png"))
        out["broken"] = [m[:200] for m in console if any(b in m for b in BROKEN)]
        try:
            await stage_alive(page)
            out["alive"] = None
        except Exception as e:  # reported by the run's own test
            out["alive"] = _line(e)
    except Exception as e:
        out["error"] = _line(e)
        with contextlib.suppress(Exception):
            await page.screenshot(path=str(screens / f"live-storm-{run}-failed.png"))
    finally:
        out.setdefault("broken", [m[:200] for m in console if any(b in m for b in BROKEN)])
        await (context.close() if own else page.close())
    return out


async def all_runs(
    server: str,
    runs: int,
    *,
    seconds: float | None = None,
    keys: int | None = None,
    at_once: int = 1,
    screens: Path = LOG_DIR,
    tabs: bool = False,
) -> list[dict]:
    """``runs`` storms, ``at_once`` at a time, each on a fresh session of ``server``: a
    browser context each, or (``tabs``, the CI test: each page load then costs chromium about
    a third less CPU) a new tab each of one context."""
    from playwright.async_api import async_playwright

    screens.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            shared = await browser.new_context() if tabs else None
            gate = asyncio.Semaphore(at_once)

            async def gated(run: int) -> dict:
                async with gate:
                    return await one_run(browser, server, run, seconds, keys, screens, shared)

            return list(await asyncio.gather(*(gated(r) for r in range(runs))))
        finally:
            await browser.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=STORM_SECONDS)
    ap.add_argument("--at-once", type=int, default=1)
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found: run `make browser`", file=sys.stderr)
        return 2
    import os

    print(f"load average {os.getloadavg()}")
    with Server() as srv:
        results = asyncio.run(
            all_runs(srv.url, args.runs, seconds=args.seconds, at_once=args.at_once)
        )
    bad = 0
    for r in results:
        pace = r["sent"] / args.seconds
        ok = "error" not in r and not r["broken"] and r["alive"] is None and pace >= MIN_PACE
        bad += not ok
        print(
            f"run {r['run']}: {r['sent']} keys in {args.seconds:g} s ({pace:.1f}/s) "
            f"{'ok' if ok else 'FAILED'} {r}"
        )
    print(f"load average {os.getloadavg()}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
