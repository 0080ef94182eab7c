"""Property-based: random and adversarial input at the ONE validation entry point,
``api.parse_scenario`` (JSON text, CSV segment tables, link / flag mappings, parsed dicts), and
at the doors that lead to it (the CLI, the app's link reader), is either accepted as a valid
scenario or rejected with a SpecError naming a field; nothing else escapes.

Examples per run (hypothesis ``max_examples``) under the "thorough" profile
(``HYPOTHESIS_PROFILE=thorough``, tests/conftest.py): JSON 600, CSV 1,000, query 1,000 (strict
and lenient together), dicts 400 + 400, round trips 300, oversized 30, plus policies 300, CLI
150 and the app's link reader 300: about 4,500 in all, about 30 s on one core. The default
profile ("quick", CI) runs a quarter of each count (at least 25): about 1,100, new ones each
run.
"""

import csv
import io
import json
import math
import re
from collections.abc import Mapping

import pytest
from conftest import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allseason import api
from allseason.cli import main as cli_main
from allseason.envs.patterns import FIXED_PRESETS
from allseason.limits import NOISE_RANGE
from allseason.links import QUERY_FIELDS
from allseason.specs import LIMITS, Rejected, SpecError

MAX = api.MAX_INPUT_BYTES
# the fields a SpecError may name (besides an unknown key, named as it was sent)
KNOWN_FIELDS = {
    "segments",
    "d",
    "n_arms",
    "sigma2",
    "batch_size",
    "seed",
    "preset",
    "horizon",
    "n_states",
    "file",
    "scenario",
    "query",
}
SEGMENT_FIELD = re.compile(r"segments\[\d+\](\.(state|length))?")

