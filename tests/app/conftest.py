"""What the AppTest files of tests/app/ share: the app's path, a fresh run cache around a test
(:func:`fresh_cache`), opening the app on a page with a link's query (:func:`open_app`), and
reading what a run drew (figures from their JSON, Plotly's typed arrays, the st.error texts).

The test files import the helpers (``from .conftest import open_app, figures``) and ask for
the fixture with ``pytestmark = pytest.mark.usefixtures("fresh_cache")``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 90  # seconds per AppTest run (a race of the small scenarios takes a few)


@pytest.fixture
def fresh_cache():
    """The app's run cache (one per process, as on the server) empty before and after the
    test: no race computed by another test is served from it."""
    from allseason.ui import runcache

    runcache.store().clear()
    yield
    runcache.store().clear()


def open_app(page: str | None = None, query: dict | None = None, timeout: float = TIMEOUT):
    """A new AppTest session of ``app.py`` opened with the link's ``query`` parameters: its
    first run is Home's (the link's page is where the visitor then goes), then ``page``
    (``app_pages/...``) if given."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=timeout)
    if query:
        at.query_params.update(query)
    at.run()
    if page:
        at.switch_page(page)
        at.run()
    return at


def figures(at) -> list[dict]:
    """The figure JSON of every Plotly chart of the last run, in page order."""
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def title_of(fig: dict) -> str:
    """A figure's title text ("" if none)."""
    t = fig["layout"].get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


def values(v) -> np.ndarray:
    """A Plotly JSON array: a list, or a typed array {"dtype", "bdata"} (plotly >= 6)."""
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
    return np.asarray(v)


def errors(at) -> list[str]:
    """The texts of the run's st.error messages."""
    return [e.value for e in at.error]


# results shared with other folders, made once per session (tests/shared_results.py)
from ..shared_results import shared_deployment_example, shared_obd_runs  # noqa: E402,F401
