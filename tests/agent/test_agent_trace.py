"""The agent's decisions, bit for bit, against a trace recorded before the hot path was rebuilt
(issue 31's one-call decide/learn): ``agent_trace.json`` was written by this module's
:func:`trace` at commit 2bbf731 (``python -m tests.agent.test_agent_trace --write``), before
any change; the test runs the same calls now and compares everything: each decision's arm,
player, propensity (as ``float.hex``: every bit), method and model version, a SHA-256 of every
decision's full record (all arms' pi, stderr, label), the counts, and a SHA-256 of the whole
state (manifest and arrays) after the run. Each case saves and loads (``to_state`` /
``from_state``) in the middle and goes on with the loaded agent.

Do not regenerate the file to make this test pass: a difference is a change of decisions.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from allseason.agent import Agent

TRACE = Path(__file__).with_name("agent_trace.json")
NAMES = ["allseason-sw", "allseason-disc", "lints", "sw-lints", "d-lints"]
N_STEPS = 48
D, K = 3, 4


def _state_hash(agent) -> str:
    manifest, arrays = agent.to_state()
    h = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode())
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _record_text(rec) -> str:
    d = rec.to_dict()
    d["propensity"] = None if rec.propensity is None else float(rec.propensity).hex()
    d["propensities"] = (
        None if rec.propensities is None else [float(v).hex() for v in rec.propensities]
    )
    d["pi_stderr"] = float(d["pi_stderr"]).hex()
    d["t"] = float(d["t"]).hex()
    return json.dumps(d, sort_keys=True)


def _case(name: str, context: bool, pi: bool, batch_size: int, n_steps: int = N_STEPS) -> dict:
    """One fixed sequence of calls: decisions (K of 1, 2 and 4 in arms mode: deterministic,
    exact and Monte Carlo pi), rewards two steps late and out of order, a duplicate, an
    expiry, and a save/load (``to_state``/``from_state``) in the middle."""
    kw = dict(d=D, seed=7, batch_size=batch_size, propensities=pi, n_mc=64, horizon=5.0)
    kw["on_expire"] = "default"
    if context:
        kw["n_arms"] = K
    agent = Agent(name, **kw)
    rng = np.random.default_rng(3)
    theta = rng.standard_normal((K, D))
    arms, bandits, props, methods, versions = [], [], [], [], []
    full = hashlib.sha256()
    waiting = []
    for i in range(n_steps):
        if i == n_steps // 2:
            agent = Agent.from_state(*agent.to_state())
        event = i if i % 3 else f"ev-{i}"
        if context:
            c = rng.standard_normal(D)
            rec = agent.decide(context=c, event_id=event, t=float(i))
            r = float(theta[rec.arm] @ c)
        else:
            k = (1, 2, 4)[i % 3] if i % 5 else K
            X = rng.standard_normal((k, D))
            rec = agent.decide(X, event_id=event, t=float(i))
            r = float(X[rec.arm] @ theta[0])
        r += 0.1 * float(rng.standard_normal())
        arms.append(rec.arm)
        bandits.append(rec.bandit)
        props.append(None if rec.propensity is None else float(rec.propensity).hex())
        methods.append(rec.pi_method)
        versions.append(rec.model_version)
        full.update(_record_text(rec).encode())
        if i % 7 == 6:
            continue  # never rewarded: expires
        waiting.append((event, r))
        if len(waiting) >= 3:  # the reward of two steps ago, then out of order
            j = 1 if i % 4 == 0 else 0
            e, rw = waiting.pop(j)
            agent.learn(e, rw, t=float(i))
        if i % 11 == 10:
            agent.expire(float(i))
        if i == 22:
            assert agent.learn(e, 0.5) == "duplicate"
    agent.end_batch()
    return {
        "arms": "".join(str(a) for a in arms[:N_STEPS]),
        "bandits": ",".join(str(b) for b in bandits[:N_STEPS]),
        "propensities_first": props[:6],
        "methods": sorted(set(methods)),
        "versions": versions[-1],
        "records_sha256": full.hexdigest(),
        "counts": agent.counts,
        "state_sha256": _state_hash(agent),
    }


CASES = [
    (name, context, pi, batch_size)
    for name in NAMES
    for context in (True, False)
    for pi in (True, False)
    for batch_size in ((1, 3) if name == "allseason-sw" else (2,))
]


def _key(case) -> str:
    name, context, pi, batch_size = case
    return f"{name}/{'context' if context else 'arms'}/pi={pi}/B={batch_size}"


def _long_case() -> dict:
    """All-Season (SW), context mode, exact pi, 400 steps at K = 6: bandits of small weight,
    so every node count of the mixture's quadrature (4, 8, 16, 32) is taken."""
    global K
    saved, K = K, 6
    try:
        return _case("allseason-sw", True, True, 1, n_steps=400)
    finally:
        K = saved


def trace() -> dict:
    """The trace of every case (the JSON file's content)."""
    out = {_key(c): _case(*c) for c in CASES}
    out["allseason-sw/context/pi=True/B=1/long"] = _long_case()
    return out


def _expected() -> dict:
    return json.loads(TRACE.read_text())


@pytest.mark.parametrize("case", CASES, ids=_key)
def test_same_calls_same_decisions_as_recorded(case):
    """The decisions, pi (every bit) and state after the run are those recorded at 2bbf731."""
    want = _expected()[_key(case)]
    got = json.loads(json.dumps(_case(*case)))
    for field in want:
        assert got[field] == want[field], field


def test_long_run_with_every_quadrature_level_as_recorded():
    """400 exact-pi decisions of All-Season (bandits of small weight) as recorded."""
    want = _expected()["allseason-sw/context/pi=True/B=1/long"]
    got = json.loads(json.dumps(_long_case()))
    for field in want:
        assert got[field] == want[field], field


if __name__ == "__main__":  # pragma: no cover - how agent_trace.json was written (at 2bbf731)
    if "--write" in sys.argv:
        rows = [json.dumps(k) + ":" + json.dumps(v, sort_keys=True) for k, v in trace().items()]
        TRACE.write_text("{\n" + ",\n".join(rows) + "\n}\n")
    else:
        print(json.dumps(trace(), indent=1, sort_keys=True))
