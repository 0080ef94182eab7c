"""The one facade that the app, the command line and notebooks use.

    >>> from allseason import api
    >>> scenario = api.Scenario.from_preset("paper-synthetic", batch_size=10)
    >>> race = api.Race(scenario, api.policy_specs(["allseason-sw", "lints"], tau=10), n_seeds=2)
    >>> result = api.run_race(race)
    >>> sorted(result.summary())
    ['allseason-sw', 'lints']
"""

from __future__ import annotations

from .analysis import ensemble_summary, learnt_by, learnt_by_text, recall_table, state_table
from .defaults import (DEFAULT_POLICIES, DEFAULT_SEEDS, default_params, default_race,
                       default_specs)
from .envs import PRESETS, LinearGaussianEnv, Pattern, preset
from .policies import REGISTRY, hyperparameters, make_policy
from .sim import Progress, RaceResult, Trace, iter_race, run, run_race
from .sim.runner import make_env, posterior_history
from .specs import (LIMITS, MAX_INPUT_BYTES, QUERY_FIELDS, PolicySpec, Race, Rejected,
                    Scenario, SpecError, decode_batch, decode_segments, encode_batch,
                    encode_segments, file_kind, parse_scenario, policy_specs)


def policy_names() -> list[str]:
    """Names of every registered policy."""
    return list(REGISTRY)


def warm_up() -> float:
    """Compile (or load from numba's on-disk cache) every compiled kernel with a tiny race, so
    that a user's first run is not the one that pays for it. Returns the seconds it took."""
    import time

    t0 = time.perf_counter()
    scenario = Scenario(segments=((0, 20), (1, 20)), batch_size=(1, 3), preset="custom")
    run_race(Race(scenario, default_specs(), 1))
    run_race(Race(scenario, policy_specs(["allseason-sw", "allseason-disc"],
                                         spawn="copy"), 1))
    return time.perf_counter() - t0


__all__ = ["parse_scenario", "MAX_INPUT_BYTES", "QUERY_FIELDS", "Rejected", "file_kind",
           "encode_segments", "decode_segments", "encode_batch", "decode_batch",
           "warm_up", "Scenario", "PolicySpec", "Race", "SpecError", "LIMITS", "policy_specs", "run",
           "run_race", "iter_race", "Progress", "RaceResult", "Trace", "Pattern", "preset",
           "PRESETS", "LinearGaussianEnv", "make_policy", "hyperparameters", "policy_names",
           "default_race", "recall_table", "state_table", "make_env", "posterior_history",
           "DEFAULT_POLICIES", "DEFAULT_SEEDS", "default_params", "default_specs",
           "ensemble_summary", "learnt_by", "learnt_by_text"]
