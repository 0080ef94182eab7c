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

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .agent import Agent, Decision, UnknownEvent
    from .agent.decision_log import read_decision_log
from ._lazy import lazy_names
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
from .envs.datasets import DataUnavailable
from .envs.patterns import Pattern
from .limits import (
    APP_LIMITS,
    COST_BUDGET_SECONDS,
    DEPLOYED_LIMITS,
    LIMITS,
    MAX_CHECK_STEPS,
    MAX_INPUT_BYTES,
    MAX_LIVE_CONTESTANTS,
    MAX_USER_BYTES,
    PAPER_LIVE_LIMITS,
    QUEUE_LIMITS,
    READ_WITHOUT_SLOT_BYTES,
    Limits,
    upload_cap_mb,
)
from .links import QUERY_FIELDS, decode_batch, encode_batch
from .logs.deployed import BATCHES, DECISIONS, Deployment, your_data_bytes, your_data_file
from .logs.deployed_example import deployment_example
from .logs.deployed_state import STATE_FILE, read_agent_state, read_agent_state_file
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
from .logs.table import RewardTable, parse_reward_table
from .policies import REGISTRY, PolicyInfo, Role, hyperparameters, label_role, role
from .policies import describe as describe_policy
from .sim import RaceResult, iter_race, run_race
from .sim.live import LIVE_POLICIES, LiveFrame, LiveRun
from .sim.runner import posterior_history
from .specs import (
    PolicySpec,
    Race,
    Rejected,
    Scenario,
    SpecError,
    check_limits,
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
    """The real date of each step of a scenario, where it has one.

    Parameters
    ----------
    scenario : Scenario
        A preset built from dated data (``seattle-weather``: step t is on day t // 10), or any
        scenario when ``world`` knows its dates.
    world : world factory, optional
        One with a ``step_dates(scenario)`` method, e.g. a user's :class:`RewardTable`.

    Returns
    -------
    numpy.ndarray of datetime64[D], shape (horizon,), or None
        None when neither the preset nor the world has dates.

    Examples
    --------
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
    """Names of the true states, where they have names.

    Parameters
    ----------
    scenario : Scenario
        A preset from data (``seattle-weather``: the weather regimes), or any scenario when
        ``world`` names its states.
    world : world factory, optional
        One with a ``state_names_for(scenario)`` method (a reward table: "<arm> best").

    Returns
    -------
    list of str, or None
        One name per state, or None when nothing names them.
    """
    if world is not None:
        names = getattr(world, "state_names_for", None)
        return None if names is None else names(scenario)
    if scenario.preset == "seattle-weather":
        from .envs import weather

        return list(weather.REGIMES)
    return None


def read_user_file(source: bytes | str, kind: str | None = None, **options) -> Log | RewardTable:
    """A user's CSV as a logged bandit or as a reward table.

    Parameters
    ----------
    source : bytes or str
        The file's content.
    kind : {"log", "table"}, optional
        ``"log"``: a :class:`Log` (timestamp, arm, reward, ...); ``"table"``: a
        :class:`RewardTable` (time, arm, reward). None detects it from the header (a
        ``timestamp`` or a ``time`` column).
    **options
        Passed on: see :func:`parse_log` and :func:`parse_reward_table` (``context``,
        ``arms``, ``scale``, ``limits``).

    Raises
    ------
    SpecError
        For any problem in the file, naming its row or column.
    """
    if kind is None:  # the app detects it once, at upload (user_file_kind), and passes it
        kind = user_file_kind(source)
    if kind == "log":
        return parse_log(source, **options)
    if kind == "table":
        options.pop("context", None)
        return parse_reward_table(source, **options)
    raise SpecError("kind", f"must be log or table, got {kind!r}")


def user_file_kind(source: bytes | str) -> str:
    """Whether a user's file is a log or a reward table, from its header alone
    (:func:`allseason.logs.offline.detect_kind`: the one rule).

    Parameters
    ----------
    source : bytes or str
        The file's content.

    Returns
    -------
    str
        "log" or "table".
    """
    return detect_kind(_head(source))


def _head(source) -> list[str]:
    """The column names of a file's header (its first line that is not blank; lower case),
    for telling a log from a table; whatever else is wrong with the file, the parser says."""
    from .logs.reader import header_names

    return header_names(source)


def warm_up() -> float:
    """Compile (or load from numba's on-disk cache) every compiled kernel with a tiny race,
    then measure this machine's cost factor (:func:`allseason.costs.calibrate`).

    A user's first run is then not the one that pays for compilation, and the estimates of
    :func:`estimate_cost` are this machine's.

    Returns
    -------
    float
        The seconds it took.
    """
    import time

    t0 = time.perf_counter()
    scenario = Scenario(segments=((0, 20), (1, 20)), batch_size=(1, 3), preset="custom")
    run_race(Race(scenario, default_specs(), 1))
    run_race(Race(scenario, policy_specs(["allseason-sw", "allseason-disc"], spawn="copy"), 1))
    from . import costs
    from .sweeps.calibration import calibration_seconds

    costs.calibrate(calibration_seconds)
    return time.perf_counter() - t0


# --- for the app's pages (allseason.ui) and the CLI's help ------------------------------------
# What the Streamlit glue needs of the engine beyond the names above, so that it reaches the
# engine through this facade alone (the rule: allseason/ui/__init__.py): the app's limits
# (APP_LIMITS, Limits, check_limits), a scenario in a link (QUERY_FIELDS, encode_batch,
# decode_batch, Rejected: a link parameter left out, and why), DataUnavailable (a run on real
# data without the data sets), all imported above, and the three functions below. The page of a
# subpackage with a public face of its own reads that face instead (Paper tables:
# allseason.paper; Sweep results: allseason.sweeps; Your data: allseason.logs).


def race_in_words(race: Race | None = None) -> dict[str, str]:
    """How a text quotes a race, derived from it, never typed.

    Parameters
    ----------
    race
        The race (default: :func:`default_race`).

    Returns
    -------
    dict
        ``scenario`` (its steps, states and change points), ``contestants`` (its policies
        and references) and ``seeds``, as words.

        >>> words = race_in_words()
        >>> words["scenario"], words["contestants"], words["seeds"]
        ('10,000 steps, 4 states, 8 change points', '7 policies and 2 oracles', '5 seeds')
    """
    race = default_race() if race is None else race
    pattern = race.scenario.pattern
    refs = [p for p in race.policies if role(p.name).reference]
    n_pol, n_ref, n_cp = len(race.policies) - len(refs), len(refs), len(pattern.change_points())

    def count(n: int, one: str, many: str) -> str:
        return f"{n:,} {one if n == 1 else many}"

    contestants = count(n_pol, "policy", "policies")
    if n_ref:
        contestants += " and " + count(n_ref, "oracle", "oracles")
    return {
        "scenario": f"{count(race.scenario.horizon, 'step', 'steps')}, "
        f"{count(pattern.n_states, 'state', 'states')}, "
        f"{count(n_cp, 'change point', 'change points')}",
        "contestants": contestants,
        "seeds": count(race.n_seeds, "seed", "seeds"),
    }


def estimate_cost(request) -> float:
    """CPU-seconds a request is estimated to cost, before it runs: steps x seeds x the
    per-step price of each policy, measured once and stored, times this machine's factor
    (:mod:`allseason.costs`).

    Parameters
    ----------
    request : Race, Scenario, SweepSpec or MapGrid
        A race (the Race page); a scenario: one tuned contest on it (a map cell, the When
        page's "Race it to check"); a sweep; a map's grid.

    Returns
    -------
    float
        Estimated CPU-seconds (one core; ``benchmarks/cost_check.py`` measures how close).
    """
    from . import costs
    from .sweeps.spec import SweepSpec
    from .worldmap.grid import MapGrid, cell_cost

    if isinstance(request, Race):
        return costs.estimate_race(request)
    if isinstance(request, Scenario):
        return cell_cost(request)
    if isinstance(request, SweepSpec):
        return costs.estimate_units(request.units())
    if isinstance(request, MapGrid):
        return request.cost_seconds()
    raise TypeError(f"estimate_cost: a Race, Scenario, SweepSpec or MapGrid, got {request!r}")


def estimate_replay(log, n_seeds: int, specs=None) -> float:
    """CPU-seconds a log's offline evaluation (:func:`evaluate`: every policy of ``specs``,
    default the offline contestants, on ``n_seeds`` seeds) is estimated to cost, before it
    runs (:func:`allseason.costs.estimate_replay`)."""
    from . import costs
    from .logs.evaluate import offline_specs

    names = [s.name for s in (offline_specs() if specs is None else offline_specs(specs))]
    return costs.estimate_replay(log.n_events, log.d, log.n_arms, names, int(n_seeds))


def check_cost(race: Race, budget: float | None = None) -> float:
    """The estimate of ``race`` (:func:`estimate_cost`); SpecError("budget", ...) above
    ``budget`` (default ``limits.COST_BUDGET_SECONDS``), naming the budget and the command
    that runs the race from a terminal."""
    from . import costs

    seconds = costs.estimate_race(race)
    costs.check_budget(
        seconds,
        COST_BUDGET_SECONDS if budget is None else budget,
        costs.command_line(race),
    )
    return seconds


def real_data_snapshot() -> dict:
    """The tracked ten-arm MNIST race that the tour shows without the data sets
    (:mod:`allseason.paper.mnist_snapshot`: its pattern, change points and each policy's mean
    reward), read from its JSON file."""
    from .paper import mnist_snapshot

    return mnist_snapshot.load()


def real_data_pattern(name: str, n: int) -> Pattern:
    """The season pattern of the real-data experiments (the tasks of
    :mod:`allseason.envs.classification` as its states).

    Parameters
    ----------
    name
        A preset pattern's name (``regular``, ``realistic``, ``extreme``).
    n
        Its length in images (steps).

    Raises
    ------
    SpecError
        If there is no such pattern of that length."""
    from .envs.classification import N_STATES

    return preset(name, n, N_STATES)


__all__ = [
    # the agent a service embeds (issue 31)
    "Agent",
    "Decision",
    "UnknownEvent",
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
    "user_file_kind",
    "MAX_INPUT_BYTES",
    "upload_cap_mb",
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
    "estimate_cost",
    "check_cost",
    "COST_BUDGET_SECONDS",
    "QUEUE_LIMITS",
    "READ_WITHOUT_SLOT_BYTES",
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
    "role",
    "label_role",
    "Role",
    "season_year_table",
    # real dates
    "step_dates",
    "state_names",
    # your data: a logged-bandit CSV evaluated offline, a reward table raced on
    "read_user_file",
    "read_decision_log",
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
    # a deployed agent's decision log, read as it grows (the page "Your deployed bandit")
    "Deployment",
    "your_data_bytes",
    "your_data_file",
    "deployment_example",
    "read_agent_state",
    "read_agent_state_file",
    "STATE_FILE",
    "DEPLOYED_LIMITS",
    "DEPLOYED_FILES",
    # for the app's pages and the CLI's help (the block above)
    "APP_LIMITS",
    "MAX_LIVE_CONTESTANTS",
    "MAX_CHECK_STEPS",
    "PAPER_LIVE_LIMITS",
    "Limits",
    "check_limits",
    "estimate_replay",
    "Rejected",
    "QUERY_FIELDS",
    "encode_batch",
    "decode_batch",
    "DataUnavailable",
    "race_in_words",
    "real_data_snapshot",
    "real_data_pattern",
]

DEPLOYED_FILES = (DECISIONS, BATCHES)  # the decision log's two files, in its folder

# The deployable agent (its compiled kernels and scipy's special functions) is imported on
# first use (PEP 562): a race, a sweep worker or the command line does not pay for it.
_AGENT_NAMES = {
    "Agent": ".agent",
    "Decision": ".agent",
    "UnknownEvent": ".agent",
    "read_decision_log": ".agent.decision_log",
}


__getattr__, __dir__ = lazy_names(__name__, globals(), _AGENT_NAMES)
