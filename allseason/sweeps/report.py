"""The text of ``python -m allseason report``: the best settings of a stored sweep, with their
Student's t intervals (the command itself: :mod:`allseason.cli.sweep`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..specs import SpecError
from ..stats import ci95_halfwidth
from .spec import METRICS, SweepSpec
from .store import SPEC_FILE, best_settings, load_runs, settings_table

if TYPE_CHECKING:
    import pandas as pd


def report_text(
    folder, metric: str | None = None, top: int = 1, everything: bool = False
) -> tuple[str, pd.DataFrame]:
    """The text of ``report`` and the settings table it is based on: the runs of the last
    sweep run into ``folder`` (its ``sweep.json``), or every stored run (``everything``)."""
    folder = Path(folder)
    spec = _saved_spec(folder)
    metric = metric or (spec.metric if spec else "mean_reward")
    runs = load_runs(folder)
    lines = []
    if spec is not None:
        expected = {u.key for u in spec.units()}
        mine = runs["key"].isin(expected) if len(runs) else []
        n_have, n_other = int(sum(mine)), len(runs) - int(sum(mine))
        state = (
            "complete" if n_have == len(expected) else "INCOMPLETE: run the sweep again to resume"
        )
        lines.append(f"sweep {spec.name!r}: {n_have} of {len(expected)} runs stored ({state})")
        if n_other:
            lines.append(
                f"{n_other} runs of other sweeps in the store are "
                + ("included" if everything else "left out (--all includes them)")
            )
        if not everything and len(runs):
            runs = runs[mine]
    else:
        lines.append(f"{len(runs)} runs in the store")
    desc, higher = METRICS[metric]
    lines.append(
        f"metric: {metric} ({desc}, {'higher' if higher else 'lower'} is better), "
        "mean ± std over seeds; 95% (t): half-width of the Student's t interval"
    )
    settings = settings_table(runs)
    if len(settings) == 0:
        return "\n".join(lines + ["no runs stored yet"]), settings
    best = best_settings(settings, metric, top)
    width = max(12, *(len(x) for x in best["label"]))
    swidth = max(14, *(len(x) for x in best["setting"]))

    def value(r):
        return f"{r[metric]:.4f} ± {r[metric + '_std']:.4f}"

    vwidth = max(len(metric), *(len(value(r)) for _, r in best.iterrows()))

    def ci(r):  # one seed: no interval
        if r["n_seeds"] > 1:
            return f"±{ci95_halfwidth(r[metric + '_std'], r['n_seeds']):.4f}"
        return "—"

    for _, g in best.groupby("scenario_key", sort=False):
        lines.append("")
        lines.append(f"scenario: {g['scenario'].iloc[0]}")
        lines.append(
            f"  {'algorithm':<{width}}  {'best setting':<{swidth}}  "
            f"{metric:<{vwidth}}  {'95% (t)':>9}  seeds"
        )
        for _, r in g.iterrows():
            lines.append(
                f"  {r['label']:<{width}}  {r['setting']:<{swidth}}  "
                f"{value(r):<{vwidth}}  {ci(r):>9}  {r['n_seeds']:>5}"
            )
    return "\n".join(lines), settings


def _saved_spec(folder: Path) -> SweepSpec | None:
    path = folder / SPEC_FILE
    if not path.is_file():
        return None
    try:
        return SweepSpec.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, SpecError):
        return None
