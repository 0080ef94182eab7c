"""The Monte Carlo probability of a dense-arm decision (one shared theta, X of shape (K, d),
K > 2): :func:`pi_mc`, which :func:`~.agent.decide_step` calls (``pi_mode`` 3).

What it estimates. All-Season plays bandit j with weight w_j, then the Thompson step
``argmax_k x_k . theta`` with ``theta = mu_j + L_j^-T z`` (or ``mu_j + M_j^-1 Lt z`` when
``sandwich``). So ``pi_k = sum_j w_j p_jk``, with p_jk the probability that arm k wins under
bandit j.

How. Stratified over the bandits: bandit j gets ``n_j`` draws, ``n_j`` the cumulative
rounding of ``n_mc * w_j`` (the n_j sum to n_mc), at least 1 for every live bandit of
positive weight (:func:`allocation`), and

    pi_k = sum_j w_j c_jk / n_j,     c_jk = the draws of bandit j that arm k wins.

Unbiased whatever the n_j (each c_jk / n_j is), no ``choose_slot`` per draw, and the variance
``sum_j w_j^2 p_jk (1 - p_jk) / n_j`` is at most the plain mixture's ``pi_k (1 - pi_k) / n``
with proportional n_j (``p (1 - p)`` is concave). Per bandit, once per decision, the scores'
mean ``m_j = X mu_j`` (K) and their factor ``A_j`` (K x p), row k ``L_j^-1 x_k`` (or
``Lt^T M_j^-1 x_k``): a draw's scores are then ``m_j + A_j z``, K*p multiply-adds, no
triangular solve per draw. Ties go to the lowest arm, as in :func:`~.linalg.best_arm`.

The standard error returned is the largest over the arms of

    sqrt(sum_j w_j^2 v_jk / n_j),   v_jk = q (1 - q) n_j / (n_j - 1),  q = c_jk / n_j,

(the unbiased Bernoulli variance; 1/4, its bound, for a bandit with one draw). The agent
(allseason/agent/core.py) counts its decision as one more draw and reports the binomial
``sqrt(max pi (1 - pi) / (n_mc + 1))``, an upper bound of this one (up to rounding the n_j).

Draws. Bandit slot s's normals are the stream ``splitmix64(mkey + (s + 1) * MC_SALT)`` with
``mkey = splitmix64(key ^ MC_SALT)`` (apart from the decision's own stream, ``key``): normal i
is from the pair ``i // 2`` of Box-Muller on the stream's uniforms ``2 (i // 2)`` and
``2 (i // 2) + 1`` (:func:`stream_normals`, the same uniforms as
:func:`~.agent.fill_draws`), draw r of the bandit reads normals ``r G p`` to ``(r + 1) G p - 1``.
A pure function of the event's key and the state: the same key gives the same pi, bit for bit
(on one numpy/numba build). The splitmix64 finaliser is copied here from :mod:`.agent` (which
imports this module; tests/agent/test_pi_mc.py checks the two agree).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .linalg import backward_solve, forward_solve

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2^-53
_MC_SALT = np.uint64(0xD1B54A32D192ED03)  # = agent.MC_SALT
CHUNK = 64  # draws whose normals are made at once


@njit(cache=True, nogil=True)
def _mix(x):
    """splitmix64's finaliser (the same as :func:`.agent.splitmix64`)."""
    z = x
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, nogil=True)
def _unit(key, i):
    """The i-th uniform in [0, 1) of the stream ``key`` (as :func:`.agent._uniform`)."""
    return float(_mix(key + np.uint64(i + 1) * _GOLDEN) >> _S11) * _TO_UNIT


