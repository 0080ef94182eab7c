"""``Agent.adopt`` (allseason/agent/adopt.py): a decision a service's reader made from a
snapshot, held open by the writer as if it had made it. An adopted decision learns exactly
like one the agent made (the whole state, bit for bit); a duplicate or a record of another
agent is refused in one line, and nothing changes."""

from __future__ import annotations

import json

import numpy as np
import pytest

from allseason.agent import Agent
from allseason.errors import SpecError

D, K = 3, 4


def _inputs(context: bool, i: int) -> dict:
    rng = np.random.default_rng(1000 + i)
    if context:
        return {"context": rng.normal(size=D)}
    return {"arms": rng.normal(size=(K, D))}


def _make(name: str, context: bool, batch_size: int = 2) -> Agent:
    return Agent(name, d=D, n_arms=K if context else None, seed=3, batch_size=batch_size)


def _drive(agent: Agent, context: bool, start: int, n: int) -> list[int]:
    arms = []
    for i in range(start, start + n):
        rec = agent.decide(**_inputs(context, i), event_id=f"e{i}", t=1e9 + i)
        arms.append(rec.arm)
        agent.learn(f"e{i}", float(rec.arm == i % K), t=1e9 + i)
    return arms


def _same(a: Agent, b: Agent) -> None:
    ma, xa = a.to_state()
    mb, xb = b.to_state()
    assert sorted(xa) == sorted(xb)
    for k in xa:
        assert xa[k].dtype == xb[k].dtype and xa[k].tobytes() == xb[k].tobytes(), k
    assert json.dumps(ma, sort_keys=True) == json.dumps(mb, sort_keys=True)


def _wire(rec) -> dict:
    """The record as a reader's journal carries it (JSON and back)."""
    return json.loads(json.dumps(rec.to_dict()))


@pytest.mark.parametrize("context", [True, False])
@pytest.mark.parametrize("name", ["allseason-sw", "lints"])
def test_an_adopted_decision_learns_like_one_the_agent_made(name, context):
    base = _make(name, context)
    _drive(base, context, 0, 25)
    made, adopter = base.copy(), base.copy()
    reader = base.copy()  # a reader's snapshot, at the same version
    seen = []
    adopter.add_listener(lambda kind, *rest: seen.append((kind, getattr(rest[0], "event_id", ""))))
    x = _inputs(context, 99)
    mine = made.decide(**x, event_id="ev-99", t=2e9)
    theirs = reader.decide(**x, event_id="ev-99", t=2e9)
    got = adopter.adopt(_wire(theirs), **x)
    assert got.to_dict() == mine.to_dict() and seen == [("decide", "ev-99")]  # a log sees it
    _same(adopter, made)  # held open exactly as the agent's own
    for a in (made, adopter):
        assert a.learn("ev-99", 1.0, t=2e9 + 5) == "learned"
        a.end_batch()
    _same(adopter, made)
    assert _drive(adopter, context, 100, 20) == _drive(made, context, 100, 20)
    _same(adopter, made)


@pytest.mark.parametrize("context", [True, False])
def test_a_decision_of_an_older_snapshot_is_kept_as_answered_and_learnt(context):
    writer = _make("allseason-sw", context, batch_size=1)
    _drive(writer, context, 0, 10)
    reader = writer.copy()
    _drive(writer, context, 10, 15)  # the writer moves on: 15 batch updates
    assert writer.model_version == reader.model_version + 15
    x = _inputs(context, 50)
    rec = reader.decide(**x, event_id="r1-50", t=3e9)
    got = writer.adopt(rec, **x)
    assert got.model_version == reader.model_version and got.arm == rec.arm
    assert got.propensity == rec.propensity and got.bandit == rec.bandit
    before = writer.counts["learned"], writer.model_version
    assert writer.learn("r1-50", 1.0) == "learned"
    assert (writer.counts["learned"], writer.model_version) == (before[0] + 1, before[1] + 1)


def _refused(agent: Agent, rec, words: str, **x) -> None:
    before = agent.to_state()
    with pytest.raises(SpecError) as e:
        agent.adopt(rec, **x)
    assert words in str(e.value) and "\n" not in str(e.value), str(e.value)
    after = agent.to_state()  # nothing changed
    assert json.dumps(before[0], sort_keys=True) == json.dumps(after[0], sort_keys=True)
    assert all(before[1][k].tobytes() == after[1][k].tobytes() for k in before[1])


def test_a_duplicate_or_another_agents_record_is_refused_in_one_line():
    writer = _make("allseason-sw", False, batch_size=1)
    _drive(writer, False, 0, 12)
    reader = writer.copy()
    x = _inputs(False, 70)
    rec = _wire(reader.decide(**x, event_id="r-70", t=3e9))
    writer.adopt(rec, **x)
    _refused(writer, rec, "is still open: one decision per event", **x)
    writer.learn("r-70", 0.0)
    _refused(writer, rec, "was already resolved: one decision per event", **x)
    _refused(writer, dict(rec, event_id="e3"), "was already resolved", **x)  # the writer's own
    # a record of another model version: a state this agent never had
    newer = dict(rec, event_id="r-71", model_version=writer.model_version + 1)
    _refused(writer, newer, "model_version: ", **x)
    _refused(writer, newer, "newer than this agent's", **x)
    fresh = dict(rec, event_id="r-72")
    _refused(writer, dict(fresh, label="7"), "decision.label", **x)
    _refused(writer, dict(fresh, arm=K), "decision.arm: must be an integer in [0, 3]", **x)
    _refused(writer, dict(fresh, bandit=10**6), "decision.bandit", **x)
    _refused(writer, dict(fresh, propensities=[0.5, 0.5]), "decision.propensities", **x)
    _refused(writer, dict(fresh, propensity=2.0), "decision.propensity", **x)
    _refused(writer, dict(fresh, pi_method="guess"), "decision.pi_method", **x)
    _refused(writer, {"event_id": "r-73", "arm": 0}, "not a decision record", **x)
    _refused(writer, fresh, "arms: must have shape", arms=np.zeros((K, D + 1)))
    _refused(writer, fresh, "finite", arms=np.full((K, D), np.nan))
    _refused(writer, fresh, "this agent takes arms", context=np.zeros(D))
    lints = _make("lints", False)
    _refused(lints, dict(fresh, model_version=0), "decision.bandit", **x)  # one model: -1
    assert writer.adopt(fresh, **x).event_id == "r-72"  # the record itself was fine
