"""All-Season's pruning, compiled (Alg. 1 lines 19-21, Alg. 4): the symmetric KL between two
Gaussian posteriors and the search for the closest pair of base bandits, whose less certain
one (larger tr(M^-1), the paper's text) is dropped. :class:`PruneCache` keeps covariances and
pairwise distances between batches so that only what changed is recomputed.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .linalg import chol_factor


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
    cov, trace, dirty, _, kl_ok = cache
    Lw = np.empty((p, p))
    Xw = np.empty((p, p))
    for s in range(1, S):
        if not alive[s]:
            continue
        for g in range(G):
            if dirty[s, g]:
                # factor M afresh: equal precisions must give bitwise-equal traces, so that
                # an exact tie (a base bandit and a copy of the shadow that learnt the same
                # data) is broken by id, not by the rounding of two update histories of L
                chol_factor(M[s, g], Lw)
                _covariance(Lw, cov[s, g], Xw)
                tr = 0.0
                for i in range(p):
                    tr += cov[s, g, i, i]
                trace[s, g] = tr
                dirty[s, g] = False
                for o in range(S):
                    kl_ok[s, o, g] = False
                    kl_ok[o, s, g] = False


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
    S, G, p = mu.shape
    tmp = np.empty(p)
    _refresh_covariances(M, alive, cache)
    cov, trace, _, kl, kl_ok = cache  # arrays: the pair loop runs up to S^2 / 2 times
    best_i, best_j, best = -1, -1, np.inf
    for i in range(1, S):
        if not alive[i]:
            continue
        for j in range(i + 1, S):
            if not alive[j]:
                continue
            dist = 0.0
            if prune_mode == 0:  # symmetric KL, summed over blocks, cached block by block
                for g in range(G):
                    if not kl_ok[i, j, g]:
                        kl[i, j, g] = sym_kl(
                            M[i, g], mu[i, g], cov[i, g], M[j, g], mu[j, g], cov[j, g], tmp
                        )
                        kl_ok[i, j, g] = True
                    dist += kl[i, j, g]
            else:  # distance between the means
                for g in range(G):
                    for k in range(p):
                        dist += (mu[i, g, k] - mu[j, g, k]) ** 2
                dist = math.sqrt(dist)
            if dist < best:  # strict: a tie keeps the first pair in slot order
                best, best_i, best_j = dist, i, j
    tr_i, tr_j = trace[best_i].sum(), trace[best_j].sum()
    if tr_i > tr_j or (tr_i == tr_j and ids[best_i] > ids[best_j]):
        drop, twin = best_i, best_j
    else:
        drop, twin = best_j, best_i
    alive[drop] = False
    return drop, twin, best


__all__ = ["PruneCache", "prune_one", "sym_kl"]
