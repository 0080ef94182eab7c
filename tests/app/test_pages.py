"""The app's pages under ``streamlit.testing.v1.AppTest``: set widgets, run, and check the
tables, the figure JSON (frame counts, fixed axis ranges, season bands) and the messages.

AppTest drives ``app.py`` (``st.navigation``) and moves between pages with ``switch_page``.
Plotly figures are read from ``at.get("plotly_chart")[i].proto.spec``. AppTest does not
apply cell edits to ``st.data_editor``: :func:`edit_table` sends the edit the browser would
send (the editor's widget state) through AppTest's runner.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("plotly")

from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.ui import keys, runcache, state

from .conftest import errors, figures, open_app, title_of, values

pytestmark = pytest.mark.usefixtures("fresh_cache")

BUILDER, RACE, INSIDE = (
    "app_pages/1_Pattern_builder.py",
    "app_pages/2_Race.py",
    "app_pages/3_Inside_All-Season.py",
)


# --- helpers (the shared ones: tests/app/conftest.py) ---------------------------------------
def figure(at: AppTest, title_part: str) -> dict:
    found = [f for f in figures(at) if title_part in title_of(f)]
    assert found, f"no figure titled *{title_part}*: {[title_of(f) for f in figures(at)]}"
    return found[0]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def use_scenario(at: AppTest, scenario: api.Scenario) -> None:
    """Put a scenario in the session, as the Pattern builder does."""
    at.session_state[state.SCENARIO] = scenario
    at.session_state["pb_reseed"] = True  # the builder's inputs follow it


def edit_table(at: AppTest, edited_rows: dict) -> None:
    """Send a cell edit of the segment table (what the browser sends), and run."""
    editor = at.data_editor[0]
    ws = at._tree.get_widget_states()
    w = ws.widgets.add()
    w.id = editor.proto.id
    w.string_value = json.dumps({"edited_rows": edited_rows, "added_rows": [], "deleted_rows": []})
    at._run(widget_state=ws)


def click_run(at: AppTest) -> None:
    at.button(key="race_run").click()
    at.run()


SMALL = api.Scenario(
    segments=((0, 400), (1, 300), (0, 300), (2, 200), (1, 300)),
    d=2,
    n_arms=4,
    sigma2=0.1,
    batch_size=5,
    seed=3,
    preset="custom",
)


# --- URL encoding (no Streamlit run needed) -------------------------------------------------
@pytest.mark.parametrize(
    "scenario",
    [
        api.Scenario(),
        api.Scenario.from_preset("regular", horizon=6000, n_states=3, d=3, seed=7),
        api.Scenario.from_preset("extreme", horizon=5000, n_states=2, batch_size=(10, 20, 5)),
        SMALL,
    ],
)
def test_url_round_trip(scenario):
    query = state.scenario_to_query(scenario)
    back, errs = state.scenario_from_query(query)
    assert errs == []
    assert back == scenario


def test_url_short_form_for_untouched_presets():
    q = state.scenario_to_query(api.Scenario.from_preset("regular", horizon=6000, n_states=3))
    assert "segments" not in q and q["horizon"] == "6000" and q["n_states"] == "3"
    assert "segments" in state.scenario_to_query(SMALL)


def test_url_each_bad_parameter_is_named_and_the_good_ones_kept():
    sc, errs = state.scenario_from_query(
        {"d": "banana", "n_arms": "7", "colour": "red", "sigma2": "-1"}
    )
    text = " ".join(errs)
    assert "d=banana" in text and "colour" in text and "sigma2=-1" in text
    assert sc.n_arms == 7 and sc.d == api.Scenario().d


# --- Home -----------------------------------------------------------------------------------
def test_home_explains_and_shows_the_pattern():
    at = open_app()
    assert_clean(at)
    assert "remembers the seasons" in at.title[0].value
    text = " ".join(m.value for m in at.markdown)
    assert "Halloween" in text and "shadow" in text
    fig = figure(at, "Season pattern")
    assert fig["layout"]["xaxis"]["range"] == [0, 10_000]
    assert at.button(key="home_run").label.startswith("▶ Run the paper")


def test_home_button_runs_the_paper_experiment_on_the_race_page():
    at = open_app()
    at.button(key="home_run").click()
    at.run()
    assert_clean(at)
    assert at.title[0].value == "Race"
    race = at.session_state[keys.LAST_RACE]
    assert [p.name for p in race.policies] == list(api.DEFAULT_POLICIES)
    assert race.n_seeds == api.DEFAULT_SEEDS and race.scenario == api.Scenario()
    assert runcache.store().get(runcache.key_of(race)) is not None
    board = at.table[0].value
    assert len(board) == len(api.DEFAULT_POLICIES)
    assert set(board["Policy"]) >= {
        "All-Season (SW)",
        "All-Season (SW), printed rule",
        "LinTS",
        "Random",
    }
    # one chart at a time (the season timeline above it): cumulative regret first, with the
    # final regret per seed beside it; the others from the chart picker
    assert len(figures(at)) == 3
    regret = figure(at, "Cumulative regret")
    assert regret["layout"]["xaxis"]["range"] == [0, 10_000]
    labels = [b.label for b in at.get("download_button")]
    assert "Steps CSV" in labels and labels.count("HTML") == 3  # timeline, regret, final
    picker = at.segmented_control(key="race_chart_pick")
    assert picker.value == "regret" and picker.options[:4] == [
        "Cumulative regret",
        "Cumulative reward",
        "Mean reward per step",
        "Reward in each state",
    ]
    picker.set_value("reward").run()
    assert_clean(at)
    assert len(figures(at)) == 2
    reward = figure(at, "Cumulative reward")
    assert reward["layout"]["xaxis"]["range"] == [0, 10_000]
    assert len(reward["layout"]["shapes"]) >= 9  # a season band per segment
    # each policy: its band (one closed shape), its mean line
    assert sum(1 for t in reward["data"] if t.get("fill") == "toself") == len(api.DEFAULT_POLICIES)
    at.segmented_control(key="race_chart_pick").set_value("board").run()
    figure(at, "Leaderboard")
    at.segmented_control(key="race_chart_pick").set_value("states").run()
    figure(at, "each true state")
    assert len(figures(at)) == 2 and len(at.table) == 1


# --- Pattern builder ------------------------------------------------------------------------
def test_builder_preset_sliders_and_url():
    at = open_app(BUILDER)
    assert_clean(at)
    at.selectbox(key="pb_preset").set_value("regular")
    at.run()
    at.slider(key="pb_n_states").set_value(3)
    at.number_input(key="pb_horizon").set_value(6000)
    at.slider(key="pb_d").set_value(2)
    at.run()
    assert_clean(at)
    assert errors(at) == []
    sc = at.session_state[state.SCENARIO]
    assert sc.preset == "regular" and sc.horizon == 6000 and sc.d == 2
    assert [s for s, _ in sc.segments] == [0, 1, 2, 0, 1, 2]
    assert at.query_params["preset"] == ["regular"] or at.query_params["preset"] == "regular"
    fig = figure(at, "Season pattern")
    assert fig["layout"]["xaxis"]["range"] == [0, 6000]
    table = at.data_editor[0].value
    assert len(table) == 6 and int(table["length"].sum()) == 6000
    at.number_input(key="pb_horizon").set_value(3000)
    at.run()
    table = at.data_editor[0].value
    assert int(table["length"].sum()) == 3000 and list(table["starts at"])[:2] == [0, 500]
    # the scenario survives a trip to another page and back
    at.switch_page(RACE)
    at.run()
    assert "regular, 3,000 steps" in at.markdown[1].value
    at.switch_page(BUILDER)
    at.run()
    assert at.selectbox(key="pb_preset").value == "regular"
    assert at.number_input(key="pb_horizon").value == 3000


def test_builder_edit_makes_custom_and_zero_length_is_reported_under_the_table():
    at = open_app(BUILDER)
    edit_table(at, {"0": {"length": 2000}})
    assert_clean(at)
    sc = at.session_state[state.SCENARIO]
    assert sc.preset == "custom" and sc.segments[0] == (0, 2000) and sc.horizon == 10_500
    assert at.selectbox(key="pb_preset").value == "custom"
    edit_table(at, {"1": {"length": 0}})
    assert_clean(at)
    errs = errors(at)
    assert any("Segment 2, length" in e and "got 0" in e for e in errs), errs
    assert at.session_state[state.SCENARIO] == sc  # the last valid scenario stays
    assert any("last valid scenario" in w.value for w in at.warning)


def test_builder_bad_batch_and_sigma_are_reported_by_name():
    at = open_app(BUILDER)
    at.text_input(key="pb_batch").set_value("10, zero")
    at.run()
    assert_clean(at)
    assert any(e.startswith("Batch size") for e in errors(at)), errors(at)
    at.text_input(key="pb_batch").set_value("10, 20")
    at.number_input(key="pb_sigma2").set_value(0.0)
    at.run()
    assert any(e.startswith("Noise σ²") for e in errors(at)), errors(at)
    at.number_input(key="pb_sigma2").set_value(0.2)
    at.run()
    assert errors(at) == []
    sc = at.session_state[state.SCENARIO]
    assert sc.batch_size == (10, 20) and sc.sigma2 == 0.2


def test_builder_upload_json():
    at = open_app(BUILDER)
    up = at.file_uploader(key="pb_upload")
    up.set_value(("broken.json", b"{not json", "application/json"))
    at.run()
    assert_clean(at)
    assert any("broken.json was not loaded" in e and "not valid JSON" in e for e in errors(at)), (
        errors(at)
    )
    zero = dict(SMALL.to_dict(), segments=[[0, 100], [1, 0]])
    at.file_uploader(key="pb_upload").set_value(
        ("zero.json", json.dumps(zero).encode(), "application/json")
    )
    at.run()
    assert any("Segment 2, length" in e for e in errors(at)), errors(at)
    unknown = dict(SMALL.to_dict(), colour="red")
    at.file_uploader(key="pb_upload").set_value(
        ("extra.json", json.dumps(unknown).encode(), "application/json")
    )
    at.run()
    assert any("colour" in e for e in errors(at)), errors(at)
    at.file_uploader(key="pb_upload").set_value(
        ("good.json", SMALL.to_json().encode(), "application/json")
    )
    at.run()
    assert_clean(at)
    assert errors(at) == []
    assert at.session_state[state.SCENARIO] == SMALL
    assert at.selectbox(key="pb_preset").value == "custom"
    assert at.slider(key="pb_d").value == 2
    assert figure(at, "Season pattern")["layout"]["xaxis"]["range"] == [0, SMALL.horizon]


def test_link_with_nonsense_parameters_gets_clear_messages():
    at = open_app(BUILDER, query={"d": "banana", "preset": "summer", "foo": "1"})
    assert_clean(at)
    errs = " ".join(errors(at))
    assert "d=banana" in errs and "must be an integer" in errs
    assert "preset=summer" in errs and "foo" in errs
    assert at.session_state[state.SCENARIO] == api.Scenario()


def test_link_with_zero_length_segment_or_too_long_horizon():
    at = open_app(query={"preset": "custom", "segments": "0x100_1x0"})
    assert_clean(at)
    assert any("Segment 2, length" in e for e in errors(at)), errors(at)
    at = open_app(query={"preset": "regular", "horizon": "90000"})
    assert any("at most 50,000 steps" in e for e in errors(at)), errors(at)


def test_link_reproduces_the_scenario():
    query = state.scenario_to_query(SMALL)
    at = open_app(RACE, query=query)
    assert_clean(at)
    assert errors(at) == []
    assert at.session_state[state.SCENARIO] == SMALL


# --- Race -----------------------------------------------------------------------------------
def test_race_settings_run_and_cache(monkeypatch):
    at = open_app()
    use_scenario(at, SMALL)
    at.switch_page(RACE)
    at.run()
    assert_clean(at)
    at.multiselect(key="race_policies").set_value(["allseason-sw", "lints"])
    at.slider(key="race_seeds").set_value(2)
    at.run()
    at.number_input(key="hp_allseason-sw_tau").set_value(20)
    click_run(at)
    assert_clean(at)
    board = at.table[0].value
    assert list(board["Policy"]).count("LinTS") == 1 and len(board) == 2
    race = at.session_state[keys.LAST_RACE]
    assert dict(race.policies[0].params)["tau"] == 20 and race.n_seeds == 2
    regret = figure(at, "Cumulative regret")  # the chart shown first
    assert regret["layout"]["xaxis"]["range"] == [0, SMALL.horizon]
    means = [
        t for t in regret["data"] if t.get("mode") == "lines+markers" and t.get("hovertemplate")
    ]
    assert len(means) == 2
    for t in means:
        x = values(t["x"])
        assert len(x) <= 1000 and x[0] == 0 and x[-1] == SMALL.horizon - 1

    # back on the page: shown from the cache, nothing recomputed
    def boom(*a, **k):
        raise AssertionError("recomputed")

    monkeypatch.setattr(api, "iter_race", boom)
    monkeypatch.setattr(api, "run_race", boom)
    at.switch_page(BUILDER)
    at.run()
    at.switch_page(RACE)
    at.run()
    assert_clean(at)
    assert any("from the cache" in s.value for s in at.success)
    assert len(at.table[0].value) == 2


def test_race_invalid_hyperparameter_and_budget():
    at = open_app(RACE)
    at.number_input(key="hp_allseason-disc_gamma").set_value(1.5)
    at.run()
    assert_clean(at)
    assert any(e.startswith("allseason-disc, gamma") for e in errors(at)), errors(at)
    at.number_input(key="hp_allseason-disc_gamma").set_value(0.95)
    at.multiselect(key="race_policies").set_value([])
    at.run()
    assert any("at least one policy" in e for e in errors(at)), errors(at)
    use_scenario(at, api.Scenario.from_preset("regular", horizon=50_000))
    at.multiselect(key="race_policies").set_value(list(api.DEFAULT_POLICIES))
    at.slider(key="race_seeds").set_value(10)
    click_run(at)
    assert_clean(at)
    assert any("at most 1,000,000" in e for e in errors(at)), errors(at)
    # no race was run: the only chart is the scenario's season timeline
    assert [title_of(f).split(":")[0] for f in figures(at)] == ["Season pattern"]
    assert "horizon ≤ 50,000" in " ".join(c.value for c in at.caption)


def test_race_lists_every_registered_policy():
    at = open_app(RACE)
    assert set(at.multiselect(key="race_policies").options) >= {
        "All-Season (SW)",
        "All-Season (Disc)",
        "LinTS",
        "SW-LinTS",
        "D-LinTS",
        "Random",
    }
    assert len(at.multiselect(key="race_policies").options) == len(api.policy_names())


# --- Inside All-Season ----------------------------------------------------------------------
def test_inside_without_a_race_offers_one():
    at = open_app()
    use_scenario(at, SMALL)
    at.switch_page(INSIDE)
    at.run()
    assert_clean(at)
    assert any("No race has run" in i.value for i in at.info)
    at.button(key="inside_run_default").click()
    at.run()
    assert_clean(at)
    assert at.selectbox(key="inside_label").options[0].startswith("All-Season (SW)")
    assert at.radio(key="inside_view").value == "Weights"  # the paper's figure first
    assert title_of(figures(at)[0]).startswith("Weight of the most likely bandit")
    assert len(at.get("plotly_chart")) == 3


def test_inside_figures_after_a_race_d2():
    at = open_app()
    use_scenario(at, SMALL)
    at.switch_page(RACE)
    at.run()
    at.multiselect(key="race_policies").set_value(["allseason-sw", "allseason-disc", "lints"])
    at.run()
    click_run(at)
    at.switch_page(INSIDE)
    at.run()
    assert_clean(at)
    assert len(at.selectbox(key="inside_label").options) == 2
    at.selectbox(key="inside_seed").set_value(1)
    at.run()
    assert_clean(at)
    assert at.radio(key="inside_view").value == "Weights"
    assert len(at.get("plotly_chart")) == 3  # only the open view is built
    for view in at.radio(key="inside_view").options:
        at.radio(key="inside_view").set_value(view)
        at.run()
        assert_clean(at)
        for el in at.get("plotly_chart"):  # every chart has a text alternative
            assert len(el.proto.alt) > 20 and "<" not in el.proto.alt, el.proto.alt
    at.radio(key="inside_view").set_value("Weights")
    at.run()
    n_batches = len(SMALL.batch_ends())
    anim = figure(at, "Posterior weights")
    assert len(anim["frames"]) == min(150, n_batches)
    assert anim["layout"]["yaxis"]["range"] == [0, 1]
    top = figure(at, "most likely bandit")
    assert top["layout"]["yaxis"]["range"] == [0, 1.06]
    assert top["layout"]["xaxis"]["range"] == [0, SMALL.horizon]
    assert any("Who learnt which state" in m.value and "θ\\*1 by" in m.value for m in at.markdown)
    at.radio(key="inside_view").set_value("Births & prunings")
    at.run()
    figure(at, "Lives of the base bandits")
    at.radio(key="inside_view").set_value("Seasons & recall")
    at.run()
    figure(at, "Who played each state")
    recall = figure(at, "takes over after each change point")
    assert len(recall["data"]) >= 1
    table = at.dataframe[0].value
    assert len(table) == len(SMALL.segments) - 1
    assert any(m.value.startswith("**Verdict**") for m in at.markdown)
    at.radio(key="inside_view").set_value("Carried weights vs the printed rule")
    at.run()
    assert figure(at, "Carried weights (fixed share, the default)")
    assert figure(at, "The paper's printed rule")
    pair = [d for d in at.dataframe if "bandits created per run" in d.value.index]
    assert len(pair) == 1 and list(pair[0].value.columns) == [
        "Carried weights (fixed share, the default)",
        "The paper's printed rule (last batch alone)",
    ]
    at.radio(key="inside_view").set_value("Posteriors (d = 2)")
    at.run()
    post = figure(at, "Posteriors ·")
    assert 1 < len(post["frames"]) <= 100
    assert post["layout"]["xaxis"]["range"] and post["layout"]["yaxis"]["range"]


def test_inside_says_how_to_get_the_posterior_animation_when_d_is_not_2():
    at = open_app()
    use_scenario(at, api.Scenario(segments=((0, 300), (1, 300), (0, 200)), d=3, preset="custom"))
    at.switch_page(INSIDE)
    at.run()
    at.button(key="inside_run_default").click()
    at.run()
    at.radio(key="inside_view").set_value("Posteriors (d = 2)")
    at.run()
    assert_clean(at)
    assert any("d = 2" in i.value and "Pattern builder" in i.value for i in at.info)


def test_sweep_results_page_without_and_with_a_sweep(tmp_path, monkeypatch):
    """No sweep: instructions. A real small sweep: the small-multiples figure and best table."""
    from allseason import sweeps
    from allseason.ui import sweeps as sweeps_page

    page = "app_pages/4_Sweep_results.py"
    monkeypatch.setattr(sweeps_page, "ROOT", tmp_path)
    at = open_app(page)
    assert not at.exception
    assert any("No sweep results" in i.value for i in at.info)
    spec = sweeps.SweepSpec(
        scenarios=[api.Scenario.from_preset("regular", horizon=120)],
        policies=[sweeps.PolicyGrid("sw-lints", grid={"tau": [5, 20]}), sweeps.PolicyGrid("lints")],
        seeds=2,
        name="t",
    )
    sweeps.run_sweep(spec, tmp_path / "t", processes=1)
    at = open_app(page)
    assert not at.exception and not at.error
    assert at.selectbox[0].options == ["t"]
    fig = __import__("json").loads(at.get("plotly_chart")[0].proto.spec)
    assert {t.get("legendgroup") or t.get("name") for t in fig["data"]} >= {"sw-lints", "lints"}
    assert len(at.dataframe[0].value) == 2  # best setting of each algorithm


def test_race_with_the_paper_baselines():
    """BoB, DenBand and dLinUCB are picked and run from the app like the others."""
    at = open_app()
    use_scenario(at, SMALL)
    at.switch_page(RACE)
    at.run()
    at.multiselect(key="race_policies").set_value(["bob", "denband", "dlinucb", "random"])
    at.slider(key="race_seeds").set_value(1)
    at.run()
    click_run(at)
    assert_clean(at)
    board = at.table[0].value
    assert set(board["Policy"]) == {"BoB", "DenBand", "dLinUCB", "Random"}


def test_links_over_the_engine_limit_quote_the_app_limit():
    """A horizon over the engine's 200,000 is over the app's 50,000 too: say the app's."""
    for query in ({"horizon": "1000000"}, {"preset": "custom", "segments": "0x300000"}):
        _, errors = state.scenario_from_query(query)
        assert len(errors) == 1 and "50,000" in errors[0] and "200000" not in errors[0]
