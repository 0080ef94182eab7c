"""Reading a user's log as it comes (and hostile files): ties kept in
file order, ISO 8601 offsets and Unix times to UTC, pandas' index column, natural arm order
(a prefix changes nothing, bit for bit), the usual column names, text context, every problem
at once, and the hostile files, each one line and exit code 2 on the command line."""

from __future__ import annotations

import os
import re
import stat

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as hs

from allseason import api
from allseason.cli import main
from allseason.logs import obd, offline, reader

HEAD = "timestamp,arm,reward\n"


def _same_runs(a, b) -> bool:
    """Two evaluations' runs equal, bit for bit: arrays by their values, the rest by ==."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_runs(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same_runs(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    return a == b or (a != a and b != b)  # NaN equals NaN here


def parse(text: str | bytes, **kw) -> offline.Log:
    return offline.parse_log(text.encode() if isinstance(text, str) else text, **kw)


def error_of(text: str | bytes, **kw) -> str:
    with pytest.raises(api.SpecError) as e:
        parse(text, **kw)
    return e.value.message


def test_ties_keep_file_order_and_are_counted():
    log = parse(HEAD + "5,a,1\n3,b,0\n5,c,0\n5,a,1\n1,b,1\n")
    assert log.row.tolist() == [6, 3, 2, 4, 5]  # 1, 3, then the three 5s in file order
    assert log.ties == 2 and log.out_of_order == 4  # "3,b,0" stays second
    assert any("2 events share their time" in n for n in log.notes)
    assert any("not in time order" in n for n in log.notes)
    in_order = parse(HEAD + "1,a,1\n2,b,0\n2,a,0\n")
    assert in_order.out_of_order == 0 and in_order.ties == 1
    assert in_order.row.tolist() == [2, 3, 4]


def test_offsets_and_z_are_converted_to_utc():
    log = parse(
        HEAD + "2019-11-24 09:00:00+09:00,a,1\n2019-11-24T00:00:01Z,b,0\n"
        "2019-11-24 00:00:00.500000+00:00,a,0\n2019-11-23T23:59:59-00:30,b,1\n"
    )
    assert log.time_kind == "date"
    assert [str(t) for t in log.timestamp] == [
        "2019-11-24T00:00:00.000000",
        "2019-11-24T00:00:00.500000",
        "2019-11-24T00:00:01.000000",
        "2019-11-24T00:29:59.000000",
    ]
    assert log.row.tolist() == [2, 4, 3, 5] and log.ties == 0
    assert any("converted to UTC" in n for n in log.notes)
    # plain dates have no offset (2019-11-24 does not end in an offset "-24")
    plain = parse(HEAD + "2019-11-24,a,1\n2019-11-25 10:00,b,0\n")
    assert not any("UTC" in n for n in plain.notes) and plain.time_kind == "date"
    assert "is not a date" in error_of(HEAD + "2019-11-24,a,1\n2019-11-25-05,b,0\n")


@pytest.mark.parametrize("scale,word", [(1, "seconds"), (1000, "milliseconds")])
def test_unix_seconds_and_milliseconds(scale, word):
    t0 = 1_574_553_634  # 2019-11-24 00:00:34 UTC
    log = parse(HEAD + f"{(t0 + 2) * scale},a,1\n{t0 * scale},b,0\n{(t0 + 2) * scale},b,1\n")
    assert log.time_kind == "date"
    assert str(log.timestamp[0]) == "2019-11-24T00:00:34.000000"
    assert log.row.tolist() == [3, 2, 4] and log.ties == 1
    assert any(f"Unix {word}" in n for n in log.notes)
    # a float number of seconds keeps its fraction; a counter stays a number
    log = parse(HEAD + f"{t0}.25,a,1\n{t0}.5,b,0\n")
    assert str(log.timestamp[0]) == "2019-11-24T00:00:34.250000"
    assert parse(HEAD + "1,a,1\n2,b,0\n").time_kind == "number"


def test_the_unnamed_index_column_and_extra_columns_are_ignored():
    extra = ",".join(f"feature_{k}" for k in range(300))  # no refusal by column count
    cells = ",".join("0.5" for _ in range(300))
    text = f",timestamp,item_id,click,propensity_score,{extra}\n" + "".join(
        f"{i},{i},{i % 3},{i % 2},0.25,{cells}\n" for i in range(40)
    )
    log = parse(text)
    assert (log.n_events, log.n_arms, log.d) == (40, 3, 3)
    assert log.ignored[:2] == ("feature_0", "feature_1") and len(log.ignored) == 300
    assert any("column 1 has no name" in n for n in log.notes)


def test_a_header_wider_than_the_limit_is_refused_before_it_is_split():
    text = HEAD.strip() + "," * reader.MAX_COLUMNS + "\n1,a,0\n"
    msg = error_of(text)
    assert msg.startswith("row 1: the header has 100,003 columns; at most 100,000 are read")


@pytest.mark.parametrize(
    "header",
    [
        "timestamp,action,clicked,pscore",
        "timestamp,action_id,conversion,action_prob",
        "timestamp,item_id,label,propensity_score",
    ],
)
def test_the_usual_column_names(header):
    log = parse(header + "\n1,0,1,0.5\n2,1,0,0.5\n")
    assert log.n_arms == 2 and log.propensity is not None and log.reward.tolist() == [1, 0]


def test_the_plain_name_wins_and_two_other_names_are_a_problem():
    log = parse("timestamp,arm,reward,label,item_id\n1,a,1,shoe,3\n2,b,0,hat,4\n")
    assert log.arm_names == ("a", "b") and log.ignored == ("label", "item_id")
    msg = error_of("timestamp,item_id,action,click\n1,a,b,1\n2,b,a,0\n")
    assert msg == "the columns item_id and action both give the arm; keep one"


def test_natural_order_and_a_prefix_changes_nothing_bit_for_bit():
    rng = np.random.default_rng(4)
    arms, clicks = rng.integers(0, 12, 1500), (rng.random(1500) < 0.3).astype(int)
    plain = HEAD + "".join(f"{t},{a},{r}\n" for t, (a, r) in enumerate(zip(arms, clicks)))
    named = HEAD + "".join(f"{t},item_{a},{r}\n" for t, (a, r) in enumerate(zip(arms, clicks)))
    a, b = parse(plain), parse(named)
    assert a.arm_names[:4] == ("0", "1", "2", "3") and a.arm_names[-1] == "11"
    assert b.arm_names[:4] == ("item_0", "item_1", "item_2", "item_3")
    assert b.arm_names[10] == "item_10"
    assert np.array_equal(a.arm, b.arm)
    ra = api.evaluate(a, ["allseason-sw", "lints", "random"], n_seeds=2, workers=1)
    rb = api.evaluate(b, ["allseason-sw", "lints", "random"], n_seeds=2, workers=1)
    assert _same_runs(ra.runs, rb.runs)  # every estimate of every run, bit for bit
    assert ra.frame().equals(rb.frame())
    assert reader.natural_key("item_2") < reader.natural_key("item_10")
    assert sorted(["b10", "b9", "a", "-3", "2"], key=reader.natural_key) == [
        "-3",
        "2",
        "a",
        "b9",
        "b10",
    ]


def test_text_context_is_one_hot_on_its_most_frequent_values():
    rows = [
        f"{t},{t % 2},{t % 3 == 0:d},{'rare' if t % 7 == 0 else 'h' + str(t % 5)}"
        for t in range(70)
    ]
    log = parse(
        "timestamp,arm,reward,user_feature_0\n" + "\n".join(rows) + "\n", context="user_feature_0"
    )
    assert log.contexts.shape[1] == 6 + 1  # 6 distinct values (at most MAX_LEVELS) and 1
    assert log.context_names[-1] == "user_feature_0=rare"  # the least frequent comes last
    assert log.d == 2 * 7
    assert np.all(log.contexts[:, :-1].sum(axis=1) == 1)
    # with 80 arms, d <= 500 leaves 5 columns per arm: two text columns get 2 values each
    rows = [f"{t},{t % 80},0,h{t % 3},g{t % 4}" for t in range(400)]
    log = parse("timestamp,arm,reward,u0,u1\n" + "\n".join(rows) + "\n", context="u0,u1")
    assert log.d == 80 * 5 and len(log.context_names) == 4
    assert any("one-hot on its 2 most frequent values of 4" in n for n in log.notes)
    assert np.all(log.contexts[:, :2].sum(axis=1) <= 1)  # the third value: all 0


def test_every_problem_is_reported_at_once():
    lines = [f"{t},a,{'x' if t % 2 else 0}" for t in range(1, 60)]
    lines[3] = "4,,0"
    msg = error_of(HEAD + "\n".join(lines) + "\n5,b,1,9\n")
    out = msg.splitlines()
    assert len(out) == reader.MAX_PROBLEMS + 1
    assert out[0] == "row 2, column reward: 'x' is not a reward"
    assert "row 5, column arm: is empty; every row needs an arm" in out
    assert out[-1].startswith("... and ") and "in all" in out[-1]
    total = int(out[-1].split("(")[1].split()[0])
    assert total == 30 + 1 + 1  # 30 bad rewards, the empty arm, the row of 4 fields
    # each problem names its row and column; a row's field count names the row
    assert all(line.startswith("row ") for line in out[:-1])
    few = error_of(HEAD + "1,a,2\n2,b,x\n3,=cmd,1\n")
    assert few.splitlines() == [
        "row 2, column reward: 2 is outside [0, 1]; rescale the column, or choose a scaling "
        "(scale = max: divide by the largest value; minmax: (value - min) / (max - min))",
        "row 3, column reward: 'x' is not a reward",
        "row 4, column arm: '=cmd' is not an arm label (at most 40 letters, digits, spaces "
        "and - _ . : / ( ) + # & ')",
    ]


def test_a_long_cell_in_a_used_column_names_its_row_and_column():
    msg = error_of(HEAD + "1,a,0\n2," + "b" * 5000 + ",1\n")
    assert msg.startswith("row 3, column arm: a cell of 5,000 characters; at most 1,000")
    # in a column not read, a long cell costs nothing and is no problem
    log = parse("timestamp,arm,reward,notes\n1,a,0,x\n2,b,1," + "y" * 1_000_000 + "\n")
    assert log.n_events == 2 and log.ignored == ("notes",)


# --- hostile files: one line, exit code 2 on the command line ---------------------------------
HOSTILE = {
    "propensity 1e-300": (
        "timestamp,arm,reward,propensity\n1,a,1,0.5\n2,b,0,1e-300\n",
        [],
        "row 3, column propensity: 1e-300 is not a probability in [1e-09, 1]",
    ),
    "propensity 5e-324": (
        "timestamp,arm,reward,propensity\n1,a,1,0.5\n2,b,0,5e-324\n",
        [],
        "row 3, column propensity: 4.94066e-324 is not a probability",
    ),
    "reward 1e308 with minmax": (
        HEAD + "1,a,0\n2,b,1e308\n3,a,0.5\n",
        ["--scale", "minmax"],
        "row 3, column reward: 1e+308 is larger than 1e+15 in magnitude",
    ),
    "reward inf": (HEAD + "1,a,0\n2,b,inf\n", [], "row 3, column reward: 'inf' is not a reward"),
    "header only after blank lines": ("\n\n\n" + HEAD, [], "no rows under the header"),
    "CR-only line endings, a bad cell": (
        (HEAD + "1,a,0\n2,b,x\n").replace("\n", "\r"),
        [],
        "row 3, column reward: 'x' is not a reward",
    ),
    "leading blank lines, a bad cell": (
        "\n \n" + HEAD + "1,a,0\n2,b,2\n",
        [],
        "row 5, column reward: 2 is outside [0, 1]",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_file_is_one_line_and_exit_2(tmp_path, capsys, case):
    content, flags, expect = HOSTILE[case]
    path = tmp_path / "log.csv"
    path.write_bytes(content.encode())
    rc = main(["replay", str(path), "--seeds", "2", *flags])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert expect in lines[0], lines[0]


def test_cr_only_line_endings_and_leading_blank_lines_are_read():
    text = HEAD + "1,a,1\n2,b,0\n3,a,0\n"
    cr = text.replace("\n", "\r")
    for variant in (cr, "\r\r" + cr, "\n\n \r\n" + text, text.replace("\n", "\r\n")):
        log = parse(variant)
        assert log.n_events == 3 and log.arm_names == ("a", "b"), repr(variant[:12])
    msg = error_of("\n\n" + HEAD + "1,a,1\n\n2,b,x\n")
    assert msg == "row 6, column reward: 'x' is not a reward"  # rows as in the file
    msg = error_of(HEAD.replace("\n", "\r") + "1,a,1\r2,b,x\r")
    assert msg == "row 3, column reward: 'x' is not a reward"


def test_special_files_are_refused_unread(tmp_path, capsys):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    for path, word in ((fifo, "a FIFO"), ("/dev/zero", "a device"), (tmp_path, "a folder")):
        assert main(["replay", str(path)]) == 2  # returns at once: a FIFO is never waited on
        err = capsys.readouterr().err
        assert f"not a regular file ({word})" in err and len(err.strip().splitlines()) == 1


# --- the Open Bandit Dataset's sample logs --------------------------------------------------
needs_obd = pytest.mark.skipif(
    len(obd.available()) < 6,
    reason=f"the Open Bandit Dataset's sample logs are not in {obd.obd_dir()}: {obd.FETCH}",
)


@needs_obd
@pytest.mark.parametrize("policy", obd.POLICIES)
@pytest.mark.parametrize("campaign", obd.CAMPAIGNS)
def test_the_obd_logs_parse_as_shipped(policy, campaign):
    raw = obd.log_path(policy, campaign).read_bytes()
    log = offline.parse_log(raw)
    arms = {"all": 80, "men": 34, "women": 46}[campaign]
    assert (log.n_events, log.n_arms, log.d) == (10_000, arms, arms)
    assert log.time_kind == "date" and log.propensity is not None
    assert log.arm_names[:3] == ("0", "1", "2") and log.out_of_order == 0
    assert "position" in log.ignored and len(log.ignored) == 5 + arms
    if (policy, campaign) == ("random", "all"):
        assert log.ties == 9 and log.uniform
    if (policy, campaign) == ("bts", "all"):
        assert log.ties == 1 and not log.uniform
    assert 0.002 < log.reward.mean() < 0.01


def test_the_wheel_is_checked_before_anything_is_extracted(tmp_path):
    fake = tmp_path / obd.WHEEL
    fake.write_bytes(b"PK\x03\x04 not obp")
    with pytest.raises(ValueError, match="sha256"):
        obd.extract(fake, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert obd.main(["--extract", str(fake)]) == 2


def test_too_many_arms_and_one_arm_are_named():
    many = HEAD + "".join(f"{t},item_{t},0\n" for t in range(150))
    assert error_of(many) == "column arm: 150 distinct arms; at most 100"
    assert error_of(HEAD + "1,a,0\n2,a,1\n").startswith("column arm: only one arm ('a')")
    # declared arms: every label outside them is named with its row
    msg = error_of(HEAD + "1,0,0\n2,7,1\n3,1.5,0\n", arms=2)
    assert msg.splitlines() == [
        "row 3, column arm: unknown arm '7'; the arms are the integers 0 to 1",
        "row 4, column arm: unknown arm '1.5'; the arms are the integers 0 to 1",
    ]


@needs_obd
def test_an_obd_log_through_the_command_line_and_a_prefix_on_real_items(tmp_path, capsys):
    path = obd.log_path("bts", "men")
    rc = main(["replay", str(path), "--policies", "random,lints", "--seeds", "1"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "log: 10,000 events, 34 arms, d = 34" in out.out
    assert "2 events share their time with the one before: kept in file order" in out.out
    # the same log with every item renamed item_<id>: the same replay, bit for bit
    raw = path.read_bytes()
    renamed = re.sub(rb"(?m)^(\d+,[^,]+,)(\d+),", rb"\1item_\2,", raw)
    assert renamed.count(b",item_") == 10_000 + 1  # every row, and the header's item_id
    a, b = offline.parse_log(raw), offline.parse_log(renamed)
    assert b.arm_names[:3] == ("item_0", "item_1", "item_2") and b.arm_names[10] == "item_10"
    ra = api.evaluate(a, ["allseason-sw", "random"], n_seeds=1, workers=1)
    rb = api.evaluate(b, ["allseason-sw", "random"], n_seeds=1, workers=1)
    assert _same_runs(ra.runs, rb.runs)


CELLS = [
    *("0", "1", "0.5", "2", "-1", "nan", "inf", "1e308", "1e-300", "5e-324", "", " "),
    *("a", "b", "item_2", "item_10", "=cmd", '"q,uoted"', '"', "é", "x" * 1_200),
    *("2019-11-24", "2019-11-24 00:00:01+00:00", "2019-02-30", "1574553634", "1574553634000"),
]


# 300 examples under the "thorough" hypothesis profile, 75 under "quick" (tests/conftest.py)
@settings(max_examples=examples(300), deadline=None, database=None)  # writes nothing
@given(
    header=hs.lists(
        hs.sampled_from(["timestamp", "arm", "reward", "propensity", "x0", "", "click", "time"]),
        min_size=1,
        max_size=5,
    ),
    rows=hs.lists(hs.lists(hs.sampled_from(CELLS), max_size=6), max_size=6),
    eol=hs.sampled_from(["\n", "\r\n", "\r"]),
    lead=hs.integers(0, 2),
    scale=hs.sampled_from([None, "max", "minmax"]),
)
def test_any_file_is_read_or_refused_with_named_problems(header, rows, eol, lead, scale):
    text = "\n" * lead + eol.join([",".join(header)] + [",".join(r) for r in rows]) + eol
    try:
        data = api.read_user_file(text.encode(), scale=scale)
    except api.SpecError as e:
        lines = e.message.splitlines()
        assert lines and all(lines) and len(lines) <= reader.MAX_PROBLEMS + 1
        return
    if isinstance(data, offline.Log):  # nothing downstream can become NaN
        assert np.all((data.reward >= 0) & (data.reward <= 1))
        assert np.all(np.isfinite(data.contexts)) and data.n_arms >= 2
        assert data.propensity is None or np.all(data.propensity >= 1e-9)


def test_a_reward_table_names_rows_as_in_the_file_after_blank_lines():
    table = "time,arm,reward\n2024-01-01,a,0.9\n\n2024-01-01,b,0.1\n2024-01-08,a,0.2\n"
    with pytest.raises(api.SpecError) as e:
        api.read_user_file(("\n\n" + table + "2024-01-08,b,7\n").encode())
    assert e.value.message.startswith("row 8, column reward: 7 is outside [0, 1]")
    with pytest.raises(api.SpecError) as e:
        api.read_user_file(("\n" + table + "2024-02-30,b,0.5\n").encode())
    assert e.value.message.startswith("row 7, column time: '2024-02-30' is not a date")
    t = api.read_user_file(("\r\n" + table + "2024-01-08,b,0.7\n").replace("\n", "\r").encode())
    assert t.arm_names == ("a", "b") and t.n_periods == 2


def _read_or_problem(raw: bytes, rows: int):
    """What read_user_file gives with pandas reading ``rows`` rows a call: the data, or the
    problem's message."""
    kept = reader.READ_ROWS
    reader.READ_ROWS = rows
    try:
        return api.read_user_file(raw)
    except api.SpecError as e:
        return e.message
    finally:
        reader.READ_ROWS = kept


