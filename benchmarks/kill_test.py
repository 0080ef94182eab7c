"""No orphans (issue 33, item 4): SIGKILL ``sweep``, ``map`` and ``replay --processes 2`` at
random moments while they work, then count the processes left 2 s later, and check that the
resume gives the result of an uninterrupted run.

    python benchmarks/kill_test.py               # 20 kills of each command (3-5 min)
    python benchmarks/kill_test.py --when pool   # each 0-2 s after the pool's workers are up
    python benchmarks/kill_test.py --kills 5     # fewer
    python benchmarks/kill_test.py --dask        # on a Dask LocalCluster (--workers 2) instead
    python benchmarks/kill_test.py --size small  # the tiny inputs of the tests

Every driver is started with a tag in its environment (``ALLSEASON_KILL_TAG``); its
forkserver and pool workers inherit it, so the processes left are those whose
``/proc/PID/environ`` holds the tag. Each command runs once uninterrupted first: the
reference, its duration T and its start-up s (the moment its pool's workers are first alive).
Then the kills, in one folder, one after another, each of a new run of the same command,
which resumes what the runs killed before it stored (sweep and map: the runs in their store;
replay keeps nothing, its CSV is written whole at the end, so each run starts over). After
the kills, the same command runs to the end in the killed folder and its stored results
(sweep and map: every row of the store but the timing, worker and date columns; replay: the
CSV but its seconds) must equal the reference's. A process left 2 s after a kill is watched
30 s more (the row says when the last went, or None), then killed by pid (it is ours).

When a kill lands (``--when random``, the default). A kill after the command's end proves
nothing, and a moment uniform over the reference's life does not work for a command that
resumes: each killed run has less left to do, so the later ones end first (on the tiny
inputs, on an AMD EPYC, Zen 5, 2026-11-27: 9 of 20 sweeps and 16 of 20 maps). So:

- Kill i of n (from 0) lands at a uniform moment in [0.2 s, s + (T - s) L / (n - i + 1)], L
  the share of the reference's work (its runs' seconds) that the folder's store does not
  hold yet. A killed run as fast as its reference stores at most its window's part of the
  work, at most half of what is left, so it cannot finish; the n kills together leave at
  least 1/(n + 1) of the work to the resume. Unlike a fixed window (T / n), the windows grow
  when kills land in the start-up and store nothing, so the kills reach into the work.
- Replay keeps nothing: [0.2 s, T], its whole life.
- A moment past s is counted from the moment the killed run's own workers are alive: a
  start-up slowed by a load that came does not pull the kills into it (at load 18, before
  this, 18 of 20 map kills landed in the start-up).
- A guard for a killed run much faster than its reference (a reference slowed by a load
  that then went): it is killed at once when its store holds half of the runs that were
  left when it started (replay: once its pool is over, while it writes its results); the
  row says how many kills the guard brought forward.

``--when pool`` kills 0-2 s after the pool's workers are alive, never later than the same
window after that, with the same guard. Each kill's phase is read from the tagged processes
at its moment: "start-up" (no pool worker seen yet), "pool" (workers alive; sweep and map
store each run as it ends, so results are being written), "between pools" (the map's two
stages; a replay writing its results, brought forward by the guard).

The inputs (``--size large``, the default) are large enough that the windows reach up to a
second into the work here (more on a slower machine), made of short runs (about 13 ms on
average in the sweep, 7 ms in the map, 0.44 s at most): ``sweep`` 300 seeds of 5 policies at
horizon 4,000 (1,500 runs; the tests' ``--size small``: 20), ``map`` 15 cells of 105 runs (4
cells), ``replay`` a log of 4,000 events, 4 seeds of 3 policies (400 events, 2 seeds).

2026-11-28 01:36 UTC, an AMD EPYC (Zen 5, 2 cores), niced, quiet (load 0.5-0.9), 3 min 16 s:
20 kills of each, none ended before its kill, 0 processes left after 2 s, every resume
identical; references 5.9, 4.1, 2.8 s (sweep, map, replay), resumes 4.2, 2.8, 2.9 s; stored
before the resume: 515 of 1,500 runs, 36 % of the work (sweep), 645 of 1,575, 43 % (map), no
CSV (replay); phases at the kills: start-up 6, 6, 7, pool 14, 14, 13. ``--when pool`` (3 min
34 s): the same, 52 % and 60 % of the work stored, every kill while workers were alive but 9
replays killed by the guard just after their pool. Capped at 0.87 CPU (a cgroup: the earlier
machine, 2.2-2.4 times slower; load 0.5-2.4): references 13.0, 9.0, 6.1 s, 0 ended first, 0
left, identical, 41 % and 45 % stored, 4 min 30 s. Beside other work (load 3-5): references
12.3, 7.7, 5.5 s, the same counts, 4 min 16 s.
"""

