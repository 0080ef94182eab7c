"""The app server's memory for one default race, with and without the low-memory setting.

    .venv/bin/python benchmarks/lowmem_rss.py [--modes normal,low,low+ttl,ttl,low+arenas]

For each mode (``MODES``: the server's environment; ``ALLSEASON_LOW_MEMORY=1`` and, for a
closed tab's session, Streamlit's ``STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL``; glibc's
``MALLOC_ARENA_MAX``, which only acts when set before the process starts): ``streamlit run
app.py`` on 127.0.0.1; one headless chromium opens Home, waits for the page (and the server's
warm-up), clicks "Run the paper's synthetic experiment" (the default race: 7 policies x 5
seeds x 10,000 steps), waits until the Race page is done, then opens Inside All-Season's first
figure; then runs the default race on scenario seeds 1-4 from the Race page, one after the
other (each link a new Streamlit session), and waits 10 s. Prints the server's resident memory
(``/proc/PID/status``: VmRSS at each stage, VmHWM the peak so far). Numbers, not pass/fail:
docs/deployment.md quotes them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from appserver import CHROMIUM, IDLE, LAUNCH_ARGS, Server

CHART = '[data-testid="stPlotlyChart"]'
EXTRA_RACES = 4  # then the default race on scenario seeds 1-4, one after the other
SETTLE = 10  # seconds before the last reading (each new link is a new session; old ones close)


def mem(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of ``pid`` in MB."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0]) / 1024
    return out["VmRSS"], out["VmHWM"]


def idle(pg) -> None:
    pg.wait_for_selector("h1")
    pg.wait_for_timeout(250)
    pg.wait_for_selector(IDLE)
    pg.wait_for_timeout(500)


MODES = {  # the server's environment per mode
    "normal": {},
    "low": {"ALLSEASON_LOW_MEMORY": "1"},
    "low+arenas": {"ALLSEASON_LOW_MEMORY": "1", "MALLOC_ARENA_MAX": "2"},
    # Streamlit keeps a closed tab's session (and what its last run drew) for 120 s by default
    "low+ttl": {"ALLSEASON_LOW_MEMORY": "1", "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "5"},
    "ttl": {"STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "5"},
}
ENV_KEYS = sorted({k for env in MODES.values() for k in env})
LABELS = {
    "normal": "default",
    "low": "ALLSEASON_LOW_MEMORY=1",
    "low+arenas": "ALLSEASON_LOW_MEMORY=1 MALLOC_ARENA_MAX=2",
    "low+ttl": "ALLSEASON_LOW_MEMORY=1 STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL=5",
    "ttl": "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL=5",
}


def measure(mode: str) -> dict[str, tuple[float, float]]:
    from playwright.sync_api import sync_playwright

    for key in ENV_KEYS:
        os.environ.pop(key, None)
    os.environ.update(MODES[mode])
    rows = {}
    with Server() as srv, sync_playwright() as p:
        rows["started"] = mem(srv.pid)
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 1400})
        pg.set_default_timeout(120_000)
        pg.goto(srv.url)
        idle(pg)
        pg.locator(CHART).first.wait_for()
        time.sleep(8)  # the warm-up thread (kernels; in the normal mode also Home's race)
        rows["home"] = mem(srv.pid)
        pg.get_by_role("button", name="Run the paper's synthetic experiment").click()
        pg.get_by_text("Done:", exact=False).first.wait_for()
        pg.locator(".gtitle", has_text="each true state").first.wait_for()
        idle(pg)
        rows["race"] = mem(srv.pid)
        pg.locator('[data-testid="stSidebar"] a[href$="Inside_All-Season"]').first.click()
        pg.wait_for_selector("h1:has-text('Inside All-Season')")
        pg.locator(f"{CHART} .main-svg").first.wait_for()
        idle(pg)
        rows["inside"] = mem(srv.pid)
        for seed in range(1, 1 + EXTRA_RACES):  # more races: what the cache keeps
            pg.goto(f"{srv.url}/Race?seed={seed}")
            idle(pg)
            pg.get_by_role("button", name="Run race").click()
            pg.get_by_text("Done:", exact=False).first.wait_for()
            pg.locator(".gtitle", has_text="each true state").first.wait_for()
            idle(pg)
        time.sleep(SETTLE)
        rows["more"] = mem(srv.pid)
        browser.close()
    for key in ENV_KEYS:
        os.environ.pop(key, None)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--modes", default="normal,low,low+ttl", help=f"comma-separated, of {', '.join(MODES)}"
    )
    args = ap.parse_args(argv)
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(
        "| mode | after start | Home, warmed up | after the default race | after Inside | "
        "peak for one race | after 4 more races (seeds 1-4) | peak |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        r = measure(mode)
        cells = " | ".join(f"{r[k][0]:.0f} MB" for k in ("started", "home", "race", "inside"))
        print(
            f"| {LABELS[mode]} | {cells} | **{r['inside'][1]:.0f} MB** | {r['more'][0]:.0f} MB "
            f"| **{r['more'][1]:.0f} MB** |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
