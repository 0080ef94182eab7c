"""The tables of "Your deployed bandit", from a deployment's logs read by
:mod:`allseason.logs.deployed`: the recalls and the spells of the top weight, the reward per
window with its 95% interval, what the propensities say about offline evaluation, and the
current bandits; and the recent part of a decision log that Your data takes."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING

import numpy as np

from .intervals import wilson

if TYPE_CHECKING:
    import pandas as pd


def recalls(tops: pd.DataFrame, min_batches: int = 5) -> pd.DataFrame:
    """The recalls: the top weight going back to a base bandit that held it before, after
    another bandit held it for at least ``min_batches`` batches, and kept for as long (or
    to the end of the log): a flicker is not a season coming back.

    Returns
    -------
    pandas.DataFrame
        batch, step, bandit (the one recalled), weight, previous (who held the top before),
        last_step (when the recalled bandit last held it)."""
    import pandas as pd  # slow to import (0.5 s): only when first needed

    b = tops["bandit"].to_numpy()
    cols = ["batch", "step", "bandit", "weight", "previous", "last_step"]
    if len(b) < 2:
        return pd.DataFrame(columns=cols)
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    lengths = np.diff(np.r_[starts, len(b)])
    steps, weights = tops["step"].to_numpy(), tops["weight"].to_numpy()
    last_end: dict[int, int] = {}
    rows = []
    for k, (s, n) in enumerate(zip(starts.tolist(), lengths.tolist())):
        who = int(b[s])
        kept = n >= min_batches or k == len(starts) - 1
        if k and who > 0 and who in last_end and lengths[k - 1] >= min_batches and kept:
            rows.append((s, int(steps[s]), who, float(weights[s]), int(b[s - 1]), last_end[who]))
        last_end[who] = int(steps[s + n - 1])
    return pd.DataFrame(rows, columns=cols)


def reward_windows(reward: np.ndarray, n_windows: int = 100, level: float = 0.95) -> pd.DataFrame:
    """Mean reward per window of consecutive decisions, with its interval: Wilson when every
    reward is 0 or 1, Student's t otherwise.

    Returns
    -------
    pandas.DataFrame
        first, last (the window's decisions), n, mean, low, high, interval ("wilson"|"t")."""
    import pandas as pd  # slow to import (0.5 s): only when first needed

    r = np.asarray(reward, dtype=float)
    cols = ["first", "last", "n", "mean", "low", "high", "interval"]
    if not len(r):
        return pd.DataFrame(columns=cols)
    binary = bool(np.isin(r, (0.0, 1.0)).all())
    edges = np.unique(np.linspace(0, len(r), min(n_windows, len(r)) + 1).round().astype(int))
    sums = np.add.reduceat(r, edges[:-1])
    sq = np.add.reduceat(r * r, edges[:-1])
    n = np.diff(edges)
    mean = sums / n
    if binary:
        lo, hi = np.array([wilson(m, k, level) for m, k in zip(mean, n)]).T
    else:
        # Student's t quantile: scipy.stats' t.ppf(q, df) is scipy.special's stdtrit(df, q),
        # bit for bit, without importing scipy.stats (1.5-2 CPU-s)
        from scipy.special import stdtrit

        var = np.where(n > 1, (sq - n * mean**2) / np.maximum(n - 1, 1), np.nan)
        half = stdtrit(np.maximum(n - 1, 1), 0.5 + level / 2) * np.sqrt(np.maximum(var, 0) / n)
        lo, hi = mean - half, mean + half
    return pd.DataFrame(
        {
            "first": edges[:-1],
            "last": edges[1:] - 1,
            "n": n,
            "mean": mean,
            "low": lo,
            "high": hi,
            "interval": "wilson" if binary else "t",
        }
    )


def uniform_ess(propensity: np.ndarray, n_arms: int) -> float:
    """The effective sample size of an IPS estimate of the uniform policy on this log:
    ``(sum w)^2 / sum w^2`` with ``w = (1 / K) / p``."""
    p = np.asarray(propensity, dtype=float)
    p = p[p > 0]  # a propensity of 0 (underflow in the logger) cannot be weighted
    if not len(p) or n_arms < 1:
        return 0.0
    w = (1.0 / n_arms) / p
    return float(w.sum() ** 2 / (w * w).sum())


def propensity_summary(propensity: np.ndarray, n_arms: int) -> dict:
    """What the propensities say about offline evaluation: n, the smallest, quantiles
    (1%, 50%), the share below 1 / (10 K), and the uniform policy's IPS ESS (and its share
    of n)."""
    p = np.asarray(propensity, dtype=float)
    if not len(p):
        return dict(n=0, min=math.nan, q01=math.nan, median=math.nan, tiny=0.0, ess=0.0,
                    ess_share=0.0, n_arms=n_arms, zero=0)  # fmt: skip
    ess = uniform_ess(p, n_arms)
    return dict(
        n=len(p),
        min=float(p.min()),
        q01=float(np.quantile(p, 0.01)),
        median=float(np.median(p)),
        tiny=float((p < 0.1 / max(n_arms, 1)).mean()),
        zero=int((p <= 0).sum()),
        ess=ess,
        ess_share=ess / len(p),
        n_arms=n_arms,
    )


def bandits_table(
    batches, cols: dict[str, np.ndarray], arm_labels: list[str], summary=None
) -> pd.DataFrame:
    """The current bandits (the last batch update's): id, role, weight, born (the batch it
    was first alive in), age (batches since), and what the log says each did: decisions it
    played, their mean reward, the arm it played most and how often. ``summary``: the
    agent state's :meth:`Agent.summary` ``bandits`` list, if a state was opened (its age
    and n_obs are the agent's own)."""
    import pandas as pd  # slow to import (0.5 s): only when first needed

    last = batches.last
    out_cols = ["bandit", "role", "weight", "born_batch", "age_batches", "played", "mean_reward",
                "top_arm", "top_arm_share"]  # fmt: skip
    if last is None:
        return pd.DataFrame(columns=out_cols)
    first = batches.first_seen()
    now = batches.n_lines - 1
    bandit = cols["bandit"].astype(np.int64)
    rows = []
    for b, w in sorted(zip(last["ids"], last["weights"]), key=lambda t: -t[1]):
        mine = bandit == b
        n = int(mine.sum())
        arm, share = "", math.nan
        if n:
            counts = np.bincount(cols["arm_codes"][mine])
            arm, share = arm_labels[int(counts.argmax())], float(counts.max() / n)
        rows.append(
            (
                int(b),
                "shadow" if b == 0 else "base",
                float(w),
                first.get(int(b), 0),
                now - first.get(int(b), 0),
                n,
                float(cols["reward"][mine].mean()) if n else math.nan,
                arm,
                share,
            )  # fmt: skip
        )
    table = pd.DataFrame(rows, columns=out_cols)
    if summary:
        extra = pd.DataFrame(summary)
        keep = [c for c in ("id", "age", "n_obs") if c in extra]
        if "id" in keep:
            extra = extra[keep].rename(columns={"id": "bandit", "age": "age_agent"})
            table = table.merge(extra, on="bandit", how="left")
    return table


def spells_table(tops: pd.DataFrame) -> pd.DataFrame:
    """Who held the top weight, spell by spell: bandit, first_step, last_step, batches, the
    mean of its top weight, and whether the spell was a recall (the bandit held the top
    before)."""
    import pandas as pd  # slow to import (0.5 s): only when first needed

    b = tops["bandit"].to_numpy()
    cols = ["bandit", "first_step", "last_step", "batches", "mean_weight", "returning"]
    if not len(b):
        return pd.DataFrame(columns=cols)
    starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    ends = np.r_[starts[1:], len(b)]
    steps, w = tops["step"].to_numpy(), tops["weight"].to_numpy()
    sums = np.add.reduceat(w, starts)
    seen: set[int] = set()
    rows = []
    for s, e, tot in zip(starts.tolist(), ends.tolist(), sums.tolist()):
        who = int(b[s])
        rows.append((who, int(steps[s]), int(steps[e - 1]), e - s, tot / (e - s), who in seen))
        seen.add(who)
    return pd.DataFrame(rows, columns=cols)


__all__ = [
    "recalls",
    "reward_windows",
    "uniform_ess",
    "propensity_summary",
    "bandits_table",
    "spells_table",
]


def your_data_file(path, max_rows: int, max_bytes: int) -> tuple[bytes, int]:
    """The header and the most recent whole rows of the CSV at ``path`` that fit in
    ``max_rows`` rows and ``max_bytes`` bytes (read from the end: a long log is not read
    whole). Returns (bytes, rows kept)."""
    with open(path, "rb") as f:
        head = f.readline()
        size = os.fstat(f.fileno()).st_size
        start = max(len(head), size - (max_bytes - len(head)))
        f.seek(start)
        body = f.read(size - start)
    if start > len(head):  # the first line read may be cut: drop it
        body = body.partition(b"\n")[2]
    data, kept, _ = your_data_bytes(head + body, max_rows, max_bytes)
    return data, kept


def your_data_bytes(data: bytes, max_rows: int, max_bytes: int) -> tuple[bytes, int, int]:
    """The decision log as Your data takes it: the header and the most recent rows that fit in
    ``max_rows`` rows and ``max_bytes`` bytes. Returns (bytes, rows kept, rows in all)."""
    head, _, body = data.partition(b"\n")
    body = body.rstrip(b"\n")
    lines = body.split(b"\n") if body else []
    n_all = len(lines)
    budget = max_bytes - len(head) - 1
    kept, size = 0, 0
    for line in reversed(lines):
        if kept >= max_rows or size + len(line) + 1 > budget:
            break
        kept += 1
        size += len(line) + 1
    tail = b"\n".join(lines[n_all - kept :]) if kept else b""
    return head + b"\n" + tail + (b"\n" if kept else b""), kept, n_all
