"""The loop closed, small (benchmarks/agent_loop.py has the 50,000-event run): All-Season
deployed through decide/learn only on a seasonal world, rewards late and out of order, its
log attached; ``python -m allseason replay`` (in process) reads the log as it is; the
logger's value is the realised mean reward, and All-Season's own IPS interval contains it.
Then a save/load in the middle of a logged run: the log goes on (one header), and the
decisions are those of an agent never saved."""

from __future__ import annotations

import agent_loop  # benchmarks/ (on sys.path through conftest.py)
import numpy as np
import pytest

from allseason import api
from allseason.agent.decision_log import DECISIONS


def test_the_loop_closes(tmp_path):
    deployed = agent_loop.deploy(3_000, tmp_path, seed=1)
    assert deployed["counts"]["learned"] == 3_000 and deployed["counts"]["unknown"] == 0
    frame, batches = api.read_decision_log(tmp_path)
    assert len(frame) == 3_000 and len(batches) == deployed["counts"]["batches"]
    assert frame["propensity"].between(0, 1, inclusive="right").all()
    assert (frame["model_version"].diff().dropna() >= -batches[-1]["version"]).all()
    report = agent_loop.evaluate(tmp_path / DECISIONS, n_seeds=1, in_process=True)
    out = agent_loop.summarise(deployed, report)
    assert "written by an allseason agent" in out["log"] and "ignored" not in out["log"]
    assert out["logger_value"] == pytest.approx(deployed["realised_mean"], abs=1e-12)
    assert out["allseason_ips_contains_logger"], out["contestants"]["allseason-sw"]["ips"]
    for name in agent_loop.CONTESTANTS:
        ess = out["contestants"][name]["ips"]["ess"]
        assert 0 < ess <= 3_000, (name, ess)


def test_save_load_midway_keeps_the_log_and_the_decisions(tmp_path):
    c, _, p, u = agent_loop.world(400, seed=2)

    def run(folder, save_at=None):
        agent = api.Agent("allseason-sw", d=3, arms=agent_loop.LABELS, seed=5, batch_size=10)
        log = agent.attach_log(folder)
        arms = []
        for t in range(400):
            if t == save_at:
                agent.save(folder / "agent.state")
                log.close()
                agent = api.Agent.load(folder / "agent.state")
                log = agent.attach_log(folder)
            rec = agent.decide(context=c[t], event_id=f"e{t}", t=1.7e9 + t)
            arms.append(rec.arm)
            if t >= 5:  # rewards five events late
                agent.learn(f"e{t - 5}", float(u[t - 5, arms[t - 5]] < p[t - 5, arms[t - 5]]))
        log.close()
        return arms

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    straight = run(tmp_path / "a")
    resumed = run(tmp_path / "b", save_at=203)
    assert straight == resumed
    a = (tmp_path / "a" / DECISIONS).read_text()
    b = (tmp_path / "b" / DECISIONS).read_text()
    assert a == b and a.count("timestamp") == 1 and len(a.splitlines()) == 396
    fa, ba = api.read_decision_log(tmp_path / "a")
    fb, bb = api.read_decision_log(tmp_path / "b")
    assert ba == bb and len(ba) == 39
    ids = fa["event_id"].str[1:].astype(int).to_numpy()
    assert np.array_equal(fa[["x0", "x1", "x2"]].to_numpy(), c[ids])  # the contexts, exact
