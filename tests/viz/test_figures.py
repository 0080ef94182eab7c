"""Figure builders: built from a real small race, checked on the figure data (frames, fixed
axis ranges, constant categories, points per trace, stable colours, standalone HTML)."""

import ast
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("plotly")

from allseason import api, viz
from allseason.viz import layout, style

ROOT = Path(__file__).resolve().parents[2]
LABEL = "allseason-sw"


@pytest.fixture(scope="module")
def race():
    scenario = api.Scenario.from_preset("paper-synthetic", batch_size=5)
    # the paper's printed rule: hundreds of bandits, so the figures' grouping is exercised
    result = api.run_race(
        api.Race(scenario, api.policy_specs([LABEL, "lints"], tau=10, weighting="batch"), n_seeds=2)
    )
    return scenario, result, result.to_frames()


def _one(frames, name):
    t = frames[name]
    return t[(t["policy"] == LABEL) & (t["seed"] == 0)]


def test_cumulative_figure_downsamples_and_fixes_the_range(race):
    scenario, _, frames = race
    for metric in ("reward", "regret"):
        fig = viz.cumulative_figure(frames["steps"], scenario.pattern, metric, max_points=500)
        # each line at most 500 points (a band: its two edges, so twice that)
        assert all(
            len(t.x) <= (1000 if t.fill == "toself" else 500) for t in fig.data if t.x is not None
        )
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
    points = [
        t
        for t in fig.data
        if t.x is not None and t.mode and not (t.name or "").startswith("change point")
    ]
    assert sum(len(t.x) for t in points) <= 800 + 10
    assert list(fig.layout.yaxis.range)[1] <= 1.1
    cps = [t for t in fig.data if t.mode == "markers" and (t.name or "").startswith("change")]
    assert sorted(x for t in cps for x in t.x) == list(scenario.pattern.change_points())
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
    fig = viz.lifelines_figure(_one(frames, "events"), _one(frames, "weights"), scenario.horizon)
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
    assert "plotly" in html.lower() and '<script src="http' not in html
    assert viz.frames_csv(race[2]["summary"]).decode().startswith("policy")


def test_viz_imports_no_streamlit():
    for path in (ROOT / "allseason" / "viz").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not any(n.startswith("streamlit") for n in names), path


# -- exactness, stability and the browser's needs ----------------------------------------------
def _no_base64(obj) -> bool:
    """True if no typed-array spec (numpy written as base64) hides in a JSON tree."""
    if isinstance(obj, dict):
        return "bdata" not in obj and all(_no_base64(v) for v in obj.values())
    if isinstance(obj, list):
        return all(_no_base64(v) for v in obj)
    return True


def test_animation_frames_hold_plain_lists(race):
    # plotly.js's animate merges a base64 typed array into the trace instead of decoding it:
    # the bars / points would not move. Frames must serialise as plain JSON lists.
    import json

    scenario, _, frames = race
    fig = viz.weights_animation(_one(frames, "weights"), scenario.pattern, n_frames=20)
    assert _no_base64(json.loads(fig.to_json())["frames"])
    hist, thetas = api.posterior_history(
        api.Scenario(d=2, batch_size=10), api.PolicySpec(LABEL, {"tau": 10}), 0, 500
    )
    anim = viz.posterior_animation(hist, thetas, n_frames=10)
    assert _no_base64(json.loads(anim.to_json())["frames"])


def test_weights_animation_is_exact_and_coloured_by_id(race):
    scenario, _, frames = race
    w = _one(frames, "weights")
    fig = viz.weights_animation(w, scenario.pattern, n_frames=40, max_bandits=5)
    assert fig.layout.yaxis.autorange is False
    for f in fig.frames:  # shown bars + "other bandits" = every live weight: they sum to 1
        assert sum(y for t in f.data for y in t.y) == pytest.approx(1.0)
        assert all(0.0 <= y <= 1.0 for t in f.data for y in t.y)
        assert "true state" in f.layout.title.text and "step" in f.layout.title.text
    assert fig.data[0].x == ("shadow",) and fig.data[0].marker.color == style.SHADOW_COLOR
    ids = [int(x.split()[-1]) for x in fig.data[1].x]
    assert list(fig.data[1].marker.color) == [style.bandit_color(b) for b in ids]
    assert len(fig.layout.sliders[0].steps) == len(fig.frames)


