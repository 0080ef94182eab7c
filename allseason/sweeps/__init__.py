"""Sweeps: scenarios x hyperparameter grids x seeds, resumable, on local cores or on Dask.

A sweep is a declarative file (TOML or JSON) or the equivalent Python objects. Example::

    name = "small"
    seeds = 3                       # seed indices 0, 1, 2 (or a list: seeds = [0, 4, 7])
    metric = "mean_reward"          # or "mean_expected_reward", "cum_regret"

    [[scenarios]]                   # a preset scaled to a horizon ...
    preset = "paper-synthetic"
    horizon = 300
    grid = { batch_size = [1, 10] } # ... (any scenario field may be swept)

    [[scenarios]]                   # ... or explicit segments [state, length]
    segments = [[0, 100], [1, 100], [0, 100]]
    d = 5                           # also: n_arms, sigma2, batch_size, seed

    [[policies]]
    name = "sw-lints"
    grid = { tau = [10, 50, 100] }

    [[policies]]
    name = "allseason-sw"
    params = { n_max = 5 }          # fixed hyperparameters
    grid = { tau = [10, 50] }

    [[policies]]
    name = "lints"                  # no grid: its defaults (label: its name)

The same sweep in Python::

    from allseason import api, sweeps
    spec = sweeps.SweepSpec(
        scenarios=[*(api.Scenario.from_preset("paper-synthetic", horizon=300, batch_size=b)
                     for b in (1, 10)),
                   api.Scenario(segments=((0, 100), (1, 100), (0, 100)), d=5,
                                preset="custom")],
        policies=[sweeps.PolicyGrid("sw-lints", grid={"tau": [10, 50, 100]}),
                  sweeps.PolicyGrid("allseason-sw", params={"n_max": 5},
                                    grid={"tau": [10, 50]}),
                  sweeps.PolicyGrid("lints")],
        seeds=3, name="small")

Run it (resumable), then read the results::

    sweeps.run_sweep(spec, "results/small")   # processes=N, or Dask: workers=N / scheduler=
    settings = sweeps.settings_table(sweeps.load_runs("results/small"))
    sweeps.best_settings(settings, "mean_reward")

One *run* is (scenario, policy setting, seed index). It is exactly seed ``k`` of
``api.run_race(api.Race(scenario, (spec,), n_seeds))`` (same random streams: they depend only
on the scenario's seed, k and the policy's label), computed alone by :func:`run_unit`. Every
setting of one ``[[policies]]`` entry shares the entry's label, hence its random stream
(common random numbers): settings differ by their hyperparameters, not by their luck.

Results store (``OUT/results.sqlite``): one row per finished run, primary key the sha256 of
the run's canonical JSON configuration (engine version, scenario, policy name, label and
hyperparameters with the defaults filled in, seed index). Only the driver writes, one
committed transaction per run as soon as it arrives, so a killed sweep loses only the runs
in flight; rerunning skips every stored key. ``OUT/sweep.json`` is the last sweep run into
the folder (its metric and expected runs, for ``report``).

Execution: a local process pool (``concurrent.futures.ProcessPoolExecutor``) by default; Dask
distributed with ``workers=N`` (a ``LocalCluster`` of N single-threaded processes) or
``scheduler="tcp://host:8786"`` (an existing cluster whose workers have this package
installed, same version: a worker on another version is refused). Dask is optional, the
extra ``sweeps`` (``pip install 'allseason[sweeps]'`` or ``pip install -r
requirements-sweeps.txt``); without it the process pool works and asking for Dask is one
clear SweepError naming that command.

Results folder: :func:`results_root` (``$ALLSEASON_RESULTS``, else ``results/`` in the
repository checkout, else ``./results``), the same for the CLI and the app.

The paper's reproduction (:mod:`allseason.paper.reproduce`) is a client of this package: its runs
go to the same store file (table ``paper_runs``) through the same executor
(:func:`run_jobs`) under the same folder lock.

Modules: ``spec`` (SweepSpec, PolicyGrid, Unit), ``store`` (ResultStore and the tables,
results_root), ``execute`` (run_unit, run_jobs, run_sweep), ``report`` (report_text); the commands
``sweep`` and ``report``: :mod:`allseason.cli.sweep`. Importing this package
loads neither dask nor plotly nor pandas.
"""

from __future__ import annotations

from .execute import (
    AUDIT_ENV,
    JobsOutcome,
    ProgressBar,
    SweepError,
    SweepOutcome,
    run_jobs,
    run_missing,
    run_sweep,
    run_unit,
)
from .report import report_text
from .spec import (
    METRICS,
    SWEEP_LIMITS,
    PolicyGrid,
    SweepSpec,
    Unit,
    canonical_json,
    scenarios_from_dict,
)
from .store import (
    PAPER_TABLE,
    RESULTS_ENV,
    SPEC_FILE,
    STORE_FILE,
    ResultStore,
    best_settings,
    describe_params,
    describe_scenario,
    load_runs,
    results_root,
    settings_table,
)

__all__ = [
    "SweepSpec",
    "PolicyGrid",
    "Unit",
    "ResultStore",
    "SweepOutcome",
    "SweepError",
    "ProgressBar",
    "METRICS",
    "SWEEP_LIMITS",
    "STORE_FILE",
    "SPEC_FILE",
    "AUDIT_ENV",
    "run_sweep",
    "run_unit",
    "load_runs",
    "settings_table",
    "best_settings",
    "report_text",
    "scenarios_from_dict",
    "describe_scenario",
    "describe_params",
    "canonical_json",
    "run_jobs",
    "run_missing",
    "JobsOutcome",
    "results_root",
    "RESULTS_ENV",
    "PAPER_TABLE",
]
