"""The shipped map (``allseason/worldmap/shipped_map.json``, made by ``python -m allseason
map --out DIR`` and copied here), read back; where a world falls on it and what it predicts
there; and the map's regions in plain sentences with their numbers."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from . import contest
from .knobs import KNOBS

SHIPPED = Path(__file__).with_name("shipped_map.json")


@lru_cache(maxsize=4)
def _load(path: str, mtime: float) -> str:
    return Path(path).read_text(encoding="utf-8")


def load(path=None) -> dict:
    """The snapshot dict (default: the shipped map). A fresh copy each call."""
    p = Path(path) if path is not None else SHIPPED
    return json.loads(_load(str(p), p.stat().st_mtime))


def axis_value(snapshot: dict, axis: str, knobs: dict) -> float:
    """A world's coordinate on an axis: its knob, or for ``sigma2`` its signal-to-noise
    ratio (the map's y axis is drawn in SNR, which worlds of other K, d share)."""
    knob = snapshot[axis]["knob"]
    return float(knobs["snr"] if knob == "sigma2" else knobs[knob])


def axis_levels(snapshot: dict, axis: str) -> list[float]:
    """The levels of an axis in the units of :func:`axis_value` (SNR for sigma2)."""
    knob = snapshot[axis]["knob"]
    if knob != "sigma2":
        return [float(v) for v in snapshot[axis]["values"]]
    by: dict[float, list[float]] = {}  # level: the SNR of its cells
    for c in snapshot["cells"]:
        by.setdefault(c[axis], []).append(c["snr"])
    return [float(np.mean(by[v])) for v in snapshot[axis]["values"]]


def _log(values, knob: str):
    v = np.asarray(values, dtype=float)
    return np.log(v + 1.0) if knob == "returns" else np.log(np.maximum(v, 1e-12))


def position(snapshot: dict, axis: str, value: float) -> float:
    """A value's fractional index on an axis (0 = first level), on a log scale; beyond the
    ends it goes on linearly in log units."""
    levels = axis_levels(snapshot, axis)
    knob = snapshot[axis]["knob"]
    lv, x = _log(levels, knob), float(_log([value], knob)[0])
    order = np.argsort(lv)
    lv_sorted, idx = lv[order], np.arange(len(lv), dtype=float)[order]
    if len(lv) == 1:
        return 0.0
    if x <= lv_sorted[0]:
        return float(
            idx[0] + (x - lv_sorted[0]) / (lv_sorted[1] - lv_sorted[0]) * (idx[1] - idx[0])
        )
    if x >= lv_sorted[-1]:
        step = (idx[-1] - idx[-2]) / (lv_sorted[-1] - lv_sorted[-2])
        return float(idx[-1] + (x - lv_sorted[-1]) * step)
    return float(np.interp(x, lv_sorted, idx))


def pages(snapshot: dict) -> list:
    """The page values (e.g. batch sizes) of a snapshot, one map each."""
    return list(snapshot["page"]["values"])


def page_cells(snapshot: dict, page=None) -> list[dict]:
    """The cells of one page (default: the first)."""
    page = pages(snapshot)[0] if page is None else page
    return [c for c in snapshot["cells"] if c["page"] == page]


def cell_at(snapshot: dict, i: int, j: int, page=None) -> dict:
    """The cell at x index i, y index j of a page (default: the first)."""
    xs, ys = snapshot["x"]["values"], snapshot["y"]["values"]
    for c in page_cells(snapshot, page):
        if c["x"] == xs[i] and c["y"] == ys[j]:
            return c
    raise KeyError((i, j, page))


def nearest_page(snapshot: dict, knobs: dict):
    """The page whose value is nearest a world's knob (on a log scale)."""
    knob, values = snapshot["page"]["knob"], pages(snapshot)
    v = float(knobs[knob])
    return min(values, key=lambda p: abs(float(_log([p], knob)[0] - _log([v], knob)[0])))


def predict(snapshot: dict, knobs: dict) -> dict:
    """Where a world falls (fractional x, y indices, the nearest page) and the nearest
    cell's verdict: i, j, fx, fy, page, inside (within half a cell of the grid), cell
    (x, y), verdict and numbers for All-Season (SW) and (Disc), the best baseline."""
    fx = position(snapshot, "x", axis_value(snapshot, "x", knobs))
    fy = position(snapshot, "y", axis_value(snapshot, "y", knobs))
    nx, ny = len(snapshot["x"]["values"]), len(snapshot["y"]["values"])
    i, j = int(min(max(round(fx), 0), nx - 1)), int(min(max(round(fy), 0), ny - 1))
    page = nearest_page(snapshot, knobs)
    cell = cell_at(snapshot, i, j, page)
    inside = -0.5 <= fx <= nx - 0.5 and -0.5 <= fy <= ny - 0.5
    return {
        "fx": fx,
        "fy": fy,
        "i": i,
        "j": j,
        "page": page,
        "inside": bool(inside),
        "cell": {"x": cell["x"], "y": cell["y"]},
        "best_baseline": cell["best_baseline"],
        **{lab: {**cell[lab], "verdict": contest.verdict(cell, lab)} for lab in contest.ALLSEASON},
    }


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 else f"{v:.2g}"


def _span(lo: float, hi: float, fmt=_fmt, sep: str = "–") -> str:
    return fmt(lo) if fmt(lo) == fmt(hi) else f"{fmt(lo)}{sep}{fmt(hi)}"


def _pct(v: float) -> str:
    return f"{v:.0%}"


def _sd(v: float) -> str:
    return f"{v:+.3f}"


def _ud(v: float) -> str:
    return f"{v:.3f}"


def _cells(n: int) -> str:
    return f"{n} cell" + ("" if n == 1 else "s")


def regions(snapshot: dict, label: str = "allseason-sw", page=None) -> list[dict]:
    """The regions of one page of the map for one All-Season variant: where it wins, where
    the best baseline wins, and where the difference is within the noise; each with its
    cells, the ranges of its numbers and one plain sentence."""
    xk, yk = snapshot["x"]["knob"], snapshot["y"]["knob"]
    xl = dict(zip(snapshot["x"]["values"], axis_levels(snapshot, "x")))
    yl = dict(zip(snapshot["y"]["values"], axis_levels(snapshot, "y")))
    xname = KNOBS[xk][0]
    yname = "signal-to-noise ratio" if yk == "sigma2" else KNOBS[yk][0]
    title = contest.TITLES[label]
    out = []
    for verdict in ("wins", "loses", "tie"):
        cells = [c for c in page_cells(snapshot, page) if contest.verdict(c, label) == verdict]
        if not cells:
            continue
        diffs = [c[label]["diff"] for c in cells]
        gaps = [c[label]["gap_closed"] for c in cells if math.isfinite(c[label]["gap_closed"])]
        xs = sorted({xl[c["x"]] for c in cells})
        ys = sorted({yl[c["y"]] for c in cells})
        bases = [contest.TITLES[c["best_baseline"]] for c in cells]
        top = max(set(bases), key=bases.count)
        where = f"{xname} {_span(xs[0], xs[-1])}, {yname} {_span(ys[0], ys[-1])}"
        gap_txt = _span(min(gaps), max(gaps), _pct) if gaps else "n/a"
        n = len(cells)
        if verdict == "wins":
            text = (
                f"{title} wins in {_cells(n)} ({where}): "
                f"{_span(min(diffs), max(diffs), _sd, ' to ')} reward per step over the best "
                f"baseline, closing {gap_txt} of the oracle gap."
            )
        elif verdict == "loses":
            text = (
                f"The best baseline (mostly {top}) is the better bet in {_cells(n)} ({where}): "
                f"{title} gives up {_span(-max(diffs), -min(diffs), _ud)} per step."
            )
        else:
            behind = sum(d < 0 for d in diffs)
            text = (
                f"No significant difference in {_cells(n)} ({where}): the 95% interval of "
                f"{title} minus the best baseline ({_span(min(diffs), max(diffs), _sd, ' to ')})"
                f" includes 0; the best baseline (mostly {top}) is ahead in {behind} of them."
            )
        out.append(
            {
                "verdict": verdict,
                "n_cells": n,
                "cells": [(c["x"], c["y"]) for c in cells],
                "diff_range": (min(diffs), max(diffs)),
                "gap_range": (min(gaps), max(gaps)) if gaps else None,
                "best_baseline": top,
                "sentence": text,
            }
        )
    return out


def boundary_sentence(snapshot: dict, label: str = "allseason-sw", page=None) -> str | None:
    """One sentence: from which x level on All-Season wins, row by row (None if nowhere)."""
    yl = dict(zip(snapshot["y"]["values"], axis_levels(snapshot, "y")))
    rows = [r for r in thresholds(snapshot, label, page) if r["wins_from"] is not None]
    if not rows:
        return None
    yname = "SNR" if snapshot["y"]["knob"] == "sigma2" else KNOBS[snapshot["y"]["knob"]][0]
    rows.sort(key=lambda r: -yl[r["y"]])
    parts = [f"{r['wins_from']:,} at {yname} {_fmt(yl[r['y']])}" for r in rows]
    unit = KNOBS[snapshot["x"]["knob"]][1]
    return (
        f"{contest.TITLES[label]} wins in every cell to the right of the boundary: {unit} "
        f"from {'; '.join(parts)}. The noisier the reward, the longer a season must last."
    )


def thresholds(snapshot: dict, label: str = "allseason-sw", page=None) -> list[dict]:
    """Row by row (y level): the shortest x level from which All-Season wins in every cell
    to the right (None if it does not), and the longest x level where it loses."""
    xs = snapshot["x"]["values"]
    out = []
    for j, y in enumerate(snapshot["y"]["values"]):
        verdicts = [contest.verdict(cell_at(snapshot, i, j, page), label) for i in range(len(xs))]
        win_from = None
        for i in range(len(xs) - 1, -1, -1):
            if verdicts[i] != "wins":
                break
            win_from = xs[i]
        lose = [xs[i] for i, v in enumerate(verdicts) if v == "loses"]
        out.append({"y": y, "wins_from": win_from, "loses_up_to": max(lose) if lose else None})
    return out


def prediction_sentence(
    snapshot: dict, knobs: dict, pred: dict, label: str = "allseason-sw"
) -> str:
    """One plain sentence: where a world falls and what the map predicts there."""
    s = pred[label]
    title = contest.TITLES[label]
    base = contest.TITLES[pred["best_baseline"]]
    where = (
        f"seasons of about {knobs['season_length']:,.0f} observations and a signal-to-noise "
        f"ratio of {knobs['snr']:.2f}"
    )
    pk = snapshot["page"]["knob"]
    where += f" (read on the map for {KNOBS[pk][0]} {pred['page']:g}"
    where += ", beyond its edge: the nearest cell)" if not pred["inside"] else ")"
    gap = s["gap_closed"]
    gap_t = f", closing {gap:.0%} of the oracle gap" if math.isfinite(gap) else ""
    if s["verdict"] == "wins":
        what = f"{title} should win, by about {s['diff']:+.3f} reward per step over {base}{gap_t}"
    elif s["verdict"] == "loses":
        what = f"{base} should be the better bet, by about {-s['diff']:.3f} per step"
    else:
        what = (
            f"no significant difference is expected between {title} and {base} "
            f"({s['diff']:+.3f} ± {s['half']:.3f})"
        )
    fixed = {**snapshot.get("fixed", {}), snapshot["page"]["knob"]: pred["page"]}
    other = [
        f"{KNOBS[k][0]} {knobs[k]:g} (map: {fixed[k]:g})"
        for k in ("batch_size", "n_arms", "returns")
        if k in fixed and k in knobs and abs(float(knobs[k]) - float(fixed[k])) > 1e-9
    ]
    tail = f" Its other knobs differ from the map's: {', '.join(other)}." if other else ""
    return f"With {where}, {what}.{tail}"


__all__ = [
    "SHIPPED",
    "load",
    "pages",
    "page_cells",
    "nearest_page",
    "cell_at",
    "predict",
    "prediction_sentence",
    "position",
    "regions",
    "thresholds",
    "boundary_sentence",
    "axis_levels",
]
