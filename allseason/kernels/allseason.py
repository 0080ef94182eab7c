"""All-Season, compiled: Algorithm 1 (batch version) over a chunk of whole batches, the
symmetric KL between two posteriors and the pruning of the closest pair.

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

from .linalg import add_obs, best_arm, chol_factor, log_predictive, refresh_mean, refresh_means
from .lints import short_memory_learn
from .types import DISCOUNT, PRUNE, SPAWN, Window, new_window


class PruneCache(NamedTuple):
    """What pruning keeps between batches so that it recomputes only what changed.

    Attributes
    ----------
    cov : ndarray, shape (S, G, p, p)
        Each slot's covariance block by block.
    trace : ndarray, shape (S, G)
        Their traces.
    dirty : ndarray of bool, shape (S, G)
        Blocks whose posterior changed since their covariance was computed.
    kl : ndarray, shape (S, S, G)
        The symmetric KL of each pair (i < j), block by block.
    kl_ok : ndarray of bool, shape (S, S, G)
        Where ``kl`` is valid.
    """

    cov: np.ndarray
    trace: np.ndarray
    dirty: np.ndarray
    kl: np.ndarray
    kl_ok: np.ndarray


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


@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _covariance(L, out, X):
    """out = (L L^T)^-1: every column by a forward then a backward solve, all columns at once.

    Each entry sees the same operations in the same order as forward_solve/backward_solve on
    one column of the identity (bit for bit), but the inner loops run along rows, which
    vectorise. X (d, d) is workspace."""
    d = L.shape[0]
    for i in range(d):  # X = L^-1, row by row: X[i] = (e_i - sum_k<i L[i, k] X[k]) / L[i, i]
        for j in range(d):
            X[i, j] = 0.0
        X[i, i] = 1.0
        for k in range(i):
            lik = L[i, k]
            for j in range(d):
                X[i, j] -= lik * X[k, j]
        lii = L[i, i]
        for j in range(d):
            X[i, j] = X[i, j] / lii
    for i in range(d - 1, -1, -1):  # out = L^-T X: (X[i] - sum_k>i L[k, i] out[k]) / L[i, i]
        for j in range(d):
            out[i, j] = X[i, j]
        for k in range(i + 1, d):
            lki = L[k, i]
            for j in range(d):
                out[i, j] -= lki * out[k, j]
        lii = L[i, i]
        for j in range(d):
            out[i, j] = out[i, j] / lii


@njit(cache=True, nogil=True)
def sym_kl(M1, mu1, S1, M2, mu2, S2, dm):
    """KL_sym = 0.5 [tr(M2 S1) + tr(M1 S2) - 2d] + 0.5 dm^T (M1 + M2) dm, dm = mu2 - mu1.

    The paper's printed formula drops a 1/2 and has typos; this is the symmetric KL between
    N(mu1, S1) and N(mu2, S2).

    Parameters
    ----------
    M1, S1 : ndarray, shape (d, d)
        Precision and covariance of the first posterior.
    mu1 : ndarray, shape (d,)
    M2, S2, mu2 :
        The same for the second.
    dm : ndarray, shape (d,)
        Workspace.

    Returns
    -------
    float
    """
    d = mu1.shape[0]
    tr = 0.0
    for i in range(d):
        dm[i] = mu2[i] - mu1[i]
        for j in range(d):
            tr += M2[i, j] * S1[j, i] + M1[i, j] * S2[j, i]
    quad = 0.0
    for i in range(d):
        for j in range(d):
            quad += dm[i] * (M1[i, j] + M2[i, j]) * dm[j]
    return 0.5 * (tr - 2.0 * d) + 0.5 * quad


@njit(cache=True, nogil=True)
def _refresh_covariances(M, alive, cache):
    """Covariance and trace of every dirty block of the live base slots (invalidating the
    cached KL of every pair that involves it)."""
    S, G, p = M.shape[0], M.shape[1], M.shape[2]
    Lw = np.empty((p, p))
    Xw = np.empty((p, p))
    for s in range(1, S):
        if not alive[s]:
            continue
        for g in range(G):
            if cache.dirty[s, g]:
                # factor M afresh: equal precisions must give bitwise-equal traces, so that
                # an exact tie (a base bandit and a copy of the shadow that learnt the same
                # data) is broken by id, not by the rounding of two update histories of L
                chol_factor(M[s, g], Lw)
                _covariance(Lw, cache.cov[s, g], Xw)
                tr = 0.0
                for i in range(p):
                    tr += cache.cov[s, g, i, i]
                cache.trace[s, g] = tr
                cache.dirty[s, g] = False
                for o in range(S):
                    cache.kl_ok[s, o, g] = False
                    cache.kl_ok[o, s, g] = False


@njit(cache=True, nogil=True)
def _pair_distance(M, mu, i, j, prune_mode, cache, tmp):
    """Symmetric KL (summed over blocks, cached block by block) or distance of the means."""
    G, p = mu.shape[1], mu.shape[2]
    dist = 0.0
    if prune_mode == 0:
        for g in range(G):
            if not cache.kl_ok[i, j, g]:
                cache.kl[i, j, g] = sym_kl(
                    M[i, g], mu[i, g], cache.cov[i, g], M[j, g], mu[j, g], cache.cov[j, g], tmp
                )
                cache.kl_ok[i, j, g] = True
            dist += cache.kl[i, j, g]
    else:
        for g in range(G):
            for k in range(p):
                dist += (mu[i, g, k] - mu[j, g, k]) ** 2
        dist = math.sqrt(dist)
    return dist


@njit(cache=True, nogil=True)
def prune_one(M, mu, ids, alive, prune_mode, cache):
    """Find the closest pair of base bandits (slots 1..) and drop the less certain one.

    M (S, G, p, p), mu (S, G, p): block-diagonal posteriors; KL and tr(M^-1) are sums over
    blocks. ``cache`` (:class:`PruneCache`) keeps each block's covariance and trace (only
    dirty blocks are recomputed) and the symmetric KL of each pair block by block (recomputed
    only when one of the two blocks changed; the sum over blocks is taken in the same order,
    so the distance is the same bit for bit).

    The paper's text: 'discard the one which is less certain about its estimate, measured
    with the trace of the associated posterior covariance' -- i.e. the larger tr(M^-1).
    Algorithm 4 prints argmin, which would keep the less certain one; we follow the text.

    Parameters
    ----------
    M : ndarray, shape (S, G, p, p)
    mu : ndarray, shape (S, G, p)
    ids : ndarray of int64, shape (S,)
        Bandit ids (an exact tie of traces drops the larger id, the younger bandit).
    alive : ndarray of bool, shape (S,)
        The dropped slot is marked dead.
    prune_mode : int
        0: symmetric KL; 1: distance between means.
    cache : PruneCache

    Returns
    -------
    drop, twin : int
        The dropped slot and its twin.
    distance : float
    """
    S, p = mu.shape[0], mu.shape[2]
    tmp = np.empty(p)
    _refresh_covariances(M, alive, cache)
    best_i, best_j, best = -1, -1, np.inf
    for i in range(1, S):
        if not alive[i]:
            continue
        for j in range(i + 1, S):
            if not alive[j]:
                continue
            dist = _pair_distance(M, mu, i, j, prune_mode, cache, tmp)
            if dist < best:  # strict: a tie keeps the first pair in slot order
                best, best_i, best_j = dist, i, j
    tr_i, tr_j = cache.trace[best_i].sum(), cache.trace[best_j].sum()
    if tr_i > tr_j or (tr_i == tr_j and ids[best_i] > ids[best_j]):
        drop, twin = best_i, best_j
    else:
        drop, twin = best_j, best_i
    alive[drop] = False
    return drop, twin, best


# -- Algorithm 1, one batch at a time ----------------------------------------------------------
@njit(cache=True, nogil=True)
def _event(events, counters, step, kind, bandit, other, value):
    e = counters[1]
    events.step[e] = step
    events.kind[e] = kind
    events.bandit[e] = bandit
    events.other[e] = other
    events.value[e] = value
    counters[1] = e + 1


@njit(cache=True, nogil=True)
def _play_batch(rounds, start, end, u, z, state, w, pslot, played, out, theta, tmp):
    """Alg. 1 line 5, every step of the batch: j ~ Discrete(omega) (inverse CDF over the
    slots in order), then bandit j's Thompson step."""
    ctx, block, cidx, expected, noise, _ = rounds
    alive, L, mu = state.alive, state.L, state.mu
    S = alive.shape[0]
    for t in range(start, end + 1):
        acc, j, last = 0.0, -1, -1
        for s in range(S):
            if alive[s]:
                last = s
                acc += w[s]
                if u[t] < acc:
                    j = s
                    break
        if j < 0:
            j = last
        pslot[t] = j
        played[j] = True
        a = best_arm(ctx[t], block, cidx, L[j], mu[j], z[t], theta, tmp)
        out.arm[t] = a
        out.reward[t] = expected[t, a] + noise[t]
        out.player[t] = state.ids[j]


