"""The agent's hot path: :meth:`Agent.decide` and :meth:`Agent.learn` (bound as its methods).

The common case of the compiled engine (keyed draws, no pi to compute, float64 inputs in
the layout the compiled step was built for, no listener) runs inline here: the input's
type and layout checked by a few attribute reads (its values by the compiled step itself),
one compiled call (:mod:`allseason.kernels.agent_hot`: it holds the GIL, computes the
event's key itself (an ASCII id; :mod:`allseason.kernels.eventkey`), reads a flat pack given
by its address and returns one int), the record. The played row stays in a slot of one
array while the decision is open (the open entry holds the slot; ``Agent._row_of`` reads
it), which the learn call reads by its index. Every other case takes the general path,
which :mod:`tests.agent.test_agent_speed` checks against this one decision for decision.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..errors import SpecError, show
from ..kernels.agent_hot import ARM_BITS
from . import compiled as _compiled
from .draws import event_text
from .records import Decision, UnknownEvent, _reward

_F64 = np.dtype(np.float64)  # the native float64 (a numpy singleton: ``is`` compares)
_NP_FLOAT = np.float64  # module globals read once (an attribute lookup less a call)
_isfinite = math.isfinite
_NOT_FINITE = "must be finite numbers (no NaN, no inf)"
_N_INDEX_TEXT = 1024
_INDEX_TEXT = tuple(str(k) for k in range(_N_INDEX_TEXT))  # arms mode's labels, made once
_new = tuple.__new__  # a Decision of its fields in one C call (Decision._make)
_ARM_BITS = ARM_BITS
_SKIPPED = (None, "skipped", None)  # pi, pi_method, propensity (with pi: one arm)
_ARM_MASK = (1 << ARM_BITS) - 1


def decide(self, arms=None, *, context=None, event_id, t: float | None = None) -> Decision:
    """One decision.

    Parameters
    ----------
    arms : array_like, shape (K, d)
        Arms mode: the candidate arms (K may change from call to call).
    context : array_like, shape (d,)
        Context mode: the context (arm k's row is e_k (x) [c, 1]).
    event_id : str or int
        The event's id (unique among open decisions): its reward comes back with it.
    t : float, optional
        Decision time, Unix seconds (default: now); :meth:`expire` compares it.

    Returns
    -------
    Decision

    Raises
    ------
    SpecError
        A bad input, named, in one line; an event id still open.
    """
    # the common case first (a short str id, a float t); anything else is checked fully
    short = type(event_id) is str and 0 < len(event_id) <= 200
    event = event_id if short else event_text(event_id)
    open_ = self._open
    if event in open_:
        raise SpecError("event_id", f"{show(event)} is still open: one decision per event")
    # float64 in C order as it is (the step checks the values); anything else: a checked copy
    if self.context_mode:
        c = context
        ok = self._kernel_checks and arms is None and type(c) is np.ndarray and c.dtype is _F64
        if ok and c.shape == self._cshape:
            self._ctx1_row[...] = c  # a view of ctx1[0, :d]
            ctx, K = self._ctx1, self.n_arms
        else:
            ctx, K = self._inputs(arms, context)
    else:
        X = arms  # flags.carray: C order, aligned, writeable
        ok = type(X) is np.ndarray and X.dtype is _F64 and context is None and self._kernel_checks
        shape: tuple[int, ...] = X.shape if ok else ()
        if len(shape) == 2 and shape[1] == self.d and 0 < shape[0] <= 100_000 and X.flags.carray:
            ctx, K = X, shape[0]
        else:
            ctx, K = self._inputs(arms, context)
    t = t if type(t) is float else time.time() if t is None else float(t)
    if len(open_) >= self.max_open:
        self._expire_oldest()
    # the hot path's pack, made for a K whose decisions take it (pi may be switched on later)
    hot = None if self.propensities else self._hot_by_k.get(K)
    if hot is None:
        got = self._work_by_k.get(K)
        pack, work, pi_mode = got if got is not None else self._work(K)
        if self._event_fast and (pi_mode <= 0 or not self.propensities):
            hot = _compiled.hot_pack(self, K)
        if hot is None:
            return _decide_general(self, ctx, K, event, t, pack, work, pi_mode)
    # the hot path (compiled, keyed draws, the event's key too, no pi to compute)
    free = self._free_rows
    if not free:  # all rows taken: doubled (the packs are made again)
        _compiled.grow_rows(self)
        hot = _compiled.hot_pack(self, K)  # the same numba type as before
    slot = free.pop()  # the decision's row, while it is open
    code = self._hot_ep(ctx, event, slot, hot, self._hot_ty)
    if code < 0:
        return _not_taken(self, code, slot, ctx, K, event, t)
    arm, bandit = code & _ARM_MASK, (code >> _ARM_BITS) - 1  # khot.unpack_decision
    self.policy.t += 1
    pi, method, p = (np.ones(1), "deterministic", 1.0) if self.propensities else _SKIPPED
    if self.context_mode:
        g, label = arm, self._labels[arm]
    else:
        g, label = 0, _INDEX_TEXT[arm] if arm < _N_INDEX_TEXT else str(arm)
    rec = _new(Decision, (event, arm, label, p, pi, method, 0.0, self.model_version, bandit, t))
    open_[event] = (slot, g, bandit, t, rec)  # the played row is the slot's (ctx[arm] or ctx[0])
    self.counts["decisions"] += 1
    for fn in self._listeners:
        fn("decide", rec)
    return rec


def _not_taken(self, code, slot, ctx, K, event, t) -> Decision:
    """The compiled decide's refusal (``code`` < 0): its row slot is freed; an event id beyond
    ASCII (-2) is keyed by hashlib on the general step; anything else is a non-finite input."""
    self._free_rows.append(slot)
    if code != -2:
        raise SpecError("context" if self.context_mode else "arms", _NOT_FINITE)
    got = self._work_by_k.get(K)
    pack, work, pi_mode = got if got is not None else self._work(K)
    return _decide_general(self, ctx, K, event, t, pack, work, pi_mode)


def _decide_general(self, ctx, K, event, t, pack, work, pi_mode) -> Decision:
    """A decision with pi, by the stream draws or on the plain path."""
    if pack is not None:  # the compiled engine
        arm, bandit, pi, method, stderr = self._decide_compiled(ctx, pack, work, pi_mode, event)
    else:
        arm, bandit, pi, method, stderr = self._decide_plain(ctx, event, K)
    if method == "monte-carlo":
        # The decision is one more draw from the same distribution, independent of the
        # n_mc draws (keyed apart): counting it keeps the estimate unbiased and the played
        # arm's propensity at least 1 / (n_mc + 1), never 0 (IPS divides by it).
        n = self.n_mc
        pi = pi * (n / (n + 1.0))
        pi[arm] += 1.0 / (n + 1.0)
        stderr = float(np.sqrt(np.max(pi * (1.0 - pi)) / (n + 1.0)))
    if self.context_mode:
        x, g, label = ctx[0].copy(), arm, self._labels[arm]
    else:
        x, g, label = ctx[arm].copy(), 0, str(arm)
    if pi is not None and (pack is None or method == "monte-carlo"):
        np.minimum(pi, 1.0, out=pi)  # the weights sum to 1 up to rounding (the compiled
        # step clamps its exact pi itself)
    p = None if pi is None else float(pi[arm])
    rec = Decision(event, arm, label, p, pi, method, stderr, self.model_version, bandit, t)
    self._open[event] = (x, g, bandit, t, rec)
    self.counts["decisions"] += 1
    if self._listeners:
        for fn in self._listeners:
            fn("decide", rec)
    return rec


def learn(self, event_id, reward: float, t: float | None = None) -> str:
    """Join a reward to its decision; run the batch update once ``batch_size`` are in.

    Parameters
    ----------
    event_id : str or int
    reward : float
    t : float, optional
        When the reward came (for the log).

    Returns
    -------
    str
        "learned", or "duplicate" (a reward for an event already resolved: ignored).

    Raises
    ------
    UnknownEvent
        No decision for this event id (counted in ``counts["unknown"]``).
    SpecError
        A reward that is not a finite number.
    """
    event = event_id if type(event_id) is str else event_text(event_id)
    tr = type(reward)  # np.float64 is a float (the compiled call reads its double)
    r = reward if tr is float or tr is _NP_FLOAT else _reward(reward)
    if not _isfinite(r):
        raise SpecError("reward", f"must be a finite number, got {show(reward)}")
    entry = self._open.pop(event, None)
    counts = self.counts
    if entry is None:
        if event in self._resolved:
            counts["duplicates"] += 1
            return "duplicate"
        counts["unknown"] += 1
        raise UnknownEvent(event)
    counts["learned"] += 1
    if self._listeners or not self._engine_compiled:
        self._resolve(event, entry, float(r), "learned")
        return "learned"
    # the hot path, inline: _remember, then learn_compiled
    res = self._resolved
    res[event] = None
    if len(res) > self.max_open:
        res.popitem(last=False)
    got = self._learn_ep
    slot = entry[0]  # the row's slot (an int), or a row of its own
    if got[0] is not self.policy.kernel_state or got[1] is not self._buf or type(slot) is not int:
        self._learn_compiled(entry, r)
        return "learned"
    got_n = got[2](
        slot, entry[1], entry[2], r, self.batch_size, counts["decisions"] - 1, got[3], got[4]
    )
    if got_n != -2:
        self._free_rows.append(slot)  # the row is in the batch buffer
    if got_n == -1:
        self._n_pending += 1
    elif got_n == -2:  # the buffer is full (B > its first capacity): grown, then learnt
        self._learn_compiled(entry, r)
    elif got_n == 0:  # an update without events (after_batch, short)
        self._n_pending = 0
        self.model_version += 1
        counts["batches"] += 1
    else:
        _compiled.after_batch(self, got_n)
    return "learned"


__all__ = ["decide", "learn"]
