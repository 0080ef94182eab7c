"""How long "Your deployed bandit" takes to draw a long decision log in chromium (issue 32's
evidence): a synthetic log of ``--decisions`` decisions (benchmarks/deployed_page.py's
:func:`write_fake_log`) in a folder, ``streamlit run app.py`` started with
ALLSEASON_DEPLOYED_DIR on it (benchmarks/appserver.py), then the page opened ``--visits``
times, each in a fresh browser context (a new Streamlit session that also loads plotly.js):
the first visit reads the log (cold), the later ones find the server's reader warm. Each
visit is timed from ``goto`` to its three figures drawn; the server's and the browser's CPU
seconds are reported beside the wall times, and the server's resident memory after each.

    python benchmarks/deployed_draw.py [--decisions 1000000] [--visits 3] [--out FILE.json]
    python benchmarks/deployed_draw.py --root /work/main  # another checkout's app (a pair)

tests/browser/test_deployed.py checks the page on a shorter log within a generous bound; this
is the measured run at 10**6 decisions. Needs /usr/bin/chromium and playwright.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from appserver import CHROMIUM, IDLE, LAUNCH_ARGS, Server, browser_cpu_seconds, cpu_seconds
from deployed_page import write_fake_log

ENV = "ALLSEASON_DEPLOYED_DIR"
VIEWPORT = {"width": 1280, "height": 1600}
FIGURES = '[data-testid="stPlotlyChart"] .main-svg'


def drawn(page, url: str) -> float:
    """Seconds from opening the page until its three figures are drawn."""
    t0 = time.perf_counter()
    page.goto(url)
    page.locator(FIGURES).nth(2).wait_for()
    return time.perf_counter() - t0


def measure(
    n_decisions: int,
    visits: int = 3,
    batch_size: int = 1,
    root=None,
    screenshot=None,
    home_first: float = 0.0,
) -> dict:
    """Write the log, start the server (of the checkout ``root``, default this one) on it,
    time the visits; returns the report. ``screenshot``: a PNG path for the last visit's
    whole page (to look at what was timed). ``home_first``: a first visitor opens Home and
    leaves, then the visits start that many seconds later (the server reads the folder ahead
    from the first visit to any page: app.py, ``deployed.read_ahead``)."""
    import psutil
    from playwright.sync_api import sync_playwright

    out: dict = {"decisions": n_decisions, "batch_size": batch_size, "visits": []}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        write_fake_log(tmp, n_decisions, batch_size=batch_size)
        out["write_s"] = round(time.perf_counter() - t0, 2)
        old = os.environ.get(ENV)
        os.environ[ENV] = tmp
        try:
            with Server(root=root) as srv, sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS
                )
                if home_first:
                    context = browser.new_context(viewport=VIEWPORT)
                    page = context.new_page()
                    page.set_default_timeout(600_000)
                    page.goto(srv.url)
                    page.wait_for_selector(IDLE)
                    context.close()
                    time.sleep(home_first)
                    out["home_first_s"] = home_first
                for k in range(visits):
                    server0, browser0 = cpu_seconds(srv.pid), browser_cpu_seconds()
                    context = browser.new_context(viewport=VIEWPORT)
                    page = context.new_page()
                    page.set_default_timeout(600_000)
                    wall = drawn(page, f"{srv.url}/Deployed")
                    page.wait_for_selector(IDLE)
                    text = page.locator('[data-testid="stMain"]').inner_text()
                    out["visits"].append(
                        {
                            "visit": "cold" if k == 0 and not home_first else "warm",
                            "wall_s": round(wall, 2),
                            "server_cpu_s": round(cpu_seconds(srv.pid) - server0, 2),
                            "browser_cpu_s": round(browser_cpu_seconds() - browser0, 2),
                            "all_resolved_shown": f"{n_decisions:,} decisions resolved" in text,
                            "server_rss_mb": round(psutil.Process(srv.pid).memory_info().rss / 1e6),
                        }
                    )
                    if screenshot and k == visits - 1:
                        page.mouse.move(5, 5)
                        page.screenshot(path=str(screenshot), full_page=True)
                    context.close()
                    time.sleep(1.0)  # its renderer gone before the next visit's CPU is read
                browser.close()
        finally:
            if old is None:
                os.environ.pop(ENV, None)
            else:
                os.environ[ENV] = old
    out["load_average"] = os.getloadavg()
    out["root"] = str(root or "this checkout")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--decisions", type=int, default=1_000_000)
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--visits", type=int, default=3)
    ap.add_argument("--out", default=None, help="write the report as JSON here")
    ap.add_argument(
        "--root", default=None, help="the checkout whose app is measured (default: this one)"
    )
    ap.add_argument("--screenshot", default=None, help="a PNG of the last visit's whole page")
    ap.add_argument(
        "--home-first",
        type=float,
        default=0.0,
        help="a visitor opens Home first; the visits start this many seconds later",
    )
    args = ap.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found: run `make browser`", file=sys.stderr)
        return 2
    rep = measure(
        args.decisions, args.visits, args.batch_size, args.root, args.screenshot, args.home_first
    )
    n = rep["decisions"]
    print(
        f"{n:,} decisions (batch size {rep['batch_size']}), log written in "
        f"{rep['write_s']} s; load average {rep['load_average']}; app of {rep['root']}"
    )
    for v in rep["visits"]:
        print(
            f"  {v['visit']:5} drawn in {v['wall_s']:6.2f} s wall; CPU: server "
            f"{v['server_cpu_s']} s, browser {v['browser_cpu_s']} s; server RSS "
            f"{v['server_rss_mb']} MB; "
            f"'{n:,} decisions resolved' shown: {v['all_resolved_shown']}"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(rep, indent=2))
    return 0 if all(v["all_resolved_shown"] for v in rep["visits"]) else 1


if __name__ == "__main__":
    sys.exit(main())
