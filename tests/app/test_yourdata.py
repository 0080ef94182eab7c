"""The Your data page under AppTest: the example buttons, a good upload, bad uploads (one
st.error naming the row or column, no exception anywhere), and the reward table's race on
the user's own dates."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("plotly")

from conftest import open_app_page
from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.logs import examples, obd, offline
from allseason.ui import yourdata

from ..shared_results import log_digest, resume_from

PAGE = "app_pages/7_Your_data.py"
TIMEOUT = 180


def open_page() -> AppTest:
    at = open_app_page(PAGE, timeout=TIMEOUT)
    assert_clean(at)
    return at


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def upload(at: AppTest, name: str, data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode()
    at.file_uploader(key=yourdata.UPLOAD).set_value((name, data, "text/csv"))
    at.run()


def figures(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def titles(at: AppTest) -> list[str]:
    out = []
    for f in figures(at):
        t = f["layout"].get("title", {})
        out.append(t.get("text", "") if isinstance(t, dict) else str(t))
    return out


def test_page_states_its_limits_and_offers_examples():
    at = open_page()
    text = " ".join(c.value for c in at.caption)
    assert f"{offline.APP_LIMITS['rows']:,} rows" in text and "up to 100,000 columns" in text
    assert f"{offline.APP_LIMITS['bytes'] // 1_000_000} MB" in text
    assert {b.key for b in at.button} >= {"yd_ex_log", "yd_ex_table"}
    assert not at.error


def test_log_example_gives_the_table_the_warning_and_a_csv(shared_obd_runs, monkeypatch):
    """The OBD-shaped example (20,000 events): the table (the logger's row first), the
    sparsity warning with the events that would decide, the figure, the CSV, then IPS.
    Two seeds, the fewest the page takes (its default, 5, only makes more replays of the
    same kind: 2.5 times the CPU).

    The page's ``api.evaluate`` call finds the replays of the same log, contestants, seeds
    and root seed already made (its ``done_runs``, as when it resumes after a rerun): they
    are made once per session (``tests/shared_results.py``; ``tests/logs/test_replay.py``
    checks them). Any other call, or another log, replays as before."""
    digest, runs = shared_obd_runs
    real = api.evaluate
    resumed = []

    def evaluate(log, specs=None, n_seeds=5, seed=0, **kw):
        same = specs is None and (n_seeds, seed) == (2, 0) and kw.get("fast", True)
        if same and kw.get("done_runs") is not None and log_digest(log) == digest:
            kw["done_runs"].update(resume_from(runs))
            resumed.append(log.n_events)
        return real(log, specs, n_seeds, seed, **kw)

    monkeypatch.setattr(api, "evaluate", evaluate)
    at = open_page()
    at.number_input(key="yd_seeds").set_value(2)
    at.button(key="yd_ex_log").click()
    at.run()
    assert_clean(at)
    assert not at.error
    table = at.table[0].value
    assert list(table.columns)[:2] == ["Policy", "Kept events"]
    assert len(table) == 1 + len(offline.OFFLINE_POLICIES)  # the logger's row first
    assert table.iloc[0]["Policy"].startswith("The logger") and table.index[0] == "log"
    assert set(table["Interval"].iloc[1:]) == {"Wilson (kept events)"}
    warning = " ".join(w.value for w in at.warning)
    assert "Too sparse to decide anything" in warning and str(offline.MIN_EVENTS) in warning
    assert "20% better" in warning and "events; the log has 20,000" in warning
    assert any("What the log measured" in m.value for m in at.markdown)
    assert any("Estimated mean reward" in t for t in titles(at))
    assert "yd_dl" in [b.key for b in at.get("download_button")] or at.get("download_button")
    # three estimators (the example has propensities): switch to IPS
    at.radio(key="yd_method").set_value("ips").run()
    assert_clean(at)
    ips = at.table[0].value
    assert list(ips.columns)[1] == "Effective sample size"
    assert "ESS, realised draw" in ips.columns
    assert ips["Interval"].iloc[1].startswith("block bootstrap")
    assert resumed == [examples.OBD_ROWS]  # the page evaluated the whole example, once


def test_table_example_races_on_the_users_dates():
    at = open_page()
    at.number_input(key="yd_seeds").set_value(2)
    at.button(key="yd_ex_table").click()
    at.run()
    assert_clean(at)
    assert not at.error
    board = at.table[0].value
    assert "Gap closed" in board.columns and len(board) == len(yourdata.TABLE_SPECS)
    names = titles(at)
    assert any("Which bandit held the weight" in t for t in names)
    top = [f for f, t in zip(figures(at), names) if "Weight of the most likely bandit" in t][0]
    ticks = top["layout"]["xaxis"]["ticktext"]
    assert "2022" in ticks and top["layout"]["xaxis"]["title"]["text"] == "date"
    # the seasons are called by their names (state k: arm k is best), not "state k"
    legend = {t.get("name") for t in top["data"]}
    assert {"0: coat best", "1: coffee best"} <= legend and "state 0" not in legend
    seasons = [f for f, t in zip(figures(at), names) if "Your seasons" in t][0]
    assert seasons["layout"]["xaxis"]["title"]["text"] == "date"
    text = " ".join(m.value for m in at.markdown)
    assert "best arm" in text and "208 periods" in text


def test_good_upload():
    at = open_page()
    at.number_input(key="yd_seeds").set_value(2)
    upload(at, "mine.csv", examples.obd_log(n_rows=1500))
    assert_clean(at)
    assert not at.error
    assert len(at.table[0].value) == 1 + len(offline.OFFLINE_POLICIES)
    # fewer than 500 kept events per policy: the warning says so, with the number
    assert "fewer than 500" in " ".join(w.value for w in at.warning)


BAD = {
    "rewards.csv": ("timestamp,arm,reward\n1,0,1\n2,1,7\n", "Row 3, column reward"),
    "dates.csv": ("time,arm,reward\n2024-01-01,a,0.5\n2024-02-30,b,0.5\n", "Row 3, column time"),
    "tiny.csv": (
        "timestamp,arm,reward,propensity\n1,0,1,0.5\n2,1,0,1e-300\n",
        "Row 3, column propensity: 1e-300 is not a probability",
    ),
    "subnormal.csv": (
        "timestamp,arm,reward,propensity\n1,0,1,0.5\n2,1,0,5e-324\n",
        "Row 3, column propensity: 4.94066e-324 is not a probability",
    ),
    "cr.csv": ("timestamp,arm,reward\r1,0,1\r2,1,x\r", "Row 3, column reward: 'x'"),
    "blank.csv": ("\n\n\ntimestamp,arm,reward\n", "no rows under the header"),
    "empty.csv": ("", "the file is empty"),
    "latin1.csv": ("timestamp,arm,reward\n1,caf\xe9,1\n".encode("latin-1"), "not UTF-8"),
    "cols.csv": ("timestamp,arm\n1,0\n", "missing column 'reward'"),
}


def test_bad_uploads_are_one_error_naming_the_row_or_column():
    at = open_page()
    for name, (data, expect) in BAD.items():
        upload(at, name, data)
        assert_clean(at)
        errors = [e.value for e in at.error]
        assert len(errors) == 1, (name, errors)
        assert expect in errors[0] and name in errors[0], (name, errors[0])
    # then a good file: the error is gone, the results are there
    at.number_input(key="yd_seeds").set_value(2)
    upload(at, "fine.csv", examples.seasonal_table(weeks=60))
    assert_clean(at)
    assert not at.error and len(at.table) >= 1


def test_a_file_over_the_byte_limit_is_refused(monkeypatch):
    monkeypatch.setitem(offline.APP_LIMITS, "bytes", 500)
    at = open_page()
    upload(at, "big.csv", examples.obd_log(n_rows=100))
    assert_clean(at)
    assert "at most 500 bytes" in at.error[0].value


def test_a_huge_reward_with_minmax_and_many_problems_are_named():
    at = open_page()
    at.selectbox(key="yd_scale").set_value("minmax")
    upload(at, "huge.csv", "timestamp,arm,reward\n1,0,0\n2,1,1e308\n3,0,0.5\n")
    assert_clean(at)
    assert len(at.error) == 1
    assert "Row 3, column reward: 1e+308 is larger than 1e+15" in at.error[0].value
    # every problem at once, one per line, the first 20 then a count
    rows = "".join(f"{t},{t % 2},{'x' if t % 2 else 0}\n" for t in range(1, 61))
    upload(at, "many.csv", "timestamp,arm,reward\n" + rows)
    assert_clean(at)
    lines = at.error[0].value.split("  \n")
    assert len(lines) == 21 and lines[-1].startswith("... and 10 more problems (30 in all)")


@pytest.mark.skipif(
    len(obd.available()) < 6, reason=f"the Open Bandit Dataset is not in {obd.obd_dir()}"
)
def test_try_a_real_log_loads_an_obd_sample_with_source_licence_and_citation():
    at = open_page()
    text = " ".join(c.value for c in at.caption)
    assert "Apache License 2.0" in text and "Saito" in text and "ZOZO" in text
    at.number_input(key="yd_seeds").set_value(2)
    at.selectbox(key="yd_obd").set_value("bts/men")
    at.button(key="yd_obd_load").click()
    at.run()
    assert_clean(at)
    assert not at.error
    summary = " ".join(m.value for m in at.markdown)
    assert "obd-bts-men.csv" in summary and "10,000 events" in summary and "34 arms" in summary
    assert "2 events share their time" in summary.lower()
    assert len(at.table[0].value) == 1 + len(offline.OFFLINE_POLICIES)  # the logger first


def test_a_file_is_read_once_not_on_every_rerun(monkeypatch):
    from allseason import api

    calls = []
    real = api.read_user_file
    monkeypatch.setattr(api, "read_user_file", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = open_page()
    at.number_input(key="yd_seeds").set_value(2)
    upload(at, "mine.csv", examples.obd_log(n_rows=800))
    assert_clean(at)
    assert len(calls) == 1 and len(at.table) >= 1
    at.radio(key="yd_method").set_value("ips").run()  # a rerun: the same file, not read again
    assert_clean(at)
    assert len(calls) == 1
    at.selectbox(key="yd_scale").set_value("max").run()  # another option: read again
    assert len(calls) == 2
