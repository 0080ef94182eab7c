"""The reproduction's tables: how far each is (:func:`table_status`), ours beside the paper's
(:func:`table_frame`, :func:`side_by_side_frame`), the oracles' row (:func:`oracle_frame`), and
their text for the command line (:func:`format_comparison`, :func:`format_side_by_side`)."""

from __future__ import annotations

import pandas as pd

from . import tables as paper_tables
from .protocol import ROWS, Protocol, choose, test_jobs, validation_jobs


def table_status(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> dict:
    """How far a table's reproduction is: {"validation": (done, total), "test": (done,
    total)}; the test total is known only once the validation is complete."""
    runs = runs[(runs.table == table) & (runs.protocol == protocol.key())]
    done = set(runs["key"])
    val = validation_jobs(table, protocol)
    out = {"validation": (sum(j.key in done for j in val), len(val)), "test": (0, None)}
    try:
        tests = test_jobs(table, choose(runs, table, protocol), protocol)
    except ValueError:
        return out
    out["test"] = (sum(j.key in done for j in tests), len(tests))
    return out


def table_frame(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> pd.DataFrame:
    """Our test results beside the paper's, one row per cell of :data:`ROWS` (see
    :func:`allseason.paper.tables.compare`), plus the chosen ``params``, ``seeds`` run,
    mean ``seconds`` per run, the ``per_seed`` mean rewards and their seeds
    (``seed_list``). Cells not measured yet (validation or test unfinished) are NaN."""
    t = runs[
        (runs.phase == "test")
        & (runs.table == table)
        & (runs.n == protocol.n)
        & (runs.protocol == protocol.key())
    ]
    try:
        chosen = choose(runs, table, protocol) if len(t) else {}
    except ValueError:  # validation unfinished
        chosen = {}
    rows = []
    for (pattern, policy), params in chosen.items():
        sub = t[(t.pattern == pattern) & (t.policy == policy) & (t.params == params)]
        if not len(sub):
            continue
        sub = sub.sort_values("seed")
        vals = sub["mean_reward"].to_numpy(dtype=float)
        rows.append(
            dict(
                algorithm=policy,
                pattern=pattern,
                mean=vals.mean(),
                std=vals.std(ddof=1) if len(vals) > 1 else 0.0,
                seeds=len(vals),
                params=params,
                seconds=sub["seconds"].astype(float).mean(),
                per_seed=[float(v) for v in vals],
                seed_list=[int(k) for k in sub["seed"]],
            )
        )
    extra = ["seeds", "params", "seconds", "per_seed", "seed_list"]
    measured = pd.DataFrame(rows, columns=["algorithm", "pattern", "mean", "std", *extra])
    cmp = paper_tables.compare(table, measured[["algorithm", "pattern", "mean", "std"]], rows=ROWS)
    return cmp.merge(
        measured[["algorithm", "pattern", *extra]], on=["algorithm", "pattern"], how="left"
    )


def oracle_frame(table: str, runs: pd.DataFrame, protocol: Protocol = Protocol()) -> pd.DataFrame:
    """Diagnostic (``benchmarks/paper_grid_oracle.py`` stores its runs with phase "oracle"):
    per (pattern, policy), on the full test data and one seed, the score of the protocol's
    choice beside the best grid point in hindsight (so the cost is never negative). The
    oracle peeks at the test data: it says what the validation run's choice cost, never what
    the algorithm scores."""
    runs = runs[runs.protocol == protocol.key()]
    o = runs[(runs.phase == "oracle") & (runs.table == table)]
    cols = [
        "pattern",
        "algorithm",
        "protocol_mean",
        "oracle_mean",
        "cost",
        "chosen_params",
        "oracle_params",
    ]
    if not len(o):
        return pd.DataFrame(columns=cols)
    chosen = choose(runs, table, protocol)
    rows = []
    for (pattern, policy), sub in o.groupby(["pattern", "policy"], sort=False):
        best = sub.loc[sub["mean_reward"].astype(float).idxmax()]
        mine = sub[sub.params == chosen[pattern, policy]]  # the same seed as the oracle
        if not len(mine):
            continue
        score = float(mine["mean_reward"].iloc[0])
        rows.append(
            dict(
                pattern=pattern,
                algorithm=policy,
                protocol_mean=score,
                chosen_params=chosen[pattern, policy],
                oracle_mean=float(best.mean_reward),
                oracle_params=best.params,
                cost=float(best.mean_reward) - score,
            )
        )
    out = pd.DataFrame(rows, columns=cols)
    order = {p: i for i, p in enumerate(paper_tables.PATTERNS)}
    return out.sort_values(
        ["pattern", "algorithm"], key=lambda c: c.map(order) if c.name == "pattern" else c
    ).reset_index(drop=True)


def _width(frame: pd.DataFrame) -> int:
    return 2 + max(len(paper_tables.ROW_LABELS[a]) for a in dict.fromkeys(frame.algorithm))


def format_comparison(table: str, frame: pd.DataFrame, protocol: Protocol | None = None) -> str:
    """The table as text: per pattern, ours ± std | paper | diff; '*' marks |diff| > 0.03."""
    head = f"{paper_tables.CAPTIONS[table]} ({table}): mean reward per step, ours vs paper"
    lines = [head, "=" * len(head)]
    if protocol is not None:
        lines.append(f"protocol {protocol.validation!r}: {protocol.label}")
    w = _width(frame)
    cols = "".join(f"{p:^30}" for p in paper_tables.PATTERNS)
    lines.append(f"{'':{w}}{cols}")
    lines.append(
        f"{'':{w}}"
        + "".join(f"{'ours':>13}{'paper':>8}{'diff':>8} " for _ in paper_tables.PATTERNS)
    )
    for alg in dict.fromkeys(frame.algorithm):
        cells = []
        for p in paper_tables.PATTERNS:
            r = frame[(frame.algorithm == alg) & (frame.pattern == p)].iloc[0]
            ours = "—" if pd.isna(r["mean"]) else f"{r['mean']:.3f}±{r['std']:.3f}"
            diff = "" if pd.isna(r["diff"]) else f"{r['diff']:+.3f}"
            mark = "*" if r["differs"] else " "
            cells.append(f"{ours:>13}{r['paper_mean']:>8.2f}{diff:>8}{mark}")
        lines.append(f"{paper_tables.ROW_LABELS[alg]:{w}}" + "".join(cells))
    n_diff = int(frame["differs"].sum())
    lines.append(
        f"* |ours - paper| > {paper_tables.DIFF_THRESHOLD}: {n_diff} of {len(frame)} cells"
    )
    return "\n".join(lines)


def format_side_by_side(table: str, frames: dict[str, pd.DataFrame]) -> str:
    """Both validation protocols' tables in one: per pattern, ours under each protocol
    ({validation: frame}) and the paper's; '*' marks a cell off the paper by > 0.03."""
    names = list(frames)
    head = (
        f"{paper_tables.CAPTIONS[table]} ({table}): mean reward per step, ours ("
        + " | ".join(names)
        + ") vs paper"
    )
    lines = [head, "=" * len(head)]
    first = frames[names[0]]
    w = _width(first)
    cw = 8 * len(names) + 8
    lines.append(f"{'':{w}}" + "".join(f"{p:^{cw}}" for p in paper_tables.PATTERNS))
    lines.append(
        f"{'':{w}}"
        + "".join(
            "".join(f"{n:>8}" for n in names) + f"{'paper':>8}" for _ in paper_tables.PATTERNS
        )
    )
    for alg in dict.fromkeys(first.algorithm):
        cells = []
        for p in paper_tables.PATTERNS:
            cell = ""
            for n in names:
                f = frames[n]
                r = f[(f.algorithm == alg) & (f.pattern == p)].iloc[0]
                txt = "—" if pd.isna(r["mean"]) else f"{r['mean']:.3f}"
                cell += f"{txt + ('*' if r['differs'] else ' '):>8}"
            cells.append(cell + f"{r['paper_mean']:>8.2f}")
        lines.append(f"{paper_tables.ROW_LABELS[alg]:{w}}" + "".join(cells))
    lines.append(
        f"* |ours - paper| > {paper_tables.DIFF_THRESHOLD}; "
        + "; ".join(
            f"{n}: {int(frames[n]['differs'].sum())} of {len(frames[n])} cells" for n in names
        )
    )
    return "\n".join(lines)


def side_by_side_frame(frames: dict[str, pd.DataFrame], digits: int = 3) -> pd.DataFrame:
    """{validation: table frame} as one wide table: a row per table row (its label), per
    pattern a column per protocol ("regular · prefix", ...) and the paper's; cells
    "mean ± std" ("—" where not measured)."""
    names = list(frames)
    first = frames[names[0]]
    out = {}
    for p in paper_tables.PATTERNS:
        for n in names:
            f = frames[n].set_index(["algorithm", "pattern"])
            out[f"{p} · {n}"] = [
                "—"
                if pd.isna(f.loc[(a, p), "mean"])
                else f"{f.loc[(a, p), 'mean']:.{digits}f} ± {f.loc[(a, p), 'std']:.{digits}f}"
                for a in dict.fromkeys(first.algorithm)
            ]
        f = first.set_index(["algorithm", "pattern"])
        out[f"{p} · paper"] = [
            f"{f.loc[(a, p), 'paper_mean']:.2f} ± {f.loc[(a, p), 'paper_std']:.2f}"
            for a in dict.fromkeys(first.algorithm)
        ]
    return pd.DataFrame(
        out, index=[paper_tables.ROW_LABELS[a] for a in dict.fromkeys(first.algorithm)]
    )
