"""The Live page survives a key storm. At speed 400, "New season" pressed 12 times,
Restart, then random keys from ``N123456789P`` at 10-12 a second: the page went white in 2
runs of 3 ("Bad delta path index 5", "'setIn' cannot be called on an ElementNode"); here it
did so only with keys faster still ("Bad delta path index 1 (should be between [0, 0])", 1 run
in 3, with keys as fast as Playwright sends them), so each storm ends with a 5 s burst of
those. Each run on a fresh session; after each the stage must still be there and answer (its
step counter moves or the show is paused, a key still switches the season), with no
traceback and no such error in the browser's console. The driver is
``benchmarks/key_storm.py``; here each run's session is a new tab of one browser context
(the benchmark's ``tabs``: a new Streamlit session all the same, the page's scripts cached).

Here each storm is ``KEYS_SENT`` keys on the 10-12 a second schedule (the same storm
whatever the machine's load; a loaded machine only makes it last longer), ``RUNS`` runs
($E2E_STORM_RUNS sets more), one at a time, on the session's app server. The pace claim (at
least 7.5 keys a second delivered to the page, 112 in 15 s) and the five runs are the
benchmark's: ``python benchmarks/key_storm.py --runs 5 --seconds 15`` (exit 1 if a run breaks
the page or falls under the pace).

Why the storm is not smaller (2026-11-27): its CPU is the seconds the show plays. The
playing stage is a loop that takes what the cores give (1.5-2.3 of its 4 frames a second at
load 12, about one core for chromium and the server), so fewer keys or a shorter burst would
save CPU only as fewer seconds of keys landing on a playing show, which is the claim's
strength: the white page came at random, in 2 runs of 3 at 10-12 keys a second for 15 s, and
the burst's in 1 run of 3. Each run's page costs about 7 CPU-s more before its storm (a new
tab's renderer compiling the page's scripts, the first show): the storms in one tab were
tried (c216e05, reverted in ce9331a).

Run with ``pytest -m e2e tests/browser/test_live_key_storm.py`` (about 1.5 minutes); skipped when
/usr/bin/chromium or playwright is missing. Screenshots: ``$SCREENSHOT_DIR/live-storm-*.png``.
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import CHROMIUM, SCREENS

RUNS = int(os.environ.get("E2E_STORM_RUNS", "3"))
KEYS_SENT = 150  # keys on schedule: 15 s at 10 a second (then the 5 s burst)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.xdist_group("live_key_storm"),  # the storms run in one module fixture
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed"),
]
pytest.importorskip("playwright.async_api")


@pytest.fixture(scope="module")
def storms(server) -> list[dict]:
    """The storms, one at a time, on the session's app server."""
    import key_storm  # benchmarks/ (on sys.path through conftest)

    # in a thread of its own: its asyncio loop must not meet the loop that Playwright's sync
    # API leaves running in this thread when other browser tests ran first
    with ThreadPoolExecutor(1) as pool:
        run = key_storm.all_runs(server, RUNS, keys=KEYS_SENT, screens=SCREENS, tabs=True)
        results = pool.submit(asyncio.run, run).result()
    with open(SCREENS / "live-storm.txt", "a") as f:
        for r in results:
            f.write(f"run {r['run']}: {r['sent']} keys in {r.get('storm_s')} s, {r}\n")
    return results


@pytest.mark.parametrize("run", range(RUNS))
def test_the_live_page_survives_a_key_storm(storms, run):
    r = storms[run]
    assert "error" not in r, r
    assert r["sent"] == KEYS_SENT, r  # the whole storm reached the page
    assert not r["broken"], r["broken"]
    assert r["alive"] is None, f"the stage did not answer after the storm: {r['alive']}"
