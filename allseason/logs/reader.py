"""Reading a CSV file a user brings: everything in it is hostile until checked.

One entry point, :func:`read_table`, turns bytes into a header and columns of text, or raises
a :class:`~allseason.errors.SpecError` with ONE message naming the row (1-based, as in a
spreadsheet: the header is row 1) or the column. The checks, in order: size in bytes (before
anything is decoded), binary content (NUL bytes, an Excel workbook), the encoding (UTF-8,
with or without a byte-order mark), an empty file, the header (names, duplicates, at most
``max_columns`` columns), fields per row, and at most ``max_rows`` rows. Cells are parsed
by pandas' C reader as text only (``dtype=str``): nothing is evaluated, nothing is used as a
path. Converting columns to numbers, dates and labels is done by the helpers below, each
naming the first bad row.

    >>> header, cols = read_table(b"timestamp,arm,reward\\n1,a,0\\n2,b,1\\n")
    >>> header, cols["arm"].tolist()
    (['timestamp', 'arm', 'reward'], ['a', 'b'])
    >>> read_table(b"")
    Traceback (most recent call last):
    ...
    allseason.errors.SpecError: file: the file is empty
"""

from __future__ import annotations

import io
import re

import numpy as np

from ..errors import SpecError
from ..errors import show as _show_value

MAX_LABEL = 40  # characters of an arm label
_LABEL_OK = re.compile(r"^[\w .:/()+#&'-]+$")


def _show(value) -> str:
    """A short repr of a user's cell for a message (numpy scalars as plain Python values)."""
    return _show_value(value.item() if isinstance(value, np.generic) else value)


def _row_of_offset(raw: bytes, offset: int) -> int:
    """The 1-based line (row) of a byte offset."""
    return raw.count(b"\n", 0, offset) + 1


