"""The page "Your deployed bandit" under AppTest: the server's folder (read as it grows), an
upload, the built-in example, bad files (one st.error, never an exception) and the log sent
to Your data."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("plotly")

from conftest import open_app_page, run_fragment
from deployed_page import write_fake_log
from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.ui import deployed, settings, yourdata

PAGE = "app_pages/10_Your_deployed_bandit.py"
TIMEOUT = 240


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
    replays them: 1,000 decisions, every offline contestant, Your data's default seeds)."""
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
    assert "**2,000 decisions** resolved" in text(at)
