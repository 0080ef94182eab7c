"""The app's races: a bounded cache of finished races, the server's warm-up, streamed runs.

Cache: every finished race is kept in one process-wide LRU (``st.cache_resource``) keyed by
its short key (:func:`key_of`: a hash of ``Race.to_json()``, the canonical JSON of scenario +
policies + seeds; fragments are handed this key, not the JSON), with its tables
(:class:`Frames`), each built once, the first time a page reads it: the Race page reads only
the small ones (the default race's steps and weights tables have 350,000 and 840,000 rows, and
took 1.4 s to build). It holds at most ``MAX_ENTRIES`` races and ``MAX_BYTES`` of tables and
traces in all (measured, not estimated: a 50,000-step race of 6 policies x 3 seeds holds about
400 MB), so a session (or many) cannot fill the memory; an evicted race is simply
recomputed (runs are deterministic: same JSON, same result, bit for bit) by the one
:func:`get_or_recompute`. Coming back to a page therefore shows the stored result at once.

Shared server: at most ``MAX_CONCURRENT`` races (and other heavy requests) compute at once in
the process, given their turn by the fair work queue (:mod:`allseason.ui.queueing`: short
requests first, sessions in turn; a waiting one shows its place and estimated start, and can
be cancelled), which bounds the memory of requests in flight.

Streaming: :func:`stream_race` iterates ``api.iter_race`` and, after each chunk, redraws the
progress bar and (at most every ``REDRAW_SECONDS``, the first time once the race has run that
long, and only while the race has at least that long left to run: a chart replaced at once by
the final one helps nobody) the live charts from the partial result, sampled to
``LIVE_POINTS`` steps per curve (``RaceResult.curves_frame``, the engine's table).

Warm-up: :func:`warm_up` starts, once per process, a background thread that loads the compiled
kernels and does once what a fresh process pays on its first race (pandas tables, Plotly
figures and their JSON) while a second thread computes Home's default race into the cache (the
same race for every visitor), so ``streamlit run app.py`` alone is warm for the first visitor;
pages call it through ``frame.page``, and a race waits for it before computing. It ends by
freezing the heap (:func:`freeze_heap`): the garbage collector no longer walks the objects
that live as long as the process.

Low memory: with ``ALLSEASON_LOW_MEMORY=1`` (:mod:`allseason.ui.settings`) the cache holds 2
races and 250 MB, one race computes at a time with its seeds in turn, and the warm-up only loads
the kernels.

Progress: the bar is redrawn at most every ``PROGRESS_SECONDS`` (each update redraws the page in
the browser, which shares the server's cores on a small machine); chunks start at
1/``N_UPDATES`` of the horizon and grow to take about that long, so a race that takes a
fraction of a second runs in two or three chunks instead of twenty.
"""

from __future__ import annotations

import concurrent.futures.thread as futures_thread
import gc
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import streamlit as st

from allseason import api

from . import queueing, settings, state
from .keys import LAST_RACE

log = logging.getLogger("allseason.ui")

MAX_ENTRIES = settings.LOW_MEMORY_ENTRIES if settings.LOW_MEMORY else 8
MAX_BYTES = settings.LOW_MEMORY_BYTES if settings.LOW_MEMORY else 1_500_000_000
MAX_CONCURRENT = queueing.SLOTS  # requests computing at once (the work queue's slots)
RACE_WORKERS = 1 if settings.LOW_MEMORY else None  # threads per race (None: one per core)
REDRAW_SECONDS = 0.5  # live charts: at most this often, the first time after this long
LIVE_POINTS = 300  # steps per live curve (exact cumulative values at the sampled steps)
FINAL_POINTS = 250  # steps per curve of the finished race's figures (about 4 px apart)
N_UPDATES = 20  # chunks per race, so the progress bar moves smoothly
PROGRESS_SECONDS = 0.2  # the progress bar: at most this often (each update redraws the page)