def decode(raw: bytes | str, *, max_bytes: int) -> str:
    """The text of a file: size and binary checks, then UTF-8 (a byte-order mark is
    dropped). SpecError("file", ...) naming the row of the first undecodable byte."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", errors="surrogatepass")
    if not isinstance(raw, (bytes, bytearray)):
        raise SpecError("file", f"must be bytes or text, got a {type(raw).__name__}")
    if len(raw) > max_bytes:
        raise SpecError(
            "file",
            f"the file has {len(raw):,} bytes; at most {max_bytes:,} "
            f"bytes are read (about {max_bytes / 1e6:g} MB)",
            bounds=(0, max_bytes),
            got=len(raw),
        )
    if not raw.strip():
        raise SpecError("file", "the file is empty")
    if raw[:2] == b"PK" or raw[:4] == b"\xd0\xcf\x11\xe0":
        raise SpecError(
            "file",
            "this looks like an Excel workbook, not a CSV file; save it "
            "as 'CSV UTF-8 (comma delimited)'",
        )
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise SpecError(
            "file",
            f"row {_row_of_offset(raw, nul)}: a NUL byte; this is a "
            f"binary file (or UTF-16 text), not a UTF-8 CSV file",
        )
    try:
        return bytes(raw).decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SpecError(
            "file",
            f"row {_row_of_offset(raw, e.start)}: byte "
            f"0x{raw[e.start]:02x} is not UTF-8 text; save the file as "
            f"'CSV UTF-8' (the encoding must be UTF-8)",
        ) from None


def read_table(
    source: bytes | str,
    *,
    max_bytes: int = 20_000_000,
    max_rows: int = 200_000,
    max_columns: int = 64,
) -> tuple[list[str], dict]:
    """(header, {column name: numpy array of str}) of a comma-separated file; column names
    are stripped and lower-cased. See the module docstring for the checks."""
    import pandas as pd

    text = decode(source, max_bytes=max_bytes)
    end = text.find("\n")
    first = (text if end < 0 else text[:end]).rstrip("\r")
    names = [c.strip().lower() for c in next(iter(_csv_line(first)), [])]
    if len(names) > max_columns:
        raise SpecError(
            "columns",
            f"the header has {len(names)} columns; at most {max_columns} are read",
            bounds=(1, max_columns),
            got=len(names),
        )
    if len(names) < 2 and (";" in first or "\t" in first):
        raise SpecError(
            "columns",
            "the header has one column: the file must be comma-separated (not semicolons or tabs)",
        )
    for i, name in enumerate(names):
        if not name:
            raise SpecError("columns", f"column {i + 1} of the header has no name")
        if names.index(name) != i:
            raise SpecError(
                name[:40],
                f"the column {_show(name)} appears twice in the header "
                f"(columns {names.index(name) + 1} and {i + 1})",
            )
    try:
        df = pd.read_csv(
            io.StringIO(text),
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            skip_blank_lines=True,
            engine="c",
            nrows=max_rows + 1,
        )
    except pd.errors.ParserError as e:
        m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(e))
        if m:
            raise SpecError(
                "file",
                f"row {m.group(2)}: {m.group(3)} fields, but the header has {m.group(1)} columns",
            ) from None
        raise SpecError("file", f"not a readable CSV file ({str(e)[:120]})") from None
    except (ValueError, MemoryError) as e:  # e.g. a field larger than pandas accepts
        raise SpecError("file", f"not a readable CSV file ({str(e)[:120]})") from None
    if len(df) > max_rows:
        raise SpecError(
            "rows",
            f"more than {max_rows:,} rows under the header; at most {max_rows:,} are read",
            bounds=(1, max_rows),
            got=len(df),
        )
    if len(df) == 0:
        raise SpecError("rows", "no rows under the header")
    cols = {name: df.iloc[:, i].to_numpy(dtype=object).astype(str) for i, name in enumerate(names)}
    for col in cols.values():  # pandas fills a short row's missing fields with ""
        col[:] = np.char.strip(col)
    return names, cols


def _csv_line(line: str):
    import csv

    return csv.reader([line])


def rows_of(index) -> np.ndarray:
    """Spreadsheet rows of 0-based record indices (the header is row 1)."""
    return np.asarray(index, dtype=np.int64) + 2


def numbers(col: np.ndarray, name: str, *, what: str = "a number") -> np.ndarray:
    """A column as floats: an empty cell, NaN, inf or text is a SpecError naming the first
    bad row and the column."""
    import pandas as pd

    values = pd.to_numeric(pd.Series(col), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.argmax(bad))
        cell = col[i]
        why = (
            "is empty"
            if cell == ""
            else "is NaN"
            if cell.lower() in ("nan", "na", "n/a", "null", "none")
            else f"{_show(cell)} is not {what}"
        )
        raise SpecError(
            name, f"row {int(rows_of(i))}, column {name}: {why}; every row needs {what}"
        )
    return values


def check_unit(values: np.ndarray, name: str, scale: str | None) -> tuple[np.ndarray, str]:
    """Rewards (or rates) in [0, 1]: as they are (``scale`` None), or rescaled: "max"
    (divided by the largest; needs no negative value) or "minmax" ((v - min) / (max -
    min)). Returns (values, a note on what was done). A value outside [0, 1] with no
    scaling chosen is a SpecError naming its row."""
    if scale in (None, "", "none"):
        out = (values < 0) | (values > 1)
        if out.any():
            i = int(np.argmax(out))
            raise SpecError(
                name,
                f"row {int(rows_of(i))}, column {name}: {values[i]:g} is "
                f"outside [0, 1]; rescale the column, or choose a scaling "
                f"(scale = max: divide by the largest value; minmax: "
                f"(value - min) / (max - min))",
            )
        return values, ""
    lo, hi = float(values.min()), float(values.max())
    if scale == "max":
        if lo < 0:
            i = int(np.argmin(values))
            raise SpecError(
                name,
                f"row {int(rows_of(i))}, column {name}: {values[i]:g} is "
                f"negative, so dividing by the largest value cannot bring "
                f"it into [0, 1]; choose scale = minmax",
            )
        return (values / hi if hi > 0 else values), f"{name} divided by its largest value {hi:g}"
    if scale == "minmax":
        if hi == lo:
            return np.zeros_like(values), f"{name} is constant ({lo:g}): every value set to 0"
        return (values - lo) / (hi - lo), f"{name} rescaled from [{lo:g}, {hi:g}] to [0, 1]"
    raise SpecError("scale", f"must be none, max or minmax, got {_show(scale)}")


def labels(col: np.ndarray, name: str, arms=None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Arm labels as integer codes 0..K-1 and the labels in order (numeric order when every
    label is an integer, else text order). ``arms``: None (every label seen is an arm), an
    int N (the arms are the integers 0..N-1), or a list of labels; a label outside the
    declared arms is an "unknown arm", a SpecError naming its row."""
    empty = col == ""
    if empty.any():
        i = int(np.argmax(empty))
        raise SpecError(
            name, f"row {int(rows_of(i))}, column {name}: is empty; every row needs an arm"
        )
    uniq, inverse = np.unique(col, return_inverse=True)
    for u in uniq:
        if len(u) > MAX_LABEL or not _LABEL_OK.match(u):
            i = int(np.argmax(col == u))
            raise SpecError(
                name,
                f"row {int(rows_of(i))}, column {name}: {_show(u)} is not "
                f"an arm label (at most {MAX_LABEL} letters, digits, spaces "
                f"and - _ . : / ( ) + # & ')",
            )
    declared = declared_arms(arms)
    if declared is None:
        names = list(uniq)
        if all(_is_int(u) for u in names):
            names.sort(key=lambda s: int(s))
    else:
        names = list(declared)
        canon = {(str(int(a)) if _is_int(a) else a): a for a in names}
        for u in uniq:
            key = str(int(u)) if _is_int(u) else u
            if key not in canon:
                i = int(np.argmax(col == u))
                known = (
                    f"the integers 0 to {len(names) - 1}"
                    if isinstance(arms, int)
                    else ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
                )
                raise SpecError(
                    name,
                    f"row {int(rows_of(i))}, column {name}: unknown arm "
                    f"{_show(u)}; the arms are {known}",
                )
        uniq = np.array([canon[str(int(u)) if _is_int(u) else u] for u in uniq], dtype=object)
    pos = {a: k for k, a in enumerate(names)}
    codes = np.array([pos[u] for u in uniq], dtype=np.int64)[inverse]
    return codes, tuple(str(a) for a in names)


