"""Screenshots of the app for the docs' "The app, page by page" (docs/img/app-*.png).

    .venv/bin/python scripts/docs_screens.py [--out docs/img] [--pages home,race,...]

Starts ``streamlit run app.py`` on a free port of 127.0.0.1 (``benchmarks/appserver.py``),
drives Debian's headless chromium through Playwright at 1280 x 900, waits for each page's
script to finish (and for the Race page's race to be done: it runs the default race from
Home's button first), takes the first screen of each page (of the Race page: from its "Done" line
down) and saves it palette-reduced
(64 colours, about 50-120 KB each). Fails on any Streamlit exception element.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from appserver import CHROMIUM, IDLE, LAUNCH_ARGS, Server  # noqa: E402

OUT = ROOT / "docs" / "img"
CHART = '[data-testid="stPlotlyChart"]'
# (file name, URL path, what to wait for beyond the page's title)
PAGES = {
    "home": ("", CHART),
    "pattern-builder": ("Pattern_builder", CHART),
    "race": ("Race", None),  # reached through Home's button, see shoot()
    "inside": ("Inside_All-Season", f"{CHART} .main-svg"),
    "sweep-results": ("Sweep_results", None),
    "paper-tables": ("Paper_tables", None),
    "guided-tour": ("Guided_tour", CHART),
}
WIDTH, HEIGHT = 1280, 900


def _idle(pg) -> None:
    pg.wait_for_selector("h1")
    pg.wait_for_timeout(300)
    pg.wait_for_selector(IDLE)
    pg.wait_for_timeout(700)


def _save(pg, path: Path) -> None:
    from PIL import Image

    raw = path.with_suffix(".raw.png")
    pg.screenshot(path=str(raw))
    Image.open(raw).convert("RGB").quantize(colors=64).save(path, optimize=True)
    raw.unlink()


def shoot(out: Path, names: list[str]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    saved = []
    with Server() as srv, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        pg = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        pg.set_default_timeout(120_000)
        pg.emulate_media(color_scheme="light")
        for name in names:
            path, wait = PAGES[name]
            if name == "race":  # the default race, run from Home's button, finished
                pg.goto(srv.url)
                _idle(pg)
                pg.get_by_role("button", name="Run the paper's synthetic experiment").click()
                pg.get_by_text("Done:", exact=False).first.wait_for()
                pg.locator(".gtitle", has_text="each true state").first.wait_for()
            else:  # in the same session: Inside looks into the race just run
                pg.goto(f"{srv.url}/{path}")
            _idle(pg)
            if wait:
                pg.locator(wait).first.wait_for()
                pg.wait_for_timeout(500)
            if name == "race":  # the results, not the form: scroll to the "Done" line
                pg.get_by_text("Done:", exact=False).first.scroll_into_view_if_needed()
                pg.wait_for_timeout(500)
            errors = pg.locator('[data-testid="stException"]').count()
            if errors:
                raise RuntimeError(f"{name}: {errors} exception(s) on the page")
            target = out / f"app-{name}.png"
            _save(pg, target)
            saved.append(target)
            print(f"{target} ({target.stat().st_size / 1024:.0f} KB)", flush=True)
        browser.close()
    return saved


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--pages", default=",".join(PAGES))
    args = ap.parse_args(argv)
    shoot(args.out, args.pages.split(","))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
