"""A deployed agent's log, read as it grows: ``decisions.csv`` and ``batches.jsonl`` (the
decision log of :mod:`allseason.agent`), and the tables "Your deployed bandit" draws.

The two files are append-only. :class:`DecisionTail` and :class:`BatchTail` keep the byte
offset they have read up to and parse only the complete lines after it, so a page that
refreshes every few seconds reads only what was appended (a line cut by a writer in the middle
of a flush waits for its end). Everything a file holds is checked as it comes: a file that is
not a decision log (missing columns, a reward that is not a number, a propensity outside
(0, 1], a line that is not a JSON object) raises ONE :class:`~allseason.errors.SpecError`
naming the file and the row.

- ``decisions.csv``: ``timestamp, event_id, arm, reward, propensity, [x0..], model_version,
  bandit``, one row per resolved decision; kept as numpy columns (arm labels as codes);
- ``batches.jsonl``: ``{"version", "time", "decisions", "learned", "ids", "weights",
  "events": [{"kind", "bandit", "other", "value"}]}`` per batch update; kept as the top
  bandit of each batch (the paper's figure), the last batch's weights (the current bandits)
  and the spawns and prunings.

:meth:`BatchTail.tops` is what Inside All-Season's top-weight figure draws (the rows of
``top_of_each_batch`` of the runner's weights table); the other tables are in
:mod:`.deployed_tables`.
"""

from __future__ import annotations

import io
import json
import math
import os
from typing import TYPE_CHECKING

import numpy as np

from ..errors import SpecError
from ..limits import DEPLOYED_LIMITS
from .deployed_columns import arrow_columns, arrow_decisions, event_lines, regex_columns
from .deployed_tables import (
    bandits_table,
    propensity_summary,
    recalls,
    reward_windows,
    spells_table,
    your_data_bytes,
    your_data_file,
)

if TYPE_CHECKING:
    import pandas as pd

REQUIRED = ("arm", "reward", "propensity")
OPTIONAL_INT = ("model_version", "bandit")
DECISIONS, BATCHES = "decisions.csv", "batches.jsonl"
FAST_LINES = 1000  # from this many lines at once, batches.jsonl is read as columns
READ_CHUNK = 16_000_000  # bytes read and parsed at a time


def _complete(buf: bytes) -> tuple[bytes, bytes]:
    """(the complete lines of ``buf``, the rest: a line still being written)."""
    cut = buf.rfind(b"\n")
    return (buf[: cut + 1], buf[cut + 1 :]) if cut >= 0 else (b"", buf)


