"""What All-Season did, per change point and per state, computed from a trace.

- :func:`recall_table`: for every change point, whether the state is new or returning, the
  bandit that should take over (for a new state the shadow, id 0, or a base bandit spawned
  from it after the change point; for a returning state the live base bandit that played
  that state most before), how many steps until it holds the top weight (and which one did), which bandit held the top weight most often in the segment, and how many
  base bandits were spawned in the segment (spawns in a returning state were not needed).
- :func:`state_table`: share of each true state's steps played by each bandit.
"""

from __future__ import annotations

import numpy as np

from .envs.patterns import Pattern
from .sim.trace import Trace

SHADOW = 0


def top_bandit(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """(batch end steps, id of the bandit with the largest weight after each batch)."""
    bw = trace.batch_weights()
    if bw is None:
        raise ValueError(f"{trace.label}: not an ensemble policy, it has no weights")
    ends, ids, w = bw
    return ends, ids[np.arange(len(ends)), np.argmax(w, axis=1)]


def recall_table(trace: Trace, pattern: Pattern):
    """One row per change point (pandas DataFrame); see the module docstring."""
    import pandas as pd

    ends, top = top_bandit(trace)
    spawned = [(e.step, e.bandit) for e in trace.events if e.kind == "spawn"]
    spawns = np.array([s for s, _ in spawned], dtype=np.int64)
    states, player = trace.state[:trace.n_done], trace.player[:trace.n_done]
    bounds = np.concatenate([[0], np.cumsum([n for _, n in pattern.segments])])
    seen, rows = {pattern.segments[0][0]}, []
    for i, (state, _) in enumerate(pattern.segments[1:], start=1):
        start, stop = int(bounds[i]), int(bounds[i + 1])
        if start >= trace.n_done:
            break
        new = state not in seen
        seen.add(state)
        if new:
            right = SHADOW
        else:  # the base bandit that played this state most so far and is still alive
            mask = (states[:start] == state) & (player[:start] > 0)
            alive = set(top_live_ids(trace, start))
            counts = np.bincount(player[:start][mask]) if mask.any() else np.zeros(1)
            order = [b for b in np.argsort(-counts) if counts[b] > 0 and b in alive]
            right = int(order[0]) if order else -1
        in_seg = (ends >= start) & (ends < stop)
        if new:  # the shadow, or a copy of it made after the change point
            fresh = [b for s, b in spawned if start <= s < stop] + [SHADOW]
            is_right = np.isin(top, fresh)
        else:
            is_right = top == right
        hit = np.flatnonzero(in_seg & is_right)
        delay = int(ends[hit[0]] - start + 1) if len(hit) else np.nan
        taken_by = int(top[hit[0]]) if len(hit) else -1
        seg_top = top[in_seg]
        winner = int(np.bincount(seg_top - seg_top.min()).argmax() + seg_top.min()) \
            if len(seg_top) else -1
        n_spawn = int(((spawns >= start) & (spawns < stop)).sum())
        rows.append(dict(change_point=i, step=start, state=state,
                         kind="new" if new else "returning", right_bandit=right,
                         steps_to_top=delay, taken_by=taken_by, most_often_top=winner,
                         share_top_right=float(np.mean(is_right[in_seg])) if len(seg_top) else 0,
                         spawns=n_spawn))
    return pd.DataFrame(rows)


def top_live_ids(trace: Trace, step: int) -> np.ndarray:
    """Ids of the bandits alive after the last batch that ended before ``step``."""
    ends, ids, _ = trace.batch_weights()
    b = int(np.searchsorted(ends, step, side="left")) - 1
    if b < 0:
        return np.array([0, 1])
    row = ids[b]
    return row[row >= 0]


def state_table(trace: Trace):
    """Share of each true state's steps played by each bandit: rows bandit id, columns state."""
    import pandas as pd

    n = trace.n_done
    table = pd.crosstab(pd.Series(trace.player[:n], name="bandit"),
                        pd.Series(trace.state[:n], name="state"), normalize="columns")
    return table
