"""Uploads at their limits and hostile links in a real browser (Debian's chromium,
Playwright), where the server's own upload
cap applies (AppTest goes around it): a file just under each page's stated limit is
accepted, one just over is refused with the page's own message (never the bare red "!" of
an HTTP 413); and a link full of Markdown links and remote images renders none of them: no
``<a href="https://evil...">``, no ``<img src="http://127.0.0.1:9...">``, no request to
127.0.0.1:9, and the characters sent are shown as they are. Screenshots:
``$SCREENSHOT_DIR/upload-*.png``, ``$SCREENSHOT_DIR/link-escaped-*.png``."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlencode

import pytest
from conftest import CHROMIUM, SCREENS

from allseason import limits
from allseason.logs import offline
from tests.browser.test_pages import check, go, wait_idle
from tests.browser.test_yourdata import fewest_seeds

VIEWPORT = {"width": 1280, "height": 1400}
TIMEOUT_MS = 180_000
DROP = '[data-testid="stFileUploaderDropzoneInput"]'
ERROR = '[data-testid="stAlertContentError"]'

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not installed"),
]
pytest.importorskip("playwright.sync_api")


def log_csv(size: int) -> bytes:
    """A valid log of exactly ``size`` bytes: few events (the replay is quick), long rows of
    ignored columns (cells of 200 characters), blank lines at the end."""
    cell = "7" * 200
    head = "timestamp,arm,reward," + ",".join(f"pad{j}" for j in range(60)) + "\n"
    rows, total, i = [head], len(head), 0
    while True:
        row = f"{i + 1},a{i % 3},{i % 2}," + ",".join([cell] * 60) + "\n"
        if total + len(row) > size - 10:
            break
        rows.append(row)
        total += len(row)
        i += 1
    data = "".join(rows).encode()
    return data + b"\n" * (size - len(data))


def scenario_json(size: int) -> bytes:
    data = json.dumps({"segments": [[0, 300], [1, 200]], "d": 3}).encode()
    return data + b" " * (size - len(data))


def _watch_413(page) -> list:
    refused = []
    page.on("response", lambda r: refused.append(r.url) if r.status == 413 else None)
    return refused


def _errors(page) -> list[str]:
    return [e.inner_text() for e in page.locator(ERROR).all()]


def test_your_data_20_mb_under_is_read_and_over_gets_the_pages_message(server, page, tmp_path):
    stated = offline.APP_LIMITS["bytes"]
    assert stated == 20_000_000
    refused = _watch_413(page)
    go(page, server, "Your_data")
    fewest_seeds(page)  # the under-limit log's evaluation: what is checked is that it is read
    under = tmp_path / "log-under.csv"
    under.write_bytes(log_csv(stated - 1))
    page.locator(DROP).set_input_files(str(under))
    page.get_by_text("log-under.csv: a log of", exact=False).first.wait_for()
    page.locator('[data-testid="stTable"]').first.wait_for()
    wait_idle(page)
    check(page)
    page.screenshot(path=str(SCREENS / "upload-yourdata-under.png"))

    over = tmp_path / "log-over.csv"
    over.write_bytes(log_csv(stated + 1))
    page.locator(DROP).set_input_files(str(over))
    page.get_by_text(f"at most {stated:,} bytes are read", exact=False).first.wait_for()
    wait_idle(page)
    check(page, errors_allowed=True)
    shown = _errors(page)
    assert len(shown) == 1 and "log-over.csv" in shown[0], shown
    assert f"{stated + 1:,} bytes" in shown[0]
    page.screenshot(path=str(SCREENS / "upload-yourdata-over.png"))
    # over the uploader's own cap (the page's limit + 1 MB): stopped in the browser, in words
    cap = limits.upload_cap_mb(stated)
    huge = tmp_path / "log-huge.csv"
    huge.write_bytes(b"x" * (cap * 10**6 + 1))
    page.locator(DROP).set_input_files(str(huge))
    page.get_by_text(f"must be {cap:.1f}MB or smaller", exact=False).first.wait_for()
    page.screenshot(path=str(SCREENS / "upload-yourdata-huge.png"))
    assert not refused, f"the server refused an upload (413): {refused}"


def test_scenario_file_1_mb_under_is_loaded_and_over_gets_the_pages_message(server, page, tmp_path):
    stated = limits.MAX_INPUT_BYTES
    refused = _watch_413(page)
    go(page, server, "Pattern_builder")
    page.get_by_text("Upload a scenario", exact=False).first.click()  # the expander
    under = tmp_path / "scenario-under.json"
    under.write_bytes(scenario_json(stated))
    page.locator(DROP).first.set_input_files(str(under))
    page.get_by_text("Loaded scenario-under.json", exact=False).first.wait_for()
    wait_idle(page)
    check(page)

    over = tmp_path / "scenario-over.json"
    over.write_bytes(scenario_json(stated + 1))
    page.locator(DROP).first.set_input_files(str(over))
    page.get_by_text(f"at most {stated:,} bytes", exact=False).first.wait_for()
    wait_idle(page)
    check(page, errors_allowed=True)
    shown = _errors(page)
    assert any("scenario-over.json was not loaded" in m for m in shown), shown
    page.screenshot(path=str(SCREENS / "upload-scenario-over.png"))
    assert not refused, f"the server refused an upload (413): {refused}"


LINK = "[Session expired - log in again](https://evil.example/login)"
IMAGE = "![x](http://127.0.0.1:9/q.png)"
MATH = "$x^{2}$"


@pytest.mark.parametrize(
    "path, query",
    [
        ("", {"seed": LINK, "preset": IMAGE, "d": MATH, "sigma2": IMAGE, IMAGE: "1"}),
        (
            "Race",
            {
                "seed": LINK,
                "policies": IMAGE,
                "n_seeds": LINK,
                "allseason-sw.n_max": IMAGE,
                "allseason-sw." + LINK: "1",
            },
        ),
        ("Inside_All-Season", {"view": LINK, "contestant": IMAGE, "inside_seed": MATH}),
        ("Guided_tour", {"step": IMAGE}),
        ("Live", {"speed": LINK}),
    ],
)
def test_a_link_renders_no_link_image_or_math(server, page, path, query):
    fetched = []
    page.on("request", lambda r: fetched.append(r.url) if "127.0.0.1:9/" in r.url else None)
    page.goto(f"{server}/{path}?{urlencode(query)}")
    wait_idle(page)
    page.wait_for_timeout(1000)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('a[href*="evil.example"]').count() == 0
    assert page.locator('a[href*="127.0.0.1:9/"]').count() == 0
    assert page.locator('img[src*="127.0.0.1:9"]').count() == 0
    assert page.locator(".katex").count() == 0, "math was rendered"
    assert not fetched, fetched
    text = page.locator('[data-testid="stMain"]').inner_text().replace("\u2060", "")
    sent = [v for v in (LINK, IMAGE, MATH) if v in query.values() or v in query]
    assert any(v[:20] in text for v in sent), "no message quotes the link's values as sent"
    page.screenshot(path=str(SCREENS / f"link-escaped-{path or 'home'}.png"))