def _ziggurat_tables(n=128, r=3.442619855899, v=9.91256303526217e-3):
    """Marsaglia & Tsang's (2000) 128 layers of the normal's right half, in Doornik's
    (2005, ZIGNOR) form: x[0] = v / f(r) (the base layer's width), x[1] = r, x[i + 1] from
    x[i] (equal areas v), x[128] = 0; f = exp(-x^2 / 2) of each; ratio[i] = x[i + 1] / x[i]."""
    x = np.zeros(n + 1)
    x[0], x[1] = v / math.exp(-0.5 * r * r), r
    for i in range(2, n):
        x[i] = math.sqrt(-2.0 * math.log(v / x[i - 1] + math.exp(-0.5 * x[i - 1] ** 2)))
    return x, np.exp(-0.5 * x * x), x[1:] / x[:-1]


_ZX, _ZF, _ZR = _ziggurat_tables()
_ZIG_R = 3.442619855899


@njit(cache=True, nogil=True)
def stream_normals(key, c, out):
    """Fill ``out`` with the stream ``key``'s next normals, from its uniform ``c`` on; returns
    the uniform index after them (the stream is read in order: a rejection takes more).

    The ziggurat (Marsaglia & Tsang 2000; Doornik 2005's ZIGNOR, 128 layers): one 64-bit
    word a normal 99% of the time, its low 7 bits the layer and its top 53 bits the
    uniform; the wedges by ``exp``, the tail (beyond 3.44) by Marsaglia's 1964 method.

    Parameters
    ----------
    key : uint64
        The stream.
    c : int
        The index of the stream's next uniform (0 for its start).
    out : ndarray, shape (n,)
        Written.

    Returns
    -------
    int
        The next unused index.
    """
    for j in range(out.shape[0]):
        while True:
            b = _mix(key + np.uint64(c + 1) * _GOLDEN)
            c += 1
            i = int(b & np.uint64(127))
            u = 2.0 * (float(b >> _S11) * _TO_UNIT) - 1.0
            if abs(u) < _ZR[i]:  # inside layer i's rectangle
                out[j] = u * _ZX[i]
                break
            if i == 0:  # the tail beyond r
                while True:
                    t = math.log(1.0 - _unit(key, c)) / _ZIG_R
                    y = math.log(1.0 - _unit(key, c + 1))
                    c += 2
                    if -2.0 * y >= t * t:
                        break
                out[j] = t - _ZIG_R if u < 0.0 else _ZIG_R - t
                break
            x = u * _ZX[i]  # layer i's wedge: under the curve?
            y = _ZF[i] + _unit(key, c) * (_ZF[i + 1] - _ZF[i])
            c += 1
            if y < math.exp(-0.5 * x * x):
                out[j] = x
                break
    return c


@njit(cache=True, nogil=True)
def mc_keys(key, S):
    """The normal streams of the S slots for the event ``key``: ``(S,)`` uint64."""
    mkey = _mix(np.uint64(key) ^ _MC_SALT)
    out = np.empty(S, dtype=np.uint64)
    for s in range(S):
        out[s] = _mix(mkey + np.uint64(s + 1) * _MC_SALT)
    return out


@njit(cache=True, nogil=True)
def allocation(w, alive, n_mc, nj):
    """Draws per slot: the cumulative rounding of ``n_mc * w`` over live slots of positive
    weight, at least 1 each; 0 elsewhere. Written into ``nj`` (int64, (S,))."""
    acc = 0.0
    prev = 0
    for s in range(w.shape[0]):
        nj[s] = 0
        if not alive[s] or w[s] <= 0.0:
            continue
        acc += w[s]
        cum = int(math.floor(n_mc * acc + 0.5))
        nj[s] = max(1, cum - prev)
        prev = max(prev, cum)


@njit(cache=True, nogil=True)
def _factor(ctx, block, cidx, Lj, Lt, muj, sandwich, m, At, tmp, tmp2):
    """m = X mu_j and At = A_j^T (p, K): column k is L_j^-1 x_k, or Lt^T M_j^-1 x_k."""
    p = muj.shape[1]
    for k in range(block.shape[0]):
        g, x = block[k], ctx[cidx[k]]
        v = 0.0
        for i in range(p):
            v += x[i] * muj[g, i]
        m[k] = v
        forward_solve(Lj[g], x, tmp)
        if not sandwich:
            for i in range(p):
                At[i, k] = tmp[i]
            continue
        backward_solve(Lj[g], tmp, tmp2)  # M^-1 x
        for i in range(p):  # (Lt^T tmp2)_i = sum_{l >= i} Lt[l, i] tmp2[l]
            v = 0.0
            for q in range(i, p):
                v += Lt[g, q, i] * tmp2[q]
            At[i, k] = v


