"""For the app: a small live race on real data, with the stored choice of hyperparameters where
the reproduction has one (:func:`live_jobs`, :func:`curves_frame`)."""

from __future__ import annotations

import json
from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..envs.classification import HORIZON
from ..policies import policy_class
from . import tables as paper_tables
from .protocol import (
    CURVE_EVERY,
    POLICIES,
    Job,
    Protocol,
    _check_tables,
    _params_json,
    choose,
)
from .runs import load_runs

LIVE_DEFAULTS: dict[str, dict] = {  # used where no grid search is stored for the table
    "allseason-sw": {"tau": 100, "n_max": 4},
    "allseason-disc": {"gamma": 0.99, "n_max": 4},
    "sw-lints": {"tau": 500},
    "d-lints": {"gamma": 0.999},
    "denband": {"tau": 1000, "delta_l": 0.25},
    "bob": {"S": 1.0, "L": 1.0},
    "lints": {},
    "random": {},
}


def change_points(n: int = HORIZON) -> dict[str, list[int]]:
    """{pattern: the steps where the state changes} of the paper's patterns at horizon n."""
    from ..envs.classification import N_STATES
    from ..envs.patterns import preset

    return {
        p: [int(c) for c in preset(p, n, N_STATES).change_points()] for p in paper_tables.PATTERNS
    }


def stored_choice(
    table: str, pattern: str, out=None, protocol: Protocol = Protocol()
) -> dict[str, dict]:
    """{policy: params} chosen by a complete stored grid search for (table, pattern), else
    the :data:`LIVE_DEFAULTS` (All-Season: the carried-weights rows' choice)."""
    try:
        chosen = choose(load_runs(out), table, protocol)
    except ValueError:  # no (complete) grid search stored
        return {k: dict(v) for k, v in LIVE_DEFAULTS.items()}
    return {pol: json.loads(chosen[pattern, pol]) for pol in POLICIES}


def live_jobs(
    table: str, pattern: str, policies: Iterable[str], n: int, seeds: int, params: dict[str, dict]
) -> list[Job]:
    """Jobs of a small race on real data (phase "live"; never stored): each policy with
    ``params[policy]`` on the first n images, seeds 0 .. seeds-1."""
    _check_tables([table])
    if pattern not in paper_tables.PATTERNS:
        raise ValueError(f"pattern: one of {', '.join(paper_tables.PATTERNS)}, got {pattern!r}")
    if not 600 <= int(n) <= HORIZON:
        raise ValueError(f"n: must be in 600..{HORIZON}, got {n!r}")
    jobs = []
    for pol in policies:
        if pol not in POLICIES:
            raise ValueError(f"policy: one of {', '.join(POLICIES)}, got {pol!r}")
        for k in range(1 if policy_class(pol).deterministic else int(seeds)):
            jobs.append(
                Job("live", table, pattern, pol, _params_json(params.get(pol, {})), k, int(n))
            )
    return jobs


def curves_frame(results: Iterable[tuple[Job, float, float, np.ndarray]]) -> pd.DataFrame:
    """Results of :func:`run_job` as a curves table (pattern, policy, seed, step,
    cum_reward)."""
    rows = []
    for job, _mean, _sec, curve in results:
        steps = np.arange(1, len(curve) + 1) * CURVE_EVERY
        rows.append(
            pd.DataFrame(
                {
                    "pattern": job.pattern,
                    "policy": job.policy,
                    "seed": job.seed,
                    "step": steps,
                    "cum_reward": curve,
                }
            )
        )
    return (
        pd.concat(rows, ignore_index=True)
        if rows
        else pd.DataFrame(columns=["pattern", "policy", "seed", "step", "cum_reward"])
    )
