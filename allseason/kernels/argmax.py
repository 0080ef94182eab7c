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
from scipy.special import log_ndtr as scipy_log_ndtr
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


# log Phi by interpolation (the agent's pi at decision time, argmax_probs_rows_table): its
# values and slopes phi / Phi every 1/64 on [-20, 9], from scipy's log_ndtr
_LT_LO, _LT_HI, _LT_PER = -20.0, 9.0, 64.0
_LT_Z = np.arange(round(_LT_LO * _LT_PER), round(_LT_HI * _LT_PER) + 1) / _LT_PER
_LT_F = scipy_log_ndtr(_LT_Z)
# math.exp (the C library's), not np.exp: numpy computes exp with its own AVX-512 code where the
# CPU has it, which differs from the C library's in the last bit for about 4% of these values, and
# the table is baked into the compiled kernels: the agent's pi would then depend on the machine
# (seen on an AMD EPYC with AVX-512 against the trace recorded on an AVX2 machine)
_LT_D = np.array(
    [math.exp(v) for v in -0.5 * _LT_Z**2 - 0.5 * math.log(2.0 * math.pi) - _LT_F], dtype=np.float64
)
_LT_N = float(_LT_Z.shape[0] - 1)  # intervals
_LT_H = 1.0 / _LT_PER


@njit(cache=True, nogil=True)
def log_ndtr_table(z):
    """log Phi(z) by cubic Hermite interpolation of a table (values and slopes every 1/64
    on [-20, 9]); outside it, :func:`log_ndtr`. Cheaper than ``log_ndtr``
    (no ``erfc``, no ``log``); on [-20, 9) its error against scipy's ``log_ndtr`` is below
    1e-10 (measured 3e-11; tests/agent/test_pi_quadrature.py)."""
    t = (z - _LT_LO) * _LT_PER
    if not (t >= 0.0 and t < _LT_N):  # (NaN too)
        return log_ndtr(z)
    i = int(t)
    u = t - i
    u1 = 1.0 - u
    h00 = (1.0 + 2.0 * u) * u1 * u1
    h01 = u * u * (3.0 - 2.0 * u)
    h10 = u * u1 * u1 * _LT_H
    h11 = -u * u * u1 * _LT_H
    return h00 * _LT_F[i] + h01 * _LT_F[i + 1] + h10 * _LT_D[i] + h11 * _LT_D[i + 1]


@njit(cache=True, nogil=True)
def _log_cdf(z, table):
    """log Phi(z): from the table, or :func:`log_ndtr`."""
    return log_ndtr_table(z) if table else log_ndtr(z)


@njit(cache=True, nogil=True)
def argmax_probs_rows(mean, sd, count, y, out):  # pragma: no cover - compiled
    """out[r, a] = P(argmax_k N(mean[r,k], sd[r,k]^2) = a), rows independent
    (:func:`_argmax_rows` with ``log_ndtr``; see there)."""
    _argmax_rows(mean, sd, count, y, out, False)


@njit(cache=True, nogil=True)
def argmax_probs_rows_table(mean, sd, count, y, out):  # pragma: no cover - compiled
    """:func:`argmax_probs_rows` with log Phi from :func:`log_ndtr_table` (the agent's pi at
    decision time: the same grid, each log Phi within 1e-10)."""
    _argmax_rows(mean, sd, count, y, out, True)


@njit(cache=True, nogil=True)
def _merge_grid(mean, sd, count, y, lo, hi, grid, head, hv, hk):  # pragma: no cover - compiled
    """grid[0] = lo, then every arm's nodes ``mean[k] + sd[k] * y[j]`` within (lo, hi),
    sorted; returns n, the index of the next free slot (where the caller puts hi). ``head``,
    ``hv``, ``hk``: workspaces of K."""
    K = mean.shape[0]
    J = y.shape[0]
    # the grid: every arm's nodes within (lo, hi), sorted. Each arm's nodes are sorted
    # already (y ascending, sd > 0): a K-way merge through a binary heap of the arms'
    # next nodes (O(log K) a node; the same grid as sorting them all, bit for bit)
    m = 0
    for k in range(K):
        if count[k] <= 0:
            continue
        j = 0
        while j < J and not mean[k] + sd[k] * y[j] > lo:
            j += 1
        if j < J:
            s = mean[k] + sd[k] * y[j]
            if s < hi:
                head[k] = j
                i = m  # push (s, k): sift up
                m += 1
                while i > 0:
                    up = (i - 1) >> 1
                    if not hv[up] > s:
                        break
                    hv[i], hk[i] = hv[up], hk[up]
                    i = up
                hv[i], hk[i] = s, k
    grid[0] = lo
    n = 1
    while m > 0:
        grid[n] = hv[0]
        n += 1
        k = hk[0]
        j = head[k] + 1
        s = mean[k] + sd[k] * y[j] if j < J else hi
        if s < hi:
            head[k] = j
        else:  # arm k is done: the heap's last entry replaces the top
            m -= 1
            s, k = hv[m], hk[m]
        i = 0  # sift (s, k) down from the top
        while True:
            c = 2 * i + 1
            if c >= m:
                break
            if c + 1 < m and hv[c + 1] < hv[c]:
                c += 1
            if not hv[c] < s:
                break
            hv[i], hk[i] = hv[c], hk[c]
            i = c
        if m > 0:
            hv[i], hk[i] = s, k
    return n


