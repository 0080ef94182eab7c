"""The decision log (allseason/agent/decision_log.py): the columns of the contract, a header
once, append mode, a crash's partial line cut, the batch lines; read back by
api.read_decision_log, and by Your data / ``replay`` AS IT IS (the agent's own columns named
as such, never "ignored"; IPS on the logged propensities; the logger's value = the mean
reward)."""

from __future__ import annotations

import json
import types

import numpy as np
import pytest

from allseason import api
from allseason.agent.decision_log import BATCHES, DECISIONS, DecisionLog, header
from allseason.cli import main
from allseason.logs import report


def _rec(i, label="a", p=0.5, version=0, bandit=0, t=None):
    return types.SimpleNamespace(
        event_id=f"e{i}",
        label=label,
        propensity=p,
        model_version=version,
        bandit=bandit,
        t=1_700_000_000.0 + i if t is None else t,
    )


def test_columns_header_once_and_append(tmp_path):
    with DecisionLog(tmp_path, n_context=2) as log:
        log.write_decision(
            timestamp=1.5,
            event_id='a,b "q"',
            arm="x",
            reward=0.25,
            propensity=1 / 3,
            context=[0.1, -2.0],
            model_version=4,
            bandit=2,
        )
    assert header(2) == [
        "timestamp", "event_id", "arm", "reward", "propensity", "x0", "x1", "model_version",
        "bandit",
    ]  # fmt: skip
    with DecisionLog(tmp_path) as log:  # reopened: n_context from the header, no new header
        assert log.n_context == 2
        log.write_decision(
            timestamp=2.0,
            event_id="e2",
            arm="y",
            reward=1.0,
            propensity=0.5,
            context=[0.0, 0.0],
            model_version=5,
            bandit=-1,
        )
    text = (tmp_path / DECISIONS).read_text()
    assert text.count("timestamp,") == 1 and len(text.splitlines()) == 3
    frame, batches = api.read_decision_log(tmp_path)
    assert frame["event_id"].tolist() == ['a,b "q"', "e2"]
    assert frame["propensity"].tolist() == [1 / 3, 0.5]  # exact: repr round-trips
    assert frame["bandit"].tolist() == [2, -1] and batches == []
    with pytest.raises(api.SpecError, match="use another folder"):
        DecisionLog(tmp_path, n_context=3)
    with pytest.raises(api.SpecError, match="context"):
        with DecisionLog(tmp_path) as log:
            log.write_decision(
                timestamp=3.0,
                event_id="e3",
                arm="y",
                reward=1.0,
                propensity=0.5,
                context=[0.0],
                model_version=5,
                bandit=0,
            )


def test_a_partial_last_line_is_left_out_then_cut(tmp_path):
    with DecisionLog(tmp_path) as log:
        log.write_decision(
            timestamp=1.0,
            event_id="e1",
            arm="a",
            reward=1.0,
            propensity=0.5,
            model_version=0,
            bandit=0,
        )
    with open(tmp_path / DECISIONS, "a") as fh:
        fh.write("2.0,e2,a,0.")  # a crash in the middle of a row
    with open(tmp_path / BATCHES, "a") as fh:
        fh.write('{"version": 1}\n{"vers')
    frame, batches = api.read_decision_log(tmp_path)  # a reader while the agent writes
    assert frame["event_id"].tolist() == ["e1"] and batches == [{"version": 1}]
    log = DecisionLog(tmp_path)
    assert log.repaired == len("2.0,e2,a,0.") + len('{"vers')
    log.write_decision(
        timestamp=3.0, event_id="e3", arm="a", reward=0.0, propensity=0.5, model_version=0, bandit=0
    )
    log.close()
    assert api.read_decision_log(tmp_path)[0]["event_id"].tolist() == ["e1", "e3"]


