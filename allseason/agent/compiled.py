"""The agent's compiled engine (the LinTS family and All-Season): the kernel state of the
policy, the views and workspaces the single step reads, a decision
(:func:`allseason.kernels.agent.decide_step`; without pi
:func:`allseason.kernels.agent_hot.decide_hot`) and a batch update
(:func:`~allseason.kernels.allseason.allseason_batch`,
:func:`~allseason.kernels.lints.lints_batch`: the race's own, called by
:mod:`allseason.kernels.agent_hot`'s learn calls). Functions of the agent (bound as its
methods)."""

from __future__ import annotations

import math

import numba
import numpy as np

from .. import kernels
from ..errors import SpecError
from ..kernels import agent as kagent
from ..kernels import agent_hot as khot
from ..kernels.types import plain
from ..policies import AllSeason
from .draws import key_prefix

_ROWS = 1024  # the open decisions' rows at first (doubled when all are taken)


def setup_engine(self) -> None:
    """Bind the compiled engine: the policy's kernel state, its blocks and workspaces."""
    pol = self.policy
    G = self.n_arms if self.context_mode else 1
    self.G = G
    p = self.p
    self._ctx1 = np.zeros((1, p))
    self._ctx1_row = self._ctx1[0, : self.d]
    if self.context_mode:
        self._ctx1[0, -1] = 1.0
        self._block = np.arange(G, dtype=np.int64)
        self._cidx = np.zeros(G, dtype=np.int64)
    self._work_by_k = {}
    self._hot_by_k = {}
    # the compiled step checks the inputs' values itself; decide's inline hot path
    self._kernel_checks = self._event_fast = self.engine == "compiled" and self.draws == "event"
    self._engine_compiled = self.engine == "compiled"  # learn's hot path (with no listener)
    if self.engine != "compiled":
        # 2-D, as the compiled steps' z: fill_draws' signature compiled and cached for them
        self._zbuf = np.empty((1, self.D))
        return
    pol._init_kernel_state(G, G)  # n_arms: read by BoB and DenBand only, never compiled here
    self._is_allseason = isinstance(pol, AllSeason)
    self._tuple_params = plain(pol._kernel_params())
    self._tmp = np.empty(p)
    cap = min(self.batch_size, 1024)
    # the batch buffer; last, the open decisions' rows (decide_hot writes the row played to
    # the decision's slot, the learn call reads it there: no copy, no array passed)
    self._buf = (
        np.empty((cap, p)),
        np.empty(cap, dtype=np.int64),
        np.empty(cap),
        np.empty(cap, dtype=np.int64),
        np.empty(cap, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
        np.empty((_ROWS, p)),
    )
    self._free_rows = list(range(_ROWS - 1, 0, -1))  # slot 0: a row learnt from an array
    self._n_pending = 0
    if self._is_allseason:
        S = pol.kernel_state.ids.shape[0]
        window = pol.tau if pol._shadow_mode == kernels.WINDOW else 0
        self._track_arrays = (
            np.zeros(S, dtype=np.int64),
            np.zeros(S, dtype=np.int64),
            np.array([0, window], dtype=np.int64),
        )
    self._bind_state()


def bind_state(self) -> None:
    """(Re)build the views and tuples the compiled calls take from the kernel state."""
    f = self.policy.kernel_state
    G, p = self.G, self.p
    if self._is_allseason:
        S = f.mu.shape[0]
        Lt = np.zeros((G, p, p))
        self._bank = (f.L, f.mu, Lt, f.logw, f.alive, False)
        self._ll = np.empty(S)
        self._lwork = (self._ll, self._tmp)
        self._events = tuple(kernels.new_events(2))
    else:
        S = 1
        sandwich = bool(self.policy._sandwich())
        Lt = f.Lt if sandwich else np.zeros((G, p, p))
        self._bank = (
            f.L[None],
            f.mu[None],
            Lt,
            np.zeros(1),
            np.ones(1, dtype=np.bool_),
            sandwich,
        )
    self._S = S
    self._ids = f.ids if self._is_allseason else np.full(1, -1, dtype=np.int64)
    self._z = np.empty((G, p))
    self._theta = np.empty((G, p))
    self._tmp2 = np.empty(p)
    self._w = np.empty(S)
    # the log weights and live slots self._w was computed from (decide_hot's check)
    self._wfrom = (np.empty(S), np.zeros(S, dtype=np.bool_), np.zeros(1, dtype=np.int64))
    self._work_by_k = {}
    self._hot_by_k = {}
    self._decide_ep = None  # the compiled entry points, looked up at the first call
    self._hot_ep = None
    self._hot_ty = None  # the numba type of the HotDecide packs (one per agent)
    # the packs whose addresses _hot_by_k holds, kept alive (the two are rebuilt together,
    # here, so no address outlives its pack); beyond 64 arm counts, the last one used
    self._hot_packs = []
    self._hot_spare = None
    # decide_hot's event keys: the seed's bytes, the state and block workspaces
    prefix = np.frombuffer(key_prefix(self._seed_text), dtype=np.uint8).copy()
    self._key_work = (prefix, np.empty(8, dtype=np.uint64), np.empty(16, dtype=np.uint64))
    self._learn_ep = (None, None, None, None, None, None)


def entry(fn, args):
    """``fn``'s compiled entry point for the types of ``args`` (compiled or loaded from the
    cache if need be). Calling it skips the dispatcher's typing of every argument (about
    0.1 us an array); the caller must pass arguments of exactly these types."""
    if not hasattr(fn, "compile"):  # NUMBA_DISABLE_JIT: the plain function
        return fn
    return fn.compile(tuple(fn.typeof_pyval(a) for a in args))


def work(self, K: int):
    """The per-K arguments of a decision, made once per K: (pack, work, pi_mode), the
    compiled step's :class:`~allseason.kernels.agent.DecidePack` (None on the plain path),
    its workspace, and how pi is had for K arms (-1: one arm)."""
    got = self._work_by_k.get(K)
    if got is None:
        if self.context_mode:
            block, cidx = self._block, self._cidx
            pi_mode = kagent.PI_DISJOINT
        else:
            block, cidx = np.zeros(K, dtype=np.int64), np.arange(K, dtype=np.int64)
            pi_mode = kagent.PI_DENSE2 if K == 2 else kagent.PI_MC if K > 2 else -1
        pack = work = None
        if self.engine == "compiled":
            work = (
                self._z,
                self._theta,
                self._tmp,
                self._tmp2,
                self._w,
                np.empty(K),
                np.empty((1, K)),
                np.empty((1, K)),
                np.ones((1, K), dtype=np.int64),
                np.empty((1, K)),
            )
            pack = kagent.decide_pack(block, cidx, self._bank, work, self._ids)
            if self._decide_ep is None:  # the entry point, for the types every call passes
                args = (self._ctx1, 1, -1.0, 0, self.n_mc, pack)
                self._decide_ep = entry(kagent.decide_packed, args)
        got = (pack, work, pi_mode)
        if len(self._work_by_k) < 64:
            self._work_by_k[K] = got
    return got


def hot_pack(self, K: int):
    """The address of the :class:`~allseason.kernels.agent_hot.HotDecide` of a decision of K
    arms without pi (made once per K and kept in ``_hot_packs``;
    :func:`allseason.kernels.agent_hot.decide_hot`'s entry point, for ``_hot_ty``, too), or
    None for a pack of another numba type than the first (never seen: the general path)."""
    got = self._hot_by_k.get(K)
    if got is None:
        if self.context_mode:
            block, cidx = self._block, self._cidx
        else:
            block, cidx = np.zeros(K, dtype=np.int64), np.arange(K, dtype=np.int64)
        L, mu, Lt, logw, alive, sandwich = self._bank
        wlogw, walive, wok = self._wfrom
        got = khot.hot_decide_pack(
            block, cidx, L, mu, Lt, logw, alive, sandwich, self._ids,
            self._z, self._theta, self._tmp, self._tmp2, self._w, wlogw, walive, wok, self._buf[6],
            *self._key_work,
        )  # fmt: skip
        ty = numba.typeof(got)
        if self._hot_ep is None:
            self._hot_ty = ty
            self._hot_ep = entry(khot.decide_hot, (self._ctx1, "e", 0, 0, ty))
        elif ty != self._hot_ty:  # decide_hot's entry point reads the pack as _hot_ty
            return None
        pack, got = got, khot.pack_address(got)
        if len(self._hot_by_k) < 64:
            self._hot_packs.append(pack)  # alive while its address is used
            self._hot_by_k[K] = got
        else:  # used once: alive until the next one
            self._hot_spare = pack
    return got


def decide_compiled(self, ctx, pack, work, pi_mode, event):
    """One decision by the compiled single step: the draws of ``event``, then the arm, the
    player and pi (:func:`allseason.kernels.agent.decide_packed`)."""
    if self.draws == "event":  # event_key, inline
        h = self._hasher.copy()
        h.update(event.encode())
        key, u = int.from_bytes(h.digest(), "little") >> 1, -1.0
    else:
        pol = self.policy
        key, u = 0, pol._rng_u.random()
        self._z[...] = pol._rng_z.standard_normal(self.D).reshape(self._z.shape)
    mode = pi_mode if self.propensities and pi_mode >= 0 else 0
    # the entry point (made by work(); ctx: float64, 2-D, C order, aligned, writeable)
    arm, bandit, stderr = self._decide_ep(ctx, key, u, mode, self.n_mc, pack)
    if arm < 0:
        raise SpecError(
            "arms" if not self.context_mode else "context",
            "must be finite numbers (no NaN, no inf)",
        )
    self.policy.t += 1
    if not mode:
        if pi_mode < 0 and self.propensities:  # one arm
            return arm, bandit, np.ones(1), "deterministic", 0.0
        return arm, bandit, None, "skipped", 0.0
    pi = work[5].copy()
    if pi_mode == kagent.PI_MC:
        method = "monte-carlo"
    else:
        method = "exact-mixture" if self._is_allseason else "exact-quadrature"
    return arm, bandit, pi, method, stderr


def state_tuple(self):
    """The policy's kernel state as the compiled step reads it (cached while unchanged)."""
    f = self.policy.kernel_state
    cached = self.__dict__.get("_state_cache")
    if cached is None or cached[0] is not f:
        cached = (f, plain(f))
        self._state_cache = cached
    return cached[1]


def track(self, events, bandits) -> None:
    """n_obs and birth version of All-Season's bandits (for :meth:`summary`)."""
    if not self._nobs:
        return
    shadow_before = self._nobs.get(0, 0)
    for ev in events:
        if ev["kind"] == "spawn":
            self._nobs[ev["bandit"]] = shadow_before
            self._born[ev["bandit"]] = self.model_version
        else:
            self._nobs.pop(ev["bandit"], None)
            self._born.pop(ev["bandit"], None)
    for b in bandits.tolist():
        if b > 0 and b in self._nobs:
            self._nobs[b] += 1
    n0 = shadow_before + len(bandits)
    tau = getattr(self.policy, "tau", None)
    if self.policy._shadow_mode == kernels.WINDOW and tau is not None:
        n0 = min(n0, tau)
    self._nobs[0] = n0


def learn_compiled(self, entry, r) -> None:
    """A resolved decision into the batch buffer, the batch update once B wait (one call)."""
    n = self._n_pending
    if n >= self._buf[2].shape[0]:
        grow_buffer(self)
    got = self._learn_ep
    if got[0] is not self.policy.kernel_state or got[1] is not self._buf:
        got = _learn_entry(self)
    slot, g, bandit = entry[0], entry[1], entry[2]
    if type(slot) is not int:  # a row of its own (the general path, a loaded state)
        self._buf[6][0] = slot
        slot = 0
    res = got[2](slot, g, bandit, r, self.batch_size, self.counts["decisions"] - 1, got[3], got[4])
    if slot:
        self._free_rows.append(slot)
    if res < 0:
        self._n_pending = n + 1
    elif res == 0 and not self._listeners:  # an update without events (after_batch, short)
        self._n_pending = 0
        self.model_version += 1
        self.counts["batches"] += 1
    else:
        after_batch(self, res)


def flush_compiled(self) -> None:
    """The batch update on whatever waits (end_batch)."""
    got = self._learn_ep
    if got[0] is not self.policy.kernel_state or got[1] is not self._buf:
        got = _learn_entry(self)
    step = self.counts["decisions"] - 1
    after_batch(self, got[2](0, -1, -1, 0.0, 0, step, got[3], got[4]))


def _learn_entry(self):
    """The learn call's entry point and its pack, made again whenever the kernel state or the
    batch buffer is rebuilt: (kernel state, buffer, entry point, the pack's address, its numba
    type, the pack: kept alive while its address is used)."""
    f, buf = self.policy.kernel_state, self._buf
    state = self._state_tuple  # flat: each array one field (agent_hot's docstring)
    if self._is_allseason:
        M, L, b, mu, ids, logw, alive, counters, window, cache = state
        pack = khot.allseason_learn_pack(
            *buf, M, L, b, mu, ids, logw, alive, counters, *window, cache, self._events,
            self._tuple_params, *self._track_arrays, *self._lwork,
        )  # fmt: skip
        fn = khot.allseason_learn_hot
    else:
        M, L, b, mu, window, Mt, Lt, bt = state
        pack = khot.lints_learn_pack(
            *buf, M, L, b, mu, *window, Mt, Lt, bt, self._tuple_params, self._tmp
        )
        fn = khot.lints_learn_hot
    ty = numba.typeof(pack)
    ep = entry(fn, (0, 0, 0, 0.0, 1, 0, 0, ty))
    got = self._learn_ep = (f, buf, ep, khot.pack_address(pack), ty, pack)
    return got


def grow_buffer(self, room: int | None = None) -> None:
    """Double the batch buffer (or make room for ``room`` rows), keeping what waits."""
    old = self._buf
    cap = max(2 * old[2].shape[0], room or 0)
    new = tuple(np.empty((cap, *a.shape[1:]), dtype=a.dtype) for a in old[:5]) + old[5:]
    for a, b in zip(old[:5], new[:5]):
        b[: a.shape[0]] = a
    self._buf = new


def grow_rows(self) -> None:
    """Double the open decisions' rows (all slots taken), keeping them; the packs that read
    them are made again."""
    old = self._buf[6]
    cap = old.shape[0]
    new = np.empty((2 * cap, old.shape[1]))
    new[:cap] = old
    self._buf = self._buf[:6] + (new,)  # a new buffer tuple: the learn pack is made again
    self._free_rows.extend(range(2 * cap - 1, cap - 1, -1))
    self._hot_by_k = {}
    self._hot_packs = []


def row_of(self, x) -> np.ndarray:
    """An open decision's row: its own array, or a copy of its slot's row (an int)."""
    return self._buf[6][x].copy() if type(x) is int else x


def after_batch(self, n_events: int) -> None:
    """Versions, counts and events after a compiled batch update."""
    self._n_pending = 0
    self.model_version += 1
    self.counts["batches"] += 1
    events = []
    if n_events > 0:
        _, kind, bnd, other, value = self._events
        for i in range(n_events):
            k = kernels.EVENT_NAMES[int(kind[i])]
            self.counts["spawned" if k == "spawn" else "pruned"] += 1
            v = float(value[i])
            events.append(
                {
                    "kind": k,
                    "bandit": int(bnd[i]),
                    "other": int(other[i]),
                    "value": None if math.isnan(v) else v,
                }
            )
    if self._is_allseason:
        self._track_arrays[2][0] = self.model_version
    for fn in self._listeners:
        fn("batch", self, events)


def bandit_rows(self) -> list[dict]:
    """All-Season's live bandits (compiled): id, role, weight, age, n_obs."""
    f = self.policy.kernel_state
    nobs, born, _ = self._track_arrays
    rows = []
    for s in np.flatnonzero(f.alive).tolist():
        bid = int(f.ids[s])
        rows.append(
            {
                "id": bid,
                "role": "shadow" if bid == 0 else "base",
                "weight": float(np.exp(f.logw[s])),
                "age": self.model_version - int(born[s]),
                "n_obs": int(nobs[s]),
            }
        )
    return rows
