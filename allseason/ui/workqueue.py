"""The app's work queue: one per process, fair across sessions, a bounded number running.

Pure Python (``threading``), no Streamlit: :mod:`allseason.ui.queueing` is its Streamlit glue
(the session's id, the page's place-in-queue line, the Cancel button, a closed tab), and the
tests drive this module alone.

Every heavy request of the app (a race, a log's evaluation, a reward table's race, a "race it
to check", a paper tab's run) is a :class:`Ticket`: submitted with its session and its cost
estimated before it runs (CPU-seconds, :mod:`allseason.costs`), it waits until the queue
grants it one of ``slots`` running places, then runs in its own session's thread and calls
:meth:`FairQueue.checkpoint` between chunks, and finally :meth:`FairQueue.release`.

The order (:meth:`FairQueue.order`):

1. **short before long**: a request estimated at most ``short_seconds`` (the default race:
   about 1.5 CPU-s) is served before the long ones (a large upload's evaluation: about 50),
   and a long request that has held its slot ``quantum_seconds`` gives it up at its next
   checkpoint when a short one waits and no short one is running (so at most one slot is
   ever lent, and long requests keep moving on the other); it comes back first among the
   long ones;
2. **round-robin across sessions** within each class: the session served longest ago (or
   never) first, one request of each session per round; a session that queues ten requests
   gets every tenth turn, not the next ten.

Cancelling (:meth:`FairQueue.cancel`, :meth:`FairQueue.drop_session` for a closed tab)
removes a waiting ticket at once; a running one is told, and stops at its next checkpoint
(:class:`Cancelled`). Memory is bounded: at most ``max_waiting`` tickets wait (and
``per_session`` per session; beyond, :class:`QueueFull`), finished tickets are forgotten, and
the sessions' last-served times are kept for at most ``max_sessions`` sessions.

    >>> q = FairQueue(slots=1)
    >>> a, b = q.submit("s1", 2.0, "race"), q.submit("s2", 2.0, "race")
    >>> a.state, b.state, q.place(b)[0]
    ('running', 'waiting', 1)
    >>> q.release(a); b.state
    'running'
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

__all__ = ["FairQueue", "Ticket", "Cancelled", "QueueFull"]


class Cancelled(Exception):
    """The ticket was cancelled (by its visitor, or its session is gone)."""


class QueueFull(Exception):
    """The queue (or this session's share of it) is full: try again later."""


@dataclass(eq=False)
class Ticket:
    """One request in the queue: its session, its estimated cost (CPU-seconds), a label, and
    where it is (``waiting``, ``running``, ``done``, ``cancelled``)."""

    session: Hashable
    cost: float
    label: str
    number: int
    submitted: float
    state: str = "waiting"
    started: float | None = None  # when it last got its slot
    ran: float = 0.0  # seconds held before its last slot (a ticket that gave its slot up)
    resumed: bool = False  # gave its slot up to a short request: first among the long ones
    cancel_reason: str = ""
    granted: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def cancelled(self) -> bool:
        """Whether it was cancelled (a running ticket stops at its next checkpoint)."""
        return bool(self.cancel_reason)


class FairQueue:
    """A process-wide queue of :class:`Ticket`: ``slots`` running at once, short requests
    first, round-robin across sessions (the module's docstring has the rules).

    Parameters
    ----------
    slots : int
        Requests running at once.
    max_waiting, per_session : int
        Tickets waiting at most, in all and per session (:class:`QueueFull` beyond).
    short_seconds : float
        A request estimated at most this many CPU-seconds is short.
    quantum_seconds : float
        A long request gives its slot to a waiting short one after holding it this long.
    max_sessions : int
        Sessions whose last-served time is remembered (the oldest forgotten beyond).
    clock : callable
        Seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        slots: int = 2,
        *,
        max_waiting: int = 200,
        per_session: int = 3,
        short_seconds: float = 5.0,
        quantum_seconds: float = 1.0,
        max_sessions: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ):
        if slots < 1:
            raise ValueError(f"slots: at least 1, got {slots}")
        self.slots, self.max_waiting, self.per_session = int(slots), max_waiting, per_session
        self.short_seconds, self.quantum = float(short_seconds), float(quantum_seconds)
        self.max_sessions, self.clock = max_sessions, clock
        self._lock = threading.Lock()
        self._waiting: list[Ticket] = []  # in submission order
        self._running: list[Ticket] = []
        self._served: OrderedDict[Hashable, float] = OrderedDict()  # session -> last start
        self._numbers = itertools.count(1)

    # --- submitting and leaving ----------------------------------------------------------
    def submit(self, session: Hashable, cost: float, label: str = "") -> Ticket:
        """A new ticket for ``session`` (running at once if a slot is free and nobody waits
        before it).

        Raises
        ------
        QueueFull
            If ``max_waiting`` tickets wait, or ``per_session`` of this session's."""
        with self._lock:
            mine = sum(t.session == session for t in self._waiting)
            if len(self._waiting) >= self.max_waiting:
                raise QueueFull(
                    f"the server's queue is full ({self.max_waiting} requests waiting); "
                    f"try again in a minute"
                )
            if mine >= self.per_session:
                raise QueueFull(
                    f"you already have {mine} requests waiting (at most {self.per_session} "
                    f"per visitor); cancel one or wait for it"
                )
            t = Ticket(session, max(float(cost), 0.0), label, next(self._numbers), self.clock())
            self._waiting.append(t)
            self._dispatch()
            return t

    def release(self, ticket: Ticket) -> None:
        """The ticket is done (or gives up): its slot goes to the next in :meth:`order`."""
        with self._lock:
            if ticket in self._running:
                self._running.remove(ticket)
            if ticket in self._waiting:
                self._waiting.remove(ticket)
            if ticket.state in ("waiting", "running"):
                ticket.state = "cancelled" if ticket.cancelled else "done"
            ticket.granted.set()  # a thread still waiting on it wakes up
            self._dispatch()

    def cancel(self, ticket: Ticket, reason: str = "cancelled") -> None:
        """Cancel ``ticket``: removed at once if waiting; if running, it stops at its next
        :meth:`checkpoint` (its owner then calls :meth:`release`)."""
        with self._lock:
            ticket.cancel_reason = ticket.cancel_reason or reason
            if ticket in self._waiting:
                self._waiting.remove(ticket)
                ticket.state = "cancelled"
                self._dispatch()
            ticket.granted.set()

    def drop_session(self, session: Hashable, reason: str = "the session is gone") -> int:
        """Cancel every ticket of ``session`` (a closed tab); returns how many."""
        with self._lock:
            mine = [t for t in self._waiting + self._running if t.session == session]
        for t in mine:
            self.cancel(t, reason)
        return len(mine)

    def reap(self, alive: Callable[[Hashable], bool]) -> int:
        """Drop the tickets of every session for which ``alive(session)`` is False."""
        with self._lock:
            sessions = {t.session for t in self._waiting + self._running}
        return sum(self.drop_session(s) for s in sessions if not alive(s))

    # --- waiting and running -------------------------------------------------------------
    def wait(self, ticket: Ticket, timeout: float | None = None) -> bool:
        """Block until ``ticket`` runs (True) or ``timeout`` passes (False).

        Raises
        ------
        Cancelled
            If the ticket was cancelled."""
        ticket.granted.wait(timeout)
        if ticket.cancelled:
            raise Cancelled(ticket.cancel_reason)
        return ticket.state == "running"

    def checkpoint(self, ticket: Ticket) -> bool:
        """Called by a running ticket between chunks: raises :class:`Cancelled` if it was
        cancelled; returns True if it has just given its slot to a short request (wait
        again with :meth:`wait` before the next chunk), else False."""
        if ticket.cancelled:
            raise Cancelled(ticket.cancel_reason)
        with self._lock:
            if not self._should_yield(ticket):
                return False
            self._running.remove(ticket)
            ticket.ran += self._held(ticket)
            ticket.state, ticket.resumed, ticket.started = "waiting", True, None
            ticket.granted.clear()
            self._waiting.append(ticket)
            self._dispatch()
            return ticket.state == "waiting"

    def _should_yield(self, ticket: Ticket) -> bool:
        if self._is_short(ticket) or ticket not in self._running:
            return False
        held = self._held(ticket)
        short_running = any(self._is_short(t) for t in self._running)
        short_waiting = any(self._is_short(t) for t in self._waiting)
        return held >= self.quantum and short_waiting and not short_running

    def _held(self, t: Ticket) -> float:
        return self.clock() - t.started if t.started is not None else 0.0

    # --- the order, the places -----------------------------------------------------------
    def _is_short(self, t: Ticket) -> bool:
        return t.cost <= self.short_seconds

    def order(self) -> list[Ticket]:
        """The waiting tickets in the order they will be served."""
        with self._lock:
            return self._order()

    def _order(self) -> list[Ticket]:
        out: list[Ticket] = []
        for short in (True, False):
            tickets = [t for t in self._waiting if self._is_short(t) == short]
            out += [t for t in tickets if t.resumed]  # gave their slot up: first again
            rest = [t for t in tickets if not t.resumed]
            by_session: dict[Hashable, list[Ticket]] = {}
            for t in rest:  # submission order within a session
                by_session.setdefault(t.session, []).append(t)
            # the session served longest ago (never: -inf) first; ties: its first ticket
            sessions = sorted(
                by_session,
                key=lambda s: (self._served.get(s, float("-inf")), by_session[s][0].number),
            )
            for rnd in range(max((len(v) for v in by_session.values()), default=0)):
                out += [by_session[s][rnd] for s in sessions if rnd < len(by_session[s])]
        return out

    def running(self) -> list[Ticket]:
        """The tickets running now."""
        with self._lock:
            return list(self._running)

    def _dispatch(self) -> None:
        """Grant free slots to the head of the order (the lock held)."""
        while len(self._running) < self.slots and self._waiting:
            t = self._order()[0]
            self._waiting.remove(t)
            t.state, t.started = "running", self.clock()
            self._running.append(t)
            self._served[t.session] = t.started
            self._served.move_to_end(t.session)
            while len(self._served) > self.max_sessions:
                self._served.popitem(last=False)
            t.granted.set()

    def remaining(self, t: Ticket) -> float:
        """Estimated seconds ``t`` still needs (its cost, less what it has run)."""
        ran = t.ran + (self.clock() - t.started if t.started is not None else 0.0)
        return max(t.cost - ran, 0.05 * t.cost)

    def place(self, ticket: Ticket) -> tuple[int, float]:
        """(place, estimated start in seconds): 1 = next; 0 if it is running or gone. The
        start is when a slot frees for it, from the estimated remaining costs of the running
        tickets and the costs of those before it, each slot taking the next in turn."""
        with self._lock:
            order = self._order()
            if ticket not in order:
                return 0, 0.0
            free = sorted(self.remaining(t) for t in self._running)
            free += [0.0] * (self.slots - len(free))
            for t in order[: order.index(ticket)]:
                free.sort()
                free[0] += self.remaining(t)
            return order.index(ticket) + 1, min(free)

    def snapshot(self) -> dict:
        """Counts, for a status line and the tests: running, waiting, sessions remembered."""
        with self._lock:
            return {
                "running": len(self._running),
                "waiting": len(self._waiting),
                "sessions_remembered": len(self._served),
            }
