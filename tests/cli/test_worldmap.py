"""The map of where All-Season wins (allseason/worldmap): knobs, the tuning rule, the
shipped snapshot recomputed, the `map` command interrupted and resumed."""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from allseason import api
from allseason.stats import ci95_halfwidth
from allseason.sweeps.spec import canonical_json
from allseason.worldmap import Knobs, contest, estimate_knobs, snapshot
from allseason.worldmap.compute import run_cells
from allseason.worldmap.grid import MapGrid, run_map
from allseason.worldmap.worlds import NAMED

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "examples" / "map_small.toml"


# -- knobs ------------------------------------------------------------------------------------
def test_knobs_make_a_regular_world_and_are_read_back():
    k = Knobs(season_length=30, n_states=3, returns=2, n_arms=4, d=3, sigma2=0.5, batch_size=5)
    sc = k.scenario()
    assert sc.segments == tuple((s, 30) for _ in range(3) for s in range(3))
    assert (sc.n_arms, sc.d, sc.sigma2, sc.batch_size) == (4, 3, 0.5, 5)
    est = estimate_knobs(sc)
    assert est["season_length"] == 30 and est["n_states"] == 3 and est["returns"] == 2
    assert est["batch_size"] == 5 and est["horizon"] == 270
    # SNR: mean gap between the two best expected rewards over sigma, by hand
    from allseason.sim.runner import make_env

    e = make_env(sc, 0).next_round(270).expected
    top = np.sort(e, axis=1)
    assert est["snr"] == pytest.approx(np.mean(top[:, -1] - top[:, -2]) / math.sqrt(0.5))
    with pytest.raises(api.SpecError, match="returns"):
        Knobs(returns=-1)


def test_named_worlds_knobs_match_the_issue():
    got = {}
    for name in ("Seattle weather shop", "example reward table", "regular"):
        sc, world = NAMED[name]()
        got[name] = estimate_knobs(sc, world, snr_steps=500)
    assert 25 < got["Seattle weather shop"]["season_length"] < 35  # about 2.9 days of 10
    assert got["Seattle weather shop"]["batch_size"] == 10
    assert 100 < got["example reward table"]["season_length"] < 160  # about 13 weeks
    assert got["regular"]["season_length"] == pytest.approx(10_000 / 6, abs=1)


# -- the tuning rule and a cell -----------------------------------------------------------------
def _rows(label, params, means):
    return [
        {"label": label, "params": canonical_json(params), "seed_index": k, "mean_reward": m}
        for k, m in zip(contest.TUNE_SEEDS, means)
    ]


def test_choose_keeps_the_best_mean_on_tuning_seeds_and_ties_go_first():
    rows = []
    for label in contest.GRIDS:
        for i, p in enumerate(contest.settings(label)):
            m = 0.5 if (label == "sw-lints" and i in (1, 3)) else 0.1 * i / 10
            rows += _rows(label, p, [m, m, m])
    chosen = contest.choose(rows)
    assert chosen["sw-lints"]["tau"] == contest.GRIDS["sw-lints"][2]["tau"][1]  # tie: first
    assert chosen["d-lints"]["gamma"] == contest.GRIDS["d-lints"][2]["gamma"][-1]
    assert chosen["lints"] == {} and chosen["oracle-state"] == {}
    with pytest.raises(ValueError, match="tuning runs"):
        contest.choose(rows[3:])  # a setting short of a seed


def test_summarise_pairs_by_seed_with_student_t():
    rng = np.random.default_rng(0)
    n = len(contest.SHOWN_SEEDS)
    r = {lab: list(rng.normal(0.3, 0.02, n)) for lab in contest.GRIDS}
    r["d-lints"] = list(np.asarray(r["sw-lints"]) + 0.01)
    r["lints"] = list(np.asarray(r["sw-lints"]) - 0.05)
    r["oracle-state"] = list(np.asarray(r["d-lints"]) + 0.1)
    cell = contest.summarise(r)
    assert cell["best_baseline"] == "d-lints"
    d = np.asarray(r["allseason-sw"]) - np.asarray(r["d-lints"])
    assert cell["allseason-sw"]["diff"] == pytest.approx(d.mean())
    assert cell["allseason-sw"]["half"] == pytest.approx(ci95_halfwidth(d.std(ddof=1), n))
    gap = (np.mean(r["allseason-sw"]) - np.mean(r["d-lints"])) / 0.1
    assert cell["allseason-sw"]["gap_closed"] == pytest.approx(gap)
    assert contest.verdict(cell) == (
        "tie"
        if abs(d.mean()) <= cell["allseason-sw"]["half"]
        else "wins"
        if d.mean() > 0
        else "loses"
    )


