"""Shared helpers for the engine tests: a linear bandit problem and random SPD matrices.

Import the helpers directly (``from conftest import linear_problem``): pytest puts this
folder on ``sys.path`` (rootdir-relative, no ``__init__.py``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

# -- real-browser tests (tests/test_*_browser.py): one server, one browser per session ----------
ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
SCREENS = Path(os.environ.get("SCREENSHOT_DIR", "/tmp/allseason-screens"))
LAUNCH_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def streamlit_server():
    """``streamlit run app.py`` (this interpreter's streamlit) on a free port of 127.0.0.1;
    yields its base URL once ``/_stcore/health`` answers. The log goes to ``$SCREENSHOT_DIR``."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false"]
    log = open(SCREENS / f"e2e-server-{port}.log", "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start (exit code {proc.poll()})")
            time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="session")
def server():
    """One app server for the whole test session (:func:`streamlit_server`); its base URL."""
    with streamlit_server() as url:
        yield url


@pytest.fixture
def page(browser, request):
    """A fresh browser context (a new Streamlit session) of the test module's ``VIEWPORT``,
    with its ``TIMEOUT_MS`` as the default timeout."""
    context = browser.new_context(viewport=request.module.VIEWPORT)
    pg = context.new_page()
    pg.set_default_timeout(request.module.TIMEOUT_MS)
    yield pg
    context.close()


@pytest.fixture(scope="session")
def browser():
    """One headless Debian chromium for the session, driven by Playwright's sync API (one
    sync Playwright per process: a second one would start inside the first one's loop)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    SCREENS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield b
        b.close()


def unit_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Gaussian vectors normalised to unit length along the last axis."""
    v = rng.standard_normal(shape)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def linear_problem(T: int, K: int, d: int, sigma2: float, seed, thetas=None, switch_at=None):
    """A linear bandit: r_t = <theta_t, x> + eps_t, eps_t ~ N(0, sigma2).

    Parameters
    ----------
    T, K, d : steps, arms per step, dimension.
    sigma2 : noise variance.
    seed : anything ``np.random.default_rng`` takes.
    thetas : array (n, d) or (d,), optional. The season parameters; season i uses row
        ``i % n`` (so fewer rows than segments makes seasons come back). Default: one random
        unit vector per segment.
    switch_at : int or sequence of int, optional. Steps at which a new segment starts.

    Returns
    -------
    arms : (T, K, d), unit-norm Gaussian rows.
    expected : (T, K), <theta_t, arms[t, k]>.
    noise : (T,), sqrt(sigma2) * N(0, 1).
    """
    rng = np.random.default_rng(seed)
    switches = [] if switch_at is None else sorted(np.atleast_1d(switch_at).astype(int))
    arms = unit_rows(rng, (T, K, d))
    if thetas is None:
        thetas = unit_rows(rng, (len(switches) + 1, d))
    thetas = np.atleast_2d(np.asarray(thetas, dtype=float))
    segment = np.searchsorted(np.asarray(switches, dtype=int), np.arange(T), side="right")
    theta_t = thetas[segment % len(thetas)]
    expected = np.einsum("tkd,td->tk", arms, theta_t)
    noise = np.sqrt(sigma2) * rng.standard_normal(T)
    return arms, expected, noise


def random_spd(rng: np.random.Generator, d: int, scale: float = 1.0) -> np.ndarray:
    """A well-conditioned symmetric positive definite (d, d) matrix."""
    A = rng.standard_normal((d, d))
    return scale * (A @ A.T / d + np.eye(d))


@pytest.fixture(scope="module")
def private_data_cache(tmp_path_factory):
    """Keep the tests' data cache (MNIST .npz) out of the user's ~/.cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ALLSEASON_CACHE", str(tmp_path_factory.mktemp("allseason-cache")))
    yield
    mp.undo()
