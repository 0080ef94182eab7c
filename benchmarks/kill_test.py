"""No orphans (issue 33, item 4): SIGKILL ``sweep``, ``map`` and ``replay --processes 2`` at
random moments on tiny inputs, then count the processes left 2 s later, and check that the
resume gives the result of an uninterrupted run.

    python benchmarks/kill_test.py             # 20 kills of each command
    python benchmarks/kill_test.py --kills 5   # fewer (tests/.../test_no_orphans.py uses this)
    python benchmarks/kill_test.py --dask      # on a Dask LocalCluster (--workers 2) instead

Every driver is started with a tag in its environment (``ALLSEASON_KILL_TAG``); its
forkserver and pool workers inherit it, so the processes left are those whose
``/proc/PID/environ`` holds the tag. Each command runs once uninterrupted first (the reference
and its duration); each kill lands at a uniform moment in [0.2 s, that duration]; after the
kills, the same command runs to the end in the killed folder and its stored results
(sweep and map: every row of the store but the timing, worker and date columns; replay: the
CSV but its seconds) must equal the reference's. Survivors, if any, are killed by pid at the
end of each round (they are ours)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CODE = ROOT  # the checkout whose allseason runs (--code: another one, e.g. before a fix)
TAG = "ALLSEASON_KILL_TAG"
# how long, where and on what a result was computed, not what it is
VOLATILE = {"wall_seconds", "policy_seconds", "worker", "finished_at", "seconds", "executor"}

SWEEP = """name = "kill"
seeds = 4
[[scenarios]]
preset = "paper-synthetic"
horizon = 6000
d = 5
n_arms = 5
[[policies]]
name = "allseason-sw"
params = { n_max = 5 }
grid = { tau = [10, 30] }
[[policies]]
name = "sw-lints"
grid = { tau = [50, 200] }
[[policies]]
name = "lints"
"""
GRID = """name = "kill"
x = { knob = "season_length", values = [30, 60] }
y = { knob = "sigma2", values = [0.03, 0.3] }
fixed = { n_states = 2, returns = 1, n_arms = 5, d = 5, batch_size = 1 }
"""


def write_log(path: Path, n: int = 400, seed: int = 0) -> None:
    """A uniform-logging bandit log (timestamp, arm, reward, propensity, x0, x1)."""
    rng = np.random.default_rng(seed)
    arms = rng.integers(0, 4, n)
    x = rng.normal(size=(n, 2))
    reward = (rng.random(n) < 0.2 + 0.1 * (arms == (x[:, 0] > 0))).astype(int)
    lines = ["timestamp,arm,reward,propensity,x0,x1"]
    lines += [
        f"{t},{a},{r},0.25,{u:.4f},{v:.4f}" for t, (a, r, (u, v)) in enumerate(zip(arms, reward, x))
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def commands(work: Path, dask: bool = False) -> dict[str, callable]:
    """name -> (out folder -> argv) of the three commands, on inputs written into ``work``;
    ``dask``: each on a Dask LocalCluster of 2 workers (``--workers 2``)."""
    (work / "sweep.toml").write_text(SWEEP, encoding="utf-8")
    (work / "grid.toml").write_text(GRID, encoding="utf-8")
    write_log(work / "log.csv")
    if dask:
        local = commands(work)
        return {
            name: (
                lambda out, f=f: (
                    [a if a != "--processes" else "--workers" for a in f(out)]
                    if "--processes" in f(out)
                    else [*f(out), "--workers", "2"]
                )
            )
            for name, f in local.items()
        }
    return {
        "sweep": lambda out: ["sweep", str(work / "sweep.toml"), "--out", str(out), "--quiet"],
        "map": lambda out: [
            "map",
            "--grid",
            str(work / "grid.toml"),
            "--out",
            str(out),
            "--no-screening",
            "--no-worlds",
            "--quiet",
        ],
        "replay": lambda out: [
            "replay",
            str(work / "log.csv"),
            "--processes",
            "2",
            "--seeds",
            "2",
            "--policies",
            "allseason-sw,lints,sw-lints",
            "--out",
            f"{out.name}.csv",
        ],
    }


def _env(work: Path, tag: str) -> dict:
    return {
        **os.environ,
        "PYTHONPATH": str(CODE),
        "ALLSEASON_RESULTS": str(work / "results"),
        TAG: tag,
    }


def tagged(tag: str) -> list[int]:
    """Pids of the live processes whose environment holds ``TAG=tag`` (zombies aside)."""
    needle = f"{TAG}={tag}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            if needle not in (d / "environ").read_bytes().split(b"\0"):
                continue
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            pids.append(int(d.name))
    return pids


def _kind(pid: int) -> str:
    """What a process is: the driver, the forkserver, a worker, the resource tracker."""
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return "gone"
    for word in ("forkserver", "resource_tracker", "allseason"):
        if word in cmd:
            return word
    return cmd[:40]


def run(argv, work: Path, tag: str, timeout: float = 600) -> tuple[int, float, str]:
    """Run the CLI to the end: (exit code, seconds, stderr)."""
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "allseason", *argv],
        cwd=work,
        env=_env(work, tag),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return p.returncode, time.perf_counter() - t0, p.stderr


def result_of(name: str, out: Path, work: Path):
    """What must be identical after a resume."""
    if name == "replay":
        import pandas as pd

        frame = pd.read_csv(work / "results" / "replay" / f"{out.name}.csv")
        frame = frame.drop(columns=[c for c in frame.columns if c in VOLATILE])
        return frame.astype(str).to_dict("records")  # NaN == NaN as text
    with sqlite3.connect(out / "results.sqlite") as db:
        db.row_factory = sqlite3.Row
        rows = [dict(r) for r in db.execute("SELECT * FROM runs ORDER BY key")]
    rows = [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]
    if name == "map":
        snap = json.loads((out / "map.json").read_text(encoding="utf-8"))
        rows.append(
            {k: v for k, v in snap.items() if not k.startswith("seconds") and k not in VOLATILE}
        )
    return rows


def _wait_for_workers(p, tag: str, timeout: float, n: int = 2) -> bool:
    """Wait until ``n`` processes carry the tag (the driver ``p`` and processes of its own:
    its forkserver and workers carry the tag too); False if it ended first."""
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if p.poll() is not None:
            return False
        if len(tagged(tag)) >= n:
            return True
        time.sleep(0.05)
    return True


def kill_round(
    name: str,
    argv_of,
    work: Path,
    n_kills: int,
    rng,
    wait: float = 2.0,
    when: str = "random",
    up: int = 2,
    reference=None,
    resume=None,
) -> dict:
    """The reference run, ``n_kills`` SIGKILLs, the resume; the counts. ``when``: "random"
    (a uniform moment in [0.2 s, the reference's duration]) or "workers" (0-0.5 s after
    the driver's pool is up, so that every kill leaves workers to die) or "pool" (0-2 s
    after it: a random moment while the pool works); the pool is up when ``up`` processes
    carry the tag (a Dask LocalCluster of 2: 5, the driver, its resource tracker, the
    forkserver and the 2 workers). ``reference``, ``resume``: functions of (argv, work, tag)
    that run the uninterrupted reference, the resume, instead of :func:`run` (e.g. in the
    caller's own process), with the same return value."""
    tag0 = f"{name}-ref-{os.getpid()}"
    rc, full, err = (reference or run)(argv_of(work / f"{name}-ref"), work, tag0)
    if rc != 0:
        raise RuntimeError(f"{name}: the reference run failed ({rc}): {err[-500:]}")
    reference = result_of(name, work / f"{name}-ref", work)
    out = work / f"{name}-killed"
    left, finished, moments, kinds = [], 0, [], {}
    for i in range(n_kills):
        tag = f"{name}-{i}-{os.getpid()}"
        # a reference run in the caller's process can take under 0.2 s on a fast machine
        # (an in-process replay: 0.1 s on an AMD EPYC): the interval is then [0.2, 0.2]
        at = float(rng.uniform(0.2, max(full, 0.2)))
        p = subprocess.Popen(
            [sys.executable, "-m", "allseason", *argv_of(out)],
            cwd=work,
            env=_env(work, tag),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own session, as a terminal's command would be
        )
        if when in ("workers", "pool"):
            at = float(rng.uniform(0.0, 0.5 if when == "workers" else 2.0))
            # (at least a minute: a driver's start on a loaded machine, whatever the reference)
            if not _wait_for_workers(p, tag, max(full * 3, 60.0), up):
                at = 0.0
        try:
            p.wait(timeout=at)
            finished += 1  # it ended before its kill
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)  # the driver only: its workers must follow
            p.wait()
        moments.append(at)
        time.sleep(wait)
        alive = tagged(tag)
        left.append(len(alive))
        for pid in alive:
            kinds[_kind(pid)] = kinds.get(_kind(pid), 0) + 1
        for pid in alive:  # ours: clean up so the next kill starts alone
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    rc, resumed, err = (resume or run)(argv_of(out), work, f"{name}-resume-{os.getpid()}")
    if rc != 0:
        raise RuntimeError(f"{name}: the resume failed ({rc}): {err[-500:]}")
    return {
        "command": name,
        "kills": n_kills,
        "ended_before_kill": finished,
        "orphans_after_2s": sum(left),
        "kills_leaving_orphans": sum(n > 0 for n in left),
        "identical": result_of(name, out, work) == reference,
        "orphan_kinds": kinds,
        "reference_s": round(full, 1),
        "resume_s": round(resumed, 1),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=["sweep", "map", "replay"], action="append")
    ap.add_argument(
        "--when",
        choices=["random", "pool", "workers"],
        default="random",
        help="random: a moment in [0.2 s, the reference's duration] (a resumed run is shorter,"
        " so many end first); pool: 0-2 s after the driver's pool is up",
    )
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout to test")
    ap.add_argument(
        "--dask", action="store_true", help="each command on a Dask LocalCluster (--workers 2)"
    )
    args = ap.parse_args(argv)
    global CODE
    CODE = args.code.resolve()
    rng = np.random.default_rng(args.seed)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kill-test-") as tmp:
        work = Path(tmp)
        for name, argv_of in commands(work, args.dask).items():
            if args.only and name not in args.only:
                continue
            up = 5 if args.dask else 2
            row = kill_round(name, argv_of, work, args.kills, rng, when=args.when, up=up)
            row["executor"] = "dask" if args.dask else "processes"
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(
        f"{'command':<8} {'kills':>5} {'ended first':>11} {'orphans':>7} {'identical':>9} "
        f"{'ref s':>6} {'resume s':>8}"
    )
    for r in rows:
        print(
            f"{r['command']:<8} {r['kills']:>5} {r['ended_before_kill']:>11} "
            f"{r['orphans_after_2s']:>7} {str(r['identical']):>9} {r['reference_s']:>6} "
            f"{r['resume_s']:>8}"
        )
    return 0 if all(r["orphans_after_2s"] == 0 and r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