def test_same_bandit_same_colour_across_figures(race):
    scenario, _, frames = race
    w = _one(frames, "weights")
    a = viz.top_weight_figure(w, scenario.pattern)
    b = viz.top_weight_figure(w.iloc[::-1], scenario.pattern, max_points=300)

    def colours(fig):
        return {t.name: t.marker.color for t in fig.data if t.name and t.name.startswith("bandit ")}

    ca, cb = colours(a), colours(b)
    assert ca and all(ca[k] == cb[k] for k in set(ca) & set(cb))
    assert all(c == style.bandit_color(int(k.split()[1])) for k, c in ca.items())
    assert [t for t in a.data if t.name == "shadow"][0].marker.color == style.SHADOW_COLOR
    assert viz.bandit_colors([0])[0] == style.SHADOW_COLOR
    assert (
        sum(
            len(t.x)
            for t in b.data
            if t.mode == "markers" and t.name and not t.name.startswith("change point")
        )
        <= 300 + 4
    )


def test_cumulative_curves_are_exact_at_the_last_step(race):
    scenario, _, frames = race
    steps = frames["steps"]
    fig = viz.cumulative_figure(steps, scenario.pattern, "reward", max_points=100)
    for label in (LABEL, "lints"):
        name = style.policy_name(label)
        line = [t for t in fig.data if t.name == name][0]
        want = steps[steps["policy"] == label].groupby("seed")["reward"].sum().mean()
        assert line.x[-1] == scenario.horizon - 1
        assert line.y[-1] == pytest.approx(want)
        assert len(line.x) <= 100


def test_lifelines_account_for_every_bandit(race):
    scenario, _, frames = race
    ev, w = _one(frames, "events"), _one(frames, "weights")
    fig = viz.lifelines_figure(ev, w, scenario.pattern, max_lanes=10)
    n_born = ev[ev["kind"] == "spawn"]["bandit"].nunique() + 1  # + bandit 1, born at step 0
    lanes = len(fig.data[0].y)
    assert lanes <= 10
    short = [t for t in fig.data if t.name and t.name.startswith("short-lived")]
    hidden = int(short[0].name.split("(")[1].split(")")[0]) if short else 0
    assert lanes + hidden == n_born
    prunes = [t for t in fig.data if t.name and t.name.startswith("pruned")][0]
    assert all("closest to bandit" in c[1] for c in prunes.customdata)
    assert all(len(t.x) <= 1000 for t in fig.data if t.x is not None)


def test_one_run_at_a_time_and_empty_inputs(race):
    scenario, _, frames = race
    with pytest.raises(ValueError, match="policy= and seed="):
        viz.top_weight_figure(frames["weights"], scenario.pattern)
    fig = viz.top_weight_figure(frames["weights"], scenario.pattern, policy=LABEL, seed=1)
    assert len(fig.data) > 1
    empty = viz.weights_animation(frames["weights"], scenario.pattern, policy="lints", seed=0)
    assert not empty.data and "not an ensemble" in empty.layout.annotations[0].text


