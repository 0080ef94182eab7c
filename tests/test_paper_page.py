"""The Paper tables page under AppTest: without stored results (instructions and the paper's
table), with a small stored reproduction (the comparison heatmap, numbers, curves), and a
small live race on real data (skips where the data sets are not installed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from streamlit.testing.v1 import AppTest  # noqa: E402

from allseason import reproduce  # noqa: E402
from allseason.data import DataUnavailable  # noqa: E402
from allseason.envs.classification import paper_setup  # noqa: E402
from allseason.ui import paper_view  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "app.py")
PAGE = "app_pages/5_Paper_tables.py"


def _open(monkeypatch, folder: Path) -> AppTest:
    monkeypatch.setattr(paper_view, "FOLDER", folder)
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


def test_with_stored_results_the_comparison_and_curves(monkeypatch, tmp_path):
    _need_mnist()
    small = reproduce.Protocol(n=600, seeds=2)
    reproduce.reproduce(["mnist-2arm"], protocol=small, out=tmp_path, processes=1)
    monkeypatch.setattr(reproduce, "Protocol", lambda: small)  # the page reads n=600 results
    at = _open(monkeypatch, tmp_path)
    assert not at.exception and not at.error
    assert any("24 of 24 cells measured" in m.value for m in at.markdown)
    heat, curves = _figs(at)[:2]
    cells = [c for row in heat["data"][0]["text"] for c in row]
    assert len(cells) == 24 and all("ours" in c and "paper" in c for c in cells)
    assert heat["data"][0]["zmid"] == 0
    boxed = len(heat["layout"].get("shapes", []))
    frame = reproduce.table_frame("mnist-2arm", reproduce.load_runs(tmp_path), small)
    assert boxed == int(frame["differs"].sum())  # one box per cell off by > 0.03
    assert len(curves["data"]) == 8 * 3  # 8 algorithms x 3 patterns
    assert sum(t["showlegend"] for t in curves["data"]) == 8
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


def test_live_race_on_real_data(monkeypatch, tmp_path):
    _need_mnist()
    at = _open(monkeypatch, tmp_path / "none")
    at.number_input(key="live_n").set_value(600)
    at.multiselect(key="live_policies").set_value(["lints", "random"])
    at.slider(key="live_seeds").set_value(1)
    submit = at.get("form_submit_button")
    assert len(submit) == 1
    submit[0].click().run()
    assert not at.exception and not at.error
    board = at.dataframe[-1].value
    assert set(board["algorithm"]) == {"LinTS", "Random"}
    lints = board.set_index("algorithm").loc["LinTS", "mean reward"]
    rnd = board.set_index("algorithm").loc["Random", "mean reward"]
    assert lints > rnd + 0.05
