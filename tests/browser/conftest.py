"""The real-browser tests' pages: one browser context per test process, a new tab per test.

``tests/conftest.py`` starts one app server and one chromium per test process (``server``,
``browser``). Each test's ``page`` here is a new tab of ONE browser context of that chromium
(``shared_context``), so the app's scripts (Streamlit's, and the 4.7 MB of Plotly's chart
chunk) are fetched and compiled once per process and then come from the context's cache and
V8's code cache, instead of once per test in a context of its own. Each tab is still a
Streamlit session of its own (its own websocket; the app keeps nothing in the browser: no
cookie, no local storage), opened at its module's ``VIEWPORT`` with its ``TIMEOUT_MS``, and
closed after its test (its session ends, as when a visitor closes a tab).

A test that needs another browser state (another server's origin, the load test's and the
key storm's own browsers) opens its own context.
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


@pytest.fixture
def page(shared_context, request):
    """A new tab of the process's browser context (a new Streamlit session) at the test
    module's ``VIEWPORT``, with its ``TIMEOUT_MS`` as the default timeout."""
    pg = new_tab(shared_context, request.module.VIEWPORT, request.module.TIMEOUT_MS)
    yield pg
    pg.close()
