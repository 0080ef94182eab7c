"""P(argmax = a) for K independent Gaussian scores, compiled: the one-dimensional integral
pi(a) = integral phi_a(s) prod_{k != a} Phi_k(s) ds on a grid of every arm's quantile nodes.

:func:`allseason.logs.policy_probs.gaussian_argmax_probs` (a log's pi, afterwards) and the
agent's compiled decision (:mod:`.agent`, pi at decision time) both call
:func:`argmax_probs_rows`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import ndtri  # the normal quantile: what scipy.stats' norm.ppf calls

#: quantile nodes per arm of the integration grid (plus the two ends at +-8.5 sd)
N_NODES = 32
_TAIL = 8.5  # Phi(-8.5) ~ 1e-17: beyond this an arm's score adds nothing to the integral


@njit(cache=True, nogil=True)
def log_ndtr(z):
    """log Phi(z), accurate in the far left tail (the asymptotic series below -20)."""
    if z > -20.0:
        return math.log(0.5 * math.erfc(-z / math.sqrt(2.0)))
    z2 = z * z
    return (
        -0.5 * z2
        - math.log(-z)
        - 0.5 * math.log(2.0 * math.pi)
        + math.log1p(-1.0 / z2 + 3.0 / (z2 * z2) - 15.0 / (z2 * z2 * z2))
    )


@njit(cache=True, nogil=True)
def argmax_probs_rows(mean, sd, count, y, out):  # pragma: no cover - compiled
    """out[r, a] = P(argmax_k N(mean[r,k], sd[r,k]^2) = a), rows independent.

    The maximum's CDF is P(s) = prod_k F_k(s), and pi(a) = integral (P / F_a) dF_a =
    integral P d(log F_a). On a grid made of every arm's quantile nodes (m_k + sd_k y_j),
    within [max_k(m_k - 8.5 sd_k), max_k(m_k + 8.5 sd_k)], each interval adds
    Delta(log F_a) times the logarithmic mean of P at its ends. Summed over a, the
    increments of log F_a add up to Delta(log P), so the probabilities sum to P(hi) - P(lo)
    (= 1 up to 1e-17) whatever the grid; they are renormalised to 1. ``count[r, k]``: how
    many arms share arm k's score distribution (0: a padding column); out is per arm."""
    R, K = mean.shape
    J = y.shape[0]
    grid = np.empty(K * J + 2)
    logF = np.empty(K)
    prevF = np.empty(K)
    head = np.empty(K, dtype=np.int64)
    for r in range(R):
        lo, hi = -np.inf, -np.inf
        for k in range(K):
            if count[r, k] > 0:
                lo = max(lo, mean[r, k] - _TAIL * sd[r, k])
                hi = max(hi, mean[r, k] + _TAIL * sd[r, k])
        # the grid: every arm's nodes within (lo, hi), sorted. Each arm's nodes are sorted
        # already (y ascending, sd > 0): a K-way merge, the same grid as sorting them all.
        for k in range(K):
            head[k] = 0 if count[r, k] > 0 else J
        grid[0] = lo
        n = 1
        while True:
            best, bk = np.inf, -1
            for k in range(K):
                j = head[k]
                while j < J and not mean[r, k] + sd[r, k] * y[j] > lo:
                    j += 1
                head[k] = j
                if j < J:
                    s = mean[r, k] + sd[r, k] * y[j]
                    if s < hi and (bk < 0 or s < best):
                        best, bk = s, k
                    elif not s < hi:
                        head[k] = J
            if bk < 0:
                break
            grid[n] = best
            n += 1
            head[bk] += 1
        grid[n] = hi
        for a in range(K):
            out[r, a] = 0.0
        prev_logP = 0.0
        for k in range(K):
            prevF[k] = log_ndtr((lo - mean[r, k]) / sd[r, k]) if count[r, k] > 0 else 0.0
            prev_logP += count[r, k] * prevF[k]
        P0 = math.exp(prev_logP)
        for i in range(1, n + 1):
            logP = 0.0
            for k in range(K):
                z = (grid[i] - mean[r, k]) / sd[r, k]
                skip = count[r, k] == 0 or z > _TAIL + 0.5  # Phi(9) = 1 - 1e-19
                logF[k] = 0.0 if skip else log_ndtr(z)
                logP += count[r, k] * logF[k]
            d = logP - prev_logP
            P1 = math.exp(logP)
            lm = (P1 - P0) / d if d > 1e-12 else P1  # the logarithmic mean of P0, P1
            if lm > 0.0:
                for k in range(K):
                    out[r, k] += (logF[k] - prevF[k]) * lm
            for k in range(K):
                prevF[k] = logF[k]
            prev_logP = logP
            P0 = P1
        total = 0.0
        for a in range(K):
            total += count[r, a] * out[r, a]
        for a in range(K):
            out[r, a] /= total


QUAD_NODES = np.concatenate([[-_TAIL], ndtri((np.arange(N_NODES) + 0.5) / N_NODES), [_TAIL]])


__all__ = ["N_NODES", "QUAD_NODES", "log_ndtr", "argmax_probs_rows"]
