"""Text from outside, read safely for :func:`~allseason.specs.parse_scenario`: size checked
before it is read, JSON and CSV parsed by the standard library only, never evaluated."""

from __future__ import annotations

import csv
import io
import json

from ..errors import SpecError
from ..errors import show as _show
from ..files import check_text_bytes, decode_text
from ..limits import LIMITS

CSV_COLUMNS = ("state", "length")  # the columns of a segment table


def _size_check(source, max_bytes: int, name: str = "file"):
    if isinstance(source, (bytearray, memoryview)):
        source = bytes(source)
    if isinstance(source, bytes):
        n = len(source)
    elif isinstance(source, str):
        n = len(source) if len(source) > max_bytes else len(source.encode("utf-8", "surrogatepass"))
    else:
        raise SpecError(name, f"must be text, got {type(source).__name__}")
    if n > max_bytes:
        raise SpecError(
            name,
            f"is too large ({'at least ' if isinstance(source, str) else ''}"
            f"{n:,} bytes); at most {max_bytes:,} bytes",
        )
    return source


def _load_json(source, max_bytes):
    source = _size_check(source, max_bytes)
    try:
        return json.loads(source)
    except RecursionError:
        raise SpecError("file", "not valid JSON here (nested too deeply)") from None
    except UnicodeDecodeError as e:  # the words of every file a user brings
        if isinstance(source, bytes):
            check_text_bytes(source, "JSON")
        raise SpecError("file", f"not valid JSON ({str(e)[:200]})") from None
    except (ValueError, TypeError) as e:  # incl. UnicodeDecodeError, ints of > 4300 digits
        why = "a number with thousands of digits" if "Exceeds the limit" in str(e) else str(e)[:200]
        raise SpecError("file", f"not valid JSON ({why})") from None


def _read_csv(source, max_bytes) -> tuple[list[list[str]], list[int]]:
    """The segment table's cells (text, validated by Scenario) and each row's line number."""
    source = _size_check(source, max_bytes)
    if isinstance(source, bytes):  # UTF-8 (a BOM is fine), or UTF-16 with its BOM
        text = decode_text(source, "CSV", utf16=True)
    else:
        text = source.removeprefix("\ufeff")
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    delimiter = "," if "," in first else ";" if ";" in first else "\t" if "\t" in first else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    columns: dict[str, int] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    try:
        for cells in reader:
            cells = [c.strip() for c in cells]
            while cells and not cells[-1]:
                cells.pop()
            if not cells:
                continue  # a blank line
            if columns is None:
                columns = _csv_header(cells)
                continue
            i = len(rows) + 1
            if i > LIMITS["n_segments"]:
                raise SpecError("segments", f"at most {LIMITS['n_segments']} segments (rows)")
            if len(cells) > len(columns):
                raise SpecError(
                    f"segments[{i}]",
                    f"row {i} (line {reader.line_num}) has "
                    f"{len(cells)} cells; the header has "
                    f"{len(columns)} (state, length)",
                )
            row = []
            for name in CSV_COLUMNS:
                j = columns[name]
                if j >= len(cells) or not cells[j]:
                    raise SpecError(
                        f"segments[{i}].{name}", f"is empty (line {reader.line_num} of the file)"
                    )
                row.append(cells[j])
            rows.append(row)
            lines.append(reader.line_num)
    except csv.Error as e:
        raise SpecError(
            "file", f"not a readable CSV table (line {reader.line_num}: {str(e)[:100]})"
        ) from None
    if columns is None:
        raise SpecError(
            "file", "is empty; expected the header state,length and one row per segment"
        )
    if not rows:
        raise SpecError("segments", "the table has a header but no rows")
    return rows, lines


def _csv_header(cells: list[str]) -> dict[str, int]:
    names = [c.lower() for c in cells]
    if all(_looks_numeric(c) for c in names):
        raise SpecError(
            "file", f"the first line must be the header state,length; got {_show(','.join(cells))}"
        )
    for j, name in enumerate(names):
        if name not in CSV_COLUMNS:
            raise SpecError(
                "file",
                f"unknown column {_show(cells[j])} in the header; the columns are state,length",
            )
        if names.index(name) != j:
            raise SpecError("file", f"the column {name!r} appears twice in the header")
    missing = [c for c in CSV_COLUMNS if c not in names]
    if missing:
        raise SpecError(
            "file",
            f"the header must name the columns state and length (missing: {', '.join(missing)})",
        )
    return {name: names.index(name) for name in CSV_COLUMNS}


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except (ValueError, OverflowError):
        return False
    return True
