"""A reader process of the service (``--workers N``, N > 1): it answers ``/decide`` from the
latest snapshot and appends what it answered, and the rewards it is sent, to its own journals,
which the writer (:class:`~.store.Writer`) tails.

Each journal is a run of segments (:func:`~.store.reader_path`): past ``journal_bytes`` the
reader closes segment n and opens n + 1. A record is written whole before the reader answers
(a reward fsync'd), and always into the last segment; the writer moves on from segment n only
once n + 1 exists, and deletes n only once CURRENT records that it was read (docs/serve.md,
"Bounded disk"): rotation never loses an acknowledged record.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..agent import Agent
from ..limits import SERVE_LIMITS
from .checks import RequestError
from .journal import DiskError, Journal, fsync_dir
from .store import _line, _snap, decision_answer, read_pointer, reader_path, reader_segments
from .store import warm_up as _warm_up


class _Segments:
    """One journal of a reader, as segments: appends go to the last one; a new one is begun
    past ``journal_bytes``."""

    def __init__(self, folder: Path, index: int, kind: str, journal_bytes: int):
        self.folder, self.index, self.kind, self.cap = folder, index, kind, journal_bytes
        self.seg = (reader_segments(folder, index, kind) or [0])[-1]
        self.journal = Journal(reader_path(folder, index, kind, self.seg))
        self.journal.open()  # a last line cut by a kill is cut off

    def append(self, rec: dict, *, sync: bool) -> None:
        self.journal.append(rec, sync=sync)
        if self.journal.size >= self.cap:
            self.rotate()

    def rotate(self) -> None:
        """Close this segment and begin the next (the record just written stays in this one,
        whole: the writer reads it before it moves on)."""
        nxt = Journal(reader_path(self.folder, self.index, self.kind, self.seg + 1))
        try:
            nxt.open()
            fsync_dir(nxt.path.parent)
        except OSError:
            nxt.close()  # the disk refused: go on in this segment, try again next time
            return
        self.journal.close()
        self.journal, self.seg = nxt, self.seg + 1


class Reader:
    """A process that answers ``/decide`` from the latest snapshot and writes what it answered
    (and the rewards it is sent) to its own journals, which the writer tails.

    Parameters
    ----------
    folder : path
        The state folder.
    index : int
        1 .. workers - 1.
    poll : float
        Seconds between two looks at CURRENT.
    journal_bytes : int
        A journal begins a new segment past this many bytes.
    """

    def __init__(
        self,
        folder,
        index: int,
        *,
        poll: float = 0.05,
        journal_bytes: int = int(SERVE_LIMITS["journal_bytes"]),
    ):
        self.folder, self.index, self.poll = Path(folder), index, poll
        self.decisions = _Segments(self.folder, index, "d", journal_bytes)
        self.rewards = _Segments(self.folder, index, "r", journal_bytes)
        self.agent: Any = None  # the snapshot's Agent, once loaded
        self.seq, self.checked = -1, 0.0
        self.started = time.time()
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> None:
        """Load the snapshot CURRENT names if it is newer (at most every ``poll`` s)."""
        now = time.monotonic()
        if not force and now - self.checked < self.poll:
            return
        self.checked = now
        try:
            ptr = read_pointer(self.folder)
            if ptr["seq"] != self.seq:
                agent = Agent.load(_snap(self.folder, ptr["seq"]))
                if self.agent is None:
                    _warm_up(agent)
                self.agent, self.seq = agent, ptr["seq"]
        except (OSError, ValueError):
            if self.agent is None:
                raise

    def decide(self, req: dict) -> dict:
        """A decision from the latest snapshot, journalled for the writer."""
        self.refresh()
        event_id = req["event_id"] or f"r{self.index}-" + secrets.token_hex(10)
        inputs = {k: req[k] for k in ("arms", "context") if k in req}
        try:
            out = self.agent.decide(
                **{k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()},
                event_id=event_id,
                t=req["t"],
            )
        except (ValueError, KeyError) as e:
            raise RequestError(409, _line(e)) from None
        rec = {"k": "a", "id": event_id, "t": req["t"], **inputs, "decision": out.to_dict()}
        self._write(self.decisions, rec, sync=False)
        return decision_answer(out)

    def reward(self, req: dict) -> tuple[int, dict]:
        """A reward journalled (fsync) for the writer to learn; 202."""
        rec = {"k": "r", "id": req["event_id"], "r": req["reward"], "t": req["t"]}
        self._write(self.rewards, rec, sync=True)
        return 202, {"event_id": req["event_id"], "status": "accepted", "model_version": None}

    def _write(self, journal: _Segments, rec: dict, *, sync: bool) -> None:
        try:
            journal.append(rec, sync=sync)
        except DiskError as e:
            raise RequestError(
                503, f"the state folder refused a write ({e.strerror}); nothing was recorded"
            ) from None

    def summary(self) -> dict:
        """The agent's summary as this reader sees it (its snapshot)."""
        self.refresh()
        out = self.agent.summary()
        out["service"] = dict(
            role=f"reader {self.index}",
            snapshot=self.seq,
            journal_segments={"decisions": self.decisions.seg, "rewards": self.rewards.seg},
        )
        return out


__all__ = ["Reader"]