_BLOCK = 64  # nodes of the grid whose log F the quadrature holds at once (memory: K x 65)


@njit(cache=True, nogil=True)
def _argmax_block(mean, sd, count, grid, i0, m, P0, logF, logP, lms, table):  # pragma: no cover
    """log F_k (``logF[k, 1:m + 1]``) and log P (``logP[1:m + 1]``) at the nodes
    ``grid[i0:i0 + m]``, arm by arm; ``lms[j]``: the logarithmic mean of P over the interval
    ending at node j (0 where it adds nothing). Returns P at the block's last node."""
    K = mean.shape[0]
    for j in range(1, m + 1):
        logP[j] = 0.0
    for k in range(K):
        c, mk, sk = count[k], mean[k], sd[k]
        Fk = logF[k]
        for j in range(1, m + 1):
            z = (grid[i0 + j - 1] - mk) / sk
            f = 0.0 if (c == 0 or z > _TAIL + 0.5) else _log_cdf(z, table)  # Phi(9) = 1 - 1e-19
            Fk[j] = f
            logP[j] += c * f
    for j in range(1, m + 1):
        d = logP[j] - logP[j - 1]
        P1 = math.exp(logP[j])
        lm = (P1 - P0) / d if d > 1e-12 else P1  # the logarithmic mean of P0, P1
        lms[j] = lm if lm > 0.0 else 0.0
        P0 = P1
    return P0


@njit(cache=True, nogil=True)
def _argmax_rows(mean, sd, count, y, out, table):  # pragma: no cover - compiled
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
    logF = np.empty((K, _BLOCK + 1))  # log F_k at a block of the grid's nodes
    logP = np.empty(_BLOCK + 1)
    lms = np.empty(_BLOCK + 1)
    head = np.empty(K, dtype=np.int64)
    hv = np.empty(K)  # the heap of the arms' next nodes: values, arms
    hk = np.empty(K, dtype=np.int64)
    for r in range(R):
        lo, hi = -np.inf, -np.inf
        for k in range(K):
            if count[r, k] > 0:
                lo = max(lo, mean[r, k] - _TAIL * sd[r, k])
                hi = max(hi, mean[r, k] + _TAIL * sd[r, k])
        # the grid: every arm's nodes within (lo, hi), sorted (a K-way merge, _merge_grid)
        n = _merge_grid(mean[r], sd[r], count[r], y, lo, hi, grid, head, hv, hk)
        grid[n] = hi
        # log F_k at the nodes, arm by arm over a block of _BLOCK nodes at a time (the inner
        # loop has no dependence between arms), log P summed over the arms in the order
        # k = 0, 1, ... at each node, the increments added per arm in the nodes' order: the
        # same sums, bit for bit, as node by node. Column 0: the previous block's last node.
        logP[0] = 0.0
        for k in range(K):
            c = count[r, k]
            logF[k, 0] = _log_cdf((lo - mean[r, k]) / sd[r, k], table) if c > 0 else 0.0
            logP[0] += c * logF[k, 0]
            out[r, k] = 0.0
        P0 = math.exp(logP[0])
        i0 = 1
        while i0 <= n:
            m = min(_BLOCK, n + 1 - i0)  # nodes i0 .. i0 + m - 1, in columns 1 .. m
            P0 = _argmax_block(mean[r], sd[r], count[r], grid, i0, m, P0, logF, logP, lms, table)
            for k in range(K):  # the increments of log F_k, in the nodes' order
                Fk = logF[k]
                acc = out[r, k]
                for j in range(1, m + 1):
                    if lms[j] > 0.0:
                        acc += (Fk[j] - Fk[j - 1]) * lms[j]
                out[r, k] = acc
                Fk[0] = Fk[m]
            logP[0] = logP[m]
            i0 += m
        total = 0.0
        for a in range(K):
            total += count[r, a] * out[r, a]
        for a in range(K):
            out[r, a] /= total


QUAD_NODES = np.concatenate([[-_TAIL], ndtri((np.arange(N_NODES) + 0.5) / N_NODES), [_TAIL]])


__all__ = [
    "N_NODES",
    "QUAD_NODES",
    "log_ndtr",
    "log_ndtr_table",
    "argmax_probs_rows",
    "argmax_probs_rows_table",
]
