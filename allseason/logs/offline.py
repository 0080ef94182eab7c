"""Your logged data: the log, read and checked (evaluated in :mod:`.evaluate`).

A **logged-bandit CSV** has one row per event (a user was shown one arm and gave a reward):

- ``timestamp``: when (a number: an event counter, or Unix seconds or milliseconds; or an
  ISO 8601 date-time such as ``2019-11-24 00:00:33.474+00:00``, converted to UTC); events
  are replayed in time order, and events at the same time keep their file order (a stable
  sort; they are counted and reported);
- ``arm``: the arm shown (any label, in natural order: ``item_2`` before ``item_10``; also
  read from ``item_id``, ``item``, ``action`` or ``action_id``);
- ``reward``: a number in [0, 1] (also ``click``, ``clicked``, ``conversion`` or ``label``);
  or any number with ``scale="max"`` (divided by the largest) or ``scale="minmax"``;
- ``propensity`` (optional; also ``propensity_score``, ``pscore`` or ``action_prob``): the
  probability, in [1e-9, 1], that the logging policy showed that arm;
- context (optional): the columns named ``x0``, ``x1``, ... (all of them, in number order),
  or the columns named in ``context=`` (a text column, such as a hashed user feature, is
  one-hot on its most frequent values). Any other column (e.g. ``position``, or pandas'
  unnamed index) is ignored, and :attr:`Log.ignored` lists it.

How a file is read (only the columns used, every problem reported at once, the limits):
:mod:`allseason.logs.logfile` and :mod:`allseason.logs.reader`.

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
from . import logfile

#: what one log may hold (the command line; the app uses :data:`APP_LIMITS`); no limit on
#: the number of columns: only the columns used are read
LOG_LIMITS = dict(rows=1_000_000, bytes=200_000_000, context=16)
#: the app's tighter limits (an upload)
APP_LIMITS = dict(rows=200_000, bytes=20_000_000, context=16)
ALIASES = logfile.ALIASES  # the names each column is read from


@dataclass(frozen=True, eq=False)
class Log:
    """A parsed, checked log, sorted by time. Arrays of shape (n,): ``timestamp``,
    ``arm`` (codes 0..K-1 into ``arm_names``), ``reward`` (in [0, 1]), ``propensity`` (or
    None), ``row`` (the event's row in the file, header = 1); ``contexts`` (n, p): the
    context and a constant 1 (p = 1: none). ``ignored``: columns not used; ``notes``: what
    was done to the data (scaling, sorting, ties, time zones). ``time_kind``: "number" or
    "date" (datetime64[us], UTC); ``agent_columns``: an allseason agent's own columns found
    (``event_id``, ``model_version``, ``bandit``: a log the agent wrote); ``ties``: events
    at the same time as the one before them (kept in file order); ``out_of_order``: events
    the sort by time moved."""

    timestamp: np.ndarray
    arm: np.ndarray
    reward: np.ndarray
    contexts: np.ndarray
    propensity: np.ndarray | None
    row: np.ndarray
    arm_names: tuple[str, ...]
    context_names: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()
    agent_columns: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    time_kind: str = "number"
    ties: int = 0
    out_of_order: int = 0

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
    """Read and check a logged-bandit CSV as it comes (see the module docstring and
    :mod:`allseason.logs.logfile`). ``context``: None (the ``x0``, ``x1``, ... columns) or
    column names (a list or comma-separated text); ``arms``: None, a number N (arms 0..N-1)
    or the list of arm labels (any other label is an unknown arm); ``scale``: None, "max" or
    "minmax" for the reward. ``limits``: rows, bytes, context (default
    :data:`LOG_LIMITS`). Every problem of the file in ONE SpecError, a line per problem
    naming its row and column (the first 20, then a count)."""
    lim = {**LOG_LIMITS, **(limits or {})}
    return Log(**logfile.read_log(source, context=context, arms=arms, scale=scale, limits=lim))


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
