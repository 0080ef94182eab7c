"""A decision made by another copy of the agent, taken as the agent's own
(:meth:`Agent.adopt <allseason.agent.core.Agent.adopt>`).

A service with several processes (``python -m allseason serve --workers N``, docs/serve.md)
answers ``/decide`` in readers that hold a snapshot of the agent; the one process that learns
must then hold each of those decisions open, with the arm, the bandit that played, the
propensities and the model version the reader answered, so that its reward is learnt as
the reader's decision and the logged propensity stays exact. :func:`adopt_decision` does
that after checking that the record is one this agent could have made: its event id is
neither open nor resolved here, its model version is not newer than this agent's, its arm,
label, bandit and propensities fit the agent and the inputs. Every refusal is one
:class:`~allseason.errors.SpecError` line naming the field; nothing changes on a refusal.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import SpecError, show
from ..policies import AllSeason
from .draws import event_text
from .records import DECISION_FIELDS, PI_METHODS, Decision

FIELDS = DECISION_FIELDS  # a record's fields, in order: the agent's own


def _as_dict(decision) -> dict:
    if isinstance(decision, Decision):
        return decision.to_dict()
    if not isinstance(decision, dict):
        raise SpecError("decision", f"must be a Decision or its to_dict(), got {show(decision)}")
    missing = [k for k in FIELDS if k not in decision]
    if missing:
        raise SpecError("decision", f"missing {', '.join(missing)}: not a decision record")
    return decision


def _int(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not lo <= value <= hi:
        raise SpecError(
            f"decision.{name}", f"must be an integer in [{lo}, {hi}], got {show(value)}"
        )
    return int(value)


def _number(name: str, value, lo: float = -math.inf, hi: float = math.inf) -> float:
    ok = not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating)
    if not ok or not (math.isfinite(value) and lo <= value <= hi):
        raise SpecError(
            f"decision.{name}", f"must be a finite number in [{lo:g}, {hi:g}], got {show(value)}"
        )
    return float(value)


def _bandit(agent, value) -> int:
    """Who played: -1 for a single-model policy; for All-Season an id it has handed out
    (the shadow 0, or a base bandit born before; one pruned since is learnt by the shadow)."""
    pol = agent.policy
    if not isinstance(pol, AllSeason):
        return _int("bandit", value, -1, -1)
    if agent.engine == "compiled":
        next_id = int(pol.kernel_state.counters[0])
    else:
        next_id = int(pol.next_id)
    return _int("bandit", value, 0, next_id - 1)


def _propensities(agent, d: dict, arm: int, K: int):
    """(pi of the arm played or None, pi of every arm or None), checked against K."""
    method = d["pi_method"]
    if method not in PI_METHODS:
        raise SpecError(
            "decision.pi_method", f"must be one of {', '.join(PI_METHODS)}, got {show(method)}"
        )
    pis = d["propensities"]
    if pis is not None:
        try:
            pis = np.array(pis, dtype=np.float64)
        except (TypeError, ValueError):
            raise SpecError("decision.propensities", "must be K numbers in [0, 1]") from None
        ok = pis.shape == (K,) and np.isfinite(pis).all() and (pis >= 0).all()
        if not ok or (pis > 1).any():
            raise SpecError(
                "decision.propensities",
                f"must be {K} numbers in [0, 1] (one per arm), got shape {pis.shape}",
            )
    p = d["propensity"]
    if p is not None:
        p = _number("propensity", p, 0.0, 1.0)
        if pis is not None and p != pis[arm]:
            raise SpecError("decision.propensity", "is not the propensities' value at its arm")
    return p, pis


def adopt_decision(agent, decision, arms=None, context=None) -> Decision:
    """Hold ``decision`` open in ``agent`` as if ``agent`` had made it (the bound method
    :meth:`Agent.adopt` documents the parameters); the adopted :class:`Decision`."""
    d = _as_dict(decision)
    event = d["event_id"]
    event = event if type(event) is str and 0 < len(event) <= 200 else event_text(event)
    if event in agent._open:
        raise SpecError("event_id", f"{show(event)} is still open: one decision per event")
    if event in agent._resolved:
        raise SpecError("event_id", f"{show(event)} was already resolved: one decision per event")
    version = _int("model_version", d["model_version"], 0, 2**62)
    if version > agent.model_version:
        raise SpecError(
            "decision.model_version",
            f"{version} is newer than this agent's "
            f"({agent.model_version}): the record is another agent's",
        )
    ctx, K = agent._inputs(arms, context)
    if not np.isfinite(ctx).all():
        raise SpecError(
            "context" if agent.context_mode else "arms", "must be finite numbers (no NaN, no inf)"
        )
    arm = _int("arm", d["arm"], 0, K - 1)
    label = agent.labels[arm] if agent.context_mode else str(arm)
    if str(d["label"]) != label:
        raise SpecError(
            "decision.label",
            f"{show(d['label'])} is not arm {arm}'s label "
            f"({show(label)}) here: the record is another agent's",
        )
    bandit = _bandit(agent, d["bandit"])
    p, pis = _propensities(agent, d, arm, K)
    stderr = _number("pi_stderr", d["pi_stderr"], 0.0, 1.0)
    t = _number("t", d["t"])
    if agent.context_mode:
        x, g = ctx[0].copy(), arm
    else:
        x, g = np.array(ctx[arm], dtype=np.float64), 0
    rec = Decision(event, arm, label, p, pis, d["pi_method"], stderr, version, bandit, t)
    # checked: now the agent changes, as decide changes it
    if len(agent._open) >= agent.max_open:
        agent._expire_oldest()
    agent._open[event] = (x, g, bandit, t, rec)
    agent.policy.t += 1
    agent.counts["decisions"] += 1
    for fn in agent._listeners:
        fn("decide", rec)
    return rec


__all__ = ["adopt_decision"]
