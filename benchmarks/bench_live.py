"""The Live page in a real browser (Debian chromium, Playwright) against ``streamlit run``.

    .venv/bin/python benchmarks/bench_live.py [--repeat 3] [--show-seconds 60]
    .venv/bin/python benchmarks/bench_live.py --minutes 10      # the memory run alone

Numbers, not pass/fail; the median of ``--repeat`` runs, each with the machine's load
average (``os.getloadavg``: other work on a 2-core machine slows every number). JSON on
stdout (and ``$SCREENSHOT_DIR/bench_live.json``), then a markdown table.

* **show**: a scripted show of ``--show-seconds`` at the default speed (40 steps/s), six
  switches by the keyboard -- N (new season 2), 1 (return), N (new season 3), 2, 3, 1
  (returns): two new seasons and four returns. Per show:
  - ``fps``: frames per second of the stage, counted in the page: every change of the
    status line's step (one per frame) and every ``plotly_afterplot`` of the reward-rate
    figure (each is a redraw of that figure);
  - ``switch_s``: key press (``keydown`` in the page) → the status line shows the new
    season (the first frame under it), median of the six switches;
  - ``server_cpu_s_per_min``: the server process's CPU seconds (user + system, psutil)
    over the show, per minute;
  - ``browser_cpu_s_per_min``: the same for the chromium processes.
* **paused**, then **closed**: the server's CPU seconds over 10 s with the show paused (the
  tab open), then over the 10 s after the tab is closed (the stage's reruns are asked for
  by the browser's timer: nothing should be left).
* **five**: five live sessions at once (five browser contexts), ``--multi-seconds`` each:
  the frames per second of each, the server's and the browsers' CPU seconds per minute.
* **memory** (``--minutes M``): one show at full speed (400 steps/s) for M minutes; the
  server's RSS at 1, 5 and M minutes (and every minute).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import psutil
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from appserver import CHROMIUM, LAUNCH_ARGS, LOG_DIR, Server, browser_cpu_seconds, cpu_seconds

STATUS = ".live-status"
SCRIPT = ("n", "1", "n", "2", "3", "1")  # 2 new seasons, 4 returns
SEASON_AFTER = {0: 2, 1: 1, 2: 3, 3: 2, 4: 3, 5: 1}
# counters kept by the page itself: frames (status step changes), redraws of the first
# figure (plotly_afterplot), and the time of each key press and of each season change
PROBE = """() => {
  if (window.__live) return;
  const live = window.__live = {frames: 0, redraws: 0, keys: [], seasons: [], step: null,
                                season: null};
  window.addEventListener('keydown', e => live.keys.push([e.key, performance.now()]), true);
  const look = () => {
    const s = document.querySelector('.live-status');
    if (s) {
      if (s.dataset.step !== live.step) { live.step = s.dataset.step; live.frames++; }
      if (s.dataset.season !== live.season) {
        live.season = s.dataset.season; live.seasons.push([live.season, performance.now()]);
      }
    }
    for (const gd of document.querySelectorAll('.st-key-live_rate .js-plotly-plot')) {
      if (!gd.__counted && gd.on) { gd.__counted = true;
        gd.on('plotly_afterplot', () => { live.redraws++; }); }
    }
  };
  new MutationObserver(look).observe(document.body, {subtree: true, childList: true,
                                                      attributes: true, characterData: true});
  look();
}"""
FIRST_PLOT = "document.querySelector('[data-testid=\"stPlotlyChart\"] .js-plotly-plot')"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def open_live(browser, url: str, speed: int | None = None):
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(90_000)
    pg.goto(f"{url}/Live" + (f"?speed={speed}" if speed else ""))
    pg.wait_for_selector(STATUS)
    pg.evaluate(PROBE)
    pg.wait_for_function(f"!!{FIRST_PLOT}")
    pg.wait_for_timeout(1000)
    return context, pg


def counters(pg) -> dict:
    return pg.evaluate("JSON.parse(JSON.stringify(window.__live))")


def show(browser, srv: Server, seconds: float) -> dict:
    """One scripted show; its numbers."""
    context, pg = open_live(browser, srv.url)
    c0, s0, b0, t0 = counters(pg), cpu_seconds(srv.pid), browser_cpu_seconds(), time.monotonic()
    gap = seconds / (len(SCRIPT) + 1)
    for i, key in enumerate(SCRIPT):
        pg.wait_for_timeout(int(gap * 1000))
        pg.keyboard.press(key)
        pg.wait_for_function(
            f"document.querySelector('{STATUS}').dataset.season === '{SEASON_AFTER[i]}'",
            timeout=20_000,
        )
    pg.wait_for_timeout(int(max(seconds - (time.monotonic() - t0), 0) * 1000))
    c1, s1, b1, t1 = counters(pg), cpu_seconds(srv.pid), browser_cpu_seconds(), time.monotonic()
    minutes = (t1 - t0) / 60
    # each key press -> the first season change after it
    switch = []
    for _key, at in c1["keys"]:
        after = [t for s, t in c1["seasons"] if t >= at]
        if after:
            switch.append((after[0] - at) / 1000)
    errors = pg.locator('[data-testid="stException"]').count()
    step = int(pg.evaluate(f"document.querySelector('{STATUS}').dataset.step"))
    # paused (the tab still open): the server's CPU over 10 s
    pg.keyboard.press("p")
    pg.wait_for_function(f"document.querySelector('{STATUS}').textContent.includes('paused')")
    pg.wait_for_timeout(500)
    p0 = cpu_seconds(srv.pid)
    time.sleep(10)
    paused = cpu_seconds(srv.pid) - p0
    context.close()
    # the tab is closed: the server's CPU over the next 10 s
    pg_closed_cpu0 = cpu_seconds(srv.pid)
    time.sleep(10)
    closed = cpu_seconds(srv.pid) - pg_closed_cpu0
    return {
        "fps": (c1["frames"] - c0["frames"]) / (t1 - t0),
        "redraws_per_s": (c1["redraws"] - c0["redraws"]) / (t1 - t0),
        "switch_s": statistics.median(switch) if switch else None,
        "switch_all_s": [round(s, 3) for s in switch],
        "server_cpu_s_per_min": (s1 - s0) / minutes,
        "browser_cpu_s_per_min": (b1 - b0) / minutes,
        "closed_server_cpu_s_in_10s": closed,
        "paused_server_cpu_s_in_10s": paused,
        "steps_played": step,
        "exceptions": errors,
        "load": load(),
    }


def five(browser, srv: Server, seconds: float, n: int = 5) -> dict:
    """``n`` live sessions at once for ``seconds``."""
    pages = [open_live(browser, srv.url) for _ in range(n)]
    c0 = [counters(pg) for _, pg in pages]
    s0, b0, t0 = cpu_seconds(srv.pid), browser_cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    # Playwright's sync API: read the counters one page at a time (each read is quick)
    c1 = [counters(pg) for _, pg in pages]
    s1, b1, t1 = cpu_seconds(srv.pid), browser_cpu_seconds(), time.monotonic()
    for context, _ in pages:
        context.close()
    fps = [(b["frames"] - a["frames"]) / (t1 - t0) for a, b in zip(c0, c1)]
    return {
        "fps_each": [round(f, 2) for f in fps],
        "fps_min": min(fps),
        "server_cpu_s_per_min": (s1 - s0) / ((t1 - t0) / 60),
        "browser_cpu_s_per_min": (b1 - b0) / ((t1 - t0) / 60),
        "load": load(),
    }


def memory(browser, srv: Server, minutes: int) -> dict:
    """One show at full speed for ``minutes``; the server's RSS every minute."""
    context, pg = open_live(browser, srv.url, speed=400)
    rss = {0: psutil.Process(srv.pid).memory_info().rss / 2**20}
    keys = "n1n23n1"
    for m in range(1, minutes + 1):
        for k in range(6):  # a switch every 10 s; the show never idles (a control is used)
            pg.wait_for_timeout(10_000)
            pg.keyboard.press(keys[(6 * m + k) % len(keys)])
        rss[m] = psutil.Process(srv.pid).memory_info().rss / 2**20
        print(f"minute {m}: RSS {rss[m]:.1f} MiB, load {load()}", file=sys.stderr, flush=True)
    step = int(pg.evaluate(f"document.querySelector('{STATUS}').dataset.step"))
    context.close()
    return {
        "rss_mib": {str(k): round(v, 1) for k, v in rss.items()},
        "steps_played": step,
        "load": load(),
    }


