"""``python -m allseason map [--grid FILE] [--processes N | --workers N | --scheduler ADDR]
[--out DIR]``: compute a map (and race the named worlds on it), resumable like ``sweep``;
one clear line on stderr and exit code 2 on bad input, never a traceback."""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import time
from pathlib import Path

from ..specs import SpecError
from ..sweeps.execute import SweepError
from ..sweeps.flags import SCHEDULER, add_executor_flags
from ..sweeps.store import results_root
from ..worldmap.compute import CellsOutcome
from ..worldmap.grid import MapGrid, run_map
from .common import CliError, Parser, store_disk_line, write_output

MAP_FILE = "map.json"


def _parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="python -m allseason map",
        description="Compute a map of where All-Season wins: a grid over two knobs of a "
        "world (default: season length x noise), each cell a tuned contest on 10 seeds, "
        "then the named worlds raced and placed on it. Every run is stored at once in "
        "OUT/results.sqlite: run the same command again to resume. Writes OUT/map.json.",
    )
    p.add_argument(
        "--grid",
        metavar="FILE",
        help="a grid file (.toml or .json); default: the shipped map's grid",
    )
    add_executor_flags(p)
    p.add_argument("--out", metavar="DIR", help="results folder (default: RESULTS/map-NAME)")
    p.add_argument("--no-worlds", action="store_true", help="do not race the named worlds")
    p.add_argument(
        "--no-screening", action="store_true", help="do not run the screening of the knobs"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="check the grid and print its cells, runs, steps and memory; run none",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def describe(grid: MapGrid) -> str:
    """One line: the grid's cells, runs, steps and the memory of its largest run."""
    from ..worldmap.grid import runs_per_cell

    n_cells = len(grid.cells())
    return (
        f"map {grid.name!r}: {n_cells} cells x {runs_per_cell()} runs = "
        f"{n_cells * runs_per_cell():,} runs, {grid.total_steps():,} steps, about "
        f"{grid.cost_seconds():,.0f} CPU-seconds (estimated); the largest run "
        f"takes about {grid.max_run_bytes() / 1e6:,.0f} MB (then the screening and the named "
        f"worlds, unless --no-screening / --no-worlds)"
    )


def _n_runs(grid: MapGrid) -> int:
    from ..worldmap.grid import runs_per_cell

    return len(grid.cells()) * runs_per_cell()


def compute(
    grid: MapGrid, out, *, worlds: bool = True, screening: bool = True, **kw
) -> tuple[dict | None, CellsOutcome]:
    """The map of ``grid`` in ``out``; with ``screening``, the screening of the knobs
    (``snapshot["screening"]``, in ``out/screening``); with ``worlds``, the named worlds
    checked on it (``snapshot["worlds"]``); (None, outcome) when interrupted or a run
    failed."""
    from ..worldmap.worlds import check_named

    t0 = time.perf_counter()
    snap, res = run_map(grid, out, **kw)
    if snap is None:
        return None, res
    snap["seconds_map"] = snap.pop("seconds")
    if screening:
        from ..worldmap.screen import effects, run_screening

        t1 = time.perf_counter()
        points, cells = run_screening(Path(out) / "screening", **kw)
        if cells is None:
            return None, res
        snap["screening"] = {
            lab: effects(points, cells, lab) for lab in ("allseason-sw", "allseason-disc")
        }
        snap["screening_points"] = [
            {"knob": k, "level": v, "knobs": kn.to_dict(), **c}
            for (k, v, kn), c in zip(points, cells)
        ]
        snap["seconds_screening"] = time.perf_counter() - t1
    if worlds:
        t1 = time.perf_counter()
        rows = check_named(snap, Path(out) / "worlds", **kw)
        if any(r["raced"] is None for r in rows):
            return None, res
        snap["worlds"] = rows
        snap["seconds_worlds"] = time.perf_counter() - t1
    snap["seconds"] = time.perf_counter() - t0
    return snap, res


def cli_map(argv) -> int:
    """0 when the map is complete (OUT/map.json written), 1 if runs failed, 130 if
    interrupted, 2 on bad input."""
    from ..worldmap.snapshot import regions

    grid = out = None
    try:
        args = _parser().parse_args(list(argv))
        if args.scheduler is not None and not SCHEDULER.fullmatch(args.scheduler):
            raise CliError(
                f"--scheduler: expected an address like tcp://host:8786, got {args.scheduler!r}"
            )
        grid = MapGrid.from_file(args.grid) if args.grid else MapGrid()
        if args.dry_run:
            print(describe(grid))
            return 0
        out = Path(args.out) if args.out else results_root() / f"map-{grid.name}"
        if out.exists() and not out.is_dir():
            raise CliError(f"--out: {str(out)!r} is a file, not a folder")
        ex = {
            k: getattr(args, k)
            for k in ("processes", "workers", "scheduler")
            if getattr(args, k) is not None
        }
        snap, res = compute(
            grid,
            out,
            worlds=not args.no_worlds,
            screening=not args.no_screening,
            progress=not args.quiet,
            **ex,
        )
    except (OSError, sqlite3.Error) as e:  # a full or read-only disk: one line that says so
        line = store_disk_line(e, out, _n_runs(grid)) if out and grid else None
        print(f"error: {line or e}", file=sys.stderr)
        return 2
    except (CliError, SpecError, SweepError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted: every stored run is kept; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    if res.interrupted:
        print(
            f"interrupted: runs are stored in {out}; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    if snap is None:
        for line in res.errors[:5]:
            print(f"failed: {line}", file=sys.stderr)
        print("some runs failed (not stored; a rerun retries them)", file=sys.stderr)
        return 1
    snap["executor"] = ex or {"processes": "all cores"}
    text = json.dumps(snap, indent=1, sort_keys=True) + "\n"
    try:
        write_output(
            out / MAP_FILE,
            text,
            "--out",
            f"every run is stored in {str(out)!r}; free some space and run the same command "
            "again (it runs nothing more and writes the map)",
        )
    except CliError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for r in regions(snap):
        print(r["sentence"])
    for w in snap.get("worlds", []):
        p, r = w["prediction"], w["raced"]
        print(
            f"{w['name']}: map says {p['allseason-sw']['verdict']} "
            f"({p['allseason-sw']['diff']:+.3f}); raced {r['allseason-sw']['diff']:+.3f} "
            f"± {r['allseason-sw']['half']:.3f} against {r['best_baseline']}"
        )
    print(f"map: {out / MAP_FILE} ({snap['runs']} runs, {snap['seconds']:.0f} s)", file=sys.stderr)
    return 0


__all__ = ["cli_map", "compute", "MAP_FILE"]
