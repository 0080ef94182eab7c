"""All-Season, compiled: Algorithm 1 (batch version) over a chunk of whole batches (the
pruning of the closest pair is in :mod:`~allseason.kernels.pruning`).

Slot 0 of the bank is the shadow bandit, slots 1.. the base bandits. Shadow modes are those
of :mod:`~allseason.kernels.lints` (WINDOW or DISCOUNT). Weighting: 0 = the paper's printed
rule (batch likelihood only), 1 = fixed share with share alpha (weights carried across
batches); ``handover``: a newborn base bandit takes the shadow's weight over (the shadow
restarts from the share) and is not a pruning candidate in the batch it is born (off: a plain
copy, as Alg. 1: both keep the weight, and it can be pruned at once). Pruning: 0 = symmetric
KL, 1 = distance between means.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .linalg import (
    add_obs,
    best_arm,
    chol_factor,
    log_predictive,
    refresh_changed,
    refresh_mean,
    refresh_means,
)
from .lints import short_memory_learn
from .pruning import PruneCache, prune_one, sym_kl
from .types import DISCOUNT, PRUNE, SPAWN, Window, new_window


class AllSeasonState(NamedTuple):
    """What All-Season learns, as arrays the kernel changes in place (S slots, G blocks).

    Attributes
    ----------
    M, L : ndarray, shape (S, G, p, p)
        Each slot's precision blocks and their lower Cholesky factors.
    b, mu : ndarray, shape (S, G, p)
        ``b`` and the posterior means.
    ids : ndarray of int64, shape (S,)
        The bandit id in each slot (-1: empty).
    logw : ndarray, shape (S,)
        Log weights (-inf: empty).
    alive : ndarray of bool, shape (S,)
        Occupied slots.
    counters : ndarray of int64, shape (2,)
        ``[next bandit id, events written in this chunk]``.
    window : Window
        The shadow's last tau observations.
    prune : PruneCache
        Pruning's cache.
    """

    M: np.ndarray
    L: np.ndarray
    b: np.ndarray
    mu: np.ndarray
    ids: np.ndarray
    logw: np.ndarray
    alive: np.ndarray
    counters: np.ndarray
    window: Window
    prune: PruneCache


class AllSeasonParams(NamedTuple):
    """All-Season's hyperparameters, as the kernel reads them.

    Attributes
    ----------
    shadow_mode : int
        WINDOW or DISCOUNT (:mod:`~allseason.kernels.types`).
    tau : int
        The shadow's window.
    gamma : float
        The shadow's discount.
    lam, sigma2 : float
        Prior precision and noise variance.
    n_max : int
        Most base bandits kept.
    weighting : int
        0: the printed rule (last batch alone); 1: fixed share.
    share : float
        Fixed share's alpha.
    handover : bool
        A newborn takes the shadow's weight over and is shielded from pruning for a batch.
    prune_mode : int
        0: symmetric KL; 1: distance between means.
    """

    shadow_mode: int
    tau: int
    gamma: float
    lam: float
    sigma2: float
    n_max: int
    weighting: int
    share: float
    handover: bool
    prune_mode: int


class AllSeasonOut(NamedTuple):
    """What All-Season's kernel writes per step (arm, reward, player: shape (n,)) and per
    batch (wids: ids, w: normalised weights, shape (n_batches, S))."""

    arm: np.ndarray
    reward: np.ndarray
    player: np.ndarray
    wids: np.ndarray
    w: np.ndarray


def new_allseason_state(
    ids: np.ndarray,
    logw: np.ndarray,
    alive: np.ndarray,
    n_blocks: int,
    p: int,
    lam: float,
    tau: int,
) -> AllSeasonState:
    """The prior bank: every slot M = lam I, mu = 0; ids, weights and live slots as given.

    Parameters
    ----------
    ids, logw, alive : ndarray, shape (S,)
        The initial ids, log weights and occupied slots (copied).
    n_blocks : int
        G, the number of parameter blocks.
    p : int
        Length of a block.
    lam : float
        Prior precision.
    tau : int
        Room of the shadow's window.

    Returns
    -------
    AllSeasonState
    """
    S, G = len(ids), n_blocks
    return AllSeasonState(
        M=np.tile(lam * np.eye(p), (S, G, 1, 1)),
        L=np.tile(np.sqrt(lam) * np.eye(p), (S, G, 1, 1)),
        b=np.zeros((S, G, p)),
        mu=np.zeros((S, G, p)),
        ids=ids.copy(),
        logw=logw.copy(),
        alive=alive.copy(),
        counters=np.array([2, 0], dtype=np.int64),
        window=new_window(tau, p),
        prune=PruneCache(
            np.zeros((S, G, p, p)),
            np.zeros((S, G)),
            np.ones((S, G), dtype=np.bool_),
            np.zeros((S, S, G)),
            np.zeros((S, S, G), dtype=np.bool_),
        ),
    )


@njit(cache=True, nogil=True, inline="always")
def _logsumexp(v, alive):
    m = -np.inf
    for s in range(v.shape[0]):
        if alive[s] and v[s] > m:
            m = v[s]
    acc = 0.0
    for s in range(v.shape[0]):
        if alive[s]:
            acc += math.exp(v[s] - m)
    return m + math.log(acc)


@njit(cache=True, nogil=True)
def _copy_slot(M, L, b, mu, src, dst):
    M[dst] = M[src]
    L[dst] = L[src]
    b[dst] = b[src]
    mu[dst] = mu[src]


# -- Algorithm 1 ----------------------------------------------------------------------------------
# The named tuples are unpacked once, in allseason_chunk: numba counts a reference to every
# array of a named tuple passed to a function, which would cost more than a step, so the
# per-step work stays in the kernel and the helpers (rare events, per batch) take arrays.
@njit(cache=True, nogil=True)
def _spawn(M, L, b, mu, alive, dirty, ids, logw, counters, ll, step_end, events):
    """Alg. 1 lines 10-14: a new base bandit, a copy of the shadow; returns its slot."""
    k = 1
    while alive[k]:
        k += 1
    _copy_slot(M, L, b, mu, 0, k)
    alive[k] = True
    dirty[k, :] = True
    ids[k] = counters[0]
    counters[0] += 1
    ll[k] = ll[0]
    logw[k] = logw[0]
    _event(events, counters, step_end, SPAWN, ids[k], ids[0], np.nan)
    return k


@njit(cache=True, nogil=True)
def _event(events, counters, step, kind, bandit, other, value):
    ev_step, ev_kind, ev_bandit, ev_other, ev_value = events
    e = counters[1]
    ev_step[e] = step
    ev_kind[e] = kind
    ev_bandit[e] = bandit
    ev_other[e] = other
    ev_value[e] = value
    counters[1] = e + 1


@njit(cache=True, nogil=True)
def _prune_excess(M, mu, ids, alive, counters, n_base, n_max, prune_mode, cache, step_end, events):
    """Alg. 1 lines 19-21: prune the closest pair's less certain one until n_max are left."""
    while n_base > n_max:
        drop, twin, dist = prune_one(M, mu, ids, alive, prune_mode, cache)
        _event(events, counters, step_end, PRUNE, ids[drop], ids[twin], dist)
        ids[drop] = -1
        n_base -= 1


