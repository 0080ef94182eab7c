"""The command line: leaderboard, JSON, trace, and one clear line + exit 2 on bad input."""

import json
import subprocess
import sys

import pytest

from allseason.cli import main


def _run(*args):
    """``python -m allseason ARGS`` in a new process."""
    return subprocess.run(
        [sys.executable, "-m", "allseason", *args], capture_output=True, text=True
    )


def _main(capsys, *args) -> tuple[int, str, str]:
    """``main(ARGS)`` in this process, as ``python -m allseason ARGS`` calls it (its
    ``sys.exit(main())``: argparse's exits are SystemExit): (exit code, stdout, stderr). An
    exception that escapes fails the test, as a traceback would in the process. Each way
    the command line ends is also checked once in a real process
    (:func:`test_a_process_exits_2_with_one_line`, :func:`test_help_everywhere`)."""
    try:
        code = main(list(args))
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_run_json(capsys):
    assert (
        main(
            [
                "run",
                "--pattern",
                "regular",
                "--horizon",
                "600",
                "--seeds",
                "2",
                "--policies",
                "allseason-sw,lints,random",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"allseason-sw", "lints", "random"}
    for row in out.values():
        assert {"mean_reward", "std_reward", "cum_regret", "seconds"} <= set(row)
    assert out["lints"]["mean_reward"] > out["random"]["mean_reward"]


def test_run_leaderboard_and_trace(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    assert (
        main(
            [
                "run",
                "--horizon",
                "500",
                "--pattern",
                "extreme",
                "--seeds",
                "1",
                "--batch-size",
                "2,5",
                "--trace",
                str(trace),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "allseason-sw" in out and "mean reward" in out
    assert trace.read_text().splitlines()[0].startswith("policy,seed,step")


def test_custom_pattern_file(tmp_path, capsys):
    f = tmp_path / "p.json"
    f.write_text(json.dumps([[0, 100], [1, 50], [0, 100]]))
    assert main(["run", "--pattern", str(f), "--policies", "lints", "--seeds", "1", "--json"]) == 0
    assert "lints" in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["run", "--tau", "-3"], "tau"),
        (["run", "--pattern", "nope.json"], "no such file"),
        (["run", "--pattern", "winter"], "unknown pattern"),
        (["run", "--policies", "foo"], "unknown name"),
        (["run", "--seeds", "0"], "n_seeds"),
        (["run", "--seeds", "x"], "--seeds"),
        (["run", "--batch-size", "0"], "batch_size"),
        (["run", "--sigma2", "-1"], "sigma2"),
        (["run", "--weighting", "foo"], "weighting"),
        (
            [
                "run",
                "--trace",
                "/nonexistent/dir/t.csv",
                "--horizon",
                "100",
                "--pattern",
                "regular",
                "--policies",
                "random",
                "--seeds",
                "1",
            ],
            "--trace",
        ),
        (["bogus"], "invalid choice"),
    ],
)
def test_bad_input_one_line_exit_2(args, needle, capsys):
    code, _, err = _main(capsys, *args)
    assert code == 2, err
    assert needle in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


BAD_JSON = ["{", "[[0, 0]]", '{"segments": [[0, 10]], "d": "x"}', "42"]


def test_bad_json_file(tmp_path, capsys):
    for text in BAD_JSON:
        f = tmp_path / "bad.json"
        f.write_text(text)
        code, _, err = _main(capsys, "run", "--pattern", str(f))
        assert code == 2 and "Traceback" not in err, (text, err)
        assert len(err.strip().splitlines()) == 1, (text, err)


@pytest.mark.parametrize(
    "args, needle",
    [
        (["bogus"], "invalid choice"),  # argparse's refusal
        (["run", "--tau", "-3"], "tau"),  # a SpecError
        (["run", "--pattern", "BAD_JSON"], "error:"),  # a file that is not a pattern
    ],
)
def test_a_process_exits_2_with_one_line(args, needle, tmp_path):
    """Each kind of refusal once through ``python -m allseason`` in a new process: exit code
    2 and one line on stderr, no traceback (the other bad inputs go through the same
    ``main`` in this process, :func:`_main`)."""
    bad = tmp_path / "bad.json"
    bad.write_text(BAD_JSON[2])
    p = _run(*[str(bad) if a == "BAD_JSON" else a for a in args])
    assert p.returncode == 2, p.stderr
    assert needle in p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_help_everywhere(capsys):
    p = _run("--help")  # the process: python -m allseason --help
    assert p.returncode == 0 and "usage" in p.stdout
    for args in (["run", "--help"], ["patterns", "--help"]):
        code, out, _ = _main(capsys, *args)
        assert code == 0 and "usage" in out
    assert "paper-synthetic" in _main(capsys, "patterns")[1]


def test_kernel_load_reported_apart_and_json_stays_pure():
    """numba's one-time kernel load is paid before timing and reported on its own line; with
    --json the output is JSON and nothing else."""
    args = [
        "run",
        "--pattern",
        "regular",
        "--horizon",
        "300",
        "--seeds",
        "1",
        "--policies",
        "allseason-sw,lints",
    ]
    p = _run(*args)
    assert p.returncode == 0, p.stderr
    line = [x for x in p.stdout.splitlines() if x.startswith("compiled kernels loaded in")]
    assert len(line) == 1 and line[0].endswith("s (not counted above)"), p.stdout
    p = _run(*args, "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)  # the whole of stdout parses
    assert set(out) == {"allseason-sw", "lints"} and "compiled kernels" not in p.stdout
