"""The Paper tables page under AppTest: without stored results (instructions and the paper's
table), with a small stored reproduction (the comparison heatmap, numbers, curves), and a
small live race on real data (skips where the data sets are not installed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from streamlit.testing.v1 import AppTest

from allseason.envs.classification import paper_setup
from allseason.envs.datasets import DataUnavailable
from allseason.paper import reproduce
from allseason.paper import tables_snapshot as paper_snapshot
from allseason.ui import paper as paper_page

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PAGE = "app_pages/5_Paper_tables.py"


def _open(monkeypatch, folder: Path, snapshot: Path | None = None) -> AppTest:
    monkeypatch.setattr(paper_page, "FOLDER", folder)
    monkeypatch.setattr(paper_snapshot, "PATH", snapshot or folder / "no-snapshot.json")
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.run()
    return at


def _need_mnist():
    try:
        paper_setup("mnist", "2arm", "regular", n=600)
    except DataUnavailable as exc:
        pytest.skip(str(exc))


def _values(y):
    """A Plotly array from the figure JSON: a list, or plotly's typed-array dict."""
    import base64

    import numpy as np

    if isinstance(y, dict):
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"])
    return np.asarray(y, dtype=float)


def _figs(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_without_results_the_page_says_how_to_make_them(monkeypatch, tmp_path):
    at = _open(monkeypatch, tmp_path / "none")
    assert not at.exception and not at.error
    assert any("python -m allseason paper" in i.value for i in at.info)
    paper = at.dataframe[0].value  # the paper's table, as published
    assert list(paper.columns) == ["regular", "realistic", "extreme"]
    assert paper.loc["All-Season(SW)", "realistic"] == "0.78 ± 0.01"


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    """mnist-2arm at n = 600, 2 seeds, under both validation protocols: the store the paper's
    tests read (tests/paper/conftest.py), made once per test session (this process's copy)."""
    from tests.paper import conftest as paper

    out, _ = paper.stored("both", tmp_path_factory)
    return out, paper.protocols()


def test_with_stored_results_the_comparison_and_curves(monkeypatch, small_store):
    tmp_path, protocols = small_store
    small = protocols["prefix"]
    monkeypatch.setattr(paper_page, "protocols", lambda: {"prefix": small})  # n=600 results
    at = _open(monkeypatch, tmp_path)
    assert not at.exception and not at.error
    assert any("30 of 30 cells measured" in m.value for m in at.markdown)
    heat, curves = _figs(at)[:2]
    cells = [c for row in heat["data"][0]["text"] for c in row]
    assert len(cells) == 30 and all("ours" in c and "paper" in c for c in cells)
    assert "All-Season (SW), printed rule" in heat["data"][0]["y"]
    assert heat["data"][0]["zmid"] == 0
    boxed = len(heat["layout"].get("shapes", []))
    frame = reproduce.table_frame("mnist-2arm", reproduce.load_runs(tmp_path), small)
    assert boxed == int(frame["differs"].sum())  # one box per cell off by > 0.03
    assert len(curves["data"]) == 10 * 3  # 10 rows x 3 patterns
    assert sum(t["showlegend"] for t in curves["data"]) == 10
    assert at.radio(key="paper_curve_kind").value == "average"  # the default
    at.radio(key="paper_curve_kind").set_value("cumulative").run()
    at.radio(key="paper_curve_kind").set_value("average").run()
    avg = _figs(at)[1]
    finals = {}
    for t in avg["data"]:
        y = _values(t["y"])
        assert ((0 <= y) & (y <= 1)).all()
        finals.setdefault(t["legendgroup"], []).append(y[-1])
    cell = frame.set_index(["algorithm", "pattern"])["mean"]
    for alg, ys in finals.items():  # the last point of each curve is its table cell
        for pattern, y in zip(("regular", "realistic", "extreme"), ys):
            assert abs(y - cell[alg, pattern]) < 1e-3


def test_both_protocols_side_by_side_and_the_default_named(monkeypatch, small_store):
    tmp_path, protocols = small_store
    monkeypatch.setattr(paper_page, "protocols", lambda: dict(protocols))
    at = _open(monkeypatch, tmp_path)
    assert not at.exception and not at.error
    side = at.dataframe[0].value  # the first table: both protocols
    assert list(side.columns[:3]) == ["regular · prefix", "regular · shrunk", "regular · paper"]
    assert "All-Season(Disc), printed rule" in side.index
    pick = at.segmented_control(key="paper_protocol_mnist-2arm")
    assert pick.value == "prefix" and pick.format_func("prefix") == "prefix (default)"
    pick.set_value("shrunk").run()
    assert not at.exception
    assert any("shrunk to 10%" in m.value for m in at.markdown)


def test_fresh_clone_shows_the_snapshot(monkeypatch, small_store, tmp_path):
    out, protocols = small_store
    snap = paper_snapshot.write(out, protocols.values(), "test", path=tmp_path / "snap.json")
    monkeypatch.setattr(paper_page, "protocols", lambda: dict(protocols))
    at = _open(monkeypatch, tmp_path / "none", snapshot=snap)
    assert not at.exception and not at.error
    assert any("tracked snapshot" in i.value for i in at.info)
    assert at.dataframe[0].value.shape == (10, 9)
    heat = _figs(at)[0]
    cells = [c for row in heat["data"][0]["text"] for c in row]
    assert len(cells) == 30 and all("ours" in c for c in cells)


def test_live_race_on_real_data(monkeypatch, tmp_path):
    _need_mnist()
    at = _open(monkeypatch, tmp_path / "none")
    at.number_input(key="live_n").set_value(600)
    at.multiselect(key="live_policies").set_value(["lints", "random"])
    at.slider(key="live_seeds").set_value(1)
    submit = [b for b in at.button if b.label == "Run on real data"]
    assert len(submit) == 1
    submit[0].click().run()
    assert not at.exception and not at.error
    board = at.dataframe[-1].value
    assert set(board["algorithm"]) == {"LinTS", "Random"}
    lints = board.set_index("algorithm").loc["LinTS", "mean reward"]
    rnd = board.set_index("algorithm").loc["Random", "mean reward"]
    assert lints > rnd + 0.05


def test_inside_all_season_on_real_data(monkeypatch, tmp_path):
    """One 30,000-step ten-arm run looked inside: carried weights keep a few bandits and the
    top weight near 1; the numbers shown are the engine's.

    The page's run is the engine's ``reproduce.play_job`` of the expected job (checked: the
    job the page asked for is that one), and its trace is kept here, not played a second
    time (a deterministic 30,000-step run: 2 CPU-s); played here only if the page's run came
    from a cache."""
    _need_mnist()
    from allseason import analysis

    played = []
    real_play = reproduce.play_job

    def play_job(job, *args, **kw):
        out = real_play(job, *args, **kw)
        played.append((job, out))
        return out

    monkeypatch.setattr(reproduce, "play_job", play_job)
    at = _open(monkeypatch, tmp_path / "none")
    assert at.selectbox(key="inside_table").value == "mnist-10arm"
    [b for b in at.button if b.label == "Look inside"][0].click().run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    job = reproduce.Job(
        "inside",
        "mnist-10arm",
        "regular",
        "allseason-sw",
        json.dumps({"tau": 500, "n_max": 5, **reproduce.CARRIED}, sort_keys=True),
        0,
        reproduce.HORIZON,
    )
    assert [j for j, _ in played] in ([job], [])  # the page played this job, or none (cached)
    trace, setup, _ = played[0][1] if played else real_play(job)
    s = analysis.ensemble_summary(trace, setup.pattern)
    assert metrics["Mean reward"] == f"{s['mean_reward']:.3f}"
    assert metrics["Base bandits created"] == f"{s['bandits_created']:,}"
    assert s["bandits_created"] <= 20 and s["top_share"] > 0.9 and s["mean_reward"] > 0.65
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any(t.startswith("Weight of the most likely bandit") for t in titles)
    assert any("after each change point" in t for t in titles)
    assert any("Who learnt which state" in m.value for m in at.markdown)
