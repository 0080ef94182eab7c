"""The loop closed, small (benchmarks/agent_loop.py has the 50,000-event run): All-Season
deployed through decide/learn only on a seasonal world, rewards late and out of order, its
log attached; ``python -m allseason replay`` (in process) reads the log as it is; the
logger's value is the realised mean reward, and All-Season's IPS interval contains the TRUE
value (known from the world) of the agent it estimates: the same hyperparameters replayed on
the log, a different agent from the deployed one. Then a save/load in the middle of a logged
run: the log goes on (one header), and the decisions are those of an agent never saved."""

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
    report = agent_loop.evaluate(tmp_path / DECISIONS, n_seeds=2, in_process=True)
    truth = agent_loop.true_values(tmp_path / DECISIONS, world_seed=1, n_seeds=2)
    spec = agent_loop.deployed_spec(deployed["hyperparameters"])
    assert dict(spec.params)["sigma2"] == 1.0  # the agent's; replay's own contestant: 0.25
    mine = agent_loop.true_values(tmp_path / DECISIONS, world_seed=1, n_seeds=2, name=spec)
    out = agent_loop.summarise(deployed, report, truth, mine)
    assert "written by an allseason agent" in out["log"] and "ignored" not in out["log"]
    assert out["logger_value"] == pytest.approx(deployed["realised_mean"], abs=1e-12)
    # the replay's IPS is an estimate of the replayed agent (the same hyperparameters
    # learning on the log's kept events), whose true value the world gives: it is inside
    assert out["same_ips_as_replay"], (truth["ips"], out["allseason_ips"])
    assert out["allseason_ips_contains_true"], (truth["true"], out["allseason_ips"])
    for s in truth["seeds"]:  # pi is the law of the replay's own draws: their mean p agrees
        assert s["realised_draws"] == pytest.approx(s["true"], abs=0.03), s
    assert out["as_deployed"]["contains_true"], out["as_deployed"]
    for frozen in (truth["frozen"], mine["frozen"]):  # no learning: IPS against the truth
        assert frozen["covers"], frozen
    for name in agent_loop.CONTESTANTS:
        ess = out["ess"][name]
        assert 0 < ess <= 3_000, (name, ess)


def test_true_values_read_the_arms_in_the_logs_order(tmp_path):
    """The log's arms are sorted by label (music, news, sport, weather), not the world's
    order: p_t must be permuted (a true value computed in the world's order is wrong, and
    world_probs refuses a log whose rewards do not fit)."""
    agent_loop.deploy(300, tmp_path, seed=3)
    log = api.read_user_file((tmp_path / DECISIONS).read_bytes(), "log")
    assert log.arm_names == tuple(sorted(agent_loop.LABELS))
    p = agent_loop.world_probs(log, 300, seed=3)
    _, _, p_world, _ = agent_loop.world(300, seed=3)
    assert np.array_equal(p[:, log.arm_names.index("news")], p_world[:, 0])
    with pytest.raises(ValueError, match="not the world"):
        agent_loop.world_probs(log, 300, seed=4)


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
