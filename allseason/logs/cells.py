"""Columns of text to numbers, dates and arm labels, each problem naming its row and column.

These raise at the first problem (the reward table's reader uses them so); the log's reader
(:mod:`.logfile`) collects every problem of a file instead. Shared rules:

- arm labels are ordered **naturally**: runs of digits compare as numbers, so ``item_2``
  comes before ``item_10``, and labels that are all integers sort as numbers (``-1, 0, 2,
  10``). Giving every label the same prefix keeps the order, hence the arm codes and every
  result, bit for bit;
- a date is ISO 8601, with or without a time of day and a UTC offset (``+09:00``, ``Z``);
  offsets are converted to UTC and dropped.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import SpecError
from ..errors import show as _show_value
from ..limits import MAX_DECLARED_ARMS, MAX_LABEL

_LABEL_OK = re.compile(r"^[\w .:/()+#&'-]+$")
_DIGITS = re.compile(r"(\d+)")
_INT = re.compile(r"^-?\d{1,19}$")
_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$"
)
_OFFSET = r"[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}(?::?\d{2})?)$"


def _show(value) -> str:
    """A short repr of a user's cell for a message (numpy scalars as plain Python values)."""
    return _show_value(value.item() if isinstance(value, np.generic) else value)


def rows_of(index, rows: np.ndarray | None = None) -> np.ndarray:
    """Spreadsheet rows of 0-based record indices: ``rows[index]`` (the rows
    :func:`.reader.read_table` gives), or with no ``rows`` index + 2 (the header is row 1
    and no line is blank)."""
    if rows is not None:
        return np.asarray(rows, dtype=np.int64)[index]
    return np.asarray(index, dtype=np.int64) + 2


def _is_int(s) -> bool:
    s = str(s)
    return s.isdigit() and len(s) < 19


def natural_key(label: str) -> tuple:
    """The sort key of an arm label: digit runs as numbers (``item_2`` < ``item_10``), the
    label itself last, so the order is total. An integer label (``-3``) is its value.

    >>> sorted(["item_10", "item_2", "item_1"], key=natural_key)
    ['item_1', 'item_2', 'item_10']
    """
    s = str(label)
    if _INT.match(s):
        return (0, int(s), (), s)
    parts = _DIGITS.split(s)
    return (1, 0, tuple((int(p), "") if k % 2 else (-1, p) for k, p in enumerate(parts)), s)


def numbers(col, name: str, *, what: str = "a number", rows=None) -> np.ndarray:
    """A column as floats: an empty cell, NaN, inf or text is a SpecError naming the first
    bad row and the column."""
    import pandas as pd

    col = np.asarray(col, dtype=object)
    values = pd.to_numeric(pd.Series(col), errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i = int(np.argmax(bad))
        raise SpecError(
            name, f"row {int(rows_of(i, rows))}, column {name}: {why_not_number(col[i], what)}"
        )
    return values


def why_not_number(cell: str, what: str) -> str:
    """Why a cell is not a finite number, as the end of a problem's line."""
    if not isinstance(cell, str):  # a float column: NaN or inf
        cell = "nan" if cell != cell else str(cell)
    if cell == "":
        return f"is empty; every row needs {what}"
    if cell.lower() in ("nan", "na", "n/a", "null", "none"):
        return f"is NaN; every row needs {what}"
    return f"{_show(cell)} is not {what}"


def check_unit(
    values: np.ndarray, name: str, scale: str | None, rows=None
) -> tuple[np.ndarray, str]:
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
                f"row {int(rows_of(i, rows))}, column {name}: {values[i]:g} is "
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
                f"row {int(rows_of(i, rows))}, column {name}: {values[i]:g} is "
                f"negative, so dividing by the largest value cannot bring "
                f"it into [0, 1]; choose scale = minmax",
            )
        return (values / hi if hi > 0 else values), f"{name} divided by its largest value {hi:g}"
    if scale == "minmax":
        if hi == lo:
            return np.zeros_like(values), f"{name} is constant ({lo:g}): every value set to 0"
        return (values - lo) / (hi - lo), f"{name} rescaled from [{lo:g}, {hi:g}] to [0, 1]"
    raise SpecError("scale", f"must be none, max or minmax, got {_show(scale)}")


def bad_label(label: str) -> str | None:
    """Why a text is not an arm label, or None."""
    if len(label) > MAX_LABEL or not _LABEL_OK.match(label):
        return (
            f"{_show(label)} is not an arm label (at most {MAX_LABEL} letters, digits, "
            f"spaces and - _ . : / ( ) + # & ')"
        )
    return None


def labels(col, name: str, arms=None, rows=None) -> tuple[np.ndarray, tuple[str, ...]]:
    """Arm labels as integer codes 0..K-1 and the labels in natural order
    (:func:`natural_key`). ``arms``: None (every label seen is an arm), an int N (the arms
    are the integers 0..N-1), or a list of labels; a label outside the declared arms is an
    "unknown arm", a SpecError naming its row."""
    col = np.asarray(col, dtype=object)
    empty = col == ""
    if empty.any():
        i = int(np.argmax(empty))
        raise SpecError(
            name, f"row {int(rows_of(i, rows))}, column {name}: is empty; every row needs an arm"
        )
    uniq, inverse = np.unique(col, return_inverse=True)
    for u in uniq:
        why = bad_label(u)
        if why:
            i = int(np.argmax(col == u))
            raise SpecError(name, f"row {int(rows_of(i, rows))}, column {name}: {why}")
    names, canon = arm_order(list(uniq), arms)
    for u in uniq:
        if canon(u) is None:
            i = int(np.argmax(col == u))
            raise SpecError(
                name, f"row {int(rows_of(i, rows))}, column {name}: {unknown(u, names, arms)}"
            )
    pos = {a: k for k, a in enumerate(names)}
    codes = np.array([pos[canon(u)] for u in uniq], dtype=np.int64)[inverse]
    return codes, tuple(str(a) for a in names)


