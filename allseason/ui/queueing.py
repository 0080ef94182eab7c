"""The work queue's Streamlit glue: every heavy request of the app waits its turn in the one
process-wide :class:`~allseason.ui.workqueue.FairQueue` (:func:`work_queue`), keyed by the
Streamlit session, and says where it is.

:func:`queued` is the whole interface for a page: ``with queued(cost, label, bar) as job:``
submits the request with its estimated cost (CPU-seconds, ``api.estimate_cost``), and, while
it waits, shows in ``bar`` its place and estimated start (from the estimated costs of the
requests before it and of those running) with a **Cancel** button; inside the block the work
runs, calling ``job.checkpoint()`` between chunks (which stops it if its visitor cancelled it
or closed the tab, and lends its slot to a short request when the queue asks).

Slots: 2, one per core of the 2-core server this app is measured on (``ALLSEASON_LOW_MEMORY``:
1). The kernels release the GIL, so two requests really run at once; a third would only
share the same two cores (each taking longer, with its memory held meanwhile), and one slot
would leave a short race behind a 50-second upload. With two, and short requests first, a
race waits at most one chunk of a long request.

A closed tab: its session is no longer active in Streamlit's runtime; its waiting request
leaves the queue at once (every submit reaps the gone sessions, and each waiting thread checks
its own every ``POLL_SECONDS``), a running one stops at its next checkpoint.

Cancel: the button's click is a rerun request that a fragment's run does not take while it
runs (Streamlit lets a fragment finish); the waiting loop therefore reads the session's pending
request, and leaves the queue when it holds this button's click.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from allseason import api

from . import settings
from .keys import QUEUE_NOTE
from .workqueue import Cancelled, FairQueue, QueueFull, Ticket

log = logging.getLogger("allseason.ui")

SLOTS = 1 if settings.LOW_MEMORY else 2
POLL_SECONDS = 0.25  # a waiting request checks its place, its session and Cancel this often
# ... but resends its line only when the line changed, and at most this often: every resend
# is a message that the visitor's browser redraws (Streamlit merges the resends of one element
# between two flushes, so this trims redraws, not bytes; 20 browsers on the server's 2 cores
# in benchmarks/load_test.py)
DRAW_SECONDS = 1.0
CANCEL_KEY = "queue_cancel"  # the Cancel buttons' key prefix (+ "_" + the ticket's number)
DEFAULT_COST = 10.0  # CPU-seconds of a request whose page gives no estimate (a long one)


class QueueStopped(api.SpecError):
    """The request left the queue: cancelled by its visitor, its tab closed, or the queue
    full. A SpecError, so a page's guard shows its one line."""

    def __init__(self, message: str):
        super().__init__("queue", message)


@st.cache_resource(show_spinner=False)
def work_queue() -> FairQueue:
    """The process-wide queue."""
    return FairQueue(SLOTS, **api.QUEUE_LIMITS)


def session_id() -> str:
    """The Streamlit session id of this run (one browser tab); outside a script run (a test's
    thread), the thread's own."""
    ctx = get_script_run_ctx(suppress_warning=True)
    return ctx.session_id if ctx is not None else f"thread-{threading.get_ident()}"


def session_alive(session: object) -> bool:
    """Whether ``session`` is still an active session of this server (True where there is no
    runtime, e.g. under AppTest)."""
    try:
        from streamlit import runtime

        if not runtime.exists():
            return True
        return bool(runtime.get_instance().is_active_session(str(session)))
    except Exception:  # a runtime that cannot say: keep the work
        return True


def cancel_pending() -> bool:
    """Whether this session has a pending rerun that holds a click on the Cancel button (read
    from the run's request queue: a fragment's widget does not interrupt a running fragment)."""
    ctx = get_script_run_ctx()
    requests = getattr(ctx, "script_requests", None)
    data = getattr(requests, "_rerun_data", None)
    if getattr(getattr(requests, "_state", None), "name", "") != "RERUN" or data is None:
        return False
    states = getattr(data, "widget_states", None)
    if states is None:
        return False
    return any(f"-{CANCEL_KEY}_" in w.id and w.trigger_value for w in states.widgets)


def _cancel_clicked(then=None) -> None:
    st.session_state[QUEUE_NOTE] = (
        "Cancelled: your request left the queue. Press the button again to queue it."
    )
    if then is not None:  # the page's own word: e.g. not queued again by itself on the rerun
        then()


