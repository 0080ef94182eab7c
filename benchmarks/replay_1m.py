"""Replaying a 1,000,000-row log with the default offline contestants (docs/your-data.md).

The log is the OBD-shaped example of :mod:`allseason.logs.examples` at 1,000,000 rows (10 items,
uniform logging, so about 100,000 kept events per policy and seed), written to a temporary
file and run through ``python -m allseason replay`` as a user would: parsing and checking
the file, then 6 policies x N seeds of fast replay with pi at every event, IPS, SNIPS, DR
and DM, on the sweep engine's local process pool (``--processes``).

    python benchmarks/replay_1m.py [--rows 1000000] [--seeds 5] [--processes 1 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from allseason import api
from allseason.logs import examples


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--processes", type=int, nargs="+", default=[2])
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log.csv"
        path.write_bytes(examples.obd_log(n_rows=args.rows))
        t0 = time.perf_counter()
        log = api.read_user_file(path.read_bytes())
        parse = time.perf_counter() - t0
        print(
            f"{args.rows:,} rows, {path.stat().st_size / 1e6:.1f} MB: parsed and checked in "
            f"{parse:.1f} s"
        )
        for procs in args.processes:
            t0 = time.perf_counter()
            out = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "allseason",
                    "replay",
                    str(path),
                    "--seeds",
                    str(args.seeds),
                    "--processes",
                    str(procs),
                ],
                capture_output=True,
                text=True,
            )
            wall = time.perf_counter() - t0
            print(out.stdout[-4000:], out.stderr[-500:])
            print(
                f"python -m allseason replay --processes {procs}: {wall:.0f} s wall on "
                f"{cores} cores ({len(api.OFFLINE_POLICIES)} policies x {args.seeds} seeds, "
                f"{log.n_events:,} events; load average {os.getloadavg()[0]:.1f})",
                flush=True,
            )


if __name__ == "__main__":
    main()
