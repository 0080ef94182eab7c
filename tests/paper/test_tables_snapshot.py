"""The tracked snapshot of the paper tables (allseason/paper/tables_snapshot.json): one test cell
per
table recomputed at its stored seed and params equals the snapshot's per-seed value exactly
(skipped until the snapshot exists); the mechanism itself on a small store."""

from __future__ import annotations

import json

import pytest

from allseason.envs.classification import paper_setup
from allseason.envs.datasets import DataUnavailable
from allseason.paper import reproduce as R
from allseason.paper import tables as paper_tables
from allseason.paper import tables_snapshot as paper_snapshot

pytestmark = pytest.mark.usefixtures("private_data_cache")  # see conftest.py

ALLSEASON_ROWS = (
    "allseason-sw",
    "allseason-disc",
    "allseason-sw-printed",
    "allseason-disc-printed",
)


def _sample(snap: dict) -> list[dict]:
    """One cell per table: an All-Season row and a pattern that rotate with the table."""
    out = []
    for i, table in enumerate(paper_tables.TABLES):
        cells = [c for c in snap["cells"] if c["table"] == table]
        if not cells:
            continue
        want = (ALLSEASON_ROWS[i % 4], paper_tables.PATTERNS[i % 3])
        pick = next((c for c in cells if (c["row"], c["pattern"]) == want), cells[0])
        out.append(pick)
    return out


def _recompute(snap: dict, cell: dict) -> tuple[float, float]:
    """(our value now, the snapshot's) for the cell's first seed."""
    meta = snap["protocols"][cell["protocol"]]
    seed = cell["seeds"][0]
    job = R.Job(
        "test",
        cell["table"],
        cell["pattern"],
        cell["row"],
        json.dumps(cell["params"], sort_keys=True),
        seed,
        meta["n"],
        meta["n"],
        meta["key"],
    )
    _, mean, _, _ = R.run_job(job)
    return mean, cell["per_seed"][0]


def _need(dataset: str):
    try:
        paper_setup(dataset, "2arm", "regular", n=600)
    except DataUnavailable as exc:
        pytest.skip(str(exc))


def test_tracked_snapshot_equals_a_recomputation():
    snap = paper_snapshot.load()
    if snap is None:
        pytest.skip(
            f"no snapshot yet ({paper_snapshot.PATH.name}): python -m allseason "
            "paper --all --validation both --snapshot"
        )
    _need("mnist")
    _need("fmnist")
    cells = _sample(snap)
    assert cells, "the snapshot has no cells"
    for cell in cells:
        ours, stored = _recompute(snap, cell)
        assert repr(ours) == repr(stored), (cell["table"], cell["pattern"], cell["row"])


def test_snapshot_from_a_small_store_recomputes_exactly(mnist_both_store, tmp_path):
    store, by_name = mnist_both_store  # n = 600, 2 seeds (tests/paper/conftest.py)
    protocols = [by_name[v] for v in R.VALIDATIONS]
    path = paper_snapshot.write(store, protocols, "test", path=tmp_path / "snap.json")
    snap = paper_snapshot.load(path)
    assert set(snap["protocols"]) == {"prefix", "shrunk"} and snap["command"] == "test"
    assert len(snap["cells"]) == 2 * 30
    cell = next(
        c
        for c in snap["cells"]
        if c["row"] == "allseason-sw-printed"
        and c["protocol"] == "prefix"
        and c["pattern"] == "extreme"
    )
    assert cell["label"] == "All-Season(SW), printed rule" and len(cell["per_seed"]) == 2
    assert cell["paper_mean"] == paper_tables.paper_cell("mnist-2arm", "allseason-sw", "extreme")[0]
    for c in _sample(snap) + [cell]:
        ours, stored = _recompute(snap, c)
        assert repr(ours) == repr(stored)
    frame = paper_snapshot.frame(snap, "mnist-2arm", "prefix")
    table = R.table_frame("mnist-2arm", R.load_runs(store), protocols[0])
    assert frame["mean"].tolist() == table["mean"].tolist()


@pytest.mark.parametrize(
    "argv, message", [(["--validation", "x"], "--validation"), (["--bogus"], "unrecognized")]
)
def test_cli_bad_flags_one_line_exit_2(argv, message, capsys):
    assert paper_snapshot.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_empty_store_one_line_exit_2(tmp_path, capsys):
    assert paper_snapshot.main(["--out", str(tmp_path), "--path", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert "run the paper command first" in err and err.count("\n") == 1
    assert not (tmp_path / "s.json").exists()