def _read_appended(tail, path, max_bytes: int | None) -> int:
    """Feed ``tail`` (a DecisionTail or BatchTail) the bytes of ``path`` from its offset on,
    :data:`READ_CHUNK` bytes at a time (the memory a first read takes is bounded by the chunk,
    not by the file's size)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < tail.offset:
            raise SpecError(path.name if hasattr(path, "name") else str(path),
                            "the file is shorter than what was read: read again")  # fmt: skip
        f.seek(tail.offset)  # a cut line is read again (a writer may have cut it off)
        tail._rest = b""
        left = size - tail.offset if max_bytes is None else min(max_bytes, size - tail.offset)
        new = 0
        while left > 0:
            data = f.read(min(READ_CHUNK, left))
            if not data:
                break
            left -= len(data)
            new += tail.feed(data)
    return new


class DecisionTail:
    """``decisions.csv`` read as it grows: feed it bytes (:meth:`feed`) or a path
    (:meth:`read_from`); it keeps the byte offset and only parses complete lines.

    At most ``max_rows`` rows are kept (the most recent; :attr:`n_dropped` counts the
    others), so memory stays bounded while a deployment runs for months."""

    def __init__(self, max_rows: int = DEPLOYED_LIMITS["rows"]):
        self.offset = 0  # bytes consumed, complete lines only
        self.header: list[str] | None = None
        self.max_rows = max_rows
        self.n_rows = 0  # rows read in all (kept + dropped)
        self.n_dropped = 0
        self._rest = b""
        self._chunks: list[dict[str, np.ndarray]] = []
        self._codes: dict[str, int] = {}
        self._cache: dict[str, np.ndarray] | None = None

    # -- reading ---------------------------------------------------------------------------
    def read_from(self, path, max_bytes: int | None = None) -> int:
        """Parse what was appended to the file at ``path`` since the last call (at most
        ``max_bytes`` more); returns the number of new rows."""
        return _read_appended(self, path, max_bytes)

    def feed(self, data: bytes, final: bool = False) -> int:
        """Parse ``data`` (the bytes after the last ones fed); a line without its end waits
        for the next call unless ``final``. Returns the number of new rows."""
        buf = self._rest + data
        lines, self._rest = (buf, b"") if final else _complete(buf)
        if not lines.strip():
            self.offset += len(lines)
            return 0
        if self.header is None:
            first, _, lines = lines.partition(b"\n")
            self.offset += len(first) + 1
            self.header = self._check_header(first)
        if not lines.strip():
            self.offset += len(lines)
            return 0
        chunk = self._parse(lines, first_row=self.n_rows + 2)
        self.offset += len(lines)
        n = len(chunk["reward"])
        self.n_rows += n
        self._chunks.append(chunk)
        self._cache = None
        self._bound()
        return n

    @staticmethod
    def _check_header(line: bytes) -> list[str]:
        try:
            names = [c.strip() for c in line.decode("utf-8-sig").strip().split(",")]
        except UnicodeDecodeError:
            raise SpecError(DECISIONS, "not a decision log: the file is not UTF-8 text") from None
        missing = [c for c in REQUIRED if c not in names]
        if missing:
            raise SpecError(
                DECISIONS,
                f"not a decision log: no column {', '.join(missing)} in its header "
                f"(a deployed agent's log has {', '.join(REQUIRED)}, model_version, bandit)",
            )
        return names

    def _parse(self, lines: bytes, first_row: int) -> dict[str, np.ndarray]:
        import pandas as pd  # slow to import (0.5 s): only when first needed

        assert self.header is not None  # feed() reads the header before any row
        cols = [c for c in ("timestamp", *REQUIRED, *OPTIONAL_INT) if c in self.header]
        numeric = [c for c in cols if c != "arm"]
        got = arrow_decisions(lines, self.header, numeric)
        if got is not None:  # pyarrow's reader (C++, threads); else pandas', naming a bad row
            inv, labels, out = got
            for col in ("timestamp", *OPTIONAL_INT):
                v = out.get(col)
                out[col] = np.full(len(inv), -1.0) if v is None else np.nan_to_num(v, nan=-1.0)
            return {"arm_codes": self._codes_of(inv, labels), **out}
        try:
            df = pd.read_csv(
                io.BytesIO(lines),
                header=None,
                names=self.header,
                usecols=cols,
                dtype={"arm": str},
                engine="c",
                skip_blank_lines=True,
            )
        except (ValueError, pd.errors.ParserError) as e:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise SpecError(DECISIONS, f"not a decision log near row {first_row}: {msg}") from None
        out = {"arm_codes": self._arm_codes(df["arm"].fillna(""))}
        for col, lo, hi in (("reward", -math.inf, math.inf), ("propensity", 0.0, 1.0)):
            v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
            bad = ~np.isfinite(v) | (v > hi) | ((v < lo) if col == "propensity" else False)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                want = "a number in [0, 1]" if col == "propensity" else "a finite number"
                raise SpecError(
                    DECISIONS,
                    f"row {first_row + i}: {col} must be {want}, got {str(df[col].iloc[i])[:30]!r}",
                )
            out[col] = v
        for col in ("timestamp", *OPTIONAL_INT):
            if col in df:
                v = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
                out[col] = np.nan_to_num(v, nan=-1.0)
            else:
                out[col] = np.full(len(df), -1.0)
        return out

    def _arm_codes(self, labels: pd.Series) -> np.ndarray:
        import pandas as pd  # slow to import (0.5 s): only when first needed

        inv, uniq = pd.factorize(labels)  # in order of first appearance (the column itself:
        # a str array made first cost more than the factorizing)
        return self._codes_of(inv, uniq.tolist())

    def _codes_of(self, inv: np.ndarray, labels: list) -> np.ndarray:
        """The codes of the labels ``labels[inv]`` (new labels get the next codes)."""
        for u in labels:
            self._codes.setdefault(u, len(self._codes))
        return np.array([self._codes[u] for u in labels], dtype=np.int64)[inv]

    def _bound(self) -> None:
        kept = sum(len(c["reward"]) for c in self._chunks)
        while kept - len(self._chunks[0]["reward"]) >= self.max_rows:
            kept -= len(self._chunks[0]["reward"])
            self.n_dropped += len(self._chunks.pop(0)["reward"])
        if kept > self.max_rows:  # the oldest chunk: keep its last rows
            cut = kept - self.max_rows
            self._chunks[0] = {k: v[cut:] for k, v in self._chunks[0].items()}
            self.n_dropped += cut

    # -- what was read ---------------------------------------------------------------------
    @property
    def arm_labels(self) -> list[str]:
        """The arms' labels, in the order of their codes (first seen first)."""
        return list(self._codes)

    def columns(self) -> dict[str, np.ndarray]:
        """The kept rows as arrays: ``arm_codes``, ``reward``, ``propensity``, ``timestamp``,
        ``model_version``, ``bandit`` (-1 where the log has no such column)."""
        if self._cache is None:
            keys = ("arm_codes", "reward", "propensity", "timestamp", *OPTIONAL_INT)
            self._cache = {
                k: np.concatenate([c[k] for c in self._chunks])
                if self._chunks
                else np.zeros(0, dtype=np.int64 if k == "arm_codes" else float)
                for k in keys
            }
            if self._chunks:
                self._chunks = [self._cache]  # one copy in memory, not the chunks and their sum
        return self._cache


