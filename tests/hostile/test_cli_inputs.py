"""Hostile input on the command line: every one is ONE line on stderr and exit code 2,
never a traceback, and nothing is written outside the results folder; a name that comes
from a file's content is reduced to a safe folder inside it; FIFOs are refused as inputs
and outputs (a FIFO given to --trace used to hang forever); a non-finite result is an
error."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from allseason import files, limits
from allseason.cli import CliError, main
from allseason.cli.run import _check_finite


def _one_line_exit_2(argv, capsys) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["run", "--n-max", "1000000"], "allseason-sw.n_max"),  # asked for 7.28 TiB
        (["run", "--n-max", "30000"], "allseason-sw.n_max"),  # 1.1 GB on a 2,000-step race
        (["run", "--sigma2", "1e-320"], "sigma2"),  # ZeroDivisionError in the kernels
        (["run", "--sigma2", "5e-324"], "sigma2"),
        (["run", "--lam", "1e-320"], "lam"),
        (["run", "--tau", "10^12"], "--tau"),
        (["run", "--tau", "1000000000000"], "tau"),  # asked for 36 TiB
        (["run", "--share", "0"], "share"),
        (["run", "--gamma", "1.5"], "gamma"),
        (["run", "--seed", "-1"], "--seed"),
        (["replay", "--seed", "-1", "x.csv"], "--seed"),  # a traceback before
        (["replay", "--steps", "0", "x.csv"], "--steps"),
    ],
)
def test_out_of_range_numbers_are_refused_by_name(argv, needle, capsys):
    assert needle in _one_line_exit_2(argv, capsys)


def test_a_fifo_is_refused_as_trace_and_as_pattern(tmp_path, capsys):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    err = _one_line_exit_2(["run", "--horizon", "50", "--seeds", "1", "--trace", str(fifo)], capsys)
    assert "--trace" in err and "FIFO" in err
    jfifo = tmp_path / "pipe.json"
    os.mkfifo(jfifo)
    err = _one_line_exit_2(["run", "--pattern", str(jfifo)], capsys)
    assert "--pattern" in err and "FIFO" in err and "no such file" not in err


def test_a_device_and_a_folder_are_refused_as_outputs(tmp_path, capsys):
    assert "character device" in _one_line_exit_2(
        ["run", "--horizon", "50", "--trace", "/dev/null"], capsys
    )
    (tmp_path / "d.csv").mkdir()
    assert "a folder" in _one_line_exit_2(
        ["run", "--horizon", "50", "--trace", str(tmp_path / "d.csv")], capsys
    )


def _sweep(tmp_path, argv):
    env = {**os.environ, "ALLSEASON_RESULTS": str(tmp_path / "results" / "inner")}
    return subprocess.run(
        [sys.executable, "-m", "allseason", "sweep", *argv, "--quiet", "--processes", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


SWEEP = 'seeds = 1\n[scenario]\npreset = "paper-synthetic"\nhorizon = 40\n'
SWEEP += '[[policies]]\nname = "lints"\n'


@pytest.mark.parametrize("file_name, name_line", [("dots.toml", 'name = ".."\n'), ("...toml", "")])
def test_a_sweep_name_from_the_file_stays_inside_the_results_folder(
    tmp_path, file_name, name_line, monkeypatch, capsys
):
    """Where the sweep's files land (the claim is about paths, not the process: the sweep
    runs through ``main`` here, :func:`_sweep_here`; :func:`_sweep`'s real process is
    :func:`test_an_out_of_range_hyperparameter_in_a_sweep_names_it`'s)."""
    src = tmp_path / "src"
    src.mkdir()
    path = src / file_name
    path.write_text(name_line + SWEEP)
    code, err = _sweep_here(tmp_path, [str(path)], monkeypatch, capsys)
    assert code == 0, err
    inner = tmp_path / "results" / "inner"
    assert sorted(x.name for x in (tmp_path / "results").iterdir()) == ["inner"]
    assert (inner / "sweep" / "results.sqlite").is_file()
    assert (inner / "sweep" / "sweep.json").is_file()


def _sweep_here(tmp_path, argv, monkeypatch, capsys) -> tuple[int, str]:
    """:func:`_sweep` in this process: the same ``main`` that ``python -m allseason`` calls
    (exit code, stderr); an exception that escapes fails the test, as a traceback would. The
    process boundary is checked by the other sweep tests here, which start a real process."""
    monkeypatch.setenv("ALLSEASON_RESULTS", str(tmp_path / "results" / "inner"))
    try:
        code = main(["sweep", *argv, "--quiet", "--processes", "1"])
    except SystemExit as e:
        code = e.code
    return code, capsys.readouterr().err


def test_a_sweep_json_nested_400000_deep_and_a_fifo_are_one_line(tmp_path, monkeypatch, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 400_000 + "]" * 400_000)
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for path, needle in ((deep, "nested too deeply"), (fifo, "FIFO")):
        code, err = _sweep_here(tmp_path, [str(path)], monkeypatch, capsys)
        assert code == 2 and err.count("\n") == 1, err
        assert needle in err and "Traceback" not in err
    assert not (tmp_path / "results").exists()


def test_an_out_of_range_hyperparameter_in_a_sweep_names_it(tmp_path):
    path = tmp_path / "big.json"
    data = {"seeds": 1, "scenario": {"horizon": 40}}
    data["policies"] = [{"name": "allseason-sw", "grid": {"n_max": [5, 1_000_000]}}]
    path.write_text(json.dumps(data))
    p = _sweep(tmp_path, [str(path)])
    assert p.returncode == 2 and "n_max" in p.stderr and "Traceback" not in p.stderr


def test_a_non_finite_result_is_an_error_naming_it():
    good = {"mean_reward": 0.5, "std_reward": 0.1, "cum_regret": 3.0, "gap_closed": float("nan")}
    _check_finite({"lints": good})  # a share of the gap with no meaning is not an error
    with pytest.raises(CliError, match="lints: its cum_regret is nan"):
        _check_finite({"lints": {**good, "cum_regret": float("nan")}})


def test_safe_base_name_keeps_one_component():
    assert files.safe_base_name("..", "sweep") == "sweep"
    assert files.safe_base_name("../../x", "sweep") == "x"
    assert files.safe_base_name("a\\..\\b", "s") == "b"
    assert files.safe_base_name(".hidden", "s") == "hidden"
    assert files.safe_base_name("grid.v2", "s") == "grid.v2"


def test_every_declared_number_has_an_upper_bound():
    """n_max, tau, sigma2, lam and every other numeric hyperparameter: bounded above (and
    sigma2 and lam below, against underflow), within what limits.py states."""
    from allseason import api
    from allseason.policies.params import Interval

    for name in api.policy_names():
        for param, p in api.describe_policy(name).params.items():
            if not isinstance(p.constraint, Interval):
                continue
            assert p.constraint.high is not None, f"{name}.{param} has no upper bound"
            if param in ("tau", "max_idle"):
                assert p.constraint.high == limits.MAX_WINDOW
            if param == "n_max":
                assert p.constraint.high == limits.MAX_BANDITS
            if param in ("sigma2", "lam"):
                assert p.constraint.low >= 1e-6, f"{name}.{param}"
