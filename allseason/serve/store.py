"""The service's state on disk and in memory: one agent, its journal, its snapshots.

A state folder holds::

    CURRENT                  {"seq": k, ...}: the last good snapshot (replaced atomically)
    snapshots/snap-k.state   the agent at the start of journal k (agent.save: atomic, checked)
    journal/w-k.jsonl        every decision and reward applied since, in order (JSON lines)
    journal/r{i}.*.jsonl     what reader i answered, the rewards it took (--workers > 1)

The writer (:class:`Writer`) applies a request to its agent, appends it to the journal (a
reward fsync'd before its 202), and at every batch update (the agent's rule) saves snapshot
k + 1, points CURRENT at it and starts journal k + 1. On start it loads the snapshot CURRENT
names and applies journal k again: the same calls in the same order give the same agent, bit
for bit. A write the disk refuses (full) is cut back, the agent is rebuilt from the disk,
and the request gets 503: what the disk holds and what the agent holds never part.

Readers (:class:`Reader`) answer ``/decide`` from the latest snapshot (polled every
``poll`` seconds) and append what they answered to their own journals; the writer tails
those journals, adopts the decisions and learns the rewards.
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import numpy as np

from ..agent import Agent, Decision, UnknownEvent
from .checks import RequestError
from .journal import DiskError, Journal, dumps, fsync_dir, loads, write_atomic

FORMAT = 1
POINTER = "CURRENT"


def _snap(folder: Path, seq: int) -> Path:
    return folder / "snapshots" / f"snap-{seq:08d}.state"


def _wal(folder: Path, seq: int) -> Path:
    return folder / "journal" / f"w-{seq:08d}.jsonl"


def reader_paths(folder: Path, i: int) -> tuple[Path, Path]:
    """Reader i's journals: its decisions and its rewards."""
    j = Path(folder) / "journal"
    return j / f"r{i}.decisions.jsonl", j / f"r{i}.rewards.jsonl"


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


