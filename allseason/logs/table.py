r"""A per-arm reward table as a world a race runs on (the user's own seasons).

The CSV has one row per (period, arm):

- ``time``: the period, a date (ISO 8601, ``2024-03-31``) or an integer (1, 2, 3, ...); the
  periods are the distinct times in order (gaps are allowed: a missing week is skipped);
- ``arm``: the arm (any label; ``item_id``, ``item``, ``action`` are read too);
- ``reward`` (also ``rate``): the arm's reward rate in that period, in [0, 1] (e.g. the
  share of customers who bought it that week), or any number with ``scale="max"`` or
  ``"minmax"``.

Every period must give a rate for every arm, once: the arms are those of the earliest period
(or the ones declared with ``arms=``), so a later row with another arm is an *unknown arm*,
a repeated (time, arm) a *duplicate*, a period without some arm a *missing* rate; each is
ONE SpecError naming the row.

**The world** (:meth:`RewardTable.__call__`, a factory ``world(scenario, seed_index, rng)``
for :func:`allseason.sim.runner.iter_race`): each period is one batch of ``steps`` customers
(default 10); a step is a customer shown one arm (the arms are one-hot, d = K, so the linear
model is exact), who "buys" it (reward 1) with the table's rate for that arm and period, else
0: **the sale rule**, drawn as ``u < rate`` with one uniform u per (step, arm) (common random
numbers: every contestant meets the same customers). Regret uses the rates.

**The hidden state** is not in the user's table, so we derive one and say so: the *season*
of a period is **its best arm** (the arm with the highest rate; ties: the first in arm
order), named "<arm> best". Segments are the runs of equal seasons. The Inside views then
show which bandit All-Season used in each season, on the table's own dates.

    >>> t = parse_reward_table(b"time,arm,reward\n2024-01-01,a,0.9\n2024-01-01,b,0.1\n"
    ...                        b"2024-01-08,a,0.2\n2024-01-08,b,0.7\n")
    >>> t.n_periods, t.arm_names, t.seasons.tolist(), t.state_names
    (2, ('a', 'b'), [0, 1], ['a best', 'b best'])
    >>> [str(d) for d in t.step_dates(t.scenario(steps=2))]
    ['2024-01-01', '2024-01-01', '2024-01-08', '2024-01-08']
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..envs.round import Round
from ..errors import SpecError
from ..limits import MAX_STEPS_PER_PERIOD, TABLE_LIMITS
from ..limits import MAX_TABLE_ARMS as MAX_ARMS
from . import reader as usercsv
from .reader import _show

STEPS = 10  # customers per period by default
SIGMA2 = 0.25  # the policies' noise variance: the largest a 0/1 sale can have
ALIASES = {"arm": ("arm", "item_id", "item", "action"), "reward": ("reward", "rate")}


@dataclass(frozen=True, eq=False)
class RewardTable:
    """A checked reward table: ``times`` (n_periods,) (datetime64[D] for dates, else
    int64), ``rates`` (n_periods, K) in [0, 1], ``arm_names`` (K,), ``notes`` (what was done
    to the data). Callable as a world factory (module docstring)."""

    times: np.ndarray
    rates: np.ndarray
    arm_names: tuple[str, ...]
    time_kind: str = "number"
    notes: tuple[str, ...] = ()

    @property
    def n_periods(self) -> int:
        """The number of periods."""
        return len(self.times)

    @property
    def n_arms(self) -> int:
        """The number of arms."""
        return len(self.arm_names)

    @property
    def seasons(self) -> np.ndarray:
        """The season (state) of each period: the index of its best arm (ties: first)."""
        return np.argmax(self.rates, axis=1)

    @property
    def state_names(self) -> list[str]:
        """State s is "<arm s> best"."""
        return [f"{a} best" for a in self.arm_names]

    def segments(self, steps: int = STEPS) -> tuple[tuple[int, int], ...]:
        """Runs of equal seasons in steps: ((state, periods x steps), ...)."""
        s = self.seasons
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        lengths = np.diff(np.r_[starts, len(s)])
        return tuple((int(s[a]), int(n) * int(steps)) for a, n in zip(starts, lengths))

    def scenario(self, steps: int = STEPS, seed: int = 0):
        """The Scenario of a race on this table: its seasons, d = K one-hot arms, sigma2
        0.25, one batch of ``steps`` customers per period (preset "custom": run it with
        ``world=`` this table)."""
        from ..specs import LIMITS, Scenario

        if not 1 <= int(steps) <= MAX_STEPS_PER_PERIOD:
            raise SpecError(
                "steps",
                f"customers per period must be between 1 and {MAX_STEPS_PER_PERIOD}, got {steps}",
            )
        horizon = self.n_periods * int(steps)
        if horizon > LIMITS["horizon"]:
            raise SpecError(
                "steps",
                f"{self.n_periods:,} periods x {steps} customers = "
                f"{horizon:,} steps; at most {LIMITS['horizon']:,}",
                bounds=(1, LIMITS["horizon"]),
                got=horizon,
            )
        return Scenario(
            segments=self.segments(int(steps)),
            d=self.n_arms,
            n_arms=self.n_arms,
            sigma2=SIGMA2,
            batch_size=int(steps),
            seed=seed,
            preset="custom",
        )

    def step_dates(self, scenario) -> np.ndarray | None:
        """The date of each step (period t // steps) when ``time`` is a date, else None."""
        if self.time_kind != "date":
            return None
        steps = scenario.batch_size
        idx = np.minimum(np.arange(scenario.horizon) // int(steps), self.n_periods - 1)
        return self.times[idx]

    def state_names_for(self, scenario=None) -> list[str]:
        """The states' names (one per period's best arm)."""
        return self.state_names

    def __call__(self, scenario, seed_index: int, rng) -> TableEnv:
        """The table's world for one seed of a race on ``scenario`` (``rng``: its outcomes)."""
        if (
            scenario.n_arms != self.n_arms
            or scenario.horizon != self.n_periods * scenario.batch_size
        ):
            raise SpecError(
                "scenario", "this reward table's world needs the scenario of RewardTable.scenario()"
            )
        return TableEnv(self, int(scenario.batch_size), rng)


class TableEnv:
    """The table's world: ``next_round(n)`` returns one-hot arms (n, K, K), the rates
    ``expected`` (n, K) of the step's period, zero ``noise``, the season ``state`` and the
    0/1 ``outcome`` (n, K), ``u < expected`` with one u per (step, arm) from ``rng`` in
    order (so the result does not depend on the chunk size)."""

    def __init__(self, table: RewardTable, steps: int = STEPS, rng=None):
        self.table, self.steps = table, int(steps)
        self._rng = np.random.default_rng(rng)
        self._period = np.repeat(np.arange(table.n_periods), self.steps)
        seasons = table.seasons
        K = table.n_arms
        self.thetas = np.zeros((K, K))  # theta_s: the mean rates of the periods of season s
        for s in np.unique(seasons):
            self.thetas[s] = table.rates[seasons == s].mean(axis=0)
        self._states = seasons[self._period]
        self.d = self.n_arms = K
        self.t = 0

    @property
    def horizon(self) -> int:
        """The number of steps."""
        return len(self._period)

    def next_round(self, n: int) -> Round:
        """The next ``n`` steps (fewer at the end of the run)."""
        n = min(int(n), self.horizon - self.t)
        K = self.n_arms
        period = self._period[self.t : self.t + n]
        expected = self.table.rates[period]
        arms = np.broadcast_to(np.eye(K), (n, K, K)).copy()
        outcome = (self._rng.random((n, K)) < expected).astype(float)
        state = self._states[self.t : self.t + n]
        self.t += n
        return Round(arms, expected, np.zeros(n), state, outcome)


def _role(header, role) -> str:
    found = [c for c in ALIASES[role] if c in header]
    if len(found) > 1:
        raise SpecError(
            found[1], f"the columns {found[0]} and {found[1]} both give the {role}; keep one"
        )
    if not found:
        raise SpecError(
            role,
            f"missing column {role!r} (also read from "
            f"{', '.join(ALIASES[role][1:])}); the header has "
            f"{', '.join(header[:12])}",
        )
    return found[0]


def parse_reward_table(
    source: bytes | str, *, arms=None, scale: str | None = None, limits: dict | None = None
) -> RewardTable:
    """Read and check a per-arm reward table (module docstring). ``arms``: None (the arms of
    the earliest period), a number N (0..N-1) or a list of labels; ``scale``: None, "max" or
    "minmax"; ``limits``: rows, columns, bytes (default :data:`TABLE_LIMITS`)."""
    lim = {**TABLE_LIMITS, **(limits or {})}
    header, cols, rows = usercsv.read_table(
        source,
        max_bytes=lim["bytes"],
        max_rows=lim["rows"],
        usecols=("time", *ALIASES["arm"], *ALIASES["reward"]),
        with_rows=True,  # the file's rows, for messages (blank lines are skipped)
    )
    if "time" not in header:
        raise SpecError(
            "time",
            f"missing column 'time' (a date or a period number); the "
            f"header has {', '.join(header[:12])}",
        )
    c_arm, c_reward = _role(header, "arm"), _role(header, "reward")
    times_all, kind = _periods(cols["time"], rows)
    periods, p_idx = np.unique(times_all, return_inverse=True)
    first_period = p_idx == 0
    code, arm_names = _arms(cols[c_arm], c_arm, arms, first_period, periods[0], rows)
    rate = usercsv.numbers(cols[c_reward], c_reward, what="a rate", rows=rows)
    rate, note = usercsv.check_unit(rate, c_reward, scale, rows)
    rates = _rate_grid(rate, p_idx, code, periods, arm_names, cols, c_arm, c_reward, rows)
    return RewardTable(periods, rates, arm_names, kind, (note,) if note else ())


def _refuse_first(bad: np.ndarray, rows, raw, why: str) -> None:
    """SpecError naming the first row where ``bad`` is true, its cell and ``why``."""
    if bad.any():
        i = int(np.argmax(bad))
        raise SpecError("time", f"row {rows[i]}, column time: {_show(raw[i])} {why}")


def _periods(raw, rows) -> tuple[np.ndarray, str]:
    """The time column as whole period numbers (int64) or dates (datetime64[D]), and which."""
    raw_t, kind = usercsv.dates_or_numbers(raw, "time", rows)
    if kind == "number":
        _refuse_first(
            raw_t != np.round(raw_t), rows, raw, "is not a whole period number (or a date)"
        )
        times_all = raw_t.astype(np.int64)
    else:
        t_day = raw_t.astype("datetime64[D]")
        _refuse_first(
            t_day != raw_t, rows, raw, "has a time of day; a period is a date (2024-03-31)"
        )
        times_all = t_day
    return times_all, kind


def _arms(labels, c_arm: str, arms, first_period, first, rows) -> tuple[np.ndarray, tuple]:
    """Each row's arm code and the arms' names: the declared arms, or those of the earliest
    period (``first``) in natural order; 2 to :data:`MAX_ARMS` of them."""
    declared = usercsv.declared_arms(arms)
    if declared is None:  # the arms of the earliest period
        arms = list(dict.fromkeys(labels[first_period]))
        if any(a == "" for a in arms):
            i = int(np.argmax(first_period & (labels == "")))
            raise SpecError(
                c_arm, f"row {rows[i]}, column {c_arm}: is empty; every row needs an arm"
            )
        if len(arms) < 2:
            raise SpecError(
                c_arm,
                f"the earliest period (time {first}) has only one arm; "
                f"the arms are those of the earliest period, and a bandit "
                f"needs at least 2",
            )
        arms = sorted(arms, key=usercsv.natural_key)  # item_2 before item_10
    code, arm_names = usercsv.labels(labels, c_arm, arms, rows)
    K = len(arm_names)
    if K < 2:
        raise SpecError(c_arm, f"only one arm ({_show(arm_names[0])}); a bandit needs at least 2")
    if K > MAX_ARMS:
        raise SpecError(
            c_arm,
            f"{K} arms; at most {MAX_ARMS} (one-hot arms, d = K)",
            bounds=(2, MAX_ARMS),
            got=K,
        )
    return code, arm_names


def _rate_grid(rate, p_idx, code, periods, arm_names, cols, c_arm, c_reward, rows) -> np.ndarray:
    """The rates as a (period, arm) grid: exactly one rate per period and arm."""
    K = len(arm_names)
    key = p_idx.astype(np.int64) * K + code
    dup = usercsv.first_duplicate(key)
    if dup is not None:
        a, b = dup
        raise SpecError(
            c_reward,
            f"row {rows[b]}: time {_show(cols['time'][b])} and arm "
            f"{_show(cols[c_arm][b])} are given twice (rows {rows[a]} and "
            f"{rows[b]}); each period has one rate per arm",
        )
    P = len(periods)
    if P * K != len(key):
        have = np.zeros(P * K, dtype=bool)
        have[key] = True
        miss = int(np.argmin(have))
        p, k = divmod(miss, K)
        raise SpecError(
            c_arm,
            f"time {periods[p]} has no row for arm {_show(arm_names[k])}; "
            f"every period needs a rate for every arm "
            f"({', '.join(arm_names[:8])}{' ...' if K > 8 else ''})",
        )
    rates = np.empty(P * K)
    rates[key] = rate
    return rates.reshape(P, K)


__all__ = [
    "RewardTable",
    "TableEnv",
    "parse_reward_table",
    "STEPS",
    "TABLE_LIMITS",
    "MAX_ARMS",
    "SIGMA2",
]
