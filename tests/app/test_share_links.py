"""Shared links hold what the sender sees: the scenario, the race settings (policies, seeds,
hyperparameters that differ from the defaults) and, on Inside All-Season, the open view, the
contestant and the seed. Pages are opened with query parameters under AppTest; the widgets
must show those values, a changed widget must update ``at.query_params``, and a bad value
gets a message naming it while the rest of the link still applies.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

pytest.importorskip("streamlit")

from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.ui import state

from .conftest import errors, open_app

pytestmark = pytest.mark.usefixtures("fresh_cache")

RACE, INSIDE = "app_pages/2_Race.py", "app_pages/3_Inside_All-Season.py"
SMALL = api.Scenario(
    segments=((0, 150), (1, 100), (0, 100)),
    d=2,
    n_arms=3,
    sigma2=0.1,
    batch_size=5,
    seed=3,
    preset="custom",
)


def open_page(page: str, query: dict) -> AppTest:
    at = open_app(page, query)
    assert not at.exception, [e.value for e in at.exception]
    return at


def query(at: AppTest) -> dict:
    return {
        k: at.query_params[k][0] if isinstance(at.query_params[k], list) else at.query_params[k]
        for k in at.query_params
    }


# --- encoding (no Streamlit run) ------------------------------------------------------------
def test_default_race_adds_nothing_to_the_link():
    assert state.race_to_query(state.default_choice()) == {}


def test_race_link_round_trip():
    choice = state.default_choice()
    choice = replace(choice, policies=["allseason-sw", "sw-lints", "denband"], n_seeds=3)
    choice = choice.with_params("sw-lints", {**state.policy_defaults("sw-lints"), "tau": 250})
    choice = choice.with_params(
        "allseason-sw",
        {**state.policy_defaults("allseason-sw"), "weighting": "batch", "share": 0.01},
    )
    q = state.race_to_query(choice)
    assert q == {
        "policies": "allseason-sw,sw-lints,denband",
        "n_seeds": "3",
        "sw-lints.tau": "250",
        "allseason-sw.share": "0.01",
        "allseason-sw.weighting": "batch",
    }
    back, errs = state.race_from_query(q)
    assert errs == []
    assert back.policies == choice.policies and back.n_seeds == 3
    for name in choice.policies:
        assert back.params[name] == choice.params.get(name, state.policy_defaults(name))


# --- the Race page --------------------------------------------------------------------------
def test_race_page_shows_the_linked_settings_and_writes_changes_back():
    at = open_page(
        RACE, {"seed": "4", "policies": "lints,sw-lints", "n_seeds": "3", "sw-lints.tau": "50"}
    )
    assert errors(at) == []
    assert at.multiselect(key="race_policies").value == ["lints", "sw-lints"]
    assert at.slider(key="race_seeds").value == 3
    assert at.number_input(key="hp_sw-lints_tau").value == 50
    assert at.session_state[state.SCENARIO].seed == 4
    q = query(at)
    assert q["policies"] == "lints,sw-lints" and q["n_seeds"] == "3"
    assert q["sw-lints.tau"] == "50" and q["seed"] == "4"
    at.slider(key="race_seeds").set_value(5).run()
    assert "n_seeds" not in query(at)  # back to the default: not in the link
    at.number_input(key="hp_sw-lints_tau").set_value(70).run()
    assert query(at)["sw-lints.tau"] == "70"
    at.multiselect(key="race_policies").select("random").run()
    assert query(at)["policies"] == "lints,sw-lints,random"


def test_race_link_bad_values_are_named_and_the_rest_kept():
    at = open_page(
        RACE,
        {
            "seed": "2",
            "policies": "lints,nope,sw-lints",
            "n_seeds": "99",
            "sw-lints.tau": "-3",
            "lints.lam": "abc",
            "lints.bogus": "1",
            "d-lints.gamma": "0.5",
        },
    )
    msgs = " ".join(errors(at))
    assert "“nope”" in msgs
    assert "n_seeds=99" in msgs and "between 1 and 10" in msgs
    assert "sw-lints.tau=-3" in msgs
    assert "lints.lam=abc" in msgs and "must be a number" in msgs
    assert "no hyperparameter “bogus”" in msgs
    assert "d-lints is not among the race's policies" in msgs
    # the good parts apply
    assert at.multiselect(key="race_policies").value == ["lints", "sw-lints"]
    assert at.slider(key="race_seeds").value == 5
    assert at.number_input(key="hp_sw-lints_tau").value == 100
    assert at.session_state[state.SCENARIO].seed == 2


def test_link_unknown_parameter_lists_the_race_fields_too():
    at = open_page(RACE, {"colour": "red"})
    msgs = " ".join(errors(at))
    assert "“colour” is not known" in msgs and "n_seeds" in msgs and "view" in msgs


# --- Inside All-Season ----------------------------------------------------------------------
def _inside_link(**extra) -> dict:
    return {
        **SMALL.to_query(),
        "policies": "allseason-sw,allseason-disc,lints",
        "n_seeds": "2",
        **extra,
    }


def _run_and_go_inside(at: AppTest) -> None:
    at.button(key="race_run").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.switch_page(INSIDE)
    at.run()
    assert not at.exception, [e.value for e in at.exception]


def test_inside_shows_the_linked_view_contestant_and_seed():
    at = open_page(RACE, _inside_link(view="births", contestant="allseason-disc", inside_seed="1"))
    _run_and_go_inside(at)
    assert errors(at) == []
    assert at.radio(key="inside_view").value == "Births & prunings"
    assert at.selectbox(key="inside_label").value == "allseason-disc"
    assert at.selectbox(key="inside_seed").value == 1
    q = query(at)
    assert q["view"] == "births" and q["contestant"] == "allseason-disc"
    assert q["inside_seed"] == "1" and q["n_seeds"] == "2"
    at.radio(key="inside_view").set_value("Seasons & recall").run()
    assert query(at)["view"] == "seasons"
    at.selectbox(key="inside_seed").set_value(0).run()
    assert "inside_seed" not in query(at)


def test_inside_link_in_a_new_session_is_served_from_the_cache():
    link = _inside_link(view="seasons", inside_seed="1")
    first = open_page(RACE, link)
    first.button(key="race_run").click()
    first.run()
    at = open_page(INSIDE, link)  # a new session, the race is in the server's cache
    assert errors(at) == []
    assert at.radio(key="inside_view").value == "Seasons & recall"
    assert at.selectbox(key="inside_seed").value == 1


def test_inside_link_bad_values_get_messages():
    at = open_page(RACE, _inside_link(view="nonsense", contestant="lints", inside_seed="7"))
    _run_and_go_inside(at)
    msgs = " ".join(errors(at))
    assert "view=nonsense" in msgs and "births" in msgs
    assert "contestant=lints" in msgs
    assert "inside_seed=7" in msgs and "0 to 1" in msgs
    assert at.radio(key="inside_view").value == "Weights"
    assert at.selectbox(key="inside_label").value == "allseason-sw"
    assert at.selectbox(key="inside_seed").value == 0


@pytest.mark.parametrize("page", ["app_pages/1_Pattern_builder.py", RACE])
def test_the_link_is_written_once_per_page_run(page, monkeypatch):
    """The page that owns the settings writes them to its URL once per run, after its
    inputs: a page run calls ``state.sync_url`` once."""
    at = open_page(page, {"seed": "2", "policies": "lints,sw-lints"})
    calls, real = [], state.sync_url

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(state, "sync_url", counted)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(calls) == 1
    assert query(at)["seed"] == "2"
