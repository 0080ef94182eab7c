"""``python -m allseason paper``: the command line of the paper's real-data tables.

It runs :func:`allseason.paper.runs.reproduce_protocols` and, with ``--snapshot``, writes the
tracked snapshot with :func:`allseason.paper.tables_snapshot.write`. It lives in a module of its
own so that the reproduction and the snapshot (which reads the reproduction's store) never
import each other: the imports go ``cli -> tables_snapshot -> reproduce`` and ``cli -> runs``.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..envs.classification import HORIZON, TABLE_KEYS
from ..limits import MAX_PAPER_SEEDS
from ..paper import tables_snapshot as paper_snapshot
from ..paper.protocol import SEEDS, VALIDATIONS, Protocol
from ..paper.report import format_comparison, format_side_by_side
from ..paper.runs import RunsFailed, reproduce_protocols, results_dir
from ..sweeps.execute import SweepError
from ..sweeps.flags import add_executor_flags, executor_from_args
from ..sweeps.store import STORE_FILE


def cli(argv: list[str]) -> int:
    """``python -m allseason paper --table T [--table T2 ...] | --all``: one line and exit 2
    on a user error (including missing data, with the command that installs it, and another
    run writing into the same folder); 1 if some runs failed; 130 if interrupted."""
    from ..envs.datasets import DataUnavailable

    try:
        args = _parser().parse_args(argv)
        tables, names, protocols = _settings(args)
        executor = executor_from_args(args, default_all_cores=True)
        t0 = time.perf_counter()
        frames = reproduce_protocols(
            tables, protocols, out=args.out, progress=not args.quiet, **executor
        )
    except RunsFailed as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "interrupted: every finished run is stored; run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    except DataUnavailable as e:  # one line: what is missing, and the command that installs it
        print(f"error: {e.dataset}: {e.problem}; install it with: {e.install}", file=sys.stderr)
        return 2
    except (ValueError, OSError, SweepError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for table in tables:
        if len(protocols) == 1:
            print(format_comparison(table, frames[names[0], table], protocols[0]))
        else:
            print(format_side_by_side(table, {v: frames[v, table] for v in names}))
        print()
    folder = results_dir(args.out)
    print(
        f"saved in {folder}/ ({STORE_FILE}, "
        f"{', '.join(f'{t}-{v}.csv' for v in names for t in tables)}) in "
        f"{time.perf_counter() - t0:.0f} s"
    )
    if args.snapshot:
        path = paper_snapshot.write(
            out=args.out, protocols=protocols, command="python -m allseason paper " + " ".join(argv)
        )
        print(f"snapshot: {path}")
    return 0


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise ValueError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="python -m allseason paper",
        description="Reproduce the paper's section 6 tables: grid search on the first "
        "10% of the data, then the seeds; print ours beside the paper's.",
    )
    p.add_argument(
        "--table",
        action="append",
        choices=list(TABLE_KEYS),
        help="a table to reproduce (repeat for several)",
    )
    p.add_argument("--all", action="store_true", help="all four tables")
    p.add_argument("--seeds", type=int, default=SEEDS, help=f"test seeds (default {SEEDS})")
    p.add_argument(
        "--n",
        type=int,
        default=HORIZON,
        help=f"observations (default {HORIZON:,}, the paper's; fewer for a quick look)",
    )
    p.add_argument(
        "--validation",
        choices=[*VALIDATIONS, "both"],
        default="prefix",
        help="grid search on the first 10%% of the pattern itself (prefix, the "
        "paper's text; default) or on the pattern shrunk to 10%% (shrunk); "
        "both: the two, printed side by side",
    )
    add_executor_flags(p)
    p.add_argument(
        "--out",
        default=None,
        help="results folder (default RESULTS/paper; RESULTS = $ALLSEASON_RESULTS, "
        "else results/ in the repository checkout, else ./results)",
    )
    p.add_argument(
        "--snapshot",
        action="store_true",
        help="then write the tracked snapshot of the test cells "
        "(allseason/paper/tables_snapshot.json) from the store",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def _settings(args: argparse.Namespace) -> tuple[list[str], list[str], list[Protocol]]:
    """(tables, validation names, protocols) from the parsed flags; ValueError naming a bad one."""
    if bool(args.all) == bool(args.table):
        raise ValueError("give --table NAME (one or more) or --all")
    if not 1 <= args.seeds <= MAX_PAPER_SEEDS:
        raise ValueError(f"--seeds: must be in 1..{MAX_PAPER_SEEDS}, got {args.seeds}")
    if not 500 <= args.n <= HORIZON:
        raise ValueError(f"--n: must be in 500..{HORIZON}, got {args.n}")
    tables = list(TABLE_KEYS) if args.all else list(dict.fromkeys(args.table))
    names = list(VALIDATIONS) if args.validation == "both" else [args.validation]
    return tables, names, [Protocol(n=args.n, seeds=args.seeds, validation=v) for v in names]
