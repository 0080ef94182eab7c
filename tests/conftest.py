"""Shared fixtures and helpers of every test folder: a linear bandit problem, random SPD
matrices, AppTest sessions of the app, and one app server and one chromium per session.

The folders under ``tests/`` are packages (``tests.app``, ``tests.browser``...), so test files
of the same name in two folders import fine. Import the helpers directly
(``from conftest import linear_problem``): this module is also registered as ``conftest``.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path

# -- one BLAS thread per test process (and the processes tests start, which inherit it): the
# suite runs one pytest-xdist worker per core beside the browser tests, so a second OpenBLAS
# thread finds no free core and spins waiting for its partner (numpy's OpenBLAS, 2 threads on
# this machine): a 30,000 x 784 PCA took 7.8 CPU-s with two threads and 3.6 with one, under
# load (2026-11-27). Results do not change (the tracked snapshots, recomputed exactly, say
# so); a thread count set outside is kept (e.g. OPENBLAS_NUM_THREADS=2 pytest ...).
# Set before numpy is first imported (it reads the variable when it loads OpenBLAS).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# -- costs: the estimates (allseason.costs) are this machine's once api.warm_up() has measured
# its factor, which an app test's warm-up thread may do in the middle of another test: the
# tests (and the app servers and commands they start) use the stored prices as they are, so
# that what a test computes and what the page computes agree; tests/hostile/test_costs.py
# checks the calibration itself.
os.environ.setdefault("ALLSEASON_COST_FACTOR", "1")

# -- bytecode: an environment with PYTHONDONTWRITEBYTECODE set (this machine's, and so its CI)
# never writes the .pyc of the project's own modules, so every process of a session compiles
# allseason/ and the test modules (pytest's assertion rewriting) from source again: half of a
# pytest worker's collection (15.2 CPU-s, 7.3 with the .pyc there, measured 2026-11-27), and
# again in each app server and ``python -m allseason`` subprocess (issue 34). The test session
# writes them, as Python does by default (``__pycache__/``, ignored by git), and so do the
# processes it starts; the installed packages came compiled by pip already.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

import numpy as np
import pytest
from hypothesis import settings as hypothesis_settings

# -- real-browser tests (tests/browser/): one server, one browser per session ----------
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from appserver import CHROMIUM, IDLE, LAUNCH_ARGS, LOG_DIR, Server  # noqa: E402,F401

# ``from conftest import ...`` in any folder: pytest imports this file as ``tests.conftest``
sys.modules.setdefault("conftest", sys.modules[__name__])

SCREENS = LOG_DIR  # screenshots and server logs: $SCREENSHOT_DIR, default /tmp/allseason-screens


# -- the kernels' warm-up, overlapped with collection (``make test``, Makefile target test):
# the set-up starts scripts/warm_kernels.py in the background and the test sessions beside its
# tail, with ALLSEASON_WARM_RC naming the file in which the warm-up writes its exit code when
# it ends (bounded by a timeout there). A session collects its tests meanwhile (importing them
# compiles no kernel) and waits here, after collection and before the first test, for the
# kernels to be on disk: its tests then load them instead of compiling them again. Whatever
# the exit code, the tests then run (a kernel that did not compile fails its own tests, with
# its own error) and make test fails after them, with the warm-up's output. Unset (pytest run
# by hand): no wait.
def pytest_collection_finish(session):
    rc_file = os.environ.get("ALLSEASON_WARM_RC")
    if rc_file:
        import time

        while not os.path.exists(rc_file):
            time.sleep(0.2)


@contextmanager
def streamlit_server():
    """``streamlit run app.py`` on a free port of 127.0.0.1 (``benchmarks/appserver.py``);
    yields its base URL once it answers. The log goes to ``$SCREENSHOT_DIR``."""
    with _kept_children() as kept:
        with Server() as srv:
            kept.add(srv.pid)  # --cpu-durations: its CPU counts to the tests it serves
            try:
                yield srv.url
            finally:
                kept.stopping()


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
    before = _child_pids()
    with _kept_children() as kept, sync_api.sync_playwright() as p:
        kept.update(_child_pids() - before)  # Playwright's driver, chromium under it
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS)
        yield b
        kept.stopping()
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


# -- hypothesis: two stated profiles. "quick" (the default: CI and a plain pytest run) runs a
# quarter of the examples a property test states (:func:`examples`); "thorough" runs them all:
#     HYPOTHESIS_PROFILE=thorough pytest tests/hostile/test_validation_properties.py ...
# (or pytest --hypothesis-profile=thorough). Each test says what it checks and the full count.
hypothesis_settings.register_profile("quick")
hypothesis_settings.register_profile("thorough")
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or "quick")


def examples(n: int) -> int:
    """The ``max_examples`` of a property test stated for ``n`` examples: ``n`` under the
    "thorough" profile, a quarter of them (at least 25) under "quick"."""
    if hypothesis_settings.get_current_profile_name() == "thorough":
        return n
    return max(25, n // 4)


@pytest.fixture(scope="session")
def _data_cache_dir(tmp_path_factory):
    """One private data cache per test session, shared by its pytest-xdist workers (the
    parent of a worker's base temporary folder): MNIST's .npz is decoded from its pickle once
    per session, not once per process or test module (it is written atomically: a worker
    reads it whole or decodes it too)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / "allseason-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def private_data_cache(_data_cache_dir):
    """Keep the tests' data cache (MNIST .npz) out of the user's ~/.cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ALLSEASON_CACHE", str(_data_cache_dir))
    yield
    mp.undo()


def open_app_page(
    page: str, *, query: dict | None = None, timeout: float = 180, from_home: bool = True
):
    """A new AppTest session of the whole app (``app.py``, as ``streamlit run`` serves it)
    on ``page`` (``app_pages/...``), opened with the link's ``query`` parameters; with
    ``from_home`` the app's first run is Home's, as for a visitor who then picks the page."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    if from_home:
        at.run()
    if query:
        at.query_params.update(query)
    at.switch_page(page)
    at.run()
    return at


# -- AppTest: Streamlit's scan of the installed packages for components, once per process.
# Every AppTest's first run makes a BidiComponentManager that reads the metadata of every
# installed distribution (0.35 CPU-s of a 0.63 CPU-s page opening, measured 2026-11-27 on
# 470 distributions, none a component); the packages do not change during a test session,
# so the first scan's result is handed to the later ones (issue 34).
_SCANNED: list = []


def pytest_runtest_setup(item):
    if _SCANNED or "streamlit.testing.v1" not in sys.modules:
        return
    from streamlit.components.v2 import manifest_scanner

    found = manifest_scanner.scan_component_manifests()
    _SCANNED.append(found)
    manifest_scanner.scan_component_manifests = lambda max_workers=None: list(found)


def run_fragment(at, key: str, monkeypatch):
    """Rerun only the fragment ``key`` (``@st.fragment(key=...)``) of an AppTest ``at``, with
    the widget values set on it, as the browser does when a widget inside that fragment
    changes or its ``run_every`` timer fires (AppTest itself always reruns the whole script)."""
    import functools

    from streamlit.testing.v1 import local_script_runner

    ids = at._fragment_storage.resolve_target(key)
    with monkeypatch.context() as m:
        m.setattr(
            local_script_runner,
            "RerunData",
            functools.partial(local_script_runner.RerunData, fragment_id_queue=ids),
        )
        at.run()
    return at


# -- --cpu-durations=N: the N tests that took the most CPU seconds (this process and the
# subprocesses it waited for; setup, call and teardown). On a shared machine the wall-clock
# times of --durations measure the neighbours as much as the tests; CPU seconds do not. Works
# under pytest-xdist: each worker measures, the teardown's report carries the number over.
_CPU: dict[str, float] = {}


def pytest_addoption(parser):
    parser.addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="show the N tests that used the most CPU seconds (0: all)",
    )


