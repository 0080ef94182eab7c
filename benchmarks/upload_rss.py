"""Peak memory of reading one upload, per shape of file: is it bounded by the file's size?

Each shape is written to a temporary folder, then read in a fresh subprocess by
``api.read_user_file`` with the app's limits (``offline.APP_LIMITS``: 200,000 rows, 20 MB), the
Your data page's path. The child imports everything and reads a tiny file first, notes its
peak RSS (``VmHWM`` in /proc/self/status: the base), then reads the file's bytes and parses
them, and notes its peak again. The table gives the growth (peak - base) against the file's
size. Linux only (``/proc``); no psutil.

    python benchmarks/upload_rss.py            # every shape (about a minute)
    python benchmarks/upload_rss.py wide huge  # some of them
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MB = 1_000_000

CHILD = r"""
import json, sys, time
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
from allseason import api
from allseason.logs import offline
try:
    api.read_user_file(b"timestamp,arm,reward\n1,a,0\n2,b,1\n", limits=offline.APP_LIMITS)
    api.read_user_file(b'"timestamp",arm,reward\n1,a,0\n2,b,1\n', limits=offline.APP_LIMITS)
except api.SpecError:
    pass
base = hwm()
raw = open(sys.argv[1], "rb").read()
t0 = time.perf_counter()
try:
    out = api.read_user_file(raw, limits=offline.APP_LIMITS)
    result = f"accepted: {out.n_events:,} events, {out.n_arms} arms"
except api.SpecError as e:
    result = "refused: " + e.message.splitlines()[0][:70]
print(json.dumps(dict(base=base, peak=hwm(), seconds=time.perf_counter() - t0, result=result)))
"""


def _write(path: Path, header: str, row, n: int) -> None:
    with open(path, "w") as fh:
        fh.write(header + "\n")
        for i in range(n):
            fh.write(row(i) + "\n")


def shapes(folder: Path) -> dict[str, tuple[str, Path]]:
    """{name: (what it is, path)}: the worst shapes found for the reader."""
    out = {}

    def make(name, what, header, row, n):
        path = folder / f"{name}.csv"
        _write(path, header, row, n)
        out[name] = (what, path)

    wide = ",".join(f"c{k}" for k in range(500))
    zeros = ",".join("0" for _ in range(500))
    make(
        "wide",
        "500 unused columns, 19,000 rows",
        "timestamp,arm,reward," + wide,
        lambda i: f"{i},{i % 10},{i % 2},{zeros}",
        19_000,
    )
    make(
        "widest",
        "100,000 columns (the most read), 180 rows",  # 3 + 99,997
        "timestamp,arm,reward," + ",".join(f"c{k}" for k in range(99_997)),
        lambda i: f"{i},{i % 10},{i % 2}," + ",".join("" for _ in range(99_997)),
        180,
    )
    make(
        "too_wide",
        "a header of 2,000,000 columns (refused: over 100,000)",
        "timestamp,arm,reward," + ",".join("c" for _ in range(2_000_000)),
        lambda i: f"{i},{i % 10},{i % 2}",
        3,
    )
    make(
        "huge",
        "1,000 rows, one 1 MB cell in an unused column (issue 27: 8 GB before)",
        "timestamp,arm,reward,notes",
        lambda i: f"{i},{i % 10},{i % 2}," + ("x" * 1_000_000 if i == 500 else "y"),
        1000,
    )
    make(
        "huge19",
        "one 19 MB cell in an unused column",
        "timestamp,arm,reward,notes",
        lambda i: f"{i},{i % 10},{i % 2}," + ("x" * 19_000_000 if i == 1 else "y"),
        3,
    )
    make(
        "cell_used",
        "one 19 MB cell in the arm column (refused: a cell over 1,000 characters)",
        "timestamp,arm,reward",
        lambda i: f"{i},{'a' * 19_000_000 if i == 1 else 'b'},0",
        3,
    )
    _big_shapes(make)
    return out


def _big_shapes(make) -> None:
    """The shapes near the app's limits of rows and bytes."""
    make(
        "labels",
        "200,000 rows, each a distinct arm label (refused: over 100 arms)",
        "timestamp,arm,reward",
        lambda i: f"{i},item_{i:07d}_{'z' * 60},{i % 2}",
        200_000,
    )
    make(
        "largest",
        "the largest accepted: 200,000 rows, Unix ms, 5 arms, 13 numeric context columns",
        "timestamp,arm,reward,propensity," + ",".join(f"x{k}" for k in range(13)),
        lambda i: (
            f"{1574553634000 + i},item_{i % 5},{int(i % 97 == 0)},0.2,"
            + ",".join(f"{((i * (k + 3)) % 100) / 100:.2f}" for k in range(13))
        ),
        200_000,
    )
    make(
        "obd_like",
        "an OBD-like log: an index, 90 columns, UTC offsets, 38,000 rows",
        ",timestamp,item_id,position,click,propensity_score,"
        + ",".join(f"user_feature_{k}" for k in range(4))
        + ","
        + ",".join(f"user-item_affinity_{k}" for k in range(80)),
        lambda i: (
            f"{i},2019-11-24 00:{(i // 60) % 60:02d}:{i % 60:02d}.{i:06d}+00:00,"
            f"{i % 80},{i % 3 + 1},{int(i % 200 == 0)},0.0125,"
            + ",".join("81ce123cbb5bd8ce818f60fb3586bba5" for _ in range(4))
            + ","
            + ",".join("0.0" for _ in range(80))
        ),
        38_000,
    )
    make(
        "quoted",
        "every cell quoted (Python's csv counts the fields), 200,000 rows",
        '"timestamp","arm","reward","note"',
        lambda i: f'"{i}","{i % 10}","{i % 2}","a, b and ""c"""',
        200_000,
    )
    make(
        "short_rows",
        "1,900,000 short rows (refused: over 200,000 rows)",
        "timestamp,arm,reward",
        lambda i: f"{i % 10},{i % 2},0",
        1_900_000,
    )


def measure(path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="upload_rss_") as tmp:
        all_shapes = shapes(Path(tmp))
        names = argv or list(all_shapes)
        print("| shape | file | base | peak | growth | growth / file | seconds | result |")
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        for name in names:
            what, path = all_shapes[name]
            size = path.stat().st_size
            m = measure(path)
            growth = m["peak"] - m["base"]
            print(
                f"| {name}: {what} | {size / MB:.1f} MB | {m['base'] / MB:.0f} MB | "
                f"{m['peak'] / MB:.0f} MB | {growth / MB:.1f} MB | {growth / size:.1f} | "
                f"{m['seconds']:.2f} | {m['result']} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