def declared_arms(arms) -> tuple[str, ...] | None:
    """The arm list a user declared: None, an int N (0..N-1), or a list / comma text."""
    if arms is None or (isinstance(arms, str) and not arms.strip()):
        return None
    if isinstance(arms, bool):
        raise SpecError("arms", "must be a number of arms or a list of labels")
    if isinstance(arms, int) or (isinstance(arms, str) and arms.strip().isdigit()):
        n = int(arms)
        if not 2 <= n <= 100:
            raise SpecError("arms", f"must be between 2 and 100 arms, got {n}")
        return tuple(str(k) for k in range(n))
    items = arms.split(",") if isinstance(arms, str) else list(arms)
    items = [str(a).strip() for a in items if str(a).strip()]
    if len(items) < 2 or len(items) > 100:
        raise SpecError("arms", f"must list 2 to 100 arms, got {len(items)}")
    if len(set(items)) != len(items):
        raise SpecError("arms", "an arm is listed twice")
    return tuple(items)


def _is_int(s) -> bool:
    s = str(s)
    return s.isdigit() and len(s) < 19


def dates_or_numbers(col: np.ndarray, name: str) -> tuple[np.ndarray, str]:
    """A time column: ("number", float array) when the first cell is a number, else
    ("date", datetime64[us] array) from ISO 8601 dates or date-times (2024-03-31,
    2024-03-31 12:00:00, 2024-03-31T12:00:00.5). A cell of the other kind, or a date that
    does not exist (2023-02-30), is a SpecError naming its row."""
    import pandas as pd

    first = col[0]
    try:
        float(first)
        is_number = True
    except ValueError:
        is_number = False
    if is_number:
        if _INT.match(first) and pd.Series(col).str.fullmatch(_INT.pattern).all():
            try:  # exact: nanosecond stamps stay distinct (a float64 would merge them)
                return np.array([int(c) for c in col], dtype=np.int64) if len(
                    col
                ) < 1000 else col.astype(np.int64), "number"
            except (OverflowError, ValueError):
                pass
        return numbers(col, name, what="a number (the column's first cell is one)"), "number"
    iso = (
        np.array([bool(_ISO.match(c)) for c in col])
        if len(col) < 5000
        else pd.Series(col).str.match(_ISO.pattern).to_numpy()
    )
    parsed = pd.to_datetime(pd.Series(np.where(iso, col, "")), format="ISO8601", errors="coerce")
    bad = parsed.isna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise SpecError(
            name,
            f"row {int(rows_of(i))}, column {name}: {_show(col[i])} is not "
            f"a date (ISO 8601, e.g. 2024-03-31 or 2024-03-31 12:00:00; the "
            f"column's first cell is a date, so every cell must be one)",
        )
    return parsed.to_numpy(dtype="datetime64[us]"), "date"


_INT = re.compile(r"^-?\d{1,19}$")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?$")


def first_duplicate(keys: np.ndarray) -> tuple[int, int] | None:
    """(first index, repeating index) of the first repeated key (in file order), or None."""
    order = np.argsort(keys, kind="stable")
    s = keys[order]
    same = np.flatnonzero(s[1:] == s[:-1])
    if not len(same):
        return None
    pairs = [(int(order[j]), int(order[j + 1])) for j in same]
    return min(pairs, key=lambda p: p[1])


__all__ = [
    "read_table",
    "decode",
    "numbers",
    "check_unit",
    "labels",
    "declared_arms",
    "dates_or_numbers",
    "first_duplicate",
    "rows_of",
]
