"""The validation entry point: every bad value is rejected with a message naming the field."""

import pytest

from allseason import api
from allseason.specs import SpecError


def test_default_scenario_roundtrips_through_json():
    sc = api.Scenario.from_preset("paper-synthetic", batch_size=(2, 5))
    assert api.Scenario.from_json(sc.to_json()) == sc
    race = api.default_race(sc)
    assert api.Race.from_dict(__import__("json").loads(race.to_json())) == race


@pytest.mark.parametrize("data, field", [
    ({"segments": []}, "segments"),
    ({"segments": [[0, 0]]}, "segments[1].length"),
    ({"segments": [[0, 10], [-1, 5]]}, "segments[2].state"),
    ({"segments": [[0, "ten"]]}, "segments[1].length"),
    ({"segments": [[0, 10, 3]]}, "segments"),
    ({"segments": "0,10"}, "segments"),
    ({"segments": [[0, 10**9]]}, "segments[1].length"),
    ({"d": 0}, "d"), ({"d": 2.5}, "d"), ({"d": True}, "d"), ({"n_arms": 1}, "n_arms"),
    ({"sigma2": 0}, "sigma2"), ({"sigma2": "nan"}, "sigma2"), ({"sigma2": float("inf")}, "sigma2"),
    ({"batch_size": 0}, "batch_size"), ({"batch_size": []}, "batch_size"),
    ({"seed": -1}, "seed"), ({"preset": "christmas"}, "preset"), ({"horizon": 5}, "horizon"),
    ({"__class__": 1}, "__class__"),
])
def test_bad_scenarios_name_the_field(data, field):
    with pytest.raises(SpecError) as err:
        api.Scenario.from_dict(data)
    assert err.value.field == field
    assert str(err.value).startswith(field)


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "null", "\"x\"", "{\"d\": {}}"])
def test_bad_json_is_a_spec_error(text):
    with pytest.raises(SpecError):
        api.Scenario.from_json(text)


@pytest.mark.parametrize("names, shared, field", [
    (["nope"], {}, "policies"), ([], {}, "policies"),
    (["sw-lints"], {"tau": -3}, "sw-lints.tau"), (["allseason-sw"], {"n_max": 0},
                                                   "allseason-sw.n_max"),
    (["d-lints"], {"gamma": 1.5}, "d-lints.gamma"),
    (["allseason-sw"], {"weighting": "foo"}, "allseason-sw.weighting"),
])
def test_bad_policies_name_the_field(names, shared, field):
    with pytest.raises(SpecError) as err:
        api.policy_specs(names, **shared)
    assert err.value.field == field


def test_unknown_hyperparameter_is_rejected():
    with pytest.raises(SpecError, match="lints.tau"):
        api.PolicySpec("lints", {"tau": 3})


def test_presets_scale_and_respect_limits():
    for name in api.PRESETS:
        sc = api.Scenario.from_preset(name, horizon=30_000)
        assert sc.horizon == 30_000
    assert min(n for _, n in api.Scenario.from_preset("extreme", horizon=30_000).segments) >= 600
    with pytest.raises(SpecError, match="horizon"):
        api.Scenario.from_preset("regular", horizon=10**7)
