"""A log above the per-request budget (AppTest): evaluated on its first N events, said in one
line ("You see the first N of M events"), refined on request through the same queue (and
cancellable there), or refused with the budget and the command line when nothing fits.

The budgets are set small (``limits.COST_FIRST_PART_SECONDS``, ``COST_REFINE_SECONDS``, read when
a page runs) so that the 20,000-event example is "too large": the runs stay a few seconds."""

from __future__ import annotations

import re
import threading
import time

import pytest

pytest.importorskip("streamlit")

from conftest import open_app_page

from allseason import api, costs, limits
from allseason.logs import examples, offline, subsample
from allseason.ui import queueing
from allseason.ui.workqueue import FairQueue

DATA = "app_pages/7_Your_data.py"
SEEDS = 2


@pytest.fixture(scope="module")
def full_cost() -> float:
    """The example log's whole evaluation, estimated (CPU-s at SEEDS seeds)."""
    return api.estimate_replay(api.read_user_file(examples.obd_log(), "log"), SEEDS)


def _open():
    at = open_app_page(DATA)
    at.number_input(key="yd_seeds").set_value(SEEDS)
    at.button(key="yd_ex_log").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _measured_events(at) -> int:
    """The events the shown results were computed on (the logger's row: 'over N events')."""
    text = next(m.value for m in at.markdown if "What the log measured" in m.value)
    return int(re.search(r"over ([\d,]+) events", text).group(1).replace(",", ""))


def test_a_log_above_the_budget_shows_its_first_events_then_refines(monkeypatch, full_cost):
    monkeypatch.setattr(limits, "COST_FIRST_PART_SECONDS", 0.1 * full_cost)
    monkeypatch.setattr(limits, "COST_REFINE_SECONDS", 0.2 * full_cost)
    at = _open()
    line = " ".join(i.value for i in at.info)
    got = re.search(r"You see the first ([\d,]+) of 20,000 events", line)
    assert got, line
    n = int(got.group(1).replace(",", ""))
    assert subsample.MIN_EVENTS <= n < 20_000 and _measured_events(at) == n
    assert f"{full_cost:,.0f} CPU-seconds" in line  # the whole log's estimate, stated
    log = api.read_user_file(examples.obd_log(), "log")
    est = costs.estimate_replay(n, log.d, log.n_arms, offline.OFFLINE_POLICIES, SEEDS)
    assert est <= limits.COST_FIRST_PART_SECONDS < 1.2 * est  # as many as fit (2 digits)
    refine = at.button(key="yd_refine_go")
    assert "CPU-s" in refine.label and "of 20,000 events" in refine.label
    assert "python -m allseason replay" in refine.help
    refine.click().run()
    assert not at.exception, [e.value for e in at.exception]
    done = " ".join(s.value for s in at.success)
    m = re.search(r"Refined: you see the first ([\d,]+) of 20,000 events", done)
    assert m, (done, [i.value for i in at.info])
    n2 = int(m.group(1).replace(",", ""))
    assert n < n2 < 20_000 and _measured_events(at) == n2
    assert "yd_refine_go" not in [b.key for b in at.button]  # nothing more to refine


def test_a_log_whose_first_events_do_not_fit_is_refused_with_the_command(monkeypatch):
    monkeypatch.setattr(limits, "COST_FIRST_PART_SECONDS", 0.01)
    at = _open()
    err = " ".join(e.value for e in at.error)
    assert "CPU-seconds" in err and "0 allowed per request" in err, err
    assert "python -m allseason replay" in err and f"--seeds {SEEDS}" in err
    assert not at.table and not any("What the log measured" in m.value for m in at.markdown)


def test_a_queued_refinement_can_be_cancelled_and_the_first_events_stay(monkeypatch, full_cost):
    monkeypatch.setattr(limits, "COST_FIRST_PART_SECONDS", 0.1 * full_cost)
    monkeypatch.setattr(limits, "COST_REFINE_SECONDS", 0.2 * full_cost)
    q = FairQueue(1, per_session=3, clock=lambda: 0.0)
    monkeypatch.setattr(queueing, "work_queue", lambda: q)
    at = _open()
    n = _measured_events(at)
    blocker = q.submit("another visitor", 40.0, "upload")  # the slot is taken
    seen: list = []

    def cancel_when_queued():
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60:
            t = next((t for t in q.order() if t.label == "refining a log"), None)
            if t is not None:
                seen.append(q.place(t))
                q.cancel(t, "cancelled")
                return
            time.sleep(0.05)

    th = threading.Thread(target=cancel_when_queued, daemon=True)
    th.start()
    at.button(key="yd_refine_go").click().run()
    th.join(5)
    q.release(blocker)
    assert not at.exception, [e.value for e in at.exception]
    assert seen and seen[0] == (1, 40.0)  # its place and start, behind the other visitor
    assert "your request was stopped: cancelled" in " ".join(i.value for i in at.info)
    assert _measured_events(at) == n  # the first events' results stay
    assert q.snapshot() == {"running": 0, "waiting": 0, "sessions_remembered": 2}
    at.run()  # the next run: the Refine button again, not a refinement queued by itself
    assert "yd_refine_go" in [b.key for b in at.button] and q.snapshot()["running"] == 0
