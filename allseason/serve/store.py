"""The service's state on disk and in memory: one agent, its journal, its snapshots.

A state folder holds::

    CURRENT                  {"seq": k, "readers": ...}: the last good snapshot (atomic)
    snapshots/snap-k.state   the agent at the start of journal k (agent.save: atomic, checked)
    journal/w-k.jsonl        every decision, reward and expiry applied since, in order
    journal/r{i}.decisions[.n].jsonl, r{i}.rewards[.n].jsonl
                             what reader i answered and the rewards it took, segment n
                             (--workers > 1; segment 0 has no number)

The writer (:class:`Writer`) applies a request to its agent, appends it to the journal (a
reward fsync'd before its 202), and, once ``snapshot_seconds`` have passed since the last
snapshot and a batch update (the agent's rule) has happened since, starts journal k + 1,
saves snapshot k + 1 and points CURRENT at it (checked after every batch update and every
``poll`` by :meth:`Writer.tick`; at every batch update with ``snapshot_seconds`` 0; and at a
clean stop, :meth:`Writer.close`); the service writes the file and CURRENT on a thread
(:mod:`.snapshot`). On start it loads the snapshot CURRENT names and applies journal k again,
and any journal after it: the same calls in the same order give the same agent, bit for bit,
however many batch updates the journals hold. A write the disk refuses (full) is cut back, the agent
is rebuilt from the disk, and the request gets 503: what the disk holds and what the agent
holds never part.

Expiry (:meth:`Writer.expire`): the agent's ``expire(now)`` (its horizon, ``drop`` or
``default``), journalled and fsync'd like a reward when it resolved anything, so a restart
expires the same decisions at the same moment of the replay.

Readers (:class:`~.reader.Reader`) answer ``/decide`` from the latest snapshot (polled every
``poll`` seconds) and append what they answered to their own journals, which the writer
tails: it adopts the decisions (:meth:`Agent.adopt`) and learns the rewards.

Bounded disk. The writer's journal is cut at every snapshot, and a snapshot is also taken
when it passes ``journal_bytes``. A reader starts a new segment of a journal when it passes
``journal_bytes``; the writer moves to segment n + 1 only once it exists (so segment n is
complete) and it has read segment n to its end, takes a snapshot then, and deletes a
reader's segments only below the position that CURRENT (durable) records: a record a reader
acknowledged is on disk until the snapshot that holds it is.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import numpy as np

from ..agent import Agent, UnknownEvent
from ..limits import SERVE_LIMITS
from .checks import RequestError
from .journal import (
    DiskError,
    Journal,
    dumps,
    fsync_dir,
    loads,
    reader_path,
    reader_segments,
    write_atomic,
)
from .snapshot import SnapshotJob, forget_before, journal_seqs

FORMAT = 1
POINTER = "CURRENT"


def _snap(folder: Path, seq: int) -> Path:
    return folder / "snapshots" / f"snap-{seq:08d}.state"


def _wal(folder: Path, seq: int) -> Path:
    return folder / "journal" / f"w-{seq:08d}.jsonl"


def _position(value) -> list[int]:
    """A reader journal's read position, [segment, byte] (an int: segment 0, the format
    before segments)."""
    if isinstance(value, int):
        return [0, value]
    return [int(value[0]), int(value[1])]


def read_pointer(folder: Path) -> dict:
    """CURRENT, checked (ValueError with one line)."""
    path = Path(folder) / POINTER
    try:
        raw = path.read_bytes()[:100_000]
        ptr = loads(raw)
    except FileNotFoundError:
        raise ValueError(f"{folder}: no service state here (no {POINTER})") from None
    except (ValueError, UnicodeDecodeError):
        raise ValueError(f"{path}: not a service pointer (damaged?)") from None
    if (
        not isinstance(ptr, dict)
        or ptr.get("format") != FORMAT
        or not isinstance(ptr.get("seq"), int)
    ):
        raise ValueError(f"{path}: not a service pointer of format {FORMAT}")
    return ptr


def init_folder(folder, agent) -> None:
    """Make ``folder`` a service state holding ``agent`` (snapshot 0, an empty journal)."""
    folder = Path(folder)
    (folder / "snapshots").mkdir(parents=True, exist_ok=True)
    (folder / "journal").mkdir(exist_ok=True)
    if (folder / POINTER).exists():
        raise ValueError(f"{folder}: already holds a service state ({POINTER})")
    agent.save(_snap(folder, 0))
    write_atomic(folder / POINTER, dumps(_pointer(0, agent, {})))


def _pointer(seq: int, agent, readers: dict) -> dict:
    return dict(
        format=FORMAT, seq=seq, version=agent.model_version, time=time.time(), readers=readers
    )


def decision_answer(rec) -> dict:
    """What ``/decide`` answers."""
    return dict(
        event_id=rec.event_id,
        arm=int(rec.arm),
        label=rec.label if isinstance(rec.label, (str, int)) else str(rec.label),
        propensity=None if rec.propensity is None else float(rec.propensity),
        model_version=int(rec.model_version),
        bandit=int(rec.bandit),
    )


def _inputs(rec: dict) -> dict:
    if "arms" in rec:
        return {"arms": np.asarray(rec["arms"], dtype=np.float64)}
    return {"context": np.asarray(rec["context"], dtype=np.float64)}


def warm_up(agent) -> None:
    """Compile the agent's single step before the first request (on a copy: the agent is
    untouched), so that /health answers only once a decision is fast."""
    a = agent.copy()
    for k in (1, 2, 3):
        inputs = {"context": np.zeros(a.d)} if a.context_mode else {"arms": np.zeros((k, a.d))}
        a.decide(**inputs, event_id=f"warm-up-{k}", t=0.0)
        a.learn(f"warm-up-{k}", 0.0, t=0.0)
    a.end_batch()


class Writer:
    """The one process that learns.

    Parameters
    ----------
    folder : path
        The state folder (:func:`init_folder` made it).
    snapshot_seconds : float
        A snapshot at the first batch update this many seconds after the last snapshot, or
        at the first :meth:`tick` after that (0: at every batch update).
    sync_decisions : bool
        fsync every decision before answering (default: a decision is written before the
        answer, so it survives a kill of the process, and fsync'd with the next reward).
    n_readers : int
        Reader journals to tail (``--workers`` - 1).
    journal_bytes : int
        A snapshot once the writer's journal passes this; the readers' segments' size.
    background : bool
        Write snapshots on a thread (:mod:`.snapshot`; the service does), so that a request
        never waits for one; default: here, before the call returns.
    """

    def __init__(
        self,
        folder,
        *,
        snapshot_seconds: float = float(SERVE_LIMITS["snapshot_seconds"]),
        sync_decisions: bool = False,
        n_readers: int = 0,
        journal_bytes: int = int(SERVE_LIMITS["journal_bytes"]),
        background: bool = False,
    ):
        self.folder = Path(folder)
        self.background = background
        self.job: SnapshotJob | None = None  # a snapshot being written
        self.snapshot_seconds = float(snapshot_seconds)
        self.sync_decisions = sync_decisions
        self.n_readers = n_readers
        self.journal_bytes = journal_bytes
        self.snapshot_error: str | None = None
        self.disk_error: tuple[str, float] | None = None  # (its line, refused until)
        self.started = time.time()
        self.open()

    # --- start: the last snapshot, then its journal again ------------------------------------
    def open(self) -> None:
        """Load the snapshot CURRENT names and apply its journal again, and the journals after
        it, in order (more than one: the process stopped while a snapshot was written)."""
        self._finish(wait=True)
        ptr = read_pointer(self.folder)
        self.seq = ptr["seq"]
        self.readers = _readers(ptr.get("readers", {}))
        self.agent = Agent.load(_snap(self.folder, self.seq))
        seqs = journal_seqs(self.folder, self.seq)
        self.wal = seqs[-1]  # the journal appended to: records after snapshot `wal` (if any)
        self.journal = Journal(_wal(self.folder, self.wal))
        self.batches_since = 0
        self.snapped_at = time.monotonic()
        self.skipped = 0
        replayed = 0
        for seq in seqs:
            for rec, _ in Journal(_wal(self.folder, seq)).records():
                try:
                    self._apply(rec, replay=True)
                except (ValueError, KeyError):  # a reader's record an older version took
                    if rec.get("k") != "a":
                        raise
                    self.skipped += 1
                replayed += 1
        self.journal.open()
        self.replayed = replayed
        warm_up(self.agent)
        self._clean(_readers(ptr.get("readers", {})))
        if replayed and (self.agent.model_version != ptr.get("version") or len(seqs) > 1):
            self._snapshot(wait=True)

    def _clean(self, durable: dict) -> None:
        """The files before the current snapshot go (:func:`~.snapshot.forget_before`), and
        the readers' segments below the positions ``durable`` (CURRENT's) records."""
        forget_before(self.folder, self.seq)
        for i, pos in durable.items():
            for f, (seg, _) in pos.items():
                for old in reader_segments(self.folder, i, f):
                    if old < seg:
                        reader_path(self.folder, i, f, old).unlink(missing_ok=True)

    def _apply(self, rec: dict, *, replay: bool = False):
        kind = rec["k"]
        if "src" in rec:  # a reader's record: remember how far its journal is read
            self.readers.setdefault(rec["src"], _start())[rec["f"]] = _position(rec["end"])
        if kind == "d":
            return self.agent.decide(**_inputs(rec), event_id=rec["id"], t=rec["t"])
        if kind == "a":
            return adopt(self.agent, rec)
        if kind == "x":  # a reader's record the writer could not take (counted, skipped)
            return None
        if kind == "e":
            return self.agent.expire(rec["now"])
        if kind == "r":
            try:
                return self.agent.learn(rec["id"], rec["r"], t=rec["t"])
            except UnknownEvent:
                if replay or "src" in rec:
                    return "unknown"
                raise
        raise ValueError(f"unknown journal record kind {kind!r}")

    # --- requests ------------------------------------------------------------------------------
    def decide(self, req: dict) -> dict:
        """Decide, write it down, answer (RequestError 4xx/503 otherwise)."""
        self._ready()
        event_id = req["event_id"] or "ev-" + secrets.token_hex(10)
        rec = {"k": "d", "id": event_id, "t": req["t"]}
        rec.update({k: req[k] for k in ("arms", "context") if k in req})
        try:
            out = self._apply(rec)
        except (ValueError, KeyError) as e:
            raise RequestError(409, _line(e)) from None
        self._write(rec, sync=self.sync_decisions)
        return decision_answer(out)

    def reward(self, req: dict) -> tuple[int, dict]:
        """Learn a reward, make it durable, answer 202 (200 for a duplicate)."""
        self._ready()
        rec = {"k": "r", "id": req["event_id"], "r": req["reward"], "t": req["t"]}
        self.ingest()  # first what the readers answered: the reward may be for one of theirs
        before = self.agent.model_version
        try:
            status = self._apply(rec)
        except UnknownEvent:
            raise RequestError(404, f"event_id {req['event_id']!r}: no open decision") from None
        self._write(rec, sync=True)
        self._after_batch(before)
        status = str(status)
        return (200 if status == "duplicate" else 202), {
            "event_id": req["event_id"],
            "status": status,
            "model_version": self.agent.model_version,
        }

    def expire(self, now: float | None = None) -> int:
        """The agent's ``expire(now)`` (default: the clock), journalled and fsync'd when it
        resolved anything; the number expired (0 when the agent has no horizon)."""
        if self.agent.horizon is None:
            return 0
        self._ready()
        rec = {"k": "e", "now": time.time() if now is None else float(now)}
        before = self.agent.model_version
        n = self._apply(rec)
        if n:
            self._write(rec, sync=True)
            self._after_batch(before)
        return n

    def _ready(self) -> None:
        if self.disk_error and time.monotonic() < self.disk_error[1]:
            raise RequestError(503, self.disk_error[0])

    def _write(self, rec: dict, *, sync: bool) -> None:
        try:
            self.journal.append(rec, sync=sync)
        except DiskError as e:
            msg = f"the state folder refused a write ({e.strerror}); nothing recorded, retry later"
            self.disk_error = (msg, time.monotonic() + 1.0)
            self.journal.close()
            self.open()  # the agent as the disk holds it
            raise RequestError(503, msg) from None
        if self.journal.size > self.journal_bytes:
            self._snapshot()  # the journal starts again (bounded disk)

    def _after_batch(self, before: int) -> None:
        if self.agent.model_version != before:
            self.batches_since += 1
            self.tick()

    def tick(self) -> bool:
        """A snapshot if a batch update happened since the last one and ``snapshot_seconds``
        have passed since it (the service calls this every ``poll``, so an update reaches the
        readers even when no request follows it). True if one was written (with
        ``background``: begun)."""
        self._finish()
        if not self.batches_since or (self.disk_error and time.monotonic() < self.disk_error[1]):
            return False
        if time.monotonic() - self.snapped_at < self.snapshot_seconds:
            return False
        return self._snapshot()

    def close(self) -> None:
        """A clean stop (SIGTERM): a last snapshot if the journal holds anything, so the next
        start replays nothing and the readers hold the last version."""
        self._finish(wait=True)
        if (self.journal.size or self.wal != self.seq) and not self._snapshot(wait=True):
            try:
                self.journal.sync()  # the disk refused the snapshot: the journal holds all
            except DiskError:
                pass
        self.journal.close()

    def _snapshot(self, wait: bool = False) -> bool:
        """Snapshot wal + 1 (:mod:`.snapshot`): the agent's state taken now, the journal
        fsync'd and journal wal + 1 begun, then the file and CURRENT written on a thread if
        ``background`` and not ``wait``, else here. False if one is still being written or
        the disk refused (the old snapshot and the journals since stay in charge)."""
        self._finish(wait=wait or not self.background)
        if self.job is not None:
            return False  # one at a time: the next tick
        new = self.wal + 1
        try:
            if self.journal.fd >= 0:
                self.journal.sync()  # before a record of journal new can be acknowledged
            state = self.agent.to_state()  # its arrays copied: the agent goes on meanwhile
        except (OSError, ValueError) as e:
            self.snapshot_error = f"snapshot {new} not written: {_line(e)}"
            self.snapped_at = time.monotonic()  # tried again after snapshot_seconds
            return False
        readers = {i: {f: list(p) for f, p in v.items()} for i, v in self.readers.items()}
        pointer = dumps(_pointer(new, self.agent, readers))
        job = SnapshotJob(new, _snap(self.folder, new), state, self.folder / POINTER, pointer,
                          readers)  # fmt: skip
        self.journal.close()
        self.wal, self.batches_since, self.snapped_at = new, 0, time.monotonic()
        self.journal = Journal(_wal(self.folder, new))
        try:
            self.journal.open()
            fsync_dir(self.journal.path.parent)
        except OSError:
            self.journal.close()  # opened again at the next append
        self.job = job
        if self.background and not wait:
            job.start()
            return True
        job.run()
        self._finish()
        return job.error is None

    def _finish(self, wait: bool = False) -> None:
        """Note a snapshot write that ended (``wait``: wait for it): CURRENT names it, so the
        older files go (:meth:`_clean`); or note its one-line error."""
        job = self.job
        if job is None or not (wait or job.done()):
            return
        job.join()
        self.job = None
        if job.error:
            self.snapshot_error = job.error
            self.batches_since = max(self.batches_since, 1)  # tried again after the cadence
            return
        self.snapshot_error = None
        self.seq = job.seq
        self._clean(job.readers)  # what CURRENT now records

    # --- readers' journals -------------------------------------------------------------------
    def ingest(self) -> int:
        """Apply what the readers answered since the last call: first the end of every
        rewards journal is noted, then every decision up to each decisions journal's end,
        then the rewards up to the noted ends (a reward is written after its decision, so
        its decision is read). Returns the number of records applied."""
        if not self.n_readers:
            return 0
        self._ready()
        ends = {}
        for i in range(1, self.n_readers + 1):
            last = (reader_segments(self.folder, i, "r") or [0])[-1]
            try:
                ends[i] = (last, os.stat(reader_path(self.folder, i, "r", last)).st_size)
            except FileNotFoundError:
                ends[i] = (last, 0)
        n, moved = 0, False
        for f in ("d", "r"):
            for i in range(1, self.n_readers + 1):
                got, past = self._ingest_journal(i, f, ends[i] if f == "r" else None)
                n, moved = n + got, moved or past
        if moved:
            self._snapshot()  # CURRENT records the new segments: the old ones go
        return n

    def _ingest_journal(self, i: int, f: str, end) -> tuple[int, bool]:
        """Reader i's journal ``f`` from its position, across its segments, up to ``end``
        ((segment, byte); None: all there is). Returns (records applied, moved to a later
        segment)."""
        seg, pos = self.readers.setdefault(i, _start())[f]
        n, moved = 0, False
        while True:
            if end is None:  # looked at before reading: if n + 1 exists, n is whole
                last = not reader_path(self.folder, i, f, seg + 1).exists()
                limit = None
            else:
                last = seg >= end[0]
                limit = max(0, end[1] - pos) if last else None
            if limit != 0:
                for rec, off in Journal(reader_path(self.folder, i, f, seg)).records(
                    pos, limit_bytes=limit
                ):
                    self._ingest_record(dict(rec, src=i, f=f, end=[seg, off]))
                    pos, n = off, n + 1
            if last:
                return n, moved
            seg, pos, moved = seg + 1, 0, True
            self.readers[i][f] = [seg, 0]

    def _ingest_record(self, rec: dict) -> None:
        before = self.agent.model_version
        try:
            self._apply(rec)
        except (ValueError, KeyError) as e:  # e.g. an id open in two processes
            rec = {k: rec[k] for k in ("src", "f", "end")} | {"k": "x", "why": _line(e)}
            self.skipped += 1
        self._write(rec, sync=rec["f"] == "r")
        self._after_batch(before)

    def summary(self) -> dict:
        """``GET /state``: the agent's summary, with the service's own numbers."""
        out = self.agent.summary()
        out["service"] = dict(
            role="writer",
            snapshot=self.seq,
            snapshot_being_written=self.job is not None,
            snapshot_every_s=self.snapshot_seconds,
            snapshot_age_s=round(time.monotonic() - self.snapped_at, 3),
            batch_updates_since_snapshot=self.batches_since,
            journal_bytes=self.journal.size,
            replayed_at_start=self.replayed,
            readers_records_skipped=self.skipped,
            snapshot_error=self.snapshot_error,
            uptime_s=round(time.time() - self.started, 3),
        )
        return out


def adopt(agent, rec: dict):
    """Make a decision a reader answered one of the writer's open decisions (same arm, same
    bandit, same propensity, the version it was made at), as if the writer had made it
    (:meth:`Agent.adopt`: refuses, in one line, an event id already open or resolved and a
    record the agent could not have made)."""
    return agent.adopt(rec["decision"], **_inputs(rec))


def _start() -> dict:
    return {"d": [0, 0], "r": [0, 0]}


def _readers(value) -> dict:
    """The readers' positions as CURRENT records them, {i: {"d": [seg, byte], "r": ...}}."""
    return {int(k): {f: _position(p) for f, p in dict(v).items()} for k, v in value.items()}


def _line(e: BaseException) -> str:
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    return (text.splitlines() or [type(e).__name__])[0][:300]