def arm_order(seen: list[str], arms=None):
    """(the arms in order, canon): with no declared ``arms``, the labels seen in natural
    order; else the declared arms, and ``canon(label)`` maps a label to its declared arm
    (``"07"`` is arm ``7`` of ``arms=10``), or None for an unknown arm."""
    declared = declared_arms(arms)
    if declared is None:
        names = sorted(seen, key=natural_key)
        return names, lambda u: u
    names = list(declared)
    table = {(str(int(a)) if _is_int(a) else a): a for a in names}
    return names, lambda u: table.get(str(int(u)) if _is_int(u) else u)


def unknown(label: str, names, arms) -> str:
    """The message for an arm ``label`` not among ``names``."""
    known = (
        f"the integers 0 to {len(names) - 1}"
        if isinstance(arms, int) or (isinstance(arms, str) and arms.strip().isdigit())
        else ", ".join(names[:8]) + (" ..." if len(names) > 8 else "")
    )
    return f"unknown arm {_show(label)}; the arms are {known}"


def declared_arms(arms) -> tuple[str, ...] | None:
    """The arm list a user declared: None, an int N (0..N-1), or a list / comma text."""
    if arms is None or (isinstance(arms, str) and not arms.strip()):
        return None
    if isinstance(arms, bool):
        raise SpecError("arms", "must be a number of arms or a list of labels")
    if isinstance(arms, int) or (isinstance(arms, str) and arms.strip().isdigit()):
        n = int(arms)
        if not 2 <= n <= MAX_DECLARED_ARMS:
            raise SpecError("arms", f"must be between 2 and {MAX_DECLARED_ARMS} arms, got {n}")
        return tuple(str(k) for k in range(n))
    items = arms.split(",") if isinstance(arms, str) else list(arms)
    items = [str(a).strip() for a in items if str(a).strip()]
    if len(items) < 2 or len(items) > MAX_DECLARED_ARMS:
        raise SpecError("arms", f"must list 2 to {MAX_DECLARED_ARMS} arms, got {len(items)}")
    if len(set(items)) != len(items):
        raise SpecError("arms", "an arm is listed twice")
    return tuple(items)


def parse_dates(col):
    """(datetime64[us] array in UTC, bad mask, had an offset) of ISO 8601 cells; a cell that
    is not one, or a date that does not exist (2023-02-30), is bad."""
    import pandas as pd

    s = col if isinstance(col, pd.Series) else pd.Series(np.asarray(col, dtype=object), dtype=str)
    iso = s.str.fullmatch(_ISO.pattern).to_numpy(dtype=bool, na_value=False)
    parsed = pd.to_datetime(s.where(iso, ""), format="ISO8601", errors="coerce", utc=True)
    bad = parsed.isna().to_numpy()
    offset = bool(s.str.contains(_OFFSET, regex=True).any())
    values = parsed.dt.tz_localize(None).to_numpy(dtype="datetime64[us]")
    return values, bad, offset


def dates_or_numbers(col, name: str, rows=None) -> tuple[np.ndarray, str]:
    """A time column: ("number", array) when the first cell is a number (int64 when every
    cell is an integer: nanosecond stamps stay distinct), else ("date", datetime64[us] in
    UTC) from ISO 8601 dates or date-times, with or without an offset. A cell of the other
    kind, or a date that does not exist (2023-02-30), is a SpecError naming its row."""
    col = np.asarray(col, dtype=object)
    first = col[0]
    try:
        float(first)
        is_number = True
    except ValueError:
        is_number = False
    if is_number:
        exact = integers(col)
        if exact is not None:
            return exact, "number"
        return numbers(col, name, what="a number (the column's first cell is one)", rows=rows), (
            "number"
        )
    values, bad, _ = parse_dates(col)
    if bad.any():
        i = int(np.argmax(bad))
        raise SpecError(name, f"row {int(rows_of(i, rows))}, column {name}: {not_a_date(col[i])}")
    return values, "date"


def not_a_date(cell: str) -> str:
    """The message for a ``cell`` that is not a date."""
    return (
        f"{_show(cell)} is not a date (ISO 8601, e.g. 2024-03-31, 2024-03-31 12:00:00 or "
        f"2024-03-31T12:00:00+09:00; the column's first cell is a date, so every cell "
        f"must be one)"
    )


def integers(col) -> np.ndarray | None:
    """The column as exact int64 when every cell is an integer of at most 19 digits that
    fits, else None."""
    import pandas as pd

    s = col if isinstance(col, pd.Series) else pd.Series(np.asarray(col, dtype=object), dtype=str)
    if not s.str.fullmatch(_INT.pattern).all():
        return None
    try:
        return s.astype(np.int64).to_numpy()
    except (OverflowError, ValueError, TypeError):
        return None


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
    "numbers",
    "check_unit",
    "labels",
    "arm_order",
    "natural_key",
    "declared_arms",
    "dates_or_numbers",
    "parse_dates",
    "integers",
    "first_duplicate",
    "rows_of",
    "bad_label",
    "why_not_number",
    "not_a_date",
    "unknown",
    "MAX_LABEL",
]
