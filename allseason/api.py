"""The one facade that the app, the command line and notebooks use.

Configure (:class:`Scenario`, :class:`PolicySpec`, :class:`Race`; any bad value raises a
:class:`SpecError` naming it), run (:func:`run_race`, :func:`iter_race`; a show stepped by hand:
:class:`LiveRun`), look inside
(:func:`recall_table`, :func:`state_table`, :func:`ensemble_summary`, ...). Which policies
exist, what they take and what they mean: :func:`policy_names`, :func:`hyperparameters`,
:func:`describe_policy`.

    >>> from allseason import api
    >>> scenario = api.Scenario.from_preset("paper-synthetic", horizon=2_000, batch_size=10)
    >>> race = api.Race(scenario, api.policy_specs(["allseason-sw", "lints"], tau=10), n_seeds=2)
    >>> result = api.run_race(race)
    >>> sorted(result.summary())
    ['allseason-sw', 'lints']
    >>> api.PolicySpec("sw-lints", {"tau": 0})
    Traceback (most recent call last):
    ...
    allseason.errors.SpecError: sw-lints.tau: must be an integer in [1, 200000], got 0
"""

from __future__ import annotations

from .analysis import (
    ensemble_summary,
    learnt_by,
    learnt_by_text,
    recall_table,
    season_year_table,
    state_table,
)
from .defaults import (
    DEFAULT_POLICIES,
    DEFAULT_SEEDS,
    REFERENCES,
    default_params,
    default_race,
    default_specs,
)
from .envs import PRESETS, preset
from .envs.table import RewardTable, parse_reward_table
from .logs.offline import (
    MIN_EVENTS,
    OFFLINE_POLICIES,
    Log,
    OfflineResult,
    detect_kind,
    evaluate,
    offline_specs,
    parse_log,
)
from .policies import REGISTRY, PolicyInfo, hyperparameters
from .policies import describe as describe_policy
from .sim import RaceResult, iter_race, run_race
from .sim.live import LIVE_POLICIES, LiveFrame, LiveRun
from .sim.runner import posterior_history
from .specs import (
    LIMITS,
    MAX_INPUT_BYTES,
    PolicySpec,
    Race,
    Scenario,
    SpecError,
    file_kind,
    parse_scenario,
    policy_specs,
)


def policy_names() -> list[str]:
    """Names of every registered policy.

    >>> policy_names()[:3] == ["allseason-sw", "allseason-disc", "allseason-sw-printed"]
    True
    """
    return list(REGISTRY)


def step_dates(scenario: Scenario, world=None):
    """The real date of each step (numpy datetime64[D], shape (horizon,)) of a scenario on a
    preset built from dated data (``seattle-weather``: step t is on day t // 10), or of a
    scenario run in a ``world`` that knows its dates (a world factory with a
    ``step_dates(scenario)`` method, e.g. a user's :class:`RewardTable`), else None.

        >>> [str(d) for d in step_dates(Scenario.from_preset("seattle-weather"))[[0, 9, 10, -1]]]
        ['2012-01-01', '2012-01-01', '2012-01-02', '2015-12-31']
        >>> step_dates(Scenario()) is None
        True
    """
    if world is not None:
        dates = getattr(world, "step_dates", None)
        return None if dates is None else dates(scenario)
    if scenario.preset == "seattle-weather":
        from .envs import weather

        return weather.step_dates(scenario.horizon, weather.BATCH)
    return None


def state_names(scenario: Scenario, world=None) -> list[str] | None:
    """Names of the true states of a preset from data (the weather regimes), or of a
    ``world`` that names them (``state_names_for(scenario)``; a reward table: "<arm> best"),
    else None."""
    if world is not None:
        names = getattr(world, "state_names_for", None)
        return None if names is None else names(scenario)
    if scenario.preset == "seattle-weather":
        from .envs import weather

        return list(weather.REGIMES)
    return None


def read_user_file(source, kind: str | None = None, **options):
    """A user's CSV (bytes or text) as a :class:`Log` (``kind="log"``: timestamp, arm,
    reward, ...) or a :class:`RewardTable` (``kind="table"``: time, arm, reward); ``kind``
    None detects it from the header (a ``timestamp`` or a ``time`` column). ``options``:
    see :func:`parse_log` and :func:`parse_reward_table` (``context``, ``arms``, ``scale``,
    ``limits``). Any problem: ONE SpecError naming the row or column."""
    if kind is None:
        head = _head(source)
        kind = "log" if "timestamp" in head else "table" if "time" in head else "log"
    if kind == "log":
        return parse_log(source, **options)
    if kind == "table":
        options.pop("context", None)
        return parse_reward_table(source, **options)
    raise SpecError("kind", f"must be log or table, got {kind!r}")


def _head(source) -> list[str]:
    """The column names of a file's first line (lower case), for telling a log from a table;
    whatever else is wrong with the file, the parser says."""
    import csv

    raw = (
        source[:65536].encode(errors="replace")
        if isinstance(source, str)
        else bytes(source[:65536])
    )
    line = raw[:65536].split(b"\n", 1)[0].decode("utf-8-sig", errors="replace")
    return [c.strip().lower() for c in next(csv.reader([line]), [])]


def warm_up() -> float:
    """Compile (or load from numba's on-disk cache) every compiled kernel with a tiny race, so
    that a user's first run is not the one that pays for it. Returns the seconds it took."""
    import time

    t0 = time.perf_counter()
    scenario = Scenario(segments=((0, 20), (1, 20)), batch_size=(1, 3), preset="custom")
    run_race(Race(scenario, default_specs(), 1))
    run_race(Race(scenario, policy_specs(["allseason-sw", "allseason-disc"], spawn="copy"), 1))
    return time.perf_counter() - t0


__all__ = [
    # configuration
    "Scenario",
    "PolicySpec",
    "Race",
    "policy_specs",
    "SpecError",
    "LIMITS",
    "PRESETS",
    "preset",
    "parse_scenario",
    "file_kind",
    "MAX_INPUT_BYTES",
    # policies
    "policy_names",
    "hyperparameters",
    "describe_policy",
    "PolicyInfo",
    # the default race
    "default_race",
    "default_specs",
    "default_params",
    "DEFAULT_POLICIES",
    "DEFAULT_SEEDS",
    "REFERENCES",
    # running
    "run_race",
    "iter_race",
    "RaceResult",
    "warm_up",
    # a live show, stepped by hand
    "LiveRun",
    "LiveFrame",
    "LIVE_POLICIES",
    # looking inside
    "recall_table",
    "state_table",
    "ensemble_summary",
    "learnt_by",
    "learnt_by_text",
    "posterior_history",
    "season_year_table",
    # real dates
    "step_dates",
    "state_names",
    # your data: a logged-bandit CSV evaluated offline, a reward table raced on
    "read_user_file",
    "parse_log",
    "parse_reward_table",
    "detect_kind",
    "evaluate",
    "offline_specs",
    "Log",
    "OfflineResult",
    "RewardTable",
    "MIN_EVENTS",
    "OFFLINE_POLICIES",
    "MAX_USER_BYTES",
]

MAX_USER_BYTES = 200_000_000  # the largest user CSV read at all (the CLI's log limit)