FIELDS = [
    "segments",
    "d",
    "n_arms",
    "sigma2",
    "batch_size",
    "seed",
    "preset",
    "horizon",
    "__init__",
    "n_seeds",
    "",
]
FORMULAS = [
    "=cmd|' /C calc'!A0",
    "=1+1",
    "+1+1",
    "-2+3",
    "@SUM(A1:A2)",
    "'=1",
    '=HYPERLINK("http://x","y")',
    "\t=1",
    "=1,5",
]
PATHS = [
    "../../etc/passwd",
    "/etc/passwd",
    "C:\\Windows\\win.ini",
    "file:///etc/passwd",
    "~/.ssh/id_rsa",
    "\\\\server\\share",
    "/dev/zero",
    "$(id)",
    "`id`",
    "%s%s%n",
    "__import__('os').system('id')",
    "{{7*7}}",
    "<script>alert(1)</script>",
    "\x00",
]
ODD_NUMBERS = [
    "",
    " ",
    "1.0",
    "1e3",
    "2E2",
    "1_000",
    "0x10",
    "٣",
    "１",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "-0",
    "+7",
    " 7 ",
    "1,5",
    "5.5",
    "1e-999",
    "1e999",
    "\ud800",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
segments = st.lists(
    st.one_of(st.tuples(st.integers(-3, 60), st.integers(-3, 3000)), st.lists(values, max_size=3)),
    max_size=8,
)
scenario_dicts = st.dictionaries(st.sampled_from(FIELDS), st.one_of(values, segments), max_size=6)
valid_scenarios = st.builds(
    api.Scenario,
    segments=st.lists(
        st.tuples(st.integers(0, LIMITS["n_states"] - 1), st.integers(1, 5000)),
        min_size=1,
        max_size=40,
    ),
    d=st.integers(1, LIMITS["d"]),
    n_arms=st.integers(2, LIMITS["n_arms"]),
    sigma2=st.floats(*NOISE_RANGE),  # 1 / sigma2 stays finite (allseason/limits.py)
    batch_size=st.one_of(
        st.integers(1, LIMITS["batch_size"]),
        st.lists(st.integers(1, LIMITS["batch_size"]), min_size=1, max_size=6).map(tuple),
    ),
    seed=st.integers(0, 2**63 - 1),  # a preset from data fixes its pattern (sim/test_weather)
    preset=st.sampled_from(tuple(p for p in api.PRESETS if p not in FIXED_PRESETS) + ("custom",)),
)


def _settings(n):
    return settings(
        max_examples=examples(n),
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


# --- what "accepted" and "rejected" must mean ---------------------------------------------
def _valid(sc):
    assert isinstance(sc, api.Scenario)
    assert 1 <= len(sc.segments) <= LIMITS["n_segments"]
    assert 1 <= sc.horizon <= LIMITS["horizon"]
    assert all(type(s) is int and type(n) is int for s, n in sc.segments)
    assert all(0 <= s < LIMITS["n_states"] and n >= 1 for s, n in sc.segments)
    assert 1 <= sc.d <= LIMITS["d"] and 2 <= sc.n_arms <= LIMITS["n_arms"]
    assert NOISE_RANGE[0] <= sc.sigma2 <= NOISE_RANGE[1] and math.isfinite(sc.sigma2)
    sizes = sc.batch_size if isinstance(sc.batch_size, tuple) else (sc.batch_size,)
    assert all(1 <= b <= LIMITS["batch_size"] for b in sizes)
    assert 0 <= sc.seed < 2**63 and sc.preset in api.PRESETS + ("custom",)
    assert api.Scenario.from_json(sc.to_json()) == sc
    assert api.parse_scenario(sc.to_query(), "query") == sc


def _keys(source, kind) -> set[str]:
    """The keys the input sent (an unknown one is named as it was sent)."""
    if kind == "json":
        source = json.loads(source)
    if not isinstance(source, Mapping):
        return set()
    return {str(k)[:40] for k in source}


def _named(err, source=None, kind="dict"):
    assert type(err) is SpecError, type(err)
    assert isinstance(err.field, str) and err.field
    assert str(err) == f"{err.field}: {err.message}" and err.message
    assert len(str(err)) < 600, "a message quotes at most a short piece of the input"
    if err.field in KNOWN_FIELDS or SEGMENT_FIELD.fullmatch(err.field):
        return
    assert err.message.startswith(("unknown field", "unknown parameter")), str(err)
    assert err.field in _keys(source, kind) | {"scenario", "query"}, str(err)


def _accept_or_name(source, kind, **kw):
    try:
        sc = api.parse_scenario(source, kind, **kw)
    except SpecError as e:
        _named(e, source, kind)
        return e
    _valid(sc)
    return sc


# --- dicts and JSON text --------------------------------------------------------------------
@_settings(400)
@given(scenario_dicts)
def test_scenario_dicts_are_accepted_or_named(data):
    try:
        sc = api.Scenario.from_dict(data)
    except SpecError as e:
        _named(e, data)
    else:
        _valid(sc)


@_settings(400)
@given(st.one_of(scenario_dicts, values, segments))
def test_parsed_values_kind_dict_are_accepted_or_named(data):
    _accept_or_name(data, "dict")


number_literals = st.one_of(
    st.integers(1, 6000).map(lambda n: "9" * n),  # thousands of digits
    st.integers(-(10**40), 10**40).map(str),
    st.floats().map(repr),
    st.sampled_from(
        [
            "NaN",
            "Infinity",
            "-Infinity",
            "1e999",
            "-1e999",
            "1e-999",
            "-0",
            "5.0",
            "5.5",
            "1E3",
            "0.1e1",
            "00",
            "1_0",
            "0x10",
            "true",
            "null",
            '"5"',
            '"1e3"',
            '" 5 "',
            '"٣"',
            "[]",
            "{}",
            "[5]",
            '["5", "6"]',
        ]
    ),
)
literal_json = st.builds(
    lambda key, num: f'{{"{key}": {num}}}', st.sampled_from(FIELDS), number_literals
)
deep_json = st.builds(
    lambda key, n, pair: f'{{"{key}": {pair[0] * n}{pair[1] * n}}}',
    st.sampled_from(["segments", "d", "batch_size"]),
    st.sampled_from([1, 2, 50, 1_000, 20_000, 100_000]),
    st.sampled_from([("[", "]"), ('{"a":', "}"), ("[[0,", "]]"), ("[", ""), ('{"a":[', "]}")]),
)
near_valid_json = st.builds(
    lambda sc, key, v: json.dumps({**sc.to_dict(), key: v}),
    valid_scenarios,
    st.sampled_from(FIELDS),
    st.one_of(values, segments),
)
json_text = st.one_of(
    st.text(max_size=200),
    st.binary(max_size=200),
    scenario_dicts.map(lambda d: json.dumps(d, default=str)),
    literal_json,
    deep_json,
    near_valid_json,
    valid_scenarios.map(lambda sc: sc.to_json()),
    st.lists(st.tuples(st.integers(-2, 60), st.integers(-2, 6000)), max_size=20).map(json.dumps),
    st.tuples(
        valid_scenarios.map(lambda sc: sc.to_json()), st.integers(0, 400), st.text(max_size=3)
    ).map(lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :]),
    st.tuples(
        valid_scenarios.map(lambda sc: sc.to_json()),
        st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "utf-32", "latin-1"]),
    ).map(lambda t: t[0].encode(t[1])),
)


