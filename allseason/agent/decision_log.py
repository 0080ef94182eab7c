"""The agent's decision log: a folder that Your data and ``python -m allseason replay`` read as
it is, and the dashboard follows while it grows.

- ``decisions.csv``: one row per **resolved** decision (a reward arrived, or the decision
  expired with the default reward), appended when it resolves, with the columns
  ``timestamp`` (the decision's time, Unix seconds), ``event_id``, ``arm`` (its label),
  ``reward``, ``propensity`` (the exact pi of the arm played, as the agent computed it when
  it decided), ``x0 .. x{d-1}`` (the context, context mode only), ``model_version`` (the
  version of the state that decided) and ``bandit`` (who played: 0 the shadow, >= 1 a base
  bandit of All-Season, -1 a single-model policy). A dropped decision (expired with
  ``on_expire="drop"``) has no row.
- ``batches.jsonl``: one JSON object a line per batch update: ``version``, ``time``,
  ``decisions``, ``learned`` (the agent's counts then), ``ids`` and ``weights`` (the bandits
  alive and their weights), ``events`` (``{"kind": "spawn" | "prune", "bandit", "other",
  "value"}``).

**Durability.** Both files are opened in append mode; the header is written once, when the
file is new (an existing file's header must be this log's, else the folder is refused). Each
row is one ``write`` flushed to the operating system at once, so a process killed at any
moment loses at most the row being written; each batch line is also fsynced (both files), so
a power loss loses at most the rows since the last batch update. A partial last line, left
by a crash, is cut off when the log is opened again (and counted in :attr:`repaired`).

The log replays as it is because the timestamps restore the decision order (rows are written
in the order rewards arrive) and the propensities are the logging policy's exact pi, which is
what IPS divides by.

    >>> import tempfile
    >>> log = DecisionLog(tempfile.mkdtemp(), n_context=2)
    >>> log.write_decision(timestamp=1.7e9, event_id="e1", arm="a", reward=1.0,
    ...                    propensity=0.25, context=[0.5, -1.0], model_version=3, bandit=0)
    >>> print(open(log.decisions_path).read().strip())
    timestamp,event_id,arm,reward,propensity,x0,x1,model_version,bandit
    1700000000.0,e1,a,1.0,0.25,0.5,-1.0,3,0
    >>> log.close()
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from ..errors import SpecError, show
from ..limits import MAX_DECISION_LOG_BYTES
from ..logs.logfile import AGENT_COLUMNS

DECISIONS = "decisions.csv"
BATCHES = "batches.jsonl"
MAX_LOG_BYTES = MAX_DECISION_LOG_BYTES  # the largest file read_decision_log reads (limits)


def header(n_context: int = 0) -> list[str]:
    """The columns of ``decisions.csv`` (``n_context`` context columns, 0 in arms mode)."""
    return [
        "timestamp",
        "event_id",
        "arm",
        "reward",
        "propensity",
        *(f"x{i}" for i in range(n_context)),
        *AGENT_COLUMNS[1:],
    ]


def _cut_partial_line(path: Path) -> int:
    """Cut a last line without its line end (a crash mid-write); the bytes cut."""
    size = path.stat().st_size
    if not size:
        return 0
    with open(path, "rb+") as fh:
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        step, end = 1 << 16, size
        while end > 0:
            start = max(0, end - step)
            fh.seek(start)
            at = fh.read(end - start).rfind(b"\n")
            if at >= 0:
                keep = start + at + 1
                break
            end = start
        else:
            keep = 0
        fh.truncate(keep)
        return size - keep


def _number(x) -> str:
    """A float as the shortest text that reads back to it (repr); an integer as it is."""
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        return str(int(x))
    return repr(float(x))


class DecisionLog:
    """Append an agent's resolved decisions and batch updates to a folder (module docstring).

    Parameters
    ----------
    folder : str or Path
        The log's folder (made if missing).
    n_context : int or None
        Context columns (context mode: the agent's d; 0 in arms mode). None: taken from an
        existing ``decisions.csv``, else 0.

    Attributes
    ----------
    rows, batches : int
        Rows and batch lines written by this object.
    repaired : int
        Bytes of partial last lines cut when the log was opened.
    """

    def __init__(self, folder, *, n_context: int | None = None):
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SpecError(
                "log", f"cannot make the folder {str(folder)!r} ({e.strerror})"
            ) from None
        self.decisions_path = self.folder / DECISIONS
        self.batches_path = self.folder / BATCHES
        self.repaired = 0
        existing = None
        for p in (self.decisions_path, self.batches_path):
            if p.exists():
                self.repaired += _cut_partial_line(p)
        if self.decisions_path.exists() and self.decisions_path.stat().st_size:
            with open(self.decisions_path, encoding="utf-8", newline="") as fh:
                existing = next(csv.reader([fh.readline()]), [])
        if n_context is None:
            n_context = sum(1 for c in existing or [] if c[:1] == "x" and c[1:].isdigit())
        self.n_context = int(n_context)
        self.columns = header(self.n_context)
        if existing is not None and existing != self.columns:
            raise SpecError(
                "log",
                f"{str(self.decisions_path)!r} has the columns {show(','.join(existing))}; "
                f"this agent writes {','.join(self.columns)}: use another folder",
            )
        self._csv = open(self.decisions_path, "a", encoding="utf-8", newline="")
        self._jsonl = open(self.batches_path, "a", encoding="utf-8", newline="\n")
        if existing is None:
            self._write_line(self.columns)
        self.rows = self.batches = 0
        self._contexts: dict[str, np.ndarray] = {}
        self._last_t = math.nan

    # -- writing -------------------------------------------------------------------------------
    def _write_line(self, cells) -> None:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(cells)
        self._csv.write(buf.getvalue())  # one write, flushed: a row is all there or absent
        self._csv.flush()

    def write_decision(
        self,
        *,
        timestamp: float,
        event_id: str,
        arm: str,
        reward: float,
        propensity: float | None,
        model_version: int,
        bandit: int,
        context=None,
    ) -> None:
        """Append one resolved decision (flushed at once).

        Parameters
        ----------
        timestamp : float
            The decision's time (Unix seconds).
        event_id, arm : str
            The event's id and the label of the arm played.
        reward : float
            The reward it resolved with.
        propensity : float or None
            pi of the arm played (None: not computed; the cell is left empty and the log
            cannot be evaluated with IPS).
        model_version, bandit : int
            The version that decided, and who played.
        context : array-like of shape (n_context,), optional
            The context (context mode; None: empty cells, which replay names as a problem).
        """
        c = np.asarray(context, dtype=float).reshape(-1) if context is not None else None
        if c is not None and len(c) != self.n_context:
            raise SpecError(
                "context", f"{len(c)} values; this log has {self.n_context} context columns"
            )
        cells = [
            _number(timestamp),
            str(event_id),
            str(arm),
            _number(reward),
            "" if propensity is None else _number(propensity),
            *(("",) * self.n_context if c is None else (_number(v) for v in c)),
            str(int(model_version)),
            str(int(bandit)),
        ]
        self._write_line(cells)
        self.rows += 1
        self._last_t = (
            float(timestamp) if math.isnan(self._last_t) else max(self._last_t, timestamp)
        )

    def write_batch(self, record: dict) -> None:
        """Append one batch line (JSON; the keys of the module docstring) and fsync both
        files."""
        self._jsonl.write(json.dumps(record, allow_nan=False, separators=(",", ":")) + "\n")
        self._jsonl.flush()
        self._csv.flush()
        os.fsync(self._jsonl.fileno())
        os.fsync(self._csv.fileno())
        self.batches += 1

    # -- following an agent --------------------------------------------------------------------
    def __call__(self, kind: str, *args) -> None:
        """The agent's listener (``agent.add_listener(log)``): ``("decide", rec[, context])``
        keeps the context until the decision resolves; ``("learned" | "expired", rec,
        reward)`` writes its row; ``("dropped", rec, None)`` forgets it; ``("batch", agent,
        events)`` writes a batch line."""
        if kind == "decide":
            rec = args[0]
            c = args[1] if len(args) > 1 else getattr(rec, "context", None)
            if c is not None and self.n_context:
                self._contexts[rec.event_id] = np.asarray(c, dtype=float).reshape(-1)
        elif kind in ("learned", "expired"):
            rec, reward = args[0], args[1]
            c = self._contexts.pop(rec.event_id, None)
            if c is None:
                c = getattr(rec, "context", None)
            self.write_decision(
                timestamp=rec.t,
                event_id=rec.event_id,
                arm=rec.label,
                reward=reward,
                propensity=rec.propensity,
                model_version=rec.model_version,
                bandit=rec.bandit,
                context=c,
            )
        elif kind == "dropped":
            self._contexts.pop(args[0].event_id, None)
        elif kind == "batch":
            self.write_batch(batch_record(args[0], args[1] if len(args) > 1 else (), self._last_t))

    def follow(self, agent) -> None:
        """Follow an agent (its listener): in context mode a decision's context is read from
        the agent's open decision (its row ``[c, 1]``) when it is made, and at once for the
        decisions already open (an agent just loaded: their rows come when they resolve)."""
        d = agent.d if getattr(agent, "context_mode", False) else 0
        if d:
            for event, entry in agent._open.items():
                self._contexts[event] = np.asarray(agent._row_of(entry[0])[:d], dtype=float)

        def listener(kind: str, *args) -> None:
            if kind == "decide" and d and len(args) == 1:
                entry = agent._open.get(args[0].event_id)
                args = args if entry is None else (args[0], agent._row_of(entry[0])[:d])
            self(kind, *args)

        agent.add_listener(listener)

    def close(self) -> None:
        """Flush, fsync and close both files."""
        for fh in (self._csv, self._jsonl):
            if not fh.closed:
                fh.flush()
                os.fsync(fh.fileno())
                fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def batch_record(agent, events, now: float = math.nan) -> dict:
    """The batch line of an agent just after a batch update: its version and counts, the
    bandits alive with their weights (``agent.summary()["bandits"]``), and the spawn and
    prune events. ``time``: ``now`` (the latest decision time logged), else the clock."""
    summary = agent.summary()
    bandits = summary.get("bandits", [])
    counts = summary.get("counts", {})
    return {
        "version": int(summary.get("version", getattr(agent, "model_version", 0))),
        "time": time.time() if math.isnan(now) else float(now),
        "decisions": int(counts.get("decisions", 0)),
        "learned": int(counts.get("learned", 0)),
        "ids": [int(b["id"]) for b in bandits],
        "weights": [float(b["weight"]) for b in bandits],
        "events": [
            {
                "kind": str(e.get("kind")),
                "bandit": int(e.get("bandit", -1)),
                "other": None if e.get("other") is None else int(e["other"]),
                "value": None if e.get("value") is None else float(e["value"]),
            }
            for e in events
        ],
    }


def _complete_lines(path: Path, max_bytes: int) -> bytes:
    """The bytes of a log file up to its last complete line (a row being written is left
    for the next read)."""
    size = path.stat().st_size
    if size > max_bytes:
        raise SpecError("log", f"{str(path)!r} has {size:,} bytes; at most {max_bytes:,} are read")
    with open(path, "rb") as fh:
        raw = fh.read(size)
    return raw[: raw.rfind(b"\n") + 1]


def read_decision_log(folder, *, max_bytes: int = MAX_LOG_BYTES):
    """(decisions, batches) of a decision log's folder, as it is now (an agent may still be
    writing it: a last line without its end is left out).

    Parameters
    ----------
    folder : str or Path
        The folder :class:`DecisionLog` writes.
    max_bytes : int
        The largest file read.

    Returns
    -------
    decisions : pandas.DataFrame
        ``decisions.csv`` (the columns of :func:`header`; ``event_id`` and ``arm`` as text).
    batches : list of dict
        The lines of ``batches.jsonl``, in order.
    """
    import pandas as pd

    folder = Path(folder)
    path = folder / DECISIONS
    if not path.is_file():
        raise SpecError("log", f"no {DECISIONS} in {str(folder)!r}")
    raw = _complete_lines(path, max_bytes)
    if not raw:
        raise SpecError("log", f"{str(path)!r} is empty")
    frame = pd.read_csv(io.BytesIO(raw), dtype={"event_id": str, "arm": str}, keep_default_na=False)
    for c in frame.columns:
        if c not in ("event_id", "arm"):
            frame[c] = pd.to_numeric(frame[c], errors="coerce")
    batches = []
    bpath = folder / BATCHES
    if bpath.is_file():
        for k, line in enumerate(_complete_lines(bpath, max_bytes).splitlines()):
            try:
                batches.append(json.loads(line))
            except ValueError:
                raise SpecError("log", f"{BATCHES} line {k + 1} is not JSON") from None
    return frame, batches


__all__ = ["DecisionLog", "read_decision_log", "batch_record", "header", "DECISIONS", "BATCHES"]
