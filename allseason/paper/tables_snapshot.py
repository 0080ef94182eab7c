"""A small tracked snapshot of the paper tables' test cells, so the Paper tables page shows
our numbers on a fresh clone (no results folder, no data sets).

``python -m allseason.paper.tables_snapshot [--out DIR] [--validation prefix|shrunk|both] [--n N]
[--seeds S]`` (or ``python -m allseason paper ... --snapshot``) reads the results store
(nothing is run) and writes :data:`PATH` (``allseason/paper/tables_snapshot.json``): per
(protocol, table, pattern, row) the chosen params, the seeds and their mean rewards, mean and
std, the paper's numbers; plus the commit, the command and each protocol.
``tests/paper/test_tables_snapshot.py`` reruns one test cell per table at its stored seed and
params and checks the per-seed value equals the snapshot's exactly (the engine is
deterministic given the seed).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

PATH = Path(__file__).with_name("tables_snapshot.json")
FORMAT = 1


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=PATH.parent,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def compute(out=None, protocols=None, command: str = "") -> dict:
    """The snapshot of the store in ``out`` (default :func:`allseason.paper.reproduce.results_dir`)
    for ``protocols`` (default: the paper's n and seeds, both validation protocols): the
    measured test cells only. Raises ValueError if no cell is measured."""
    import pandas as pd

    from . import reproduce as R
    from . import tables as paper_tables

    protocols = (
        list(protocols)
        if protocols is not None
        else [R.Protocol(validation=v) for v in R.VALIDATIONS]
    )
    runs = R.load_runs(out)
    protocols_of: dict[str, dict] = {}  # validation: the protocol's settings
    cells: list[dict] = []
    snap = {
        "format": FORMAT,
        "commit": _commit(),
        "command": command or "python -m allseason.paper.tables_snapshot",
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "protocols": protocols_of,
        "cells": cells,
    }
    for p in protocols:
        protocols_of[p.validation] = dict(
            key=p.key(),
            n=p.n,
            seeds=p.seeds,
            validation_seeds=p.validation_seeds,
            validation=p.validation,
            label=p.label,
            n_validation=p.n_validation,
            validation_pattern_n=p.validation_pattern_n,
            sigma2=R.SIGMA2,
            lam=R.LAM,
            root_seed=R.ROOT_SEED,
        )
        for table in paper_tables.TABLES:
            frame = R.table_frame(table, runs, p)
            for r in frame.itertuples():
                if pd.isna(r.mean):
                    continue
                cells.append(
                    dict(
                        protocol=p.validation,
                        table=table,
                        pattern=r.pattern,
                        row=r.algorithm,
                        label=r.label,
                        params=json.loads(r.params),
                        seeds=list(r.seed_list),
                        per_seed=list(r.per_seed),
                        mean=float(r.mean),
                        std=float(r.std),
                        paper_mean=float(r.paper_mean),
                        paper_std=float(r.paper_std),
                    )
                )
    if not cells:
        raise ValueError(
            f"no measured test cell in {R.results_dir(out)} for "
            f"{', '.join(p.validation for p in protocols)} at n = "
            f"{protocols[0].n if protocols else '?'}: run the paper command first"
        )
    return snap


def write(out=None, protocols=None, command: str = "", path=None) -> Path:
    """Compute the snapshot from the store and write it (atomically); returns its path."""
    import os

    path = Path(path) if path is not None else PATH
    text = json.dumps(compute(out, protocols, command), indent=1) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def load(path=None) -> dict | None:
    """The tracked snapshot, or None if there is none yet."""
    path = Path(path) if path is not None else PATH
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def frame(snap: dict, table: str, validation: str):
    """One table of the snapshot as :func:`allseason.paper.reproduce.table_frame` lays it out
    (every row of the table; cells not in the snapshot are NaN)."""
    import pandas as pd

    from . import tables as paper_tables

    cells = [c for c in snap["cells"] if c["table"] == table and c["protocol"] == validation]
    measured = pd.DataFrame(
        [
            dict(
                algorithm=c["row"],
                pattern=c["pattern"],
                mean=c["mean"],
                std=c["std"],
                seeds=len(c["per_seed"]),
                params=json.dumps(c["params"], sort_keys=True),
            )
            for c in cells
        ],
        columns=["algorithm", "pattern", "mean", "std", "seeds", "params"],
    )
    cmp = paper_tables.compare(
        table, measured[["algorithm", "pattern", "mean", "std"]], rows=paper_tables.ROWS
    )
    return cmp.merge(
        measured[["algorithm", "pattern", "seeds", "params"]],
        on=["algorithm", "pattern"],
        how="left",
    )


def main(argv=None) -> int:
    """The command line: one line and exit 2 on a bad flag or an empty store."""
    import argparse

    from ..envs.classification import HORIZON
    from . import reproduce as R

    class _Parser(argparse.ArgumentParser):
        def error(self, message):
            raise ValueError(message)

    p = _Parser(
        prog="python -m allseason.paper.tables_snapshot",
        description="Write allseason/paper/tables_snapshot.json from the stored paper runs.",
    )
    p.add_argument("--out", default=None, help="results folder (as for the paper command)")
    p.add_argument("--validation", choices=[*R.VALIDATIONS, "both"], default="both")
    p.add_argument("--n", type=int, default=HORIZON)
    p.add_argument("--seeds", type=int, default=R.SEEDS)
    p.add_argument("--path", default=None, help=f"where to write (default {PATH})")
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = p.parse_args(argv)
        names = list(R.VALIDATIONS) if args.validation == "both" else [args.validation]
        protocols = [R.Protocol(n=args.n, seeds=args.seeds, validation=v) for v in names]
        path = write(
            args.out,
            protocols,
            " ".join(["python -m allseason.paper.tables_snapshot", *argv]),
            args.path,
        )
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"snapshot: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