@_settings(600)
@given(json_text)
def test_json_text_is_accepted_or_named(text):
    _accept_or_name(text, "json")


def test_from_json_is_the_entry_point_too():
    """``Scenario.from_json`` goes through parse_scenario: the same checks, the same limit."""
    assert api.Scenario.from_json("[[0, 5], [1, 6]]").segments == ((0, 5), (1, 6))
    for text in ["[" * 100_000, '{"seed": 1' + "0" * 5000 + "}", " " * (MAX + 1)]:
        try:
            api.Scenario.from_json(text)
        except SpecError as e:
            assert e.field == "file"
        else:
            raise AssertionError(text[:20])


# --- CSV segment tables ---------------------------------------------------------------------
cells = st.one_of(
    st.integers(-5, 60).map(str),
    st.integers(-5, 6000).map(str),
    st.integers(-(10**30), 10**30).map(str),
    st.integers(1, 5000).map(lambda n: "9" * n),
    st.floats().map(repr),
    st.sampled_from(ODD_NUMBERS + FORMULAS + PATHS),
    st.text(max_size=10),
)
headers = st.one_of(
    st.sampled_from(
        [
            ["state", "length"],
            ["length", "state"],
            ["State ", " LENGTH"],
            ["state", "length", ""],
            ["length"],
            ["state"],
            [],
            ["state", "state"],
            ["state", "length", "comment"],
            ["0", "100"],
            ["état", "length"],
            ["state", "length", "length"],
            ['"state"', "length"],
            ["=cmd|' /C calc'!A0", "length"],
            ["../../etc/passwd"],
        ]
    ),
    st.lists(st.text(max_size=8), max_size=3),
)
good_rows = st.lists(
    st.tuples(st.integers(0, LIMITS["n_states"] - 1), st.integers(1, 5000)).map(
        lambda t: [str(t[0]), str(t[1])]
    ),
    min_size=1,
    max_size=40,
)
near_rows = st.lists(
    st.tuples(st.integers(-2, 60), st.integers(-2, 6000)).map(lambda t: [str(t[0]), str(t[1])]),
    max_size=40,
)
bad_rows = st.lists(st.lists(cells, max_size=4), max_size=30)
GOOD_HEADERS = [
    ["state", "length"],
    ["length", "state"],
    ["State ", " LENGTH"],
    ["state", "length", ""],
]


@st.composite
def csv_tables(draw):
    """A valid table (in any accepted spelling), or one with one adversarial cell, or a
    broken one (header, rows, cells)."""
    mode = draw(st.sampled_from(["good", "good", "one bad cell", "broken"]))
    good = mode == "good"
    if mode != "broken":
        header, rows = draw(st.sampled_from(GOOD_HEADERS)), draw(good_rows)
        if header[0] == "length":
            rows = [r[::-1] for r in rows]
    else:
        header = draw(st.one_of(st.sampled_from(GOOD_HEADERS), headers))
        rows = draw(st.one_of(near_rows, bad_rows))
    if rows and not good:
        i = draw(st.integers(0, len(rows) - 1))
        rows[i] = list(rows[i]) or [""]
        rows[i][draw(st.integers(0, len(rows[i]) - 1))] = draw(cells)
    delimiter = draw(st.sampled_from([",", ";", "\t"] + ([] if good else ["|"])))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    table = [header] + rows
    if draw(st.booleans()):  # written as a spreadsheet would, quoting where needed
        buf = io.StringIO()
        writer = csv.writer(
            buf,
            delimiter=delimiter,
            lineterminator=newline,
            quoting=draw(st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL])),
        )
        writer.writerows(table)
        text = buf.getvalue()
    else:  # hand-made: cells may hold delimiters, quotes, line breaks
        text = newline.join(delimiter.join(r) for r in table)
    if draw(st.booleans()):
        text = (
            draw(st.sampled_from(["", newline, newline * 3, " " + newline]))
            + text
            + draw(st.sampled_from(["", newline, newline * 2 + delimiter * 2]))
        )
    encoding = draw(st.sampled_from(["str", "utf-8", "utf-8-sig", "utf-16", "latin-1"]))
    return text if encoding == "str" else text.encode(encoding, "replace")