def test_the_listener_writes_rows_and_batches(tmp_path):
    log = DecisionLog(tmp_path, n_context=1)
    log("decide", _rec(1), np.array([0.5]))
    log("decide", _rec(2, label="b", p=0.25))
    log("decide", _rec(3))
    log("learned", _rec(2, label="b", p=0.25), 1.0)  # out of order: rows as rewards come
    log("dropped", _rec(3), None)
    agent = types.SimpleNamespace(
        model_version=1,
        summary=lambda: {
            "version": 1,
            "counts": {"decisions": 3, "learned": 1},
            "bandits": [
                {"id": 0, "role": "shadow", "weight": 0.25},
                {"id": 2, "role": "base", "weight": 0.75},
            ],
        },
    )
    log("batch", agent, [{"kind": "spawn", "bandit": 2, "other": None, "value": None}])
    log("expired", _rec(1), 0.0)
    log.close()
    frame, batches = api.read_decision_log(tmp_path)
    assert frame["event_id"].tolist() == ["e2", "e1"]
    assert frame["x0"].isna().tolist() == [True, False]  # e2's context was not given
    assert frame["reward"].tolist() == [1.0, 0.0]
    assert batches == [
        {"version": 1, "time": 1_700_000_002.0, "decisions": 3, "learned": 1, "ids": [0, 2],
         "weights": [0.25, 0.75],
         "events": [{"kind": "spawn", "bandit": 2, "other": None, "value": None}]},
    ]  # fmt: skip


def _agent_like_log(tmp_path, n=3_000, seed=0):
    """A log shaped as the agent writes it, from a known non-uniform logger (softmax over
    arms, context-dependent), rewards Bernoulli; returns (folder, realised mean)."""
    rng = np.random.default_rng(seed)
    K, d = 3, 2
    rewards = []
    with DecisionLog(tmp_path, n_context=d) as log:
        for i in range(n):
            c = rng.uniform(-1, 1, d)
            logits = np.array([0.0, c[0], 0.5 * c[1]])
            pi = np.exp(logits) / np.exp(logits).sum()
            a = int(rng.choice(K, p=pi))
            r = float(rng.random() < [0.3, 0.5 + 0.2 * c[0], 0.4][a])
            rewards.append(r)
            log.write_decision(
                timestamp=1_700_000_000 + i,
                event_id=f"ev-{i}",
                arm=f"arm{a}",
                reward=r,
                propensity=float(pi[a]),
                context=c,
                model_version=i // 10,
                bandit=i % 3,
            )
    return tmp_path / DECISIONS, float(np.mean(rewards))


def test_your_data_reads_the_log_as_it_is(tmp_path):
    path, mean = _agent_like_log(tmp_path)
    log = api.read_user_file(path.read_bytes())
    assert log.agent_columns == ("event_id", "model_version", "bandit")
    assert log.ignored == () and log.context_names == ("x0", "x1")
    assert not log.uniform and log.propensity is not None
    line = report.log_line(log)
    assert "written by an allseason agent" in line and "ignored" not in line
    result = api.evaluate(log, ["random", "lints"], n_seeds=1, workers=1)
    rows = result.summary()
    assert rows[0]["policy"] == "logger" and rows[0]["estimate"] == pytest.approx(mean, abs=1e-15)
    # random's IPS with the logged propensities: unbiased for random's value, here known
    ips = next(r for r in rows if r["policy"] == "random" and r["method"] == "ips")
    assert ips["low"] <= (0.3 + 0.5 + 0.4) / 3 <= ips["high"]


def test_replay_cli_reads_the_log_as_it_is(tmp_path, capsys):
    path, mean = _agent_like_log(tmp_path, n=1_000)
    rc = main(["replay", str(path), "--seeds", "1", "--policies", "random", "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    doc = json.loads(out.out)
    assert doc["logger"]["estimate"] == pytest.approx(mean, abs=1e-15)
    assert "written by an allseason agent" in doc["log"] and "ignored" not in doc["log"]
