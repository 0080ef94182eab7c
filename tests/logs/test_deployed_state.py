"""What a deployed agent believes now, from its saved state (allseason/logs/deployed_state.py):
the bandits, their weights, the shadow and its window or discount, N_max, each bandit's
posterior mean and standard deviation against their formulas; a bad or hostile file is
ONE line naming it, with bounded memory."""

from __future__ import annotations

import io
import tracemalloc
import zipfile

import numpy as np
import pytest

from allseason import api
from allseason.agent import Agent
from allseason.agent.statefile import write_state
from allseason.limits import DEPLOYED_LIMITS

D, K = 3, 4


def _agent(name="allseason-sw", context=True, n=300, **kw) -> Agent:
    agent = Agent(name, d=D, n_arms=K if context else None, seed=4, batch_size=5, **kw)
    rng = np.random.default_rng(9)
    for i in range(n):
        season = (i // 60) % 2
        if context:
            c = rng.normal(size=D)
            rec = agent.decide(context=c, event_id=f"e{i}", t=1e9 + i)
            r = float(c[0] * (1 if season else -1) * (rec.arm - 1.5) + rng.normal(0, 0.1))
        else:
            rec = agent.decide(rng.normal(size=(K, D)), event_id=f"e{i}", t=1e9 + i)
            r = float(rng.normal(0.5 - season, 0.1))
        agent.learn(f"e{i}", r)
    return agent


def _bytes(agent: Agent, tmp_path) -> bytes:
    path = tmp_path / "a.state"
    agent.save(path)
    return path.read_bytes()


@pytest.mark.parametrize("context", [True, False])
def test_an_all_season_state_says_what_each_bandit_believes(tmp_path, context):
    agent = _agent(context=context)
    view = api.read_agent_state(_bytes(agent, tmp_path), "mine.state")
    a = view["about"]
    assert a["policy"] == "allseason-sw" and a["model_version"] == agent.model_version
    assert "tau = 10" in a["shadow"] and a["n_max"] == 5 and a["ensemble"]
    assert a["counts"]["learned"] == 300 and a["n_arms"] == (K if context else None)
    b = view["bandits"]
    ids, w = agent.weights()
    assert sorted(b["bandit"]) == sorted(ids.tolist()) and b["weight"].sum() == pytest.approx(1)
    assert list(b["weight"]) == sorted(b["weight"], reverse=True)  # the heaviest first
    assert (b.loc[b["bandit"] == 0, "role"] == "shadow").all()
    assert len(b) >= 2 and agent.counts["spawned"] >= 1  # an ensemble, not one model
    theta = view["theta"]
    p = D + 1 if context else D
    G = K if context else 1
    assert len(theta) == len(ids) * G * p
    assert set(theta["block"]) == ({f"arm {k}" for k in range(K)} if context else {"all arms"})
    for post in agent.policy.posterior_blocks():
        for g in range(G):
            rows = theta[(theta["bandit"] == post.bandit)].iloc[g * p : (g + 1) * p]
            np.testing.assert_allclose(rows["mean"], post.mu[g], rtol=0, atol=0)
            cov = np.linalg.inv(post.M[g])  # the formula, another way
            np.testing.assert_allclose(rows["sd"], np.sqrt(np.diag(cov)), rtol=1e-9)
    wide = view["wide"]
    assert list(wide.columns[:2]) == ["bandit", "block"] and len(wide) == len(ids) * G
    assert wide["bandit"].iloc[0] == b["bandit"].iloc[0]
    assert " ± " in wide.iloc[0, 2]


@pytest.mark.parametrize(
    "name, words",
    [
        ("lints", "never forgets"),
        ("d-lints", "gamma = 0.9"),
        ("allseason-disc", "gamma = 0.9"),
    ],  # fmt: skip
)
def test_other_policies_say_their_memory(tmp_path, name, words):
    view = api.read_agent_state(_bytes(_agent(name, n=40), tmp_path), "x.state")
    assert words in view["about"]["shadow"]
    if api.role(name).family == "allseason":
        assert view["about"]["ensemble"]
    else:
        assert list(view["bandits"]["role"]) == ["model"] and not view["about"]["ensemble"]


def _zip_with(manifest_text: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("manifest.json", manifest_text)
    return buf.getvalue()


def _hostile(tmp_path) -> list[tuple[str, bytes, str]]:
    agent = _agent(n=30)
    good = _bytes(agent, tmp_path)
    manifest, arrays = agent.to_state()

    def rewritten(**changes) -> bytes:
        m = {**manifest, "settings": {**manifest["settings"], **changes.pop("settings", {})}}
        m.update(changes)
        path = tmp_path / "h.state"
        write_state(path, m, arrays)
        return path.read_bytes()

    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0xFF
    return [
        ("not a zip", b"hello, I am not a state file" * 10, "not a state file"),
        ("empty", b"", "truncated"),
        ("cut", good[: len(good) // 2], "truncated"),
        ("a flipped byte", bytes(flipped), "x.state"),
        ("a manifest only", _zip_with(b'{"state_format": "allseason-state"}'), "x.state"),
        ("NaN", _zip_with(b"{NaN"), "x.state"),
        ("too large", b"\0" * (DEPLOYED_LIMITS["upload_bytes"] + 1), "at most"),
        ("a huge d", rewritten(settings={"d": 100_000}, d=100_000), "do not fit"),
        ("many arms", rewritten(labels=[str(i) for i in range(100)]), "do not fit"),
        (
            "more bandits",
            rewritten(hyperparameters={**manifest["hyperparameters"], "n_max": 100}),
            "do not fit",
        ),  # fmt: skip
        (
            "a long window",
            rewritten(hyperparameters={**manifest["hyperparameters"], "tau": 150_000}),
            "window",
        ),  # fmt: skip
        ("an oracle", rewritten(policy="oracle-state"), "true seasons"),
        ("another format", rewritten(format="allseason-sweep"), "not an agent state"),
        ("another major", rewritten(format_version=[2, 0]), "format version"),
    ]


def test_a_bad_or_hostile_state_is_one_line_with_bounded_memory(tmp_path):
    for what, data, words in _hostile(tmp_path):
        tracemalloc.start()
        with pytest.raises(api.SpecError) as e:
            api.read_agent_state(data, "x.state")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        msg = str(e.value)
        assert msg.startswith("x.state: ") and "\n" not in msg, (what, msg)
        assert words in msg, (what, msg)
        assert peak < 3 * len(data) + 40_000_000, (what, peak)


def test_a_folders_state_file_is_read_with_its_size_checked_first(tmp_path):
    agent = _agent(n=20)
    agent.save(tmp_path / api.STATE_FILE)
    view = api.read_agent_state_file(tmp_path / api.STATE_FILE)
    assert view["about"]["model_version"] == agent.model_version
    big = tmp_path / "big.state"
    with open(big, "wb") as f:
        f.truncate(DEPLOYED_LIMITS["upload_bytes"] + 1)
    with pytest.raises(api.SpecError, match="big.state: the file has"):
        api.read_agent_state_file(big)
    with pytest.raises(api.SpecError, match="gone.state: cannot be read"):
        api.read_agent_state_file(tmp_path / "gone.state")
