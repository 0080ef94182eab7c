"""Linear algebra on one Gaussian posterior slot, compiled: Cholesky up- and downdates, a
factorisation, triangular solves, the log predictive density and the Thompson step.

A slot holds M (d, d), the precision; L, its lower Cholesky factor (M = L L^T); b (d,); and
mu = M^-1 b (see :mod:`allseason.models` for the maths). Learning adds x / sigma as a
rank-one update of L (O(d^2)). Every function works in place on the arrays it is given and
releases the GIL.

The helpers of one step are inlined into their callers (numba's ``inline="always"``): a call
that is not inlined counts every array view passed to it up and down (atomic operations), which
at d = 5 cost more than the arithmetic. The same operations in the same order: the same bits.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

LOG_2PI = math.log(2.0 * math.pi)


@njit(cache=True, nogil=True, fastmath=False, inline="always")
def chol_update(L, x):
    """Rank-one update: L L^T + x x^T, in place on the lower factor.

    Parameters
    ----------
    L : ndarray, shape (d, d)
        Lower Cholesky factor, overwritten.
    x : ndarray, shape (d,)
        The update vector, overwritten (workspace).
    """
    d = x.shape[0]
    for k in range(d):
        lkk = L[k, k]
        r = math.sqrt(lkk * lkk + x[k] * x[k])
        c = r / lkk
        s = x[k] / lkk
        L[k, k] = r
        for i in range(k + 1, d):
            L[i, k] = (L[i, k] + s * x[i]) / c
            x[i] = c * x[i] - s * L[i, k]


@njit(cache=True, nogil=True, inline="always")
def chol_downdate(L, x):
    """Rank-one downdate: L L^T - x x^T, in place; the result must stay positive definite.

    Parameters
    ----------
    L : ndarray, shape (d, d)
        Lower Cholesky factor, overwritten.
    x : ndarray, shape (d,)
        The vector removed, overwritten (workspace).
    """
    d = x.shape[0]
    for k in range(d):
        lkk = L[k, k]
        r2 = lkk * lkk - x[k] * x[k]
        r = math.sqrt(r2 if r2 > 1e-300 else 1e-300)
        c = r / lkk
        s = x[k] / lkk
        L[k, k] = r
        for i in range(k + 1, d):
            L[i, k] = (L[i, k] - s * x[i]) / c
            x[i] = c * x[i] - s * L[i, k]


@njit(cache=True, nogil=True)
def chol_factor(M, L):
    """L = cholesky(M), lower.

    Parameters
    ----------
    M : ndarray, shape (d, d)
        Symmetric positive definite.
    L : ndarray, shape (d, d)
        Written (its upper triangle zeroed).
    """
    d = M.shape[0]
    for j in range(d):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        ljj = math.sqrt(s)
        L[j, j] = ljj
        for i in range(j + 1, d):
            s = M[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / ljj
        for i in range(j):
            L[i, j] = 0.0


@njit(cache=True, nogil=True, inline="always")
def forward_solve(L, x, out):
    """out = L^-1 x, L lower triangular.

    Parameters
    ----------
    L : ndarray, shape (d, d)
    x : ndarray, shape (d,)
    out : ndarray, shape (d,)
        Written.
    """
    d = x.shape[0]
    for i in range(d):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * out[k]
        out[i] = s / L[i, i]


@njit(cache=True, nogil=True, inline="always")
def backward_solve(L, y, out):
    """out = L^-T y, L lower triangular.

    Parameters
    ----------
    L : ndarray, shape (d, d)
    y : ndarray, shape (d,)
    out : ndarray, shape (d,)
        Written.
    """
    d = y.shape[0]
    for i in range(d - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, d):
            s -= L[k, i] * out[k]
        out[i] = s / L[i, i]


@njit(cache=True, nogil=True, inline="always")
def refresh_mean(L, b, mu, tmp):
    """mu = M^-1 b = L^-T L^-1 b.

    Parameters
    ----------
    L : ndarray, shape (d, d)
        Lower Cholesky factor of M.
    b : ndarray, shape (d,)
    mu : ndarray, shape (d,)
        Written.
    tmp : ndarray, shape (d,)
        Workspace.
    """
    forward_solve(L, b, tmp)
    backward_solve(L, tmp, mu)


@njit(cache=True, nogil=True, inline="always")
def log_predictive(L, mu, x, r, sigma2, tmp):
    """log N(r; <mu, x>, sigma2 + x^T M^-1 x), the posterior predictive (eq. postpred).

    Parameters
    ----------
    L : ndarray, shape (d, d)
        Lower Cholesky factor of the precision M.
    mu : ndarray, shape (d,)
        Posterior mean.
    x : ndarray, shape (d,)
        The arm played.
    r : float
        Its reward.
    sigma2 : float
        Noise variance.
    tmp : ndarray, shape (d,)
        Workspace.

    Returns
    -------
    float
    """
    forward_solve(L, x, tmp)
    var = sigma2
    mean = 0.0
    for i in range(x.shape[0]):
        var += tmp[i] * tmp[i]
        mean += mu[i] * x[i]
    e = r - mean
    return -0.5 * (LOG_2PI + math.log(var) + e * e / var)


@njit(cache=True, nogil=True, inline="always")
def best_arm(ctx_t, block, cidx, L, mu, z_t, theta, tmp):
    """Thompson step over G blocks: theta_g = mu_g + L_g^-T z_g for every block, then
    argmax_k <theta_{block[k]}, ctx_t[cidx[k]]>.

    Dense arms are G = 1, block = 0, cidx = k; outer-product arms e_k (x) c_t are G = K,
    block = k, cidx = 0 (one shared context).

    Parameters
    ----------
    ctx_t : ndarray, shape (C, p)
        The step's contexts.
    block, cidx : ndarray of int64, shape (K,)
        Each arm's block and context.
    L : ndarray, shape (G, p, p)
        Lower Cholesky factors of the precisions.
    mu : ndarray, shape (G, p)
        Posterior means.
    z_t : ndarray, shape (G, p)
        Standard normals.
    theta : ndarray, shape (G, p)
        Written: the sample.
    tmp : ndarray, shape (p,)
        Workspace.

    Returns
    -------
    int
        The arm (ties to the lowest index).
    """
    G, p = mu.shape
    for g in range(G):
        backward_solve(L[g], z_t[g], tmp)
        for i in range(p):
            theta[g, i] = mu[g, i] + tmp[i]
    best, best_val = 0, -np.inf
    for k in range(block.shape[0]):
        g, c = block[k], cidx[k]
        v = 0.0
        for i in range(p):
            v += ctx_t[c, i] * theta[g, i]
        if v > best_val:
            best, best_val = k, v
    return best


@njit(cache=True, nogil=True, inline="always")
def best_arm_sandwich(ctx_t, block, cidx, L, Lt, mu, z_t, theta, tmp, tmp2):
    """Thompson step with covariance M^-1 Mt M^-1 (Kim & Tewari's V^-1 V~ V^-1) over G blocks:
    theta_g = mu_g + L_g^-T L_g^-1 (Lt_g z_g), with M = L L^T and Mt = Lt Lt^T; all O(p^2).

    Parameters
    ----------
    ctx_t, block, cidx, L, mu, z_t, theta, tmp :
        As in :func:`best_arm`.
    Lt : ndarray, shape (G, p, p)
        Lower Cholesky factors of Mt.
    tmp2 : ndarray, shape (p,)
        Workspace.

    Returns
    -------
    int
        The arm (ties to the lowest index).
    """
    G, p = mu.shape
    for g in range(G):
        for i in range(p):  # tmp = Lt z (lower triangular)
            s = 0.0
            for k in range(i + 1):
                s += Lt[g, i, k] * z_t[g, k]
            tmp[i] = s
        forward_solve(L[g], tmp, tmp2)
        backward_solve(L[g], tmp2, tmp)
        for i in range(p):
            theta[g, i] = mu[g, i] + tmp[i]
    best, best_val = 0, -np.inf
    for k in range(block.shape[0]):
        g, c = block[k], cidx[k]
        v = 0.0
        for i in range(p):
            v += ctx_t[c, i] * theta[g, i]
        if v > best_val:
            best, best_val = k, v
    return best


@njit(cache=True, nogil=True, inline="always")
def add_obs(M, L, b, x, r, sigma2, tmp):
    """Learn (x, r): M += x x^T / sigma2, b += r x / sigma2, L by a rank-one update.

    Parameters
    ----------
    M, L : ndarray, shape (d, d)
        Precision and its lower factor, changed in place.
    b : ndarray, shape (d,)
        Changed in place.
    x : ndarray, shape (d,)
    r : float
    sigma2 : float
        Noise variance.
    tmp : ndarray, shape (d,)
        Workspace.
    """
    d = x.shape[0]
    inv = 1.0 / sigma2
    for i in range(d):
        b[i] += r * x[i] * inv
        for j in range(d):
            M[i, j] += x[i] * x[j] * inv
    sd = math.sqrt(sigma2)
    for i in range(d):
        tmp[i] = x[i] / sd
    chol_update(L, tmp)


@njit(cache=True, nogil=True, inline="always")
def remove_obs(M, L, b, x, r, sigma2, tmp):
    """Forget (x, r): the exact inverse of :func:`add_obs`, by a rank-one downdate.

    Parameters
    ----------
    M, L : ndarray, shape (d, d)
        Precision and its lower factor, changed in place.
    b : ndarray, shape (d,)
        Changed in place.
    x : ndarray, shape (d,)
    r : float
    sigma2 : float
        Noise variance.
    tmp : ndarray, shape (d,)
        Workspace.
    """
    d = x.shape[0]
    inv = 1.0 / sigma2
    for i in range(d):
        b[i] -= r * x[i] * inv
        for j in range(d):
            M[i, j] -= x[i] * x[j] * inv
    sd = math.sqrt(sigma2)
    for i in range(d):
        tmp[i] = x[i] / sd
    chol_downdate(L, tmp)


@njit(cache=True, nogil=True)
def refresh_means(L, b, mu, tmp):
    """mu_g = M_g^-1 b_g for every block g.

    Parameters
    ----------
    L : ndarray, shape (G, p, p)
        Lower Cholesky factors.
    b : ndarray, shape (G, p)
    mu : ndarray, shape (G, p)
        Written.
    tmp : ndarray, shape (p,)
        Workspace.
    """
    for g in range(b.shape[0]):
        refresh_mean(L[g], b[g], mu[g], tmp)


@njit(cache=True, nogil=True, inline="always")
def refresh_changed(L, b, mu, tmp, g, g2):
    """mu_g = M_g^-1 b_g for block ``g`` and block ``g2`` (-1 or ``g``: none): after an
    observation that changed only these, the same means as :func:`refresh_means`, bit for
    bit (the other blocks' L and b, hence their means, did not change).

    Parameters
    ----------
    L : ndarray, shape (G, p, p)
    b, mu : ndarray, shape (G, p)
        ``mu`` written in blocks ``g`` and ``g2``.
    tmp : ndarray, shape (p,)
        Workspace.
    g, g2 : int
        The blocks that changed.
    """
    refresh_mean(L[g], b[g], mu[g], tmp)
    if g2 >= 0 and g2 != g:
        refresh_mean(L[g2], b[g2], mu[g2], tmp)
