"""The README's picture: the Inside figure of the default race, made from the engine.

    .venv/bin/python scripts/readme_figure.py [--out docs/img/inside-default-race.png]

Runs the default race's All-Season (SW) on seed 0 (``api.default_race()``: the paper's
synthetic experiment, 10,000 steps; only the one contestant and seed the figure shows),
builds the Inside All-Season page's first figure (``allseason.viz.weights.top_weight_figure``:
the weight of the most likely bandit after each batch, the true states as bands), writes it as
a self-contained HTML file and screenshots it in Debian's chromium through Playwright (no
kaleido, no download: Plotly's JavaScript is inlined). The PNG is reduced to a 64-colour
palette so that it stays small (< 200 KB).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

OUT = ROOT / "docs" / "img" / "inside-default-race.png"
WIDTH, HEIGHT = 1000, 470


def figure(label: str = "allseason-sw", seed: int = 0):
    """(figure, race result): the default race's ``label`` on ``seed``, inside."""
    from allseason import api
    from allseason.viz import weights as vweights

    race = api.default_race()
    spec = next(p for p in race.policies if p.label == label)
    one = api.Race(race.scenario, (spec,), seed + 1)
    result = api.run_race(one)
    weights = result.weights_frame()
    fig = vweights.top_weight_figure(weights, race.scenario.pattern, policy=label, seed=seed)
    fig.update_layout(
        width=WIDTH, height=HEIGHT, template="plotly_white", margin=dict(l=60, r=20, t=60, b=40)
    )
    return fig, result


def screenshot(fig, out: Path) -> Path:
    """``fig`` as a PNG at ``out``, drawn by chromium (Playwright), palette-reduced."""
    from appserver import CHROMIUM, LAUNCH_ARGS
    from PIL import Image
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        html = Path(tmp) / "figure.html"
        fig.write_html(
            html, include_plotlyjs=True, full_html=True, config={"displayModeBar": False}
        )
        raw = Path(tmp) / "raw.png"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
            page = browser.new_page(viewport={"width": WIDTH + 20, "height": HEIGHT + 20})
            page.goto(html.as_uri())
            page.locator(".main-svg").first.wait_for()
            page.wait_for_timeout(300)
            page.locator(".plotly-graph-div").first.screenshot(path=str(raw))
            browser.close()
        out.parent.mkdir(parents=True, exist_ok=True)
        Image.open(raw).convert("RGB").quantize(colors=64).save(out, optimize=True)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    fig, result = figure()
    path = screenshot(fig, args.out)
    s = result.summary()["allseason-sw"]
    print(
        f"{path} ({path.stat().st_size / 1024:.0f} KB); All-Season (SW) seed 0: "
        f"mean reward {s['mean_reward']:.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
