"""The agent a service embeds: one decision at a time with its probability, rewards as they
come, the paper's batch update, expiry, and a state of plain data.

Engines. The LinTS family (``lints``, ``sw-lints``, ``d-lints``) and All-Season
(``allseason-sw``, ``allseason-disc``, ``allseason-sw-printed``) run on the compiled kernels'
own state (:mod:`allseason.kernels`): a decision is :func:`~allseason.kernels.agent.decide_step`
(the runner's choice of bandit and Thompson step), a batch update is
:func:`~allseason.kernels.allseason.allseason_batch` or
:func:`~allseason.kernels.lints.lints_batch`, the very functions the race's chunk kernels call.
Every other registered contestant (random, BoB, DenBand, D-LinUCB) runs through its plain
``_select``/``update`` (``engine="plain"`` forces that path for any policy; the tests check
that both paths make the same decisions).

The batch rule (the runner's): a batch update runs after every ``batch_size`` resolved
rewards, or when the caller says :meth:`Agent.end_batch`. Decisions made meanwhile all use
the state of the last update (as the steps of a batch do in the race). A reward may come
late and out of order: it joins its stored decision, and the batch is learnt in the order
the rewards were resolved. For All-Season, Algorithm 1 on that batch: a spawn if the shadow
played one of its decisions, the shadow learns them all, each base bandit the ones it
played, prune, reweight. A decision whose base bandit has been pruned since is learnt by the
shadow alone (its player is gone; giving it to another bandit would teach that bandit a
step it did not choose).

Expiry: :meth:`Agent.expire` resolves decisions older than ``horizon`` seconds;
``on_expire="drop"`` forgets them (nothing is learnt: the estimate is that of the decisions
whose rewards came, biased if a missing reward is not missing at random, e.g. no click
means no event), ``"default"`` learns ``default_reward`` for them (right when silence means
that reward, e.g. 0 for no click; otherwise it pulls every estimate towards it). The open
decisions are capped at ``max_open``: above it the oldest expires first, by the same rule.

Draws: ``draws="event"`` (default) keys each decision's random numbers by (seed, event id)
(:mod:`.draws`): the same state and event id give the same decision. ``draws="stream"``
takes them from the policy's own two streams in call order, as the runner does, so that an
agent driven through decide/learn on a race's rounds makes the race's decisions, step for
step.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..defaults import default_params
from ..errors import SpecError, show
from ..policies import AllSeason, LinTS, make_policy, policy_class, role
from . import compiled as _compiled
from . import hot as _hot
from . import inputs as _inputs_mod
from . import plain as _plain
from . import state as _state
from .draws import key_hasher, seed_text
from .records import (
    COUNT_NAMES,
    N_MC,
    Decision,
    UnknownEvent,
    _positive_int,
    check_expiry,
    check_labels,
)
from .state import declared_values


class Agent:
    """A bandit a service embeds: :meth:`decide`, :meth:`learn`, :meth:`end_batch`,
    :meth:`expire`, :meth:`to_state` / :meth:`from_state`, :meth:`save` / :meth:`load`.

    Parameters
    ----------
    policy : str, default "allseason-sw"
        Any registered contestant (``api.policy_names()`` but the oracles, which need the
        true seasons). Hyperparameters not given take the default race's
        (:func:`allseason.defaults.default_params`), then the class's.
    d : int
        Length of an arm's row (arms mode) or of the context (context mode).
    n_arms : int, optional
        Context mode with K arms labelled "0".."K-1": arm k's row is e_k (x) [c, 1].
    arms : sequence of str, optional
        Context mode with these arm labels (K = their number).
    seed : int or numpy.random.SeedSequence, default 0
        The root of the draws.
    batch_size : int, default 1
        B: a batch update after every B resolved rewards.
    max_open : int, default 100_000
        Open decisions kept; above it the oldest expires first.
    horizon : float, optional
        Seconds after which :meth:`expire` resolves a decision (None: never).
    on_expire : {"drop", "default"}, default "drop"
        What an expired decision becomes: forgotten, or learnt with ``default_reward``.
    default_reward : float, default 0.0
    propensities : bool, default True
        Compute pi at each decision (False: the fast path, ``pi_method="skipped"``).
    draws : {"event", "stream"}, default "event"
        Draws keyed by (seed, event id), or the policy's streams in call order.
    engine : {"auto", "compiled", "plain"}, default "auto"
        The compiled single step (LinTS family, All-Season) or the policy's plain path.
    n_mc : int, default 4096
        Monte Carlo draws of pi for dense arms with K > 2.
    **hyperparameters
        The policy's own (``tau``, ``n_max``, ``lam``, ``sigma2``, ...).
    """

    # the engines and the state: functions of the agent, in their own modules
    _setup_engine = _compiled.setup_engine
    _bind_state = _compiled.bind_state
    _work = _compiled.work
    _decide_compiled = _compiled.decide_compiled
    _learn_compiled = _compiled.learn_compiled
    _flush_compiled = _compiled.flush_compiled
    _bandit_rows = _compiled.bandit_rows
    _grow_buffer = _compiled.grow_buffer
    _row_of = _compiled.row_of
    _state_tuple = property(_compiled.state_tuple)
    _track = _compiled.track
    _dense_rows = _plain.dense_rows
    _decide_plain = _plain.decide_plain
    _inputs = _inputs_mod.inputs
    _plain_probs = _plain.plain_probs
    _update_plain = _plain.update_plain
    to_state = _state.to_state
    from_state = classmethod(_state.from_state)

    # set by the engine (.compiled.setup_engine / bind_state)
    _work_by_k: dict
    _hot_by_k: dict
    _free_rows: list  # the free slots of the open decisions' rows (the hot path's)
    _n_pending: int
    _event_fast: bool
    _engine_compiled: bool

    def __init__(
        self,
        policy: str = "allseason-sw",
        *,
        d: int,
        n_arms: int | None = None,
        arms=None,
        seed=0,
        batch_size: int = 1,
        max_open: int = 100_000,
        horizon: float | None = None,
        on_expire: str = "drop",
        default_reward: float = 0.0,
        propensities: bool = True,
        draws: str = "event",
        engine: str = "auto",
        n_mc: int = N_MC,
        **hyperparameters,
    ):
        name = str(policy)
        cls = policy_class(name)  # SpecError naming an unknown policy
        if role(cls).oracle:
            raise SpecError(
                "policy", f"{name} is told the true seasons, which no deployed agent knows"
            )
        self.policy_name = name
        self.d = _positive_int("d", d, 1, 100_000)
        self.labels = labels = check_labels(n_arms, arms)
        self.context_mode = labels is not None
        self._labels: list[str] = labels or []
        self.n_arms = len(labels) if labels else None
        self.seed = seed
        self._seed_text = seed_text(seed)
        self._hasher = key_hasher(self._seed_text)
        self.batch_size = _positive_int("batch_size", batch_size, 1, 10**7)
        self.max_open = _positive_int("max_open", max_open, 1, 10**8)
        expiry = check_expiry(horizon, on_expire, default_reward)
        self.horizon, self.on_expire, self.default_reward = expiry
        self.propensities = bool(propensities)
        if draws not in ("event", "stream"):
            raise SpecError("draws", f"must be 'event' or 'stream', got {show(draws)}")
        self.draws = draws
        if engine not in ("auto", "compiled", "plain"):
            raise SpecError("engine", f"must be 'auto', 'compiled' or 'plain', got {show(engine)}")
        self.n_mc = _positive_int("n_mc", n_mc, 16, 10**7)
        params = {**default_params(name), **hyperparameters}
        # context mode: one block of p = d + 1 (context and a constant 1) per arm
        self.p = self.d + 1 if self.context_mode else self.d
        self._cshape = (self.d,)
        self.D = self.n_arms * self.p if self.context_mode else self.d
        self.policy = make_policy(name, self.D, rng=np.random.default_rng(seed), **params)
        self.hyperparameters = declared_values(self.policy)
        compiled_ok = isinstance(self.policy, LinTS | AllSeason)
        if engine == "compiled" and not compiled_ok:
            raise SpecError("engine", f"{name} has no compiled single step (use 'auto' or 'plain')")
        self.engine = "compiled" if (engine != "plain" and compiled_ok) else "plain"
        self.model_version = 0
        self.parent_version = None
        self.counts = dict.fromkeys(COUNT_NAMES, 0)
        self._open: OrderedDict = OrderedDict()  # event -> (x, g, bandit, t, version, decision)
        self._resolved: OrderedDict = OrderedDict()  # recent resolved events, oldest first
        self._pending: list = []  # resolved (x, g, bandit, reward), waiting for the batch
        self._listeners: list = []
        self._born: dict[int, int] = {0: 0, 1: 0} if isinstance(self.policy, AllSeason) else {}
        self._nobs: dict[int, int] = {0: 0, 1: 0} if isinstance(self.policy, AllSeason) else {}
        self._setup_engine()

    # -- the engine --------------------------------------------------------------------------

    # -- decisions ---------------------------------------------------------------------------
    decide = _hot.decide

    def decide_batch(self, arms=None, *, contexts=None, event_ids, t=None) -> list[Decision]:
        """Several decisions, in order (each as :meth:`decide` would make it).

        Parameters
        ----------
        arms : sequence of arrays (K_i, d), or array (n, K, d)
            Arms mode.
        contexts : array_like, shape (n, d)
            Context mode.
        event_ids : sequence of str or int, length n
        t : float or sequence of float, optional

        Returns
        -------
        list of Decision
        """
        ids = list(event_ids)
        items = arms if contexts is None else contexts
        if items is None:
            raise SpecError("decide_batch", "pass arms=[X, ...] or contexts=C")
        if len(items) != len(ids):
            raise SpecError(
                "event_ids", f"must be one per decision, got {len(ids)} for {len(items)}"
            )
        ts = t if isinstance(t, list | tuple | np.ndarray) else [t] * len(ids)
        if contexts is None:
            return [self.decide(x, event_id=e, t=ti) for x, e, ti in zip(items, ids, ts)]
        return [self.decide(context=c, event_id=e, t=ti) for c, e, ti in zip(items, ids, ts)]

    # -- rewards -----------------------------------------------------------------------------
    learn = _hot.learn

    def _resolve(self, event, entry, r, how) -> None:
        self._remember(event)
        for fn in self._listeners:
            fn(how, entry[4], r)
        if self.engine == "compiled":
            self._learn_compiled(entry, r)
            return
        x, g, bandit, t, rec = entry
        self._pending.append((x, g, bandit, r))
        if len(self._pending) >= self.batch_size:
            self._batch_update()

    def _remember(self, event) -> None:
        # an OrderedDict, the oldest first: popitem(last=False) is O(1) (a dict's first key
        # after many deletions at its front is found by a scan: 70 us at 100,000 entries)
        res = self._resolved
        res[event] = None
        if len(res) > self.max_open:
            res.popitem(last=False)

    def end_batch(self) -> bool:
        """Run the batch update now, if a resolved reward waits.

        Returns
        -------
        bool
            Whether an update ran.
        """
        if self.engine == "compiled":
            if not self._n_pending:
                return False
            self._flush_compiled()
            return True
        if not self._pending:
            return False
        self._batch_update()
        return True

    def expire(self, now: float) -> int:
        """Resolve the decisions older than ``horizon`` seconds (decided before now - horizon):
        learnt with ``default_reward`` (``on_expire="default"``) or dropped.

        Parameters
        ----------
        now : float
            Unix seconds.

        Returns
        -------
        int
            How many expired.
        """
        if self.horizon is None:
            return 0
        cutoff = float(now) - self.horizon
        old = [e for e, entry in self._open.items() if entry[3] < cutoff]
        for e in old:
            self._expire_one(e)
        return len(old)

    def _expire_oldest(self) -> None:
        self._expire_one(next(iter(self._open)))

    def _expire_one(self, event) -> None:
        entry = self._open.pop(event)
        self.counts["expired"] += 1
        if self.on_expire == "drop":
            if type(entry[0]) is int:  # its row's slot, free again
                self._free_rows.append(entry[0])
            self.counts["dropped"] += 1
            self._remember(event)
            for fn in self._listeners:
                fn("dropped", entry[4], None)
            return
        self._resolve(event, entry, self.default_reward, "expired")

    # -- the batch update --------------------------------------------------------------------
    def _batch_update(self) -> None:
        pending, self._pending = self._pending, []
        n = len(pending)
        xs = np.empty((n, self.p))
        gs = np.empty(n, dtype=np.int64)
        rs = np.empty(n)
        bandits = np.empty(n, dtype=np.int64)
        for i, (x, g, b, r) in enumerate(pending):
            xs[i], gs[i], rs[i], bandits[i] = x, g, r, b
        step = self.counts["decisions"] - 1
        events = self._update_plain(gs, xs, rs, bandits, step)
        self.model_version += 1
        self.counts["batches"] += 1
        for ev in events:
            self.counts["spawned" if ev["kind"] == "spawn" else "pruned"] += 1
        self._track(events, bandits)
        for fn in self._listeners:
            fn("batch", self, events)

    # -- what it is --------------------------------------------------------------------------
    @property
    def n_open(self) -> int:
        """Decisions waiting for a reward."""
        return len(self._open)

    def weights(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(ids, normalised weights) of All-Season's live bandits; None for other policies."""
        return self.policy.weights()

    summary = _state.summary

    def add_listener(self, fn) -> None:
        """Call ``fn(kind, ...)`` at each decision ("decide", rec), resolution ("learned" /
        "expired", rec, reward; "dropped", rec, None) and batch update ("batch", agent,
        events): how a decision log (:mod:`.decision_log`) follows the agent."""
        self._listeners.append(fn)

    def attach_log(self, folder):
        """Append every resolved decision and every batch update to the decision log in
        ``folder`` (:class:`.decision_log.DecisionLog`: ``decisions.csv``, ``batches.jsonl``),
        from now on; returns the log (``close()`` it when done)."""
        from .decision_log import DecisionLog

        log = DecisionLog(folder, n_context=self.d if self.context_mode else 0)
        log.follow(self)
        return log

    # -- state -------------------------------------------------------------------------------

    def save(self, path) -> None:
        """Write the state to ``path`` atomically (:func:`.statefile.write_state`)."""
        from .statefile import write_state

        manifest, arrays = self.to_state()
        write_state(path, manifest, arrays)

    @classmethod
    def load(cls, path, **read_options) -> Agent:
        """The agent saved at ``path`` (:func:`.statefile.read_state`, checked)."""
        from .statefile import read_state

        manifest, arrays = read_state(path, **read_options)
        return cls.from_state(manifest, arrays)

    def copy(self) -> Agent:
        """An independent copy (through :meth:`to_state`)."""
        return Agent.from_state(*self.to_state())

    # -- a decision another copy of this agent made (a service's readers) --------------------
    def adopt(self, decision, arms=None, *, context=None) -> Decision:
        """Hold open a decision another copy of this agent made (a reader answering from a
        snapshot) as if this agent had made it (same arm, bandit, propensities and model
        version), and return it: its reward is then learnt like any other (:mod:`.adopt`).

        Parameters
        ----------
        decision : Decision or dict
            The record (:meth:`Decision.to_dict` for a dict).
        arms, context : array_like
            What it was decided on, as given to :meth:`decide`.

        Raises
        ------
        SpecError
            One line, nothing changed: an event id open or resolved here, a model version
            newer than this agent's, an arm, label, bandit or propensity that does not fit.
        """
        from .adopt import adopt_decision

        return adopt_decision(self, decision, arms, context)


__all__ = ["Agent", "Decision", "UnknownEvent"]
