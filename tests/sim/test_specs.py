"""The validation entry point: every bad value is rejected with a message naming the field."""

import pytest

from allseason import api
from allseason.envs.patterns import FIXED_PRESETS
from allseason.specs import SpecError


def test_default_scenario_roundtrips_through_json():
    sc = api.Scenario.from_preset("paper-synthetic", batch_size=(2, 5))
    assert api.Scenario.from_json(sc.to_json()) == sc
    race = api.default_race(sc)
    assert api.Race.from_dict(__import__("json").loads(race.to_json())) == race


@pytest.mark.parametrize(
    "data, field",
    [
        ({"segments": []}, "segments"),
        ({"segments": [[0, 0]]}, "segments[1].length"),
        ({"segments": [[0, 10], [-1, 5]]}, "segments[2].state"),
        ({"segments": [[0, "ten"]]}, "segments[1].length"),
        ({"segments": [[0, 10, 3]]}, "segments"),
        ({"segments": "0,10"}, "segments"),
        ({"segments": [[0, 10**9]]}, "segments[1].length"),
        ({"d": 0}, "d"),
        ({"d": 2.5}, "d"),
        ({"d": True}, "d"),
        ({"n_arms": 1}, "n_arms"),
        ({"sigma2": 0}, "sigma2"),
        ({"sigma2": "nan"}, "sigma2"),
        ({"sigma2": float("inf")}, "sigma2"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": []}, "batch_size"),
        ({"seed": -1}, "seed"),
        ({"preset": "christmas"}, "preset"),
        ({"horizon": 5}, "horizon"),
        ({"__class__": 1}, "__class__"),
    ],
)
def test_bad_scenarios_name_the_field(data, field):
    with pytest.raises(SpecError) as err:
        api.Scenario.from_dict(data)
    assert err.value.field == field
    assert str(err.value).startswith(field)


@pytest.mark.parametrize("text", ["", "{", "[1, 2]", "null", '"x"', '{"d": {}}'])
def test_bad_json_is_a_spec_error(text):
    with pytest.raises(SpecError):
        api.Scenario.from_json(text)


@pytest.mark.parametrize(
    "names, shared, field",
    [
        (["nope"], {}, "policies"),
        ([], {}, "policies"),
        (["sw-lints"], {"tau": -3}, "sw-lints.tau"),
        (["allseason-sw"], {"n_max": 0}, "allseason-sw.n_max"),
        (["d-lints"], {"gamma": 1.5}, "d-lints.gamma"),
        (["allseason-sw"], {"weighting": "foo"}, "allseason-sw.weighting"),
    ],
)
def test_bad_policies_name_the_field(names, shared, field):
    with pytest.raises(SpecError) as err:
        api.policy_specs(names, **shared)
    assert err.value.field == field


def test_unknown_hyperparameter_is_rejected():
    with pytest.raises(SpecError, match="lints.tau"):
        api.PolicySpec("lints", {"tau": 3})


def test_presets_scale_and_respect_limits():
    for name in api.PRESETS:
        if name in FIXED_PRESETS:  # a pattern from data: not scaled (tests/sim/test_weather.py)
            continue
        sc = api.Scenario.from_preset(name, horizon=30_000)
        assert sc.horizon == 30_000
    assert min(n for _, n in api.Scenario.from_preset("extreme", horizon=30_000).segments) >= 600
    with pytest.raises(SpecError, match="horizon"):
        api.Scenario.from_preset("regular", horizon=10**7)


# --- the one entry point: parse_scenario ---------------------------------------------------
def test_parse_scenario_reads_a_csv_segment_table():
    base = api.Scenario(d=3, n_arms=7, sigma2=0.2, batch_size=(2, 5), seed=9)
    sc = api.parse_scenario("state,length\n0,500\n1,300\n0,200\n", "csv", defaults=base)
    assert sc.segments == ((0, 500), (1, 300), (0, 200)) and sc.preset == "custom"
    assert (sc.d, sc.n_arms, sc.sigma2, sc.batch_size, sc.seed) == (3, 7, 0.2, (2, 5), 9)
    # spellings a spreadsheet writes: BOM, CRLF, ';' or tab, quotes, blank lines, any order
    for text in [
        "\ufeffstate,length\r\n0,500\r\n1,300\r\n0,200\r\n",
        "State;Length\n0;500\n\n1;300\n0;200\n\n",
        "length\tstate\n500\t0\n300\t1\n200\t0",
        '"state","length",\n"0","500",\n1,300,\n0,200,,\n',
    ]:
        assert api.parse_scenario(text, "csv").segments == sc.segments, text
    assert api.parse_scenario(sc.to_csv().encode("utf-16"), "csv").segments == sc.segments
    assert api.parse_scenario(sc.to_csv(), "csv", defaults=sc) == sc


@pytest.mark.parametrize(
    "text, field, needle",
    [
        ("", "file", "empty"),
        ("0,500\n1,300\n", "file", "header"),
        ("length\n500\n", "file", "missing: state"),
        ("state,length,comment\n0,5,x\n", "file", "unknown column 'comment'"),
        ("state,state\n0,5\n", "file", "twice"),
        ("state,length\n", "segments", "no rows"),
        ("state,length\n0,500\n1,abc\n", "segments[2].length", "line 3"),
        ("state,length\n0,500\n\n1,\n", "segments[2].length", "is empty (line 4"),
        ("state,length\n0,500\n-1,5\n", "segments[2].state", "between 0 and 49"),
        ("state,length\n0,0\n", "segments[1].length", "between 1 and"),
        ("state,length\n0,2.5\n", "segments[1].length", "integer"),
        ("state,length\n0,5,7\n", "segments[1]", "3 cells"),
        ("state,length\n=cmd|' /C calc'!A0,5\n", "segments[1].state", "=cmd"),
        ("state,length\n../../etc/passwd,5\n", "segments[1].state", "must be an integer"),
        ("state,length\n0,1" + "0" * 5000 + "\n", "segments[1].length", "between 1 and"),
        ("state,length\n" + "0,1\n" * 2001, "segments", "at most 2000"),
        ("state,length\n0,200000\n1,1\n", "segments", "horizon"),
        (b"state,length\n0,\xff\n", "file", "UTF-8"),
    ],
    ids=lambda v: repr(v)[:24],
)
def test_bad_csv_names_the_field_and_the_line(text, field, needle):
    with pytest.raises(SpecError) as err:
        api.parse_scenario(text, "csv")
    assert err.value.field == field, str(err.value)
    assert needle in err.value.message, str(err.value)


@pytest.mark.parametrize(
    "text, field",
    [
        ("[" * 100_000, "file"),
        ('{"seed": 1' + "0" * 5000 + "}", "file"),
        ('{"seed": 1' + "0" * 400 + "}", "seed"),
        ('{"d": 1e999}', "d"),
        ('{"sigma2": NaN}', "sigma2"),
        ('{"sigma2": 1e400}', "sigma2"),
        ("[[0, 5], [1, -1]]", "segments[2].length"),
        ("[1, 2]", "segments"),
        ("7", "scenario"),
        (" " * (api.MAX_INPUT_BYTES + 1), "file"),
        (b"\xff\xfe{", "file"),
    ],
    ids=lambda v: repr(v)[:24],
)
def test_bad_json_text_names_the_field(text, field):
    with pytest.raises(SpecError) as err:
        api.parse_scenario(text, "json")
    assert err.value.field == field, str(err.value)
    assert len(str(err.value)) < 300


def test_json_bare_list_and_defaults():
    sc = api.parse_scenario("[[0, 5], [1, 6]]", "json", defaults={"d": 2, "seed": None})
    assert sc.segments == ((0, 5), (1, 6)) and sc.preset == "custom" and sc.d == 2
    # what the source gives wins over the defaults
    assert api.parse_scenario('{"d": 4}', "json", defaults={"d": 2}).d == 4
    with pytest.raises(SpecError, match="d: must be between"):
        api.parse_scenario("[[0, 5]]", "json", defaults={"d": 0})


def test_query_strict_and_lenient():
    sc = api.Scenario.from_preset(
        "extreme", horizon=5000, n_states=2, batch_size=(10, 20), seed=2**63 - 1, sigma2=0.123456789
    )
    assert api.parse_scenario(sc.to_query(), "query") == sc  # exact, big seeds included
    q = {"d": "banana", "n_arms": "7", "colour": "red", "segments": "0x100_1x0"}
    with pytest.raises(SpecError) as err:
        api.parse_scenario(q, "query")
    assert err.value.field == "colour"
    rejected = []
    got = api.parse_scenario(q, "query", rejected=rejected)
    assert got == api.Scenario(n_arms=7)  # the good parameter kept, the pattern not changed
    assert [(r.param, r.error.field) for r in rejected] == [
        ("colour", "colour"),
        ("d", "d"),
        (None, "segments[2].length"),
    ]
    with pytest.raises(SpecError, match="query"):
        api.parse_scenario({"segments": "0x1_" * 300_000}, "query")


def test_single_batch_size_list_is_the_number():
    assert api.Scenario(batch_size=[5]).batch_size == 5
    assert api.Scenario(batch_size=(5, 6)).batch_size == (5, 6)


def test_file_kind_looks_at_the_name_only():
    assert api.file_kind("Pattern.CSV") == "csv" and api.file_kind("a.b.json") == "json"
    for name in ["../../etc/passwd", "x.txt", "csv", ""]:
        with pytest.raises(SpecError, match="file"):
            api.file_kind(name)


def test_out_of_range_integers_carry_their_bounds():
    """A front end with tighter limits words its own message from these, not from the text."""
    with pytest.raises(SpecError) as e:
        api.Scenario(segments=((0, 300_000),))
    assert e.value.got == 300_000 and e.value.bounds[0] == 1
    assert e.value.field.startswith("segments")
    with pytest.raises(SpecError) as e:
        api.Scenario(d="x")
    assert e.value.got is None and e.value.bounds is None


# --- limits: the engine's and the app's, one validator -----------------------------------------
def test_race_checked_is_the_one_check_of_a_races_settings():
    from allseason.limits import APP_LIMITS
    from allseason.specs import Race, Scenario, policy_specs

    def field_of(*args) -> str:
        with pytest.raises(SpecError) as err:
            Race.checked(*args)
        return err.value.field

    sc = Scenario()
    assert field_of(sc, [], 1, APP_LIMITS) == "policies"
    assert field_of(sc, ["lints"] * 12, 1, APP_LIMITS) == "policies"  # counted before labels
    assert field_of(sc, ["lints"], 11, APP_LIMITS) == "n_seeds"
    assert field_of(sc, [{"name": "sw-lints", "params": {"tau": 0}}], 1, APP_LIMITS) == (
        "sw-lints.tau"
    )
    assert field_of(Scenario(d=30), ["lints"], 1, APP_LIMITS) == "d"
    big = Scenario.from_preset("regular", horizon=50_000)
    with pytest.raises(SpecError, match=r"is 1,500,000; at most 1,000,000 in this app") as err:
        Race.checked(big, ["lints", "sw-lints", "random"], 10, APP_LIMITS)
    assert err.value.field == "n_seeds"
    # within the engine's own limits it is the race the constructor makes
    race = Race.checked(sc, ["lints", "sw-lints"], 11)
    assert race.to_json() == Race(sc, policy_specs(["lints", "sw-lints"]), 11).to_json()


def test_the_limits_given_are_the_limits_quoted():
    from allseason.limits import APP_LIMITS
    from allseason.specs import Race, Scenario, check_limits, parse_scenario

    with pytest.raises(SpecError, match="at most 50,000 steps in this app") as err:
        parse_scenario({"preset": "regular", "horizon": "1000000"}, "query", limits=APP_LIMITS)
    assert err.value.field == "horizon" and "200000" not in str(err.value)
    with pytest.raises(SpecError, match="200000"):  # the engine's own, without tighter ones
        parse_scenario({"preset": "regular", "horizon": "1000000"}, "query")
    with pytest.raises(SpecError, match=r"between 1 and 50,000 in this app.*line 3") as err:
        parse_scenario("state,length\n0,400\n1,0\n", "csv", limits=APP_LIMITS)
    assert err.value.field == "segments[2].length"
    assert check_limits(Scenario(d=30)).d == 30
    with pytest.raises(SpecError, match="at most 20 in this app, got 30"):
        check_limits(Scenario(d=30), APP_LIMITS)
    data = Race(Scenario(segments=((0, 60_000),), preset="custom"), ("lints",)).to_dict()
    assert Race.from_dict(data).scenario.horizon == 60_000
    with pytest.raises(SpecError, match="at most 50,000 steps in this app"):
        Race.from_dict(data, APP_LIMITS)
