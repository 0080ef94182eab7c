"""What All-Season did, per change point and per state, computed from a trace.

- :func:`recall_table`: for every change point, whether the state is new or returning, the
  bandit that should take over (for a new state the shadow, id 0, or a base bandit spawned
  from it after the change point; for a returning state the live base bandit that played
  that state most before), how many steps until it holds the top weight (and which one did), which
  bandit held the top weight most often in the segment, and how many
  base bandits were spawned in the segment (spawns in a returning state were not needed).
- :func:`state_table`: share of each true state's steps played by each bandit.
- :func:`learnt_by`: which base bandits learnt which state (the paper's "theta*_1 is learnt by
  bandits 1, 2, 3").
- :func:`ensemble_summary`: the numbers that tell the two weightings apart: bandits created,
  share of batches whose top weight exceeds 0.9, mean reward, recall delay per return.
- :func:`season_year_table`: on a scenario with real dates, which bandit held the top weight
  in each state (season, regime) of each year.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .envs.patterns import Pattern
from .sim.trace import Trace

if TYPE_CHECKING:
    import pandas as pd

SHADOW = 0


def _batch_weights(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The trace's batch weights (:meth:`Trace.batch_weights`); ValueError if it has none."""
    bw = trace.batch_weights()
    if bw is None:
        raise ValueError(f"{trace.label}: not an ensemble policy, it has no weights")
    return bw


