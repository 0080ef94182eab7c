"""A logged-bandit CSV, read as it comes: the fields of an :class:`~.offline.Log`.

:func:`read_log` finds the columns by their usual names (:data:`ALIASES`), reads only those
(:mod:`.reader`), converts each, collects **every** problem of the file and raises them in one
:class:`~allseason.errors.SpecError` (the first 20 lines, then a count), or returns the
fields of the log, sorted by time.

- **Time**: numbers (an event counter; Unix seconds, milliseconds, microseconds or
  nanoseconds since 1970 are recognised by their range and read as UTC dates) or ISO 8601
  dates and date-times, with or without an offset (``+00:00``, ``Z``, ``+09:00``: converted
  to UTC). Events are ordered by a **stable** sort: events at the same time keep their file
  order; they are counted (``ties``) and reported, as is a file that was not in time order.
- **Arms**: labels in natural order (``item_2`` before ``item_10``).
- **Rewards**: finite, at most :data:`MAX_ABS` in magnitude (a larger value is a data error,
  and rescaling ``-1e308 .. 1e308`` would overflow), in [0, 1] unless a scaling is chosen.
- **Propensities**: in [:data:`MIN_PROPENSITY`, 1]. Below the floor one event's weight
  1/p would outweigh a billion others, and from about 1e-154 its square overflows to inf
  (the effective sample size becomes NaN): refused, naming the row.
- **Context**: numeric columns as they are; a column whose first cell is not a number
  (hashed user features, say) is **one-hot** on its most frequent values (at most
  :data:`MAX_LEVELS`, fewer when the arms' dimension d = K x (columns + 1) would pass its
  limit of 500); the other values are all zeros.
- An allseason agent's own columns (:data:`AGENT_COLUMNS`: ``event_id``, ``model_version``,
  ``bandit``) are recognised and named as such; other columns are ignored and named; an
  unnamed column (pandas' index of row numbers) too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import SpecError
from ..limits import MAX_ABS, MAX_LEVELS, MIN_PROPENSITY
from ..specs import LIMITS
from . import cells
from .reader import CsvFile, Problems, open_csv

ALIASES = {
    "timestamp": ("timestamp",),
    "arm": ("arm", "item_id", "item", "action", "action_id"),
    "reward": ("reward", "click", "clicked", "conversion", "label"),
    "propensity": ("propensity", "propensity_score", "pscore", "action_prob"),
}
#: an allseason agent's own columns (allseason/agent/decision_log.py): recognised, not read,
#: never listed as ignored
AGENT_COLUMNS = ("event_id", "model_version", "bandit")
#: Unix time units recognised by range (numbers in [lo, hi) x unit), as datetime64 units
EPOCH_UNITS = (("s", "seconds"), ("ms", "milliseconds"), ("us", "microseconds"))
_EPOCH_LO, _EPOCH_HI = 946_684_800, 4_102_444_800  # 2000-01-01 .. 2100-01-01 in seconds


def _role(f: CsvFile, role: str, required: bool) -> str | None:
    found = [c for c in ALIASES[role] if c in f.names]
    if found[:1] == [ALIASES[role][0]]:  # the plain name wins; another is just ignored
        return found[0]
    if len(found) > 1:
        f.problems.add(f"the columns {found[0]} and {found[1]} both give the {role}; keep one")
    if not found and required:
        f.problems.add(
            f"missing column {role!r} (also read from "
            f"{', '.join(ALIASES[role][1:]) or 'no other name'}); the header has "
            f"{', '.join(f.names[:12])}{' ...' if len(f.names) > 12 else ''}",
            field=role,
        )
    return found[0] if found else None


def _context_names(f: CsvFile, context, used: set) -> list[str]:
    if context is None or (isinstance(context, str) and not context.strip()):
        xs = [c for c in f.names if len(c) > 1 and c[0] == "x" and c[1:].isdigit()]
        return sorted(dict.fromkeys(xs), key=lambda c: int(c[1:]))
    items = context.split(",") if isinstance(context, str) else list(context)
    names = [str(c).strip().lower() for c in items if str(c).strip()]
    if len(set(names)) != len(names):
        raise SpecError("context", "a column is named twice")
    for c in names:
        if c not in f.names:
            raise SpecError(
                "context",
                f"no column {cells._show(c)} in the file; the header has {', '.join(f.names[:12])}",
            )
        if c in used:
            raise SpecError(
                "context",
                f"{cells._show(c)} is the time, arm, reward or propensity; it cannot also be "
                f"context",
            )
    return names


def read_log(
    source: bytes | str, *, context=None, arms=None, scale: str | None = None, limits: dict
) -> dict:
    """The fields of a :class:`~.offline.Log` (see the module docstring), or one SpecError
    listing every problem. ``limits``: rows, bytes, context (columns of context)."""
    f = open_csv(source, max_bytes=limits["bytes"], max_rows=limits["rows"])
    if "timestamp" not in f.names:
        if "time" in f.names:
            raise SpecError(
                "timestamp",
                "missing column 'timestamp'; a 'time' column makes this a per-arm reward "
                "table, not a log",
            )
        f.problems.add(
            "missing column 'timestamp' (a logged-bandit CSV: timestamp, arm, reward) or "
            "'time' (a per-arm reward table: time, arm, reward); the header has "
            f"{', '.join(f.names[:12])}{' ...' if len(f.names) > 12 else ''}",
            field="timestamp",
        )
    roles = {r: _role(f, r, r in ("arm", "reward")) for r in ALIASES}
    used = {c for c in roles.values() if c}
    names = _context_names(f, context, used)
    if len(names) > limits["context"]:
        raise SpecError(
            "context",
            f"{len(names)} context columns; at most {limits['context']}",
            bounds=(0, limits["context"]),
            got=len(names),
        )
    wanted = [c for c in roles.values() if c] + names
    for name in wanted:
        if f.names.count(name) > 1:
            f.problems.add(
                f"the column {cells._show(name)} appears twice in the header", column=name
            )
    first = dict(zip(f.names, f.first_row()))
    floats = [roles["reward"], roles["propensity"]] + [c for c in names if _number(first.get(c))]
    cols, rows = f.read(wanted, floats=[c for c in floats if c])
    if not len(rows):  # nothing to convert: the header's problems, and this one
        f.problems.add("no rows under the header", field="rows")
        f.problems.raise_if_any()
    out = _convert(f, cols, rows, roles, names, arms=arms, scale=scale)
    f.problems.raise_if_any()
    return out


def _number(cell: str | None) -> bool:
    if cell is None:
        return False
    try:
        float(cell)
        return True
    except (TypeError, ValueError):
        return False


def _convert(f: CsvFile, cols, rows, roles, names, *, arms, scale) -> dict:
    p = f.problems
    notes: list[str] = []
    ts = kind = code = arm_names = reward = prop = None
    if roles["timestamp"]:
        ts, kind, note = times(cols[roles["timestamp"]], rows, roles["timestamp"], p)
        notes += [note] if note else []
    if roles["arm"]:
        code, arm_names = arm_codes(cols[roles["arm"]], rows, roles["arm"], p, arms)
    if roles["reward"]:
        reward = finite(cols[roles["reward"]], rows, roles["reward"], p, "a reward")
        reward, note = unit(reward, rows, roles["reward"], p, scale)
        notes += [note] if note else []
    if roles["propensity"]:
        prop = propensities(cols[roles["propensity"]], rows, roles["propensity"], p)
    K = len(arm_names) if arm_names else 0
    ctx, ctx_names, ctx_notes = context(cols, rows, names, p, K)
    if p:
        return {}
    # the required columns were found (a missing one is a problem, reported above)
    assert ts is not None and code is not None and reward is not None
    order = np.argsort(ts, kind="stable")
    s = ts[order]
    ties = int(np.count_nonzero(s[1:] == s[:-1]))
    moved = int(np.count_nonzero(order != np.arange(len(order))))
    if moved:
        notes.append(
            f"the file was not in time order: events sorted by timestamp ({moved:,} moved)"
        )
    if ties:
        notes.append(
            f"{ties:,} event{'s share their' if ties > 1 else ' shares its'} time with the "
            f"one before: kept in file order"
        )
    if f.blank_rows:
        notes.append(f"{f.blank_rows:,} blank rows skipped")
    unnamed = [i + 1 for i, c in enumerate(f.names) if not c]
    if unnamed[:1] == [1]:
        notes.append("column 1 has no name (an index of row numbers): ignored")
    if unnamed[1:] or unnamed[:1] not in ([], [1]):
        rest = [str(i) for i in unnamed if i != 1]
        notes.append(
            f"column{'s' if len(rest) > 1 else ''} {', '.join(rest)} without a name: ignored"
        )
    used = {c for c in roles.values() if c} | set(names)
    agent = tuple(c for c in AGENT_COLUMNS if c in f.names and c not in used)
    ignored = [c for c in dict.fromkeys(f.names) if c and c not in used and c not in agent]
    contexts = np.column_stack([*ctx, np.ones(len(code))])[order]
    return dict(
        timestamp=s,
        arm=code[order],
        reward=reward[order],
        contexts=np.ascontiguousarray(contexts),
        propensity=None if prop is None else prop[order],
        row=rows[order],
        arm_names=arm_names,
        context_names=tuple(ctx_names),
        ignored=tuple(ignored),
        agent_columns=agent,
        notes=tuple(notes + ctx_notes),
        time_kind=kind,
        ties=ties,
        out_of_order=moved,
    )


def finite(col, rows, name: str, p: Problems, what: str) -> np.ndarray:
    """A column as floats; an empty cell, NaN, inf, text or a magnitude over :data:`MAX_ABS`
    is a problem on its row, and NaN in the result."""
    import pandas as pd

    values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan, copy=True)
    bad = ~np.isfinite(values)
    p.add_rows(bad, rows, name, lambda i: cells.why_not_number(col.iloc[i], what))
    huge = np.abs(np.where(bad, 0, values)) > MAX_ABS
    p.add_rows(
        huge,
        rows,
        name,
        lambda i: (
            f"{values[i]:g} is larger than {MAX_ABS:g} in magnitude (the largest "
            f"value read; rescaling larger ones loses every digit or overflows)"
        ),
    )
    values[huge | bad] = np.nan
    return values


def unit(values, rows, name, p: Problems, scale) -> tuple[np.ndarray | None, str]:
    """Rewards in [0, 1], as they are or rescaled (:func:`.cells.check_unit`); every value
    outside [0, 1] without a scaling is a problem on its row. None when any is NaN."""
    if scale in (None, "", "none"):
        out = (values < 0) | (values > 1)
        p.add_rows(
            out,
            rows,
            name,
            lambda i: (
                f"{values[i]:g} is outside [0, 1]; rescale the column, or choose a "
                f"scaling (scale = max: divide by the largest value; minmax: (value - min) / "
                f"(max - min))"
            ),
        )
        return (None, "") if out.any() or np.isnan(values).any() else (values, "")
    if scale == "max" and np.nanmin(values, initial=0) < 0:
        p.add_rows(
            values < 0,
            rows,
            name,
            lambda i: (
                f"{values[i]:g} is negative, so dividing by the largest value cannot "
                f"bring it into [0, 1]; choose scale = minmax"
            ),
        )
        return None, ""
    if np.isnan(values).any():
        return None, ""
    return cells.check_unit(values, name, scale)


def propensities(col, rows, name: str, p: Problems) -> np.ndarray | None:
    values = finite(col, rows, name, p, "a probability")
    bad = (values < MIN_PROPENSITY) | (values > 1)
    p.add_rows(
        bad,
        rows,
        name,
        lambda i: (
            f"{values[i]:g} is not a probability in [{MIN_PROPENSITY:g}, 1] (the "
            f"chance the logger showed that arm; below {MIN_PROPENSITY:g} one event would "
            f"outweigh a billion others)"
        ),
    )
    return None if bad.any() or np.isnan(values).any() else values


def times(col, rows, name: str, p: Problems) -> tuple[np.ndarray | None, str, str]:
    """(values, kind, note): int64 or float numbers ("number"), or datetime64[us] in UTC
    ("date": ISO 8601 cells, or Unix time recognised by its range)."""
    first = col.iloc[0] if len(col) else ""
    try:
        float(first)
    except ValueError:
        values, bad, offset = cells.parse_dates(col)
        p.add_rows(bad, rows, name, lambda i: cells.not_a_date(col.iloc[i]))
        note = "timestamps with a UTC offset converted to UTC" if offset else ""
        return (None if bad.any() else values), "date", note
    exact = cells.integers(col)
    if exact is not None:
        return _epoch(exact)
    values = finite(col, rows, name, p, "a number (the column's first cell is one)")
    if np.isnan(values).any():
        return None, "number", ""
    return _epoch(values)


def _epoch(values: np.ndarray) -> tuple[np.ndarray, str, str]:
    """Numbers as Unix time when all of them fall in 2000..2100 in one unit (seconds, ms,
    us; integers of 19 digits: ns), else as they are."""
    lo, hi = values.min(), values.max()
    for k, (unit_, word) in enumerate(EPOCH_UNITS + (("ns", "nanoseconds"),)):
        scale = 1000**k
        if _EPOCH_LO * scale <= lo and hi < _EPOCH_HI * scale:
            if values.dtype.kind == "f":
                us = np.round(values * (1e6 / scale)).astype(np.int64)
                stamps = us.astype("datetime64[us]")
            else:
                stamps = values.astype(f"datetime64[{unit_}]").astype("datetime64[us]")
            if unit_ == "ns" and np.any(stamps[1:] == stamps[:-1]):
                return values, "number", ""  # nanoseconds kept exact: order by them
            return stamps, "date", f"timestamps read as Unix {word} (UTC)"
    return values, "number", ""


def arm_codes(col, rows, name: str, p: Problems, arms) -> tuple[np.ndarray | None, tuple]:
    """(codes 0..K-1, labels in natural order); empty, malformed and unknown labels, and
    more than the limit of arms, are problems."""
    import pandas as pd

    codes, found = pd.factorize(col)
    empty = np.flatnonzero(np.asarray(found == ""))
    p.add_rows(np.isin(codes, empty), rows, name, lambda i: "is empty; every row needs an arm")
    n_labels = len(found) - len(empty)
    if cells.declared_arms(arms) is None and n_labels > LIMITS["n_arms"]:
        p.add(f"{n_labels:,} distinct arms; at most {LIMITS['n_arms']}", column=name)
        return None, ()  # before a Python string is made of each label
    uniq = [str(u) for u in found]
    labels = [u for u in uniq if u]
    why = [cells.bad_label(u) if u else None for u in uniq]
    names, canon = cells.arm_order([u for u, w in zip(uniq, why) if u and not w], arms)
    bad_code = np.array(
        [bool(u) and (w is not None or canon(u) is None) for u, w in zip(uniq, why)]
    )
    bad = bad_code[codes] if len(uniq) else np.zeros(len(codes), bool)
    p.add_rows(
        bad, rows, name, lambda i: why[codes[i]] or cells.unknown(uniq[codes[i]], names, arms)
    )
    if bad.any() or len(labels) < len(uniq):
        return None, ()
    if len(names) == 1:
        p.add(
            f"only one arm ({cells._show(names[0])}) in the log; a bandit needs at least 2",
            column=name,
        )
    pos = {a: k for k, a in enumerate(names)}
    to_code = np.array([pos[canon(u)] for u in uniq], dtype=np.int64)
    return to_code[codes], tuple(str(a) for a in names)


def context(cols, rows, names: Sequence[str], p: Problems, n_arms: int):
    """(columns of floats, their names, notes): numeric columns as they are, text columns
    one-hot on their most frequent values within the limit on d."""
    numeric, text = [], []
    for c in names:
        s = cols[c]
        try:
            float(s.iloc[0] if len(s) else "0")
            numeric.append(c)
        except ValueError:
            text.append(c)
    per_arm = LIMITS["d"] // max(n_arms, 1) - 1 - len(numeric)  # columns left per arm
    levels = min(MAX_LEVELS, per_arm // len(text)) if text else 0
    if n_arms and (per_arm < 0 or (text and levels < 1)):
        least = len(numeric) + len(text) + 1
        p.add(
            f"{n_arms} arms x ({len(numeric)} numeric context columns"
            + (f" + {len(text)} text columns, one value each at least" if text else "")
            + f" + 1) = {n_arms * least} dimensions; at most d = {LIMITS['d']}: use fewer "
            f"context columns",
            field="context",
        )
        return [], [], []
    out, out_names, notes = [], [], []
    for c in names:
        if c in numeric:
            v = finite(cols[c], rows, c, p, "a number (the column's first cell is one)")
            out.append(v)
            out_names.append(c)
            continue
        codes, uniq = _one_hot_levels(cols[c], levels)
        for k, u in enumerate(uniq):
            out.append((codes == k).astype(float))
            out_names.append(f"{c}={u[:12]}")
        share = float(np.mean(codes >= 0)) if len(codes) else 0.0
        notes.append(
            f"context {c}: text, one-hot on its {len(uniq)} most frequent values of "
            f"{int(cols[c].nunique()):,} ({share:.0%} of events; the others all 0)"
        )
    if any(np.isnan(v).any() for v in out):
        return [], [], []
    return out, out_names, notes


def _one_hot_levels(s, m: int) -> tuple[np.ndarray, list[str]]:
    """(code of each cell's value among the m most frequent, -1 for the others; those
    values). Frequency ties are broken by first appearance in the file."""
    import pandas as pd

    codes, found = pd.factorize(s)
    counts = np.bincount(codes[codes >= 0], minlength=len(found))
    top = np.argsort(-counts, kind="stable")[:m]  # factorize's order: first appearance
    level = np.full(len(found), -1, dtype=np.int64)
    level[top] = np.arange(len(top))
    return level[codes], [str(found[k]) for k in top]


__all__ = ["read_log", "ALIASES", "AGENT_COLUMNS", "MIN_PROPENSITY", "MAX_ABS", "MAX_LEVELS"]