@njit(cache=True, nogil=True, inline="always")
def _reweight(logw, alive, ll, weighting, share, handover, spawned):
    """Alg. 1 line 22: new weights (Alg. 3, or fixed share), in log space."""
    S = logw.shape[0]
    if weighting == 0:
        for s in range(S):
            logw[s] = ll[s]
    else:
        for s in range(S):
            logw[s] += ll[s]
        if handover and spawned:  # the newborn takes the shadow's weight over; the
            logw[0] = -np.inf  # shadow restarts from the share alpha / N below
    norm = _logsumexp(logw, alive)
    n_alive = 0
    for s in range(S):
        if alive[s]:
            n_alive += 1
    for s in range(S):
        if alive[s]:
            logw[s] -= norm
            if weighting == 1:  # fixed share: (1 - alpha) w + alpha / N
                logw[s] = math.log((1.0 - share) * math.exp(logw[s]) + share / n_alive)
        else:
            logw[s] = -np.inf


@njit(cache=True, nogil=True, inline="always")
def batch_weights(logw, alive, w):
    """The normalised weights omega (fixed within a batch, Alg. 1 line 5), written into w."""
    norm = _logsumexp(logw, alive)
    for s in range(w.shape[0]):
        w[s] = math.exp(logw[s] - norm) if alive[s] else 0.0


