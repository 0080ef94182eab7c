"""The app's fair work queue (allseason/ui/workqueue.py), without Streamlit: fairness order,
places and estimated starts, cancel, a dropped session, short requests overtaking at a
checkpoint, and bounded memory."""

from __future__ import annotations

import threading

import pytest

from allseason.ui.workqueue import Cancelled, FairQueue, QueueFull


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def _queue(slots=1, **kw):
    clock = Clock()
    return FairQueue(slots, clock=clock, **kw), clock


def test_round_robin_across_sessions_not_first_come():
    q, _ = _queue(slots=1, per_session=10)
    first = q.submit("busy", 10.0, "busy-0")  # running
    busy = [q.submit("busy", 10.0, f"busy-{i}") for i in range(1, 4)]
    others = [q.submit(s, 10.0, s) for s in ("a", "b")]
    # "busy" has just been served: a and b (never served) first, then one busy per round
    assert [t.label for t in q.order()] == ["a", "b", "busy-1", "busy-2", "busy-3"]
    served = []
    running = first
    while running is not None:
        q.release(running)
        nxt = [t for t in busy + others if t.state == "running"]
        running = nxt[0] if nxt else None
        if running is not None:
            served.append(running.label)
    assert served == ["a", "b", "busy-1", "busy-2", "busy-3"]


def test_two_sessions_alternate():
    q, clock = _queue(slots=1, per_session=10)
    a = [q.submit("A", 5.1, f"A{i}") for i in range(3)]  # A0 runs
    b = [q.submit("B", 5.1, f"B{i}") for i in range(3)]
    order = []
    running = a[0]
    for _ in range(5):
        clock.t += 1
        q.release(running)
        running = next(t for t in a + b if t.state == "running")
        order.append(running.label)
    assert order == ["B0", "A1", "B1", "A2", "B2"]


def test_place_and_estimated_start_from_the_costs_ahead():
    q, clock = _queue(slots=2, per_session=10)
    r1, r2 = q.submit("a", 40.0), q.submit("b", 10.0)  # both run
    clock.t = 4.0  # r1 has 36 s left, r2 6 s
    w1, w2, w3 = q.submit("c", 20.0), q.submit("d", 30.0), q.submit("e", 8.0)
    assert r1.state == r2.state == "running"
    # order: e (short? no: 8 > 5, long) -> c, d, e by first come (none served)
    assert q.place(w1) == (1, 6.0)  # the first slot to free: r2's, in 6 s
    assert q.place(w2) == (2, 26.0)  # then w1 on that slot: 6 + 20 = 26 < 36
    assert q.place(w3) == (3, 36.0)  # r1's slot frees at 36
    assert q.place(r1) == (0, 0.0)


def test_short_requests_go_first_and_take_a_long_ones_slot_at_its_checkpoint():
    q, clock = _queue(slots=2, short_seconds=5.0, quantum_seconds=1.0, per_session=10)
    long1, long2 = q.submit("u1", 50.0, "upload"), q.submit("u2", 50.0, "upload")
    long3 = q.submit("u3", 50.0, "upload")
    race = q.submit("visitor21", 1.5, "race")
    assert q.order() == [race, long3]
    assert not q.checkpoint(long1)  # has not held its slot a quantum yet
    clock.t = 1.5
    assert q.checkpoint(long1) is True  # gives its slot to the short race
    assert race.state == "running" and long1.state == "waiting"
    assert not q.checkpoint(long2)  # a short one already runs: only one slot is lent
    assert q.order() == [long1, long3]  # long1 comes back first among the long ones
    q.release(race)
    assert long1.state == "running" and long3.state == "waiting"
    assert q.wait(long1, timeout=0)


def test_cancel_a_waiting_ticket_and_a_running_one_at_its_checkpoint():
    q, _ = _queue(slots=1)
    a, b, c = q.submit("a", 9), q.submit("b", 9), q.submit("c", 9)
    q.cancel(b)
    assert b.state == "cancelled" and q.order() == [c]
    with pytest.raises(Cancelled):
        q.wait(b, timeout=0)
    q.cancel(a, "stopped by its visitor")
    with pytest.raises(Cancelled, match="stopped by its visitor"):
        q.checkpoint(a)
    assert c.state == "waiting"  # the slot is a's until its owner releases it
    q.release(a)
    assert a.state == "cancelled" and c.state == "running"


def test_a_dropped_session_loses_its_queued_work_and_stops_its_running_work():
    q, _ = _queue(slots=1, per_session=10)
    gone_running = q.submit("gone", 9)
    gone_waiting = [q.submit("gone", 9) for _ in range(3)]
    other = q.submit("other", 9)
    assert q.reap(lambda s: s != "gone") == 4
    assert all(t.state == "cancelled" for t in gone_waiting)
    assert q.order() == [other]
    with pytest.raises(Cancelled, match="session is gone"):
        q.checkpoint(gone_running)
    q.release(gone_running)
    assert other.state == "running"


def test_bounded_waiting_and_per_session():
    q, _ = _queue(slots=1, max_waiting=5, per_session=2)
    q.submit("x", 1)  # runs
    q.submit("x", 1), q.submit("x", 1)
    with pytest.raises(QueueFull, match="at most 2 per visitor"):
        q.submit("x", 1)
    for s in "abc":
        q.submit(s, 1)
    with pytest.raises(QueueFull, match="queue is full"):
        q.submit("d", 1)


def test_memory_stays_bounded_over_many_sessions():
    q, clock = _queue(slots=2, max_sessions=50)
    for i in range(5000):
        clock.t += 0.01
        t = q.submit(f"s{i}", 1.0)
        if i % 3 == 0:
            q.cancel(t)
        q.release(t)
    snap = q.snapshot()
    assert snap == {"running": 0, "waiting": 0, "sessions_remembered": 50}


def test_threads_wait_their_turn_and_never_exceed_the_slots():
    q = FairQueue(2, per_session=50)
    running, peak, lock = [0], [0], threading.Lock()
    order: list[str] = []

    def job(session, i):
        t = q.submit(session, 1.0, f"{session}{i}")
        assert q.wait(t, timeout=30)
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
            order.append(t.label)
        threading.Event().wait(0.01)
        with lock:
            running[0] -= 1
        q.release(t)

    threads = [threading.Thread(target=job, args=(s, i)) for s in "abcd" for i in range(5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    assert len(order) == 20 and peak[0] == 2
    assert q.snapshot()["running"] == q.snapshot()["waiting"] == 0
