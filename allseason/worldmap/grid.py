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

from ..errors import SpecError
from ..limits import MAX_MAP_CELLS
from . import contest
from .compute import CellsOutcome, run_cells
from .knobs import KNOBS, Knobs, snr

FORMAT = 1
MAX_CELLS = MAX_MAP_CELLS  # allseason.limits


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
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", str(self.name)):
            raise SpecError("name", f"1-64 letters, digits, '-', '_' or '.', got {self.name!r}")
        for axis in ("x", "y"):
            knob, values = getattr(self, f"{axis}_knob"), getattr(self, f"{axis}_values")
            if knob not in KNOBS:
                raise SpecError(f"{axis}.knob", f"one of {', '.join(KNOBS)}, got {knob!r}")
            if not isinstance(values, (list, tuple)) or not values:
                raise SpecError(f"{axis}.values", "a non-empty list of levels")
            values = tuple(values)
            if list(values) != sorted(set(values)):
                raise SpecError(f"{axis}.values", "must be increasing, without repeats")
            object.__setattr__(self, f"{axis}_values", values)
        if self.x_knob == self.y_knob:
            raise SpecError("y.knob", "must differ from x.knob")
        if self.page_knob not in KNOBS or self.page_knob in (self.x_knob, self.y_knob):
            raise SpecError("page.knob", f"a knob other than x's and y's, got {self.page_knob!r}")
        pages = tuple(self.page_values) or (getattr(self.fixed, self.page_knob),)
        if list(pages) != sorted(set(pages)):
            raise SpecError("page.values", "must be increasing, without repeats")
        object.__setattr__(self, "page_values", pages)
        if len(self.x_values) * len(self.y_values) * len(pages) > MAX_CELLS:
            raise SpecError("x.values", f"at most {MAX_CELLS} cells")
        for k in self.cells():  # every cell a valid world (SpecError names the knob)
            k.scenario()

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
        """The grid from plain data; a SpecError naming the field."""
        if not isinstance(data, dict):
            raise SpecError("grid", "must be a table with x, y and fixed")
        for k in data:
            if k not in ("name", "x", "y", "page", "fixed"):
                raise SpecError(k, "unknown field; known: name, x, y, page, fixed")
        axes = {}
        for axis in ("x", "y"):
            a = data.get(axis)
            if not isinstance(a, dict) or "knob" not in a or "values" not in a:
                raise SpecError(axis, "required: { knob = NAME, values = [...] }")
            axes[axis] = a
        page = data.get("page", {"knob": "batch_size", "values": []})
        if not isinstance(page, dict) or "knob" not in page:
            raise SpecError("page", "must be { knob = NAME, values = [...] }")
        axes["page"] = {"knob": page["knob"], "values": page.get("values", [])}
        fixed = data.get("fixed", {})
        if not isinstance(fixed, dict):
            raise SpecError("fixed", "must be a table of knob values")
        for k in fixed:
            if k not in KNOBS:
                raise SpecError(f"fixed.{k}", f"unknown knob; known: {', '.join(KNOBS)}")
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
        """The grid from a JSON file; a SpecError naming the field."""
        path = Path(path)
        if not path.is_file():
            raise SpecError("file", f"no such file {str(path)!r}")
        text = path.read_text(encoding="utf-8")
        try:
            data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
        except ValueError as e:
            raise SpecError("file", f"{str(path)!r} cannot be read ({e})") from None
        stem = re.sub(r"[^A-Za-z0-9_.-]", "-", path.stem)[:64] or "map"
        return cls.from_dict(data, name=stem)


def run_map(grid: MapGrid, out, **kw) -> tuple[dict | None, CellsOutcome]:
    """Compute every cell of ``grid`` into ``out`` (resumable: run again after an
    interruption); returns (the snapshot dict, or None if incomplete; the outcome).
    ``kw``: as :func:`allseason.worldmap.compute.run_cells` (executor, progress)."""
    worlds = grid.cells()
    t0 = time.perf_counter()
    res = run_cells([k.scenario() for k in worlds], out, title=f"map {grid.name!r}", **kw)
    if not res.complete:
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