@njit(cache=True, nogil=True, inline="always")
def choose_slot(u, w, alive):
    """Alg. 1 line 5: j ~ Discrete(omega), by the inverse CDF over the slots in order.

    Parameters
    ----------
    u : float
        A uniform in [0, 1).
    w : ndarray, shape (S,)
        The normalised weights (:func:`batch_weights`).
    alive : ndarray of bool, shape (S,)
        Occupied slots.

    Returns
    -------
    int
        The slot that plays (the last live one if rounding leaves u above the total).
    """
    acc, j, last = 0.0, -1, -1
    for s in range(w.shape[0]):
        if alive[s]:
            last = s
            acc += w[s]
            if u < acc:
                j = s
                break
    if j < 0:
        j = last
    return j


@njit(cache=True, nogil=True, inline="always")
def allseason_batch(
    M, L, b, mu, ids, logw, alive, counters, wx, wg, wr, wstate, cache, events,
    gs, xs, rs, pslot, step_end, params, ll, tmp,
):  # fmt: skip
    """Alg. 1 lines 9-22 on one batch of resolved steps: score, spawn, learn, prune, reweight.

    The one batch update of All-Season: :func:`allseason_chunk` calls it at each batch end,
    and the agent (:mod:`allseason.agent`) when a batch of rewards has come in.

    Parameters
    ----------
    M, L, b, mu, ids, logw, alive, counters : ndarray
        The fields of :class:`AllSeasonState`, changed in place.
    wx, wg, wr, wstate : ndarray
        The shadow's :class:`~allseason.kernels.types.Window` fields.
    cache : PruneCache (plain tuple)
        Pruning's cache.
    events : Events (plain tuple)
        Appended to at ``counters[1]`` (room: two per batch).
    gs : ndarray of int64, shape (n,)
        The parameter block of each step's arm.
    xs : ndarray, shape (n, p)
        Each step's arm (its context in that block).
    rs : ndarray, shape (n,)
        The rewards.
    pslot : ndarray of int64, shape (n,)
        The slot that played each step (0: the shadow; -1: a base bandit since pruned, whose
        step only the shadow learns).
    step_end : int
        The step the events are stamped with.
    params : AllSeasonParams (plain tuple)
        The hyperparameters.
    ll : ndarray, shape (S,)
        Workspace: the batch's log predictive score of each slot.
    tmp : ndarray, shape (p,)
        Workspace.
    """
    mode, tau, gamma, lam, sigma2, n_max, weighting, share, handover, prune_mode = params
    dirty = cache[2]
    S, G, p = mu.shape
    n = rs.shape[0]
    # score every bandit on the batch with its posterior before the batch: the text's
    # p_j(r_t | x_t, D_{t-1}) (eq. postpred); Alg. 1 computes it after the update.
    for s in range(S):
        if alive[s]:
            acc = 0.0
            for t in range(n):
                acc += log_predictive(L[s, gs[t]], mu[s, gs[t]], xs[t], rs[t], sigma2, tmp)
            ll[s] = acc
    spawned = False
    for t in range(n):
        if pslot[t] == 0:
            spawned = True
    born = -1
    if spawned:  # Alg. 1 lines 10-14: the shadow played -> a copy of it is born
        born = _spawn(M, L, b, mu, alive, dirty, ids, logw, counters, ll, step_end, events)
    # one observation (B = 1) changes one of the shadow's blocks, or two (its window's oldest
    # leaves), unless the window is refactored or a discount decays them all: only those
    # means are refreshed
    one = n == 1 and mode != DISCOUNT
    g_out = wg[wstate[1]] if one and wstate[0] == tau else -1
    for t in range(n):  # line 15: the shadow learns the batch, whoever played
        short_memory_learn(
            M[0], L[0], b[0], gs[t], xs[t], rs[t], mode, tau, gamma,
            lam, sigma2, wx, wg, wr, wstate, tmp,
        )  # fmt: skip
    if mode == DISCOUNT:
        for g in range(G):
            chol_factor(M[0, g], L[0, g])
    if one and wstate[2] != 0:  # (0: the window was refactored)
        refresh_changed(L[0], b[0], mu[0], tmp, gs[0], g_out)
    else:
        refresh_means(L[0], b[0], mu[0], tmp)
    for t in range(n):  # lines 16-18: base bandits learn the steps they played
        s = pslot[t]
        if s > 0:
            g = gs[t]
            add_obs(M[s, g], L[s, g], b[s, g], xs[t], rs[t], sigma2, tmp)
            refresh_mean(L[s, g], b[s, g], mu[s, g], tmp)
            dirty[s, g] = True
    n_base = 0  # lines 19-21: too many base bandits -> prune
    for s in range(1, S):
        if alive[s]:
            n_base += 1
    # handover: the newborn has not played yet, so it is not a candidate this batch
    shield = handover and born >= 0 and n_base - 1 >= 2
    if shield:
        alive[born] = False
    if n_base > n_max:
        _prune_excess(
            M, mu, ids, alive, counters, n_base, n_max, prune_mode, cache, step_end, events
        )
    if shield:
        alive[born] = True
    _reweight(logw, alive, ll, weighting, share, handover, spawned)


