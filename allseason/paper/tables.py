r"""The paper's four real-data tables (section 6), as data, and a cell-by-cell comparison.

The rows below are the LaTeX table bodies copied verbatim from the paper (tables
``table:mnist2``, ``table:fmnist2``, ``table:mnist10``, ``table:fmnist10``: average reward
+- standard deviation over seeds, 30,000 steps) and parsed at import, so any copy can be
checked against the source by eye or by diff. ``\algo`` is the paper's macro for
All-Season.

    >>> paper_cell("mnist-2arm", "allseason-sw", "realistic")
    (0.78, 0.01)
    >>> paper_frame("fmnist-10arm").shape
    (24, 4)
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

__all__ = [
    "TABLES",
    "PATTERNS",
    "ALGORITHMS",
    "LABELS",
    "CAPTIONS",
    "PAPER",
    "LATEX_ROWS",
    "paper_cell",
    "paper_frame",
    "compare",
    "wide",
    "DIFF_THRESHOLD",
    "ROWS",
    "ROW_LABELS",
    "PRINTED_ROWS",
    "paper_row",
]

TABLES = ("mnist-2arm", "fmnist-2arm", "mnist-10arm", "fmnist-10arm")
PATTERNS = ("regular", "realistic", "extreme")
# registry name -> the paper's row label
LABELS = {
    "allseason-disc": "All-Season(Disc)",
    "allseason-sw": "All-Season(SW)",
    "sw-lints": "SW-LinTS",
    "d-lints": "D-LinTS",
    "denband": "DenBand",
    "bob": "BoB",
    "lints": "LinTS",
    "random": "random",
}
ALGORITHMS = tuple(LABELS)
# Our tables have two more rows: All-Season with the paper's printed rule (weighting "batch"),
# compared with the same paper numbers as the row with carried weights (the default).
PRINTED_ROWS = {"allseason-disc-printed": "allseason-disc", "allseason-sw-printed": "allseason-sw"}
ROWS = (
    "allseason-disc",
    "allseason-disc-printed",
    "allseason-sw",
    "allseason-sw-printed",
    *ALGORITHMS[2:],
)
ROW_LABELS = {
    **LABELS,
    "allseason-disc-printed": "All-Season(Disc), printed rule",
    "allseason-sw-printed": "All-Season(SW), printed rule",
}
ROW_LABELS = {r: ROW_LABELS[r] for r in ROWS}


def paper_row(row: str) -> str:
    """The paper's row a row of ours is compared with (a printed-rule row: its
    carried-weights counterpart's)."""
    return PRINTED_ROWS.get(row, row)


CAPTIONS = {
    "mnist-2arm": "Mnist two-arm",
    "fmnist-2arm": "Fashion-Mnist two-arm",
    "mnist-10arm": "Mnist digit-recognition",
    "fmnist-10arm": "Fashion-Mnist item-recognition",
}
DIFF_THRESHOLD = 0.03  # the "differs from the paper" threshold