def top_bandit(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """(batch end steps, id of the bandit with the largest weight after each batch)."""
    ends, ids, w = _batch_weights(trace)
    return ends, ids[np.arange(len(ends)), np.argmax(w, axis=1)]


def recall_table(trace: Trace, pattern: Pattern) -> pd.DataFrame:
    """How fast the right bandit took over after each change point.

    Parameters
    ----------
    trace : Trace
        An All-Season run (one with weights).
    pattern : Pattern
        The seasons the run was played on.

    Returns
    -------
    pandas.DataFrame
        One row per change point: whether the state is new or returning, the bandit that should
        take over, the steps until it (or which one) held the top weight, the bandit on top most
        often in the segment, and the base bandits spawned in it (see the module docstring).
    """
    import pandas as pd

    ends, top = top_bandit(trace)
    spawned = [(e.step, e.bandit) for e in trace.events if e.kind == "spawn"]
    spawns = np.array([s for s, _ in spawned], dtype=np.int64)
    states, player = trace.state[: trace.n_done], trace.player[: trace.n_done]
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
        winner = (
            int(np.bincount(seg_top - seg_top.min()).argmax() + seg_top.min())
            if len(seg_top)
            else -1
        )
        n_spawn = int(((spawns >= start) & (spawns < stop)).sum())
        rows.append(
            dict(
                change_point=i,
                step=start,
                state=state,
                kind="new" if new else "returning",
                right_bandit=right,
                steps_to_top=delay,
                taken_by=taken_by,
                most_often_top=winner,
                share_top_right=float(np.mean(is_right[in_seg])) if len(seg_top) else 0,
                spawns=n_spawn,
            )
        )
    return pd.DataFrame(rows)


def top_live_ids(trace: Trace, step: int) -> np.ndarray:
    """Ids of the bandits alive after the last batch that ended before ``step``."""
    ends, ids, _ = _batch_weights(trace)
    b = int(np.searchsorted(ends, step, side="left")) - 1
    if b < 0:
        return np.array([0, 1])
    row = ids[b]
    return row[row >= 0]


def state_table(trace: Trace) -> pd.DataFrame:
    """Share of each true state's steps played by each bandit.

    Parameters
    ----------
    trace : Trace
        An All-Season run.

    Returns
    -------
    pandas.DataFrame
        Rows: bandit id (0 is the shadow); columns: true state; each column sums to 1.
    """
    import pandas as pd

    n = trace.n_done
    table = pd.crosstab(
        pd.Series(trace.player[:n], name="bandit"),
        pd.Series(trace.state[:n], name="state"),
        normalize="columns",
    )
    return table


def learnt_by(trace: Trace, pattern: Pattern, min_share: float = 0.1) -> dict[int, list[int]]:
    """Which base bandits learnt which state: the paper's "theta*_1 is learnt by bandits 1, 2, 3".

    Parameters
    ----------
    trace : Trace
        An All-Season run.
    pattern : Pattern
        The seasons the run was played on.
    min_share : float, default 0.1
        A bandit learnt a state when it played at least this share of the state's steps.

    Returns
    -------
    dict of int to list of int
        For each true state, in order of first appearance, the ids of the base bandits that
        learnt it. The shadow (id 0) is left out: it is nobody's long-term memory.
    """
    n = trace.n_done
    states, player = trace.state[:n], trace.player[:n]
    out = {}
    for state in dict.fromkeys(s for s, _ in pattern.segments):
        mine = player[states == state]
        if not len(mine):
            continue
        ids, counts = np.unique(mine[mine > 0], return_counts=True)
        out[int(state)] = [int(i) for i, c in zip(ids, counts) if c >= min_share * len(mine)]
    return out


def learnt_by_text(learnt: dict[int, list[int]]) -> str:
    """:func:`learnt_by`'s result in the paper's words.

    Parameters
    ----------
    learnt : dict of int to list of int
        As :func:`learnt_by` returns it.

    Returns
    -------
    str
        'θ*1 by bandits 1, 2, 3; θ*2 by bandit 4; ...' (states numbered from 1, as the paper).
    """
    parts = []
    for state, ids in learnt.items():
        who = (
            "no base bandit"
            if not ids
            else f"bandit{'s' if len(ids) > 1 else ''} " + ", ".join(map(str, ids))
        )
        parts.append(f"θ*{state + 1} by {who}")
    return "; ".join(parts)


def ensemble_summary(trace: Trace, pattern: Pattern, threshold: float = 0.9) -> dict:
    """What an All-Season run did, in the numbers that tell the weightings apart.

    Parameters
    ----------
    trace : Trace
        An All-Season run (one with weights).
    pattern : Pattern
        The seasons the run was played on.
    threshold : float, default 0.9
        A batch counts in ``top_share`` when its top weight exceeds this.

    Returns
    -------
    dict
        ``bandits_created``: base bandits ever created (bandit 1, there from step 0, plus one
        per spawn); ``top_share``: share of batches whose top weight exceeds ``threshold``;
        ``mean_reward``; ``regret``: cumulative pseudo-regret; ``recall_delays``: for each
        returning change point, the steps until its old bandit held the top weight (NaN: never
        in that season); ``recall_hold``: for each returning change point, the share of that
        season's batches with its old bandit on top.
    """
    bw = trace.batch_weights()
    if bw is None:
        raise ValueError(f"{trace.label}: not an ensemble policy, it has no weights")
    _, _, w = bw
    n = trace.n_done
    recall = recall_table(trace, pattern)
    returning = recall[recall["kind"] == "returning"] if len(recall) else recall
    return dict(
        bandits_created=1 + sum(e.kind == "spawn" for e in trace.events),
        top_share=float(np.mean(w.max(axis=1) > threshold)),
        mean_reward=float(trace.reward[:n].mean()),
        regret=float(trace.regret.sum()),
        recall_delays=[float(v) for v in returning["steps_to_top"]] if len(recall) else [],
        recall_hold=[float(v) for v in returning["share_top_right"]] if len(recall) else [],
    )


def season_year_table(trace: Trace, dates: np.ndarray, state_names=None) -> pd.DataFrame:
    """Which bandit held the top weight in each season of each year, on real dates.

    Parameters
    ----------
    trace : Trace
        An All-Season run (one with weights).
    dates : numpy.ndarray of datetime64
        The date of each step.
    state_names : sequence of str, optional
        Labels of the states (column ``season``).

    Returns
    -------
    pandas.DataFrame
        One row per (year, true state) with batches: ``n_batches`` ending in that state and
        year, ``top_bandit`` the bandit most often holding the top weight after them (ties: the
        lowest id), ``share`` the share of those batches it held it, and ``bandits_on_top`` how
        many bandits ever did. A batch counts in the state and year of its last step.
    """
    import pandas as pd

    ends, top = top_bandit(trace)
    years = np.asarray(dates)[ends].astype("datetime64[Y]").astype(int) + 1970
    states = trace.state[ends]
    rows = []
    for (y, s), idx in pd.Series(np.arange(len(ends))).groupby([years, states]):
        ids, counts = np.unique(top[idx.to_numpy()], return_counts=True)
        best = int(np.argmax(counts))  # np.unique sorts: ties go to the lowest id
        rows.append(
            dict(
                year=int(y),
                state=int(s),
                season=(state_names[s] if state_names is not None else f"state {s}"),
                n_batches=int(len(idx)),
                top_bandit=int(ids[best]),
                share=float(counts[best] / len(idx)),
                bandits_on_top=int(len(ids)),
            )
        )
    return pd.DataFrame(
        rows,
        columns=["year", "state", "season", "n_batches", "top_bandit", "share", "bandits_on_top"],
    )
