"""Figure builders: built from a real small race, checked on the figure data (frames, fixed
axis ranges, constant categories, points per trace, stable colours, standalone HTML)."""

import ast
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("plotly")

from allseason import api  # noqa: E402
from allseason import viz  # noqa: E402
from allseason.viz import style  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
LABEL = "allseason-sw"


@pytest.fixture(scope="module")
def race():
    scenario = api.Scenario.from_preset("paper-synthetic", batch_size=5)
    result = api.run_race(api.Race(scenario, api.policy_specs([LABEL, "lints"], tau=10),
                                   n_seeds=2))
    return scenario, result, result.to_frames()


def _one(frames, name):
    t = frames[name]
    return t[(t["policy"] == LABEL) & (t["seed"] == 0)]


def test_cumulative_figure_downsamples_and_fixes_the_range(race):
    scenario, _, frames = race
    for metric in ("reward", "regret"):
        fig = viz.cumulative_figure(frames["steps"], scenario.pattern, metric, max_points=500)
        assert all(len(t.x) <= 500 for t in fig.data if t.x is not None)
        assert list(fig.layout.xaxis.range) == [0, scenario.horizon]
        assert len(fig.layout.shapes) >= len(scenario.segments)  # season bands


def test_weights_animation_frames_categories_and_range(race):
    scenario, _, frames = race
    fig = viz.weights_animation(_one(frames, "weights"), scenario.pattern, n_frames=60)
    assert 1 < len(fig.frames) <= 60
    assert list(fig.layout.yaxis.range) == [0, 1]
    cats = [tuple(x for t in f.data for x in t.x) for f in fig.frames]
    assert len(set(cats)) == 1  # every frame has the same bars
    assert "shadow" in cats[0]
    assert fig.layout.updatemenus and fig.layout.sliders  # play / pause and scrub


def test_top_weight_and_area_figures(race):
    scenario, _, frames = race
    w = _one(frames, "weights")
    fig = viz.top_weight_figure(w, scenario.pattern, max_points=800)
    assert sum(len(t.x) for t in fig.data if t.x is not None and t.mode) <= 800 + 10
    assert list(fig.layout.yaxis.range)[1] <= 1.05
    shadow = [t for t in fig.data if t.name and "shadow" in t.name]
    assert shadow and style.SHADOW_COLOR in (shadow[0].marker.color, shadow[0].marker.line.color)
    area = viz.weights_area_figure(w, scenario.pattern)
    assert all(len(t.x) <= 1000 for t in area.data if t.x is not None)


def test_stable_colours_per_bandit_and_policy():
    a = viz.bandit_colors([0, 3, 17])
    b = viz.bandit_colors([17, 5, 3, 0])
    assert a[3] == b[3] and a[17] == b[17] and a[0] == b[0] == style.SHADOW_COLOR
    p1 = viz.policy_colors(["allseason-sw", "lints", "random"])
    p2 = viz.policy_colors(["random", "lints", "allseason-sw"])
    assert p1 == p2


def test_lifelines_recall_heatmap_and_posteriors(race):
    scenario, result, frames = race
    fig = viz.lifelines_figure(_one(frames, "events"), _one(frames, "weights"),
                               scenario.horizon)
    assert len(fig.data) >= 1
    trace = result.traces[LABEL, 0]
    rec = api.recall_table(trace, scenario.pattern)
    fig = viz.recall_figure(rec)
    assert len({x for t in fig.data for x in t.x}) == len(rec) == 8  # one bar per change point
    heat = viz.state_heatmap(api.state_table(trace))
    z = np.array(heat.data[0].z, dtype=float)
    assert z.shape[1] == scenario.pattern.n_states
    sc2 = api.Scenario(d=2, batch_size=10)
    hist, thetas = api.posterior_history(sc2, api.PolicySpec(LABEL, {"tau": 10}), 0, 500)
    anim = viz.posterior_animation(hist, thetas, n_frames=15)
    assert 1 < len(anim.frames) <= 15
    assert anim.layout.xaxis.range is not None and anim.layout.yaxis.range is not None


def test_leaderboard_and_reward_by_state(race):
    _, result, frames = race
    table = viz.leaderboard_table(frames["summary"])
    assert len(table) == 2
    fig = viz.leaderboard_figure(frames["summary"])
    assert len(fig.data) >= 1
    fig = viz.reward_by_state_figure(frames["steps"])
    names = " ".join(t.name or "" for t in fig.data)
    assert "All-Season" in names and "LinTS" in names  # one group per policy


def test_html_export_is_standalone(race):
    scenario, _, _ = race
    html = viz.figure_html(viz.pattern_timeline(scenario.pattern)).decode()
    assert "plotly" in html.lower() and "<script src=\"http" not in html
    assert viz.frames_csv(race[2]["summary"]).decode().startswith("policy")


def test_viz_imports_no_streamlit():
    for path in (ROOT / "allseason" / "viz").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(n.startswith("streamlit") for n in names), path
