r"""Reading a CSV file a user brings, as it comes: everything in it is hostile until checked.

The steps, with memory bounded by the file's size (``docs/your-data.md`` has the measurements):

1. :func:`check_bytes`: the size (before anything is decoded), binary content (NUL bytes, an
   Excel workbook), UTF-8 (with or without a byte-order mark), checked in 1 MiB pieces that
   are decoded and dropped, never as one copy of the text.
2. :func:`open_csv`: the header is the first line that is not blank (leading blank lines are
   skipped); lines end in ``\n``, ``\r\n`` or ``\r`` alone. One pass over the bytes counts
   each row's fields: a row with more or fewer fields than the header is a problem naming
   its row. Up to :data:`MAX_COLUMNS` columns (100,000): extra columns cost nothing, since
3. :meth:`CsvFile.read` reads **only the columns used** (pandas' C reader with ``usecols``,
   cells as text, nothing evaluated, nothing used as a path). A cell of a column that is read
   may hold at most :data:`MAX_CELL` characters. Rows that are blank in every column read
   are dropped (and counted).

Every problem goes to a :class:`Problems`, which reports them all at once (the first
:data:`MAX_PROBLEMS` lines by row, then a count) in ONE :class:`~allseason.errors.SpecError`;
each line names its row (1-based, as in a spreadsheet: the header is row 1) and column.

    >>> f = open_csv(b"timestamp,arm,reward\n1,a,0\n2,b,1\n", max_bytes=1000, max_rows=10)
    >>> cols, rows = f.read(["arm"])
    >>> f.names, cols["arm"].tolist(), rows.tolist()
    (['timestamp', 'arm', 'reward'], ['a', 'b'], [2, 3])
    >>> read_table(b"")
    Traceback (most recent call last):
    ...
    allseason.errors.SpecError: file: the file is empty
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import re
import stat
from collections.abc import Sequence

import numpy as np

from ..errors import SpecError
from ..files import check_text_bytes
from ..limits import MAX_CELL, MAX_COLUMNS
from .cells import (
    MAX_LABEL,
    _is_int,
    _show,
    check_unit,
    dates_or_numbers,
    declared_arms,
    first_duplicate,
    labels,
    natural_key,
    numbers,
    rows_of,
)
from .problems import MAX_PROBLEMS, Problems

_CHUNK = 1 << 22  # bytes per step of the field count
# rows per call of pandas' parser: it holds the GIL for a whole call (a 200,000-row, 8.8 MB
# upload read in one call held it for about a second), and an app server's event loop and its
# other visitors' pages then wait; between calls of 20,000 rows (about 50 ms) they run
READ_ROWS = 20_000
_CSV_LIMIT = 131_072  # Python's csv field limit (a quoted file's field count uses it)
_BLANK = re.compile(rb"(?:[ \t]*(?:\r\n|\r|\n))*")
_SPACE = np.array([9, 13, 32], dtype=np.uint8)


def check_bytes(raw: bytes | str, *, max_bytes: int) -> bytes:
    """The bytes of a file after the size, binary and UTF-8 checks; SpecError("file", ...)
    otherwise, naming the row of the first bad byte. Text is encoded once (for tests and the
    API); bytes are never copied."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", errors="surrogatepass")
    if isinstance(raw, (bytearray, memoryview)):
        raw = bytes(raw)
    if not isinstance(raw, bytes):
        raise SpecError("file", f"must be bytes or text, got a {type(raw).__name__}")
    if len(raw) > max_bytes:
        raise SpecError(
            "file",
            f"the file has {len(raw):,} bytes; at most {max_bytes:,} "
            f"bytes are read (about {max_bytes / 1e6:g} MB)",
            bounds=(0, max_bytes),
            got=len(raw),
        )
    if not raw or raw.isspace():
        raise SpecError("file", "the file is empty")
    if raw[:2] == b"PK" or raw[:4] == b"\xd0\xcf\x11\xe0":
        raise SpecError(
            "file",
            "this looks like an Excel workbook, not a CSV file; save it "
            "as 'CSV UTF-8 (comma delimited)'",
        )
    check_text_bytes(raw, "CSV")  # NUL bytes, UTF-8: the words of every file a user brings
    return raw