LATEX_ROWS = {
    "mnist-2arm": r"""
    \algo(Disc)  & 0.77 $\pm$ 0.01 & 0.74 $\pm$ 0.02 & 0.77 $\pm$ 0.01  \\
    \algo(SW)  & 0.77 $\pm$ 0.01 & 0.78 $\pm$ 0.01 & 0.74 $\pm$ 0.01  \\
    SW-LinTS  & 0.76 $\pm$ 0.00 & 0.76 $\pm$ 0.00 & 0.71 $\pm$ 0.00 \\
    D-LinTS   & 0.74 $\pm$ 0.00 & 0.73 $\pm$ 0.00 & 0.71 $\pm$ 0.00 \\
    DenBand   & 0.71 $\pm$ 0.00 & 0.71 $\pm$ 0.00 & 0.69 $\pm$ 0.00 \\
    BoB       & 0.65 $\pm$ 0.07 & 0.56 $\pm$ 0.08 & 0.69 $\pm$ 0.06 \\
    LinTS     & 0.72 $\pm$ 0.00 & 0.71 $\pm$ 0.00 & 0.70 $\pm$ 0.00 \\
    random    & 0.50 $\pm$ 0.00 & 0.50 $\pm$ 0.00 & 0.50 $\pm$ 0.00 \\
""",
    "fmnist-2arm": r"""
    \algo(Disc)  & 0.81 $\pm$ 0.02 & 0.81 $\pm$ 0.01 & 0.81 $\pm$ 0.00  \\
    \algo(SW)  & 0.80 $\pm$ 0.02  & 0.79 $\pm$ 0.01  & 0.81 $\pm$ 0.02   \\
    SW-LinTS   & 0.77 $\pm$ 0.00  & 0.77 $\pm$ 0.00 & 0.76 $\pm$ 0.00   \\
    D-LinTS    & 0.75 $\pm$  0.00 & 0.68 $\pm$ 0.00 & 0.72 $\pm$ 0.00   \\
    DenBand    & 0.65 $\pm$ 0.01 & 0.64 $\pm$ 0.01 & 0.64 $\pm$ 0.01  \\
    BoB        & 0.68 $\pm$ 0.00 & 0.68 $\pm$ 0.00  & 0.70  $\pm$  0.00 \\
    LinTS      & 0.67 $\pm$ 0.01 & 0.68 $\pm$  0.00 & 0.69 $\pm$  0.00  \\
    random     & 0.50 $\pm$ 0.01 & 0.50 $\pm$ 0.01 & 0.50 $\pm$  0.01 \\
""",
    "mnist-10arm": r"""
    \algo(Disc)    & 0.74 $\pm$ 0.01 & 0.74 $\pm$ 0.01 & 0.73 $\pm$ 0.02 \\
    \algo(SW)    & 0.54 $\pm$ 0.10 & 0.58 $\pm$ 0.02 & 0.50 $\pm$ 0.01  \\
    SW-LinTS   & 0.36 $\pm$ 0.00 & 0.56 $\pm$ 0.01 & 0.42 $\pm$ 0.00 \\
    D-LinTS    & 0.37 $\pm$ 0.00 & 0.50 $\pm$ 0.01 & 0.36  $\pm$ 0.00  \\
    DenBand    & 0.33 $\pm$ 0.00 & 0.22 $\pm$ 0.00 & 0.21 $\pm$ 0.01 \\
    BoB        & 0.32 $\pm$ 0.00 & 0.33 $\pm$ 0.00 & 0.26 $\pm$ 0.00  \\
    LinTS      & 0.38 $\pm$ 0.00 & 0.37 $\pm$ 0.01 & 0.29  $\pm$ 0.01 \\
    random     & 0.10 $\pm$ 0.00 & 0.10 $\pm$ 0.00 & 0.10 $\pm$ 0.00 \\
""",
    "fmnist-10arm": r"""
    \algo(Disc)    & 0.49 $\pm$ 0.02 & 0.52 $\pm$ 0.01 &  0.45 $\pm$ 0.03 \\
    \algo(SW)   & 0.43 $\pm$ 0.00 & 0.56 $\pm$ 0.00 & 0.47 $\pm$ 0.01 \\
    SW-LinTS   & 0.35 $\pm$ 0.01 & 0.54 $\pm$ 0.00 & 0.43 $\pm$ 0.00 \\
    D-LinTS    & 0.37 $\pm$ 0.00 & 0.48 $\pm$ 0.01 & 0.36 $\pm$ 0.00 \\
    DenBand    & 0.33 $\pm$ 0.00 & 0.22 $\pm$ 0.01 & 0.20 $\pm$ 0.00 \\
    BoB        & 0.32 $\pm$ 0.00 & 0.31 $\pm$ 0.00 & 0.23  $\pm$ 0.00 \\
    LinTS      & 0.37 $\pm$ 0.00 & 0.35 $\pm$ 0.01 & 0.28  $\pm$ 0.00 \\
    random     & 0.10$\pm$ 0.00 & 0.10 $\pm$ 0.00 & 0.10 $\pm$ 0.00  \\
""",
}

_ROW_LABEL = {
    r"\algo(Disc)": "allseason-disc",
    r"\algo(SW)": "allseason-sw",
    **{v: k for k, v in LABELS.items() if not v.startswith("All-Season")},
}
_CELL = re.compile(r"^\s*([0-9.]+)\s*\$\\pm\$\s*([0-9.]+)\s*$")


def _parse(body: str) -> dict[str, dict[str, tuple[float, float]]]:
    rows = {}
    for line in body.strip().splitlines():
        line = line.strip().removesuffix(r"\\").strip()
        label, *cells = (c.strip() for c in line.split("&"))
        if len(cells) != len(PATTERNS):
            raise ValueError(f"table row {line!r}: expected {len(PATTERNS)} cells")
        parsed = []
        for c in cells:
            m = _CELL.match(c)
            if m is None:
                raise ValueError(f"table cell {c!r} is not 'mean $\\pm$ std'")
            parsed.append((float(m.group(1)), float(m.group(2))))
        rows[_ROW_LABEL[label]] = dict(zip(PATTERNS, parsed))
    if tuple(rows) != ALGORITHMS:
        raise ValueError(f"table rows {tuple(rows)} != {ALGORITHMS}")
    return rows


#: PAPER[table][algorithm][pattern] = (mean, std), algorithm by registry name
PAPER: dict[str, dict[str, dict[str, tuple[float, float]]]] = {
    key: _parse(body) for key, body in LATEX_ROWS.items()
}


def _check_table(table: str) -> str:
    if table not in PAPER:
        raise ValueError(f"table: unknown {table!r}; known: {', '.join(TABLES)}")
    return table


