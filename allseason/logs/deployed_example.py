"""The built-in example of "Your deployed bandit": All-Season deployed on the default
scenario's world through the agent's loop (``decide`` then ``learn``, one event at a time),
writing its decision log as a running service would (:mod:`allseason.agent`, issue 31).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..errors import SpecError
from ..sim.runner import make_env
from ..specs import Scenario
from .deployed import BATCHES, DECISIONS

START = 1_790_000_000.0  # 2026-09-21 UTC: the example's first decision (Unix seconds)
EVERY = 10.0  # one decision every 10 s


def deployment_example(n_steps: int = 2000, seed: int = 0, batch_size: int = 1) -> dict:
    """All-Season (SW, the race's defaults) deployed for ``n_steps`` decisions on the default
    scenario's world (the paper's synthetic pattern, shortened), through ``decide``/``learn``.

    Returns
    -------
    dict
        ``decisions`` and ``batches`` (the two files' bytes), ``state`` (the agent's
        ``summary()``), ``about`` (one line saying what it is).

    Raises
    ------
    SpecError
        If this version has no agent.
    """
    try:
        from ..agent import Agent
        from ..agent.decision_log import DecisionLog
    except ImportError:
        raise SpecError(
            "example", "the built-in example needs the agent (allseason.agent, issue 31)"
        ) from None
    sc = Scenario.from_preset("paper-synthetic", horizon=n_steps, n_states=4, seed=seed)
    env = make_env(sc, 0)
    rnd = env.next_round(n_steps)
    agent = Agent("allseason-sw", d=sc.d, seed=seed, batch_size=batch_size)
    with tempfile.TemporaryDirectory() as tmp:
        log = DecisionLog(tmp, n_context=0)
        agent.add_listener(log)
        for t in range(n_steps):
            now = START + EVERY * t
            rec = agent.decide(arms=rnd.arms[t], event_id=f"e{t}", t=now)
            agent.learn(f"e{t}", float(rnd.payoff[t, rec.arm]), t=now)
        agent.end_batch()
        log.close()
        files = {name: (Path(tmp) / name).read_bytes() for name in (DECISIONS, BATCHES)}
    n_cp = len(sc.pattern.change_points())
    return dict(
        decisions=files[DECISIONS],
        batches=files[BATCHES],
        state=agent.summary(),
        about=f"The built-in example: All-Season (SW) deployed for {n_steps:,} decisions on "
        f"the paper's synthetic world ({sc.d} features, {sc.n_arms} arms, "
        f"{sc.pattern.n_states} seasons, {n_cp} changes), one decision and its reward at a "
        f"time, batch size {batch_size}.",
    )


__all__ = ["deployment_example"]