def decode(raw: bytes | str, *, max_bytes: int) -> str:
    """The text of a small file (the checks of :func:`check_bytes`, then UTF-8; a
    byte-order mark is dropped)."""
    return check_bytes(raw, max_bytes=max_bytes).decode("utf-8-sig")


class CsvFile:
    """A checked file and its header: ``names`` (stripped, lower case; "" for a column with
    no name), ``header_row`` (1-based), ``n_rows`` (rows under the header, blank lines
    included), ``problems`` (what was found so far)."""

    def __init__(
        self, raw: bytes, names: list[str], header_row: int, data_start: int, header_start: int
    ):
        self.raw, self.names, self.header_row = raw, names, header_row
        self.data_start, self.header_start = data_start, header_start
        self.problems = Problems()
        self.n_rows = 0
        self.blank_rows = 0

    def first_row(self) -> list[str]:
        """The cells of the first row under the header that is not blank ([] if none)."""
        begin = _after_blank_lines(self.raw, min(self.data_start, len(self.raw)))
        ends = [i for i in (self.raw.find(b"\n", begin), self.raw.find(b"\r", begin)) if i >= 0]
        line = self.raw[begin : min(ends) if ends else len(self.raw)]
        try:
            return next(csv.reader([line.decode("utf-8")]), [])
        except csv.Error:
            return []

    def read(self, names: Sequence[str], floats: Sequence[str] = ()) -> tuple[dict, np.ndarray]:
        """({name: pandas Series}, rows): the columns ``names`` only (the first column of
        each name), as stripped text, or as float64 for those in ``floats`` when every cell
        of them is a number (else all as text, so that the bad cells can be named); rows
        blank in all of them dropped; ``rows`` are their spreadsheet rows. A cell of text
        longer than :data:`MAX_CELL` is a problem. Floats first: a number costs 8 bytes,
        not a Python string's 50 on its way to pandas' text column."""
        import pandas as pd

        pos = [self.names.index(n) for n in names]
        if not pos or not self.n_rows:
            return {n: pd.Series([], dtype=str) for n in names}, np.zeros(0, np.int64)
        as_float = {p for n, p in zip(names, pos) if n in floats}
        try:
            df = self._read(pos, {p: (float if p in as_float else str) for p in pos})
        except (ValueError, IndexError):  # a cell that is not a number: as text, named later
            df = None
        if df is None:
            try:
                df = self._read(pos, str)
            except (ValueError, IndexError, MemoryError, pd.errors.ParserError) as e:
                raise SpecError("file", f"not a readable CSV file ({str(e)[:120]})") from None
        cols = {
            n: (df[p] if df[p].dtype.kind == "f" else df[p].str.strip()) for n, p in zip(names, pos)
        }
        del df
        blank = np.ones(len(next(iter(cols.values()))), dtype=bool)
        for s in cols.values():
            blank &= (s == "").to_numpy()
        rows = self.header_row + 1 + np.flatnonzero(~blank)
        self.blank_rows = int(blank.sum())
        if self.blank_rows:
            keep = ~blank
            cols = {n: s[keep].reset_index(drop=True) for n, s in cols.items()}
        for n, s in cols.items():
            if s.dtype.kind == "f":
                continue
            long = (s.str.len() > MAX_CELL).to_numpy()

            def too_long(i: int, s=s) -> str:
                return (
                    f"a cell of {len(s.iloc[i]):,} characters; at most "
                    f"{MAX_CELL:,} are read in a cell"
                )

            self.problems.add_rows(long, rows, n, too_long)
        return cols, rows

    def _read(self, pos: list[int], dtype, rows: int | None = None):
        """The columns ``pos`` as ``dtype``, read :data:`READ_ROWS` rows a call (``rows``:
        another count) and put together: the same frame as one call gives (where pandas'
        parts refuse what one call reads, a part of blank lines alone in a file of one
        column, the file is read again in one call)."""
        import pandas as pd

        def read(**part):
            return pd.read_csv(  # from the header on: pandas miscounts leading "\r\r" lines
                _Slice(self.raw, self.header_start),
                header=None,
                skiprows=1,
                names=list(range(len(self.names))),
                usecols=pos,
                dtype=dtype,
                keep_default_na=False,
                na_filter=False,
                skip_blank_lines=False,
                index_col=False,
                engine="c",
                encoding="utf-8",
                **part,
            )

        try:
            with read(chunksize=rows or READ_ROWS) as reader:
                parts = list(reader)  # a file of no row: one empty part
        except pd.errors.ParserError:
            return read()
        return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)


