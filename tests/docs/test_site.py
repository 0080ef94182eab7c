"""The documentation: the site builds with `mkdocs build --strict` (no broken link, no page
missing from the navigation, no bad anchor, no docstring mkdocstrings cannot render), and
every code block marked runnable in docs/ and README.md runs.

The marker is an HTML comment alone on the line before the fence (invisible in the site):

    <!-- runnable -->
    ```bash
    python -m allseason patterns
    ```

A ``bash`` block runs line by line under ``bash -e`` from the repository root, with
``python`` this interpreter; a ``python`` block runs as one script. Keep them to seconds.
Also checks the README's shape: at most 160 lines, the set-up block first, the
picture tracked and small.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARKER = "<!-- runnable -->"
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```\s*$", re.M | re.S)


def runnable_blocks(text: str) -> list[tuple[str, str]]:
    """(language, code) of every fenced block right after a line that is the marker."""
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if before.strip() == MARKER and not before.startswith((" ", "\t")):
            out.append((m.group(1), m.group(2)))
    return out


def _sources() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


BLOCKS = [
    (p, k, lang, code)
    for p in _sources()
    for k, (lang, code) in enumerate(runnable_blocks(p.read_text(encoding="utf-8")))
]


def test_the_marker_parser():
    text = (
        "x\n<!-- runnable -->\n```bash\necho 1\n```\n\n```bash\necho 2\n```\n"
        "    <!-- runnable -->\n    ```bash\n    echo 3\n    ```\n"
        "<!-- runnable -->\n```python\nprint(4)\n```\n"
    )
    assert runnable_blocks(text) == [("bash", "echo 1\n"), ("python", "print(4)\n")]


def test_there_are_runnable_blocks():
    assert len(BLOCKS) >= 3
    assert any(p.name == "README.md" for p, *_ in BLOCKS)


@pytest.fixture(scope="module")
def shell_env(tmp_path_factory):
    """PATH with ``python`` = this interpreter first; this checkout on PYTHONPATH."""
    bin_dir = tmp_path_factory.mktemp("bin")
    shim = bin_dir / "python"  # a script, not a symlink: a venv's python must keep its path
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        ALLSEASON_RESULTS=str(tmp_path_factory.mktemp("results")),
    )
    return env


@pytest.mark.parametrize(
    "path, k, lang, code", BLOCKS, ids=[f"{p.relative_to(ROOT)}#{k}" for p, k, *_ in BLOCKS]
)
def test_runnable_block_runs(path, k, lang, code, shell_env):
    if lang in ("bash", "sh", "shell"):
        cmd = ["bash", "-e", "-c", code]
    elif lang in ("python", "py"):
        cmd = [sys.executable, "-c", code]
    else:
        pytest.fail(f"{path.name}: a runnable block must be bash or python, got {lang!r}")
    # a hang is bounded by the timeout; no pace asserted (a loaded CI machine is no stopwatch)
    out = subprocess.run(cmd, cwd=ROOT, env=shell_env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, f"{path.name} block {k}:\n{code}\n{out.stdout}\n{out.stderr}"


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH=str(ROOT), NO_MKDOCS_2_WARNING="1"),
    )
    seconds = time.perf_counter() - t0
    assert out.returncode == 0, out.stderr[-4000:]
    site = tmp_path / "site"
    for page in (
        "index",
        "fidelity",
        "algorithm",
        "performance",
        "deployment",
        "security",
        "app",
        "reproduction-real",
        "reference/api",
    ):
        assert (site / f"{page}.html").is_file(), page
    api_page = (site / "reference" / "api.html").read_text(encoding="utf-8")
    assert "run_race" in api_page and "default_race" in api_page  # docstrings rendered
    print(f"\nmkdocs build --strict: {seconds:.1f} s")


def test_the_site_fetches_nothing_at_build_time():
    """Offline by design: no web font (theme.font: false) and no plugin that downloads."""
    cfg = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s*font:\s*false\s*$", cfg, re.M)
    plugins = re.search(r"^plugins:\n((?:[ ].*\n)+)", cfg, re.M).group(1)
    names = re.findall(r"^  - (\w[\w-]*)", plugins, re.M)
    assert set(names) <= {"search", "mkdocstrings"}, names


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert len(lines) <= 160
    assert lines[0] == "```bash"
    assert lines[1].startswith("make app") and lines[2].startswith("make test")
    assert lines[3] == "```"
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
    assert pictures, "the README shows one picture"
    for pic in pictures:
        path = ROOT / pic
        assert path.is_file() and path.stat().st_size < 200_000, pic
    assert "python scripts/readme_figure.py" in text  # the command that makes it


def test_docs_images_are_small():
    for png in (ROOT / "docs" / "img").glob("*.png"):
        assert png.stat().st_size < 200_000, png.name


def test_the_readme_figure_is_made_from_the_engine(tmp_path):
    """scripts/readme_figure.py end to end: the engine's default race, the Inside figure,
    Debian's chromium through Playwright, a small PNG (skips without chromium/Playwright)."""
    pytest.importorskip("playwright.sync_api")
    pytest.importorskip("PIL")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("no /usr/bin/chromium (make browser)")
    out = tmp_path / "figure.png"
    run = subprocess.run(
        [sys.executable, "scripts/readme_figure.py", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    from PIL import Image

    with Image.open(out) as img:
        width, height = img.size
        colours = img.convert("RGB").getcolors(maxcolors=256)
    assert 900 <= width <= 1100 and 400 <= height <= 600
    assert colours is not None and len(colours) > 8  # a drawn figure, not a blank page
    assert out.stat().st_size < 200_000
    assert "mean reward 0.52" in run.stdout  # All-Season (SW), seed 0 of the default race


def test_the_figure_is_the_default_races():
    """The figure's data: All-Season (SW) of the default race on seed 0, the same run as in the
    full race (a race of one contestant and one seed plays the same streams)."""
    import importlib.util

    from allseason import api

    spec = importlib.util.spec_from_file_location(
        "readme_figure", ROOT / "scripts" / "readme_figure.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fig, result = mod.figure()
    assert fig.layout.title.text.startswith("Weight of the most likely bandit")
    race = api.default_race()
    full = api.run_race(api.Race(race.scenario, race.policies[:2], 1))
    assert (full.traces["allseason-sw", 0].arm == result.traces["allseason-sw", 0].arm).all()


def test_the_default_race_is_quoted_as_it_is():
    """The README and the docs quote the default race's numbers (steps, states, change points;
    policies, oracles, seeds) as ``api.race_in_words()`` derives them from
    ``api.default_race()``: the app and the CLI's help derive them at run time, and a
    change of the default race fails here until the texts follow."""
    from allseason import api

    words = api.race_in_words()
    scenario = re.compile(r"[\d,]+ steps, \d+ states, \d+ change points")
    contestants = re.compile(r"\d+ polic(?:y|ies)(?: and \d+ oracles?)?, \d+ seeds?")
    found = 0
    for path in _sources():
        text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
        for m in scenario.finditer(text):
            assert m.group() == words["scenario"], (path.name, m.group())
            found += 1
        for m in contestants.finditer(text):
            if "default race" in text[max(0, m.start() - 120) : m.start()]:
                assert m.group() == f"{words['contestants']}, {words['seeds']}", (
                    path.name,
                    m.group(),
                )
                found += 1
    assert found >= 3
