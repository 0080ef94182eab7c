"""Two clicks in a real browser (Debian chromium), click -> result element, for one checkout or a
before/after pair measured in turn:

    .venv/bin/python benchmarks/ui_clicks.py [--repeat 5] [--root OTHER_CHECKOUT --root .]

* **race_click**: the Race page in a new session opened with ``?seed=N`` (N new each repeat, the
  same N for every root: the same race, never a cache hit), "Run race" click -> the "Done:"
  note shown, the script idle and every chart drawn (as ``bench_app.py``'s race_default).
* **estimator_switch**: the Your data page with its Open-Bandit-style example log evaluated
  once; then a click on another option of the Estimator radio -> the figure's title names the
  new estimator and the script is idle.

Every root gets its own ``streamlit run app.py`` (on 127.0.0.1, a free port, that checkout's
``allseason``); the repeats alternate between the roots (A, B, A, B, ...), so a change of the
machine's load touches both alike. Medians and every run are printed with the load average
(2 shared cores: compare the pair, not numbers taken at other times).
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
from appserver import CHROMIUM, LAUNCH_ARGS, LOG_DIR, ROOT, Server
from bench_app import new_page, page_drawn, race_done, wait_idle

RADIO = '[data-testid="stRadio"]'
TIMEOUT_MS = 300_000  # a loaded machine (load 20 on 2 cores) takes minutes for a page


def _new_page(browser):
    context, pg = new_page(browser)
    pg.set_default_timeout(TIMEOUT_MS)
    return context, pg


def _note(root: str, what: str, seconds: float) -> None:
    print(f"{what:<18} {seconds:7.3f} s  {root}", flush=True)


def race_click(browser, url: str, seed: int) -> float:
    context, pg = _new_page(browser)
    try:
        pg.goto(f"{url}/Race?seed={seed}")
        page_drawn(pg)
        t0 = time.perf_counter()
        pg.get_by_role("button", name="Run race").click()
        race_done(pg)
        return time.perf_counter() - t0
    finally:
        context.close()


def open_your_data(browser, url: str):
    """A session on Your data with the example log evaluated (the Estimator radio shown)."""
    context, pg = _new_page(browser)
    pg.goto(f"{url}/Your_data")
    wait_idle(pg)
    pg.get_by_role("button", name="An Open-Bandit-style click log").click()
    pg.locator(RADIO).filter(has_text="Estimator").first.wait_for(timeout=1_200_000)
    pg.locator(".gtitle", has_text="Estimated mean reward per step").first.wait_for()
    wait_idle(pg)
    return context, pg


def estimator_switch(pg, option: str) -> float:
    """Click the Estimator radio's ``option``; seconds until the figure's title names it and
    the script is idle."""
    radio = pg.locator(RADIO).filter(has_text="Estimator").first
    label = radio.locator("label").filter(has_text=option).first
    t0 = time.perf_counter()
    label.click()
    pg.locator(".gtitle", has_text=f"per step, {option}").first.wait_for()
    pg.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
    return time.perf_counter() - t0


TOUR_STEPS = 7
TOUR_BAR_S = 4.0


def tour_steps(browser, url: str) -> list[float]:
    """Seconds of each "Next" click of the guided tour, step 1 -> 7, in a new session."""
    context, pg = _new_page(browser)
    try:
        pg.goto(f"{url}/Guided_tour")
        _tour_wait(pg, 1)
        out = []
        for k in range(1, TOUR_STEPS):
            t0 = time.perf_counter()
            pg.get_by_role("button", name="Next").click()
            _tour_wait(pg, k + 1)
            out.append(time.perf_counter() - t0)
        return out
    finally:
        context.close()


def _tour_wait(pg, k: int) -> None:
    pg.locator("h1", has_text=f"Step {k} of {TOUR_STEPS}").first.wait_for()
    wait_idle(pg)
    pg.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for()
    wait_idle(pg)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--root", action="append", help="a checkout to serve (repeatable)")
    ap.add_argument("--parts", default="race,estimator,tour")
    args = ap.parse_args(argv)
    roots = [str(Path(r).resolve()) for r in (args.root or [str(ROOT)])]
    parts = {p.strip() for p in args.parts.split(",")}
    times = {r: {"race_click": [], "estimator_switch": [], "tour_step": []} for r in roots}
    load_before = [round(x, 2) for x in os.getloadavg()]
    servers = [Server(root=r) for r in roots]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        try:
            for srv in servers:
                srv.__enter__()
            # a first visitor on each server runs a race, untimed: the server's warm-up (the
            # kernels; compiled first if that checkout has no numba cache yet) is done
            for srv in servers if "race" in parts else ():
                context, pg = _new_page(browser)
                pg.set_default_timeout(900_000)
                pg.goto(f"{srv.url}/Race?seed=200")
                page_drawn(pg)
                pg.get_by_role("button", name="Run race").click()
                race_done(pg)
                context.close()
            if "race" in parts:
                for i in range(args.repeat):
                    for root, srv in zip(roots, servers):
                        times[root]["race_click"].append(race_click(browser, srv.url, 201 + i))
                        _note(root, "race_click", times[root]["race_click"][-1])
            if "estimator" in parts:
                sessions = {r: open_your_data(browser, s.url) for r, s in zip(roots, servers)}
                options = ["IPS", "replay"]  # the example log is uniform: replay first
                for i in range(args.repeat):
                    for root in roots:
                        pg = sessions[root][1]
                        times[root]["estimator_switch"].append(estimator_switch(pg, options[i % 2]))
                        _note(root, "estimator_switch", times[root]["estimator_switch"][-1])
                for context, _ in sessions.values():
                    context.close()
            if "tour" in parts:
                for _ in range(args.repeat):
                    for root, srv in zip(roots, servers):
                        steps = tour_steps(browser, srv.url)
                        times[root]["tour_step"].extend(steps)
                        _note(root, "tour_step (max)", max(steps))
        finally:
            browser.close()
            for srv in servers:
                srv.__exit__(None, None, None)
    out = {
        "cores": os.cpu_count(),
        "repeat": args.repeat,
        "load_avg_1_5_15_before": load_before,
        "load_avg_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        "roots": {
            r: {
                k: {"median_s": round(statistics.median(v), 3), "runs_s": [round(x, 3) for x in v]}
                for k, v in t.items()
                if v
            }
            for r, t in times.items()
        },
    }
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    path = LOG_DIR / "ui_clicks.json"
    path.write_text(json.dumps(out, indent=2))
    for r, t in out["roots"].items():
        print(r)
        for k, v in t.items():
            print(f"  {k:<18} median {v['median_s']:6.3f} s   runs {v['runs_s']}")
        if "tour_step" in t:
            worst = max(t["tour_step"]["runs_s"])
            verdict = "within" if worst <= TOUR_BAR_S else "ABOVE"
            print(f"  tour_step: slowest {worst:.2f} s, {verdict} the {TOUR_BAR_S} s bar")
    print(
        f"load average (1, 5, 15 min): before {out['load_avg_1_5_15_before']}, after "
        f"{out['load_avg_1_5_15_after']} on {out['cores']} cores; written to {path}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