@_settings(1000)
@given(
    st.one_of(
        csv_tables(), csv_tables(), csv_tables(), st.text(max_size=100), st.binary(max_size=100)
    )
)
def test_csv_tables_are_accepted_or_named(table):
    got = _accept_or_name(table, "csv")
    if isinstance(got, api.Scenario):
        assert got.preset == "custom"
        assert api.parse_scenario(got.to_csv(), "csv", defaults=got) == got
    elif SEGMENT_FIELD.fullmatch(got.field):  # a row's problem says where it is
        assert "line " in got.message, str(got)


def test_csv_cells_are_never_evaluated():
    """A formula or a path in a cell is text that is not an integer: rejected, and named."""
    for cell in FORMULAS + PATHS:
        for column in ("state", "length"):
            row = {"state": "0", "length": "10"} | {column: cell}
            buf = io.StringIO()
            csv.writer(buf).writerows([["state", "length"], [1, 5], [row["state"], row["length"]]])
            text = buf.getvalue()
            try:
                api.parse_scenario(text, "csv")
            except SpecError as e:
                assert e.field in ("segments[2].state", "segments[2].length", "file"), str(e)
            else:
                raise AssertionError(cell)


# --- link parameters (and the CLI's flags) ------------------------------------------------
query_values = st.one_of(
    st.text(max_size=30),
    st.integers(-(10**9), 10**9).map(str),
    st.integers(0, 2**64).map(str),
    st.integers(1, 5000).map(lambda n: "9" * n),
    st.floats().map(repr),
    st.sampled_from(ODD_NUMBERS + FORMULAS + PATHS + list(api.PRESETS) + ["custom"]),
    st.lists(st.tuples(st.integers(-2, 60), st.integers(-5, 6000)), max_size=8).map(
        lambda s: "_".join(f"{a}x{b}" for a, b in s)
    ),
    st.lists(st.integers(-2, 12_000).map(str), max_size=5).map(  # "10_20" or "10, 20"
        lambda b: (", " if len(b) % 2 else "_").join(b)
    ),
    st.integers(-5, 60),
    st.lists(st.integers(0, 30), max_size=3),
)
query_keys = st.one_of(
    st.sampled_from(QUERY_FIELDS + ("junk", "<script>", "__class__", "", "segments[1]", "n_seeds")),
    st.text(max_size=10),
)
queries = st.one_of(
    st.dictionaries(query_keys, query_values, max_size=7),
    valid_scenarios.map(lambda sc: sc.to_query()),
    st.tuples(valid_scenarios, st.sampled_from(QUERY_FIELDS), query_values).map(
        lambda t: t[0].to_query() | {t[1]: t[2]}
    ),
)


@_settings(1000)
@given(queries)
def test_query_mappings_are_accepted_or_named_strict_and_lenient(query):
    strict = _accept_or_name(query, "query")
    rejected = []
    lenient = api.parse_scenario(query, "query", rejected=rejected)
    _valid(lenient)  # a link always gives a scenario ...
    for r in rejected:  # ... and says what it left out
        assert isinstance(r, Rejected)
        _named(r.error, query, "query")
        assert r.param is None or r.param in query
    if isinstance(strict, api.Scenario):
        assert lenient == strict and rejected == []
    else:
        assert rejected


@_settings(300)
@given(valid_scenarios)
def test_valid_scenarios_round_trip_through_every_kind(sc):
    _valid(sc)  # JSON and link
    assert api.parse_scenario(sc.to_json(), "json") == sc
    assert api.parse_scenario(sc.to_json().encode(), "json") == sc
    assert api.parse_scenario(sc.to_dict(), "dict") == sc
    assert api.parse_scenario(sc.to_csv(), "csv", defaults=sc) == api.Scenario(
        **{**sc.to_dict(), "preset": "custom", "segments": sc.segments, "batch_size": sc.batch_size}
    )