@njit(cache=True, nogil=True)
def _score_batch(rounds, start, end, state, sigma2, out, ll, tmp):
    """Every live bandit's score on the batch, with its posterior before the batch: the
    text's p_j(r_t | x_t, D_{t-1}) (eq. postpred); Alg. 1 computes it after the update."""
    ctx, block, cidx = rounds.ctx, rounds.block, rounds.cidx
    for s in range(state.alive.shape[0]):
        if state.alive[s]:
            acc = 0.0
            for t in range(start, end + 1):
                a = out.arm[t]
                g = block[a]
                acc += log_predictive(
                    state.L[s, g], state.mu[s, g], ctx[t, cidx[a]], out.reward[t], sigma2, tmp
                )
            ll[s] = acc


@njit(cache=True, nogil=True)
def _spawn(state, ll, played, step_end, events):
    """Alg. 1 lines 10-14: a new base bandit, a copy of the shadow; returns its slot."""
    alive, ids, counters = state.alive, state.ids, state.counters
    k = 1
    while alive[k]:
        k += 1
    _copy_slot(state.M, state.L, state.b, state.mu, 0, k)
    alive[k] = True
    state.prune.dirty[k, :] = True
    ids[k] = counters[0]
    counters[0] += 1
    ll[k] = ll[0]
    state.logw[k] = state.logw[0]
    played[k] = False
    _event(events, counters, step_end, SPAWN, ids[k], ids[0], np.nan)
    return k