class Frames(Mapping):
    """A finished race's tables by name (``steps``, ``weights``, ``events``, ``summary`` and
    ``states``: ``RaceResult.<name>_frame()``), each built the first time it is read."""

    BUILDERS = {
        "steps": "steps_frame",
        "weights": "weights_frame",
        "events": "events_frame",
        "summary": "summary_frame",
        "states": "state_frame",
    }

    def __init__(self, result: api.RaceResult):
        self._result, self._built, self._lock = result, {}, threading.Lock()

    def __getitem__(self, name: str) -> pd.DataFrame:
        if name not in self.BUILDERS:
            raise KeyError(name)
        with self._lock:  # two sessions reading one run build each table once
            if name not in self._built:
                self._built[name] = getattr(self._result, self.BUILDERS[name])()
            return self._built[name]

    def __iter__(self):
        return iter(self.BUILDERS)

    def __len__(self) -> int:
        return len(self.BUILDERS)

    def built(self) -> dict[str, pd.DataFrame]:
        """The tables built so far (the per-run ones of :meth:`of` included)."""
        return dict(self._built)

    def of(self, label: str, seed: int) -> dict[str, pd.DataFrame]:
        """The steps, weights and events of one (policy, seed): cut from the whole tables if
        they are built, else built from that trace alone (the Inside page reads these)."""
        out = {}
        for name in ("steps", "weights", "events"):
            with self._lock:
                whole = self._built.get(name)
                if whole is not None:
                    out[name] = whole[
                        (whole["policy"] == label) & (whole["seed"] == seed)
                    ].reset_index(drop=True)
                    continue
                key = (name, label, seed)
                if key not in self._built:
                    self._built[key] = getattr(self._result, self.BUILDERS[name])(
                        only=[(label, seed)]
                    )
                out[name] = self._built[key]
        return out


@dataclass
class RaceRun:
    """A finished race (``key``: its short key, :func:`key_of`), its tables (:class:`Frames`,
    built when first read) and how long it took."""

    key: str
    race: api.Race
    result: api.RaceResult
    seconds: float = 0.0
    precomputed: bool = False  # by the server's warm-up (the default race)
    frames: Frames = field(init=False)

    def __post_init__(self):
        self.frames = Frames(self.result)
        self._extras, self._extra_lock = {}, threading.Lock()

    @property
    def nbytes(self) -> int:
        """Bytes held: the traces' arrays and the tables built so far."""
        extras = {f"extra {k}": v for k, v in self._extras.items()}
        return measure_bytes(self.result, {**self.frames.built(), **extras})

    def extra(self, name: str, build):
        """A small derived table of this run (e.g. the sampled curves), built once by
        ``build()`` and kept with the run (shared by the sessions that show it)."""
        with self._extra_lock:
            if name not in self._extras:
                self._extras[name] = build()
            return self._extras[name]

    @cached_property
    def race_json(self) -> str:
        """``Race.to_json()``: the race, to run again (the Race JSON download)."""
        return self.race.to_json()

    def frames_for(self, label: str, seed: int) -> dict[str, pd.DataFrame]:
        """The steps, weights and events of one (policy, seed)."""
        return self.frames.of(label, seed)


def measure_bytes(result: api.RaceResult, frames: dict) -> int:
    """Bytes held by a finished race: its tables and its traces' arrays."""
    total = sum(
        int(df.memory_usage(index=True, deep=True).sum())
        for df in frames.values()
        if isinstance(df, pd.DataFrame)
    )
    for t in result.traces.values():
        total += sum(a.nbytes for a in (t.arm, t.reward, t.expected, t.best, t.state, t.player))
        total += sum(
            np.asarray(a).nbytes for part in (t.weights, t.weight_ids, t.batch_end) for a in part
        )
    return total


