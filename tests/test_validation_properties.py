"""Property-based: random and adversarial input at the validation entry points is either
accepted as a valid scenario or rejected with a SpecError naming a field; nothing else escapes."""

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allseason import api
from allseason.cli import main as cli_main
from allseason.specs import LIMITS, SpecError

FIELDS = ["segments", "d", "n_arms", "sigma2", "batch_size", "seed", "preset", "horizon",
          "__init__", "n_seeds", ""]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20)
segments = st.lists(st.one_of(st.tuples(st.integers(-3, 60), st.integers(-3, 3000)),
                              st.lists(values, max_size=3)), max_size=8)
scenario_dicts = st.dictionaries(st.sampled_from(FIELDS), st.one_of(values, segments),
                                 max_size=6)
FAST = settings(max_examples=400, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])


def _valid(sc):
    assert isinstance(sc, api.Scenario)
    assert 1 <= sc.horizon <= LIMITS["horizon"]
    assert all(n >= 1 and s >= 0 for s, n in sc.segments)
    assert sc.sigma2 > 0 and math.isfinite(sc.sigma2)
    assert api.Scenario.from_json(sc.to_json()) == sc


@FAST
@given(scenario_dicts)
def test_scenario_dicts_are_accepted_or_named(data):
    try:
        sc = api.Scenario.from_dict(data)
    except SpecError as e:
        assert e.field and str(e).startswith(e.field)
    else:
        _valid(sc)


@FAST
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200),
                 scenario_dicts.map(lambda d: json.dumps(d, default=str))))
def test_scenario_json_text_is_accepted_or_named(text):
    try:
        sc = api.Scenario.from_json(text)
    except SpecError as e:
        assert e.field
    else:
        _valid(sc)


@FAST
@given(st.lists(st.text(max_size=15), max_size=4),
       st.dictionaries(st.sampled_from(["tau", "gamma", "n_max", "lam", "weighting", "share",
                                        "sigma2", "pruning"]), scalars, max_size=4))
def test_policy_specs_are_accepted_or_named(names, shared):
    try:
        specs = api.policy_specs(names, **shared)
    except SpecError as e:
        assert e.field
    else:
        assert specs and all(s.name in api.policy_names() for s in specs)


FLAGS = ["--pattern", "--policies", "--seeds", "--seed", "--horizon", "--states",
         "--batch-size", "--d", "--arms", "--sigma2", "--tau", "--gamma", "--n-max", "--lam",
         "--weighting", "--share"]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(pairs=st.lists(st.tuples(st.sampled_from(FLAGS),
                          st.one_of(st.text(max_size=8), st.integers(-5, 10**7).map(str),
                                    st.floats().map(str))), max_size=4))
def test_cli_flags_exit_0_or_2_never_a_traceback(pairs, capsys):
    argv = ["run", "--json", "--horizon", "60", "--pattern", "regular", "--seeds", "1",
            "--policies", "lints"]
    for flag, value in pairs:
        if flag == "--horizon":  # keep accepted runs small
            value = str(min(abs(int(float(value))) if value.lstrip("-").isdigit() else 60, 600))
        if flag in ("--seeds", "--states"):
            value = value[:2]
        if flag == "--policies" and value not in api.policy_names():
            value = "lints," + value
        argv += [flag, value]
    code = cli_main(argv)
    out = capsys.readouterr()
    assert code in (0, 2), (argv, out.err)
    if code == 2:
        assert out.err.startswith("error:") and len(out.err.strip().splitlines()) == 1


@FAST
@given(st.dictionaries(st.sampled_from(["preset", "segments", "horizon", "n_states", "d",
                                        "n_arms", "sigma2", "batch_size", "seed", "junk",
                                        "<script>"]),
                       st.one_of(st.text(max_size=30), st.integers(-10**9, 10**9).map(str),
                                 st.lists(st.tuples(st.integers(-2, 15), st.integers(-5, 900)),
                                          max_size=6).map(
                                     lambda s: "_".join(f"{a}x{b}" for a, b in s))),
                       max_size=6))
def test_url_query_strings_give_a_valid_scenario_and_messages(query):
    from allseason.ui import state

    scenario, errors = state.scenario_from_query(query)
    _valid(scenario)
    state.check_app_limits(scenario)
    assert all(isinstance(m, str) and m for m in errors)
