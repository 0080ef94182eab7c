"""The real-browser tests' pages: one browser context and one tab per test process.

``tests/conftest.py`` starts one app server and one chromium per test process (``server``,
``browser``). Each test's ``page`` here is THE tab of ONE browser context of that chromium
(``shared_context``, ``_tab``), so the app's scripts (Streamlit's, and the 4.7 MB of Plotly's
chart chunk) are fetched and compiled once per process and then come from the context's cache
and the tab's renderer (V8 keeps what it compiled), instead of once per test in a tab or a
context of its own (measured: a Race page load cost chromium about a third less CPU in the
same tab than in a new tab, and a new tab less than a new context). Each test opens its page
with ``goto``: a new document, so a Streamlit session of its own (its own websocket; the app
keeps nothing in the browser: no cookie, nothing in the tab's storage), at its module's
``VIEWPORT`` with its ``TIMEOUT_MS`` and the light colour scheme. After the test the tab
leaves for the server's health answer (a plain page of the same site: the renderer stays),
which ends the test's session as closing its tab did (a show stops playing, a race still
running stops at its next chunk); a tab that cannot leave is closed and the next test gets a
new one.

A test that needs another browser state (another server's origin, the load test's and the
key storm's own browsers) opens its own context.

Tried and not used (2026-11-27, load 8-13, chromium CPU of one Race page load): a persistent
context (``launch_persistent_context``: a disk HTTP cache and V8's code cache). In one tab,
warm loads cost the same either way (2.9-3.8 CPU-s, the renderer keeps what it compiled). In a
new tab each time: 4.7-5.3 CPU-s a load in this incognito context; 9.5, 7.5, 7.0, then 3.6,
3.6 in a persistent one (V8 writes its code cache at a script's 2nd and 3rd loads and reads
it from the 4th), and a new server's port is a new origin with a cache of its own.
"""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def shared_context(browser):
    """One browser context for every tab of this test process (see the module docstring)."""
    context = browser.new_context()
    yield context
    context.close()


def new_tab(context, viewport: dict, timeout_ms: int):
    """A new tab (a new Streamlit session once it opens a page) of ``context``, at
    ``viewport``, with ``timeout_ms`` as its default timeout."""
    pg = context.new_page()
    pg.set_viewport_size(viewport)
    pg.set_default_timeout(timeout_ms)
    return pg


class _Tab:
    """The process's one tab (see the module docstring), made again when it was closed."""

    def __init__(self, context):
        self.context, self.pg = context, None

    def get(self):
        if self.pg is None or self.pg.is_closed():
            self.pg = self.context.new_page()
        return self.pg

    def leave(self) -> None:
        """End the page's Streamlit session (its websocket closes), keeping the renderer."""
        pg = self.pg
        if pg is None or pg.is_closed():
            return
        try:
            pg.emulate_media(color_scheme="light")  # a test may have asked for dark
            origin = pg.evaluate("location.origin")
            if origin.startswith("http"):
                pg.goto(f"{origin}/_stcore/health", timeout=30_000)
        except Exception:  # a hung or broken page: a new tab for the next test
            pg.close()


@pytest.fixture(scope="session")
def _tab(shared_context):
    tab = _Tab(shared_context)
    yield tab
    if tab.pg is not None and not tab.pg.is_closed():
        tab.pg.close()


@pytest.fixture
def page(_tab, request):
    """The process's tab (:class:`_Tab`), at the test module's ``VIEWPORT``, with its
    ``TIMEOUT_MS`` as the default timeout; the test opens its page (a new Streamlit session)
    with ``goto``."""
    pg = _tab.get()
    pg.set_viewport_size(request.module.VIEWPORT)
    pg.set_default_timeout(request.module.TIMEOUT_MS)
    yield pg
    _tab.leave()
