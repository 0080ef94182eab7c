"""The screening: which knobs of a world move the outcome? A one-at-a-time design around a
base world (:data:`BASE`): each knob is set to a low and a high level (:data:`LEVELS`), the
others stay at the base; every point is a tuned cell (:mod:`.contest`). A knob's *effect*
is the outcome at its high level minus the outcome at its low level, with a 95% Welch t
interval (the two points are separate worlds, 5 seeds each)."""

from __future__ import annotations

import math

import numpy as np

from .compute import run_cells
from .knobs import KNOBS, Knobs

BASE = Knobs(season_length=200, n_states=3, returns=2, n_arms=5, d=5, sigma2=0.1, batch_size=1)
LEVELS = {  # knob: (low, high)
    "season_length": (50, 1000),
    "n_states": (2, 6),
    "returns": (0, 5),
    "n_arms": (2, 20),
    "d": (2, 15),
    "sigma2": (0.01, 1.0),
    "batch_size": (1, 20),
}


def design(base: Knobs = BASE, levels: dict | None = None) -> list[tuple[str, object, Knobs]]:
    """The points: ("base", None, base), then (knob, level, knobs) for each level that is
    not the base's own value."""
    levels = LEVELS if levels is None else levels
    points: list[tuple[str, object, Knobs]] = [("base", None, base)]
    for knob, values in levels.items():
        for v in values:
            if v != getattr(base, knob):
                points.append((knob, v, base.with_(**{knob: v})))
    return points


def welch(a, b) -> tuple[float, float]:
    """Mean difference mean(a) - mean(b) and its 95% Welch t half-width."""
    from scipy.special import stdtrit  # scipy.stats' t.ppf, without importing scipy.stats

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    va, vb = a.var(ddof=1) / len(a), b.var(ddof=1) / len(b)
    se = math.sqrt(va + vb)
    if se == 0:
        return float(a.mean() - b.mean()), 0.0
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return float(a.mean() - b.mean()), float(stdtrit(df, 0.975) * se)


def _diffs(cell: dict, label: str) -> np.ndarray:
    r = cell["rewards"]
    return np.asarray(r[label]) - np.asarray(r[cell["best_baseline"]])


def _gaps(cell: dict, label: str) -> np.ndarray:
    """Per-seed shares of the gap closed, (m_i - b_i) / (o - b): their mean is the cell's
    share (the oracle gap o - b, a mean over seeds, is taken as fixed)."""
    m = cell["means"]
    return _diffs(cell, label) / (m["oracle-state"] - m[cell["best_baseline"]])


def effects(points, cells, label: str = "allseason-sw") -> list[dict]:
    """One row per knob: the outcome (All-Season minus the best baseline; share of the gap
    closed) at its low, base and high level, the effect high - low on each with its 95% Welch
    interval, and the swing of the share (largest minus smallest of the three levels; the
    rows are sorted by it)."""
    by = {(k, v): c for (k, v, _), c in zip(points, cells)}
    base = by[("base", None)]
    rows = []
    for knob, (lo, hi) in LEVELS.items():
        b_val = getattr(BASE, knob)
        c_lo = base if lo == b_val else by[(knob, lo)]
        c_hi = base if hi == b_val else by[(knob, hi)]
        eff, half = welch(_diffs(c_hi, label), _diffs(c_lo, label))
        geff, ghalf = welch(_gaps(c_hi, label), _gaps(c_lo, label))
        gaps = [c[label]["gap_closed"] for c in (c_lo, base, c_hi)]
        rows.append(
            {
                "knob": knob,
                "title": KNOBS[knob][0],
                "low": lo,
                "base": b_val,
                "high": hi,
                "diff_low": c_lo[label]["diff"],
                "diff_base": base[label]["diff"],
                "diff_high": c_hi[label]["diff"],
                "gap_low": c_lo[label]["gap_closed"],
                "gap_base": base[label]["gap_closed"],
                "gap_high": c_hi[label]["gap_closed"],
                "effect": eff,
                "effect_half": half,
                "significant": bool(abs(eff) > half),
                "gap_effect": geff,
                "gap_effect_half": ghalf,
                "gap_significant": bool(abs(geff) > ghalf),
                "gap_swing": float(max(gaps) - min(gaps)),
            }
        )
    rows.sort(key=lambda r: -r["gap_swing"])
    return rows


SEEDS = tuple(range(10))  # shown seeds of the screening, as the map


def run_screening(out, **kw) -> tuple[list, list[dict] | None]:
    """Compute every point of the design into ``out`` (resumable), 10 shown seeds;
    (points, cells)."""
    points = design()
    scenarios = [k.scenario() for _, _, k in points]
    res = run_cells(scenarios, out, title="screening", seeds=SEEDS, **kw)
    return points, res.cells


__all__ = ["BASE", "LEVELS", "design", "effects", "run_screening", "welch"]