# Child processes kept across tests (the session's app server, Playwright's driver and its
# chromium): their CPU is read while they run, so each test counts what it made them do. A
# child is otherwise counted only once waited for, and the session's server and chromium
# then counted whole (310 s in CI, 2026-11-26) against the test whose teardown stopped them.
_LIVE_CHILDREN: set[int] = set()
_STOPPED = [0.0]  # CPU seconds to take off once kept children stopped (see _kept_children)


class _kept_children:
    """Registers kept children (``add``, ``update``); around their stop (``stopping()``
    before it, the end of the ``with`` after it) keeps the CPU reading continuous: what they
    used was counted while they ran, and a stopped child's CPU reaches RUSAGE_CHILDREN only
    in part (chromium's processes are not all waited for by Playwright's driver)."""

    def __init__(self) -> None:
        self.pids: set[int] = set()
        self.before: float | None = None

    def __enter__(self):
        return self

    def add(self, pid: int) -> None:
        self.pids.add(pid)
        _LIVE_CHILDREN.add(pid)

    def update(self, pids) -> None:
        for pid in pids:
            self.add(pid)

    def stopping(self) -> None:
        self.before = _cpu_seconds()

    def __exit__(self, *exc) -> None:
        if self.before is not None:
            _LIVE_CHILDREN.difference_update(self.pids)
            _STOPPED[0] += _cpu_seconds() - self.before  # the stop itself is not counted


def _child_pids() -> set[int]:
    try:
        import psutil
    except ImportError:
        return set()
    return {c.pid for c in psutil.Process().children()}


def _live_children_cpu() -> float:
    """CPU seconds so far of the registered children that still run, with their descendants
    (live ones, and those they waited for)."""
    if not _LIVE_CHILDREN:
        return 0.0
    import psutil

    total = 0.0
    for pid in list(_LIVE_CHILDREN):
        try:
            root = psutil.Process(pid)
            for p in [root, *root.children(recursive=True)]:
                try:
                    t = p.cpu_times()
                    total += t.user + t.system + t.children_user + t.children_system
                except psutil.Error:
                    pass
        except psutil.Error:  # waited for: counted by RUSAGE_CHILDREN from now on
            _LIVE_CHILDREN.discard(pid)
    return total


def _cpu_seconds() -> float:
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    return waited + _live_children_cpu() - _STOPPED[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item._cpu_t0 = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "teardown" and hasattr(item, "_cpu_t0"):
        outcome.get_result().user_properties.append(("cpu_seconds", _cpu_seconds() - item._cpu_t0))


def pytest_runtest_logreport(report):
    if report.when == "teardown":
        for name, value in report.user_properties:
            if name == "cpu_seconds":
                _CPU[report.nodeid] = value


def pytest_terminal_summary(terminalreporter, config):
    n = config.getoption("--cpu-durations")
    if n is None or not _CPU:
        return
    total = sum(_CPU.values())
    terminalreporter.write_sep("=", f"cpu durations: {total:.1f} s of CPU in {len(_CPU)} tests")
    for nodeid, seconds in sorted(_CPU.items(), key=lambda kv: -kv[1])[: n or None]:
        terminalreporter.write_line(f"{seconds:8.2f}s  {nodeid}")