@njit(cache=True, nogil=True)
def _count(m, At, zoff, z, nr, s, cnt):
    """Scores m + A z of the first ``nr`` draws (rows of z), the winner of each counted."""
    p, K = At.shape
    dense = True
    for k in range(K):
        dense = dense and zoff[k] == 0
    wide = dense and K >= 8
    for r in range(nr):
        best, best_val = 0, -np.inf
        if wide:  # one block, many arms: k inner, K independent sums (vectorised)
            for k in range(K):
                s[k] = m[k]
            for i in range(p):
                zi = z[r, i]
                for k in range(K):
                    s[k] += At[i, k] * zi
            for k in range(K):
                if s[k] > best_val:
                    best, best_val = k, s[k]
        else:  # few arms: each score summed in a register (the same order: bit for bit)
            for k in range(K):
                v = m[k]
                o = zoff[k]
                for i in range(p):
                    v += At[i, k] * z[r, o + i]
                if v > best_val:
                    best, best_val = k, v
        cnt[best] += 1


@njit(cache=True, nogil=True)
def pi_mc(ctx, block, cidx, L, mu, Lt, alive, sandwich, w, pi, key, n_mc, theta, tmp, tmp2):
    """pi of every arm by Monte Carlo, stratified over the bandits (the module's docstring).

    Parameters
    ----------
    ctx, block, cidx :
        As in :func:`~.agent.decide_step`.
    L, mu, Lt, alive, sandwich :
        The bank (:func:`~.agent.decide_step`).
    w : ndarray, shape (S,)
        The normalised weights (:func:`~.allseason.batch_weights`).
    pi : ndarray, shape (K,)
        Written (its entries are overwritten).
    key : int
        The event's key; the draws are keyed apart from the decision's.
    n_mc : int
        Draws in all (a little more if many bandits weigh under 1 / n_mc: each gets 1).
    theta, tmp, tmp2 : ndarray
        Workspace (theta unused; the signature is the one of the exact modes' helpers).

    Returns
    -------
    float
        The largest standard error over the arms.
    """
    S, G, p = mu.shape
    K = block.shape[0]
    nj = np.empty(S, dtype=np.int64)
    allocation(w, alive, n_mc, nj)
    keys = mc_keys(key, S)
    m = np.empty(K)
    At = np.empty((p, K))
    zoff = np.empty(K, dtype=np.int64)
    for k in range(K):
        zoff[k] = block[k] * p
    z = np.empty((CHUNK, G * p))
    zf = z.reshape(-1)
    s = np.empty(K)
    cnt = np.zeros(K, dtype=np.int64)
    var = np.zeros(K)
    for k in range(K):
        pi[k] = 0.0
    for j in range(S):
        n = nj[j]
        if n == 0:
            continue
        _factor(ctx, block, cidx, L[j], Lt, mu[j], sandwich, m, At, tmp, tmp2)
        for k in range(K):
            cnt[k] = 0
        c = 0
        for r0 in range(0, n, CHUNK):
            nr = min(CHUNK, n - r0)
            c = stream_normals(keys[j], c, zf[: nr * G * p])
            _count(m, At, zoff, z, nr, s, cnt)
        for k in range(K):
            q = cnt[k] / n
            pi[k] += w[j] * q
            v = q * (1.0 - q) * n / (n - 1) if n > 1 else 0.25
            var[k] += w[j] * w[j] * v / n
    se = 0.0
    for k in range(K):
        se = max(se, math.sqrt(var[k]))
    return se


__all__ = ["CHUNK", "allocation", "mc_keys", "pi_mc", "stream_normals"]
