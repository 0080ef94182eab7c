"""The results store, ``OUT/results.sqlite``: one row per finished run keyed by the run's key,
and the tables read from it (runs, settings with mean and std over seeds, best settings).

One file, two tables: ``runs`` (a sweep's runs, :class:`ResultStore` by default) and
``paper_runs`` (the paper's real-data reproduction, :mod:`allseason.paper.reproduce`, opened with
``ResultStore(folder, table=PAPER_TABLE)``: one row per run, its reward curve included).
:func:`results_root` is the one default results folder of the CLI and the app."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path

import numpy as np

from ..specs import Scenario, SpecError
from ..stats import ci95_halfwidth
from .spec import FORMAT, METRICS, canonical_json

STORE_FILE = "results.sqlite"
SPEC_FILE = "sweep.json"
PAPER_TABLE = "paper_runs"
RESULTS_ENV = "ALLSEASON_RESULTS"


def results_root() -> Path:
    """The results folder of the CLI and the app: ``$ALLSEASON_RESULTS`` if set, else
    ``results/`` in the repository checkout the package is imported from, else
    ``./results``."""
    env = os.environ.get(RESULTS_ENV)
    if env:
        return Path(env)
    checkout = Path(__file__).resolve().parents[2]  # allseason/sweeps/store.py -> the repo
    if (checkout / ".git").exists() or (checkout / "app.py").is_file():
        return checkout / "results"
    return Path("results")


_COLUMNS = (
    "key",
    "config",
    "scenario_key",
    "label",
    "policy",
    "params",
    "seed_index",
    "mean_reward",
    "mean_expected_reward",
    "cum_reward",
    "cum_regret",
    "n_steps",
    "policy_seconds",
    "wall_seconds",
    "worker",
    "engine",
    "finished_at",
    "bandits_created",
    "top_share",
)
# columns added after the first format; an older store gets them (NULL) when opened
_ADDED = {"bandits_created": "INTEGER", "top_share": "REAL"}
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    key TEXT PRIMARY KEY,            -- sha256 of config
    config TEXT NOT NULL,            -- canonical JSON: engine, scenario, policy, seed index
    scenario_key TEXT NOT NULL,
    label TEXT NOT NULL,
    policy TEXT NOT NULL,
    params TEXT NOT NULL,            -- the hyperparameters as given (JSON), defaults left out
    seed_index INTEGER NOT NULL,
    mean_reward REAL NOT NULL,
    mean_expected_reward REAL NOT NULL,
    cum_reward REAL NOT NULL,
    cum_regret REAL NOT NULL,
    n_steps INTEGER NOT NULL,
    policy_seconds REAL NOT NULL,
    wall_seconds REAL NOT NULL,
    worker TEXT NOT NULL,
    engine TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    bandits_created INTEGER,         -- ensembles: base bandits ever created (else NULL)
    top_share REAL,                  -- ensembles: share of batches with top weight > 0.9
    n_results INTEGER NOT NULL DEFAULT 1   -- how many times a result for this key arrived
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS paper_runs (
    key TEXT PRIMARY KEY,            -- sha256 of the run's identity (allseason.paper.reproduce.Job)
    protocol TEXT NOT NULL,          -- Protocol.key(): what fixes the numbers
    phase TEXT NOT NULL,             -- validation | test | oracle
    table_name TEXT NOT NULL,        -- mnist-2arm, ...
    pattern TEXT NOT NULL,
    policy TEXT NOT NULL,            -- the table's row (e.g. allseason-sw-printed)
    params TEXT NOT NULL,            -- JSON, sorted keys
    seed INTEGER NOT NULL,
    n INTEGER NOT NULL,              -- steps played
    pattern_n INTEGER NOT NULL,      -- horizon of the pattern they are the first steps of
    mean_reward REAL NOT NULL,
    seconds REAL NOT NULL,
    curve TEXT NOT NULL,             -- JSON: cumulative reward every curve_every steps
    curve_every INTEGER NOT NULL,
    worker TEXT NOT NULL,
    engine TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    n_results INTEGER NOT NULL DEFAULT 1
) WITHOUT ROWID;
"""
_PAPER_COLUMNS = (
    "key",
    "protocol",
    "phase",
    "table_name",
    "pattern",
    "policy",
    "params",
    "seed",
    "n",
    "pattern_n",
    "mean_reward",
    "seconds",
    "curve",
    "curve_every",
    "worker",
    "engine",
    "finished_at",
)
_TABLES = {  # table: (columns written by add, order of rows())
    "runs": (_COLUMNS, "label, scenario_key, params, seed_index"),
    PAPER_TABLE: (_PAPER_COLUMNS, "protocol, phase, table_name, pattern, policy, params, seed"),
}


