"""The server's deployed folder is read in the background from the first visit to any page
(``deployed.read_ahead``, called by ``app.py``): a visitor who then opens "Your deployed
bandit" finds the log read (issue 32: a long log's first read takes the server seconds)."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from conftest import open_app_page
from deployed_page import write_fake_log

from allseason.ui import deployed, settings


def test_the_first_visit_to_home_reads_the_folder_in_the_background(tmp_path, monkeypatch):
    write_fake_log(tmp_path, 3000, batch_size=1)
    monkeypatch.setenv(settings.DEPLOYED_ENV, str(tmp_path))
    at = open_app_page("app_pages/0_Home.py", timeout=120, from_home=False)
    assert not at.exception, [e.value for e in at.exception]
    thread = deployed._read_ahead(str(tmp_path))  # the one app.py started (cached per folder)
    thread.join(timeout=120)
    assert not thread.is_alive()
    w = deployed._watch(str(tmp_path))
    assert w.error is None and w.read_at > 0
    assert w.dep.decisions.n_rows == 3000 and w.dep.batches.n_lines == 3000
    assert w.dep.refresh(tmp_path) == 0  # read: the page's own refresh finds nothing new


def test_the_read_ahead_starts_only_with_a_folder(monkeypatch):
    started = []
    monkeypatch.setattr(deployed, "_read_ahead", started.append)
    monkeypatch.delenv(settings.DEPLOYED_ENV, raising=False)
    deployed.read_ahead()
    assert started == []
    monkeypatch.setenv(settings.DEPLOYED_ENV, "/nonexistent/agent")
    deployed.read_ahead()
    assert started == ["/nonexistent/agent"]