from __future__ import annotations

import argparse
import contextlib
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
LATE = 30.0  # how long a process left 2 s after a kill is watched before it is killed
# how long, where and on what a result was computed, not what it is
VOLATILE = {"wall_seconds", "policy_seconds", "worker", "finished_at", "seconds", "executor"}

SWEEP = """name = "kill"
seeds = {seeds}
[[scenarios]]
preset = "paper-synthetic"
horizon = {horizon}
d = 5
n_arms = 5
[[policies]]
name = "allseason-sw"
params = {{ n_max = 5 }}
grid = {{ tau = [10, 30] }}
[[policies]]
name = "sw-lints"
grid = {{ tau = [50, 200] }}
[[policies]]
name = "lints"
"""
GRID = """name = "kill"
x = {{ knob = "season_length", values = {seasons} }}
y = {{ knob = "sigma2", values = {noises} }}
fixed = {{ n_states = 2, returns = {returns}, n_arms = 5, d = 5, batch_size = 1 }}
"""
# The inputs. "small": tests/hostile/test_no_orphans.py's (a second or two a command).
# "large": this benchmark's, about 20 times the work of "small" in runs of 0.2 s at most, so
# that 20 kills can be spread over the work (see the docstring).
SIZES = {
    "small": dict(
        seeds=4,
        horizon=6000,
        seasons=[30, 60],
        noises=[0.03, 0.3],
        returns=1,
        events=400,
        replay_seeds=2,
    ),
    "large": dict(
        seeds=300,
        horizon=4000,
        seasons=[100, 200, 300, 400, 500],
        noises=[0.03, 0.1, 0.3],
        returns=2,
        events=4000,
        replay_seeds=4,
    ),
}


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


def commands(work: Path, dask: bool = False, size: str = "small") -> dict[str, callable]:
    """name -> (out folder -> argv) of the three commands, on inputs of ``size`` (a key of
    :data:`SIZES`) written into ``work``; ``dask``: each on a Dask LocalCluster of 2 workers
    (``--workers 2``)."""
    z = SIZES[size]
    (work / "sweep.toml").write_text(SWEEP.format(**z), encoding="utf-8")
    (work / "grid.toml").write_text(GRID.format(**z), encoding="utf-8")
    write_log(work / "log.csv", z["events"])
    if dask:
        local = commands(work, size=size)
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
            str(z["replay_seeds"]),
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


def _workers_alive(tag: str) -> bool:
    """Whether the tagged pool's workers are alive: processes forked by the forkserver carry
    its command line, so the forkserver and at least one worker make two."""
    return sum(_kind(pid) == "forkserver" for pid in tagged(tag)) >= 2


