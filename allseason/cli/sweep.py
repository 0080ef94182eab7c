"""``python -m allseason sweep FILE ...`` and ``python -m allseason report DIR``: one clear
line on stderr and exit code 2 on bad input, never a traceback."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from pathlib import Path

from ..costs import estimate_units
from ..files import safe_base_name
from ..specs import SpecError
from ..sweeps.execute import SweepError, run_sweep
from ..sweeps.flags import SCHEDULER, add_executor_flags, positive
from ..sweeps.report import _saved_spec, report_text
from ..sweeps.spec import METRICS, SweepSpec
from ..sweeps.store import (
    STORE_FILE,
    ResultStore,
    results_root,
)
from .common import CliError, Parser, store_disk_line


def _sweep_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="python -m allseason sweep",
        description="Run a sweep file (TOML or JSON): scenarios x hyperparameter "
        "grids x seeds. Every finished run is stored at once in "
        "OUT/results.sqlite; run the same command again to resume.",
    )
    p.add_argument("file", metavar="FILE", help="the sweep, .toml or .json")
    add_executor_flags(p)
    p.add_argument(
        "--out",
        metavar="DIR",
        help="results folder (default: RESULTS/NAME, "
        "RESULTS = $ALLSEASON_RESULTS, else results/ in the repository checkout, "
        "else ./results)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print how many runs the sweep has and how many are stored; run none",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def cli_sweep(argv) -> int:
    """``python -m allseason sweep FILE [--processes N | --workers N | --scheduler ADDR]
    [--out DIR]``: 0 when every run is stored, 1 if some runs failed, 130 if interrupted
    (Ctrl-C), 2 on bad input (one line on stderr, never a traceback)."""
    spec = out = None
    try:
        args = _sweep_parser().parse_args(list(argv))
        if args.scheduler is not None and not SCHEDULER.fullmatch(args.scheduler):
            raise CliError(
                f"--scheduler: expected an address like tcp://host:8786, got {args.scheduler!r}"
            )
        spec = SweepSpec.from_file(args.file)
        # a name from the file's content: one safe folder inside the results folder
        out = Path(args.out) if args.out else results_root() / safe_base_name(spec.name, "sweep")
        if out.exists() and not out.is_dir():
            raise CliError(f"--out: {str(out)!r} is a file, not a folder")
        if args.dry_run:
            units = spec.units()
            have = set()
            if (out / STORE_FILE).is_file():
                with ResultStore(out, create=False) as store:
                    have = store.keys()
            n_have = sum(u.key in have for u in units)
            print(
                f"sweep {spec.name!r}: {len(spec.scenarios)} scenarios x "
                f"{spec.n_settings} settings x {len(spec.seeds)} seeds = {len(units)} runs; "
                f"{n_have} stored in {out}, {len(units) - n_have} to run, about "
                f"{estimate_units([u for u in units if u.key not in have]):,.0f} CPU-seconds "
                "(estimated)"
            )
            return 0
        outcome = run_sweep(
            spec,
            out,
            processes=args.processes,
            workers=args.workers,
            scheduler=args.scheduler,
            progress=not args.quiet,
        )
    except (OSError, sqlite3.Error) as e:  # a full or read-only disk: one line that says so
        line = store_disk_line(e, out, len(spec.units())) if out and spec else None
        print(f"error: {line or e}", file=sys.stderr)
        return 2
    except (CliError, SpecError, SweepError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the runs started (or while a cluster was starting)
        print(
            "interrupted: every stored run is kept; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    if outcome.interrupted:
        print(
            f"interrupted: {outcome.n_stored_before + outcome.n_ran} of {outcome.n_runs} "
            f"runs stored in {out}; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    for line in outcome.errors[:5]:
        print(f"failed: {line}", file=sys.stderr)
    if outcome.n_failed:
        print(f"{outcome.n_failed} runs failed (not stored; a rerun retries them)", file=sys.stderr)
        return 1
    if not args.quiet:
        rate = f" in {outcome.seconds:.1f} s" if outcome.n_ran else " (nothing to do)"
        print(
            f"done: {outcome.n_runs} runs stored in {out}{rate}; "
            f"see: python -m allseason report {out}",
            file=sys.stderr,
        )
    return 0


def _report_parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="python -m allseason report",
        description="Best settings per algorithm (mean ± std over seeds) of a sweep's "
        "results folder, and an HTML plot (reward against each "
        "hyperparameter, one line per algorithm).",
    )
    p.add_argument("folder", metavar="DIR", help="a sweep's results folder (--out of sweep)")
    p.add_argument(
        "--metric", choices=list(METRICS), help="rank by this metric (default: the sweep's)"
    )
    p.add_argument(
        "--top", type=positive, default=1, metavar="N", help="settings shown per algorithm (1)"
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="every run in the store, not only those of the last sweep run there",
    )
    p.add_argument("--html", metavar="FILE", help="the plot's file (default: DIR/report.html)")
    p.add_argument("--no-html", action="store_true", help="print the table only")
    p.add_argument("--csv", metavar="FILE", help="also write the table of settings as CSV")
    return p


PLOTLY_MISSING = "the HTML plot needs plotly: pip install 'allseason[app]' (or plotly)"


def _figure_maker(html: str | None):
    """``viz.sweep.sweep_figure``, imported here only (it needs plotly, the app's extra).
    Without plotly: None and one line on stderr when the plot was only the default (the table
    is the report); a CliError when ``--html`` asked for it."""
    try:
        from ..viz.sweep import sweep_figure
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] != "plotly":
            raise
        if html:
            raise CliError(f"--html: {PLOTLY_MISSING}, or leave --html out") from None
        print(f"no plot: {PLOTLY_MISSING}; --no-html to say none", file=sys.stderr)
        return None
    return sweep_figure


def cli_report(argv) -> int:
    """``python -m allseason report DIR``: print the best settings, write DIR/report.html."""
    try:
        args = _report_parser().parse_args(list(argv))
        folder = Path(args.folder)
        if not folder.is_dir():
            raise CliError(f"DIR: no such folder {args.folder!r}")
        text, settings = report_text(folder, args.metric, args.top, args.all)
        print(text)
        if args.csv and len(settings):
            settings.drop(columns=["params"]).to_csv(args.csv, index=False)
            print(f"settings table: {args.csv}")
        sweep_figure = None if args.no_html or not len(settings) else _figure_maker(args.html)
        if sweep_figure is not None:
            spec = _saved_spec(folder)
            metric = args.metric or (spec.metric if spec else "mean_reward")
            title = f"Sweep {spec.name!r}" if spec else f"Sweep in {folder}"
            fig = sweep_figure(settings, metric, title=title)
            html = Path(args.html) if args.html else folder / "report.html"
            tmp = html.with_name(f".{html.name}.{os.getpid()}.tmp")
            fig.write_html(
                tmp,
                include_plotlyjs=True,
                full_html=True,
                config={"displaylogo": False, "responsive": True},
            )
            os.replace(tmp, html)
            print(f"plot: {html}")
    except (CliError, SpecError, OSError, sqlite3.Error) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