def _writable(folder: Path, path: Path) -> bool:
    """Whether SQLite can write the store and its journal there (access(2): a read-only
    mount says no even to root)."""
    return os.access(folder, os.W_OK) and os.access(path, os.W_OK)


def _open_read_only(path: Path) -> sqlite3.Connection:
    """A store on a read-only disk: opened read-only, or as immutable when its WAL index
    cannot be made there (the file cannot change under us: nobody can write it)."""
    uri = path.resolve().as_uri()
    for mode in ("mode=ro", "immutable=1"):
        try:
            con = sqlite3.connect(f"{uri}?{mode}", uri=True, isolation_level=None)
            con.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return con
        except sqlite3.Error:
            continue
    raise sqlite3.OperationalError(f"cannot read {str(path)!r} on a read-only disk")


class ResultStore:
    """``folder/results.sqlite``: one row per finished run, keyed by the run's key, in
    ``table`` ("runs": sweeps; :data:`PAPER_TABLE`: the paper's reproduction).

    Each :meth:`add` is one committed transaction (WAL journal, synchronous=FULL): a row is
    either entirely there or not at all, whenever the writer is killed. A result arriving
    for a key already stored keeps the first row and increments ``n_results``."""

    def __init__(self, folder, *, create: bool = True, table: str = "runs"):
        if table not in _TABLES:
            raise ValueError(f"table: one of {', '.join(_TABLES)}, got {table!r}")
        self.table = table
        self.columns, self._order = _TABLES[table]
        self.folder = Path(folder)
        self.path = self.folder / STORE_FILE
        if create:
            self.folder.mkdir(parents=True, exist_ok=True)
        elif not self.path.is_file():
            raise FileNotFoundError(
                f"{str(self.folder)!r} holds no sweep results ({STORE_FILE} not found)"
            )
        self.read_only = not create and not _writable(self.folder, self.path)
        if self.read_only:  # a store on a read-only disk is read as it is, never written
            self.con = _open_read_only(self.path)
            return
        self.con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        self.con.execute("PRAGMA journal_mode=WAL")
        self.con.execute("PRAGMA synchronous=FULL")
        self.con.executescript(_SCHEMA)  # IF NOT EXISTS: an older file gets the new table
        if create:
            self.con.execute(f"PRAGMA user_version={FORMAT}")
        have = {r[1] for r in self.con.execute("PRAGMA table_info(runs)")}
        for name, kind in _ADDED.items():
            if have and name not in have:
                self.con.execute(f"ALTER TABLE runs ADD COLUMN {name} {kind}")

    def keys(self) -> set[str]:
        """The keys of the stored runs."""
        return {k for (k,) in self.con.execute(f"SELECT key FROM {self.table}")}

    def __len__(self) -> int:
        return self.con.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0]

    def add(self, row: dict) -> bool:
        """Store one finished run (atomically); True if its key was new."""
        cols = ", ".join(self.columns)
        marks = ", ".join("?" for _ in self.columns)
        with self._transaction():
            new = (
                self.con.execute(
                    f"SELECT 1 FROM {self.table} WHERE key = ?", (row["key"],)
                ).fetchone()
                is None
            )
            self.con.execute(
                f"INSERT INTO {self.table} ({cols}) VALUES ({marks}) "
                "ON CONFLICT(key) DO UPDATE SET n_results = n_results + 1",
                [row[c] for c in self.columns],
            )
        return new

    @contextlib.contextmanager
    def _transaction(self):
        self.con.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            try:  # SQLite may have rolled back already (a full disk): the first error counts
                self.con.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            raise
        self.con.execute("COMMIT")

    def rows(self) -> list[dict]:
        """Every stored row, in order."""
        cur = self.con.execute(f"SELECT * FROM {self.table} ORDER BY {self._order}")
        names = [c[0] for c in cur.description]
        return [dict(zip(names, r)) for r in cur]

    def close(self) -> None:
        """Close the database."""
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def load_runs(folder):
    """The stored runs as a pandas DataFrame, one row per run: label, policy, setting,
    params (dict), seed_index, the metrics, scenario (a description), scenario_key, and one
    ``hp.NAME`` column per hyperparameter given in any setting (NaN where not given)."""
    import pandas as pd

    with ResultStore(folder, create=False) as store:
        rows = store.rows()
    scen_desc = {}
    for r in rows:
        cfg = json.loads(r["config"])
        if r["scenario_key"] not in scen_desc:
            scen_desc[r["scenario_key"]] = describe_scenario(Scenario.from_dict(cfg["scenario"]))
        r["scenario"] = scen_desc[r["scenario_key"]]
        r["params"] = json.loads(r["params"])
        r["setting"] = describe_params(r["params"])
        r["resolved"] = canonical_json(cfg["policy"]["params"])
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    names = sorted({k for p in table["params"] for k in p})
    for k in names:
        table[f"hp.{k}"] = [p.get(k, np.nan) for p in table["params"]]
    return table


