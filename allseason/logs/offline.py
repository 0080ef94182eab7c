"""Your logged data: the log, read and checked (evaluated in :mod:`.evaluate`).

A **logged-bandit CSV** has one row per event (a user was shown one arm and gave a reward):

- ``timestamp``: when (a number, e.g. Unix seconds or an event counter, or an ISO 8601
  date-time such as ``2019-11-24 00:00:33.474``); events are replayed in time order, and
  two events at the same time are refused (their order would be arbitrary);
- ``arm``: the arm shown (any label; also read from a column ``item_id``, ``item`` or
  ``action``, the Open Bandit Dataset's name);
- ``reward``: a number in [0, 1] (also ``click``); or any number with ``scale="max"``
  (divided by the largest) or ``scale="minmax"``;
- ``propensity`` (optional; also ``propensity_score`` or ``pscore``): the probability, in
  (0, 1], that the logging policy showed that arm;
- context (optional): the columns named ``x0``, ``x1``, ... (all of them, in number order),
  or the numeric columns named in ``context=``. Any other column (e.g. ``position``) is
  ignored, and :attr:`Log.ignored` lists it.

**Arms as vectors.** Arm k at event t is ``e_k (x) [c_t, 1]``: each arm has its own weights
on the context and a constant (the *disjoint* linear model of Li et al. 2010). With no
context columns that is the one-hot ``e_k``, so d = K. The compiled kernels keep these
block-diagonal (:class:`~allseason.envs.arms.BlockArms`).

**Evaluation** lives beside this module: :mod:`.replay` (rejection replay, step by step and
fast), :mod:`.policy_probs` (pi_t(a | x_t) of every contestant), :mod:`.estimators` (IPS,
self-normalised IPS, DM, DR with pi; the cross-fitted reward model), :mod:`.intervals`
(Wilson, the block bootstrap, the events that would decide) and :mod:`.evaluate` (the runs
and the table); their public names are re-exported here.

The oracles cannot run here: they are told the true seasons, and a log has none.

    >>> log = parse_log(b"timestamp,arm,reward\\n1,0,1\\n2,1,0\\n3,1,1\\n")
    >>> log.n_events, log.arm_names, log.d
    (3, ('0', '1'), 2)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..envs.arms import BlockArms
from ..errors import SpecError
from ..specs import LIMITS
from . import reader as usercsv
from .reader import _show

#: what one log may hold (the command line; the app uses :data:`APP_LIMITS`)
LOG_LIMITS = dict(rows=1_000_000, columns=64, bytes=200_000_000, context=16)
#: the app's tighter limits (an upload)
APP_LIMITS = dict(rows=200_000, columns=64, bytes=20_000_000, context=16)
ALIASES = {
    "timestamp": ("timestamp",),
    "arm": ("arm", "item_id", "item", "action"),
    "reward": ("reward", "click"),
    "propensity": ("propensity", "propensity_score", "pscore"),
}


@dataclass(frozen=True, eq=False)
class Log:
    """A parsed, checked log, sorted by time. Arrays of shape (n,): ``timestamp``,
    ``arm`` (codes 0..K-1 into ``arm_names``), ``reward`` (in [0, 1]), ``propensity`` (or
    None), ``row`` (the event's row in the file, header = 1); ``contexts`` (n, p): the
    context and a constant 1 (p = 1: none). ``ignored``: columns not used; ``notes``: what
    was done to the data (scaling, sorting)."""

    timestamp: np.ndarray
    arm: np.ndarray
    reward: np.ndarray
    contexts: np.ndarray
    propensity: np.ndarray | None
    row: np.ndarray
    arm_names: tuple[str, ...]
    context_names: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    time_kind: str = "number"

    @property
    def n_events(self) -> int:
        return len(self.arm)

    @property
    def n_arms(self) -> int:
        return len(self.arm_names)

    @property
    def d(self) -> int:
        return self.n_arms * self.contexts.shape[1]

    def arms(self) -> BlockArms:
        """The arms of every event, (n, K, d): ``e_k (x) [c_t, 1]``."""
        return BlockArms(self.contexts, self.n_arms)

    @property
    def uniform(self) -> bool:
        """True when the logging is taken as uniform: no propensities, or all equal."""
        p = self.propensity
        return p is None or bool(np.all(p == p[0]))


def _role(header: list[str], role: str, required: bool) -> str | None:
    found = [c for c in ALIASES[role] if c in header]
    if len(found) > 1:
        raise SpecError(
            found[1], f"the columns {found[0]} and {found[1]} both give the {role}; keep one"
        )
    if not found and required:
        raise SpecError(
            role,
            f"missing column {role!r} (also read from "
            f"{', '.join(ALIASES[role][1:]) or 'no other name'}); the "
            f"header has {', '.join(header[:12])}",
        )
    return found[0] if found else None


def detect_kind(header: Sequence[str]) -> str:
    """'log' (a ``timestamp`` column) or 'table' (a ``time`` column); SpecError if neither."""
    cols = [c.strip().lower() for c in header]
    if "timestamp" in cols:
        return "log"
    if "time" in cols:
        return "table"
    raise SpecError(
        "columns",
        "missing column 'timestamp' (a logged-bandit CSV: timestamp, "
        "arm, reward) or 'time' (a per-arm reward table: time, arm, "
        f"reward); the header has {', '.join(cols[:12])}",
    )


def parse_log(
    source: bytes | str,
    *,
    context=None,
    arms=None,
    scale: str | None = None,
    limits: dict | None = None,
) -> Log:
    """Read and check a logged-bandit CSV (see the module docstring). ``context``: None
    (the ``x0``, ``x1``, ... columns) or column names (a list or comma-separated text);
    ``arms``: None, a number N (arms 0..N-1) or the list of arm labels (any other label is
    an unknown arm); ``scale``: None, "max" or "minmax" for the reward. ``limits``: rows,
    columns, bytes, context (default :data:`LOG_LIMITS`). Any problem is ONE SpecError
    naming the row or column."""
    lim = {**LOG_LIMITS, **(limits or {})}
    header, cols = usercsv.read_table(
        source, max_bytes=lim["bytes"], max_rows=lim["rows"], max_columns=lim["columns"]
    )
    if "timestamp" not in header:
        detect_kind(header)  # says which columns are missing
        raise SpecError(
            "timestamp",
            "missing column 'timestamp'; a 'time' column makes this a "
            "per-arm reward table, not a log",
        )
    c_time = "timestamp"
    c_arm = _role(header, "arm", True)
    c_reward = _role(header, "reward", True)
    c_prop = _role(header, "propensity", False)
    used = {c_time, c_arm, c_reward, c_prop}
    names = _context_columns(header, context, used)
    if len(names) > lim["context"]:
        raise SpecError(
            "context",
            f"{len(names)} context columns; at most {lim['context']}",
            bounds=(0, lim["context"]),
            got=len(names),
        )
    ts, kind = usercsv.dates_or_numbers(cols[c_time], c_time)
    code, arm_names = usercsv.labels(cols[c_arm], c_arm, arms)
    if len(arm_names) < 2:
        raise SpecError(
            c_arm, f"only one arm ({_show(arm_names[0])}) in the log; a bandit needs at least 2"
        )
    if len(arm_names) > LIMITS["n_arms"]:
        raise SpecError(
            c_arm,
            f"{len(arm_names)} arms; at most {LIMITS['n_arms']}",
            bounds=(2, LIMITS["n_arms"]),
            got=len(arm_names),
        )
    reward = usercsv.numbers(cols[c_reward], c_reward)
    reward, note = usercsv.check_unit(reward, c_reward, scale)
    notes = [note] if note else []
    prop = None
    if c_prop is not None:
        prop = usercsv.numbers(cols[c_prop], c_prop, what="a probability")
        bad = (prop <= 0) | (prop > 1)
        if bad.any():
            i = int(np.argmax(bad))
            raise SpecError(
                c_prop,
                f"row {i + 2}, column {c_prop}: {prop[i]:g} is not a "
                f"probability in (0, 1] (the chance the logger showed "
                f"that arm)",
            )
    ctx = [usercsv.numbers(cols[c], c) for c in names]
    d = len(arm_names) * (len(names) + 1)
    if d > LIMITS["d"]:
        raise SpecError(
            "context",
            f"{len(arm_names)} arms x ({len(names)} context columns + "
            f"1) = {d} dimensions; at most {LIMITS['d']}",
            bounds=(1, LIMITS["d"]),
            got=d,
        )
    dup = usercsv.first_duplicate(ts)
    if dup is not None:
        a, b = dup
        raise SpecError(
            c_time,
            f"row {b + 2}, column {c_time}: {_show(cols[c_time][b])} "
            f"repeats the time of row {a + 2}; each event needs its own "
            f"time, or their order is arbitrary (add seconds, or use an "
            f"event counter)",
        )
    order = np.argsort(ts, kind="stable")
    if np.any(order != np.arange(len(order))):
        notes.append("events sorted by timestamp")
    contexts = np.column_stack([*ctx, np.ones(len(code))])[order]
    return Log(
        ts[order],
        code[order],
        reward[order],
        np.ascontiguousarray(contexts),
        None if prop is None else prop[order],
        usercsv.rows_of(order),
        arm_names,
        tuple(names),
        tuple(c for c in header if c not in used and c not in names),
        tuple(notes),
        kind,
    )


def _context_columns(header, context, used) -> list[str]:
    if context is None or (isinstance(context, str) and not context.strip()):
        xs = [c for c in header if len(c) > 1 and c[0] == "x" and c[1:].isdigit()]
        return sorted(xs, key=lambda c: int(c[1:]))
    items = context.split(",") if isinstance(context, str) else list(context)
    names = [str(c).strip().lower() for c in items if str(c).strip()]
    for c in names:
        if c not in header:
            raise SpecError(
                "context",
                f"no column {_show(c)} in the file; the header has {', '.join(header[:12])}",
            )
        if c in used:
            raise SpecError(
                "context",
                f"{_show(c)} is the time, arm, reward or propensity; it cannot also be context",
            )
    if len(set(names)) != len(names):
        raise SpecError("context", "a column is named twice")
    return names


# the replays, the estimators and the table live in their own modules; their public names are
# re-exported here (the import sits at the end: those modules use Log only for type hints)
from .estimators import reward_model, run_terms  # noqa: E402
from .evaluate import (  # noqa: E402
    INTERVALS,
    LOGGER,
    METHOD_TITLES,
    METHODS,
    MIN_EVENTS,
    OFFLINE_POLICIES,
    OfflineResult,
    evaluate,
    offline_specs,
    run_one,
)
from .replay import SIGMA2, build_policy, replay_fast, replay_reference  # noqa: E402

__all__ = [
    "Log",
    "parse_log",
    "detect_kind",
    "replay_reference",
    "replay_fast",
    "run_terms",
    "run_one",
    "reward_model",
    "evaluate",
    "OfflineResult",
    "offline_specs",
    "build_policy",
    "MIN_EVENTS",
    "LOG_LIMITS",
    "APP_LIMITS",
    "OFFLINE_POLICIES",
    "SIGMA2",
    "METHODS",
    "METHOD_TITLES",
    "INTERVALS",
    "LOGGER",
]
