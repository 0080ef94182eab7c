"""Where people wait in the app: click→done times in a real browser (Debian chromium).

    .venv/bin/python benchmarks/bench_app.py [--repeat 3] [--parts home,race]

Measures, each ``--repeat`` times, median printed and written to ``$SCREENSHOT_DIR/bench_app.json``
with the machine's load average (``os.getloadavg``) before and after (other work on a 2-core
machine slows every number: compare runs made at a similar load):

* **home_run**: Home's "Run the paper's synthetic experiment", click→done. A fresh server per
  repeat (``streamlit run app.py`` alone, the first page load is the first visitor's), so
  nothing is cached.
* **race_default**: the Race page, a new session opened with ``?seed=N`` (N new each time, so
  the race is not a cache hit), "Run race" click→done. The default race otherwise: 7 policies
  × 5 seeds × 10,000 steps. The target is 1.0 s.
  With it, the CPU seconds that click cost the server process and the browser (its chromium
  processes): the work behind the wait, which other load changes far less than the wait.
* **inside_first_figure**: after that race, the sidebar link to Inside All-Season, click→its
  first figure drawn.

"Done" is the same for any version of the app: the "Done:" note is shown, the script is idle
and every chart on the page is drawn (has its title). The click comes once the page is idle
and its first chart drawn (as a person sees it before pressing): a tab still drawing its
first chart when the click comes would add that to the wait.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from appserver import CHROMIUM, IDLE, LAUNCH_ARGS, LOG_DIR, Server, browser_cpu_seconds, cpu_seconds

SCREENS = LOG_DIR
CHART = '[data-testid="stPlotlyChart"]'
TIMEOUT_MS = 60_000
TARGET_RACE_S = 1.0
# every chart drawn (a Plotly title inside it) and the script idle
ALL_DRAWN = """(sel) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const charts = [...document.querySelectorAll(sel)];
  return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
    && charts.length >= 2 && charts.every(c => c.querySelector('.main-svg .gtitle'));
}"""


def wait_idle(pg) -> None:
    pg.wait_for_selector("h1")
    pg.wait_for_timeout(250)
    pg.wait_for_selector(IDLE)
    pg.wait_for_timeout(600)


def new_page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 1400})
    pg = context.new_page()
    pg.set_default_timeout(TIMEOUT_MS)
    return context, pg


def page_drawn(pg) -> None:
    """Until the page is idle and its first chart drawn (what a person sees before a click)."""
    wait_idle(pg)
    pg.locator(f"{CHART} .main-svg").first.wait_for()
    pg.wait_for_timeout(300)


def race_done(pg) -> None:
    """Until the race has finished: its "Done:" note shown, the script idle, every chart on
    the page drawn."""
    pg.get_by_text("Done:", exact=False).first.wait_for()
    pg.wait_for_function(ALL_DRAWN, arg=CHART, polling=50)  # not every frame: less work


def home_run(browser) -> float:
    with Server() as srv:
        url = srv.url
        context, pg = new_page(browser)
        try:
            pg.goto(url)
            page_drawn(pg)
            button = pg.get_by_role("button", name="Run the paper's synthetic experiment")
            t0 = time.perf_counter()
            button.click()
            race_done(pg)
            return time.perf_counter() - t0
        finally:
            context.close()


def race_and_inside(browser, srv: Server, seed: int, work: dict) -> tuple[float, float]:
    """(race click→done, Inside click→first figure); appends to ``work`` the CPU seconds the
    race click cost the server and the browser (every chromium process): the work behind the
    wait, which other load changes far less than the wait itself."""
    url = srv.url
    context, pg = new_page(browser)
    try:
        pg.goto(f"{url}/Race?seed={seed}")
        page_drawn(pg)
        cpu0, browser0 = cpu_seconds(srv.pid), browser_cpu_seconds()
        t0 = time.perf_counter()
        pg.get_by_role("button", name="Run race").click()
        race_done(pg)
        race = time.perf_counter() - t0
        work.setdefault("race_server_cpu_s", []).append(cpu_seconds(srv.pid) - cpu0)
        work.setdefault("race_browser_cpu_s", []).append(browser_cpu_seconds() - browser0)
        wait_idle(pg)
        t0 = time.perf_counter()
        pg.locator('[data-testid="stSidebar"] a[href$="Inside_All-Season"]').first.click()
        pg.wait_for_selector("h1:has-text('Inside All-Season')")
        pg.locator(f"{CHART} .main-svg").first.wait_for()
        inside = time.perf_counter() - t0
        wait_idle(pg)
        return race, inside
    finally:
        context.close()


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--parts",
        default="home,race",
        help="comma-separated: home (Home's run, a fresh server each time), race "
        "(the Race page's run, then Inside All-Season)",
    )
    ap.add_argument("--label", default="", help="stored with the numbers (e.g. before/after)")
    args = ap.parse_args(argv)
    parts = {p.strip() for p in args.parts.split(",") if p.strip()}
    times: dict[str, list[float]] = {}
    work: dict[str, list[float]] = {}
    load_before = load()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            if "home" in parts:
                times["home_run"] = [home_run(browser) for _ in range(args.repeat)]
            if "race" in parts:
                times["race_default"], times["inside_first_figure"] = [], []
                with Server() as srv:
                    url = srv.url
                    # a first visitor loads the Race page once (as anyone would before running)
                    context, pg = new_page(browser)
                    pg.goto(f"{url}/Race")
                    page_drawn(pg)
                    context.close()
                    for i in range(args.repeat):
                        race, inside = race_and_inside(browser, srv, 101 + i, work)
                        times["race_default"].append(race)
                        times["inside_first_figure"].append(inside)
        finally:
            browser.close()
    out = {
        "label": args.label,
        "cores": os.cpu_count(),
        "repeat": args.repeat,
        "load_avg_1_5_15_before": load_before,
        "load_avg_1_5_15_after": load(),
        "median_s": {k: round(statistics.median(v), 2) for k, v in times.items()},
        "runs_s": {k: [round(x, 2) for x in v] for k, v in times.items()},
        "race_cpu_median_s": {k: round(statistics.median(v), 2) for k, v in work.items()},
        "race_cpu_runs_s": {k: [round(x, 2) for x in v] for k, v in work.items()},
    }
    SCREENS.mkdir(parents=True, exist_ok=True)
    path = SCREENS / "bench_app.json"
    path.write_text(json.dumps(out, indent=2))
    for k, v in out["median_s"].items():
        print(f"{k:<22} median {v:6.2f} s   runs {out['runs_s'][k]}")
    if "race_default" in out["median_s"]:
        race = out["median_s"]["race_default"]
        print(
            f"RACE click->done: median {race:.2f} s (target <= {TARGET_RACE_S} s: "
            f"{'met' if race <= TARGET_RACE_S else 'NOT met'})"
        )
    for k, v in out["race_cpu_median_s"].items():
        print(f"{k:<27} median {v:6.2f} CPU-s   runs {out['race_cpu_runs_s'][k]}")
    print(
        f"load average (1, 5, 15 min): before {out['load_avg_1_5_15_before']}, "
        f"after {out['load_avg_1_5_15_after']} on {out['cores']} cores"
    )
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
