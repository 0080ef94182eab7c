"""Seconds per run of the paper's real-data policies (``python -m allseason paper``).

Each case is one :func:`allseason.paper.reproduce.run_job` (the policy's play time, as stored in
runs.csv; the data set-up is cached and not counted), median of ``--repeat`` runs after a
short warm-up run that compiles the kernels. Sizes: ``full`` = the test run (30,000 steps),
``validation`` = the grid search's run (3,000 steps). Run it on two checkouts and compare::

    PYTHONPATH=. python benchmarks/bench_paper_runs.py --json after.json
    python benchmarks/bench_paper_runs.py --compare before.json after.json

Uses only ``reproduce.Job`` / ``reproduce.run_job``, so it runs on older checkouts too.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

CASES = {  # label: (policy, params)
    "lints": ("lints", {}),
    "sw-lints": ("sw-lints", {"tau": 500}),
    "d-lints": ("d-lints", {"gamma": 0.999}),
    "allseason-sw fixed-share": ("allseason-sw", {"tau": 500, "n_max": 5}),
    "allseason-sw printed": ("allseason-sw", {"tau": 500, "n_max": 5, "weighting": "batch"}),
    "allseason-disc fixed-share": ("allseason-disc", {"gamma": 0.99, "n_max": 5}),
    "allseason-disc printed": ("allseason-disc", {"gamma": 0.99, "n_max": 5, "weighting": "batch"}),
    "denband": ("denband", {"tau": 1000, "delta_l": 0.25}),
    "bob": ("bob", {"S": 1.0, "L": 1.0}),
    "random": ("random", {}),
}
SIZES = {"full": ("test", 30_000, 0), "validation": ("validation", 3_000, 1000)}


def measure(table: str, pattern: str, labels, sizes, repeat: int) -> dict:
    """{size: {label: median seconds}}; prints each case as it is measured."""
    from allseason.paper import reproduce

    out: dict = {}
    for size in sizes:
        phase, n, seed = SIZES[size]
        out[size] = {}
        for label in labels:
            policy, params = CASES[label]
            job = reproduce.Job(
                phase, table, pattern, policy, json.dumps(params, sort_keys=True), seed, n
            )
            reproduce.run_job(
                reproduce.Job(phase, table, pattern, policy, job.params, seed, 100)
            )  # compile, load the data
            secs = [reproduce.run_job(job)[2] for _ in range(repeat)]
            out[size][label] = statistics.median(secs)
            print(
                f"  {size:10s} {label:28s} {out[size][label]:8.3f} s  "
                f"({', '.join(f'{s:.2f}' for s in secs)})",
                file=sys.stderr,
                flush=True,
            )
    return out


def table(results: list[tuple[str, dict]]) -> str:
    """One row per (size, label); one column per result set, plus the ratio first/last."""
    names = [n for n, _ in results]
    head = f"{'size':10s} {'policy':28s}" + "".join(f" {n[-14:]:>14s}" for n in names)
    if len(results) > 1:
        head += f" {'speed-up':>9s}"
    rows = [head, "-" * len(head)]
    first = results[0][1]
    for size in first:
        for label in first[size]:
            vals = [r.get(size, {}).get(label) for _, r in results]
            row = f"{size:10s} {label:28s}" + "".join(
                f" {v:14.3f}" if v is not None else f" {'-':>14s}" for v in vals
            )
            if len(results) > 1 and vals[0] and vals[-1]:
                row += f" {vals[0] / vals[-1]:8.1f}x"
            rows.append(row)
    return "\n".join(rows)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", default="mnist-10arm")
    ap.add_argument("--pattern", default="regular")
    ap.add_argument(
        "--policies",
        nargs="*",
        default=list(CASES),
        metavar="LABEL",
        help=f"cases to run (default all): {', '.join(CASES)}",
    )
    ap.add_argument("--sizes", nargs="*", default=list(SIZES), choices=list(SIZES))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="also write the medians to this file")
    ap.add_argument(
        "--compare",
        nargs="+",
        metavar="JSON",
        help="only print a table of earlier --json files (first = before)",
    )
    args = ap.parse_args(argv)
    if args.compare:
        print(table([(p, json.load(open(p))) for p in args.compare]))
        return
    import allseason

    print(
        f"allseason from {allseason.__file__}; {args.table}, {args.pattern}, median of "
        f"{args.repeat}",
        file=sys.stderr,
    )
    t0 = time.perf_counter()
    res = measure(args.table, args.pattern, args.policies, args.sizes, args.repeat)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    print(table([("seconds/run", res)]))
    print(f"(total {time.perf_counter() - t0:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
