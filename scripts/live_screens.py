"""Screenshots of the Live page for docs/live.md (docs/img/live-*.png).

    .venv/bin/python scripts/live_screens.py [--out docs/img]

Starts ``streamlit run app.py`` on a free port of 127.0.0.1 (``benchmarks/appserver.py``)
and drives Debian's headless chromium through Playwright through one scripted show (seed 0,
200 steps per second, by the keys): season 1 until step 650, N (season 2) until 1,050, N
(season 3) until 1,400, 1 (season 1 back) until 2,000, N (season 4). It takes:

* ``live-return.png``: the page right after season 1 came back (the ticker, the figures);
* ``live-ribbon-new.png``: the ribbon right after the new season 4 (the shadow, pink);
* ``live-presenter-1920.png``, ``live-presenter-1280.png``: presenter mode at 1920×1080 and
  1280×720;
* ``live-presenter-1280-dark.png``: the same in the dark theme (a second show).

Each is saved palette-reduced (256 colours: 64 merge some contestants' colours in the dark
theme). Fails on any Streamlit exception element.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from appserver import CHROMIUM, LAUNCH_ARGS, Server  # noqa: E402

OUT = ROOT / "docs" / "img"
STATUS = ".live-status"


def _save(pg, path: Path, locator=None) -> Path:
    from PIL import Image

    raw = path.with_suffix(".raw.png")
    (locator or pg).screenshot(path=str(raw))
    Image.open(raw).convert("RGB").quantize(colors=256).save(path, optimize=True)
    raw.unlink()
    print(path, path.stat().st_size)
    return path


def _until(pg, step: int) -> None:
    pg.wait_for_function(
        f"+document.querySelector('{STATUS}').dataset.step >= {step}", timeout=120_000
    )


def _check(pg) -> None:
    assert pg.locator('[data-testid="stException"]').count() == 0, "a traceback is shown"


def _show(pg, url: str) -> None:
    pg.goto(f"{url}/Live?speed=200")
    pg.wait_for_selector(STATUS, timeout=120_000)
    for step, key in ((650, "n"), (1050, "n"), (1400, "1")):
        _until(pg, step)
        pg.keyboard.press(key)


def _presenter(pg, width: int, height: int) -> None:
    pg.set_viewport_size({"width": width, "height": height})
    pg.locator("[data-testid=stButtonGroup] button").filter(has_text=f"{width}×{height}").click()
    pg.wait_for_timeout(2500)


def shoot(out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    saved = []
    with Server() as srv, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        pg = browser.new_context(viewport={"width": 1280, "height": 1300}).new_page()
        _show(pg, srv.url)
        _until(pg, 1520)  # 120 steps after the return: the ticker has had its say
        pg.keyboard.press("p")  # a still picture (the figures stop between frames anyway)
        pg.wait_for_function(f"document.querySelector('{STATUS}').textContent.includes('paused')")
        pg.wait_for_timeout(800)
        _check(pg)
        saved.append(_save(pg, out / "live-return.png"))
        pg.keyboard.press("p")
        _until(pg, 2000)
        pg.keyboard.press("n")
        _until(pg, 2040)
        pg.keyboard.press("p")
        pg.wait_for_function(f"document.querySelector('{STATUS}').textContent.includes('paused')")
        pg.wait_for_timeout(800)
        saved.append(_save(pg, out / "live-ribbon-new.png", pg.locator(".st-key-live_ribbon")))
        pg.keyboard.press("p")
        _until(pg, 2600)
        pg.get_by_text("Presenter mode").click()
        pg.wait_for_timeout(1500)
        for w, h in ((1920, 1080), (1280, 720)):
            _presenter(pg, w, h)
            _check(pg)
            saved.append(_save(pg, out / f"live-presenter-{w}.png"))
        dark = browser.new_context(
            viewport={"width": 1280, "height": 720}, color_scheme="dark"
        ).new_page()
        _show(dark, srv.url)
        _until(dark, 2000)
        dark.get_by_text("Presenter mode").click()
        dark.wait_for_timeout(1500)
        _presenter(dark, 1280, 720)
        _check(dark)
        saved.append(_save(dark, out / "live-presenter-1280-dark.png"))
        browser.close()
    return saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    shoot(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
