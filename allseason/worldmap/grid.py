"""The map's grid: two knobs swept (x, y), the others fixed, and :func:`run_map`, which
computes every cell on the sweep engine (resumable) and returns the snapshot dict.

A grid file (TOML or JSON), e.g. ``examples/map_small.toml``::

    name = "small"
    x = { knob = "season_length", values = [50, 200, 800] }
    y = { knob = "sigma2", values = [0.03, 0.3] }
    page = { knob = "batch_size", values = [1, 10] }   # optional: one map per value
    fixed = { n_states = 3, returns = 2, n_arms = 5, d = 5 }
"""

from __future__ import annotations

import json
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..costs import estimate_runs
from ..errors import SpecError
from ..errors import show as _show
from ..files import read_text
from ..limits import MAP_MAX_RUN_BYTES, MAP_MAX_STEPS, MAX_INPUT_BYTES, MAX_MAP_CELLS
from . import contest
from .compute import CellsOutcome, run_cells
from .knobs import KNOBS, Knobs, check_level, snr

FORMAT = 1
MAX_CELLS = MAX_MAP_CELLS  # allseason.limits


def runs_per_cell(n_shown: int = len(contest.SHOWN_SEEDS)) -> int:
    """Runs of one cell: every setting of the tuned contestants on the tuning seeds, then
    every contestant on the ``n_shown`` shown seeds (105 by default)."""
    tuned = sum(len(contest.settings(lab)) for lab, (_, _, g) in contest.GRIDS.items() if g)
    return tuned * len(contest.TUNE_SEEDS) + len(contest.GRIDS) * n_shown


def cell_names(n_shown: int = len(contest.SHOWN_SEEDS)) -> list[str]:
    """The policy of every run of one cell (:func:`runs_per_cell` of them)."""
    tuned = [
        contest.GRIDS[lab][0]
        for lab, (_, _, g) in contest.GRIDS.items()
        if g
        for _ in contest.settings(lab)
    ]
    return tuned * len(contest.TUNE_SEEDS) + [n for n, _, _ in contest.GRIDS.values()] * n_shown


def cell_cost(scenario) -> float:
    """CPU-seconds of one cell (a tuned contest) on ``scenario``, estimated
    (:mod:`allseason.costs`): a map cell, or the When page's "Race it to check"."""
    return estimate_runs(scenario.horizon, scenario.d, scenario.n_arms, cell_names(), 1)


def _knob_name(value, field: str) -> str:
    if not isinstance(value, str) or value not in KNOBS:
        raise SpecError(field, f"one of {', '.join(KNOBS)}, got {_show(value)}")
    return value


def _levels(knob: str, values, field: str, required: bool = True) -> tuple:
    """The levels of a swept knob: a list of at most MAX_CELLS levels, each of the knob's
    type and range (:func:`.knobs.check_level`), increasing, without repeats."""
    if not isinstance(values, (list, tuple)) or (required and not values):
        raise SpecError(field, f"a non-empty list of levels, got {_show(values)}")
    if len(values) > MAX_CELLS:
        raise SpecError(field, f"at most {MAX_CELLS} levels, got {len(values):,}")
    out = tuple(check_level(knob, v, f"{field}[{i}]") for i, v in enumerate(values))
    if list(out) != sorted(set(out)):
        raise SpecError(field, "must be increasing, without repeats")
    return out