def test_season_bands_on_subplots_and_timeline(race):
    from plotly.subplots import make_subplots

    scenario, _, _ = race
    fig = make_subplots(rows=2, cols=1)
    viz.add_season_bands(fig, scenario.pattern, row=2, col=1)
    assert {s.xref for s in fig.layout.shapes} == {"x2"}
    assert all(s.layer == "below" for s in fig.layout.shapes)
    tl = viz.pattern_timeline(scenario.pattern)
    new = [t for t in tl.data if t.name == "change point: new state" and t.mode == "markers"]
    back = [t for t in tl.data if t.name == "change point: return" and t.mode == "markers"]
    assert len(new[0].x) == 3 and len(back[0].x) == 5  # the paper: new at the 1st, 3rd, 5th
    assert list(tl.layout.xaxis.range) == [0, scenario.horizon]


def test_posterior_animation_axes_fixed_and_equal():
    hist, thetas = api.posterior_history(
        api.Scenario(d=2, batch_size=10), api.PolicySpec(LABEL, {"tau": 10}), 0, 250
    )
    fig = viz.posterior_animation(hist, thetas, n_frames=12)
    assert 1 < len(fig.frames) <= 12
    assert list(fig.layout.xaxis.range) == list(fig.layout.yaxis.range)
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.xaxis.autorange is False
    dynamic = {tuple(f.traces) for f in fig.frames}
    assert len(dynamic) == 1 and len(fig.frames[0].data) == len(next(iter(dynamic)))


def test_a_figure_without_its_legend_has_an_html_key_that_lists_it(race):
    """``legend=False`` (the Race page's regret curves, in 3/5 of the width): the same traces,
    no Plotly legend, fixed margins; the key lists every legend entry of the figure, in its
    order, drawn as it is (line colour and dash, marker symbol); the download gets the
    legend back."""
    import re

    from allseason.viz import race as vrace

    scenario, _, frames = race
    full = viz.cumulative_figure(frames["steps"], scenario.pattern, "regret", max_points=300)
    bare = viz.cumulative_figure(
        frames["steps"], scenario.pattern, "regret", max_points=300, legend=False
    )
    assert (
        full.to_json(validate=False).split('"layout"')[0]
        == bare.to_json(validate=False).split('"layout"')[0]
    )  # the same traces, to the byte
    assert full.layout.showlegend is not False and bare.layout.showlegend is False
    assert bare.layout.margin.autoexpand is False and bare.layout.yaxis.automargin is False
    entries = [t for t in bare.data if t.showlegend is not False and t.name]
    key = vrace.legend_key(bare)
    names = re.findall(r"(?:</svg>)([^<]+)</span>", key)
    assert names == [re.sub(r"<[^>]+>", "", t.name) for t in entries]
    assert "true state:" in key and names[-1] == "state 3"
    lines = re.findall(r'<line [^>]*stroke="([^"]+)"[^>]*stroke-dasharray="([^"]*)"', key)
    drawn = [t for t in entries if "lines" in (t.mode or "lines")]
    assert [c for c, _ in lines] == [t.line.color for t in drawn]
    assert [d for _, d in lines] == [
        layout.dasharray(t.line.dash or "solid", t.line.width or 2) for t in drawn
    ]
    assert key.count("<path") + key.count("<circle") == sum(
        "markers" in (t.mode or "") for t in entries
    )
    # once the key is read, the traces that only make legend entries can go
    n = len(bare.data)
    vrace.drop_legend_entries(bare)
    assert len(bare.data) == n - 4  # the four states (no oracle in this race: no heading)
    assert all(t.x[0] is not None for t in bare.data)


def test_dasharray_is_plotly_js_dash_style():
    # plotly.js Drawing.dashStyle: named dashes in multiples of max(width, 3); lists as given
    assert layout.dasharray("solid", 2) == ""
    assert layout.dasharray("dot", 2) == "3,3" and layout.dasharray("dot", 4) == "4,4"
    assert layout.dasharray("dash", 3) == "9,9" and layout.dasharray("longdash", 2) == "15,15"
    assert layout.dasharray("dashdot", 2) == "9,3,3,3"
    assert layout.dasharray("longdashdot", 2) == "15,6,3,6"
    assert layout.dasharray("5px,3px,1px,3px", 2) == "5,3,1,3"