class _Slice(io.RawIOBase):
    """The bytes from ``start`` on, read as a file without a copy of them."""

    def __init__(self, raw: bytes, start: int):
        self._view, self._pos = memoryview(raw), start

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        n = min(len(buf), len(self._view) - self._pos)
        buf[:n] = self._view[self._pos : self._pos + n]
        self._pos += n
        return n


def open_csv(source: bytes | str, *, max_bytes: int, max_rows: int) -> CsvFile:
    """The file's checks, its header and the count of fields in every row (module
    docstring). Raises at once for the checks of the bytes and the header; a row's problem
    (its number of fields) is kept in ``problems`` with the others to come."""
    raw = check_bytes(source, max_bytes=max_bytes)
    lead, begin, end = _header_line(raw)
    if begin >= len(raw):
        raise SpecError("file", "the file is empty")
    line = raw[begin:end].decode("utf-8")
    if line.count(",") >= MAX_COLUMNS:  # before a string is made of each name
        raise SpecError(
            "columns",
            f"row {lead + 1}: the header has {line.count(',') + 1:,} columns; at most "
            f"{MAX_COLUMNS:,} are read (only the columns used are read, but a wider header "
            f"costs memory of its own)",
            bounds=(1, MAX_COLUMNS),
            got=line.count(",") + 1,
        )
    if line.count('"') % 2:
        raise SpecError("columns", f'row {lead + 1}: the header has a quote (") that is not closed')
    try:
        names = _names(line)
    except csv.Error as e:
        raise SpecError("columns", f"row {lead + 1}: the header is not readable ({e})") from None
    if len(names) < 2 and (";" in line or "\t" in line):
        raise SpecError(
            "columns",
            "the header has one column: the file must be comma-separated (not semicolons or tabs)",
        )
    data = end + (2 if raw[end : end + 2] == b"\r\n" else 1)
    f = CsvFile(raw, names, lead + 1, data, begin)
    _count_fields(f, max_rows)
    return f


def _after_blank_lines(raw: bytes, start: int) -> int:
    """The offset of the first byte from ``start`` on that is not in a blank line."""
    blank = _BLANK.match(raw, start)
    assert blank is not None  # the pattern matches the empty string
    return blank.end()


def _header_line(raw: bytes) -> tuple[int, int, int]:
    """(blank lines before the header, its first byte, the byte after it)."""
    start = 3 if raw.startswith(codecs.BOM_UTF8) else 0
    begin = _after_blank_lines(raw, start)
    ends = [i for i in (raw.find(b"\n", begin), raw.find(b"\r", begin)) if i >= 0]
    return _count_lines(raw, start, begin), begin, (min(ends) if ends else len(raw))


def _names(line: str) -> list[str]:
    return [c.strip().lower() for c in next(csv.reader([line]), [])]


def header_names(source: bytes | str, limit: int = 65_536) -> list[str]:
    """The column names of a file's header (its first line that is not blank), read from
    its first ``limit`` bytes, lower case; [] when there are none to read. For telling a log
    from a table; the checks are :func:`open_csv`'s."""
    raw = source[: limit * 4].encode("utf-8", "replace") if isinstance(source, str) else source
    raw = bytes(raw[:limit])
    _, begin, end = _header_line(raw)
    try:
        return _names(raw[begin:end].decode("utf-8", errors="replace"))
    except csv.Error:
        return []


def _count_lines(raw: bytes, start: int, end: int) -> int:
    r"""Line ends (\n, \r\n or \r alone) between two offsets."""
    return (
        raw.count(b"\n", start, end) + raw.count(b"\r", start, end) - raw.count(b"\r\n", start, end)
    )


