"""Running a sweep: one run alone (:func:`run_unit`), on a local process pool or on Dask,
each finished run stored at once, a progress bar on stderr; resumable.

:func:`run_jobs` is the executor of every experiment (sweeps and the paper's reproduction):
a list of keyed jobs and a module-level run function in, results handed to the driver."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import inspect
import itertools
import math
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..files import write_text_atomic
from ..sim.runner import chunk_bounds, make_env, play_round, run_race, seed_sequence
from ..sim.trace import Trace
from .pool import _pool, die_with_parent, guarded_forkserver  # noqa: F401 (die_with_parent: public here too)
from .spec import SweepSpec, Unit, _engine_version, canonical_json
from .store import SPEC_FILE, ResultStore

AUDIT_ENV = "ALLSEASON_SWEEP_AUDIT"  # a file path: every run appends "start|done key pid"
# the runner's chunking (the streams are drawn chunk by chunk, so a lone run must use the same)
RACE_CHUNK = inspect.signature(run_race).parameters["chunk_size"].default


def audit(event: str, key: str) -> None:
    """With ``$ALLSEASON_SWEEP_AUDIT`` set: append ``event key pid`` to that file."""
    path = os.environ.get(AUDIT_ENV)
    if path:  # one short O_APPEND write per line: lines from many processes do not interleave
        with open(path, "a", encoding="ascii") as f:
            f.write(f"{event} {key} {os.getpid()}\n")


def run_unit(unit: Unit, world=None) -> dict:
    """Compute one run alone, exactly as seed ``unit.seed_index`` of a race would (same
    environment stream, same policy stream, same chunking), and return its stored row.
    ``world``: a factory of the environment (:func:`allseason.sim.runner.make_env`), e.g. a
    reward table; it is not part of the run's key, so keep such runs in a store of their own."""
    audit("start", unit.key)
    sc, spec, k = unit.scenario, unit.policy, unit.seed_index
    t0 = time.perf_counter()
    env = make_env(sc, k, world)
    policy = spec.build(
        sc.d,
        sigma2=sc.sigma2,
        horizon=sc.horizon,
        rng=np.random.default_rng(seed_sequence(sc, k, spec.label)),
    )
    trace = Trace(spec.label, k, sc.horizon)
    ends = sc.batch_ends()
    for start, stop, b0, b1 in chunk_bounds(ends, RACE_CHUNK):
        rnd = env.next_round(stop - start)
        t1 = time.perf_counter()
        out = play_round(policy, rnd, ends[b0:b1] - start)
        trace.record(start, out, rnd.expected, rnd.state, time.perf_counter() - t1)
    n = trace.n_done
    bw = trace.batch_weights()  # ensembles: how many bandits, how decided (NULL otherwise)
    results = dict(
        mean_reward=float(trace.reward[:n].mean()),  # as RaceResult.summary, per seed
        mean_expected_reward=float(trace.expected[:n].mean()),
        cum_reward=float(trace.reward[:n].sum()),
        cum_regret=float(trace.regret.sum()),
    )
    for name, value in results.items():
        if not math.isfinite(value):  # never a NaN stored as a result
            raise FloatingPointError(
                f"{name} is {value}: the rewards or {spec.label}'s arithmetic "
                f"overflowed on this scenario (sigma2 {sc.sigma2:g}); nothing stored"
            )
    row = dict(
        key=unit.key,
        config=canonical_json(unit.config),
        scenario_key=unit.scenario_key,
        label=spec.label,
        policy=spec.name,
        params=canonical_json(dict(spec.params)),
        seed_index=k,
        **results,
        n_steps=int(n),
        policy_seconds=float(trace.seconds),
        bandits_created=None if bw is None else 1 + sum(e.kind == "spawn" for e in trace.events),
        top_share=None if bw is None else float(np.mean(bw[2].max(axis=1) > 0.9)),
        wall_seconds=time.perf_counter() - t0,
        worker=f"{socket.gethostname()}:{os.getpid()}",
        engine=_engine_version(),
        finished_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    audit("done", unit.key)
    return row


@contextlib.contextmanager
def _folder_lock(folder: Path):
    """One driver per results folder (an OS lock, released even if the driver is killed):
    a second one gets a SweepError at once."""
    try:
        import fcntl
    except ImportError:  # Windows: no lock (the store stays consistent; work may repeat)
        yield
        return
    with open(folder / ".lock", "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SweepError(
                f"another sweep or paper run is writing into {str(folder)!r}; "
                "wait for it or choose another --out"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class SweepError(Exception):
    """A sweep cannot start or go on (printed as one line by the CLI)."""


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did: runs in the sweep, already stored, run now, failed."""

    folder: Path
    n_runs: int
    n_stored_before: int
    n_ran: int = 0
    n_failed: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False

    @property
    def complete(self) -> bool:
        """Whether every run of the sweep is stored."""
        return self.n_stored_before + self.n_ran == self.n_runs


class ProgressBar:
    """``[#####-----]  12/48 runs  25%  1.3 runs/s  ETA 0:00:27`` on stderr: redrawn in
    place on a terminal, a plain line every 10% otherwise."""

    def __init__(
        self, total: int, done: int = 0, stream=None, enabled: bool = True, width: int = 24
    ):
        self.total, self.done, self.start_done = total, done, done
        self.stream = stream if stream is not None else sys.stderr
        self.enabled, self.width = enabled, width
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()
        self._last, self._last_decile = 0.0, -1
        self.failed = 0

    def text(self) -> str:
        """The bar as text."""
        frac = self.done / self.total if self.total else 1.0
        fill = int(round(frac * self.width))
        elapsed = time.monotonic() - self.t0
        ran = self.done - self.start_done
        rate = ran / elapsed if elapsed > 0 and ran else 0.0
        eta = (self.total - self.done) / rate if rate else None
        eta_s = "--:--" if eta is None else _hms(eta)
        failed = f"  {self.failed} failed" if self.failed else ""
        return (
            f"[{'#' * fill}{'-' * (self.width - fill)}] {self.done}/{self.total} runs "
            f"{frac:4.0%}  {rate:.2f} runs/s  elapsed {_hms(elapsed)}  ETA {eta_s}"
            f"{failed}"
        )

    def update(self, n: int = 1, force: bool = False) -> None:
        """Count ``n`` more runs done and redraw (at most so often, unless ``force``)."""
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty:
            if force or now - self._last > 0.1 or self.done == self.total:
                self._last = now
                self.stream.write("\r" + self.text() + "\x1b[K")
                self.stream.flush()
        else:
            decile = int(10 * self.done / self.total) if self.total else 10
            if force or decile > self._last_decile:
                self._last_decile = decile
                self.stream.write(self.text() + "\n")
                self.stream.flush()

    def close(self) -> None:
        """End the bar's line."""
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


#: one line, printed by the CLI when Dask is asked for but not installed (it is optional)
DASK_MISSING = (
    "Dask is not installed (it runs --workers/--scheduler): pip install "
    "'allseason[sweeps]' (or pip install -r requirements-sweeps.txt), or drop "
    "--workers/--scheduler to run on the local process pool"
)


def _require_dask() -> None:
    """Dask is the optional extra ``sweeps``: a clear SweepError when it is missing."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise SweepError(DASK_MISSING) from None


@contextlib.contextmanager
def _dask(workers: int | None, scheduler: str | None):
    _require_dask()
    with _worker_start_method(scheduler):
        yield from _dask_client(workers, scheduler)


def _worker_start_method(scheduler: str | None):
    """A LocalCluster's workers forked by the guarded forkserver (:mod:`.pool`): they die
    with it, and it with this driver, SIGKILL included (spawned, as Dask does by default,
    they outlived it by 5-15 s: Dask's own watch of its parent starts only once a worker
    has imported everything)."""
    if scheduler or guarded_forkserver() is None:
        return contextlib.nullcontext()
    import dask

    return dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"})


def _dask_client(workers: int | None, scheduler: str | None):
    import logging

    from distributed import Client, LocalCluster

    cluster = None
    try:
        if scheduler:
            client = Client(scheduler, timeout="15s")
        else:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            client = Client(cluster)
    except (OSError, TimeoutError) as e:
        if cluster is not None:
            cluster.close()
        if scheduler:
            raise SweepError(f"--scheduler: cannot reach {scheduler!r} ({e})") from None
        raise SweepError(f"--workers: could not start a Dask LocalCluster ({e})") from None
    try:
        n = sum(client.nthreads().values())
        if n == 0:
            client.wait_for_workers(1, timeout=60)
            n = sum(client.nthreads().values())
        yield client.get_executor(pure=False), max(n, 1)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


@dataclass
class JobsOutcome:
    """What :func:`run_jobs` did: runs finished (and handed to ``on_result``), failed, and
    whether it was interrupted (Ctrl-C)."""

    n_ran: int = 0
    n_failed: int = 0
    errors: list[str] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0


class _Inline:
    """A one-slot executor that runs each job in the driver when it is submitted (one
    process: no pool to start, no data to load again in a worker)."""

    def submit(self, fn, *args):
        fut = cf.Future()
        try:
            fut.set_result(fn(*args))
        except Exception as e:  # KeyboardInterrupt goes up to the loop
            fut.set_exception(e)
        return fut


@contextlib.contextmanager
def _inline():
    yield _Inline(), 1


def check_executor(processes=None, workers=None, scheduler=None) -> None:
    """One of processes / workers (Dask) / scheduler (Dask), positive counts; Dask present
    if asked for. SweepError otherwise."""
    if sum(x is not None for x in (processes, workers, scheduler)) > 1:
        raise SweepError("choose one of processes, workers (Dask) and scheduler (Dask)")
    for name, n in (("processes", processes), ("workers", workers)):
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise SweepError(f"{name}: must be a positive integer, got {n!r}")
    if workers is not None or scheduler is not None:
        _require_dask()


def run_jobs(
    jobs,
    fn,
    on_result,
    *,
    processes: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    inline: bool = False,
    bar: ProgressBar | None = None,
    describe=str,
) -> JobsOutcome:
    """The experiment engine's one executor: ``fn(job)`` for every job, ``on_result(job,
    result)`` in the driver as soon as each one finishes (there the caller stores it).

    ``fn`` must be a module-level function (it is sent to other processes). Executor: the
    local process pool (``processes``, default every usable core), Dask (``workers``: a
    LocalCluster; ``scheduler``: a running one), or ``inline`` (in this process, one job at
    a time, each handed over before the next starts). A local pool of one process
    (``processes=1``, or a single job) is inline too: the same results, no pool to start.
    A job that raises is counted, described by ``describe(job)`` in ``errors``, and the
    others go on; an exception raised by ``on_result`` stops everything. Ctrl-C stops now
    (``interrupted``): runs in flight are lost, finished ones were handed over."""
    check_executor(processes, workers, scheduler)
    todo = list(jobs)
    outcome = JobsOutcome()
    if not todo:
        return outcome
    n_local = min(processes or _usable_cores(), len(todo))
    if inline or (n_local == 1 and not (scheduler or workers)):
        executor = _inline()  # a pool of one process would only copy the driver's work
    elif scheduler or workers:
        executor = _dask(workers, scheduler)
    else:
        executor = _pool(n_local)
    t0 = time.perf_counter()
    with executor as (ex, n_slots):
        pending = iter(todo)
        # inline, a job runs when submitted: each handed over before the next one starts
        window = 1 if isinstance(ex, _Inline) else max(2 * n_slots, 4)
        running = {}
        try:
            for job in itertools.islice(pending, window):
                running[ex.submit(fn, job)] = job
            while running:
                finished, _ = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                for fut in finished:
                    job = running.pop(fut)
                    try:
                        result = fut.result()
                    except cf.BrokenExecutor:  # the local pool lost a process
                        raise SweepError(
                            "a worker process died (out of memory?); every "
                            "finished run is stored: run the same command "
                            "again to resume"
                        ) from None
                    except Exception as e:  # the run failed: report it, go on
                        outcome.n_failed += 1
                        if bar is not None:
                            bar.failed += 1
                        outcome.errors.append(f"{describe(job)}: {type(e).__name__}: {e}")
                    else:
                        on_result(job, result)
                        outcome.n_ran += 1
                        if bar is not None:
                            bar.update(1)
                    for nxt in itertools.islice(pending, 1):
                        running[ex.submit(fn, nxt)] = nxt
        except KeyboardInterrupt:
            outcome.interrupted = True
            for fut in running:
                fut.cancel()
            procs = getattr(ex, "_processes", None) or {}  # the local pool's workers
            for proc in list(procs.values()):
                proc.terminate()  # runs in flight are lost; every stored run is kept
        finally:
            if bar is not None:
                bar.close()
    outcome.seconds = time.perf_counter() - t0
    return outcome


def run_missing(
    store: ResultStore,
    jobs,
    fn,
    *,
    title: str,
    progress: bool = True,
    stream=None,
    describe=str,
    **executor,
) -> tuple[int, JobsOutcome]:
    """Run the jobs (each with a string ``key``) whose key ``store`` does not hold yet, with
    ``fn`` (module-level; it returns the store row, with ``engine`` and ``worker``), storing
    each row as soon as it arrives; a header line and the progress bar on ``stream``.
    ``executor``: as :func:`run_jobs`. Returns (runs already stored, what ran).

    The caller holds the folder lock (:func:`_folder_lock`)."""
    stream = stream if stream is not None else sys.stderr
    jobs = list({j.key: j for j in jobs}.values())
    stored = store.keys()
    todo = [j for j in jobs if j.key not in stored]
    n_before = len(jobs) - len(todo)
    if progress:
        stream.write(
            f"{title}: {len(jobs)} runs, {n_before} already stored, {len(todo)} to "
            f"run -> {store.folder}\n"
        )
    if not todo:
        return n_before, JobsOutcome()

    def keep(job, row):
        if row["engine"] != _engine_version():  # a Dask worker on another version
            raise SweepError(
                f"worker {row['worker']} runs allseason {row['engine']}, this "
                f"driver {_engine_version()}: install the same version on "
                "every worker"
            )
        store.add(row)

    bar = ProgressBar(len(jobs), n_before, stream, progress)
    return n_before, run_jobs(todo, fn, keep, bar=bar, describe=describe, **executor)


def run_sweep(
    spec: SweepSpec,
    out,
    *,
    processes: int | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    stream=None,
) -> SweepOutcome:
    """Run every run of ``spec`` that ``out``'s store does not hold yet; store each one as
    soon as it finishes. Resumable: run it again after an interruption, it does the rest.

    Executor (:func:`run_jobs`): ``processes`` local processes (default: every usable
    core), or Dask with ``workers`` (a LocalCluster of that many single-threaded worker
    processes) or ``scheduler`` (the address of a running scheduler)."""
    check_executor(processes, workers, scheduler)  # before touching the results folder
    folder = Path(out)
    units = spec.units()
    with ResultStore(folder) as store, _folder_lock(folder):
        write_text_atomic(folder / SPEC_FILE, spec.to_json())
        n_before, done = run_missing(
            store,
            units,
            run_unit,
            title=f"sweep {spec.name!r}",
            progress=progress,
            stream=stream,
            processes=processes,
            workers=workers,
            scheduler=scheduler,
            describe=lambda u: f"{u.policy.label} {dict(u.policy.params)} seed {u.seed_index}",
        )
    return SweepOutcome(
        folder,
        len(units),
        n_before,
        done.n_ran,
        done.n_failed,
        done.seconds,
        done.errors,
        done.interrupted,
    )