def _ids_and_weights(ids: object, w: object) -> bool:
    """A batch line's ``ids`` and ``weights``: lists of the same length, not empty, ids
    integers >= -1, weights numbers (not booleans) in [0, 1]."""
    if type(ids) is not list or type(w) is not list or len(ids) != len(w) or not ids:
        return False
    try:  # C-level checks: a string among numbers raises TypeError, NaN fails the range
        ok = 0 <= min(w) and max(w) <= 1 + 1e-9 and math.isfinite(sum(w))
        ok = ok and max(ids) >= min(ids) >= -1 and all(type(i) is int for i in ids)
        return ok and not any(type(x) is bool for x in w)
    except TypeError:
        return False


class BatchTail:
    """``batches.jsonl`` read as it grows (:meth:`feed`, :meth:`read_from`): per batch
    update its counts and top bandit; the last batch's ids and weights; the
    spawns and prunings."""

    def __init__(self):
        self.offset = 0
        self._rest = b""
        self.n_lines = 0
        self._cols: dict[str, list] = {k: [] for k in ("learned", "top", "top_weight")}
        self._tops: pd.DataFrame | None = None
        self.events: list[tuple] = []  # (batch, step, kind, bandit, other, value)
        self.last: dict | None = None
        self._first_seen: dict[int, int] = {}  # bandit -> first batch it is alive in

    def read_from(self, path, max_bytes: int | None = None) -> int:
        """Parse what was appended to ``path`` since the last call; the number of new lines."""
        return _read_appended(self, path, max_bytes)

    def feed(self, data: bytes, final: bool = False) -> int:
        """Parse the complete lines of ``data`` (a cut line waits unless ``final``)."""
        buf = self._rest + data
        lines, self._rest = (buf, b"") if final else _complete(buf)
        n0, size = self.n_lines, len(lines)
        if final and lines.strip() and not lines.endswith(b"\n"):
            lines += b"\n"  # an upload's last line: read as columns too
        if lines.count(b"\n") < FAST_LINES or not self._columnar(lines):
            self._slow(lines)
        self.offset += size
        return self.n_lines - n0

    def _append(self, **cols) -> None:
        for k, v in cols.items():
            self._cols[k].append(np.asarray(v, dtype=float if k == "top_weight" else np.int64))
        self._tops = None

    def _slow(self, lines: bytes) -> None:
        """Line by line (json.loads), every line checked; the error names the line."""
        learned_: list[int] = []
        top: list[int] = []
        top_weight: list[float] = []
        first_seen = self._first_seen
        prev_ids = self.last["ids"] if self.last else None
        rec = None
        for raw in lines.split(b"\n"):
            if not raw.strip():
                continue
            batch = self.n_lines + len(top)
            rec = self._record(raw, batch + 1)
            ids, w = rec["ids"], rec["weights"]
            m = max(w)  # the last of the largest, as top_of_each_batch's stable sort keeps
            j = len(w) - 1 - w[::-1].index(m)
            learned = rec.get("learned", rec.get("decisions", batch + 1))
            learned_.append(learned)
            top.append(ids[j])
            top_weight.append(m)
            if ids != prev_ids:
                for b in ids:
                    first_seen.setdefault(b, batch)
                prev_ids = ids
            if rec.get("events"):
                self._add_events(rec["events"], batch, learned - 1)
        self._append(learned=learned_, top=top, top_weight=top_weight)
        self.n_lines += len(top)
        if rec is not None:
            self.last = rec

    def _columnar(self, lines: bytes) -> bool:
        """Many lines at once as columns (:mod:`.deployed_columns`: pyarrow's JSON reader,
        else regular expressions; checked as :meth:`_record` checks); False (nothing read)
        when a line is not as the agent writes it, and :meth:`_slow` then reads them one by
        one."""
        got = arrow_columns(lines) or regex_columns(lines)
        if got is None:
            return False
        learned, lens, ids, w = got
        n, base = len(lens), self.n_lines
        starts = np.r_[0, np.cumsum(lens)[:-1]]
        m = np.maximum.reduceat(w, starts)  # the last of the largest, as top_of_each_batch
        j = np.maximum.reduceat(np.where(w == np.repeat(m, lens), np.arange(w.size), -1), starts)
        for i, text in event_lines(lines):  # the few lines with spawns or prunings: read whole
            rec = self._record(text, base + i + 1)
            self._add_events(rec.get("events") or [], base + i, int(learned[i]) - 1)
        alive, first = np.unique(ids, return_index=True)  # who is alive from which line on
        for b, i in zip(alive.tolist(), (np.searchsorted(starts, first, "right") - 1).tolist()):
            self._first_seen.setdefault(b, base + i)
        self._append(learned=learned, top=ids[j], top_weight=m)
        self.n_lines += n
        self.last = self._record(lines[lines.rfind(b"\n", 0, len(lines) - 1) + 1 :], base + n)
        return True

    def _add_events(self, events: list, batch: int, step: int) -> None:
        for ev in events:
            other = ev.get("other")
            value = ev.get("value")
            self.events.append(
                (
                    batch,
                    step,
                    str(ev.get("kind", ""))[:20],
                    int(ev.get("bandit", -1)),
                    int(other) if isinstance(other, int) else -1,
                    float(value) if isinstance(value, int | float) else math.nan,
                )  # fmt: skip
            )

    @staticmethod
    def _record(raw: bytes, line: int) -> dict:
        where = f"line {line}"
        try:
            rec = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise SpecError(BATCHES, f"{where} is not JSON: not a batch log") from None
        if not isinstance(rec, dict):
            raise SpecError(BATCHES, f"{where} is not a JSON object: not a batch log")
        ids_ok = _ids_and_weights(rec.get("ids"), rec.get("weights"))
        if not (ids_ok and all(isinstance(rec.get(k, 0), int) for k in ("version", "learned"))):
            raise SpecError(
                BATCHES,
                f"{where}: ids and weights must be lists of the same length, ids integers "
                f"and weights numbers in [0, 1]",
            )
        events = rec.get("events")
        if events and (type(events) is not list or not all(type(e) is dict for e in events)):
            raise SpecError(BATCHES, f"{where}: events must be a list of objects")
        return rec

    # -- tables ----------------------------------------------------------------------------
    def tops(self) -> pd.DataFrame:
        """One row per batch: batch, step (the last decision learned), bandit (the most
        likely one), weight (its weight)."""
        import pandas as pd  # slow to import (0.5 s): only when first needed

        if self._tops is None:
            c = {k: np.concatenate(v) if v else np.zeros(0) for k, v in self._cols.items()}
            self._cols = {k: [v] for k, v in c.items()}  # one chunk from now on
            self._tops = pd.DataFrame(
                {
                    "batch": np.arange(self.n_lines, dtype=np.int64),
                    "step": c["learned"].astype(np.int64) - 1,
                    "bandit": c["top"].astype(np.int64),
                    "weight": c["top_weight"].astype(float),
                }
            )
        return self._tops

    def events_frame(self) -> pd.DataFrame:
        """The spawns and prunings: batch, step, kind, bandit, other, value."""
        import pandas as pd  # slow to import (0.5 s): only when first needed

        return pd.DataFrame(
            self.events, columns=["batch", "step", "kind", "bandit", "other", "value"]
        )

    def first_seen(self) -> dict[int, int]:
        """The first batch each bandit was alive in."""
        return dict(self._first_seen)