@dataclass(frozen=True)
class MapGrid:
    """Two swept knobs and the fixed others.

    Parameters
    ----------
    x_knob, y_knob : str
        Knob names (:data:`allseason.worldmap.KNOBS`), different.
    x_values, y_values : tuple
        The levels of each, increasing.
    fixed : Knobs
        The world the other knobs are taken from.
    name : str
        Letters, digits, ``-_.``.
    page_knob : str
        A third knob with a few values, one map (page) each; its fixed value when
        ``page_values`` is empty.
    page_values : tuple
        The pages' levels, increasing (empty: one page at the fixed value).
    """

    x_knob: str = "season_length"
    x_values: tuple = (25, 50, 100, 200, 400, 800, 1600)
    y_knob: str = "sigma2"
    y_values: tuple = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
    fixed: Knobs = field(default_factory=Knobs)
    name: str = "map"
    page_knob: str = "batch_size"
    page_values: tuple = (1, 10)

    def __post_init__(self):
        """The whole grid checked before anything is built or run: names, knobs and levels
        (types, ranges), the number of cells, each world's size, the total number of steps
        (:data:`~allseason.limits.MAP_MAX_STEPS`) and one run's memory
        (:data:`~allseason.limits.MAP_MAX_RUN_BYTES`)."""
        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", self.name):
            raise SpecError(
                "name", f"1-64 letters, digits, '-', '_' or '.', got {_show(self.name)}"
            )
        if not isinstance(self.fixed, Knobs):
            raise SpecError("fixed", "must be a table of knob values")
        for axis in ("x", "y"):
            knob = _knob_name(getattr(self, f"{axis}_knob"), f"{axis}.knob")
            values = _levels(knob, getattr(self, f"{axis}_values"), f"{axis}.values")
            object.__setattr__(self, f"{axis}_values", values)
        if self.x_knob == self.y_knob:
            raise SpecError("y.knob", "must differ from x.knob")
        page = _knob_name(self.page_knob, "page.knob")
        if page in (self.x_knob, self.y_knob):
            raise SpecError("page.knob", f"a knob other than x's and y's, got {page!r}")
        pages = _levels(page, self.page_values, "page.values", required=False)
        pages = pages or (getattr(self.fixed, self.page_knob),)
        object.__setattr__(self, "page_values", pages)
        n_cells = len(self.x_values) * len(self.y_values) * len(pages)
        if n_cells > MAX_CELLS:
            raise SpecError("x.values", f"{n_cells:,} cells; at most {MAX_CELLS}")
        worlds = self.cells()  # each a valid world (SpecError names the knob)
        steps = self.total_steps(worlds)
        if steps > MAP_MAX_STEPS:
            raise SpecError(
                "grid",
                f"{n_cells} cells x {runs_per_cell()} runs = {steps:,} steps; at most "
                f"{MAP_MAX_STEPS:,} (limits.MAP_MAX_STEPS): fewer levels, or shorter seasons",
                bounds=(0, MAP_MAX_STEPS),
                got=steps,
            )
        big = max(worlds, key=Knobs.run_bytes)
        if big.run_bytes() > MAP_MAX_RUN_BYTES:
            raise SpecError(
                "grid",
                f"one run of the cell {self._where(big)} takes about "
                f"{big.run_bytes() / 1e6:,.0f} MB; at most {MAP_MAX_RUN_BYTES / 1e6:,.0f} MB "
                f"(limits.MAP_MAX_RUN_BYTES): a smaller d, K, batch or horizon",
            )

    def _where(self, k: Knobs) -> str:
        return ", ".join(
            f"{n} = {getattr(k, n):g}" for n in (self.x_knob, self.y_knob, self.page_knob)
        )

    def total_steps(self, worlds=None) -> int:
        """Steps of every run of every cell (the screening and the named worlds aside)."""
        worlds = self.cells() if worlds is None else worlds
        return runs_per_cell() * sum(k.horizon for k in worlds)

    def cost_seconds(self) -> float:
        """CPU-seconds of every cell, estimated (the screening and the named worlds aside)."""
        return sum(cell_cost(k.scenario()) for k in self.cells())

    def max_run_bytes(self) -> int:
        """The memory of the largest run of the grid (bytes, estimated)."""
        return max(k.run_bytes() for k in self.cells())

    def cells(self) -> list[Knobs]:
        """The worlds of the cells, page by page, row by row (y), x innermost."""
        return [
            self.fixed.with_(**{self.x_knob: x, self.y_knob: y, self.page_knob: p})
            for p in self.page_values
            for y in self.y_values
            for x in self.x_values
        ]

    def to_dict(self) -> dict:
        """The grid as plain data (JSON-ready)."""
        fixed = self.fixed.to_dict()
        for k in (self.x_knob, self.y_knob, self.page_knob):
            fixed.pop(k)
        return {
            "name": self.name,
            "x": {"knob": self.x_knob, "values": list(self.x_values)},
            "y": {"knob": self.y_knob, "values": list(self.y_values)},
            "page": {"knob": self.page_knob, "values": list(self.page_values)},
            "fixed": fixed,
        }

    @classmethod
    def from_dict(cls, data, name: str = "map") -> MapGrid:
        """A grid from a table (a parsed TOML or JSON file): every field's type checked
        here, every level in :meth:`__post_init__`; one SpecError naming the field."""
        if not isinstance(data, dict):
            raise SpecError("grid", "must be a table with x, y and fixed")
        for k in data:
            if k not in ("name", "x", "y", "page", "fixed"):
                raise SpecError(_show(k), "unknown field; known: name, x, y, page, fixed")
        axes = {}
        for axis in ("x", "y", "page"):
            a = data.get(axis, {"knob": "batch_size", "values": []} if axis == "page" else None)
            if not isinstance(a, dict) or "knob" not in a or (axis != "page" and "values" not in a):
                raise SpecError(axis, "required: { knob = NAME, values = [...] }")
            for k in a:
                if k not in ("knob", "values"):
                    raise SpecError(f"{axis}.{_show(k)}", "unknown field; known: knob, values")
            _knob_name(a["knob"], f"{axis}.knob")
            values = a.get("values", [])
            if not isinstance(values, list):
                raise SpecError(f"{axis}.values", f"must be a list of levels, got {_show(values)}")
            axes[axis] = {"knob": a["knob"], "values": values}
        fixed = data.get("fixed", {})
        if not isinstance(fixed, dict):
            raise SpecError("fixed", "must be a table of knob values")
        for k in fixed:
            if k not in KNOBS:
                raise SpecError(f"fixed.{_show(k)}", f"unknown knob; known: {', '.join(KNOBS)}")
            if k in (axes["x"]["knob"], axes["y"]["knob"]) or (
                k == axes["page"]["knob"] and axes["page"]["values"]
            ):
                raise SpecError(f"fixed.{k}", "is swept on an axis; drop it from fixed")
        try:
            base = Knobs(**fixed)
        except SpecError as e:
            raise e.within("fixed") from None
        return cls(
            axes["x"]["knob"],
            tuple(axes["x"]["values"]),
            axes["y"]["knob"],
            tuple(axes["y"]["values"]),
            base,
            data.get("name", name),
            axes["page"]["knob"],
            tuple(axes["page"]["values"]),
        )

    @classmethod
    def from_file(cls, path) -> MapGrid:
        """A grid file (.toml or .json, UTF-8, at most 1 MB), checked whole."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in (".toml", ".json"):
            raise SpecError("--grid", f"{str(path)!r}: use a .toml or .json file")
        text = read_text(path, "--grid", MAX_INPUT_BYTES, suffix[1:].upper())
        try:
            data = json.loads(text) if suffix == ".json" else tomllib.loads(text)
        except RecursionError:
            raise SpecError("--grid", f"{str(path)!r}: nested too deeply") from None
        except ValueError as e:
            why = "a number with thousands of digits" if "Exceeds the limit" in str(e) else e
            raise SpecError("--grid", f"{str(path)!r} cannot be read ({str(why)[:200]})") from None
        stem = re.sub(r"[^A-Za-z0-9_.-]", "-", path.stem)[:64] or "map"
        return cls.from_dict(data, name=stem)


def run_map(grid: MapGrid, out, **kw) -> tuple[dict | None, CellsOutcome]:
    """Compute every cell of ``grid`` into ``out`` (resumable: run again after an
    interruption); returns (the snapshot dict, or None if incomplete; the outcome).
    ``kw``: as :func:`allseason.worldmap.compute.run_cells` (executor, progress)."""
    worlds = grid.cells()
    t0 = time.perf_counter()
    res = run_cells([k.scenario() for k in worlds], out, title=f"map {grid.name!r}", **kw)
    if res.cells is None:  # not complete
        return None, res
    cells = []
    for k, cell in zip(worlds, res.cells):
        cells.append(
            {
                "x": getattr(k, grid.x_knob),
                "y": getattr(k, grid.y_knob),
                "page": getattr(k, grid.page_knob),
                "knobs": k.to_dict(),
                "snr": snr(k.scenario()),
                **cell,
            }
        )
    from .._version import __version__

    snap = {
        "format": FORMAT,
        "engine": __version__,
        **grid.to_dict(),
        "contestants": {
            lab: {"policy": n, "params": p, "grid": g} for lab, (n, p, g) in contest.GRIDS.items()
        },
        "tune_seeds": list(contest.TUNE_SEEDS),
        "shown_seeds": list(kw.get("seeds", contest.SHOWN_SEEDS)),
        "cells": cells,
        "runs": res.n_runs,
        "seconds": time.perf_counter() - t0,
    }
    return snap, res


__all__ = ["MapGrid", "run_map", "FORMAT"]
