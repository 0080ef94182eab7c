"""The fair work queue on the pages (AppTest): a race and a log's evaluation wait their turn
and show their place and estimated start; a cancelled request leaves the queue with one line;
a closed tab's running race stops at its next chunk; the Cancel button's click is read from
the session's pending request."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

pytest.importorskip("streamlit")

from conftest import open_app_page

from allseason.ui import queueing
from allseason.ui.workqueue import FairQueue

RACE = "app_pages/2_Race.py"
DATA = "app_pages/7_Your_data.py"
SMALL = {"preset": "paper-synthetic", "horizon": "2000", "seed": "31", "d": "3", "n_arms": "6"}


@pytest.fixture
def queue(monkeypatch):
    """A queue of one slot, owned by the test, held by another visitor's long request."""
    q = FairQueue(1, per_session=3, clock=lambda: 0.0)  # a stopped clock: exact estimates
    monkeypatch.setattr(queueing, "work_queue", lambda: q)
    blocker = q.submit("another visitor", 40.0, "upload")
    texts: list[str] = []
    real = queueing.place_text
    monkeypatch.setattr(queueing, "place_text", lambda job: texts.append(real(job)) or texts[-1])
    q.texts, q.blocker = texts, blocker
    yield q
    q.release(blocker)


def _when(predicate, timeout=120.0):
    """Wait in a thread for ``predicate()`` to return something, and return it."""
    out: list = []

    def watch():
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            try:
                got = predicate()
            except Exception as e:  # shown by the test's assertion
                out.append(("watcher failed", repr(e)))
                return
            if got:
                out.append(got)
                return
            time.sleep(0.05)

    th = threading.Thread(target=watch, daemon=True)
    th.start()
    return th, out


def _waiting(q: FairQueue, label: str):
    return next((t for t in q.order() if t.label == label), None)


def _texts(at) -> str:
    return " ".join(m.value for m in [*at.info, *at.error, *at.success])


def test_a_queued_race_shows_its_place_and_start_and_can_be_cancelled(queue):
    at = open_app_page(RACE, query=SMALL, from_home=False)
    assert not at.exception
    assert "estimated at" in _texts(at)  # the cost, before the click

    def cancel_when_queued():
        t = _waiting(queue, "race")
        if t is not None and queue.texts:
            place = queue.place(t)
            queue.cancel(t, "cancelled")
            return place
        return None

    th, got = _when(cancel_when_queued)
    at.button(key="race_run").click().run()
    th.join(5)
    assert not at.exception, [e.value for e in at.exception]
    assert got and got[0][0] == 1 and got[0][1] == 40.0  # when the blocker's 40 s are done
    assert (
        "Queued: number 1 in line" in queue.texts[0]
        and "Estimated start in about" in (queue.texts[0])
    )
    shown = _texts(at)
    assert "your request was stopped: cancelled" in shown and "queue it again" in shown
    assert not any(m.value.startswith("Done:") for m in at.success)
    assert queue.snapshot()["waiting"] == 0  # nothing of this session left in the queue

    # the slot frees: the race runs, in this session's turn
    queue.release(queue.blocker)
    at.run()  # the whole page again (the last run was the results section's alone)
    at.button(key="race_run").click().run()
    assert not at.exception
    assert at.table and len(at.table[0].value) > 1  # the leaderboard


def test_a_closed_tabs_running_race_stops_at_its_next_chunk(queue, monkeypatch):
    queue.release(queue.blocker)
    gone: set = set()
    monkeypatch.setattr(queueing, "session_alive", lambda s: s not in gone)
    query = {**SMALL, "horizon": "20000", "seed": "77"}  # 20 chunks
    at = open_app_page(RACE, query=query, from_home=False)
    assert not at.exception
    chunks = []  # the race's checkpoints (one after each chunk)
    real = queueing.Job.checkpoint

    def counting(job):
        chunks.append(job.ticket.label)
        return real(job)

    monkeypatch.setattr(queueing.Job, "checkpoint", counting)

    def close_tab():
        running = [t for t in queue.running() if t.label == "race"]
        if running and chunks:
            gone.add(running[0].session)  # the tab is closed while its race runs
            return running[0]
        return None

    th, got = _when(close_tab)
    at.button(key="race_run").click().run()
    th.join(5)
    assert got, (
        "the race never ran",
        chunks,
        [getattr(e, "text", None) for e in at.get("progress")],
        queue.snapshot(),
        queue.running(),
    )
    assert not at.exception
    assert "session is gone" in _texts(at)
    assert 1 <= len(chunks) <= 5  # stopped at a chunk, not run to the end (20 chunks)
    assert not any(p.value == 100 for p in at.get("progress"))
    assert got[0].state == "cancelled" and queue.snapshot()["running"] == 0