class RunCache:
    """A thread-safe LRU of :class:`RaceRun`, bounded in entries and in bytes."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._runs: OrderedDict[str, RaceRun] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> RaceRun | None:
        with self._lock:
            run = self._runs.get(key)
            if run is not None:
                self._runs.move_to_end(key)
            return run

    def put(self, run: RaceRun) -> None:
        with self._lock:
            self._runs[run.key] = run
            self._runs.move_to_end(run.key)
            while len(self._runs) > 1 and (
                len(self._runs) > self.max_entries
                or sum(r.nbytes for r in self._runs.values()) > self.max_bytes
            ):
                self._runs.popitem(last=False)

    def __len__(self) -> int:
        return len(self._runs)

    def clear(self) -> None:
        with self._lock:
            self._runs.clear()


@st.cache_resource(show_spinner=False)
def store() -> RunCache:
    """The process-wide result cache."""
    return RunCache()


@contextmanager
def compute_slot(bar=None, cost: float | None = None, label: str = "a request", on_cancel=None):
    """Hold one of the server's ``MAX_CONCURRENT`` compute slots while the block runs, given
    in turn by the fair work queue (:func:`allseason.ui.queueing.queued`: its place and
    estimated start shown in the progress ``bar``, with a Cancel button, while it waits);
    ``cost``: its estimated CPU-seconds. Yields the queue's job (``job.checkpoint()``
    between chunks); ``on_cancel``: called by the Cancel button's click."""
    with queueing.queued(cost, label, bar, on_cancel) as job:
        yield job


def _exiting() -> bool:
    """Whether the interpreter has begun to exit (its main thread has stopped): from then on
    ``concurrent.futures`` refuses new work, so a warm-up still running in its daemon thread
    is cut short, which is no error (a process that starts the app and exits at once, such
    as every AppTest run, printed a traceback: "cannot schedule new futures after shutdown").

    The main thread is marked stopped only after ``threading``'s exit hooks have run, and
    ``concurrent.futures`` refuses work from its hook on: in that window only the two modules'
    own flags tell (both private, read behind ``getattr``; a CI run failed in that window)."""
    return (
        not threading.main_thread().is_alive()
        or bool(getattr(threading, "_SHUTTING_DOWN", False))
        or bool(getattr(futures_thread, "_shutdown", False))
    )


def _warm(cache: RunCache) -> None:
    """Everything a fresh process pays once on its first race, on a tiny race: the kernels,
    the tables (``to_frames``' first call costs seconds), the race figures and their JSON;
    then the default race itself (Home's button: the same race for every visitor), into
    ``cache``."""
    t0 = time.perf_counter()
    try:
        kernels = api.warm_up()
        if _exiting():
            return
        if settings.LOW_MEMORY:  # kernels only: no precomputed race, no first tables
            freeze_heap()
            log.info("warm-up (low memory: kernels only) done in %.2f s", kernels)
            return
        # the default race in a thread of its own: its kernels release the GIL, so it runs
        # beside the pandas and Plotly warm-up below on a second core
        default = threading.Thread(
            target=_warm_default_race, args=(cache,), name="allseason-warm-up-race", daemon=True
        )
        default.start()
        from allseason.viz import leaderboard as vboard
        from allseason.viz import per_state as vstate
        from allseason.viz import race as vrace
        from allseason.viz import weights as vweights

        sc = api.Scenario(segments=((0, 20), (1, 20)), batch_size=(1, 3), preset="custom")
        race = api.Race(sc, api.default_specs(), 2)
        run = RaceRun("warm-up", race, api.run_race(race))
        frames, summary = run.frames, run.frames["summary"]
        curves = run.result.curves_frame(FINAL_POINTS)
        figures = [vrace.cumulative_figure(curves, sc.pattern, m) for m in ("reward", "regret")]
        figures += [
            vrace.cumulative_figure(
                run.result.curves_frame(), sc.pattern, "reward", max_points=LIVE_POINTS
            ),
            vboard.leaderboard_figure(summary),
            vboard.final_regret_figure(run.result.seed_frame()),
            vstate.reward_by_state_figure(frames["states"]),
            vweights.top_weight_figure(
                run.frames_for(race.policies[0].label, 0)["weights"],
                sc.pattern,
                seed=0,
                policy=race.policies[0].label,
            ),
        ]
        vboard.leaderboard_table(summary)
        for name in frames:  # pandas' first tables, and the size accounting, once
            _ = frames[name]
        _ = run.nbytes
        for fig in figures:
            fig.to_json()
        default.join()
        freeze_heap()
        log.info("warm-up done in %.2f s (kernels %.2f s)", time.perf_counter() - t0, kernels)
    except Exception:
        if not _exiting():
            log.exception("warm-up failed")


