"""``python -m allseason replay FILE``: good files give a table; every bad file gives ONE line
on stderr naming the row or the column, and exit code 2 (never a traceback). Nothing is
written outside the results folder."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from allseason.cli import main
from allseason.logs import examples, offline
from allseason.logs import table as table_mod

LOG = "timestamp,arm,reward\n1,0,1\n2,1,0\n3,1,1\n4,0,0\n"
TABLE = "time,arm,reward\n2024-01-01,a,0.9\n2024-01-01,b,0.1\n2024-01-08,a,0.2\n2024-01-08,b,0.7\n"


def run(tmp_path, capsys, content, *flags, name="data.csv"):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    rc = main(["replay", str(path), "--seeds", "2", *flags])
    out = capsys.readouterr()
    return rc, out.out, out.err


BAD = {  # name: (file content, flags, what the one line must contain)
    "log: a date that does not exist": (
        "timestamp,arm,reward\n2021-02-27,0,1\n2021-02-30,1,0\n",
        [],
        "row 3, column timestamp",
    ),
    "log: a number among dates": (
        "timestamp,arm,reward\n2021-02-27,0,1\n17,1,0\n",
        [],
        "row 3, column timestamp",
    ),
    "table: a bad date": (TABLE.replace("2024-01-08,a", "yesterday,a"), [], "row 4, column time"),
    "table: a time of day": (
        TABLE.replace("2024-01-08,a", "2024-01-08 10:00,a"),
        [],
        "row 4, column time",
    ),
    "table: an unknown arm": (
        TABLE + "2024-01-08,c,0.5\n",
        [],
        "row 6, column arm: unknown arm 'c'",
    ),
    "log: an arm outside --arms 2": (
        LOG + "5,7,1\n",
        ["--arms", "2"],
        "row 6, column arm: unknown arm '7'",
    ),
    "log: a non-integer arm id with --arms 2": (
        LOG + "5,1.5,1\n",
        ["--arms", "2"],
        "row 6, column arm: unknown arm '1.5'",
    ),
    "log: an arm label with odd characters": (LOG + "5,=cmd|x,1\n", [], "row 6, column arm"),
    "log: a NaN reward": (LOG.replace("2,1,0", "2,1,nan"), [], "row 3, column reward: is NaN"),
    "log: an empty reward": (LOG.replace("2,1,0", "2,1,"), [], "row 3, column reward: is empty"),
    "log: a NaN context": (
        "timestamp,arm,reward,x0\n1,0,1,0.5\n2,1,0,NaN\n",
        [],
        "row 3, column x0",
    ),
    "log: a reward outside [0, 1]": (
        LOG.replace("3,1,1", "3,1,3.5"),
        [],
        "row 4, column reward: 3.5 is outside [0, 1]",
    ),
    "log: a negative reward with --scale max": (
        LOG.replace("3,1,1", "3,1,-2"),
        ["--scale", "max"],
        "row 4, column reward",
    ),
    "table: a rate outside [0, 1]": (
        TABLE.replace("0.7", "7"),
        [],
        "row 5, column reward: 7 is outside [0, 1]",
    ),
    "table: a repeated (time, arm)": (
        TABLE + "2024-01-01,b,0.3\n",
        [],
        "row 6: time '2024-01-01' and arm 'b' are given twice",
    ),
    "table: a period without an arm": (
        TABLE.replace("2024-01-08,b,0.7\n", ""),
        [],
        "time 2024-01-08 has no row for arm 'b'",
    ),
    "log: a propensity of 0": (
        "timestamp,arm,reward,propensity\n1,0,1,0.5\n2,1,0,0\n",
        [],
        "row 3, column propensity",
    ),
    "empty file": ("", [], "the file is empty"),
    "header only": ("timestamp,arm,reward\n", [], "no rows under the header"),
    "missing reward column": ("timestamp,arm\n1,0\n2,1\n", [], "missing column 'reward'"),
    "neither timestamp nor time": (
        "when,arm,reward\n1,0,1\n2,1,0\n",
        [],
        "missing column 'timestamp'",
    ),
    "a row with too many fields": (LOG + "5,1,1,9\n", [], "row 6: 4 fields"),
    "semicolons": ("timestamp;arm;reward\n1;0;1\n", [], "comma-separated"),
    "Latin-1 text": (
        "timestamp,arm,reward\n1,caf\xe9,1\n2,b,0\n".encode("latin-1"),
        [],
        "row 2: byte 0xe9 is not UTF-8",
    ),
    "UTF-16 text": (LOG.encode("utf-16"), [], "not a UTF-8 CSV"),
    "an Excel workbook": (b"PK\x03\x04" + b"\x00" * 50, [], "Excel workbook"),
    "a duplicated column": ("timestamp,arm,reward,arm\n1,0,1,0\n2,1,0,1\n", [], "appears twice"),
    "one arm only": ("timestamp,arm,reward\n1,0,1\n2,0,0\n", [], "only one arm"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, case):
    content, flags, expect = BAD[case]
    rc, out, err = run(tmp_path, capsys, content, *flags)
    assert rc == 2, (case, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ") and "Traceback" not in err
    assert expect in lines[0], lines[0]


def test_huge_files_and_too_many_rows_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(offline.LOG_LIMITS, "bytes", 1000)
    rc, _, err = run(tmp_path, capsys, LOG + "".join(f"{t},1,0\n" for t in range(5, 500)))
    assert rc == 2 and "at most 1,000 bytes" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setitem(offline.LOG_LIMITS, "bytes", 10**6)
    monkeypatch.setitem(offline.LOG_LIMITS, "rows", 10)
    rc, _, err = run(tmp_path, capsys, LOG + "".join(f"{t},1,0\n" for t in range(5, 50)))
    assert rc == 2 and "more than 10 rows" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setitem(table_mod.TABLE_LIMITS, "rows", 3)
    rc, _, err = run(tmp_path, capsys, TABLE)
    assert rc == 2 and "more than 3 rows" in err


def test_missing_file_folder_and_out_outside_the_results_folder(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["replay", str(tmp_path)]) == 2
    assert "not a regular file" in capsys.readouterr().err
    path = tmp_path / "log.csv"
    path.write_text(LOG)
    for out in ("../x.csv", "/tmp/x.csv", "sub/x.csv", "x.txt"):
        assert main(["replay", str(path), "--out", out]) == 2
        err = capsys.readouterr().err
        assert "--out" in err and len(err.strip().splitlines()) == 1


def test_out_writes_inside_the_results_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ALLSEASON_RESULTS", str(tmp_path / "results"))
    path = tmp_path / "log.csv"
    path.write_bytes(examples.obd_log(n_rows=600))
    assert (
        main(
            ["replay", str(path), "--seeds", "2", "--policies", "lints,random", "--out", "mine.csv"]
        )
        == 0
    )
    written = tmp_path / "results" / "replay" / "mine.csv"
    assert written.read_text().startswith("policy,method,events,ess_draw,estimate")
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["log.csv", "mine.csv"]


def test_good_log_and_table(tmp_path, capsys):
    rc, out, err = run(
        tmp_path, capsys, examples.obd_log(n_rows=3000), "--policies", "allseason-sw,lints,random"
    )
    assert rc == 0, err
    assert "kept" in out and "TOO SPARSE" in out and "ignored columns: position" in out
    rc, out, err = run(tmp_path, capsys, examples.seasonal_table(weeks=110), "--steps", "5")
    assert rc == 0, err
    assert "oracle-state" in out and "which bandit allseason-sw" in out and "coat best" in out
    # a reward outside [0, 1] is fine once a scaling is chosen
    rc, out, err = run(
        tmp_path,
        capsys,
        TABLE.replace("0.7", "7").replace("0.9", "9").replace("0.1", "1").replace("0.2", "2"),
        "--scale",
        "max",
    )
    assert rc == 0, err


def test_the_real_command_line():
    """Through a real process: one line on stderr, exit code 2."""
    out = subprocess.run(
        [sys.executable, "-m", "allseason", "replay", "/nonexistent.csv"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1


def test_json_is_one_document_on_stdout_and_everything_else_on_stderr(tmp_path, capsys):
    rc, out, err = run(
        tmp_path, capsys, examples.obd_log(n_rows=1500), "--policies", "lints,random", "--json"
    )
    assert rc == 0, err
    doc = json.loads(out)  # nothing but the JSON on stdout
    assert err.startswith("log: 1,500 events")
    assert doc["rows"][0]["policy"] == "logger" and doc["logger"]["method"] == "logged"
    assert doc["methods"][0] == "replay"  # uniform logging: replay first
    assert set(doc["intervals"]) >= {"logged", "replay", "ips", "snips", "dr", "dm"}
    assert doc["too_sparse"] and doc["decide"]["ips"]["needed"] > 1500
    for r in doc["rows"]:
        assert 0 <= r["low"] < r["high"] <= 1


def test_non_uniform_log_puts_ips_first_and_labels_replay_biased(tmp_path, capsys):
    rng = np.random.default_rng(0)
    q = np.array([0.6, 0.3, 0.1])
    arms = rng.choice(3, size=900, p=q)
    lines = ["timestamp,arm,reward,propensity"] + [
        f"{t},{a},{int(rng.random() < 0.3)},{q[a]}" for t, a in enumerate(arms)
    ]
    rc, out, err = run(tmp_path, capsys, "\n".join(lines), "--policies", "lints,random")
    assert rc == 0, err
    assert out.index("\nIPS;") < out.index("\nreplay (BIASED here")
    rc, out, err = run(tmp_path, capsys, "\n".join(lines), "--policies", "random", "--json")
    doc = json.loads(out)
    assert doc["methods"][0] == "ips" and doc["methods"][-1] == "replay"
    assert all(r["biased"] == (r["method"] == "replay") for r in doc["rows"])


@pytest.mark.parametrize(
    "content, flags, words",
    [
        (
            LOG.replace("timestamp,arm,reward", "timestamp,arm,reward,propensity")
            .replace("\n1,0,1", "\n1,0,1,5e-324")
            .replace("\n2,1,0", "\n2,1,0,0.5")
            .replace("\n3,1,1", "\n3,1,1,0.5")
            .replace("\n4,0,0", "\n4,0,0,0.5"),
            [],
            "column propensity: 4.94066e-324",
        ),
        (LOG, ["--seed", "-1"], "seed"),
        (LOG, ["--workers", "0"], "workers"),
    ],
)
def test_non_finite_weights_and_bad_executor_flags_are_one_line(
    tmp_path, capsys, content, flags, words
):
    rc, out, err = run(tmp_path, capsys, content, *flags)
    assert rc == 2 and words in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1