def watched_run(argv, work: Path, tag: str, timeout: float = 600) -> tuple:
    """:func:`run`, watching the tagged processes every 20 ms: (exit code, seconds, stderr,
    the moment the pool's workers were first alive, None if never seen)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as err:
        p = subprocess.Popen(
            [sys.executable, "-m", "allseason", *argv],
            cwd=work,
            env=_env(work, tag),
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        up = None
        while p.poll() is None:
            if up is None and _workers_alive(tag):
                up = time.perf_counter() - t0
            if time.perf_counter() - t0 > timeout:
                p.kill()
                p.wait()
                raise subprocess.TimeoutExpired(argv, timeout)
            time.sleep(0.02)
        seconds = time.perf_counter() - t0
        err.seek(0)
        return p.returncode, seconds, err.read(), up


def _stored_keys(out: Path) -> list[str]:
    """The keys of the runs ``out``'s store holds (read only: a killed writer's journal is
    left as the next run finds it); none if there is no store yet."""
    path = out / "results.sqlite"
    if not path.is_file():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return [k for (k,) in db.execute("SELECT key FROM runs")]
    except sqlite3.Error:  # killed before its table was made
        return []


def _costs(out: Path) -> dict[str, float]:
    """key -> seconds of each run of a finished store (the reference's); {} without one."""
    if not (out / "results.sqlite").is_file():
        return {}
    with contextlib.closing(sqlite3.connect(out / "results.sqlite")) as db:
        return dict(db.execute("SELECT key, wall_seconds FROM runs"))


def _stored_runs(out: Path) -> int:
    """How many runs ``out``'s store holds (read only; the CLI's own count); 0 without a
    store or its table."""
    from allseason.cli.common import stored_runs

    return stored_runs(out) or 0


def _wait_watching(p, tag: str, at: float, enough=None) -> tuple[bool, str, bool]:
    """Wait ``at`` seconds for ``p``, watching its pool every 20 ms: (whether it ended first,
    its phase at the end of the wait: "start-up" before any pool worker was seen, "pool"
    while workers are alive, "between pools" once they are gone: the map's two stages, the
    results written at the end; whether ``enough``, a function of (workers seen, workers
    alive), ended the wait early)."""
    t_end = time.monotonic() + at
    seen = False
    while True:
        if p.poll() is not None:
            return True, "ended", False
        alive = _workers_alive(tag)
        seen = seen or alive
        early = enough is not None and enough(seen, alive)
        dt = t_end - time.monotonic()
        if dt <= 0 or early:
            return False, "pool" if alive else ("between pools" if seen else "start-up"), early
        try:
            p.wait(timeout=min(dt, 0.02))
        except subprocess.TimeoutExpired:
            pass


def _wait_for_workers(p, tag: str, timeout: float, n: int = 2, alive: bool = False) -> bool:
    """Wait until ``n`` processes carry the tag (the driver ``p`` and processes of its own:
    its forkserver and workers carry the tag too), or with ``alive`` until its pool's workers
    are (:func:`_workers_alive`); False if it ended first."""
    t_end = time.monotonic() + timeout
    while time.monotonic() < t_end:
        if p.poll() is not None:
            return False
        if _workers_alive(tag) if alive else len(tagged(tag)) >= n:
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
    """The reference run, ``n_kills`` SIGKILLs, the resume; the counts.

    ``when``: "random" (a uniform moment in [0.2 s, the start-up + a share of the work left],
    see the module's docstring) or "workers" (0-0.5 s after the driver's pool is up, so that
    every kill leaves workers to die; the pool is up when ``up`` processes carry the tag, a
    Dask LocalCluster of 2: 5, the driver, its resource tracker, the forkserver and the 2
    workers) or "pool" (0-2 s after the pool's workers are alive, at most the random window
    after it: a random moment while the pool works). ``reference``,
    ``resume``: functions of (argv, work, tag) that run the uninterrupted reference, the
    resume, instead of :func:`watched_run` and :func:`run` (e.g. in the caller's own
    process), with :func:`run`'s return value (the start-up is then taken as 0)."""
    tag0 = f"{name}-ref-{os.getpid()}"
    rc, full, err, *up_at = (reference or watched_run)(argv_of(work / f"{name}-ref"), work, tag0)
    if rc != 0:
        raise RuntimeError(f"{name}: the reference run failed ({rc}): {err[-500:]}")
    start = min(up_at[0], full) if up_at and up_at[0] is not None else 0.0
    reference = result_of(name, work / f"{name}-ref", work)
    # what each run cost the reference: the work a killed run leaves stored (sweep, map);
    # replay keeps nothing (its CSV is written whole at the end), each run starts over
    cost = _costs(work / f"{name}-ref")
    total = sum(cost.values())
    out = work / f"{name}-killed"
    left, finished, moments, kinds, phases, done, late = [], 0, [], {}, {}, [], []

    def stored() -> float:
        """The share of the reference's work that ``out``'s store holds."""
        return sum(cost.get(k, 0.0) for k in _stored_keys(out)) / total if total else 0.0

    n_runs, early_kills = len(cost), 0
    for i in range(n_kills):
        tag = f"{name}-{i}-{os.getpid()}"
        # the seconds of work this kill may let its run do: 1/(k + 1) of the work left, k the
        # kills left (this one included) that resume it, so that together they cannot do it
        # all; replay keeps nothing: all of it (the guard below kills it after its pool)
        window = (full - start) * ((1.0 - stored()) / (n_kills - i + 1) if total else 1.0)
        # (an in-process reference can take under 0.2 s: the interval is then [0.2, 0.2])
        at = float(rng.uniform(0.2, max(start + window, 0.2)))
        # a guard in case this run is much faster than the reference was (a load that went):
        # kill at once when it has stored half of the runs left (replay: when its pool is
        # over, while it writes its results)
        goal = (_stored_runs(out) + n_runs) / 2
        if when == "workers":
            enough = None
        elif total:
            enough = lambda seen, alive, goal=goal: _stored_runs(out) >= goal  # noqa: E731
        else:
            enough = lambda seen, alive: seen and not alive  # noqa: E731
        t0 = time.monotonic()
        p = subprocess.Popen(
            [sys.executable, "-m", "allseason", *argv_of(out)],
            cwd=work,
            env=_env(work, tag),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own session, as a terminal's command would be
        )
        # (at least a minute: a driver's start on a loaded machine, whatever the reference)
        slow = max(full * 3, 60.0)
        if when in ("workers", "pool"):
            # pool: 0-2 s after its workers are alive, never more than the window above
            at = float(rng.uniform(0.0, 0.5 if when == "workers" else min(2.0, window)))
            workers = when == "pool"  # its workers (workers: ``up`` processes, as the tests)
            if not _wait_for_workers(p, tag, slow, up, workers):
                at = 0.0
        elif at > start:  # in the work: counted from the moment this run's workers are alive
            at = at - start if _wait_for_workers(p, tag, slow, alive=True) else 0.0
        ended, phase, early = _wait_watching(p, tag, at, enough)
        early_kills += early
        if ended:
            finished += 1  # it ended before its kill
        else:
            os.kill(p.pid, signal.SIGKILL)  # the driver only: its workers must follow
            moments.append(time.monotonic() - t0)  # since its start
            p.wait()
        phases[phase] = phases.get(phase, 0) + 1
        time.sleep(wait)
        alive = tagged(tag)
        left.append(len(alive))
        for pid in alive:
            kinds[_kind(pid)] = kinds.get(_kind(pid), 0) + 1
        # a survivor late or orphaned? watched up to LATE s more: when it went, or still there
        t_late = time.monotonic()
        while alive and time.monotonic() - t_late < LATE:
            time.sleep(0.05)
            alive = tagged(tag)
        if left[-1]:
            late.append(round(time.monotonic() - t_late + wait, 1) if not alive else None)
        for pid in alive:  # ours: clean up so the next kill starts alone
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        done.append(round(100 * stored()))
    if total:
        before = f"{len(_stored_keys(out))}/{len(cost)} runs, {stored():.0%} of the work"
    else:
        csv = work / "results" / "replay" / f"{out.name}.csv"
        before = "a CSV (a killed run ended)" if csv.exists() else "nothing (no CSV)"
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
        # each kill that left some: the seconds after the kill when the last went, None if
        # some were still alive LATE s after the count (orphans, then killed by pid)
        "orphans_gone_after_s": late,
        "reference_s": round(full, 1),
        "startup_s": round(start, 2),
        "resume_s": round(resumed, 1),
        "kill_at_s": [round(min(moments, default=0), 2), round(max(moments, default=0), 2)],
        "phases": phases,
        "killed_early_by_the_guard": early_kills,
        "stored_pct_after_each_kill": done if total else None,
        "stored_before_resume": before,
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
        help="random: a moment in [0.2 s, the start-up + a share of the work left];"
        " pool: 0-2 s after the pool's workers are alive (at most that share);"
        " workers: 0-0.5 s after the pool is up",
    )
    ap.add_argument(
        "--size",
        choices=list(SIZES),
        default="large",
        help="the inputs: large (about 12, 9 and 4 s on an AMD EPYC, Zen 5) or the test's"
        " small ones (1-2 s)",
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
        for name, argv_of in commands(work, args.dask, args.size).items():
            if args.only and name not in args.only:
                continue
            up = 5 if args.dask else 2
            row = kill_round(name, argv_of, work, args.kills, rng, when=args.when, up=up)
            row["executor"] = "dask" if args.dask else "processes"
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(
        f"{'command':<8} {'kills':>5} {'ended first':>11} {'orphans':>7} {'identical':>9} "
        f"{'ref s':>6} {'resume s':>8}  stored before the resume; phases at the kills"
    )
    for r in rows:
        print(
            f"{r['command']:<8} {r['kills']:>5} {r['ended_before_kill']:>11} "
            f"{r['orphans_after_2s']:>7} {str(r['identical']):>9} {r['reference_s']:>6} "
            f"{r['resume_s']:>8}  {r['stored_before_resume']}; "
            + ", ".join(f"{k} {v}" for k, v in r["phases"].items())
        )
    return 0 if all(r["orphans_after_2s"] == 0 and r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