def freeze_heap() -> None:
    """Move every object alive now (the imported modules, the compiled kernels, the warm-up's
    caches: about 230,000 objects) out of reach of Python's cyclic garbage collector
    (``gc.freeze``). They live as long as the process, and a full collection walked them
    all: 70-120 ms, at moments set by allocations, once in the middle of a race between the
    Run button's click and its charts (measured, docs/performance.md). Objects made later
    (races, tables, figures) are collected as before."""
    gc.collect()
    gc.freeze()
    log.info("heap frozen: %d objects out of the collector's reach", gc.get_freeze_count())


def _warm_default_race(cache: RunCache) -> None:
    """Home's race (the same for every visitor) into ``cache``; nothing with
    ``ALLSEASON_PRECOMPUTE=0`` (:func:`allseason.ui.settings.precompute`)."""
    if not settings.PRECOMPUTE:
        return
    try:
        race = state.race(state.default_choice(), api.Scenario())  # as Home's button asks
        if cache.get(key_of(race)) is None:
            t0 = time.perf_counter()
            result = api.run_race(race)
            cache.put(
                RaceRun(
                    key_of(race), race, result, seconds=time.perf_counter() - t0, precomputed=True
                )
            )
    except Exception:
        if not _exiting():
            log.exception("warm-up of the default race failed")


@st.cache_resource(show_spinner=False)
def _warm_thread() -> threading.Thread:
    thread = threading.Thread(target=_warm, args=(store(),), name="allseason-warm-up", daemon=True)
    thread.start()
    return thread


def warm_up(wait: bool = False, bar=None) -> None:
    """Start the process's warm-up (once per process, in the background); with ``wait``,
    until it has finished (saying so in the progress ``bar``, if any)."""
    thread = _warm_thread()
    if wait and thread.is_alive():
        if bar is not None:
            bar.progress(0.0, text="Getting ready: loading the compiled kernels (once per server)…")
        thread.join()


def done_text(run: RaceRun) -> str:
    """ "Done: 10,000 steps × 5 seeds × 9 policies in 0.6 s" (and when it was computed)."""
    race = run.race
    where = " (computed when the server started)" if run.precomputed else ""
    return (
        f"Done: {race.scenario.horizon:,} steps × {race.n_seeds} seeds × "
        f"{len(race.policies)} policies in {run.seconds:.1f} s{where}"
    )


def key_of(race: api.Race) -> str:
    """A race's short key: the first 16 hex digits of the sha256 of ``Race.to_json()`` (what
    the cache and the fragments are keyed by)."""
    return hashlib.sha256(race.to_json().encode()).hexdigest()[:16]


def cached(race: api.Race) -> RaceRun | None:
    return store().get(key_of(race))


def _finish(race: api.Race, result: api.RaceResult, seconds: float) -> RaceRun:
    run = RaceRun(key_of(race), race, result, seconds=seconds)
    store().put(run)
    if settings.LOW_MEMORY:
        settings.trim()
    return run


def run_race(race: api.Race) -> RaceRun:
    """The finished race: from the cache, or computed now (no live display)."""
    run = cached(race)
    if run is None:
        with compute_slot(None, api.estimate_cost(race), "race"):
            run = cached(race)  # another session may have run it while we waited
            if run is None:
                warm_up(wait=True)
                t0 = time.perf_counter()
                result = api.run_race(race, workers=RACE_WORKERS)
                run = _finish(race, result, time.perf_counter() - t0)
    return run


