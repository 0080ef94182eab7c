"""The app server's memory for one default race, with and without the low-memory setting.

    .venv/bin/python benchmarks/lowmem_rss.py [--modes normal,low]

For each mode: ``streamlit run app.py`` on 127.0.0.1 (``ALLSEASON_LOW_MEMORY`` unset; ``=1``;
``=1`` with glibc's ``MALLOC_ARENA_MAX=2``, which only works when set before the process starts), one headless chromium opens Home, waits for the page (and the server's warm-up), clicks
"Run the paper's synthetic experiment" (the default race: 7 policies x 5 seeds x 10,000 steps),
waits until the Race page is done, then opens Inside All-Season's first figure; then runs the
default race on scenario seeds 1-4 from the Race page, one after the other. Prints the
server's resident memory (``/proc/PID/status``: VmRSS now, VmHWM the peak so far) after start,
after Home, after the race and after Inside. Numbers, not pass/fail: the docs' Deployment page
quotes them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from appserver import CHROMIUM, IDLE, LAUNCH_ARGS, Server  # noqa: E402

CHART = '[data-testid="stPlotlyChart"]'
EXTRA_RACES = 4  # then the default race on scenario seeds 1-4, one after the other


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
}
LABELS = {"normal": "default", "low": "ALLSEASON_LOW_MEMORY=1",
          "low+arenas": "ALLSEASON_LOW_MEMORY=1 MALLOC_ARENA_MAX=2"}


def measure(mode: str) -> dict[str, tuple[float, float]]:
    from playwright.sync_api import sync_playwright

    for key in ("ALLSEASON_LOW_MEMORY", "MALLOC_ARENA_MAX"):
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
        rows["more"] = mem(srv.pid)
        browser.close()
    for key in ("ALLSEASON_LOW_MEMORY", "MALLOC_ARENA_MAX"):
        os.environ.pop(key, None)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default="normal,low,low+arenas",
                    help=f"comma-separated, of {', '.join(MODES)}")
    args = ap.parse_args(argv)
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print("| mode | after start | Home, warmed up | after the default race | after Inside | "
          "peak for one race | after 4 more races (seeds 1-4) | peak |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in args.modes.split(","):
        r = measure(mode)
        cells = " | ".join(f"{r[k][0]:.0f} MB" for k in ("started", "home", "race", "inside"))
        print(f"| {LABELS[mode]} | {cells} | **{r['inside'][1]:.0f} MB** | {r['more'][0]:.0f} MB "
              f"| **{r['more'][1]:.0f} MB** |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
