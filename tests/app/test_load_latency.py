"""What 20 browsers at once on one server showed (benchmarks/load_test.py, race mode): a
visitor's finished race stays on the page through a rerun of its own (a websocket that
reconnects) even when the shared cache has dropped it, and a request waiting in the queue
resends its line only when the line changed (each resend redraws the visitor's page)."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("streamlit")

from conftest import open_app_page

from allseason.ui import keys, queueing, runcache
from allseason.ui.workqueue import FairQueue

RACE = "app_pages/2_Race.py"
SMALL = {"preset": "paper-synthetic", "horizon": "2000", "seed": "43", "d": "3", "n_arms": "6"}


def _texts(at) -> str:
    return " ".join(m.value for m in [*at.info, *at.error, *at.success])


def test_a_race_dropped_from_the_cache_is_shown_again_on_a_rerun_not_lost():
    at = open_app_page(RACE, query=SMALL, from_home=False)
    at.button(key="race_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    race = at.session_state[keys.LAST_RACE]
    board = at.table[0].value.drop(columns="Seconds")  # the race just run (not its timing)
    runcache.store().clear()  # eight other visitors' races pushed it out of the cache
    at.run()  # a rerun without a click (e.g. the websocket reconnected)
    assert not at.exception, [e.value for e in at.exception]
    assert "to start" not in _texts(at)  # not "Press Run race to start"
    assert at.table and at.table[0].value.drop(columns="Seconds").equals(board)  # recomputed
    assert runcache.store().get(runcache.key_of(race)) is not None

    # another race (a setting changed) is not run without its click
    other = {**SMALL, "seed": "44"}
    at2 = open_app_page(RACE, query=other, from_home=False)
    assert "to start" in _texts(at2) and not at2.table


class Bar:
    """A progress bar that counts what it was sent."""

    def __init__(self):
        self.texts: list[str] = []

    def progress(self, value, text=""):
        self.texts.append(text)


def _wait_in_thread(job, seconds):
    th = threading.Thread(target=job.wait, daemon=True)
    th.start()
    time.sleep(seconds)
    return th


def test_a_waiting_request_resends_its_line_only_when_it_changed(monkeypatch):
    q = FairQueue(1)
    blocker = q.submit("another visitor", 40.0, "upload")  # real clock: 40 s, counting down
    bar = Bar()
    job = queueing.Job(q, q.submit("me", 2.0, "race"), bar)
    th = _wait_in_thread(job, 6 * queueing.POLL_SECONDS)  # about 6 polls
    assert len(bar.texts) == 1, bar.texts  # "about 40 s" all along: sent once, not 6 times
    assert "number 1 in line" in bar.texts[0] and "about 40 s" in bar.texts[0]

    # the place changes: the new line is sent (at most every DRAW_SECONDS)
    monkeypatch.setattr(queueing, "DRAW_SECONDS", 0.0)
    q.release(blocker)
    th.join(5)
    assert not th.is_alive() and job.ticket.state == "running"

    q2 = FairQueue(1)
    first = q2.submit("a", 40.0, "upload")
    ahead = q2.submit("b", 30.0, "upload")
    bar2 = Bar()
    job2 = queueing.Job(q2, q2.submit("me", 20.0, "upload"), bar2)
    th2 = _wait_in_thread(job2, 2 * queueing.POLL_SECONDS)
    q2.cancel(ahead)  # the visitor ahead leaves: number 2 -> number 1
    time.sleep(3 * queueing.POLL_SECONDS)
    assert "number 2 in line" in bar2.texts[0]
    assert "number 1 in line" in bar2.texts[-1] and len(bar2.texts) <= 3, bar2.texts
    q2.release(first)
    th2.join(5)
    assert job2.ticket.state == "running"


@pytest.mark.parametrize(
    "seconds, shown", [(0.2, "1"), (7.4, "7"), (37.0, "35"), (38.0, "40"), (124.0, "120")]
)
def test_estimates_are_shown_as_coarse_as_they_are_uncertain(seconds, shown):
    assert queueing.about(seconds) == shown