def _algorithm(name: str) -> str:
    """A row key from either a row key (registry name, or a printed-rule row) or a label."""
    if name in ROW_LABELS:
        return name
    for key, label in ROW_LABELS.items():
        if name.lower() == label.lower():
            return key
    raise ValueError(f"algorithm: unknown {name!r}; known: {', '.join(ALGORITHMS)}")


def paper_cell(table: str, algorithm: str, pattern: str) -> tuple[float, float]:
    """(mean, std) the paper reports for one cell."""
    return PAPER[_check_table(table)][_algorithm(algorithm)][pattern]


def paper_frame(table: str, rows=ALGORITHMS) -> pd.DataFrame:
    """The paper's table in long form: columns algorithm, pattern, mean, std (24 rows; with
    ``rows=ROWS`` 30: the printed-rule rows repeat their counterpart's numbers)."""
    paper = PAPER[_check_table(table)]
    return pd.DataFrame(
        [(alg, pat, *paper[paper_row(alg)][pat]) for alg in rows for pat in PATTERNS],
        columns=["algorithm", "pattern", "mean", "std"],
    )


def _measured_frame(measured) -> pd.DataFrame:
    """Accept a long DataFrame (algorithm, pattern, mean[, std]) or a mapping
    {(algorithm, pattern): (mean, std) | mean}."""
    if isinstance(measured, pd.DataFrame):
        missing = {"algorithm", "pattern", "mean"} - set(measured.columns)
        if missing:
            raise ValueError(f"measured: missing column(s) {sorted(missing)}")
        df = measured.loc[
            :, [c for c in ("algorithm", "pattern", "mean", "std") if c in measured.columns]
        ].copy()
    elif isinstance(measured, Mapping):
        recs = []
        for (alg, pat), v in measured.items():
            mean, std = v if isinstance(v, (tuple, list, np.ndarray)) else (v, np.nan)
            recs.append((alg, pat, float(mean), float(std)))
        df = pd.DataFrame(recs, columns=["algorithm", "pattern", "mean", "std"])
    else:
        raise TypeError("measured: a DataFrame or a {(algorithm, pattern): (mean, std)} mapping")
    if "std" not in df.columns:
        df["std"] = np.nan
    df["algorithm"] = [_algorithm(a) for a in df["algorithm"]]
    bad = set(df["pattern"]) - set(PATTERNS)
    if bad:
        raise ValueError(f"measured: unknown pattern(s) {sorted(bad)}; known: {PATTERNS}")
    if df.duplicated(["algorithm", "pattern"]).any():
        raise ValueError("measured: more than one row for some (algorithm, pattern)")
    return df


def compare(
    table: str, measured, threshold: float = DIFF_THRESHOLD, rows=ALGORITHMS
) -> pd.DataFrame:
    """Our table beside the paper's, cell by cell.

    Returns one row per cell of ``rows`` (the paper's 8 by default, 24 cells; :data:`ROWS`
    adds the printed-rule rows): algorithm, label, pattern, paper_mean, paper_std, mean, std
    (NaN where not measured), diff = mean - paper_mean, and ``differs`` = |diff| > threshold
    (False where not measured). Measured cells of other rows are an error."""
    paper = paper_frame(table, rows).rename(columns={"mean": "paper_mean", "std": "paper_std"})
    ours = _measured_frame(measured)
    extra = set(ours["algorithm"]) - set(rows)
    if extra:
        raise ValueError(f"measured: algorithms not in the paper: {sorted(extra)}")
    out = paper.merge(ours, on=["algorithm", "pattern"], how="left")
    out["diff"] = out["mean"] - out["paper_mean"]
    out["differs"] = (out["diff"].abs() > threshold).fillna(False).astype(bool)
    out.insert(1, "label", out["algorithm"].map(ROW_LABELS))
    return out


def wide(frame: pd.DataFrame, value: str = "mean", digits: int = 2) -> pd.DataFrame:
    """A long frame (e.g. from :func:`compare`) as the paper lays it out: algorithms as rows,
    patterns as columns. ``value`` names a column, or "mean±std" / "paper" for formatted
    strings of ours / the paper's."""
    df = frame.copy()
    if value in ("mean±std", "paper"):
        m, s = ("mean", "std") if value == "mean±std" else ("paper_mean", "paper_std")
        if value == "paper" and m not in df.columns:
            m, s = "mean", "std"
        df["_cell"] = [
            (
                ""
                if pd.isna(a)
                else f"{a:.{digits}f} ± {b:.{digits}f}"
                if not pd.isna(b)
                else f"{a:.{digits}f}"
            )
            for a, b in zip(df[m], df[s])
        ]
        value = "_cell"
    out = df.pivot(index="algorithm", columns="pattern", values=value)
    out = out.reindex(
        index=[a for a in ROWS if a in out.index], columns=[p for p in PATTERNS if p in out.columns]
    )
    out.index = [ROW_LABELS[a] for a in out.index]
    out.columns.name = None
    return out
