"""Sweeps: validation, one run alone == seed k of a race, process pool == Dask LocalCluster,
a real sweep process killed part-way then resumed, rerun does nothing, report and plot."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from allseason import api, sweeps
from allseason.cli.sweep import cli_report, cli_sweep
from allseason.specs import SpecError

ROOT = Path(__file__).resolve().parents[2]
METRIC_COLS = ("mean_reward", "mean_expected_reward", "cum_reward", "cum_regret", "n_steps")

# a small sweep: 1 scenario grid of 2 batch sizes x 5 settings x 2 seeds = 20 runs
SMALL = {
    "name": "t-small",
    "seeds": 2,
    "metric": "mean_reward",
    "scenarios": [
        {
            "preset": "paper-synthetic",
            "horizon": 300,
            "d": 3,
            "n_arms": 4,
            "grid": {"batch_size": [1, [2, 5]]},
        }
    ],
    "policies": [
        {"name": "sw-lints", "grid": {"tau": [10, 100]}},
        {"name": "allseason-sw", "params": {"n_max": 3}, "grid": {"tau": [10, 50]}},
        {"name": "d-lints", "label": "D-LinTS 0.9", "params": {"gamma": 0.9}},
    ],
}


def _metrics(folder) -> dict[str, tuple]:
    with sweeps.ResultStore(folder, create=False) as store:
        return {r["key"]: tuple(r[c] for c in METRIC_COLS) for r in store.rows()}


# -- validation --------------------------------------------------------------------------------


def _with(**changes):
    data = json.loads(json.dumps(SMALL))
    for path, value in changes.items():
        target, *keys = path.split("__")
        node = data
        for k in [target, *keys][:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last = [target, *keys][-1]
        if value is KeyError:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return data


@pytest.mark.parametrize(
    "changes, field",
    [
        (dict(seeds=KeyError), "seeds"),
        (dict(seeds=0), "seeds"),
        (dict(seeds=[0, 0]), "seeds"),
        (dict(seed=3), "seed"),
        (dict(metric="reward"), "metric"),
        (dict(name="a b"), "name"),
        (dict(policies=[]), "policies"),
        (dict(policies__0__name="sw-lint"), "policies[1].name"),
        (dict(policies__0__grid={"tau": 50}), "policies[1].grid.tau"),
        (dict(policies__0__grid={"tau": []}), "policies[1].grid.tau"),
        (dict(policies__0__grid={"tau": [10, 10]}), "policies[1].grid.tau"),
        (dict(policies__0__grid={"tau": [10, 0]}), "policies[1].grid.tau"),
        (dict(policies__0__grid={"gamma": [0.9]}), "policies[1].grid.gamma"),
        (dict(policies__1__params={"n_max": 3, "tau": 5}), "policies[2].grid.tau"),
        (dict(policies__1__params={"n_max": "x"}), "policies[2].params.n_max"),
        (dict(policies__2__label="sw-lints"), "policies[3].label"),
        (dict(policies__2__tau=5), "policies[3].tau"),
        (dict(scenarios=[]), "scenarios"),
        (dict(scenarios__0__horizon=0), "scenarios[1].horizon"),
        (dict(scenarios__0__K=5), "scenarios[1].K"),
        (dict(scenarios__0__preset="weekly"), "scenarios[1].preset"),
        (dict(scenarios__0__sigma2=-1), "scenarios[1].sigma2"),
        (dict(scenarios__0__grid={"batch_size": [0]}), "scenarios[1].batch_size"),
        (dict(scenarios__0__grid={"horizon": 10}), "scenarios[1].grid.horizon"),
        (dict(scenarios__0__segments=[[0, 10]]), "scenarios[1].horizon"),
    ],
)
def test_validation_errors_name_the_field(changes, field):
    with pytest.raises(SpecError) as err:
        sweeps.SweepSpec.from_dict(_with(**changes))
    assert err.value.field == field, str(err.value)
    assert str(err.value).startswith(field + ": ")


def test_toml_json_and_python_give_the_same_runs(tmp_path):
    toml = ROOT / "examples" / "sweep_small.toml"
    spec = sweeps.SweepSpec.from_file(toml)
    assert spec.n_runs == len(spec.units()) == 36
    (tmp_path / "s.json").write_text(spec.to_json())
    again = sweeps.SweepSpec.from_file(tmp_path / "s.json")
    python = sweeps.SweepSpec(
        scenarios=[
            api.Scenario.from_preset("paper-synthetic", horizon=300, batch_size=b) for b in (1, 10)
        ],
        policies=[
            sweeps.PolicyGrid("sw-lints", grid={"tau": [10, 50, 100]}),
            sweeps.PolicyGrid("allseason-sw", grid={"tau": [10, 50]}, params={"n_max": 5}),
            api.PolicySpec("lints"),
        ],
        seeds=3,
        name="small",
    )
    keys = [u.key for u in spec.units()]
    assert keys == [u.key for u in again.units()] == [u.key for u in python.units()]
    assert sweeps.SweepSpec.from_file(ROOT / "examples" / "sweep_paper_grid.toml").n_runs >= 48


def test_keys_cover_the_full_configuration():
    sc = api.Scenario.from_preset("paper-synthetic", horizon=300)
    base = sweeps.Unit(sc, api.PolicySpec("sw-lints", {"tau": 100}), 0)
    same = sweeps.Unit(sc, api.PolicySpec("sw-lints", {}), 0)  # 100 is the default
    assert base.key == same.key
    for other in (
        sweeps.Unit(sc, api.PolicySpec("sw-lints", {"tau": 50}), 0),
        sweeps.Unit(sc, api.PolicySpec("sw-lints", {"tau": 100}, "w"), 0),
        sweeps.Unit(sc, api.PolicySpec("sw-lints", {"tau": 100}), 1),
        sweeps.Unit(
            api.Scenario.from_preset("paper-synthetic", horizon=300, sigma2=0.2),
            api.PolicySpec("sw-lints", {"tau": 100}),
            0,
        ),
    ):
        assert other.key != base.key


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("seeds = [\n")
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('seeds = 2\n[[scenarios]]\nhorizon = 300\n[[policies]]\nname = "nope"\n')
    cases = [
        [str(tmp_path / "missing.toml")],
        [str(bad)],
        [str(wrong)],
        [str(tmp_path / "x.yaml")],
        [str(wrong), "--workers", "0"],
        [str(wrong), "--processes", "2", "--workers", "2"],
        [str(wrong), "--scheduler", "localhost"],
        [],
    ]
    for argv in cases:
        assert cli_sweep(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    assert "policies[1].name" in _last_error(cli_sweep, [str(wrong)], capsys)
    assert cli_report([str(tmp_path / "nowhere")]) == 2
    assert cli_report([str(tmp_path)]) == 2  # a folder without results
    assert "Traceback" not in capsys.readouterr().err


def _last_error(fn, argv, capsys):
    fn(argv)
    return capsys.readouterr().err


# -- one run alone == seed k of a race ---------------------------------------------------------


@pytest.mark.parametrize(
    "scenario, spec",
    [
        (
            api.Scenario.from_preset("paper-synthetic", horizon=300, batch_size=(2, 5), seed=7),
            api.PolicySpec("allseason-sw", {"tau": 20, "n_max": 3}, "as"),
        ),
        (
            api.Scenario.from_preset("extreme", horizon=300, d=3, batch_size=10),
            api.PolicySpec("d-lints", {"gamma": 0.95}),
        ),
        (
            api.Scenario.from_preset("regular", horizon=5200, d=2, n_arms=3),  # > one 2500 chunk
            api.PolicySpec("sw-lints", {"tau": 50}),
        ),
        (api.Scenario.from_preset("realistic", horizon=300), api.PolicySpec("random")),
    ],
)
def test_a_run_alone_equals_its_seed_in_a_race(scenario, spec):
    race = api.run_race(api.Race(scenario, (spec,), n_seeds=3))
    for k in range(3):
        row = sweeps.run_unit(sweeps.Unit(scenario, spec, k))
        t = race.traces[spec.label, k]
        assert row["mean_reward"] == t.reward[: t.n_done].mean()  # bit for bit
        assert row["cum_regret"] == t.regret.sum()
        assert row["mean_expected_reward"] == t.expected[: t.n_done].mean()
        assert row["n_steps"] == scenario.horizon


def test_store_keeps_the_first_row_and_counts_repeats(tmp_path):
    unit = sweeps.Unit(api.Scenario.from_preset("regular", horizon=100), api.PolicySpec("lints"), 0)
    row = sweeps.run_unit(unit)
    with sweeps.ResultStore(tmp_path) as store:
        assert store.add(row) is True
        assert store.add({**row, "mean_reward": -1.0}) is False
        (kept,) = store.rows()
    assert kept["mean_reward"] == row["mean_reward"] and kept["n_results"] == 2


# -- executors ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pool_sweep(tmp_path_factory):
    """SMALL run on the local process pool (2 processes)."""
    folder = tmp_path_factory.mktemp("pool")
    spec = sweeps.SweepSpec.from_dict(SMALL)
    outcome = sweeps.run_sweep(spec, folder, processes=2, progress=False)
    assert outcome.n_ran == spec.n_runs == 20 and outcome.n_failed == 0
    return spec, folder


def test_pool_results_equal_each_configuration_run_alone(pool_sweep):
    spec, folder = pool_sweep
    stored = _metrics(folder)
    assert set(stored) == {u.key for u in spec.units()}
    settings = sweeps.settings_table(sweeps.load_runs(folder))
    assert len(settings) == 10 and (settings["n_seeds"] == 2).all()
    for sc in spec.scenarios:
        for grid in spec.policies:
            for pspec in grid.specs():
                summary = api.run_race(api.Race(sc, (pspec,), n_seeds=2)).summary()[pspec.label]
                row = settings[
                    (settings["scenario_key"] == sweeps.Unit(sc, pspec, 0).scenario_key)
                    & (settings["label"] == pspec.label)
                    & (settings["setting"] == sweeps.describe_params(dict(pspec.params)))
                ]
                assert len(row) == 1
                assert row["mean_reward"].item() == summary["mean_reward"]  # bit for bit
                assert row["mean_reward_std"].item() == summary["std_reward"]
                assert row["cum_regret"].item() == summary["cum_regret"]


def test_dask_local_cluster_equals_the_process_pool(pool_sweep, tmp_path):
    pytest.importorskip("distributed")
    spec, pool_folder = pool_sweep
    outcome = sweeps.run_sweep(spec, tmp_path, workers=2, progress=False)
    assert outcome.n_ran == 20 and outcome.n_failed == 0
    dask_rows = _metrics(tmp_path)
    assert dask_rows == _metrics(pool_folder)  # every metric of every run, bit for bit
    with sweeps.ResultStore(tmp_path, create=False) as store:
        workers = {r["worker"] for r in store.rows()}
    assert len(workers) == 2  # both Dask workers ran some
    # and resuming the pool's finished folder on Dask does nothing
    assert sweeps.run_sweep(spec, pool_folder, workers=1, progress=False).n_ran == 0


# -- a real sweep process killed part-way, then resumed ----------------------------------------

KILL = {
    "name": "t-kill",
    "seeds": 4,
    "scenarios": [
        {"preset": "paper-synthetic", "horizon": 10000, "d": 10, "n_arms": 10, "batch_size": 5}
    ],
    "policies": [
        {"name": "allseason-sw", "grid": {"tau": [20, 50]}, "params": {"n_max": 3}},
        {"name": "allseason-disc", "grid": {"gamma": [0.9, 0.95]}},
    ],
}
CLI = "import sys; from allseason.cli.sweep import cli_sweep; sys.exit(cli_sweep(sys.argv[1:]))"


def _stored_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:  # the table is not created yet
        return 0


def _audit(path: Path) -> Counter:
    lines = path.read_text().split("\n") if path.exists() else []
    return Counter(tuple(line.split()[:2]) for line in lines if line)


def test_killed_sweep_resumes_without_losing_or_repeating_runs(tmp_path):
    sweep_file = tmp_path / "kill.json"
    sweep_file.write_text(json.dumps(KILL))
    out, log = tmp_path / "out", tmp_path / "audit.log"
    env = {**os.environ, sweeps.AUDIT_ENV: str(log)}
    cmd = [sys.executable, "-c", CLI, str(sweep_file), "--out", str(out), "--processes", "1"]
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    db = out / sweeps.STORE_FILE
    deadline = time.monotonic() + 60
    while _stored_count(db) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):  # (if it ended, the assert below says so)
        os.killpg(proc.pid, signal.SIGKILL)  # the driver (--processes 1: it runs the runs)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
    proc.stderr.close()

    total = sweeps.SweepSpec.from_dict(KILL).n_runs
    with sweeps.ResultStore(out, create=False) as store:
        before = {r["key"]: r for r in store.rows()}
    assert 3 <= len(before) < total

    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{len(before)} already stored" in done.stderr
    with sweeps.ResultStore(out, create=False) as store:
        after = {r["key"]: r for r in store.rows()}
    assert len(after) == total
    for key, row in before.items():
        assert after[key] == row  # kept as it was: same worker, same time, same numbers
    assert all(r["n_results"] == 1 for r in after.values())  # no result arrived twice
    audit = _audit(log)
    for key in before:  # finished before the kill: started once, run once, never again
        assert audit["start", key] == 1 and audit["done", key] == 1
    assert all(audit["done", key] >= 1 for key in after)
    repeated = [key for key in after if audit["start", key] > 1]
    assert len(repeated) <= 1 and not set(repeated) & set(before)  # only the one in flight

    reference = tmp_path / "reference"  # an uninterrupted sweep
    spec = sweeps.SweepSpec.from_dict(KILL)
    sweeps.run_sweep(spec, reference, processes=2, progress=False)
    assert _metrics(reference) == _metrics(out)

    lines = log.read_text()
    again = sweeps.run_sweep(spec, out, processes=2, progress=False)  # rerun: no work
    assert again.n_ran == 0 and again.n_stored_before == total
    assert log.read_text() == lines


# -- report and plot ---------------------------------------------------------------------------


def test_report_prints_best_settings_and_writes_html(pool_sweep, tmp_path, capsys):
    spec, folder = pool_sweep
    html = tmp_path / "r.html"
    assert cli_report([str(folder), "--html", str(html), "--csv", str(tmp_path / "s.csv")]) == 0
    out = capsys.readouterr().out
    assert "20 of 20 runs stored (complete)" in out
    for label in ("sw-lints", "allseason-sw", "D-LinTS 0.9"):
        assert out.count(f"  {label} ") == 2  # one best setting per scenario
    assert " ± " in out
    text = html.read_text()
    assert html.stat().st_size > 1_000_000 and "plotly" in text  # plotly.js inlined
    settings = sweeps.settings_table(sweeps.load_runs(folder))
    best = sweeps.best_settings(settings, "cum_regret")
    assert len(best) == 6
    for _, g in settings.groupby(["scenario_key", "label"]):
        chosen = best[
            (best["scenario_key"] == g["scenario_key"].iloc[0])
            & (best["label"] == g["label"].iloc[0])
        ]
        assert chosen["cum_regret"].item() == g["cum_regret"].min()


def test_sweep_figure_small_multiples(pool_sweep):
    from allseason.viz.sweep import sweep_figure, varying_hyperparameters

    _, folder = pool_sweep
    settings = sweeps.settings_table(sweeps.load_runs(folder))
    assert varying_hyperparameters(settings) == ["tau"]
    fig = sweep_figure(settings, "mean_reward", title="t")
    # 2 scenario rows x 1 column (tau); per panel: 2 lines + 1 dashed reference (D-LinTS)
    assert len(fig.data) == 6
    assert sorted(t.name for t in fig.data if t.showlegend) == sorted(
        ["SW-LinTS", "All-Season (SW)", "D-LinTS 0.9"]
    )
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert all(list(t.x) == [10.0, 100.0] or list(t.x) == [10.0, 50.0] for t in lines)
    dashed = [t for t in fig.data if t.mode == "lines"]
    assert all(t.line.dash == "dash" and t.y[0] == t.y[1] for t in dashed)
    empty = sweep_figure(settings.iloc[0:0], "mean_reward")
    assert len(empty.data) == 0 and empty.layout.annotations
    single = sweep_figure(settings[settings["label"] == "D-LinTS 0.9"], "cum_regret")
    assert len(single.data) == 2  # nothing varies: one marker per scenario panel


def test_importing_sweeps_loads_neither_dask_nor_plotly():
    code = (
        "import sys, allseason.sweeps; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'dask', 'distributed', 'plotly', 'streamlit'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_numpy_scalars_are_plain_values():
    grid = sweeps.PolicyGrid("sw-lints", grid={"tau": list(np.array([5, 50]))})
    assert grid.grid == (("tau", (5, 50)),) and type(grid.grid[0][1][0]) is int
    sc = api.Scenario.from_preset("regular", horizon=100)
    assert (
        sweeps.Unit(sc, grid.specs()[0], 0).key
        == sweeps.Unit(sc, api.PolicySpec("sw-lints", {"tau": 5}), 0).key
    )


def test_report_keeps_to_the_last_sweep_unless_all(pool_sweep, tmp_path, capsys):
    import shutil

    _, folder = pool_sweep
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    subset = sweeps.SweepSpec.from_dict({**SMALL, "seeds": 1, "policies": SMALL["policies"][:1]})
    outcome = sweeps.run_sweep(subset, copy, progress=False)  # all stored: no work
    assert outcome.n_ran == 0 and outcome.n_stored_before == 4
    assert cli_report([str(copy), "--no-html"]) == 0
    out = capsys.readouterr().out
    assert "4 of 4 runs stored (complete)" in out and "16 runs of other sweeps" in out
    assert "allseason-sw" not in out
    assert cli_report([str(copy), "--no-html", "--all"]) == 0
    assert "allseason-sw" in capsys.readouterr().out


def test_progress_bar_on_a_terminal():
    class Tty(list):
        def isatty(self):
            return True

        def write(self, text):
            self.append(text)

        def flush(self):
            pass

    stream = Tty()
    bar = sweeps.ProgressBar(48, 12, stream)
    bar.update(1, force=True)
    assert stream[-1].startswith("\r[") and "13/48 runs" in stream[-1] and "ETA" in stream[-1]
    assert "runs/s" in stream[-1]
    bar.close()
    assert stream[-1] == "\n"


def test_the_docstring_example_file_and_python_call_agree():
    import re
    import textwrap
    import tomllib

    doc = sweeps.__doc__
    toml = textwrap.dedent(re.search(r"Example::\n\n(.*?)\n\nThe same", doc, re.S).group(1))
    code = textwrap.dedent(re.search(r"Python::\n\n(.*?)\n\nRun it", doc, re.S).group(1))
    scope = {}
    exec(code, scope)
    from_file = sweeps.SweepSpec.from_dict(tomllib.loads(toml))
    assert [u.key for u in from_file.units()] == [u.key for u in scope["spec"].units()]
    assert from_file.n_runs == 3 * 6 * 3
