"""``python -m allseason sweep FILE ...`` and ``python -m allseason report DIR``: one clear
line on stderr and exit code 2 on bad input, never a traceback."""

from __future__ import annotations

import argparse
import json
import os
import re
import sqlite3
import sys
from pathlib import Path

from ..files import safe_base_name
from ..specs import SpecError
from ..stats import ci95_halfwidth
from .execute import SweepError, run_sweep
from .spec import METRICS, SweepSpec
from .store import (
    SPEC_FILE,
    STORE_FILE,
    ResultStore,
    best_settings,
    load_runs,
    results_root,
    settings_table,
)


def report_text(
    folder, metric: str | None = None, top: int = 1, everything: bool = False
) -> tuple[str, object]:
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


class _CliError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _CliError(message)


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return n


def _sweep_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m allseason sweep",
        description="Run a sweep file (TOML or JSON): scenarios x hyperparameter "
        "grids x seeds. Every finished run is stored at once in "
        "OUT/results.sqlite; run the same command again to resume.",
    )
    p.add_argument("file", metavar="FILE", help="the sweep, .toml or .json")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--processes",
        type=_positive,
        metavar="N",
        help="local worker processes (default: every usable core)",
    )
    where.add_argument(
        "--workers",
        type=_positive,
        metavar="N",
        help="start a Dask LocalCluster of N single-threaded worker processes "
        "(Dask: pip install 'allseason[sweeps]')",
    )
    where.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="use a running Dask scheduler, e.g. tcp://host:8786 (Dask: pip "
        "install 'allseason[sweeps]')",
    )
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
    try:
        args = _sweep_parser().parse_args(list(argv))
        if args.scheduler is not None and not re.fullmatch(
            r"(tcp|tls|inproc|ucx|ws|wss)://"
            r"\S+",
            args.scheduler,
        ):
            raise _CliError(
                f"--scheduler: expected an address like tcp://host:8786, got {args.scheduler!r}"
            )
        spec = SweepSpec.from_file(args.file)
        # a name from the file's content: one safe folder inside the results folder
        out = Path(args.out) if args.out else results_root() / safe_base_name(spec.name, "sweep")
        if out.exists() and not out.is_dir():
            raise _CliError(f"--out: {str(out)!r} is a file, not a folder")
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
                f"{n_have} stored in {out}, {len(units) - n_have} to run"
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
    except (_CliError, SpecError, SweepError, OSError, sqlite3.Error) as e:
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
    p = _Parser(
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
        "--top", type=_positive, default=1, metavar="N", help="settings shown per algorithm (1)"
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
    is the report); a _CliError when ``--html`` asked for it."""
    try:
        from ..viz.sweep import sweep_figure
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] != "plotly":
            raise
        if html:
            raise _CliError(f"--html: {PLOTLY_MISSING}, or leave --html out") from None
        print(f"no plot: {PLOTLY_MISSING}; --no-html to say none", file=sys.stderr)
        return None
    return sweep_figure


def cli_report(argv) -> int:
    """``python -m allseason report DIR``: print the best settings, write DIR/report.html."""
    try:
        args = _report_parser().parse_args(list(argv))
        folder = Path(args.folder)
        if not folder.is_dir():
            raise _CliError(f"DIR: no such folder {args.folder!r}")
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
    except (_CliError, SpecError, OSError, sqlite3.Error) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
