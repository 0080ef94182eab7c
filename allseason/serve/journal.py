"""The service's files on disk: an append-only journal of JSON lines and an atomic pointer.

A journal line is written with one ``os.write`` on a file opened ``O_APPEND``; a line cut by
a ``kill -9`` (no final newline) was never acknowledged, and :meth:`Journal.open` cuts it off
before anything is appended after it. The pointer (``CURRENT``) names the last good snapshot;
it is replaced atomically (temporary file, fsync, ``os.replace``, fsync of the folder).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TypeGuard


class DiskError(OSError):
    """A write that did not reach the disk (full, read-only): the service answers 503."""


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def loads(text: str | bytes):
    """JSON as the service reads it: NaN, Infinity and -Infinity refused."""
    return json.loads(text, parse_constant=_reject_constant)


def dumps(obj) -> str:
    """One compact JSON line; floats as ``repr`` (they read back bit for bit); no NaN."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file inside ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, text: str) -> None:
    """``text`` into ``path`` atomically: a reader sees the old or the new content, never a
    mixture; the old content survives any failure (DiskError)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise DiskError(e.errno, f"cannot write {path.name}: {e.strerror}") from None


class Journal:
    """An append-only file of JSON lines.

    Parameters
    ----------
    path : Path
        The file; created if missing.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.fd = -1
        self.size = 0

    def records(self, offset: int = 0, *, limit_bytes: int | None = None):
        """The complete records from byte ``offset``: a list of ``(record, end_offset)``.

        A last line without its newline (a write cut by a kill) is left out; any other line
        that is not JSON raises ValueError (a damaged journal is never guessed at)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                data = f.read() if limit_bytes is None else f.read(limit_bytes)
        except FileNotFoundError:
            return []
        out, pos = [], 0
        while True:
            nl = data.find(b"\n", pos)
            if nl < 0:
                break
            line = data[pos:nl]
            try:
                out.append((loads(line), offset + nl + 1))
            except ValueError:
                raise ValueError(
                    f"{self.path.name}: line at byte {offset + pos:,} is not a record"
                ) from None
            pos = nl + 1
        return out

    def open(self) -> None:
        """Open for appending, cutting off a last line left incomplete by a kill."""
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        size = os.fstat(self.fd).st_size
        if size:
            with open(self.path, "rb") as f:
                f.seek(max(0, size - (1 << 20)))
                tail = f.read()
            cut = size - len(tail) + tail.rfind(b"\n") + 1 if b"\n" in tail else 0
            if cut != size:
                os.ftruncate(self.fd, cut)
                os.fsync(self.fd)
                size = cut
        self.size = size

    def append(self, record: dict, *, sync: bool) -> int:
        """Write one record (and fsync it if ``sync``); the offset after it.

        On failure the file is cut back to its size before (DiskError)."""
        line = (dumps(record) + "\n").encode()
        try:
            n = os.write(self.fd, line)
            if n != len(line):
                raise OSError(28, "short write")
            if sync:
                os.fsync(self.fd)
        except OSError as e:
            try:
                os.ftruncate(self.fd, self.size)
            except OSError:
                pass
            raise DiskError(e.errno, f"journal write failed: {e.strerror}") from None
        self.size += n
        return self.size

    def sync(self) -> None:
        """fsync what was written."""
        try:
            os.fsync(self.fd)
        except OSError as e:
            raise DiskError(e.errno, f"journal fsync failed: {e.strerror}") from None

    def close(self) -> None:
        """Close the journal's file."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_KINDS = {"d": "decisions", "r": "rewards"}


def reader_path(folder, i: int, kind: str, seg: int = 0) -> Path:
    """Reader i's journal of ``kind`` ("d": its decisions, "r": its rewards), segment
    ``seg`` (0: ``r{i}.decisions.jsonl``; n: ``r{i}.decisions.{n:06d}.jsonl``)."""
    name = f"r{i}.{_KINDS[kind]}" + (f".{seg:06d}" if seg else "")
    return Path(folder) / "journal" / f"{name}.jsonl"


def reader_segments(folder, i: int, kind: str) -> list[int]:
    """The segments of reader i's journal of ``kind`` on disk, in order."""
    segs = []
    for p in (Path(folder) / "journal").glob(f"r{i}.{_KINDS[kind]}.*jsonl"):
        mid = p.name[len(f"r{i}.{_KINDS[kind]}.") : -len("jsonl")].rstrip(".")
        if mid == "":
            segs.append(0)
        elif mid.isdigit():
            segs.append(int(mid))
    return sorted(segs)


def finite(x) -> TypeGuard[int | float]:
    """A real number that is neither NaN nor infinite (bool excluded)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
