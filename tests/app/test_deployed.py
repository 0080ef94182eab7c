"""The page "Your deployed bandit" under AppTest: the server's folder (read as it grows), an
upload, the built-in example, bad files (one st.error, never an exception) and the log sent
to Your data."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("streamlit")
pytest.importorskip("plotly")

from conftest import open_app_page, run_fragment
from deployed_page import write_fake_log
from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.ui import deployed, settings, yourdata

from ..shared_results import deployment_example as shared_example

PAGE = "app_pages/10_Your_deployed_bandit.py"
TIMEOUT = 240


@pytest.fixture(autouse=True)
def _example_made_once(_data_cache_dir, monkeypatch):
    """The page's built-in example is ``api.deployment_example()``, made once per session
    (``tests/shared_results.py``; ``tests/logs/test_deployed_example.py`` checks it), not
    once in each test process that opens the page (13 CPU-s each); made when the page first
    asks for it (its errors, as the real call's)."""
    real = api.deployment_example

    def example(*args, **kw):
        return real(*args, **kw) if args or kw else shared_example(_data_cache_dir)

    monkeypatch.setattr(api, "deployment_example", example)


def open_page(monkeypatch, folder=None) -> AppTest:
    if folder is None:
        monkeypatch.delenv(settings.DEPLOYED_ENV, raising=False)
    else:
        monkeypatch.setenv(settings.DEPLOYED_ENV, str(folder))
    at = open_app_page(PAGE, timeout=TIMEOUT)
    assert not at.exception, [e.value for e in at.exception]
    return at


def figures(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    return [f["layout"]["title"]["text"] for f in figures(at)]


def text(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def test_the_servers_folder_is_drawn_and_read_again_as_it_grows(tmp_path, monkeypatch):
    write_fake_log(tmp_path, 5000, batch_size=1)
    at = open_page(monkeypatch, tmp_path)
    assert at.radio(key=deployed.SOURCE).value == deployed.FOLDER
    assert not at.error
    assert "**5,000 decisions** resolved, **5,000 batch updates**, 5 arms" in text(at)
    assert titles(at) == [
        "Weight of the most likely bandit — your deployment",
        "Reward over time",
        "Logged propensities",
    ]
    top = figures(at)[0]
    names = [t.get("name") for t in top["data"]]
    assert "shadow" in names and any(n.startswith("recall (") for n in names)
    assert len(at.dataframe) >= 1 and "bandit" in at.dataframe[0].value.columns
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Smallest propensity"]) > 0
    write_fake_log(tmp_path, 500, batch_size=1, start=5000, seed=3)
    run_fragment(at, "dp_folder", monkeypatch)
    assert not at.exception and not at.error
    assert "**5,500 decisions** resolved, **5,500 batch updates**" in text(at)


def test_a_folder_that_is_not_a_decision_log_is_one_error_line(tmp_path, monkeypatch):
    (tmp_path / "decisions.csv").write_text("name,age\nann,3\n")
    at = open_page(monkeypatch, tmp_path)
    assert len(at.error) == 1 and "not a decision log" in at.error[0].value
    assert not at.get("plotly_chart")


def test_an_empty_folder_waits(tmp_path, monkeypatch):
    at = open_page(monkeypatch, tmp_path)
    assert not at.error and len(at.warning) == 1 and "refreshes itself" in at.warning[0].value


def _upload(at, key, name, data):
    at.file_uploader(key=deployed.UPLOADS[key]).set_value((name, data, "text/plain"))
    at.run()


def test_an_upload_is_drawn_and_a_bad_one_is_one_line(tmp_path, monkeypatch):
    write_fake_log(tmp_path, 3000, batch_size=10)
    at = open_page(monkeypatch)
    at.radio(key=deployed.SOURCE).set_value(deployed.UPLOAD).run()
    assert not at.error
    _upload(at, "decisions", "decisions.csv", (tmp_path / "decisions.csv").read_bytes())
    _upload(at, "batches", "batches.jsonl", (tmp_path / "batches.jsonl").read_bytes())
    assert not at.exception and not at.error
    assert "**3,000 decisions** resolved, **300 batch updates**" in text(at)
    assert len(at.get("plotly_chart")) == 3
    cut = (tmp_path / "batches.jsonl").read_bytes()[:5000] + b'{"ids": [0, 1], "weig\n'
    _upload(at, "batches", "batches.jsonl", cut)
    assert not at.exception
    assert len(at.error) == 1 and "batches.jsonl: line" in at.error[0].value
    _upload(at, "decisions", "rewards.csv", b"time,arm,reward\n1,a,1\n")
    assert not at.exception and len(at.error) == 1
    assert "not a decision log" in at.error[0].value


def test_the_log_goes_to_your_data(tmp_path, monkeypatch):
    """The button hands the folder's decisions to Your data, which opens on them (and
    replays them: 1,000 decisions, every offline contestant, with Your data's default seeds
    set to 2, the fewest the page takes: the hand-over is checked here, and more seeds only
    make more replays of the same kind, which tests/app/test_yourdata.py checks)."""
    monkeypatch.setattr(api, "DEFAULT_SEEDS", 2)
    write_fake_log(tmp_path, 1000, batch_size=1)
    at = open_page(monkeypatch, tmp_path)
    at.button(key="dp_send").click().run()
    assert not at.exception
    source = at.session_state[yourdata.SOURCE]
    assert source["name"] == "deployed-decisions.csv" and source["origin"] == "deployed"
    log = api.read_user_file(source["data"], "log")
    assert log.n_events == 1000 and log.propensity is not None
    # the app is now on Your data, showing the log
    assert any("Your data" == t.value for t in at.title)


@pytest.mark.skipif(not hasattr(api, "Agent"), reason="the agent (issue 31) is not merged")
def test_the_built_in_example_is_a_deployed_agent(monkeypatch):
    at = open_page(monkeypatch)
    assert at.radio(key=deployed.SOURCE).value == deployed.EXAMPLE
    assert not at.error and len(at.get("plotly_chart")) == 3
    assert "**10,000 decisions** resolved" in text(at)
    assert STATE_TITLE in [h.value for h in at.subheader]  # and its saved state
    assert "at model version **10,000**" in text(at)


STATE_TITLE = "What the agent believes now (its saved state)"


def _state_bytes(tmp_path, name="allseason-sw", n=200) -> bytes:
    agent = api.Agent(name, d=3, n_arms=4, seed=2, batch_size=5)
    rng = np.random.default_rng(0)
    for i in range(n):
        rec = agent.decide(context=rng.normal(size=3), event_id=f"e{i}")
        agent.learn(f"e{i}", float(rec.arm == (i // 50) % 4))
    agent.save(tmp_path / "agent.state")
    return (tmp_path / "agent.state").read_bytes()


def test_an_uploaded_state_shows_what_the_agent_believes(tmp_path, monkeypatch):
    data = _state_bytes(tmp_path)
    view = api.read_agent_state(data, "agent.state")
    at = open_page(monkeypatch)
    at.radio(key=deployed.SOURCE).set_value(deployed.UPLOAD).run()
    _upload(at, "state", "agent.state", data)
    assert not at.exception and not at.error
    assert STATE_TITLE in [h.value for h in at.subheader]
    words = text(at)
    assert f"at model version **{view['about']['model_version']:,}**" in words
    assert "a sliding window of the last tau = 10 observations" in words
    assert "N_max = **5**" in words and "4 arms (0, 1, 2, 3)" in words
    tables = [d.value for d in at.dataframe]
    bandits = next(t for t in tables if "role" in t.columns)
    assert list(bandits["bandit"]) == list(view["bandits"]["bandit"])
    assert "shadow" in set(bandits["role"])
    theta = next(t for t in tables if "block" in t.columns)
    assert len(theta) == len(view["bandits"]) * 4 and "x0" in theta.columns
    # with the log too: the log's figures, then the state
    write_fake_log(tmp_path, 1000, batch_size=1)
    _upload(at, "decisions", "decisions.csv", (tmp_path / "decisions.csv").read_bytes())
    assert not at.exception and not at.error and len(at.get("plotly_chart")) == 3
    assert STATE_TITLE in [h.value for h in at.subheader]


@pytest.mark.parametrize(
    "name, data, words",
    [
        ("agent.state", b"PK\x03\x04 not really a zip", "agent.state: "),
        ("evil.state", b"\x00" * 5000, "evil.state: "),
        ("notes.txt", b"hello", "notes.txt: "),
    ],
    ids=["a cut zip", "zeros", "text"],
)
def test_a_bad_state_upload_is_one_error_line(monkeypatch, name, data, words):
    at = open_page(monkeypatch)
    at.radio(key=deployed.SOURCE).set_value(deployed.UPLOAD).run()
    _upload(at, "state", name, data)
    assert not at.exception
    assert len(at.error) == 1 and words in at.error[0].value, [e.value for e in at.error]
    assert STATE_TITLE not in [h.value for h in at.subheader]


def test_a_state_of_a_huge_agent_in_a_small_file_is_refused(tmp_path, monkeypatch):
    from allseason.agent.statefile import write_state

    agent = api.Agent("allseason-sw", d=3, n_arms=4, seed=2)
    manifest, arrays = agent.to_state()
    manifest["settings"] = {**manifest["settings"], "d": 100_000}
    manifest["d"] = 100_000
    write_state(tmp_path / "huge.state", manifest, arrays)
    at = open_page(monkeypatch)
    at.radio(key=deployed.SOURCE).set_value(deployed.UPLOAD).run()
    _upload(at, "state", "huge.state", (tmp_path / "huge.state").read_bytes())
    assert not at.exception
    assert len(at.error) == 1 and "do not fit the manifest" in at.error[0].value


def test_the_servers_folder_shows_its_saved_state(tmp_path, monkeypatch):
    (tmp_path / api.STATE_FILE).write_bytes(_state_bytes(tmp_path, n=60))
    at = open_page(monkeypatch, tmp_path)
    assert not at.exception and not at.error and not at.warning
    assert STATE_TITLE in [h.value for h in at.subheader]
    write_fake_log(tmp_path, 500, batch_size=1)
    (tmp_path / api.STATE_FILE).write_bytes(b"garbage")
    run_fragment(at, "dp_folder", monkeypatch)
    assert not at.exception
    assert len(at.error) == 1 and f"{api.STATE_FILE}: " in at.error[0].value
    assert len(at.get("plotly_chart")) == 3  # the log is still drawn