class Deployment:
    """A deployment's two logs, read as they grow (:class:`DecisionTail`,
    :class:`BatchTail`), and the tables the page draws (:meth:`views`, recomputed only when
    something new was read).

    Parameters
    ----------
    n_arms : int, optional
        K, for the uniform policy's ESS (default: the arms seen in the log).
    """

    def __init__(self, n_arms: int | None = None, max_rows: int = DEPLOYED_LIMITS["rows"]):
        self.decisions = DecisionTail(max_rows)
        self.batches = BatchTail()
        self.n_arms = n_arms
        self._views: tuple | None = None

    @classmethod
    def from_bytes(cls, decisions: bytes, batches: bytes = b"", n_arms: int | None = None):
        """A deployment from the two files' bytes (an upload; the example)."""
        dep = cls(n_arms)
        dep.decisions.feed(decisions, final=True)
        if batches:
            dep.batches.feed(batches, final=True)
        return dep

    def refresh(self, folder, max_bytes: int = DEPLOYED_LIMITS["refresh_bytes"]) -> int:
        """Read what the files of ``folder`` gained since the last call (at most
        ``max_bytes`` per file); the number of new decisions and batch lines."""
        from pathlib import Path

        folder = Path(folder)
        new = 0
        if (folder / DECISIONS).is_file():
            new += self.decisions.read_from(folder / DECISIONS, max_bytes)
        if (folder / BATCHES).is_file():
            new += self.batches.read_from(folder / BATCHES, max_bytes)
        return new

    @property
    def arms(self) -> int:
        """The number of arms (the decisions' labels when the log does not say)."""
        return self.n_arms or max(len(self.decisions.arm_labels), 1)

    def views(self, n_windows: int = 100, summary=None) -> dict:
        """The page's tables: ``tops``, ``events``, ``recalls``, ``spells``, ``windows``,
        ``propensity`` (the summary dict), ``bandits`` (``summary``: the agent state's
        bandits, if any)."""
        key = (self.decisions.n_rows, self.batches.n_lines, n_windows, id(summary))
        if self._views is not None and self._views[0] == key:
            return self._views[1]
        cols = self.decisions.columns()
        tops = self.batches.tops()
        out = dict(
            tops=tops,
            events=self.batches.events_frame(),
            recalls=recalls(tops),
            spells=spells_table(tops),
            windows=reward_windows(cols["reward"], n_windows),
            propensity=propensity_summary(cols["propensity"], self.arms),
            bandits=bandits_table(self.batches, cols, self.decisions.arm_labels, summary),
        )
        self._views = (key, out)
        return out


__all__ = [
    "DecisionTail",
    "BatchTail",
    "Deployment",
    "your_data_bytes",
    "your_data_file",
    "DECISIONS",
    "BATCHES",
]