def med(rows: list[dict], key: str):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--show-seconds", type=float, default=60)
    ap.add_argument("--multi-seconds", type=float, default=30)
    ap.add_argument(
        "--minutes", type=int, default=0, help="run the memory test alone, for this many minutes"
    )
    args = ap.parse_args(argv)
    out: dict = {"load_before": load()}
    with Server() as srv, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        warm, pg = open_live(browser, srv.url)  # the first visitor warms the kernels
        pg.wait_for_timeout(3000)
        warm.close()
        if args.minutes:
            out["memory"] = memory(browser, srv, args.minutes)
        else:
            shows = []
            for i in range(args.repeat):
                shows.append(show(browser, srv, args.show_seconds))
                print(f"show {i + 1}: {json.dumps(shows[-1])}", file=sys.stderr, flush=True)
            multi = []
            for i in range(args.repeat):
                multi.append(five(browser, srv, args.multi_seconds))
                print(f"five {i + 1}: {json.dumps(multi[-1])}", file=sys.stderr, flush=True)
            out["shows"], out["five"] = shows, multi
            out["median"] = {
                "fps": med(shows, "fps"),
                "redraws_per_s": med(shows, "redraws_per_s"),
                "switch_s": med(shows, "switch_s"),
                "server_cpu_s_per_min": med(shows, "server_cpu_s_per_min"),
                "browser_cpu_s_per_min": med(shows, "browser_cpu_s_per_min"),
                "closed_server_cpu_s_in_10s": med(shows, "closed_server_cpu_s_in_10s"),
                "paused_server_cpu_s_in_10s": med(shows, "paused_server_cpu_s_in_10s"),
                "five_fps_min": med(multi, "fps_min"),
                "five_server_cpu_s_per_min": med(multi, "server_cpu_s_per_min"),
                "five_browser_cpu_s_per_min": med(multi, "browser_cpu_s_per_min"),
            }
        browser.close()
    out["load_after"] = load()
    text = json.dumps(out, indent=2)
    print(text)
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    (LOG_DIR / ("bench_live_memory.json" if args.minutes else "bench_live.json")).write_text(text)
    if "median" in out:
        m = out["median"]
        print(f"\n| measure | median of {args.repeat} | target |\n|---|---|---|")
        rows = [
            ("frames per second (status line)", m["fps"], "≥ 4"),
            ("redraws per second (reward figure)", m["redraws_per_s"], ""),
            ("key press → first frame under the new season (s)", m["switch_s"], "≤ 0.5"),
            ("server CPU s per live session per minute", m["server_cpu_s_per_min"], ""),
            ("browser CPU s per minute", m["browser_cpu_s_per_min"], ""),
            (
                "server CPU s in 10 s, the show paused (tab open)",
                m["paused_server_cpu_s_in_10s"],
                "≈ 0",
            ),
            (
                "server CPU s in the 10 s after the tab closed",
                m["closed_server_cpu_s_in_10s"],
                "≈ 0",
            ),
            ("5 sessions: frames per second, slowest", m["five_fps_min"], "≥ 2"),
            ("5 sessions: server CPU s per minute", m["five_server_cpu_s_per_min"], ""),
            ("5 sessions: browsers' CPU s per minute", m["five_browser_cpu_s_per_min"], ""),
        ]
        for name, v, target in rows:
            print(f"| {name} | {v:.3g} | {target} |" if v is not None else f"| {name} | — | |")
        print(f"\nload average before {out['load_before']}, after {out['load_after']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
