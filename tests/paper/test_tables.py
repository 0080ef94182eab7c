"""The paper's four real-data tables as data, and the cell-by-cell comparison."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from allseason.paper import tables as P
from allseason.policies import REGISTRY

PAPER_TEX = Path(os.environ.get("ALLSEASON_PAPER_TEX", "/work/shared/paper/all-season-paper.tex"))


def test_shape_of_every_table():
    assert tuple(P.PAPER) == P.TABLES
    for table in P.TABLES:
        assert tuple(P.PAPER[table]) == P.ALGORITHMS
        for alg in P.ALGORITHMS:
            assert tuple(P.PAPER[table][alg]) == P.PATTERNS
            for mean, std in P.PAPER[table][alg].values():
                assert 0 <= mean <= 1 and 0 <= std <= 0.1


def test_algorithms_are_registered_policies():
    assert set(P.ALGORITHMS) <= set(REGISTRY)


def test_table_keys_match_the_environments():
    from allseason.envs.classification import TABLE_KEYS

    assert tuple(TABLE_KEYS) == P.TABLES


@pytest.mark.parametrize(
    "table, alg, pattern, cell",
    [
        ("mnist-2arm", "allseason-disc", "realistic", (0.74, 0.02)),
        ("mnist-2arm", "bob", "realistic", (0.56, 0.08)),
        ("fmnist-2arm", "d-lints", "realistic", (0.68, 0.00)),
        ("fmnist-2arm", "random", "extreme", (0.50, 0.01)),
        ("mnist-10arm", "allseason-sw", "regular", (0.54, 0.10)),
        ("mnist-10arm", "sw-lints", "realistic", (0.56, 0.01)),
        ("fmnist-10arm", "allseason-disc", "extreme", (0.45, 0.03)),
        ("fmnist-10arm", "lints", "extreme", (0.28, 0.00)),
        ("fmnist-10arm", "random", "regular", (0.10, 0.00)),
    ],
)
def test_pinned_cells(table, alg, pattern, cell):
    assert P.paper_cell(table, alg, pattern) == cell
    assert P.paper_cell(table, P.LABELS[alg], pattern) == cell  # paper label works too


@pytest.mark.skipif(not PAPER_TEX.is_file(), reason=f"paper source not found at {PAPER_TEX}")
def test_rows_are_verbatim_from_the_paper():
    """Each table's rows appear in the LaTeX source under its caption (whitespace aside)."""
    tex = PAPER_TEX.read_text()
    squash = lambda s: re.sub(r"\s+", " ", s).strip()  # noqa: E731
    labels = {
        "mnist-2arm": "table:mnist2",
        "fmnist-2arm": "table:fmnist2",
        "mnist-10arm": "table:mnist10",
        "fmnist-10arm": "table:fmnist10",
    }
    for table, label in labels.items():
        end = tex.index(rf"\label{{{label}}}")
        start = tex.rindex(r"\begin{table}", 0, end)
        block = squash(tex[start:end])
        assert P.CAPTIONS[table] in block
        for row in P.LATEX_ROWS[table].strip().splitlines():
            assert squash(row) in block, (table, row)


def test_paper_frame():
    df = P.paper_frame("mnist-10arm")
    assert list(df.columns) == ["algorithm", "pattern", "mean", "std"] and len(df) == 24
    row = df[(df.algorithm == "allseason-disc") & (df.pattern == "extreme")].iloc[0]
    assert (row["mean"], row["std"]) == (0.73, 0.02)
    with pytest.raises(ValueError, match="table: unknown"):
        P.paper_frame("cifar-2arm")


def test_compare_cell_by_cell():
    measured = P.paper_frame("mnist-2arm")
    measured["mean"] = measured["mean"] + np.where(measured.algorithm == "bob", 0.05, 0.01)
    out = P.compare("mnist-2arm", measured)
    assert len(out) == 24
    assert np.allclose(out["diff"], np.where(out.algorithm == "bob", 0.05, 0.01))
    assert set(out.loc[out.differs, "algorithm"]) == {"bob"}
    assert out.loc[0, "label"] == "All-Season(Disc)"


def test_compare_partial_mapping_and_labels():
    out = P.compare(
        "fmnist-10arm", {("All-Season(SW)", "realistic"): (0.50, 0.02), ("lints", "regular"): 0.37}
    )
    got = out.set_index(["algorithm", "pattern"])
    assert got.loc[("allseason-sw", "realistic"), "diff"] == pytest.approx(-0.06)
    assert bool(got.loc[("allseason-sw", "realistic"), "differs"])
    assert got.loc[("lints", "regular"), "diff"] == pytest.approx(0.0)
    assert np.isnan(got.loc[("lints", "regular"), "std"])
    assert got["mean"].isna().sum() == 22 and not got["differs"].isna().any()


def test_compare_rejects_bad_input():
    with pytest.raises(ValueError, match="algorithm: unknown"):
        P.compare("mnist-2arm", {("UCB", "regular"): 0.5})
    with pytest.raises(ValueError, match="unknown pattern"):
        P.compare("mnist-2arm", {("lints", "weekly"): 0.5})
    with pytest.raises(ValueError, match="more than one row"):
        P.compare(
            "mnist-2arm",
            pd.DataFrame(
                {"algorithm": ["lints", "lints"], "pattern": ["regular"] * 2, "mean": [0.5, 0.6]}
            ),
        )
    with pytest.raises(ValueError, match="missing column"):
        P.compare("mnist-2arm", pd.DataFrame({"algorithm": ["lints"], "mean": [0.5]}))


def test_wide_layout():
    out = P.compare("mnist-2arm", P.paper_frame("mnist-2arm"))
    w = P.wide(out, "diff")
    assert list(w.columns) == list(P.PATTERNS) and list(w.index) == list(P.LABELS.values())
    assert np.all(w.to_numpy() == 0)
    assert P.wide(out, "paper").loc["BoB", "realistic"] == "0.56 ± 0.08"
    cells = P.wide(P.paper_frame("mnist-2arm"), "mean±std")
    assert cells.loc["random", "extreme"] == "0.50 ± 0.00"