def _count_fields(f: CsvFile, max_rows: int) -> None:
    """Count each row's fields (commas + 1; with quotes, Python's csv reader), note the
    rows whose count differs from the header's, and the number of rows."""
    raw, n_cols = f.raw, len(f.names)
    if f.data_start >= len(raw):
        return
    has_cr, has_lf = b"\r" in raw, b"\n" in raw
    mixed = has_cr and has_lf and raw.count(b"\r") != raw.count(b"\r\n")
    if b'"' in raw or mixed:
        counts = _quoted_counts(f)
    else:
        counts = _plain_counts(raw, f.data_start, b"\n" if has_lf else b"\r")
    first = f.header_row + 1
    n_rows = blank = 0
    for n_fields, is_blank in counts:
        rows = first + n_rows + np.arange(len(n_fields))
        bad = (n_fields != n_cols) & ~is_blank

        def fields_of(i: int, n_fields: np.ndarray = n_fields) -> str:
            return f"{int(n_fields[i])} fields, but the header has {n_cols} columns"

        f.problems.add_rows(bad, rows, None, fields_of)
        n_rows += len(n_fields)
        blank += int(is_blank.sum())
    f.n_rows = n_rows
    if n_rows - blank > max_rows:
        raise SpecError(
            "rows",
            f"more than {max_rows:,} rows under the header ({n_rows - blank:,}); at most "
            f"{max_rows:,} are read",
            bounds=(1, max_rows),
            got=n_rows - blank,
        )


def _plain_counts(raw: bytes, start: int, eol: bytes):
    """(fields per line, blank per line) of each piece of a file without quotes: commas
    counted with numpy on about 4 MiB at a time (memory: a few times the piece)."""
    buf = np.frombuffer(raw, dtype=np.uint8)
    e = eol[0]
    pos, n = start, len(raw)
    while pos < n:
        stop = min(n, pos + _CHUNK)
        if stop < n:
            j = raw.find(eol, stop)
            stop = n if j < 0 else j + 1
        piece = buf[pos:stop]
        nl = np.flatnonzero(piece == e)
        if not len(nl) or nl[-1] != len(piece) - 1:
            nl = np.append(nl, len(piece))  # the last line has no line end
        starts = np.concatenate(([0], nl[:-1] + 1))
        commas = np.flatnonzero(piece == 44)
        n_fields = np.diff(np.searchsorted(commas, np.concatenate(([0], nl)))) + 1
        blank = n_fields == 1
        if blank.any():  # one field: blank when every byte is a space, a tab or a \r
            ink = np.concatenate(([0], np.cumsum(~np.isin(piece, _SPACE), dtype=np.int64)))
            blank &= ink[nl] == ink[starts]
        yield n_fields, blank
        pos = stop


def _quoted_counts(f: CsvFile):
    """(fields per row, blank per row) from Python's csv reader, in pieces of 65,536 rows; a
    field over its limit (131,072 characters) is a problem naming the row."""
    text = io.TextIOWrapper(io.BytesIO(f.raw), encoding="utf-8", newline="")
    text.buffer.seek(f.data_start)
    reader = csv.reader(text)
    n_fields, blank = [], []
    row = f.header_row
    while True:
        try:
            rec = next(reader)
        except StopIteration:
            break
        except csv.Error as e:
            row += 1
            f.problems.add(f"not a readable CSV row ({str(e)[:80]})", row=row)
            n_fields.append(len(f.names))
            blank.append(False)
            continue
        row += 1
        n_fields.append(len(rec))
        blank.append(not rec or (len(rec) == 1 and not rec[0].strip()))
        if len(n_fields) == 65_536:
            yield np.array(n_fields), np.array(blank)
            n_fields, blank = [], []
    yield np.array(n_fields, dtype=np.int64), np.array(blank, dtype=bool)