@njit(cache=True, nogil=True)
def _learn_batch(rounds, start, end, state, params, pslot, out, tmp):
    """Alg. 1 line 15: the shadow learns the batch whoever played (window or discount);
    lines 16-18: base bandits learn the steps they played."""
    ctx, block, cidx = rounds.ctx, rounds.block, rounds.cidx
    M, L, b, mu = state.M, state.L, state.b, state.mu
    for t in range(start, end + 1):
        a = out.arm[t]
        short_memory_learn(
            M[0],
            L[0],
            b[0],
            state.window,
            block[a],
            ctx[t, cidx[a]],
            out.reward[t],
            params.shadow_mode,
            params.tau,
            params.gamma,
            params.lam,
            params.sigma2,
            tmp,
        )
    if params.shadow_mode == DISCOUNT:
        for g in range(M.shape[1]):
            chol_factor(M[0, g], L[0, g])
    refresh_means(L[0], b[0], mu[0], tmp)
    for t in range(start, end + 1):
        s = pslot[t]
        if s > 0:
            a = out.arm[t]
            g = block[a]
            add_obs(M[s, g], L[s, g], b[s, g], ctx[t, cidx[a]], out.reward[t], params.sigma2, tmp)
            refresh_mean(L[s, g], b[s, g], mu[s, g], tmp)
            state.prune.dirty[s, g] = True


@njit(cache=True, nogil=True)
def _prune_excess(state, params, born, step_end, events):
    """Alg. 1 lines 19-21: above n_max base bandits, prune the closest pair's less certain
    one. With handover the newborn has not played yet: it is not a candidate this batch."""
    alive, ids = state.alive, state.ids
    n_base = 0
    for s in range(1, alive.shape[0]):
        if alive[s]:
            n_base += 1
    shield = params.handover and born >= 0 and n_base - 1 >= 2
    if shield:
        alive[born] = False
    while n_base > params.n_max:
        drop, twin, dist = prune_one(state.M, state.mu, ids, alive, params.prune_mode, state.prune)
        _event(events, state.counters, step_end, PRUNE, ids[drop], ids[twin], dist)
        ids[drop] = -1
        n_base -= 1
    if shield:
        alive[born] = True


@njit(cache=True, nogil=True)
def _reweight(state, params, ll, spawned):
    """Alg. 1 line 22: new weights (Alg. 3, or fixed share), in log space."""
    logw, alive = state.logw, state.alive
    S = logw.shape[0]
    if params.weighting == 0:
        for s in range(S):
            logw[s] = ll[s]
    else:
        for s in range(S):
            logw[s] += ll[s]
        if params.handover and spawned:  # the newborn takes the shadow's weight over; the
            logw[0] = -np.inf  # shadow restarts from the share alpha / N below
    norm = _logsumexp(logw, alive)
    n_alive = 0
    for s in range(S):
        if alive[s]:
            n_alive += 1
    share = params.share
    for s in range(S):
        if alive[s]:
            logw[s] -= norm
            if params.weighting == 1:  # fixed share: (1 - alpha) w + alpha / N
                logw[s] = math.log((1.0 - share) * math.exp(logw[s]) + share / n_alive)
        else:
            logw[s] = -np.inf


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
    """
    S, G, p = state.mu.shape
    tmp = np.empty(p)
    theta = np.empty((G, p))
    ll = np.empty(S)
    w = np.empty(S)
    pslot = np.empty(out.arm.shape[0], dtype=np.int64)
    played = np.zeros(S, dtype=np.bool_)
    alive, logw, ids = state.alive, state.logw, state.ids
    batch_end = rounds.batch_end
    start = 0
    for bi in range(batch_end.shape[0]):
        end = batch_end[bi]
        norm = _logsumexp(logw, alive)  # weights are fixed within a batch (Alg. 1, line 5)
        for s in range(S):
            w[s] = math.exp(logw[s] - norm) if alive[s] else 0.0
        played[:] = False
        _play_batch(rounds, start, end, u, z, state, w, pslot, played, out, theta, tmp)
        step_end = step0 + end
        _score_batch(rounds, start, end, state, params.sigma2, out, ll, tmp)
        spawned = played[0]
        born = _spawn(state, ll, played, step_end, events) if spawned else -1
        _learn_batch(rounds, start, end, state, params, pslot, out, tmp)
        _prune_excess(state, params, born, step_end, events)
        _reweight(state, params, ll, spawned)
        for s in range(S):
            out.wids[bi, s] = ids[s] if alive[s] else -1
            out.w[bi, s] = math.exp(logw[s]) if alive[s] else 0.0
        start = end + 1


__all__ = [
    "AllSeasonState",
    "AllSeasonParams",
    "AllSeasonOut",
    "PruneCache",
    "new_allseason_state",
    "allseason_chunk",
    "prune_one",
    "sym_kl",
]
