"""Diagnostic, not the reproduction: how much did the grid search on the first 10% cost?

Runs every grid point of the given policies on the *full* test data (30,000 images, one seed)
and prints, per table and pattern, the score of the protocol's choice beside the best grid
point in hindsight ("oracle"). The oracle peeks at the test data, so it is never reported as
our result; it only separates "the algorithm cannot" from "the validation run chose badly".

    python benchmarks/paper_grid_oracle.py --table mnist-10arm --table fmnist-10arm \\
        --validation prefix --out /path/to/results/paper

Runs are stored with phase "oracle" in the reproduction's store (results.sqlite, table
paper_runs; resumable), under the protocol whose choice they are compared with.
"""

from __future__ import annotations

import argparse
import os
import sys

from allseason.paper import reproduce as R
from allseason.paper.tables import PATTERNS

POLICIES = (
    "allseason-sw",
    "allseason-disc",
    "allseason-sw-printed",
    "allseason-disc-printed",
    "sw-lints",
    "d-lints",
)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", action="append", required=True, choices=list(R.TABLE_KEYS))
    p.add_argument("--policies", default=",".join(POLICIES))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    p.add_argument("--validation", choices=R.VALIDATIONS, default="prefix")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    protocol = R.Protocol(validation=args.validation)
    policies = args.policies.split(",")
    folder = R.results_dir(args.out)
    jobs = [
        R.Job(
            "oracle",
            table,
            pattern,
            pol,
            R._params_json(params),
            args.seed,
            protocol.n,
            protocol.n,
            protocol.key(),
        )
        for table in args.table
        for pattern in PATTERNS
        for pol in policies
        for params in R.GRIDS[pol]
    ]
    R.execute_jobs(
        jobs, folder, processes=args.processes, progress=True, stream=sys.stderr, title="oracle"
    )
    runs = R.load_runs(folder)
    runs = runs[runs.protocol == protocol.key()]
    for table in args.table:
        print(f"\n{table}: protocol's choice vs best grid point in hindsight (seed {args.seed})")
        print(R.oracle_frame(table, runs, protocol).to_string(index=False, float_format="%.3f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
