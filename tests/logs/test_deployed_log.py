"""A deployed agent's decision log read as it grows (allseason/logs/deployed.py) and drawn
(allseason/viz/deployed.py): offsets that survive a line cut in the middle, one error line per
bad file, the paper's figure equal to Inside All-Season's on the same weights, the intervals
and the ESS against their formulas."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from deployed_page import write_fake_log

from allseason import api
from allseason.logs import deployed, deployed_tables
from allseason.viz import deployed as vdep
from allseason.viz import weights as inside_weights

HEAD = "timestamp,event_id,arm,reward,propensity,model_version,bandit\n"


def test_reading_in_pieces_equals_reading_at_once(tmp_path):
    write_fake_log(tmp_path, 9000, batch_size=3)
    whole = api.Deployment()
    whole.refresh(tmp_path)
    data = (tmp_path / "decisions.csv").read_bytes()
    bat = (tmp_path / "batches.jsonl").read_bytes()
    bits = api.Deployment()
    rng = np.random.default_rng(0)
    cuts = np.sort(rng.choice(len(data), 40, replace=False))  # cuts inside lines
    for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(data)]):
        bits.decisions.feed(data[a:b])
    for a in range(0, len(bat), 777):
        bits.batches.feed(bat[a : a + 777])
    for k in ("arm_codes", "reward", "propensity", "model_version", "bandit", "timestamp"):
        np.testing.assert_array_equal(bits.decisions.columns()[k], whole.decisions.columns()[k])
    pd.testing.assert_frame_equal(bits.batches.tops(), whole.batches.tops())
    # the whole file went through the numpy reader, the pieces line by line: same reading
    assert len(whole.batches.events) > 0 and bits.batches.events == whole.batches.events
    assert bits.batches.first_seen() == whole.batches.first_seen()
    assert bits.batches.last == whole.batches.last
    assert bits.decisions.offset == len(data) and bits.batches.n_lines == 3000


def test_a_refresh_reads_only_the_new_bytes(tmp_path):
    write_fake_log(tmp_path, 2000)
    dep = api.Deployment()
    assert dep.refresh(tmp_path) == 4000
    size = (tmp_path / "decisions.csv").stat().st_size
    assert dep.decisions.offset == size and dep.refresh(tmp_path) == 0
    with open(tmp_path / "decisions.csv", "ab") as f:
        f.write(b"1.0,e9,arm1,1,0.5,")  # a writer in the middle of a row
    assert dep.refresh(tmp_path) == 0 and dep.decisions.n_rows == 2000
    with open(tmp_path / "decisions.csv", "ab") as f:
        f.write(b"3,2\n")
    assert dep.refresh(tmp_path) == 1 and dep.decisions.columns()["bandit"][-1] == 2


def test_memory_keeps_the_last_rows():
    tail = deployed.DecisionTail(max_rows=50)
    rows = "".join(f"{i},e{i},a{i % 3},1,0.5,0,1\n" for i in range(120))
    for k in range(0, 120, 30):
        tail.feed(
            (HEAD if k == 0 else "").encode() + "".join(rows.splitlines(True)[k : k + 30]).encode()
        )
    assert tail.n_rows == 120 and tail.n_dropped == 70
    np.testing.assert_array_equal(tail.columns()["timestamp"], np.arange(70, 120))


@pytest.mark.parametrize(
    "data, words",
    [
        (b"a,b,c\n1,2,3\n", "not a decision log: no column arm, reward, propensity"),
        (HEAD.encode() + b"1,e1,a,1,0.5,0,1\n2,e2,a,1,-0.1,0,1\n", "row 3: propensity must be"),
        (HEAD.encode() + b"1,e1,a,x,0.5,0,1\n", "row 2: reward must be a finite number"),
        (HEAD.encode() + b"1,e1,a,1,1.5,0,1\n", "row 2: propensity must be a number in [0, 1]"),
        (b"\xff\xfe\x00\x01garbage\n", "not a decision log"),
    ],
)
def test_a_csv_that_is_not_a_decision_log_is_one_line(data, words):
    with pytest.raises(api.SpecError) as e:
        api.Deployment.from_bytes(data)
    assert words in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "line, words",
    [
        (b"not json", "line 2 is not JSON"),
        (b"[1, 2]", "line 2 is not a JSON object"),
        (b'{"ids": [0, 1], "weights": [0.5]}', "line 2: ids and weights"),
        (b'{"ids": [0, 1], "weights": [0.5, NaN]}', "line 2: ids and weights"),
        (b'{"ids": [0, "x"], "weights": [0.5, 0.5]}', "line 2: ids and weights"),
        (b'{"ids": [0], "weights": [1.0], "events": [3]}', "line 2: events"),
    ],
)
@pytest.mark.parametrize("n_good", [1, 2000])  # line by line; many lines at once (numpy)
def test_a_bad_batch_line_is_one_line(line, words, n_good):
    good = b'{"version": 1, "learned": 1, "ids": [0, 1], "weights": [0.4, 0.6]}\n' * n_good
    with pytest.raises(api.SpecError) as e:
        api.Deployment.from_bytes(HEAD.encode(), good + line + b"\n")
    assert words.replace("line 2", f"line {n_good + 1}") in str(e.value)
    assert "\n" not in str(e.value)


def _batch_log_of(weights: pd.DataFrame) -> bytes:
    """The runner's weights table written as a deployed agent's batches.jsonl."""
    lines = []
    for (batch, step), g in weights.groupby(["batch", "step"], sort=True):
        rec = {"version": int(batch) + 1, "learned": int(step) + 1}
        rec.update(ids=g["bandit"].tolist(), weights=g["weight"].tolist())
        lines.append(json.dumps(rec))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("batch_size", [1, 10])
def test_the_figure_is_inside_all_seasons_on_the_same_weights(batch_size):
    """The weights of a run of the default scenario (shortened), written as batches.jsonl and
    read back: the deployment figure's traces are Inside's, point for point."""
    sc = api.Scenario.from_preset("paper-synthetic", horizon=4000, n_states=4,
                                  batch_size=batch_size)  # fmt: skip
    res = api.run_race(api.Race(sc, api.policy_specs(["allseason-sw"]), 1))
    w = res.to_frames()["weights"]
    dep = api.Deployment.from_bytes(HEAD.encode(), _batch_log_of(w))
    views = dep.views()
    ours = vdep.deployment_figure(views["tops"], views["events"], views["recalls"], 600)
    theirs = inside_weights.top_weight_figure(w, None, 600, policy="allseason-sw", seed=0)
    assert len(theirs.data) >= 2
    for a, b in zip(ours.data, theirs.data):
        assert a.name == b.name
        np.testing.assert_array_equal(a.x, b.x)
        np.testing.assert_array_equal(a.y, b.y)
        assert a.marker.color == b.marker.color or list(a.marker.color) == list(b.marker.color)
    assert [t.name for t in ours.data[len(theirs.data) :]] == (
        [f"recall ({len(views['recalls'])})"] if len(views["recalls"]) else []
    )


def test_reward_windows_wilson_for_clicks_and_t_otherwise():
    rng = np.random.default_rng(1)
    clicks = (rng.random(1000) < 0.1).astype(float)
    win = deployed_tables.reward_windows(clicks, 10)
    assert (win["interval"] == "wilson").all() and (win["n"] == 100).all()
    lo, hi = api_wilson(clicks[:100].mean(), 100)
    assert win["low"].iloc[0] == pytest.approx(lo) and win["high"].iloc[0] == pytest.approx(hi)
    gauss = rng.normal(0.3, 1.0, 1000)
    win = deployed_tables.reward_windows(gauss, 10)
    from scipy import stats

    first = gauss[:100]
    half = stats.t.ppf(0.975, 99) * first.std(ddof=1) / 10
    assert (win["interval"] == "t").all()
    assert win["high"].iloc[0] - win["mean"].iloc[0] == pytest.approx(half)


def api_wilson(p, n):
    from allseason.logs.intervals import wilson

    return wilson(p, n)


def test_the_uniform_ess_is_its_formula():
    p = np.array([0.5, 0.25, 0.125, 0.9])
    w = (1 / 4) / p
    assert deployed_tables.uniform_ess(p, 4) == pytest.approx(w.sum() ** 2 / (w**2).sum())
    assert deployed_tables.uniform_ess(np.full(7, 0.25), 4) == pytest.approx(7)  # uniform logger


def test_recalls_are_old_bandits_back_on_top_after_a_real_spell():
    b = [1] * 10 + [0] * 3 + [2] * 10 + [1] * 10 + [2, 1] + [0] * 2
    tops = pd.DataFrame({"batch": range(len(b)), "step": range(len(b)), "bandit": b,
                         "weight": np.linspace(0.5, 1, len(b))})  # fmt: skip
    r = deployed_tables.recalls(tops, min_batches=5)
    assert r["bandit"].tolist() == [1] and r["previous"].tolist() == [2]
    assert r["step"].tolist() == [23] and r["last_step"].tolist() == [9]


def test_your_data_gets_the_most_recent_rows_that_fit(tmp_path):
    rows = "".join(f"{i},e{i},a{i % 2},1,0.5,0,1\n" for i in range(1000))
    data = (HEAD + rows).encode()
    got, kept, n = api.your_data_bytes(data, 100, 10**6)
    assert (kept, n) == (100, 1000) and got.startswith(HEAD.encode())
    assert got.decode().splitlines()[1].startswith("900,") and got.endswith(
        b"999,e999,a1,1,0.5,0,1\n"
    )
    (tmp_path / "d.csv").write_bytes(data)
    got2, kept2 = api.your_data_file(tmp_path / "d.csv", 10**6, 3000)
    assert (
        len(got2) <= 3000
        and got2.startswith(HEAD.encode())
        and got2.endswith(b"999,e999,a1,1,0.5,0,1\n")
    )
    assert api.read_user_file(got2, "log").n_events == kept2


def _same_reading(a, b) -> None:
    for k in ("arm_codes", "reward", "propensity", "model_version", "bandit", "timestamp"):
        np.testing.assert_array_equal(a.decisions.columns()[k], b.decisions.columns()[k])
    assert a.decisions.arm_labels == b.decisions.arm_labels
    pd.testing.assert_frame_equal(a.batches.tops(), b.batches.tops())
    assert a.batches.events == b.batches.events and a.batches.last == b.batches.last
    assert a.batches.first_seen() == b.batches.first_seen()


def test_a_growing_log_read_in_small_chunks_equals_one_read_of_the_whole(tmp_path, monkeypatch):
    """The folder mode: the log read as it grows (only the appended tail each time), in
    chunks far smaller than the file, equals one read of the whole file at the end."""
    write_fake_log(tmp_path, 6000, batch_size=2)
    monkeypatch.setattr(deployed, "READ_CHUNK", 50_000)  # 10**7-byte logs: 16 MB at a time
    growing = api.Deployment()
    assert growing.refresh(tmp_path) == 6000 + 3000
    for k in range(3):
        write_fake_log(tmp_path, 3000, batch_size=2, start=6000 + 3000 * k, seed=k + 1)
        size = growing.decisions.offset
        assert growing.refresh(tmp_path) == 3000 + 1500  # the tail only
        assert growing.decisions.offset > size
    monkeypatch.setattr(deployed, "READ_CHUNK", 10**9)
    whole = api.Deployment()
    whole.refresh(tmp_path)
    assert whole.decisions.n_rows == 15_000 and whole.batches.n_lines == 7500
    _same_reading(growing, whole)


def test_the_arrow_and_the_regex_readers_read_the_same_columns(tmp_path, monkeypatch):
    """The batch log as columns, by pyarrow's JSON reader and by regular expressions, and the
    decisions by pyarrow's CSV reader and by pandas': the same columns, and the same
    deployment as line by line; a line pyarrow will not read leaves it to the others (the
    line-by-line reader names it)."""
    from allseason.logs import deployed_columns as cols

    pytest.importorskip("pyarrow")
    write_fake_log(tmp_path, 5000, batch_size=1)
    data = (tmp_path / "batches.jsonl").read_bytes()
    a, r = cols.arrow_columns(data), cols.regex_columns(data)
    assert a is not None and r is not None
    for x, y in zip(a, r):
        np.testing.assert_array_equal(x, y)
    with_arrow = api.Deployment()
    with_arrow.refresh(tmp_path)
    monkeypatch.setattr(deployed, "arrow_columns", lambda lines: None)
    monkeypatch.setattr(deployed, "arrow_decisions", lambda *a: None)  # pandas' CSV reader
    with_regex = api.Deployment()
    with_regex.refresh(tmp_path)
    monkeypatch.setattr(deployed, "regex_columns", lambda lines: None)
    line_by_line = api.Deployment()
    line_by_line.refresh(tmp_path)
    _same_reading(with_arrow, with_regex)
    _same_reading(with_arrow, line_by_line)
    for bad in (b'{"learned": 1, "ids": [0, true], "weights": [0.5, 0.5]}',
                b'{"learned": 1, "ids": [0, 1], "weights": [0.5, 1.5]}',
                b'{"learned": 1, "ids": [], "weights": []}',
                b'{"learned": "1", "ids": [0], "weights": [1.0]}',
                b'{"ids": [0], "weights": [1.0]}'):  # fmt: skip
        assert cols.arrow_columns(data + bad + b"\n") is None, bad


def test_a_long_log_is_drawn_within_the_display_bound_and_exported_in_full():
    """10**6 batch updates and 10**4 spawns, prunings and recalls: the figure draws at most
    vdep.DISPLAY_POINTS points (the top weight at most vdep.TOP_POINTS, each kind of mark
    at most vdep.MAX_MARKS, every event counted in a mark's hover), and the CSV holds every
    batch."""
    from allseason.viz import export

    n = 10**6
    rng = np.random.default_rng(4)
    step = np.arange(n)
    tops = pd.DataFrame({"batch": step, "step": step, "bandit": (step // 777) % 5,
                         "weight": rng.uniform(0.3, 1.0, n)})  # fmt: skip
    ev_steps = np.sort(rng.choice(n, 10_000, replace=False))
    events = pd.DataFrame({"batch": ev_steps, "step": ev_steps,
                           "kind": np.where(np.arange(10_000) % 2, "spawn", "prune"),
                           "bandit": 7, "other": 3, "value": 0.5})  # fmt: skip
    rec = pd.DataFrame({"batch": ev_steps[:3000], "step": ev_steps[:3000], "bandit": 2,
                        "weight": 0.9, "previous": 1, "last_step": 0})  # fmt: skip
    fig = vdep.deployment_figure(tops, events, rec)
    drawn = {t.name: len(t.x) for t in fig.data}
    assert sum(drawn.values()) <= vdep.DISPLAY_POINTS, drawn
    marks = {t.name: t for t in fig.data if t.name.split(" (")[0] in ("spawn", "pruning", "recall")}
    assert sorted(marks) == ["pruning (5,000)", "recall (3,000)", "spawn (5,000)"]
    for name, t in marks.items():
        assert len(t.x) <= vdep.MAX_MARKS
        assert sum(int(c[2]) for c in t.customdata) == int(name.split("(")[1][:-1].replace(",", ""))
    top = [t for t in fig.data if t.name not in marks]
    assert sum(len(t.x) for t in top) <= vdep.TOP_POINTS
    assert len(export.frames_csv(tops).splitlines()) == n + 1