# -- the shipped snapshot ---------------------------------------------------------------------
def test_shipped_map_has_every_cell_ten_seeds_and_sentences():
    snap = snapshot.load()
    grid = MapGrid.from_dict({k: snap[k] for k in ("name", "x", "y", "page", "fixed")})
    assert len(snap["cells"]) == len(grid.cells()) >= 30
    for c in snap["cells"]:
        assert all(len(v) == len(contest.SHOWN_SEEDS) >= 5 for v in c["rewards"].values())
        assert c["best_baseline"] in contest.BASELINES
    sentences = [r["sentence"] for r in snapshot.regions(snap)]
    assert any("wins in" in s for s in sentences)
    n = sum(r["n_cells"] for p in snapshot.pages(snap) for r in snapshot.regions(snap, page=p))
    assert n == len(snap["cells"])
    assert {w["name"] for w in snap["worlds"]} == set(NAMED)
    assert {r["knob"] for r in snap["screening"]["allseason-sw"]} >= {"season_length", "sigma2"}


def test_shipped_cells_recompute_bit_for_bit(tmp_path):
    """Three cells of the shipped map (the shortest seasons, on both pages: seconds)
    computed again from the code: same kept settings, same reward on every seed, bit for
    bit."""
    snap = snapshot.load()
    short = [c for c in snap["cells"] if c["x"] == snap["x"]["values"][0]]
    picks = short[:2] + [c for c in short if c["page"] == snapshot.pages(snap)[-1]][-1:]
    assert len(picks) == 3
    scenarios = [Knobs(**c["knobs"]).scenario() for c in picks]
    res = run_cells(scenarios, tmp_path / "re", inline=True, progress=False)
    for old, new in zip(picks, res.cells):
        assert new["chosen"] == old["chosen"]
        assert new["rewards"] == old["rewards"]  # floats compared exactly
        assert new["best_baseline"] == old["best_baseline"]


def test_named_worlds_fall_where_the_snapshot_says():
    snap = snapshot.load()
    for w in snap["worlds"]:
        p = snapshot.predict(snap, w["knobs"])
        assert (p["i"], p["j"]) == (w["prediction"]["i"], w["prediction"]["j"])
        assert "observations" in snapshot.prediction_sentence(snap, w["knobs"], p)


# -- the `map` command: bad input, interrupted and resumed -------------------------------------
CLI = "import sys; from allseason.cli import main; sys.exit(main(sys.argv[1:]))"


def test_map_rejects_a_bad_grid_in_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('x = { knob = "moon", values = [1] }\ny = { knob = "d", values = [2] }\n')
    out = subprocess.run(
        [sys.executable, "-c", CLI, "map", "--grid", str(bad), "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "x.knob" in out.stderr


def _stored(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return con.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_map_killed_then_resumed_gives_the_uninterrupted_map(tmp_path):
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-c",
        CLI,
        "map",
        "--grid",
        str(SMALL),
        "--out",
        str(out),
        "--processes",
        "1",
        "--no-worlds",
        "--no-screening",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's package, from tmp_path
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=tmp_path,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    db = out / "results.sqlite"
    deadline = time.monotonic() + 120
    while _stored(db) < 20 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
    proc.stderr.close()
    before = _stored(db)
    grid = MapGrid.from_file(SMALL)
    total = len(grid.cells()) * (45 + 6 * len(contest.SHOWN_SEEDS))
    assert 20 <= before < total
    assert not (out / "map.json").exists()

    done = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{before} already stored" in done.stderr or "already stored" in done.stderr
    assert _stored(db) == total
    resumed = json.loads((out / "map.json").read_text())

    ref, _ = run_map(grid, tmp_path / "ref", inline=True, progress=False)
    for a, b in zip(resumed["cells"], ref["cells"]):
        assert a["rewards"] == b["rewards"] and a["chosen"] == b["chosen"]


def test_the_knobs_docstring_example_runs():
    import doctest

    import allseason.worldmap.knobs as mod

    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted >= 3 and res.failed == 0


def test_a_grid_file_is_validated_field_by_field():
    ok = MapGrid.from_file(SMALL)
    assert len(ok.cells()) == 4 and ok.page_values == (1,)
    bad = [
        (
            {"x": {"knob": "d", "values": [5, 2]}, "y": {"knob": "sigma2", "values": [1]}},
            "x.values",
        ),
        ({"x": {"knob": "d", "values": [2]}, "y": {"knob": "d", "values": [3]}}, "y.knob"),
        (
            {
                "x": {"knob": "d", "values": [2]},
                "y": {"knob": "sigma2", "values": [1]},
                "fixed": {"d": 3},
            },
            "fixed.d",
        ),
        (
            {
                "x": {"knob": "d", "values": [2]},
                "y": {"knob": "sigma2", "values": [1]},
                "page": {"knob": "d", "values": [1]},
            },
            "page.knob",
        ),
    ]
    for data, field in bad:
        with pytest.raises(api.SpecError) as e:
            MapGrid.from_dict(data)
        assert e.value.field == field, (field, e.value)