def test_a_small_upload_is_read_at_once_and_only_its_evaluation_waits(queue, monkeypatch):
    """Every slot is held by another visitor's long request: a log below
    ``READ_WITHOUT_SLOT_BYTES`` is read without a slot (what it holds is on the page), and
    only its evaluation waits, its place and estimated start shown."""
    submitted: list[str] = []
    real_submit = queue.submit
    monkeypatch.setattr(
        queue, "submit", lambda s, c, label="": submitted.append(label) or real_submit(s, c, label)
    )
    seen = {}

    def step():
        reading = _waiting(queue, "reading a file")
        if reading is not None:  # the reading waits for a slot: stop it, the test fails below
            queue.cancel(reading, "cancelled")
        t = _waiting(queue, "log evaluation")
        if t is not None and queue.texts:
            seen["evaluation"] = queue.place(t)
            queue.cancel(t, "cancelled")
            return t
        return None

    at = open_app_page(DATA)
    th, got = _when(step)
    at.button(key="yd_ex_log").click().run()
    th.join(5)
    assert not at.exception, [e.value for e in at.exception]
    assert "reading a file" not in submitted, submitted
    assert submitted.count("log evaluation") == 1 and got
    assert seen["evaluation"] == (1, 40.0)  # after the other visitor's 40 s
    assert "Queued: number 1 in line" in queue.texts[-1]
    shown = " ".join(m.value for m in at.markdown)
    assert "a log of **20,000 events**" in shown  # read, while its evaluation waited
    assert "your request was stopped: cancelled" in _texts(at)


def test_a_queued_log_evaluation_waits_its_turn_and_can_be_cancelled(queue, monkeypatch):
    """A file above ``READ_WITHOUT_SLOT_BYTES`` (here: every file) is read in the queue, a
    short request, then its evaluation waits as a long one."""
    from allseason.ui import yourdata

    monkeypatch.setattr(yourdata, "READ_WITHOUT_SLOT_BYTES", 0)
    at = open_app_page(DATA)
    seen = {}

    def step():
        """The file's reading waits first (a short request): let it through while a second
        visitor's long request takes the slot next; then the evaluation waits: cancel it."""
        reading = _waiting(queue, "reading a file")
        if reading is not None and "blocker2" not in seen:
            seen["reading"] = queue.place(reading)
            seen["blocker2"] = queue.submit("visitor 2", 30.0, "upload")
            queue.release(queue.blocker)
        t = _waiting(queue, "log evaluation")
        if t is not None:
            seen["evaluation"] = queue.place(t)
            queue.cancel(t, "cancelled")
            return t
        return None

    th, got = _when(step)
    at.button(key="yd_ex_log").click().run()
    th.join(5)
    queue.release(seen.get("blocker2", queue.blocker))
    assert not at.exception, [e.value for e in at.exception]
    assert seen["reading"] == (1, 40.0)  # after the first visitor's 40 s
    assert got and got[0].cost > 5.0, (
        list(seen),
        _texts(at)[:300],
        len(queue.texts),
    )  # a long request: its estimate
    assert seen["evaluation"] == (1, 30.0)  # after the second visitor's 30 s
    assert "your request was stopped: cancelled" in _texts(at)
    assert not at.table  # no result shown
    at.run()  # the next run does not queue it again by itself: a button does
    assert "yd_eval" in [b.key for b in at.button] and not _waiting(queue, "log evaluation")
    assert not at.table and queue.snapshot()["waiting"] == 0


def test_the_cancel_buttons_click_is_read_from_the_pending_request(monkeypatch):
    def ctx(state: str, widgets):
        data = SimpleNamespace(widget_states=SimpleNamespace(widgets=widgets))
        requests = SimpleNamespace(_state=SimpleNamespace(name=state), _rerun_data=data)
        return SimpleNamespace(script_requests=requests, session_id="s")

    click = SimpleNamespace(id=f"$$ID-abc-{queueing.CANCEL_KEY}_7", trigger_value=True)
    other = SimpleNamespace(id="$$ID-def-race_run", trigger_value=True)
    for state, widgets, want in (
        ("RERUN", [other, click], True),
        ("RERUN", [other], False),
        ("CONTINUE", [click], False),
    ):
        got = ctx(state, widgets)
        monkeypatch.setattr(queueing, "get_script_run_ctx", lambda got=got, **k: got)
        assert queueing.cancel_pending() is want
    monkeypatch.setattr(queueing, "get_script_run_ctx", lambda **k: None)
    assert queueing.cancel_pending() is False