# --- oversized input ------------------------------------------------------------------------
@_settings(30)
@given(
    kind=st.sampled_from(["json", "csv", "query"]),
    extra=st.integers(1, 3000),
    as_bytes=st.booleans(),
    filler=st.sampled_from([" ", "\n", "é", "\r\n"]),
)
def test_oversized_input_is_refused_before_it_is_read(kind, extra, as_bytes, filler):
    if kind == "query":
        query = {"preset": "custom", "segments": "0x1_" * ((MAX + extra) // 4 + 1)}
        try:
            api.parse_scenario(query, "query")
        except SpecError as e:
            assert e.field == "query" and "at most 1,000,000" in e.message
        else:
            raise AssertionError("accepted")
        rejected = []
        assert api.parse_scenario(query, "query", rejected=rejected) == api.Scenario()
        assert [r.error.field for r in rejected] == ["query"]
        return
    head = '{"d": 5}' if kind == "json" else "state,length\n0,5\n"
    n_bytes = len(head.encode()) + extra
    text = head + filler * ((MAX - len(head.encode()) + extra) // len(filler.encode()) + 1)
    source = text.encode() if as_bytes else text
    try:
        api.parse_scenario(source, kind)
    except SpecError as e:
        assert e.field == "file" and "at most 1,000,000 bytes" in e.message, str(e)
    else:
        raise AssertionError(f"{n_bytes} bytes accepted")


@pytest.mark.parametrize("kind", ["json", "csv"])
def test_just_under_the_size_limit_is_read(kind):
    """The other side of :func:`test_oversized_input_is_refused_before_it_is_read` (once per
    kind: this document depends on nothing the examples draw). Whitespace and blank lines
    are fine in both formats."""
    head = '{"d": 5}' if kind == "json" else "state,length\n0,5\n"
    fill = " " if kind == "json" else "\n"
    assert api.parse_scenario(head + fill * (MAX - len(head.encode())), kind).n_arms == 5


# --- the doors that lead to the entry point -------------------------------------------------
@_settings(300)
@given(
    st.lists(st.text(max_size=15), max_size=4),
    st.dictionaries(
        st.sampled_from(
            ["tau", "gamma", "n_max", "lam", "weighting", "share", "sigma2", "pruning"]
        ),
        scalars,
        max_size=4,
    ),
)
def test_policy_specs_are_accepted_or_named(names, shared):
    try:
        specs = api.policy_specs(names, **shared)
    except SpecError as e:
        assert e.field
    else:
        assert specs and all(s.name in api.policy_names() for s in specs)


FLAGS = [
    "--pattern",
    "--policies",
    "--seeds",
    "--seed",
    "--horizon",
    "--states",
    "--batch-size",
    "--d",
    "--arms",
    "--sigma2",
    "--tau",
    "--gamma",
    "--n-max",
    "--lam",
    "--weighting",
    "--share",
]


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    pairs=st.lists(
        st.tuples(
            st.sampled_from(FLAGS),
            st.one_of(
                st.text(max_size=8),
                st.integers(-5, 10**7).map(str),
                st.floats().map(str),
                st.sampled_from(PATHS + ["x.csv", "../../x.json"]),
            ),
        ),
        max_size=4,
    )
)
def test_cli_flags_exit_0_or_2_never_a_traceback(pairs, capsys):
    argv = [
        "run",
        "--json",
        "--horizon",
        "60",
        "--pattern",
        "regular",
        "--seeds",
        "1",
        "--policies",
        "lints",
    ]
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


@_settings(300)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "preset",
                "segments",
                "horizon",
                "n_states",
                "d",
                "n_arms",
                "sigma2",
                "batch_size",
                "seed",
                "junk",
                "<script>",
            ]
        ),
        st.one_of(
            st.text(max_size=30),
            st.integers(-(10**9), 10**9).map(str),
            st.lists(st.tuples(st.integers(-2, 15), st.integers(-5, 900)), max_size=6).map(
                lambda s: "_".join(f"{a}x{b}" for a, b in s)
            ),
        ),
        max_size=6,
    )
)
def test_url_query_strings_give_a_valid_scenario_and_messages(query):
    from allseason.ui import state

    scenario, errors = state.scenario_from_query(query)
    _valid(scenario)
    state.check_app_limits(scenario)
    assert all(isinstance(m, str) and m and len(m) < 700 for m in errors)