@njit(cache=True, nogil=True)
def allseason_chunk(rounds, u, z, step0, state, params, out, events):
    """Algorithm 1 (batch version) over a chunk of whole batches. Slot 0 is the shadow bandit.

    Parameters
    ----------
    rounds : Rounds
        The chunk (contexts, arms' blocks, expected rewards, noise, batch ends).
    u : ndarray, shape (n,)
        One uniform per step: which bandit plays.
    z : ndarray, shape (n, G, p)
        The standard normals of each step's Thompson sample.
    step0 : int
        Steps played before this chunk (events are stamped from the start of the run).
    state : AllSeasonState
        The bank, changed in place; ``state.counters[1]`` counts the events written.
    params : AllSeasonParams
        The hyperparameters.
    out : AllSeasonOut
        Written: per step, per batch.
    events : Events
        Appended to at ``state.counters[1]`` (room: two per batch).

    Notes
    -----
    The steps of a batch (choose a bandit, its Thompson step, play) stay here, for speed (see
    the comment above); the batch update is :func:`allseason_batch`, which the agent shares.
    """
    ctx, block, cidx, expected, noise, batch_end = rounds
    M, L, b, mu, ids, logw, alive, counters, window, cache = state
    wx, wg, wr, wstate = window
    out_arm, out_reward, out_player, out_wids, out_w = out
    S, G, p = mu.shape
    n = out_arm.shape[0]
    tmp = np.empty(p)
    theta = np.empty((G, p))
    ll = np.empty(S)
    w = np.empty(S)
    pslot = np.empty(n, dtype=np.int64)
    gs = np.empty(n, dtype=np.int64)
    xs = np.empty((n, p))
    start = 0
    for bi in range(batch_end.shape[0]):
        end = batch_end[bi]
        batch_weights(logw, alive, w)  # weights are fixed within a batch (Alg. 1, line 5)
        for t in range(start, end + 1):
            j = choose_slot(u[t], w, alive)
            pslot[t] = j
            a = best_arm(ctx[t], block, cidx, L[j], mu[j], z[t], theta, tmp)
            out_arm[t] = a
            out_reward[t] = expected[t, a] + noise[t]
            out_player[t] = ids[j]
            gs[t] = block[a]
            xs[t] = ctx[t, cidx[a]]
        allseason_batch(
            M, L, b, mu, ids, logw, alive, counters, wx, wg, wr, wstate, cache, events,
            gs[start : end + 1], xs[start : end + 1], out_reward[start : end + 1],
            pslot[start : end + 1], step0 + end, params, ll, tmp,
        )  # fmt: skip
        for s in range(S):
            out_wids[bi, s] = ids[s] if alive[s] else -1
            out_w[bi, s] = math.exp(logw[s]) if alive[s] else 0.0
        start = end + 1


__all__ = [
    "AllSeasonState",
    "AllSeasonParams",
    "AllSeasonOut",
    "PruneCache",
    "new_allseason_state",
    "allseason_chunk",
    "allseason_batch",
    "batch_weights",
    "choose_slot",
    "prune_one",
    "sym_kl",
]