def columns_text(names: Sequence[str]) -> str:
    """Column names for one line: a run of 3 or more names that differ only by a number
    counting up by one is shortened ("a_0 … a_79 (80 columns)").

    >>> columns_text(["position", "f_0", "f_1", "f_2", "f_3", "g"])
    'position, f_0 … f_3 (4 columns), g'
    """
    out: list[str] = []
    run: list[tuple[str, int, str]] = []  # (the name but its number, the number, the name)

    def flush():
        if len(run) >= 3:
            out.append(f"{run[0][2]} … {run[-1][2]} ({len(run)} columns)")
        else:
            out.extend(r[2] for r in run)
        run.clear()

    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        key = (m.group(1), int(m.group(2)), name) if m else None
        if run and key and key[0] == run[-1][0] and key[1] == run[-1][1] + 1:
            run.append(key)
            continue
        flush()
        if key:
            run.append(key)
        else:
            out.append(name)
    flush()
    return ", ".join(out)


def read_path(name: str, max_bytes: int) -> bytes:
    """The bytes of a user's file named on the command line: a regular file only (a FIFO, a
    device or a folder is refused without being read: opened non-blocking, checked with
    fstat), its size checked before reading. SpecError("file", ...) otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except FileNotFoundError:
        raise SpecError("file", f"{name!r}: no such file") from None
    except IsADirectoryError:
        raise SpecError("file", f"{name!r}: not a regular file (a folder)") from None
    except OSError as e:
        raise SpecError("file", f"{name!r}: cannot be opened ({e.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = (
                "a folder"
                if stat.S_ISDIR(st.st_mode)
                else "a FIFO"
                if stat.S_ISFIFO(st.st_mode)
                else "a device"
                if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                else "a special file"
            )
            raise SpecError("file", f"{name!r}: not a regular file ({kind}); give a CSV file")
        if st.st_size > max_bytes:
            raise SpecError(
                "file",
                f"{name!r}: the file has {st.st_size:,} bytes; at most {max_bytes:,} bytes "
                f"are read",
                bounds=(0, max_bytes),
                got=st.st_size,
            )
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as fh:
            return fh.read(max_bytes + 1)
    finally:
        os.close(fd)


def read_table(
    source: bytes | str,
    *,
    max_bytes: int = 20_000_000,
    max_rows: int = 200_000,
    max_columns: int = 64,
    usecols: Sequence[str] | None = None,
    with_rows: bool = False,
):
    """(header, {column name: numpy array of str}) of a comma-separated file: the columns
    named in ``usecols`` that the header has (None: every named column, then at most
    ``max_columns`` of them). ``with_rows``: also the spreadsheet row of each record, for
    messages (blank lines are skipped, so record i is not always row i + 2). Column names
    are stripped and lower-cased; duplicated names among the columns read are refused.
    Every problem at once, in one SpecError."""
    f = open_csv(source, max_bytes=max_bytes, max_rows=max_rows)
    names = f.names
    if usecols is None:
        if len(names) > max_columns:
            raise SpecError(
                "columns",
                f"the header has {len(names)} columns; at most {max_columns} are read",
                bounds=(1, max_columns),
                got=len(names),
            )
        wanted = [n for n in dict.fromkeys(names) if n]
    else:
        wanted = [n for n in dict.fromkeys(usecols) if n in names]
    for name in wanted:
        if names.count(name) > 1:
            first = names.index(name)
            second = names.index(name, first + 1)
            f.problems.add(
                f"the column {_show(name)} appears twice in the header "
                f"(columns {first + 1} and {second + 1})",
                column=name[:40],
            )
    cols, rows = f.read(wanted)
    f.problems.raise_if_any()
    if not len(rows):
        raise SpecError("rows", "no rows under the header")
    out = {n: s.to_numpy(dtype=object) for n, s in cols.items()}
    return (names, out, rows) if with_rows else (names, out)


__all__ = [
    "Problems",
    "CsvFile",
    "open_csv",
    "header_names",
    "columns_text",
    "check_bytes",
    "read_path",
    "read_table",
    "decode",
    "numbers",
    "check_unit",
    "labels",
    "natural_key",
    "declared_arms",
    "dates_or_numbers",
    "first_duplicate",
    "rows_of",
    "MAX_CELL",
    "MAX_COLUMNS",
    "MAX_LABEL",
    "MAX_PROBLEMS",
    "_is_int",
]