def remember(run: RaceRun) -> None:
    """Make ``run`` the session's last race (the one Inside All-Season looks into)."""
    st.session_state[LAST_RACE] = run.race


def get_or_recompute(key: str, race: api.Race | None = None) -> RaceRun:
    """The finished race of short key ``key``: from the cache, else recomputed (the cache
    may have dropped it; runs are deterministic) from ``race``, or from the session's last
    race (:func:`remember`) when that is the race of ``key``.

    Raises
    ------
    LookupError
        If the race is neither in the cache nor known to this session."""
    run = store().get(key)
    if run is None:
        if race is None:
            last = st.session_state.get(LAST_RACE)
            race = last if last is not None and key_of(last) == key else None
        if race is None:
            raise LookupError("this race is no longer known here; run it again")
        with st.spinner("Recomputing this race (the cache had dropped it)…"):
            run = run_race(race)
    return run


def final_curves(run: RaceRun) -> pd.DataFrame:
    """The finished race's cumulative curves at ``FINAL_POINTS`` sampled steps per trace
    (``RaceResult.curves_frame``), built once per run."""
    return run.extra("curves", lambda: run.result.curves_frame(FINAL_POINTS))


def last_run() -> RaceRun | None:
    """The session's last race (recomputed if the cache has dropped it); in a session that
    has not run one, the race of the current settings if it is in the cache."""
    race = st.session_state.get(LAST_RACE)
    if race is None:  # a new session: the current race settings, if that race is in the cache
        try:
            return cached(state.race())
        except api.SpecError:
            return None
    return get_or_recompute(key_of(race), race)


def stream_race(race: api.Race, slots: dict, on_update) -> RaceRun:
    """Run ``race`` chunk by chunk, showing progress in ``slots["progress"]`` and redrawing
    the live charts through ``on_update(slots, steps, summary, tick)``; return the stored run."""
    horizon = race.scenario.horizon
    chunk = max(250, -(-horizon // N_UPDATES))
    tick = 0
    progress = None
    compute = 0.0
    bar = slots["progress"]
    slots["pattern"] = race.scenario.pattern
    with compute_slot(bar, api.estimate_cost(race), "race") as job:
        done = cached(race)  # another session may have run it while we waited
        if done is not None:
            bar.progress(1.0, text="Done: the same race had just been run in another session")
            return done
        warm_up(wait=True, bar=bar)
        done = cached(race)  # the warm-up computes the default race
        if done is not None:
            bar.progress(1.0, text=done_text(done))
            return done
        t0 = last_draw = last_bar = time.perf_counter()
        bar.progress(0.0, text=f"Running… 0 of {horizon:,} steps")
        for progress in api.iter_race(
            race, chunk_size=chunk, workers=RACE_WORKERS, chunk_seconds=PROGRESS_SECONDS
        ):
            job.checkpoint()  # cancelled, tab closed: stop here; lent to a short request: wait
            now = time.perf_counter()
            compute = now - t0
            if now - last_bar >= PROGRESS_SECONDS and progress.done < horizon:
                bar.progress(
                    progress.fraction,
                    text=(f"Running… {progress.done:,} of {horizon:,} steps ({now - t0:.1f} s)"),
                )
                last_bar = now
            # a live chart only when it would stay up a while (the race not about to end)
            left = (now - t0) * (horizon - progress.done) / max(progress.done, 1)
            if now - last_draw >= REDRAW_SECONDS and left >= REDRAW_SECONDS:
                on_update(
                    slots,
                    progress.result.curves_frame(LIVE_POINTS),
                    progress.result.summary(),
                    tick,
                )
                last_draw = time.perf_counter()
            tick += 1
        seconds = time.perf_counter() - t0
        run = _finish(race, progress.result, seconds)
    bar.progress(1.0, text=done_text(run))
    log.info("race %s done in %.2f s (compute %.2f s)", run.key, seconds, compute)
    return run
