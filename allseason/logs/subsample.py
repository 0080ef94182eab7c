"""A log too costly for one request, evaluated first on a stated subsample: its first N events.

A log's evaluation (every contestant on every seed, pi at every event) costs about the same
per event all along the log (:func:`allseason.costs.estimate_replay`), so the events that fit
in a per-request budget are known before it runs: :func:`plan` says how many (N, rounded down
to two significant digits, so the page can say "the first 23,000 of 200,000 events"), and
:func:`head` cuts them. The first events, not a random sample: the policies learn along the
log in time order, and a prefix is the same log, shorter: the policies see exactly its first
N events, as they would in a file of those events alone (same arms, same context columns).

A refinement (the same evaluation on more of the log) is a request of its own with a larger
budget (``limits.COST_REFINE_SECONDS``): the whole log when it fits, else again its first
events. Below :data:`MIN_EVENTS` events nothing useful fits: the request is refused, with
the budget and the command that runs it from a terminal (no budget there).

    >>> p = plan_for(200_000, d=20, n_arms=10, names=["lints"], n_seeds=5, budget=10)
    >>> p.first < p.total, p.text
    (True, 'first 70,000 of 200,000 events')
"""

from __future__ import annotations

import dataclasses
import math
import shlex

from .. import limits
from ..costs import estimate_replay, events_within
from ..errors import SpecError
from ..limits import MIN_SUBSAMPLE_EVENTS as MIN_EVENTS


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one request evaluates: the log's ``first`` events of ``total``, estimated at
    ``seconds`` CPU-s (the whole log: ``full_seconds``), under ``budget``."""

    first: int
    total: int
    seconds: float
    full_seconds: float
    budget: float

    @property
    def whole(self) -> bool:
        """Whether the whole log is evaluated."""
        return self.first >= self.total

    @property
    def text(self) -> str:
        """ "first N of M events", or "all M events"."""
        if self.whole:
            return f"all {self.total:,} events"
        return f"first {self.first:,} of {self.total:,} events"


def _round_down(n: int) -> int:
    """``n`` rounded down to two significant digits (23,456 -> 23,000)."""
    if n < 100:
        return n
    step = 10 ** (int(math.log10(n)) - 1)
    return n // step * step


def plan_for(
    n_events: int,
    d: int,
    n_arms: int,
    names,
    n_seeds: int,
    budget: float,
    command: str = "",
    limit: str = "limits.COST_FIRST_PART_SECONDS",
) -> Plan:
    """The :class:`Plan` of a log of ``n_events`` events (dimension ``d``, ``n_arms`` arms),
    policies ``names``, ``n_seeds`` seeds, under ``budget`` CPU-seconds (``limit``: where
    that budget is set, named in a refusal).

    Raises
    ------
    SpecError
        ``budget``: fewer than :data:`MIN_EVENTS` events (or the whole log, if shorter) fit,
        naming the budget and ``command``."""
    names = list(names)
    full = estimate_replay(n_events, d, n_arms, names, n_seeds)
    if full <= budget:
        return Plan(n_events, n_events, full, full, budget)
    first = _round_down(events_within(budget, d, n_arms, names, n_seeds, replay=True))
    if first < min(MIN_EVENTS, n_events):
        then = f"; run it from a terminal: {command}" if command else ""
        raise SpecError(
            "budget",
            f"this log's evaluation is estimated at {full:,.0f} CPU-seconds, and even its "
            f"first {MIN_EVENTS:,} events are above the {budget:,.0f} allowed per request "
            f"here ({limit}){then}",
            bounds=(0, budget),
            got=full,
        )
    seconds = estimate_replay(first, d, n_arms, names, n_seeds)
    return Plan(first, n_events, seconds, full, budget)


def plan(
    log, n_seeds: int, names=None, *, refine: bool = False, budget=None, command: str = ""
) -> Plan:
    """:func:`plan_for` of a parsed :class:`~allseason.logs.offline.Log`; ``names``: default
    the offline contestants; ``budget``: default ``limits.COST_FIRST_PART_SECONDS`` (the
    first answer; ``refine``: ``limits.COST_REFINE_SECONDS``), read when called."""
    from .evaluate import offline_specs

    names = [s.name for s in offline_specs(names)]
    limit = "COST_REFINE_SECONDS" if refine else "COST_FIRST_PART_SECONDS"
    if budget is None:
        budget = getattr(limits, limit)
    return plan_for(
        log.n_events, log.d, log.n_arms, names, n_seeds, budget, command, f"limits.{limit}"
    )


def head(log, n: int):
    """The log's first ``n`` events (in time order; the log itself if it has no more)."""
    if n >= log.n_events:
        return log
    cut = {
        f: getattr(log, f)[:n]
        for f in ("timestamp", "arm", "reward", "contexts", "propensity", "row")
        if getattr(log, f) is not None
    }
    return dataclasses.replace(log, **cut)


def replay_command(name: str, n_seeds: int, options: dict | None = None) -> str:
    """The command that evaluates the file ``name`` from a terminal (no budget there);
    ``options``: the reading flags given (``context``, ``arms``, ``scale``)."""
    args = ["python", "-m", "allseason", "replay", name or "FILE.csv", "--seeds", str(n_seeds)]
    for flag, value in (options or {}).items():
        if value:
            args += [f"--{flag}", str(value)]
    return shlex.join(args)


__all__ = ["Plan", "plan", "plan_for", "head", "replay_command", "MIN_EVENTS"]