def about(seconds: float) -> str:
    """An estimate in whole seconds, as coarse as it is uncertain: at least 1, to the second
    under 10 s, to 5 s under a minute, to 10 s beyond (a line that changes only when the
    estimate really moves: see ``DRAW_SECONDS``)."""
    s = max(float(seconds), 1.0)
    step = 1 if s < 10 else 5 if s < 60 else 10
    return f"{max(step * round(s / step), 1):.0f}"


def place_text(job: Job) -> str:
    """ "Queued: 3rd in line ..." for a waiting request."""
    q, t = job.queue, job.ticket
    place, start = q.place(t)
    snap = q.snapshot()
    what = "Paused for a short request" if t.resumed else "Queued"
    return (
        f"{what}: number {place} in line ({snap['waiting']} waiting, {snap['running']} running; "
        f"at most {q.slots} at once, visitors served in turn). Estimated start in about "
        f"{about(start)} s, from the estimated costs of the requests ahead; yours: "
        f"about {t.cost:.0f} CPU-s."
    )


class Job:
    """A request of this session in the queue: wait for its turn (:meth:`wait`), then run with
    :meth:`checkpoint` between chunks."""

    def __init__(self, queue: FairQueue, ticket: Ticket, bar=None, on_cancel=None):
        self.queue, self.ticket, self.bar, self.on_cancel = queue, ticket, bar, on_cancel
        self._button = st.empty() if bar is not None else None
        self._drawn = False
        self._waits = 0  # a ticket that lent its slot waits again: a new button key

    def _stop_if_gone(self) -> None:
        sid = self.ticket.session
        if not session_alive(sid):
            self.queue.drop_session(sid)
        elif cancel_pending():
            self.queue.cancel(self.ticket, "cancelled")

    def wait(self) -> None:
        """Until the request runs: its place and estimated start in the bar, and Cancel.

        Raises
        ------
        QueueStopped
            Cancelled, or its session gone."""
        self._waits += 1
        shown, shown_at = "", 0.0
        try:
            while not self.queue.wait(self.ticket, timeout=0 if not self._drawn else POLL_SECONDS):
                self._stop_if_gone()
                if self.bar is not None:
                    text, now = place_text(self), time.monotonic()
                    if not self._drawn or (text != shown and now - shown_at >= DRAW_SECONDS):
                        self.bar.progress(0.0, text=text)
                        shown, shown_at = text, now
                    if not self._drawn and self._button is not None:
                        self._button.button(
                            "Cancel",
                            key=f"{CANCEL_KEY}_{self.ticket.number}_{self._waits}",
                            on_click=_cancel_clicked,
                            args=(self.on_cancel,),
                            icon=":material/close:",
                        )
                self._drawn = True
        except Cancelled as e:
            raise QueueStopped(f"your request was stopped: {e}") from None
        finally:
            if self._drawn and self._button is not None:
                self._button.empty()
                self._drawn = False

    def checkpoint(self) -> None:
        """Between two chunks: stop if cancelled or the tab is gone (:class:`QueueStopped`);
        wait again if the slot was lent to a short request."""
        self._stop_if_gone()
        try:
            if self.queue.checkpoint(self.ticket):
                self.wait()
        except Cancelled as e:
            raise QueueStopped(f"your request was stopped: {e}") from None


@contextmanager
def queued(cost: float | None = None, label: str = "a request", bar=None, on_cancel=None):
    """Run the block when the queue gives this session's request a slot (see the module's
    docstring); yields its :class:`Job`. ``on_cancel``: called (no arguments) by the Cancel
    button's click, before the rerun it starts.

    Raises
    ------
    QueueStopped
        The queue is full, or the request was cancelled (its visitor, a closed tab)."""
    q = work_queue()
    q.reap(session_alive)
    try:
        ticket = q.submit(session_id(), DEFAULT_COST if cost is None else cost, label)
    except QueueFull as e:
        raise QueueStopped(str(e)) from None
    job = Job(q, ticket, bar, on_cancel)
    try:
        job.wait()
        yield job
    finally:
        q.release(ticket)


def note() -> None:
    """The queue's last word for this session (a cancelled request), shown once."""
    text = st.session_state.pop(QUEUE_NOTE, None)
    if text:
        st.info(text, icon=":material/cancel:")


__all__ = ["queued", "work_queue", "Job", "QueueStopped", "note", "SLOTS", "session_id"]
