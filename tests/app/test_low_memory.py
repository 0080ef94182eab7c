"""The low-memory setting (ALLSEASON_LOW_MEMORY, allseason/ui/settings.py): read from the
environment, it shrinks the server's cache, its concurrency and its warm-up, and changes no
result."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from allseason import api
from allseason.ui import settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "value, on",
    [
        ("1", True),
        ("true", True),
        (" Yes ", True),
        ("on", True),
        ("0", False),
        ("", False),
        ("no", False),
        ("2", False),
    ],
)
def test_the_variable_is_read(value, on):
    assert settings.low_memory({settings.ENV: value}) is on
    assert settings.low_memory({}) is False


def _runs_constants(env_value):
    env = {k: v for k, v in os.environ.items() if k != settings.ENV}
    if env_value is not None:
        env[settings.ENV] = env_value
    env["PYTHONPATH"] = str(ROOT)
    code = (
        "from allseason.ui import runcache; print(runcache.MAX_ENTRIES, runcache.MAX_BYTES, "
        "runcache.MAX_CONCURRENT, runcache.RACE_WORKERS)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.split()


def test_the_setting_shrinks_the_server():
    assert _runs_constants(None) == ["8", "1500000000", "2", "None"]
    assert _runs_constants("1") == ["2", str(settings.LOW_MEMORY_BYTES), "1", "1"]


def test_allocator_calls_do_not_fail():
    assert isinstance(settings.trim(), bool)
    code = "from allseason.ui import settings; print(settings.tune_allocator(), settings.trim())"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )  # in a process of its own
    assert out.stdout.split()[0] in ("True", "False")


def test_seeds_in_turn_give_the_same_race():
    race = api.Race(
        api.Scenario(segments=((0, 300), (1, 300)), seed=3),
        api.policy_specs(["allseason-sw", "lints"]),
        3,
    )
    a, b = api.run_race(race, workers=1), api.run_race(race)
    for key in a.traces:
        assert (a.traces[key].arm == b.traces[key].arm).all()
        assert (a.traces[key].reward == b.traces[key].reward).all()


def test_the_warm_up_freezes_the_heap(monkeypatch):
    """After the server's warm-up, the objects alive then (modules, kernels, caches) are out
    of the cyclic collector's reach, so its full collections stop walking them."""
    import gc

    from allseason.ui import runcache

    monkeypatch.setattr(runcache, "_warm_default_race", lambda cache: None)
    before = gc.get_freeze_count()
    try:
        runcache._warm(runcache.RunCache())
        assert gc.get_freeze_count() > max(before, 10_000)
    finally:
        gc.unfreeze()