@settings(max_examples=examples(200), deadline=None, database=None)
@given(
    header=hs.lists(
        hs.sampled_from(["timestamp", "arm", "reward", "propensity", "x0", "time"]),
        min_size=1,
        max_size=5,
    ),
    rows=hs.lists(hs.lists(hs.sampled_from(CELLS), max_size=6), max_size=9),
    part=hs.integers(1, 4),
)
def test_a_file_read_in_parts_is_the_file_read_at_once(header, rows, part):
    """The parser reads READ_ROWS rows a call (the GIL is free between calls): the same
    log, table or problems as one call, whatever the part's size, even a bad cell's."""
    raw = ("\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n").encode()
    whole, parts = _read_or_problem(raw, 10**9), _read_or_problem(raw, part)
    if isinstance(whole, str) or isinstance(parts, str):
        assert whole == parts
        return
    assert type(whole) is type(parts)
    for field, value in vars(whole).items():
        other = vars(parts)[field]
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, other, equal_nan=value.dtype.kind == "f"), field
        else:
            assert value == other, field


def test_the_largest_upload_read_in_parts_is_read_at_once():
    from allseason.logs import examples as made

    raw = made.obd_log(n_rows=45_000)  # three parts of READ_ROWS rows
    whole, parts = _read_or_problem(raw, 10**9), _read_or_problem(raw, reader.READ_ROWS)
    for field in ("timestamp", "arm", "reward", "contexts", "propensity", "row"):
        assert np.array_equal(getattr(whole, field), getattr(parts, field)), field
