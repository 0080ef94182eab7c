"""Load test in real browsers: concurrent Streamlit sessions (headless Debian chromium,
Playwright's asyncio API, one tab each) against ``streamlit run app.py`` on
127.0.0.1, driven by ``benchmarks/load_test.py`` (loaded by path; see its docstring).

Each session opens the Race page with its own scenario in the link (seed, d, K) and runs the
default race settings (7 policies x 5 seeds) on a short horizon; all races start together.
Each session is a tab (its own Streamlit session) of one browser context, so the page's
scripts are fetched once, and a tab whose session is over serves the next one (the single
race's tab a concurrent session, one of theirs the limits probe: a goto, a new session; its
renderer keeps the scripts compiled). The benchmark gives each a context of its own.
Asserted: all finish; every page shows its own scenario (scenario line, URL, the race JSON it
downloads) and its own result (leaderboards differ between sessions and equal the race
recomputed here); no ``stException`` and no error alert; the server's peak RSS stays under a
bound; the per-session limits are enforced and written on the page.

CI runs ``N_SESSIONS`` = 3 sessions at once ($E2E_LOAD_SESSIONS sets more): what is checked
is that sessions racing together each get their own page and result, with no error. How long
ten take, and the server's memory then, is the benchmark's (timings are not asserted in tests):
``python benchmarks/load_test.py --sessions 10 --horizon 1000 --timeout 100`` (the numbers in
docs/security.md, "Many users at once"; all ten finished within 100 s, measured 34-37 s on a
2-core machine shared with other jobs, load 4-16).

Timings and memory go to ``$SCREENSHOT_DIR/load.json`` (default ``/tmp/allseason-screens``),
one session's finished page to ``load-session.png``. Run with
``pytest -m e2e tests/browser/test_load.py -s``; skipped without /usr/bin/chromium or playwright.
"""

from __future__ import annotations

import importlib.util
import json
import os
import time
from pathlib import Path

import pytest

from allseason import api

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
SCREENS = Path(os.environ.get("SCREENSHOT_DIR", "/tmp/allseason-screens"))

N_SESSIONS = int(os.environ.get("E2E_LOAD_SESSIONS", "3"))
HORIZON = 1_000  # steps per race (x 5 seeds x 7 policies); the app allows 50,000
PHASE_TIMEOUT_S = 100  # a bound against a hang (opening the pages, then the races)
# Server (process + children) RSS, measured at horizon 1,000: idle 70 MB, one race 350 MB,
# 10 concurrent races 500 MB (at 2,000 steps: 620 MB). Bounds with a 2-3x margin:
IDLE_RSS_MB = 200
PEAK_RSS_MB = 1_500

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.xdist_group("load"),  # one load run (module fixture) for all its tests
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed (make browser)"
    ),
]
pytest.importorskip("playwright.async_api")
pytest.importorskip("psutil")


def _load_test_module():
    path = ROOT / "benchmarks" / "load_test.py"
    spec = importlib.util.spec_from_file_location("allseason_benchmarks_load_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def report():
    """One load run (server, one race alone, N_SESSIONS at once, the limits probe), without
    the benchmark's warm-up session (a short race of its own before the single one, so that
    the single race's time leaves out the server's first imports and kernel loading): no
    test here reads its result or its time, and it cost a Race page load, a race, a chart
    and a download. The single race pays for the server's warm-up instead."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    lt = _load_test_module()
    t0 = time.perf_counter()
    # in a thread of its own: its asyncio loop must not meet the loop that Playwright's sync
    # API leaves running in this thread when the other browser tests ran first
    from concurrent.futures import ThreadPoolExecutor

    from appserver import NO_PRECOMPUTE

    # the load test's server (started by load_test.run with this environment) does not
    # compute Home's race in its warm-up: every session here races a scenario of its own
    with pytest.MonkeyPatch.context() as mp, ThreadPoolExecutor(1) as pool:
        for name, value in NO_PRECOMPUTE.items():
            mp.setenv(name, value)
        rep = pool.submit(
            lt.run,
            N_SESSIONS,
            horizon=HORIZON,
            timeout_s=PHASE_TIMEOUT_S,
            screenshot=SCREENS / "load-session.png",
            limits="quick",
            warmup=False,  # see above: the single race is the server's first
            tabs=True,  # each session a tab of one context: scripts cached, no state kept
        ).result()
    rep["run_s"] = round(time.perf_counter() - t0, 1)
    rep["bounds"] = {
        "phase_timeout_s": PHASE_TIMEOUT_S,
        "idle_rss_mb": IDLE_RSS_MB,
        "peak_rss_mb": PEAK_RSS_MB,
    }
    (SCREENS / "load.json").write_text(json.dumps(rep, indent=2))
    lt.print_table(rep)
    return rep


def test_all_sessions_finish(report):
    assert report["server_alive_at_end"], report["server_log_tail"]
    assert report["single_race_s"] is not None, report["per_session"][0]
    assert report["finished"] == N_SESSIONS, report["problems"]
    times = [r["race_s"] for r in report["per_session"][1:]]
    assert len(times) == N_SESSIONS and all(t is not None and t < PHASE_TIMEOUT_S for t in times), (
        times
    )
    for r in report["per_session"]:
        assert r["done_text"].startswith(
            f"Done: {HORIZON:,} steps × {api.DEFAULT_SEEDS} seeds × "
            f"{len(api.DEFAULT_POLICIES)} policies"
        ), r


def test_no_error_element_in_any_session(report):
    shown = {
        name: [p for p in probs if "stException" in p or "error alert" in p]
        for name, probs in report["problems"].items()
    }
    assert not any(shown.values()), shown
    assert not report["problems"], report["problems"]  # nor any other failed check


def test_each_session_sees_only_its_own_scenario_and_result(report):
    assert not report["cross_session_problems"], report["cross_session_problems"]
    sessions = report["per_session"]
    assert len({r["query"]["seed"] for r in sessions}) == len(sessions)
    boards = [tuple(sorted(v for _, v in r["leaderboard"])) for r in sessions]
    assert len(set(boards)) == len(sessions), "two sessions show the same leaderboard"
    for r in sessions:
        q = r["query"]
        # the leaderboard is the session's own race, recomputed from the race JSON it got
        assert r["recomputed_mean_rewards"] == pytest.approx(
            sorted(v for _, v in r["leaderboard"]), abs=1e-9
        ), r["session"]
        assert f"seed={q['seed']}" in r["url_after"] and f"d={q['d']}" in r["url_after"]


def test_server_memory_stays_bounded(report):
    peak = report["peak_rss_mb"]
    assert peak["idle"] < IDLE_RSS_MB, peak
    assert peak["concurrent"] < PEAK_RSS_MB, peak
    assert report["rss_at_end_mb"] <= peak["concurrent"] + 50, report["rss_at_end_mb"]


def test_per_session_limits_are_enforced_and_shown(report):
    lim = report["limits"]
    assert not lim["problems"], lim
    assert lim["limits_caption_visible"]
    for text in ("50,000 steps", "10 seeds", "11 policies", "1,000,000"):
        assert text in lim["limits_caption"], lim["limits_caption"]
    assert lim["seeds_slider_max"] == "10"
    assert "50,000" in lim["over_app_limit_message"]
    assert "1,000,000" in lim["over_budget_message"] and not lim["over_budget_started"]


def test_screenshot_of_a_finished_race(report):
    path = SCREENS / "load-session.png"
    assert path.exists() and path.stat().st_size > 20_000
