"""What the Inside figures show of a run: one run of a race table, the bandits worth showing
one by one, and evenly sampled batches.

The figures that read the engine's race tables (``weights``, ``events``) take them **as
returned by** ``to_frames()`` and pick the run with ``policy=`` and ``seed=``
(:func:`one_run`). All-Season may spawn hundreds of base bandits in a run, most of them
pruned within a few steps: the weight figures show the shadow and the bandits with the
largest total weight over the run one by one (:func:`key_bandits`), the others summed.
Batches are sampled for display, never averaged: evenly spaced (:func:`sampled_batches`), or
keeping each bin's lowest and highest value (:func:`minmax_index`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .race import sample_index

OTHERS_COLOR = "#bdbdbd"
NO_WEIGHTS = "No weights: this policy is not an ensemble (or has not run)."


def one_run(table: pd.DataFrame, policy, seed, what: str) -> pd.DataFrame:
    """The rows of one (policy, seed) of a race table.

    Parameters
    ----------
    table : pandas.DataFrame or None
        A table of ``to_frames()`` (or one already filtered to one run).
    policy, seed
        The run to keep (None: keep every row of that column).
    what : str
        The table's name, for the error message.

    Returns
    -------
    pandas.DataFrame
        The run's rows (empty for ``table=None``).

    Raises
    ------
    ValueError
        If the rows left hold several runs.
    """
    if table is None:
        return pd.DataFrame()
    t = table
    if policy is not None and "policy" in t.columns:
        t = t[t["policy"] == policy]
    if seed is not None and "seed" in t.columns:
        t = t[t["seed"] == seed]
    keys = [c for c in ("policy", "seed") if c in t.columns]
    if keys and len(t) and t[keys].drop_duplicates().shape[0] > 1:
        runs = t[keys].drop_duplicates().shape[0]
        raise ValueError(
            f"{what}: the table holds {runs} runs (policy, seed); pass policy= "
            f"and seed= or filter it to one run"
        )
    return t


def title_policy(table: pd.DataFrame, policy) -> str:
    """ " — <policy's name>" for a figure's title (the table's first policy by default)."""
    from .style import policy_name

    if policy is None and "policy" in table.columns and len(table):
        policy = table["policy"].iloc[0]
    return f" — {policy_name(policy)}" if policy is not None else ""


def state_at(pattern, steps) -> np.ndarray:
    """The true state of ``pattern`` at each of ``steps`` (clipped to the horizon)."""
    states = pattern.states()
    return states[np.clip(np.asarray(steps, dtype=np.int64), 0, len(states) - 1)]


def key_bandits(w: pd.DataFrame, max_bandits: int) -> list[int]:
    """The base bandits worth showing one by one: largest total weight over the run."""
    base = w[w["bandit"] > 0]
    total = base.groupby("bandit")["weight"].sum().sort_values(ascending=False, kind="stable")
    return sorted(int(b) for b in total.index[:max_bandits])


def sampled_batches(w: pd.DataFrame, n: int):
    """At most n batches, evenly spaced (the last included): (batch ids, wide table of their
    weights, one column per bandit, 0 where not alive; the step at which each batch ended)."""
    batches = np.sort(w["batch"].unique())
    chosen = batches[sample_index(len(batches), n)]
    sub = w[w["batch"].isin(chosen)]
    wide = wide_weights(sub).reindex(chosen, fill_value=0.0)
    steps = sub.groupby("batch")["step"].first().reindex(chosen).to_numpy()
    return chosen, wide, steps


def wide_weights(w: pd.DataFrame) -> pd.DataFrame:
    """Batch x bandit weights (0 where a bandit is not alive), index = batch."""
    return w.pivot_table(
        index="batch", columns="bandit", values="weight", aggfunc="sum", fill_value=0.0
    )


def minmax_index(values: np.ndarray, max_points: int) -> np.ndarray:
    """Indices of at most ``max_points`` points keeping, in each of ``max_points // 2``
    consecutive bins, the smallest and the largest value (so dips and spikes stay visible;
    every point shown is a real one)."""
    n = len(values)
    if n <= max_points:
        return np.arange(n)
    n_bins = max(max_points // 2, 1)
    edges = np.linspace(0, n, n_bins + 1).round().astype(np.int64)
    out: list[int] = []
    for a, b in zip(edges[:-1], edges[1:]):
        if b > a:
            seg = values[a:b]
            out.extend((a + int(np.argmin(seg)), a + int(np.argmax(seg))))
    return np.unique(np.array(out, dtype=np.int64))


__all__ = [
    "OTHERS_COLOR",
    "NO_WEIGHTS",
    "one_run",
    "title_policy",
    "state_at",
    "key_bandits",
    "sampled_batches",
    "wide_weights",
    "minmax_index",
]
