"""The named worlds placed on the map (the paper's three patterns, the default race, the
Seattle weather shop, the example reward table), and the check of the map's prediction
against a real race of each: the same tuned contest (:mod:`.contest`) on the world itself."""

from __future__ import annotations

import re
from pathlib import Path

from ..specs import Scenario
from .compute import run_cells
from .knobs import estimate_knobs


def _table():
    from ..logs.examples import seasonal_table
    from ..logs.table import parse_reward_table

    t = parse_reward_table(seasonal_table())
    return t.scenario(), t


#: name: factory () -> (scenario, world or None)
NAMED = {
    "default race": lambda: (Scenario(), None),
    "regular": lambda: (Scenario.from_preset("regular", horizon=10_000), None),
    "realistic": lambda: (Scenario.from_preset("realistic", horizon=10_000), None),
    "extreme": lambda: (Scenario.from_preset("extreme", horizon=10_000), None),
    "Seattle weather shop": lambda: (Scenario.from_preset("seattle-weather"), None),
    "example reward table": _table,
}


def slug(name: str) -> str:
    """A folder name for a world: lowercase letters, digits and '-'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "world"


def race_world(scenario: Scenario, world, out, **kw) -> dict | None:
    """The tuned contest on one world (its own results folder ``out``, resumable); the cell
    dict of :func:`.contest.summarise` with chosen settings and rewards, None if incomplete.
    ``kw``: as :func:`allseason.worldmap.compute.run_cells`."""
    res = run_cells([scenario], out, world=world, **kw)
    return None if res.cells is None else res.cells[0]  # None: not complete


def check_named(snapshot: dict, out, names=None, **kw) -> list[dict]:
    """Place each named world on the map and race it: one dict per world with its knobs,
    its position, the map's prediction and the raced result."""
    from .snapshot import predict

    rows = []
    for name in names or NAMED:
        scenario, world = NAMED[name]()
        knobs = estimate_knobs(scenario, world)
        raced = race_world(scenario, world, Path(out) / slug(name), title=name, **kw)
        rows.append(
            {
                "name": name,
                "knobs": knobs,
                "prediction": predict(snapshot, knobs),
                "raced": raced,
            }
        )
    return rows


__all__ = ["NAMED", "check_named", "race_world", "slug"]