def _unknown_event():
    return UnknownEvent


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
    snapshot_every : int
        A snapshot every this many batch updates (1: at every one, the agent's rule).
    sync_decisions : bool
        fsync every decision before answering (default: a decision is written before the
        answer, so it survives a kill of the process, and fsync'd with the next reward).
    n_readers : int
        Reader journals to tail (``--workers`` - 1).
    """

    def __init__(
        self, folder, *, snapshot_every: int = 1, sync_decisions: bool = False, n_readers: int = 0
    ):
        self.folder = Path(folder)
        self.snapshot_every = snapshot_every
        self.sync_decisions = sync_decisions
        self.n_readers = n_readers
        self.snapshot_error = None
        self.disk_error = None
        self.started = time.time()
        self.open()

    # --- start: the last snapshot, then its journal again ------------------------------------
    def open(self) -> None:
        """Load the snapshot CURRENT names and apply its journal again."""
        ptr = read_pointer(self.folder)
        self.seq = ptr["seq"]
        self.readers = {int(k): dict(v) for k, v in ptr.get("readers", {}).items()}
        self.agent = Agent.load(_snap(self.folder, self.seq))
        self.journal = Journal(_wal(self.folder, self.seq))
        self.batches_since = 0
        self.skipped = 0
        replayed = 0
        for rec, _ in self.journal.records():
            self._apply(rec, replay=True)
            replayed += 1
        self.journal.open()
        self.replayed = replayed
        warm_up(self.agent)
        self._clean()
        if replayed and self.agent.model_version != ptr.get("version"):
            self._snapshot()

    def _clean(self) -> None:
        for sub, pattern in (("snapshots", "snap-*"), ("journal", "w-*")):
            for p in (self.folder / sub).glob(pattern):
                try:
                    seq = int(p.name.split("-")[1].split(".")[0])
                except ValueError:
                    seq = -1
                if seq != self.seq and not (sub == "snapshots" and seq == self.seq - 1):
                    p.unlink(missing_ok=True)

    def _apply(self, rec: dict, *, replay: bool = False):
        kind = rec["k"]
        if "src" in rec:  # a reader's record: remember how far its journal is read
            self.readers.setdefault(rec["src"], {"d": 0, "r": 0})[rec["f"]] = rec["end"]
        if kind == "d":
            return self.agent.decide(**_inputs(rec), event_id=rec["id"], t=rec["t"])
        if kind == "a":
            return adopt(self.agent, rec)
        if kind == "x":  # a reader's record the writer could not take (counted, skipped)
            return None
        if kind == "r":
            try:
                return self.agent.learn(rec["id"], rec["r"], t=rec["t"])
            except _unknown_event():
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
        before = self.agent.model_version
        try:
            status = self._apply(rec)
        except _unknown_event():
            if not self.ingest():  # a reader's decision not yet read?
                raise RequestError(404, f"event_id {req['event_id']!r}: no open decision") from None
            try:
                status = self._apply(rec)
            except _unknown_event():
                raise RequestError(404, f"event_id {req['event_id']!r}: no open decision") from None
        self._write(rec, sync=True)
        self._after_batch(before)
        status = str(status)
        return (200 if status == "duplicate" else 202), {
            "event_id": req["event_id"],
            "status": status,
            "model_version": self.agent.model_version,
        }

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

    def _after_batch(self, before: int) -> None:
        if self.agent.model_version != before:
            self.batches_since += 1
            if self.batches_since >= self.snapshot_every:
                self._snapshot()

    def _snapshot(self) -> bool:
        """Snapshot seq + 1, CURRENT pointed at it, journal seq + 1 begun; False if the disk
        refused (the old snapshot and journal stay in charge)."""
        new = self.seq + 1
        path = _snap(self.folder, new)
        try:
            self.agent.save(path)
            write_atomic(self.folder / POINTER, dumps(_pointer(new, self.agent, self.readers)))
        except (OSError, ValueError) as e:
            self.snapshot_error = f"snapshot {new} not written: {_line(e)}"
            path.unlink(missing_ok=True)
            for p in path.parent.glob(path.name + "*"):
                p.unlink(missing_ok=True)
            return False
        self.snapshot_error = None
        self.journal.close()
        self.seq, self.batches_since = new, 0
        self.journal = Journal(_wal(self.folder, new))
        try:
            self.journal.open()
            fsync_dir(self.journal.path.parent)
        except OSError:
            self.journal.close()  # opened again at the next append
        self._clean()
        return True

    # --- readers' journals -------------------------------------------------------------------
    def ingest(self) -> int:
        """Apply what the readers answered since the last call: first every reward file's
        size is taken, then every decision up to each decision file's end, then the rewards
        up to those sizes (a reward is written after its decision, so its decision is read).
        Returns the number of records applied."""
        if not self.n_readers:
            return 0
        self._ready()
        sizes = {}
        for i in range(1, self.n_readers + 1):
            _, rp = reader_paths(self.folder, i)
            try:
                sizes[i] = os.stat(rp).st_size
            except FileNotFoundError:
                sizes[i] = 0
        n = 0
        for f, kind in (("d", 0), ("r", 1)):
            for i in range(1, self.n_readers + 1):
                pos = self.readers.get(i, {}).get(f, 0)
                limit = None if f == "d" else max(0, sizes[i] - pos)
                if limit == 0:
                    continue
                journal = Journal(reader_paths(self.folder, i)[kind])
                for rec, end in journal.records(pos, limit_bytes=limit):
                    rec = dict(rec, src=i, f=f, end=end)
                    before = self.agent.model_version
                    try:
                        self._apply(rec)
                    except (ValueError, KeyError) as e:  # e.g. an id open in two processes
                        rec = {"k": "x", "src": i, "f": f, "end": end, "why": _line(e)}
                        self.skipped += 1
                    self._write(rec, sync=f == "r")
                    self._after_batch(before)
                    n += 1
        return n

    def summary(self) -> dict:
        """``GET /state``: the agent's summary, with the service's own numbers."""
        out = self.agent.summary()
        out["service"] = dict(
            role="writer",
            snapshot=self.seq,
            journal_bytes=self.journal.size,
            replayed_at_start=self.replayed,
            readers_records_skipped=self.skipped,
            snapshot_error=self.snapshot_error,
            uptime_s=round(time.time() - self.started, 3),
        )
        return out


def adopt(agent, rec: dict):
    """Make a decision a reader answered one of the writer's open decisions (same arm, same
    bandit, same propensity, the version it was made at), as if the writer had made it.

    Uses ``agent.adopt`` when the agent has one; otherwise it writes the open decision in the
    agent's own shape (``_open[event] = (x, g, bandit, t, Decision)``, agent/core.py), the one
    place the service reaches inside the agent."""
    if hasattr(agent, "adopt"):
        return agent.adopt(rec)
    d = rec["decision"]
    event, arm = str(d["event_id"]), int(d["arm"])
    if event in agent._open:
        raise ValueError(f"event_id {event!r} is still open: one decision per event")
    if agent.context_mode:
        x, g = np.append(np.asarray(rec["context"], dtype=np.float64), 1.0), arm
    else:
        x, g = np.asarray(rec["arms"], dtype=np.float64)[arm].copy(), 0
    pis = d.get("propensities")
    dec = Decision(
        event,
        arm,
        str(d["label"]),
        d["propensity"],
        None if pis is None else np.asarray(pis, dtype=np.float64),
        d["pi_method"],
        d["pi_stderr"],
        int(d["model_version"]),
        int(d["bandit"]),
        float(d["t"]),
    )
    if len(agent._open) >= agent.max_open:
        agent._expire_oldest()
    agent._open[event] = (x, g, int(d["bandit"]), float(d["t"]), dec)
    agent.counts["decisions"] += 1
    for fn in agent._listeners:
        fn("decide", dec)
    return dec


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
    """

    def __init__(self, folder, index: int, *, poll: float = 0.05):
        self.folder, self.index, self.poll = Path(folder), index, poll
        dp, rp = reader_paths(self.folder, index)
        self.decisions, self.rewards = Journal(dp), Journal(rp)
        self.decisions.open()
        self.rewards.open()
        self.seq, self.agent, self.checked = -1, None, 0.0
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
                    warm_up(agent)
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

    def _write(self, journal: Journal, rec: dict, *, sync: bool) -> None:
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
        out["service"] = dict(role=f"reader {self.index}", snapshot=self.seq)
        return out


def _line(e: BaseException) -> str:
    text = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
    return (text.splitlines() or [type(e).__name__])[0][:300]
