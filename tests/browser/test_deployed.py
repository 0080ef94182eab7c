"""The page "Your deployed bandit" in a real browser (Debian's chromium, Playwright), on a
server started with ALLSEASON_DEPLOYED_DIR: a long log (10**5 decisions, one batch each)
drawn in full (its time to draw, cold and with the server's reader warm, within a generous
bound), a bad upload as one error line, never a traceback; screenshots for a person to look
at (``$SCREENSHOT_DIR/deployed-*.png``). The time to draw 10**6 decisions (issue 32) is
measured by ``benchmarks/deployed_draw.py``, the reading and the figures alone by
``benchmarks/deployed_page.py``."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import CHROMIUM, SCREENS
from deployed_page import write_fake_log

from tests.browser.test_pages import check, go, shot, wait_idle

VIEWPORT = {"width": 1280, "height": 1600}
TIMEOUT_MS = 300_000
N_DECISIONS = 100_000  # 10**6: benchmarks/deployed_draw.py
ENV = "ALLSEASON_DEPLOYED_DIR"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed"),
]
pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def deployed_server(tmp_path_factory):
    """An app server started with ALLSEASON_DEPLOYED_DIR on a log of N_DECISIONS (in its
    environment only: the session's ``server``, when it starts after this one, has none);
    its warm-up does not compute Home's race, which no test here asks it for."""
    from appserver import NO_PRECOMPUTE, Server

    folder = tmp_path_factory.mktemp("deployed")
    write_fake_log(folder, N_DECISIONS, batch_size=1)
    with Server(env={ENV: str(folder), **NO_PRECOMPUTE}) as srv:
        yield srv.url, folder


def _drawn(page, url: str) -> float:
    """Seconds from opening the page until its three figures are drawn."""
    t0 = time.perf_counter()
    page.goto(url)
    page.locator('[data-testid="stPlotlyChart"] .main-svg').nth(2).wait_for()
    page.get_by_text("decisions** resolved", exact=False).count()
    return time.perf_counter() - t0


def test_a_long_log_draws_and_a_bad_upload_is_one_line(deployed_server, page, tmp_path):
    """Two visits (each a page load, a new Streamlit session) in one tab: the first with
    the server's reader cold, then warm; the page's scripts come from the tab's cache after
    the first visit (a visitor's second visit), which only shortens the warm visit's time.
    (There was a third visit, "warm again", read only through ``min`` of the warm times: one
    warm time under the bound is the same claim, stated no more loosely, and the visit cost
    chromium and the server about 9 CPU-s: a 10**5-decision page drawn again.)"""
    url, folder = deployed_server
    times = []
    for _visit in ("cold", "warm"):
        times.append(_drawn(page, f"{url}/Deployed"))
        wait_idle(page)
        check(page)
    print(f"\n{N_DECISIONS:,} decisions drawn in: cold {times[0]:.1f} s, warm {times[1]:.1f} s "
          f"(chromium, a shared machine)")  # fmt: skip
    (SCREENS / "deployed-draw-times.txt").write_text(" ".join(f"{t:.2f}" for t in times))
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert f"{N_DECISIONS:,} decisions resolved" in text
    assert "Weight of the most likely bandit" in text and "Logged propensities" in text
    # warm: the folder's reader is shared, the server's script takes 1-2 s; a fresh browser
    # context also loaded plotly.js, which took a minute at load 20 on 2 cores (2026-11-26)
    assert times[1] < 180
    page.mouse.move(5, 5)
    shot(page, "deployed-long-log")

    page.get_by_text("Upload files", exact=True).click()
    wait_idle(page)
    bad = tmp_path / "decisions.csv"
    bad.write_text("time,arm,click\n1,a,1\n2,b,0\n")
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(bad))
    page.get_by_text("not a decision log", exact=False).first.wait_for()
    wait_idle(page)
    check(page, errors_allowed=True)
    shown = [e.inner_text() for e in page.locator('[data-testid="stAlertContentError"]').all()]
    assert len(shown) == 1 and "decisions.csv" in shown[0], shown
    page.screenshot(path=str(SCREENS / "deployed-bad-upload.png"))


def test_the_page_without_a_folder_offers_the_example_and_shows_an_uploaded_saved_state(
    server, page, tmp_path
):
    """One visit of the page on a server without a folder (they were two tests, two browser
    contexts, two page loads): the built-in example is offered (or says in one line why not);
    then Upload files → the agent's saved state (agent.save): what the agent believes now (its
    bandits, their weights, the shadow, each one's coefficients), no traceback; then a
    hostile file in its place: one error line naming it. Screenshots: deployed-example.png,
    deployed-state.png."""
    import numpy as np

    from allseason import api

    # the page without a folder offers the example
    go(page, server, "Deployed")
    check(page, errors_allowed=True)  # without the agent, the example says why, in one line
    assert page.get_by_text("The built-in example", exact=True).count() == 1
    assert page.get_by_text("The server's folder", exact=True).count() == 0
    if page.locator('[data-testid="stAlertContentError"]').count() == 0:
        page.locator('[data-testid="stPlotlyChart"] .main-svg').nth(2).wait_for()
        wait_idle(page)
        check(page)
        page.mouse.move(5, 5)
        shot(page, "deployed-example")

    # an uploaded saved state is shown, a hostile one is one line
    agent = api.Agent("allseason-sw", d=3, n_arms=4, seed=2, batch_size=5)
    rng = np.random.default_rng(0)
    for i in range(400):
        rec = agent.decide(context=rng.normal(size=3), event_id=f"e{i}")
        agent.learn(f"e{i}", float(rec.arm == (i // 100) % 4))
    good = tmp_path / "agent.state"
    agent.save(good)
    page.get_by_text("Upload files", exact=True).click()
    wait_idle(page)
    state_input = page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(2)
    state_input.set_input_files(str(good))
    title = page.get_by_text("What the agent believes now (its saved state)", exact=True)
    title.wait_for()
    wait_idle(page)
    check(page)
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert f"model version {agent.model_version:,}" in main and "tau = 10" in main
    title.scroll_into_view_if_needed()
    page.mouse.move(5, 5)
    page.screenshot(path=str(SCREENS / "deployed-state.png"))
    bad = tmp_path / "evil.state"
    bad.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 40)
    state_input.set_input_files(str(bad))
    page.get_by_text("evil.state:", exact=False).first.wait_for()
    wait_idle(page)
    check(page, errors_allowed=True)
    shown = [e.inner_text() for e in page.locator('[data-testid="stAlertContentError"]').all()]
    assert len(shown) == 1 and "evil.state" in shown[0], shown
    assert page.get_by_text("What the agent believes now", exact=False).count() == 0
