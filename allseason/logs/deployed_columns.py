"""Many lines of a deployed agent's ``batches.jsonl`` at once, as columns (what
:class:`allseason.logs.deployed.BatchTail` keeps of them): per line the decisions learned, the
length of its ``ids`` and ``weights`` lists, and the lists' items end to end; and the rows of
its ``decisions.csv`` by pyarrow's CSV reader (:func:`arrow_decisions`).

Two readers, tried in turn; each returns None (nothing read) when a line is not as the agent
writes it, and the tail then reads the lines one by one with ``json.loads``, which names the
bad line:

- :func:`arrow_columns`: pyarrow's JSON reader (C++, on threads), when pyarrow is installed
  (Streamlit brings it; the engine does not require it);
- :func:`regex_columns`: regular expressions and numpy, for the agent's own layout.

Both check what :meth:`BatchTail._record` checks: ``ids`` and ``weights`` lists of the same,
non-zero length, ids integers >= -1, weights finite numbers in [0, 1], ``learned`` (and
``version``) integers.
"""

from __future__ import annotations

import re

import numpy as np

Columns = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # learned, lens, ids, weights

_IDS = re.compile(rb'"ids": ?\[([^\]\n]*)\]')
_WEIGHTS = re.compile(rb'"weights": ?\[([^\]\n]*)\]')
_LEARNED = re.compile(rb'"learned": ?(-?\d+)[,}]')
KIND = b'"kind"'


def _list_lengths(joined: bytes) -> np.ndarray:
    """The number of items of each list in ``a,b;c;d,e,f`` (lists joined by ";"): 2, 1, 3."""
    text = np.frombuffer(joined, np.uint8)
    seps = np.flatnonzero(text == ord(";"))
    commas = np.flatnonzero(text == ord(","))
    return np.diff(np.searchsorted(commas, np.r_[-1, seps, len(text)])) + 1


def _checked(learned, lens, ids, w) -> Columns | None:
    if (lens < 1).any() or ids.size != w.size or w.size != lens.sum():
        return None
    if not (np.isfinite(w).all() and (w >= 0).all() and (w <= 1 + 1e-9).all()):
        return None
    if (ids < -1).any():
        return None
    return learned.astype(np.int64), lens.astype(np.int64), ids.astype(np.int64), w


def regex_columns(lines: bytes) -> Columns | None:
    """The columns of ``lines`` (complete lines, each ``{...}``) read with regular
    expressions and numpy; None when a line is not in the agent's own layout."""
    n = lines.count(b"\n")
    found = [r.findall(lines) for r in (_IDS, _WEIGHTS, _LEARNED)]
    shape_ok = lines.startswith(b"{") and lines.count(b"}\n") == n
    if not shape_ok or any(len(f) != n for f in found) or lines.count(b"\n{") != n - 1:
        return None
    ids_txt, w_txt, learned_txt = found
    ids_all, w_all = b";".join(ids_txt), b";".join(w_txt)
    lens = _list_lengths(w_all)
    if any(c in ids_all for c in (b".", b"e", b"E", b"t", b"n", b'"')) or b'"' in w_all:
        return None
    if not np.array_equal(lens, _list_lengths(ids_all)):
        return None
    w = np.fromstring(w_all.replace(b";", b","), sep=",")
    ids = np.fromstring(ids_all.replace(b";", b","), sep=",", dtype=np.int64)
    if w.size != lens.sum() or ids.size != w.size:
        return None  # an empty list, or a value that is not a number
    return _checked(np.array(learned_txt, dtype=np.int64), lens, ids, w)


def arrow_columns(lines: bytes) -> Columns | None:
    """The columns of ``lines`` read by pyarrow's JSON reader; None without pyarrow, or
    when a line is not an object with integer ``learned`` (and ``version``, if any) and
    numeric ``ids`` and ``weights`` lists as the checks above want."""
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.compute as pc  # type: ignore[import-untyped]
        import pyarrow.json as pj  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - Streamlit installs pyarrow
        return None
    import io

    schema = pa.schema(
        [
            ("version", pa.int64()),
            ("learned", pa.int64()),
            ("ids", pa.list_(pa.int64())),
            ("weights", pa.list_(pa.float64())),
        ]
    )
    parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        table = pj.read_json(
            io.BytesIO(lines), read_options=pj.ReadOptions(block_size=1 << 22), parse_options=parse
        )
    except (pa.ArrowException, ValueError, OverflowError):
        return None
    if table.num_rows != lines.count(b"\n"):
        return None  # a blank line, or two objects on one line
    learned = table.column("learned")
    ids = table.column("ids").combine_chunks()
    w = table.column("weights").combine_chunks()
    if learned.null_count or ids.null_count or w.null_count:
        return None  # a line without them (the line-by-line reader knows what to do)
    lens = pc.list_value_length(w).to_numpy(zero_copy_only=False)
    if not np.array_equal(lens, pc.list_value_length(ids).to_numpy(zero_copy_only=False)):
        return None
    ids_flat, w_flat = ids.flatten(), w.flatten()
    if ids_flat.null_count or w_flat.null_count:
        return None
    return _checked(
        learned.to_numpy(),
        lens,
        ids_flat.to_numpy(zero_copy_only=False),
        w_flat.to_numpy(zero_copy_only=False),
    )


def arrow_decisions(lines: bytes, header: list[str], numeric: list[str]):
    """The rows of ``decisions.csv`` in ``lines`` (no header) read by pyarrow's CSV reader:
    (the arm of each row as codes in order of first appearance, those arms' labels, a dict
    of float columns ``numeric``); None without pyarrow or when a row will not read as
    numbers there (a missing or non-finite reward or propensity, a propensity outside
    [0, 1], a row of another length): the pandas reader then says which row and why."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - Streamlit installs pyarrow
        return None
    import io

    if len(set(header)) != len(header):
        return None
    types = {c: pa.float64() for c in numeric} | {"arm": pa.string()}
    try:
        table = pcsv.read_csv(
            io.BytesIO(lines),
            read_options=pcsv.ReadOptions(column_names=header, block_size=1 << 22),
            convert_options=pcsv.ConvertOptions(
                include_columns=["arm", *numeric], column_types=types, strings_can_be_null=False
            ),
        )
    except (pa.ArrowException, ValueError, OverflowError):
        return None
    out = {}
    for c in numeric:
        v = table.column(c).to_numpy()  # a missing value: NaN
        if c in ("reward", "propensity") and not np.isfinite(v).all():
            return None
        out[c] = v
    p = out["propensity"]
    if ((p < 0) | (p > 1)).any():
        return None
    arms = pc.fill_null(table.column("arm").combine_chunks(), "").dictionary_encode()
    return arms.indices.to_numpy(zero_copy_only=False), arms.dictionary.to_pylist(), out


def event_lines(lines: bytes) -> list[tuple[int, bytes]]:
    """(index, text) of the lines of ``lines`` that hold a ``"kind"`` (a spawn or a pruning),
    found with ``bytes.find`` (the few lines read whole with ``json.loads``)."""
    out: list[tuple[int, bytes]] = []
    pos = lines.find(KIND)
    index, counted = 0, 0
    while pos >= 0:
        index += lines.count(b"\n", counted, pos)
        start = lines.rfind(b"\n", 0, pos) + 1
        end = lines.find(b"\n", pos)
        end = len(lines) if end < 0 else end
        out.append((index, lines[start:end]))
        counted = pos = end
        pos = lines.find(KIND, end)
    return out


__all__ = ["arrow_columns", "arrow_decisions", "regex_columns", "event_lines", "Columns"]
