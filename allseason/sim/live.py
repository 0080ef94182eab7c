"""A race that can be stepped while the true state is chosen by hand (the app's Live page).

:class:`LiveRun` advances every contestant by k steps at a time, on the same arms and noise
(common random numbers, as in a race), in the state the presenter chose last. Between two
calls the state may change to any state seen so far (a season comes back) or to a **new**
one, whose theta is the next draw of the environment's theta stream (so state s always has
the same theta, reproducible from the seed; :meth:`LinearGaussianEnv.ensure_states`).

The run records the schedule it actually played, run-length encoded (:meth:`schedule`).
Replayed as a pattern through :func:`~allseason.sim.runner.run_race` with the same seed
(:meth:`LiveRun.race`), it gives the same decisions and rewards bit for bit: the streams
are the race's (environment: spawn key (0, 0); policy ``label``: (0, 1, crc32(label))), every
advance is made of whole batches, and the policies' decisions do not depend on how time is
cut into chunks (tests/sim/test_live_run.py).

Memory stays bounded however long the show runs: per-step columns are kept for the last
``window`` steps only (rolling windows, not full traces), the ticker keeps its last
``TICKER_LEN`` lines and the schedule grows by one segment per switch.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from ..errors import SpecError
from ..limits import LIVE_WINDOW_RANGE
from ..limits import MAX_LIVE_STATES as MAX_STATES
from ..policies import role
from ..specs import LIMITS, PolicySpec, Race, Scenario, policy_specs
from .runner import make_env, play_round, seed_sequence

#: the Live page's default contestants: All-Season (SW) against the baselines, and the oracle
LIVE_POLICIES = ("allseason-sw", "sw-lints", "d-lints", "lints", "oracle-state")
WINDOW = 2_000  # steps kept for the figures
RATE_WINDOW = 100  # steps of the rolling reward rate
TICKER_LEN = 40  # lines the ticker keeps
RETURN_GAP = 50  # steps away from the top weight before "bandit b is back" is said
LIVE_HORIZON = 10_000  # the T given to policies that need one (BoB), pinned in their spec


@dataclass
class Ticker:
    """One line of the ticker: the step it happened at, a kind and plain words."""

    step: int
    kind: str  # "switch", "new", "shadow", "spawn", "back", "prune"
    text: str


@dataclass
class LiveFrame:
    """What the live figures draw, the last ``len(steps)`` steps of the show.

    steps, state: shape (n,); reward, rate: (P, n), the reward of each contestant and its
    rolling mean over the last ``rate_window`` steps; regret_since_switch: (P,) cumulative
    pseudo-regret since the last switch; since_switch: (P, m) its curve over the steps since
    the switch that are still in the window; top_step, top_bandit, top_weight: (n_b,), after
    each batch of the featured All-Season, which bandit held the top weight (0 = the
    shadow) and how much; labels: the contestants, in order."""

    labels: tuple[str, ...]
    steps: np.ndarray
    state: np.ndarray
    reward: np.ndarray
    rate: np.ndarray
    regret_since_switch: np.ndarray
    since_switch: np.ndarray
    switch_step: int
    top_step: np.ndarray
    top_bandit: np.ndarray
    top_weight: np.ndarray
    featured: str | None
    t: int
    current_state: int
    n_states: int
    ticker: tuple[Ticker, ...]


def _pin_horizon(spec: PolicySpec) -> PolicySpec:
    """The spec with the horizon written in when the policy takes one (BoB): a live show has
    no horizon, and its replay must give the policy the same T."""
    from ..policies import hyperparameters

    params = dict(spec.params)
    if "horizon" in hyperparameters(spec.name) and "horizon" not in params:
        params["horizon"] = LIVE_HORIZON
        return PolicySpec(spec.name, params, spec.label)
    return spec


def _check_int(field: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SpecError(
            field,
            f"must be an integer from {lo} to {hi}, got {value!r}",
            bounds=(lo, hi),
            got=value,
        )
    if not lo <= int(value) <= hi:
        raise SpecError(
            field, f"must be from {lo} to {hi}, got {value}", bounds=(lo, hi), got=value
        )
    return int(value)


def _keep(buf: np.ndarray, new: np.ndarray, n: int) -> np.ndarray:
    """The last ``n`` entries of ``buf`` followed by ``new`` (along the last axis)."""
    out = np.concatenate([buf, new], axis=-1)
    return out[..., -n:] if out.shape[-1] > n else out


class LiveRun:
    """A race stepped by hand: ``advance(k)`` plays k more steps (whole batches) of every
    contestant in the current state; ``switch(s)`` and ``new_state()`` change the state.

    Parameters: policies (PolicySpecs or names; default :data:`LIVE_POLICIES` with the
    default race's hyperparameters), the environment's d, n_arms (K), sigma2 and batch_size
    (B, one size), seed, ``window`` (steps kept for the figures), ``max_states`` (seasons a
    show may have, at most 9) and ``rate_window`` (steps of the rolling reward rate).

        >>> from allseason.sim import run_race
        >>> live = LiveRun(["allseason-sw", "lints"], seed=3, record=True)
        >>> _ = live.advance(200); _ = live.new_state(); _ = live.advance(200)
        >>> _ = live.switch(0); _ = live.advance(100)
        >>> live.schedule()
        ((0, 200), (1, 200), (0, 100))
        >>> replay = run_race(live.race())
        >>> bool((replay.traces["lints", 0].arm == live.arms("lints")).all())
        True
    """

    def __init__(
        self,
        policies=None,
        *,
        d: int = 5,
        n_arms: int = 5,
        sigma2: float = 0.1,
        batch_size: int = 1,
        seed: int = 0,
        window: int = WINDOW,
        max_states: int = MAX_STATES,
        rate_window: int = RATE_WINDOW,
        record: bool = False,
    ):
        from ..defaults import default_params

        if policies is None:
            policies = [PolicySpec(n, default_params(n)) for n in LIVE_POLICIES]
        self.specs = tuple(_pin_horizon(s) for s in policy_specs(policies))
        if isinstance(batch_size, (list, tuple)):
            raise SpecError(
                "batch_size", "a live show takes one batch size, not a list", got=batch_size
            )
        # the scenario's own checks for d, n_arms, sigma2, batch_size and seed
        self._base = Scenario(
            segments=((0, 1),),
            d=d,
            n_arms=n_arms,
            sigma2=sigma2,
            batch_size=batch_size,
            seed=seed,
            preset="custom",
        )
        self.window = _check_int("window", window, *LIVE_WINDOW_RANGE)
        self.max_states = _check_int("max_states", max_states, 1, MAX_STATES)
        self.rate_window = _check_int("rate_window", rate_window, 1, self.window)
        self.record = bool(record)
        sc = self._base
        self._env = make_env(sc, 0)
        self._policies = [
            s.build_for(sc, rng=np.random.default_rng(seed_sequence(sc, 0, s.label)))
            for s in self.specs
        ]
        self.labels = tuple(s.label for s in self.specs)
        self.featured = next(
            (s.label for s in self.specs if role(s.name).family == "allseason"), None
        )
        P = len(self.specs)
        self.t = 0  # steps played
        self.state = 0  # the current true state
        self.n_states = 1  # states seen (0 .. n_states - 1)
        self._segments: list[list[int]] = [[0, 0]]
        self.switch_step = 0
        self.total_reward = np.zeros(P)
        self.total_regret = np.zeros(P)
        self.regret_since_switch = np.zeros(P)
        # rolling windows
        self._steps = np.zeros(0, dtype=np.int64)
        self._state = np.zeros(0, dtype=np.int64)
        self._reward = np.zeros((P, 0))
        self._since = np.zeros((P, 0))  # per-step regret since the switch
        self._top = np.zeros((3, 0))  # batch end step, top bandit id, top weight
        self.ticker: deque[Ticker] = deque(maxlen=TICKER_LEN)
        self._holder = None  # who holds the featured All-Season's top weight
        self._held_until: dict[int, int] = {}  # base bandit id -> last step it held it
        self._said_takeover = True  # whether the shadow's takeover after a switch was said
        self._full: dict[str, list] = {label: [] for label in self.labels} if record else {}

    # -- the presenter's controls ----------------------------------------------------------
    def switch(self, state: int) -> int:
        """Play ``state`` from the next step on: a state seen so far (0 .. n_states - 1), or
        ``n_states`` for a new one (at most ``max_states`` in a show). Returns the state."""
        if isinstance(state, bool) or not isinstance(state, (int, np.integer)):
            raise SpecError("state", f"must be an integer, got {state!r}", got=state)
        state = int(state)
        if state == self.n_states:
            if self.n_states >= self.max_states:
                raise SpecError(
                    "state",
                    f"a live show has at most {self.max_states} seasons; "
                    "bring back one of those seen so far",
                    bounds=(0, self.max_states - 1),
                    got=state,
                )
            self.n_states += 1
            self._say("new", f"new season {state + 1}: a world nobody has seen")
        elif not 0 <= state < self.n_states:
            raise SpecError(
                "state",
                f"must be a season seen so far (1 to {self.n_states}) or a new one",
                bounds=(0, self.n_states),
                got=state,
            )
        elif state != self.state:
            self._say("switch", f"season {state + 1} is back")
        if state != self.state:
            self.state = state
            self._segments.append([state, 0])
            self.switch_step = self.t
            self.regret_since_switch[:] = 0.0
            self._since = np.zeros((len(self.labels), 0))
            self._said_takeover = False
        return state

    def new_state(self) -> int:
        """Switch to a state never seen (its theta: the environment stream's next draw)."""
        return self.switch(self.n_states)

    def advance(self, n_steps: int) -> dict:
        """Play ``n_steps`` more steps (rounded up to whole batches) of every contestant in
        the current state; returns {label: ChunkOutcome} of those steps."""
        n_steps = _check_int("steps", n_steps, 1, LIMITS["horizon"])
        B = self._base.batch_size
        assert isinstance(B, int)  # one batch size: __init__ refuses a list
        n = -(-n_steps // B) * B
        rnd = self._env.next_round(n, states=np.full(n, self.state, dtype=np.int64))
        ends = np.arange(B - 1, n, B, dtype=np.int64)
        outs = {}
        rows = np.arange(n)
        best = rnd.expected.max(axis=1)
        rewards, regrets = np.empty((len(self.labels), n)), np.empty((len(self.labels), n))
        for i, (label, policy) in enumerate(zip(self.labels, self._policies)):
            out = play_round(policy, rnd, ends)
            outs[label] = out
            rewards[i] = out.reward
            regrets[i] = best - rnd.expected[rows, out.arm]
            if self.record:
                self._full[label].append((out.arm, out.reward))
            if label == self.featured:
                self._follow(out, self.t)
        steps = self.t + rows
        self.total_reward += rewards.sum(axis=1)
        self.total_regret += regrets.sum(axis=1)
        self.regret_since_switch += regrets.sum(axis=1)
        W = self.window
        self._steps = _keep(self._steps, steps, W)
        self._state = _keep(self._state, rnd.state, W)
        self._reward = _keep(self._reward, rewards, W)
        self._since = _keep(self._since, regrets, W)
        self._segments[-1][1] += n
        self.t += n
        return outs

    # -- what happened inside the featured All-Season ----------------------------------------
    def _say(self, kind: str, text: str, step: int | None = None) -> None:
        self.ticker.append(Ticker(self.t if step is None else step, kind, text))

    def _follow(self, out, t0: int) -> None:
        """Read the featured All-Season's weights and events into the ribbon and the ticker."""
        for ev in out.events:
            if ev.kind == "prune":
                self._held_until.pop(ev.bandit, None)
                self._say(
                    "prune", f"bandit {ev.bandit} pruned (closest to bandit {ev.other})", ev.step
                )
            elif ev.kind == "spawn":
                self._say("spawn", f"bandit {ev.bandit} spawned from the shadow", ev.step)
        if out.weights is None:
            return
        rows = np.arange(len(out.batch_end))
        top = np.argmax(out.weights, axis=1)
        ids, w = out.weight_ids[rows, top], out.weights[rows, top]
        steps = out.batch_end + t0
        self._top = _keep(self._top, np.vstack([steps, ids, w]).astype(float), self.window)
        for step, bid in zip(steps.tolist(), ids.tolist()):
            if bid != self._holder:
                if bid == 0 and not self._said_takeover:
                    self._said_takeover = True
                    self._say(
                        "shadow",
                        f"the shadow took over, {step - self.switch_step + 1} "
                        "steps after the switch",
                        step,
                    )
                elif bid != 0 and bid in self._held_until:
                    gap = step - self._held_until[bid]
                    if gap >= RETURN_GAP:
                        self._say("back", f"bandit {bid} is back after {gap:,} steps", step)
                self._holder = bid
            if bid != 0:
                self._held_until[bid] = step

    # -- what the figures draw ---------------------------------------------------------------
    def frame(self) -> LiveFrame:
        """The rolling windows as a :class:`LiveFrame` (copies: safe to keep)."""
        N = self.rate_window
        c = np.cumsum(np.pad(self._reward, ((0, 0), (1, 0))), axis=1)
        n = self._reward.shape[1]
        lo = np.maximum(np.arange(1, n + 1) - N, 0)
        counts = np.arange(1, n + 1) - lo
        rate = (c[:, 1:] - c[:, lo]) / np.maximum(counts, 1)
        top = self._top
        return LiveFrame(
            self.labels,
            self._steps.copy(),
            self._state.copy(),
            self._reward.copy(),
            rate,
            self.regret_since_switch.copy(),
            np.cumsum(self._since, axis=1),
            self.switch_step,
            top[0].astype(np.int64),
            top[1].astype(np.int64),
            top[2].copy(),
            self.featured,
            self.t,
            self.state,
            self.n_states,
            tuple(self.ticker),
        )

    # -- the show as a scenario --------------------------------------------------------------
    def schedule(self) -> tuple[tuple[int, int], ...]:
        """The states actually played: (state, length) segments, in order."""
        out: list[list[int]] = []
        for s, n in self._segments:
            if n == 0:
                continue
            if out and out[-1][0] == s:
                out[-1][1] += n
            else:
                out.append([s, n])
        return tuple((s, n) for s, n in out)

    def scenario(self) -> Scenario:
        """The show as a scenario (custom pattern = the schedule; same environment, seed);
        SpecError if nothing was played yet or the show is over the scenario limits."""
        if self.t == 0:
            raise SpecError("segments", "nothing was played yet")
        sc = self._base
        return Scenario(
            segments=self.schedule(),
            d=sc.d,
            n_arms=sc.n_arms,
            sigma2=sc.sigma2,
            batch_size=sc.batch_size,
            seed=sc.seed,
            preset="custom",
        )

    def race(self) -> Race:
        """The race whose :func:`run_race` replays this show, decision for decision."""
        return Race(self.scenario(), self.specs, 1)

    def arms(self, label: str) -> np.ndarray:
        """Every arm a contestant played (``record=True`` only; for checks)."""
        return self._recorded(label, 0)

    def rewards(self, label: str) -> np.ndarray:
        """Every reward a contestant got (``record=True`` only; for checks)."""
        return self._recorded(label, 1)

    def _recorded(self, label: str, i: int) -> np.ndarray:
        if not self.record:
            raise ValueError("a LiveRun keeps full traces only with record=True")
        parts = [p[i] for p in self._full[label]]
        return np.concatenate(parts) if parts else np.zeros(0)


__all__ = ["LiveRun", "LiveFrame", "Ticker", "LIVE_POLICIES", "MAX_STATES", "WINDOW", "RATE_WINDOW"]