def describe_params(params: dict) -> str:
    """Hyperparameters in words (``k=v, ...`` or ``defaults``)."""
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "defaults"


def describe_scenario(sc: Scenario) -> str:
    """A one-line description: pattern, T, d, K, sigma2, batch size, root seed."""
    b = sc.batch_size
    batch = ",".join(map(str, b)) if isinstance(b, tuple) else str(b)
    pattern = sc.preset if sc.preset != "custom" else f"custom {len(sc.segments)} segments"
    return (
        f"{pattern}, {sc.pattern.n_states} states, T={sc.horizon}, d={sc.d}, "
        f"K={sc.n_arms}, sigma2={sc.sigma2:g}, B={batch}, seed={sc.seed}"
    )


def settings_table(runs):
    """One row per (scenario, label, setting): every metric's mean and std over the seeds
    (``mean_reward``, ``mean_reward_std``, ...), the half-width of its 95% Student's t
    interval (``mean_reward_ci95``: t.ppf(0.975, n − 1) · std / √n, as
    ``RaceResult.summary()``'s ``ci95``), n_seeds, and the ``hp.*`` columns.

    Means are numpy's over the seeds in seed order, so they equal ``RaceResult.summary()``'s
    for the same seeds bit for bit; std uses ddof=1 (0 for a single seed, and so is ci95:
    one seed gives no interval)."""
    import pandas as pd

    if runs is None or len(runs) == 0:
        return pd.DataFrame()
    hp = [c for c in runs.columns if c.startswith("hp.")]
    out = []
    for (_, label, _), g in runs.groupby(["scenario_key", "label", "resolved"], sort=False):
        g = g.sort_values("seed_index")
        first = g.iloc[0]
        row = {
            "scenario": first["scenario"],
            "scenario_key": first["scenario_key"],
            "label": label,
            "policy": first["policy"],
            "setting": first["setting"],
            "params": first["params"],
            "n_seeds": len(g),
        }
        for m in METRICS:
            v = g[m].to_numpy(dtype=float)
            row[m] = float(v.mean())
            row[f"{m}_std"] = float(v.std(ddof=1)) if len(v) > 1 else 0.0
            row[f"{m}_ci95"] = ci95_halfwidth(row[f"{m}_std"], len(v))
        for m, worst in (("bandits_created", "max"), ("top_share", "min")):  # ensembles only
            v = (
                pd.to_numeric(g[m], errors="coerce").to_numpy(dtype=float)
                if m in g
                else np.array([np.nan])
            )
            row[m] = float(v.mean()) if np.isfinite(v).all() else np.nan
            row[f"{m}_{worst}"] = float(getattr(v, worst)()) if np.isfinite(v).all() else np.nan
        row.update({c: first[c] for c in hp})
        out.append(row)
    return pd.DataFrame(out)


def best_settings(settings, metric: str = "mean_reward", top: int = 1):
    """The ``top`` best settings of each algorithm in each scenario (by the seeds' mean)."""
    if metric not in METRICS:
        raise SpecError("metric", f"must be one of {', '.join(METRICS)}, got {metric!r}")
    if settings is None or len(settings) == 0:
        return settings
    higher = METRICS[metric][1]
    ordered = settings.sort_values(metric, ascending=not higher, kind="stable")
    best = ordered.groupby(["scenario_key", "label"], sort=False).head(top).copy()
    # algorithms ordered by their best setting, then each one's settings best first
    best["_algo"] = best.groupby(["scenario_key", "label"])[metric].transform(
        "max" if higher else "min"
    )
    return (
        best.sort_values(
            ["scenario", "scenario_key", "_algo", "label", metric],
            ascending=[True, True, not higher, True, not higher],
            kind="stable",
        )
        .drop(columns="_algo")
        .reset_index(drop=True)
    )
