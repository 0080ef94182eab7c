"""The built-in example of "Your deployed bandit": All-Season deployed on the default
scenario's world through the agent's loop (``decide`` then ``learn``, one event at a time),
writing its decision log as a running service would (:mod:`allseason.agent`, issue 31).

It is the default race's All-Season (SW) run of seed 0, played through the agent: the
default scenario (the paper's synthetic experiment: 10,000 steps, 4 seasons, 8 changes,
batch size 1, noise variance 0.1), the race's hyperparameters and noise variance, the race's
own random streams (``draws="stream"``, seeded as the runner seeds that run) and the race's
rewards (the payoff plus its noise). So the agent makes the race's decisions, step for step,
and the log's weights are the ones Inside All-Season draws for the same run
(``tests/logs/test_deployed_example.py`` checks both).

Why it changed (measured 2026-11-27): the earlier example ran 2,000 steps with the agent
class's noise variance (sigma2 = 1.0, against the world's 0.1) and noise-free rewards. Each
bandit's predictive variance was then about ten times too large, so one batch's evidence
barely moved the weights: 2 bandits ever on top, bandit 1 through all 8 changes, 0 recalls. With the
world's sigma2 the same 2,000 steps give 5-6 recalls; the length was not the cause. Here,
the default race's run of seed 0: 24 spells on top, 4 recalls by the page's rule, and each
of the 5 returns of a season brought its old bandit back on top (the return at step 6,700
after a 4-batch flicker, which the rule does not count).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..defaults import default_params
from ..errors import SpecError
from ..sim.runner import make_env, seed_sequence
from ..specs import Scenario
from .deployed import BATCHES, DECISIONS

START = 1_790_000_000.0  # 2026-09-21 UTC: the example's first decision (Unix seconds)
EVERY = 10.0  # one decision every 10 s
POLICY = "allseason-sw"
N_MC = 1024  # Monte Carlo draws of pi (5 dense arms): standard error <= 0.016


def example_scenario(n_steps: int | None = None) -> Scenario:
    """The default scenario (``n_steps``: its pattern scaled to that horizon)."""
    if n_steps is None:
        return Scenario()
    return Scenario.from_preset("paper-synthetic", horizon=n_steps)


def example_agent(sc: Scenario, seed_index: int = 0):
    """The race's All-Season (SW) for ``seed_index`` as an agent: its hyperparameters, the
    scenario's noise variance, its random streams (``draws="stream"``)."""
    from ..agent import Agent

    if not isinstance(sc.batch_size, int):
        raise SpecError("example", "the example takes one batch size")
    return Agent(
        POLICY,
        d=sc.d,
        seed=seed_sequence(sc, seed_index, POLICY),
        batch_size=sc.batch_size,
        draws="stream",
        n_mc=N_MC,
        **{**default_params(POLICY), "sigma2": sc.sigma2},
    )


def deployment_example(n_steps: int | None = None, seed_index: int = 0) -> dict:
    """All-Season (SW) deployed on the default scenario's world (module docstring), through
    ``decide``/``learn``, its decision log and its saved state.

    Parameters
    ----------
    n_steps : int, optional
        The default scenario's 10,000 steps, or its pattern scaled to this many.
    seed_index : int, default 0
        The race's seed (its world and its streams).

    Returns
    -------
    dict
        ``decisions`` and ``batches`` (the two files' bytes), ``state`` (the agent's
        ``summary()``), ``state_file`` (the bytes ``agent.save`` writes), ``scenario``,
        ``about`` (one line saying what it is).

    Raises
    ------
    SpecError
        If this version has no agent.
    """
    try:
        from ..agent.decision_log import DecisionLog
    except ImportError:
        raise SpecError(
            "example", "the built-in example needs the agent (allseason.agent, issue 31)"
        ) from None
    sc = example_scenario(n_steps)
    agent = example_agent(sc, seed_index)
    rnd = make_env(sc, seed_index).next_round(sc.horizon)
    with tempfile.TemporaryDirectory() as tmp:
        log = DecisionLog(tmp, n_context=0)
        agent.add_listener(log)
        for t in range(sc.horizon):
            now = START + EVERY * t
            rec = agent.decide(arms=rnd.arms[t], event_id=f"e{t}", t=now)
            reward = float(rnd.payoff[t, rec.arm] + rnd.noise[t])  # the race's reward
            agent.learn(f"e{t}", reward, t=now)
        agent.end_batch()
        log.close()
        agent.save(Path(tmp) / "agent.state")
        files = {
            name: (Path(tmp) / name).read_bytes() for name in (DECISIONS, BATCHES, "agent.state")
        }
    n_cp = len(sc.pattern.change_points())
    seen, returns = set(), 0
    for state, _ in sc.segments:
        returns += state in seen
        seen.add(state)
    return dict(
        decisions=files[DECISIONS],
        batches=files[BATCHES],
        state=agent.summary(),
        state_file=files["agent.state"],
        scenario=sc,
        about=f"The built-in example: All-Season (SW) deployed for {sc.horizon:,} decisions "
        f"on the default scenario's world ({sc.d} features, {sc.n_arms} arms, "
        f"{sc.pattern.n_states} seasons, {n_cp} changes of which {returns} bring back a season "
        f"seen before; batch size {sc.batch_size}), one decision and its reward at a time: "
        f"the default race's run of seed {seed_index}, played through the agent, so its "
        "weights are those Inside All-Season draws for that run.",
    )


__all__ = ["deployment_example", "example_scenario", "example_agent"]
