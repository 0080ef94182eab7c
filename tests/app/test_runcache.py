"""The app's race cache (allseason/ui/runcache.py): bounded in entries and in measured bytes,
tables built once when first read, compute slots that bound the races in flight, and the
server's warm-up that computes Home's race."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("plotly")

from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.ui import keys, runcache, settings, state

APP = str(Path(__file__).resolve().parents[2] / "app.py")
TIMEOUT = 90


@pytest.fixture(autouse=True)
def fresh_cache():
    runcache.store().clear()
    yield
    runcache.store().clear()


def test_curves_frame_samples_the_steps_as_the_figures_do():
    """The live curves' steps (``RaceResult.curves_frame``, the engine's table) are
    ``viz.race.sample_index``'s, with exact cumulative sums at them (the sums since the
    previous sampled step)."""
    import numpy as np

    from allseason.viz.race import sample_index

    race = api.Race(api.Scenario.from_preset("regular", horizon=900), api.policy_specs(["lints"]))
    result = api.run_race(race)
    steps = result.curves_frame(50)
    trace = result.traces["lints", 0]
    assert steps["step"].tolist() == sample_index(900, 50).tolist()
    want = np.cumsum(trace.reward)[sample_index(900, 50)]
    assert np.allclose(np.cumsum(steps["reward"]), want, rtol=1e-12)
    assert len(result.curves_frame()) == 900  # no max_points: every step


def test_result_cache_is_bounded_in_measured_bytes():
    race = api.Race(
        api.Scenario.from_preset("regular", horizon=600),
        api.policy_specs(["allseason-sw", "lints"]),
        2,
    )
    run = runcache.RaceRun(runcache.key_of(race), race, api.run_race(race))
    traces_only = run.nbytes
    steps = run.frames["steps"]  # built when first read: the run now holds it too
    assert run.nbytes >= traces_only + steps.memory_usage(deep=False).sum()
    assert steps.memory_usage(deep=False).sum() > 600 * 4 * 8
    for name in ("weights", "events", "summary", "states"):
        run.frames[name]
    store = runcache.RunCache(max_entries=10, max_bytes=int(2.5 * run.nbytes))
    for seed in range(4):
        other = api.Race(
            api.Scenario.from_preset("regular", horizon=600, seed=seed), race.policies, 2
        )
        entry = runcache.RaceRun(runcache.key_of(other), other, run.result)
        for name in ("steps", "weights", "events", "summary", "states"):
            entry.frames[name]  # as big as the first run: its tables built too
        store.put(entry)
    assert len(store) == 2  # the byte budget, not the entry count, evicted the oldest


def test_a_runs_tables_are_built_once_when_first_read_and_equal_to_frames():
    race = api.Race(
        api.Scenario.from_preset("regular", horizon=300),
        api.policy_specs(["allseason-sw", "lints"]),
        2,
    )
    run = runcache.RaceRun(runcache.key_of(race), race, api.run_race(race))
    assert run.frames.built() == {}
    full = run.result.to_frames()
    for name in ("steps", "weights", "events", "summary"):
        assert run.frames[name].equals(full[name])
        assert run.frames[name] is run.frames[name]  # built once
    with pytest.raises(KeyError):
        run.frames["nothing"]


def test_compute_slots_bound_concurrent_races():
    import threading
    import time

    inside, peak, lock = [0], [0], threading.Lock()

    def work():
        with runcache.compute_slot():
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            time.sleep(0.2)
            with lock:
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == runcache.MAX_CONCURRENT


def test_with_precompute_off_the_warm_up_leaves_homes_race_out(monkeypatch):
    """``ALLSEASON_PRECOMPUTE=0`` (the browser tests' extra servers): the warm-up does not
    compute Home's race; unset or anything but 0/false/no/off, it does (the test below)."""
    assert settings.precompute({}) and settings.precompute({"ALLSEASON_PRECOMPUTE": "1"})
    assert not settings.precompute({"ALLSEASON_PRECOMPUTE": " Off "})
    assert not settings.precompute({"ALLSEASON_PRECOMPUTE": "0"})
    monkeypatch.setattr(settings, "PRECOMPUTE", False)
    cache = runcache.RunCache()
    runcache._warm_default_race(cache)
    assert cache.get(runcache.key_of(state.race(state.default_choice(), api.Scenario()))) is None


def test_the_warm_up_computes_homes_race():
    """The server's warm-up computes the default race into the cache, and Home's button asks
    for exactly that race, so its first visitor gets it at once."""
    cache = runcache.RunCache()
    runcache._warm(cache)
    home_race = state.race(state.default_choice(), api.Scenario())
    homes = runcache.key_of(home_race)
    run = cache.get(homes)
    assert run is not None and run.precomputed
    assert run.race.to_dict() == home_race.to_dict()
    assert runcache.done_text(run).startswith("Done: 10,000 steps × 5 seeds × 9 policies in ")
    assert runcache.done_text(run).endswith(" (computed when the server started)")
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.button(key="home_run").click().run()
    assert runcache.key_of(at.session_state[keys.LAST_RACE]) == homes
