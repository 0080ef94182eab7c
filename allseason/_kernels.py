"""Compiled (numba) hot loops for the LinTS family and All-Season, and for the LinUCB-family
baselines DenBand and BoB (its SW-UCB; EXP3 stays in Python).

Each kernel plays a chunk of whole batches and mutates the policy's state arrays in place.
The random numbers come in as arrays (u: one uniform per step, z: d normals per step) drawn
by the policy from its own generators, so a kernel is a pure function of its inputs and is
checked decision for decision against the plain numpy implementation (tests/test_fast_paths).

State of a bank of S posterior slots (see :mod:`allseason.models` for the maths):
M (S, d, d) precision, L (S, d, d) its lower Cholesky factor, b (S, d), mu (S, d) = M^-1 b.
Learning adds x/sigma as a rank-one Cholesky update (O(d^2)); a sliding window removes the
oldest observation with a rank-one downdate and refactors from the window every tau pushes
to stop rounding errors from accumulating (amortised O(d^2)); a discounted model refactors
once per batch (O(d^3) per batch, as gamma M + (1 - gamma) lam I is not a low-rank change).

D-LinTS with Kim & Tewari's covariance (``sandwich``) keeps a second precision Mt (discounted by
gamma^2) and its factor Lt, refactored with M once per batch, and samples theta = mu + M^-1 Lt z
(:func:`best_arm_sandwich`, O(p^2) per block).

Shadow modes: 0 = none (plain LinTS), 1 = sliding window of tau, 2 = discount gamma.
Weighting: 0 = the paper's printed rule (batch likelihood only), 1 = fixed share with share
alpha (weights carried across batches); handover = 1: a newborn base bandit takes the shadow's
weight over (the shadow restarts from the share) and is not a pruning candidate in the batch it
is born (0: a plain copy, as Alg. 1: both keep the weight, and it can be pruned at once).
Pruning: 0 = symmetric KL, 1 = distance between means.
Event kinds: 1 = spawn, 2 = prune.

Every kernel releases the GIL (``nogil=True``): a race plays its seeds in threads
(:func:`allseason.sim.runner.iter_race`), one per core.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

LOG_2PI = math.log(2.0 * math.pi)
PLAIN, WINDOW, DISCOUNT = 0, 1, 2
SPAWN, PRUNE = 1, 2
REBUILD_EVERY = 128  # a window is refactored from its data at least every tau and 128 pushes


# ---------------------------------------------------------------------------------------------
# linear algebra on one slot
@njit(cache=True, nogil=True, fastmath=False)
def chol_update(L, x):
    """L L^T + x x^T, in place on the lower factor L; x is overwritten."""
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


@njit(cache=True, nogil=True)
def chol_downdate(L, x):
    """L L^T - x x^T, in place; the result must stay positive definite. x is overwritten."""
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
    """L = cholesky(M), lower, written into L."""
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


@njit(cache=True, nogil=True)
def forward_solve(L, x, out):
    """out = L^-1 x."""
    d = x.shape[0]
    for i in range(d):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * out[k]
        out[i] = s / L[i, i]


@njit(cache=True, nogil=True)
def backward_solve(L, y, out):
    """out = L^-T y."""
    d = y.shape[0]
    for i in range(d - 1, -1, -1):
        s = y[i]
        for k in range(i + 1, d):
            s -= L[k, i] * out[k]
        out[i] = s / L[i, i]


@njit(cache=True, nogil=True)
def refresh_mean(L, b, mu, tmp):
    """mu = M^-1 b = L^-T L^-1 b."""
    forward_solve(L, b, tmp)
    backward_solve(L, tmp, mu)


@njit(cache=True, nogil=True)
def log_predictive(L, mu, x, r, sigma2, tmp):
    """log N(r; <mu, x>, sigma2 + x^T M^-1 x)   (eq. postpred)."""
    forward_solve(L, x, tmp)
    var = sigma2
    mean = 0.0
    for i in range(x.shape[0]):
        var += tmp[i] * tmp[i]
        mean += mu[i] * x[i]
    e = r - mean
    return -0.5 * (LOG_2PI + math.log(var) + e * e / var)


@njit(cache=True, nogil=True)
def best_arm(ctx_t, block, cidx, L, mu, z_t, theta, tmp):
    """Thompson step over G blocks: theta_g = mu_g + L_g^-T z_g for every block, then
    argmax_k <theta_{block[k]}, ctx_t[cidx[k]]>. Dense arms are G = 1, block = 0, cidx = k;
    outer-product arms e_k (x) c_t are G = K, block = k, cidx = 0 (one shared context)."""
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


@njit(cache=True, nogil=True)
def best_arm_sandwich(ctx_t, block, cidx, L, Lt, mu, z_t, theta, tmp, tmp2):
    """Thompson step with covariance M^-1 Mt M^-1 (Kim & Tewari's V^-1 V~ V^-1) over G blocks:
    theta_g = mu_g + L_g^-T L_g^-1 (Lt_g z_g), with M = L L^T and Mt = Lt Lt^T; all O(p^2)."""
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


@njit(cache=True, nogil=True)
def add_obs(M, L, b, x, r, sigma2, tmp):
    """Learn (x, r): M += x x^T / sigma2, b += r x / sigma2, L by a rank-one update."""
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


@njit(cache=True, nogil=True)
def remove_obs(M, L, b, x, r, sigma2, tmp):
    """Forget (x, r): the exact inverse of add_obs, by a rank-one downdate."""
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
def discount_obs(M, b, x, r, gamma, lam, sigma2):
    """M = lam I + gamma (M - lam I) + x x^T / sigma2 ; b = gamma b + r x / sigma2."""
    d = x.shape[0]
    inv = 1.0 / sigma2
    for i in range(d):
        b[i] = gamma * b[i] + r * x[i] * inv
        for j in range(d):
            M[i, j] = gamma * M[i, j] + x[i] * x[j] * inv
        M[i, i] += (1.0 - gamma) * lam


@njit(cache=True, nogil=True)
def decay(M, b, gamma, lam):
    """M = lam I + gamma (M - lam I) ; b = gamma b: a step with no observation in this block."""
    d = b.shape[0]
    for i in range(d):
        b[i] *= gamma
        for j in range(d):
            M[i, j] *= gamma
        M[i, i] += (1.0 - gamma) * lam


@njit(cache=True, nogil=True)
def rebuild_window(M, L, b, wx, wg, wr, count, lam, sigma2):
    """Every block's M, b from scratch over the window's observations, then L = chol(M)."""
    G, p = b.shape
    inv = 1.0 / sigma2
    for g in range(G):
        for i in range(p):
            b[g, i] = 0.0
            for j in range(p):
                M[g, i, j] = 0.0
            M[g, i, i] = lam
    for s in range(count):
        g = wg[s]
        for i in range(p):
            b[g, i] += wr[s] * wx[s, i] * inv
            for j in range(p):
                M[g, i, j] += wx[s, i] * wx[s, j] * inv
    for g in range(G):
        chol_factor(M[g], L[g])


@njit(cache=True, nogil=True)
def short_memory_learn(M, L, b, g, x, r, mode, tau, gamma, lam, sigma2, wx, wg, wr, wstate, tmp):
    """One observation (x in block g) into a short-memory model: M (G, p, p), L, b (G, p).

    WINDOW: wstate = [count, head, pushes since last rebuild]; wx (tau, p), wg (tau,) and
    wr (tau,) form the ring buffer of the last tau observations. DISCOUNT: every block's data
    weight is multiplied by gamma; the caller refactors L once the batch is in."""
    if mode == DISCOUNT:
        for h in range(M.shape[0]):
            if h != g:
                decay(M[h], b[h], gamma, lam)
        discount_obs(M[g], b[g], x, r, gamma, lam, sigma2)
        return
    count, head = wstate[0], wstate[1]
    if count == tau:  # the oldest observation leaves: s = t - tau
        remove_obs(M[wg[head]], L[wg[head]], b[wg[head]], wx[head], wr[head], sigma2, tmp)
    add_obs(M[g], L[g], b[g], x, r, sigma2, tmp)
    wx[head, :] = x
    wg[head] = g
    wr[head] = r
    wstate[1] = (head + 1) % tau
    if count < tau:
        wstate[0] = count + 1
    wstate[2] += 1
    if wstate[2] >= max(tau, REBUILD_EVERY):  # bound the drift of repeated downdates
        rebuild_window(M, L, b, wx, wg, wr, wstate[0], lam, sigma2)
        wstate[2] = 0


@njit(cache=True, nogil=True)
def refresh_means(L, b, mu, tmp):
    """mu_g = M_g^-1 b_g for every block."""
    for g in range(b.shape[0]):
        refresh_mean(L[g], b[g], mu[g], tmp)


# ---------------------------------------------------------------------------------------------
# LinTS, SW-LinTS, D-LinTS
@njit(cache=True, nogil=True)
def lints_chunk(
    ctx,
    block,
    cidx,
    expected,
    noise,
    batch_end,
    z,
    M,
    L,
    b,
    mu,
    mode,
    tau,
    gamma,
    lam,
    sigma2,
    wx,
    wg,
    wr,
    wstate,
    out_arm,
    out_reward,
    sandwich,
    Mt,
    Lt,
    bt,
):
    """Play a chunk with one Thompson-sampling posterior (mode PLAIN, WINDOW or DISCOUNT).

    ctx (n, C, p) contexts, block/cidx (K,) the block and context of each arm (see best_arm);
    z (n, G, p); state M, L (G, p, p), b, mu (G, p). sandwich (DISCOUNT only): sample with
    covariance M^-1 Mt M^-1, where Mt = lam I + sum gamma^(2(t-s)) x x^T / sigma2 is kept in
    Mt, Lt (G, p, p) (bt (G, p) is a scratch the discounting also scales)."""
    G, p = mu.shape
    tmp = np.empty(p)
    tmp2 = np.empty(p)
    theta = np.empty((G, p))
    gamma2 = gamma * gamma
    start = 0
    for bi in range(batch_end.shape[0]):
        end = batch_end[bi]
        for t in range(start, end + 1):  # the batch is played with the posterior it started with
            if sandwich:
                a = best_arm_sandwich(ctx[t], block, cidx, L, Lt, mu, z[t], theta, tmp, tmp2)
            else:
                a = best_arm(ctx[t], block, cidx, L, mu, z[t], theta, tmp)
            out_arm[t] = a
            out_reward[t] = expected[t, a] + noise[t]
        for t in range(start, end + 1):
            a = out_arm[t]
            g, x = block[a], ctx[t, cidx[a]]
            if mode == PLAIN:
                add_obs(M[g], L[g], b[g], x, out_reward[t], sigma2, tmp)
            else:
                short_memory_learn(
                    M,
                    L,
                    b,
                    g,
                    x,
                    out_reward[t],
                    mode,
                    tau,
                    gamma,
                    lam,
                    sigma2,
                    wx,
                    wg,
                    wr,
                    wstate,
                    tmp,
                )
                if sandwich:  # the same observation with the squared discount
                    short_memory_learn(
                        Mt,
                        Lt,
                        bt,
                        g,
                        x,
                        out_reward[t],
                        mode,
                        tau,
                        gamma2,
                        lam,
                        sigma2,
                        wx,
                        wg,
                        wr,
                        wstate,
                        tmp,
                    )
        if mode == DISCOUNT:  # O(p^3) per block and batch: gamma M + (1 - gamma) lam I is a
            for g in range(G):  # full-rank change, no rank-one update of L follows it
                chol_factor(M[g], L[g])
                if sandwich:
                    chol_factor(Mt[g], Lt[g])
        refresh_means(L, b, mu, tmp)
        start = end + 1


# ---------------------------------------------------------------------------------------------
# All-Season
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
    """KL_sym = 0.5 [tr(M2 S1) + tr(M1 S2) - 2d] + 0.5 dm^T (M1 + M2) dm, dm = mu2 - mu1."""
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
def prune_one(M, mu, ids, alive, prune_mode, work_S, work_tr, dirty, work_kl, kl_ok):
    """Find the closest pair of base bandits (slots 1..) and drop the less certain one.

    M (S, G, p, p), mu (S, G, p): block-diagonal posteriors; KL and tr(M^-1) are sums over
    blocks. work_S (S, G, p, p) / work_tr (S, G) cache each block's covariance and its trace;
    only blocks marked in dirty (S, G) are recomputed. work_kl (S, S, G) caches the symmetric
    KL of each pair (i < j) block by block, valid where kl_ok (S, S, G): a block's KL is
    recomputed only when one of the two blocks changed (the sum over blocks is taken in the
    same order, so the distance is the same bit for bit).

    The paper's text: 'discard the one which is less certain about its estimate, measured
    with the trace of the associated posterior covariance' -- i.e. the larger tr(M^-1).
    Algorithm 4 prints argmin, which would keep the less certain one; we follow the text.
    Returns (dropped slot, twin slot, distance)."""
    S, G, p = mu.shape
    tmp = np.empty(p)
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
                _covariance(Lw, work_S[s, g], Xw)
                tr = 0.0
                for i in range(p):
                    tr += work_S[s, g, i, i]
                work_tr[s, g] = tr
                dirty[s, g] = False
                for o in range(S):
                    kl_ok[s, o, g] = False
                    kl_ok[o, s, g] = False
    best_i, best_j, best = -1, -1, np.inf
    for i in range(1, S):
        if not alive[i]:
            continue
        for j in range(i + 1, S):
            if not alive[j]:
                continue
            dist = 0.0
            if prune_mode == 0:
                for g in range(G):
                    if not kl_ok[i, j, g]:
                        work_kl[i, j, g] = sym_kl(
                            M[i, g], mu[i, g], work_S[i, g], M[j, g], mu[j, g], work_S[j, g], tmp
                        )
                        kl_ok[i, j, g] = True
                    dist += work_kl[i, j, g]
            else:
                for g in range(G):
                    for k in range(p):
                        dist += (mu[i, g, k] - mu[j, g, k]) ** 2
                dist = math.sqrt(dist)
            if dist < best:  # strict: a tie keeps the first pair in slot order
                best, best_i, best_j = dist, i, j
    tr_i, tr_j = work_tr[best_i].sum(), work_tr[best_j].sum()
    if tr_i > tr_j or (tr_i == tr_j and ids[best_i] > ids[best_j]):
        drop, twin = best_i, best_j
    else:
        drop, twin = best_j, best_i
    alive[drop] = False
    return drop, twin, best


@njit(cache=True, nogil=True)
def allseason_chunk(
    ctx,
    block,
    cidx,
    expected,
    noise,
    batch_end,
    u,
    z,
    step0,
    M,
    L,
    b,
    mu,
    ids,
    logw,
    alive,
    counters,
    wx,
    wg,
    wr,
    wstate,
    shadow_mode,
    tau,
    gamma,
    lam,
    sigma2,
    n_max,
    weighting,
    share,
    handover,
    prune_mode,
    work_S,
    work_tr,
    dirty,
    work_kl,
    kl_ok,
    out_arm,
    out_reward,
    out_player,
    out_wids,
    out_w,
    ev_step,
    ev_kind,
    ev_bandit,
    ev_other,
    ev_value,
):
    """Algorithm 1 (batch version) over a chunk of whole batches. Slot 0 is the shadow bandit.

    Arms as in lints_chunk (ctx, block, cidx); state M, L (S, G, p, p), b, mu (S, G, p).
    counters = [next bandit id, number of events written]. Outputs are written in place
    (out_wids/out_w per batch, events appended at counters[1])."""
    S, G, p = mu.shape
    tmp = np.empty(p)
    theta = np.empty((G, p))
    ll = np.empty(S)
    w = np.empty(S)
    pslot = np.empty(out_arm.shape[0], dtype=np.int64)
    played = np.zeros(S, dtype=np.bool_)
    start = 0
    for bi in range(batch_end.shape[0]):
        end = batch_end[bi]
        # weights are fixed within a batch (Alg. 1, line 5)
        norm = _logsumexp(logw, alive)
        for s in range(S):
            w[s] = math.exp(logw[s] - norm) if alive[s] else 0.0
        played[:] = False
        for t in range(start, end + 1):
            # Alg. 1 line 5: j ~ Discrete(omega); inverse CDF over slots in order
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
            out_arm[t] = a
            out_reward[t] = expected[t, a] + noise[t]
            out_player[t] = ids[j]
        step_end = step0 + end
        # score every bandit on the batch with its posterior before the batch: the text's
        # p_j(r_t | x_t, D_{t-1}) (eq. postpred); Alg. 1 computes it after the update.
        for s in range(S):
            if alive[s]:
                acc = 0.0
                for t in range(start, end + 1):
                    a = out_arm[t]
                    g = block[a]
                    acc += log_predictive(
                        L[s, g], mu[s, g], ctx[t, cidx[a]], out_reward[t], sigma2, tmp
                    )
                ll[s] = acc
        # Alg. 1 lines 10-14: the shadow played -> a new base bandit, a copy of the shadow
        spawned = played[0]
        born = -1
        if spawned:
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
            played[k] = False
            born = k
            e = counters[1]
            ev_step[e], ev_kind[e], ev_bandit[e], ev_other[e], ev_value[e] = (
                step_end,
                SPAWN,
                ids[k],
                ids[0],
                np.nan,
            )
            counters[1] = e + 1
        # line 15: the shadow learns the batch whoever played (window or discount)
        for t in range(start, end + 1):
            a = out_arm[t]
            short_memory_learn(
                M[0],
                L[0],
                b[0],
                block[a],
                ctx[t, cidx[a]],
                out_reward[t],
                shadow_mode,
                tau,
                gamma,
                lam,
                sigma2,
                wx,
                wg,
                wr,
                wstate,
                tmp,
            )
        if shadow_mode == DISCOUNT:
            for g in range(G):
                chol_factor(M[0, g], L[0, g])
        refresh_means(L[0], b[0], mu[0], tmp)
        # lines 16-18: base bandits learn the steps they played
        for t in range(start, end + 1):
            s = pslot[t]
            if s > 0:
                a = out_arm[t]
                g = block[a]
                add_obs(M[s, g], L[s, g], b[s, g], ctx[t, cidx[a]], out_reward[t], sigma2, tmp)
                refresh_mean(L[s, g], b[s, g], mu[s, g], tmp)
                dirty[s, g] = True
        # lines 19-21: too many base bandits -> prune the closest pair's less certain one
        n_base = 0
        for s in range(1, S):
            if alive[s]:
                n_base += 1
        # handover: the newborn has not played yet, so it is not a candidate this batch
        shield = handover and born >= 0 and n_base - 1 >= 2
        if shield:
            alive[born] = False
        while n_base > n_max:
            drop, twin, dist = prune_one(
                M, mu, ids, alive, prune_mode, work_S, work_tr, dirty, work_kl, kl_ok
            )
            e = counters[1]
            ev_step[e], ev_kind[e], ev_bandit[e], ev_other[e], ev_value[e] = (
                step_end,
                PRUNE,
                ids[drop],
                ids[twin],
                dist,
            )
            counters[1] = e + 1
            ids[drop] = -1
            n_base -= 1
        if shield:
            alive[born] = True
        # line 22: new weights (Alg. 3), in log space
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
        for s in range(S):
            out_wids[bi, s] = ids[s] if alive[s] else -1
            out_w[bi, s] = math.exp(logw[s]) if alive[s] else 0.0
        start = end + 1


# ---------------------------------------------------------------------------------------------
# DenBand (allseason.policies.denband): LinUCB experts with auditors, block-diagonal ridge
CREATE, DISCARD = 3, 4


@njit(cache=True, nogil=True)
def _radius(n, d, lam, sigma, delta):
    """confidence_radius with S = L = 1 (allseason.policies.ridge)."""
    return (
        sigma * math.sqrt(d * math.log1p(n * 1.0 * 1.0 / (d * lam)) + 2.0 * math.log(1.0 / delta))
        + math.sqrt(lam) * 1.0
    )


@njit(cache=True, nogil=True)
def _quad(V, x, tmp):
    """x^T V x for a symmetric V."""
    _matvec(V, x, tmp)
    return _dot(x, tmp)


@njit(cache=True, nogil=True)
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True, nogil=True)
def _matvec(A, x, out):
    """out = A x for a symmetric A (exactly: every DenBand matrix is), as sum_j x_j A[j, :]:
    each out[i] is the same sum, in the same order, as the dot product of row i with x, but
    the loop runs along rows and vectorises."""
    p = x.shape[0]
    for i in range(p):
        out[i] = 0.0
    for j in range(p):
        xj = x[j]
        for i in range(p):
            out[i] += A[j, i] * xj


@njit(cache=True, nogil=True)
def ridge_apply(M, Vinv, b, steps, x, r, sign, dense, tmp):
    """RidgeModel._apply on one block: M += sign x x^T, b += sign r x, V^-1 by Sherman-Morrison,
    refreshed from M every RidgeModel.REFRESH steps. An all-zero x changes nothing in a
    block model (not even its step count); in a dense model (``dense``) it counts a step.
    Returns True if anything was applied (the caller refreshes what depends on V^-1 or b)."""
    p = x.shape[0]
    if not dense:
        zero = True
        for i in range(p):
            if x[i] != 0.0:
                zero = False
                break
        if zero:
            return False
    for i in range(p):
        for j in range(p):
            M[i, j] += sign * (x[i] * x[j])
        b[i] += (sign * r) * x[i]
    _matvec(Vinv, x, tmp)  # (V +- x x^T)^-1 = V^-1 -+ v v^T / (1 +- x^T v)
    coef = sign / (1.0 + sign * _dot(x, tmp))
    for i in range(p):
        for j in range(p):
            Vinv[i, j] -= coef * (tmp[i] * tmp[j])
    steps[0] += 1
    if steps[0] >= 256:  # RidgeModel.REFRESH: stop rounding error building up
        inv = np.linalg.inv(M)
        for i in range(p):
            for j in range(p):
                Vinv[i, j] = 0.5 * (inv[i, j] + inv[j, i])
        steps[0] = 0
    return True


@njit(cache=True, nogil=True)
def _denband_beta(aM, aVinv, ab, theta, lam, out, tmp):
    """beta = (lam I + G_W)^-1 (c_W - G_W theta), G_W theta = (aM - lam I) theta."""
    p = theta.shape[0]
    _matvec(aM, theta, tmp)
    for i in range(p):
        tmp[i] = ab[i] - (tmp[i] - lam * theta[i])
    _matvec(aVinv, tmp, out)


@njit(cache=True, nogil=True)
def _denband_init(
    e,
    step,
    bid,
    lam,
    mM,
    mVinv,
    mb,
    mtheta,
    msteps,
    mn,
    aM,
    aVinv,
    ab,
    asteps,
    an,
    beta,
    beta_ok,
    eids,
    last_adm,
):
    G, p = mb.shape[1], mb.shape[2]
    for g in range(G):
        for i in range(p):
            for j in range(p):
                mM[e, g, i, j] = 0.0
                mVinv[e, g, i, j] = 0.0
                aM[e, g, i, j] = 0.0
                aVinv[e, g, i, j] = 0.0
            mM[e, g, i, i] = lam
            aM[e, g, i, i] = lam
            mVinv[e, g, i, i] = 1.0 / lam
            aVinv[e, g, i, i] = 1.0 / lam
            mb[e, g, i] = 0.0
            mtheta[e, g, i] = 0.0
            ab[e, g, i] = 0.0
            beta[e, g, i] = 0.0
        msteps[e, g] = 0
        asteps[e, g] = 0
        beta_ok[e, g] = True
    mn[e] = 0.0
    an[e] = 0.0
    eids[e] = bid
    last_adm[e] = step


@njit(cache=True, nogil=True)
def _denband_move(
    src,
    dst,
    mM,
    mVinv,
    mb,
    mtheta,
    msteps,
    mn,
    aM,
    aVinv,
    ab,
    asteps,
    an,
    beta,
    beta_ok,
    eids,
    last_adm,
    share,
):
    mM[dst] = mM[src]
    mVinv[dst] = mVinv[src]
    mb[dst] = mb[src]
    mtheta[dst] = mtheta[src]
    msteps[dst] = msteps[src]
    mn[dst] = mn[src]
    aM[dst] = aM[src]
    aVinv[dst] = aVinv[src]
    ab[dst] = ab[src]
    asteps[dst] = asteps[src]
    an[dst] = an[src]
    beta[dst] = beta[src]
    beta_ok[dst] = beta_ok[src]
    eids[dst] = eids[src]
    last_adm[dst] = last_adm[src]
    share[dst] = share[src]


@njit(cache=True, nogil=True)
def denband_chunk(
    ctx,
    block,
    cidx,
    expected,
    noise,
    batch_end,
    b0,
    step0,
    d,
    tau,
    delta_l,
    delta,
    max_idle,
    lam,
    sigma,
    tie,
    mM,
    mVinv,
    mb,
    mtheta,
    msteps,
    mn,
    aM,
    aVinv,
    ab,
    asteps,
    an,
    beta,
    beta_ok,
    eids,
    last_adm,
    share,
    state,
    wx,
    wg,
    wr,
    wstate,
    out_arm,
    out_reward,
    out_player,
    out_wids,
    out_w,
    out_nw,
    ev_step,
    ev_kind,
    ev_bandit,
):
    """DenBand (see allseason.policies.denband) over batches b0.. of a chunk; the same
    decisions as its plain select/update loop.

    Arms as in lints_chunk. Expert e (slots 0..n-1, in order of creation): model mM, mVinv
    (cap, G, p, p), mb, mtheta (cap, G, p), msteps (cap, G), mn (cap,) = n_obs; its auditor
    aM, aVinv, ab, asteps, an; beta (cap, G, p) cached per block where beta_ok. state =
    [number of experts, next id, events written]; wx (tau, p), wg, wr, wstate = [count, head]:
    the last tau observations. max_idle < 0: never discard. share (cap,): how many arms
    selected each expert at the last step. Scores within a relative ``tie`` of the best one are
    ties (lowest index). Returns the first batch not played: a batch is
    only started with room for one new expert per step (the caller grows the arrays)."""
    cap, G, p = mb.shape
    K = block.shape[0]
    dense = G == 1
    tmp = np.empty(p)
    adm = np.zeros((cap, K), dtype=np.bool_)
    mu = np.empty((cap, K))
    cb = np.empty((cap, K))
    lcb = np.empty((cap, K))
    chosen = np.empty(K, dtype=np.int64)
    for bi in range(b0, batch_end.shape[0]):
        start = 0 if bi == 0 else batch_end[bi - 1] + 1
        end = batch_end[bi]
        if state[0] + (end - start + 1) > cap:
            return bi
        for t in range(start, end + 1):
            n_exp = state[0]
            for e in range(n_exp + 1):
                if e == n_exp:  # an arm with no admissible expert: create one
                    missing = False
                    for k in range(K):
                        anyk = False
                        for f in range(n_exp):
                            if adm[f, k]:
                                anyk = True
                                break
                        if not anyk:
                            missing = True
                            break
                    if not missing:
                        break
                    _denband_init(
                        e,
                        step0 + t,
                        state[1],
                        lam,
                        mM,
                        mVinv,
                        mb,
                        mtheta,
                        msteps,
                        mn,
                        aM,
                        aVinv,
                        ab,
                        asteps,
                        an,
                        beta,
                        beta_ok,
                        eids,
                        last_adm,
                    )
                    j = state[2]
                    ev_step[j], ev_kind[j], ev_bandit[j] = step0 + t, CREATE, state[1]
                    state[2] = j + 1
                    state[1] += 1
                    state[0] = n_exp + 1
                rm = _radius(mn[e], d, lam, sigma, delta)
                ra = _radius(an[e], d, lam, sigma, delta)
                for k in range(K):
                    g = block[k]
                    x = ctx[t, cidx[k]]
                    if not beta_ok[e, g]:
                        _denband_beta(
                            aM[e, g], aVinv[e, g], ab[e, g], mtheta[e, g], lam, beta[e, g], tmp
                        )
                        beta_ok[e, g] = True
                    mu[e, k] = _dot(x, mtheta[e, g])
                    cb[e, k] = rm * math.sqrt(max(_quad(mVinv[e, g], x, tmp), 0.0))
                    err = abs(_dot(x, beta[e, g]))
                    cba = ra * math.sqrt(max(_quad(aVinv[e, g], x, tmp), 0.0))
                    adm[e, k] = err < cba + cb[e, k] + delta_l
                    lcb[e, k] = err - cba if adm[e, k] else np.inf
            n_exp = state[0]
            for e in range(n_exp):
                share[e] = 0
            for k in range(K):  # the expert of each arm: smallest lcb, ties to the oldest
                low = lcb[0, k]
                for e in range(1, n_exp):
                    low = min(low, lcb[e, k])
                best = 0
                while not lcb[best, k] <= low + tie * abs(low):
                    best += 1
                chosen[k] = best
                share[best] += 1
            top = -np.inf
            for k in range(K):  # the arm: largest UCB of its expert, ties to the lowest
                top = max(top, mu[chosen[k], k] + cb[chosen[k], k])
            a = 0
            while not mu[chosen[a], a] + cb[chosen[a], a] >= top - tie * abs(top):
                a += 1
            for e in range(n_exp):
                for k in range(K):
                    if adm[e, k]:
                        last_adm[e] = step0 + t
                        break
            out_arm[t] = a
            out_reward[t] = expected[t, a] + noise[t]
            out_player[t] = eids[chosen[a]]
        # learning, observation by observation
        for t in range(start, end + 1):
            a = out_arm[t]
            g = block[a]
            x = ctx[t, cidx[a]]
            r = out_reward[t]
            n_exp = state[0]
            for e in range(n_exp):  # absorb if admissible and the error is within the width
                if not beta_ok[e, g]:
                    _denband_beta(
                        aM[e, g], aVinv[e, g], ab[e, g], mtheta[e, g], lam, beta[e, g], tmp
                    )
                    beta_ok[e, g] = True
                m = _dot(x, mtheta[e, g])
                c = _radius(mn[e], d, lam, sigma, delta) * math.sqrt(
                    max(_quad(mVinv[e, g], x, tmp), 0.0)
                )
                err = abs(_dot(x, beta[e, g]))
                ca = _radius(an[e], d, lam, sigma, delta) * math.sqrt(
                    max(_quad(aVinv[e, g], x, tmp), 0.0)
                )
                if err < ca + c + delta_l and abs(m - r) <= c + delta_l:
                    mn[e] += 1.0
                    if ridge_apply(
                        mM[e, g], mVinv[e, g], mb[e, g], msteps[e, g : g + 1], x, r, 1.0, dense, tmp
                    ):
                        _matvec(mVinv[e, g], mb[e, g], mtheta[e, g])
                        beta_ok[e, g] = False
            count, head = wstate[0], wstate[1]
            go = wg[head]
            for e in range(n_exp):  # every auditor: add, and drop the oldest past tau
                an[e] += 1.0
                if ridge_apply(
                    aM[e, g], aVinv[e, g], ab[e, g], asteps[e, g : g + 1], x, r, 1.0, dense, tmp
                ):
                    beta_ok[e, g] = False
                if an[e] > tau:
                    an[e] -= 1.0
                    if ridge_apply(
                        aM[e, go],
                        aVinv[e, go],
                        ab[e, go],
                        asteps[e, go : go + 1],
                        wx[head],
                        wr[head],
                        -1.0,
                        dense,
                        tmp,
                    ):
                        beta_ok[e, go] = False
            wx[head, :] = x
            wg[head] = g
            wr[head] = r
            wstate[1] = (head + 1) % tau
            if count < tau:
                wstate[0] = count + 1
        if max_idle >= 0:  # discard the experts admissible for no arm in max_idle steps
            step = step0 + end
            n_exp, kept = state[0], 0
            for e in range(n_exp):
                if step - last_adm[e] >= max_idle:
                    j = state[2]
                    ev_step[j], ev_kind[j], ev_bandit[j] = step, DISCARD, eids[e]
                    state[2] = j + 1
                    continue
                if kept != e:
                    _denband_move(
                        e,
                        kept,
                        mM,
                        mVinv,
                        mb,
                        mtheta,
                        msteps,
                        mn,
                        aM,
                        aVinv,
                        ab,
                        asteps,
                        an,
                        beta,
                        beta_ok,
                        eids,
                        last_adm,
                        share,
                    )
                kept += 1
            state[0] = kept
        n_exp = state[0]
        total = 0.0
        for e in range(n_exp):
            total += share[e] / K
        out_nw[bi] = n_exp
        for e in range(n_exp):
            out_wids[bi, e] = eids[e]
            out_w[bi, e] = (share[e] / K) / total if total > 0 else 1.0 / max(n_exp, 1)
    return batch_end.shape[0]


# ---------------------------------------------------------------------------------------------
# BoB (allseason.policies.bob): the SW-UCB base bandit; EXP3 stays in Python
@njit(cache=True, nogil=True)
def _ridge_reset(M, Vinv, b, theta, steps, lam):
    G, p = b.shape
    for g in range(G):
        for i in range(p):
            for j in range(p):
                M[g, i, j] = 0.0
                Vinv[g, i, j] = 0.0
            M[g, i, i] = lam
            Vinv[g, i, i] = 1.0 / lam
            b[g, i] = 0.0
            theta[g, i] = 0.0
        steps[g] = 0


@njit(cache=True, nogil=True)
def bob_chunk(
    ctx,
    block,
    cidx,
    expected,
    noise,
    batch_end,
    b0,
    b1,
    step0,
    lam,
    tie,
    M,
    Vinv,
    b,
    theta,
    steps,
    wx,
    wg,
    wr,
    wstate,
    params,
    reset_t,
    reset_w,
    reset_beta,
    out_arm,
    out_reward,
):
    """Batches b0..b1-1 of a chunk with SW-UCB (ridge M, Vinv (G, p, p), b, theta (G, p),
    steps (G,)): x = argmax x^T theta + beta ||x||_{V^-1} (ties up to ``tie``, relative, to
    the lowest index), then learn the batch's observations of the current block, the last w
    of them (ring wx (cap, p), wg, wr; wstate = [count, head, w]). params = [beta, global
    step at which the current block started]. At local step reset_t[i] a new block starts:
    the model and window restart, with window reset_w[i] and width factor reset_beta[i]."""
    G, p = b.shape
    K = block.shape[0]
    dense = G == 1
    tmp = np.empty(p)
    score = np.empty(K)
    r_i = 0
    for bi in range(b0, b1):
        start = 0 if bi == 0 else batch_end[bi - 1] + 1
        end = batch_end[bi]
        for t in range(start, end + 1):
            if r_i < reset_t.shape[0] and reset_t[r_i] == t:
                _ridge_reset(M, Vinv, b, theta, steps, lam)
                wstate[0], wstate[1], wstate[2] = 0, 0, reset_w[r_i]
                params[0], params[1] = reset_beta[r_i], step0 + t
                r_i += 1
            beta = params[0]
            top = -np.inf
            for k in range(K):
                g = block[k]
                x = ctx[t, cidx[k]]
                score[k] = _dot(x, theta[g]) + beta * math.sqrt(max(_quad(Vinv[g], x, tmp), 0.0))
                top = max(top, score[k])
            a = 0
            while not score[a] >= top - tie * abs(top):
                a += 1
            out_arm[t] = a
            out_reward[t] = expected[t, a] + noise[t]
        for t in range(start, end + 1):
            if step0 + t < params[1]:
                continue  # a late observation of the previous block: counted, not learnt
            a = out_arm[t]
            g = block[a]
            x = ctx[t, cidx[a]]
            count, head, w = wstate[0], wstate[1], wstate[2]
            cap = wx.shape[0]
            if count == w:  # the oldest leaves the window
                go = wg[head]
                if ridge_apply(
                    M[go], Vinv[go], b[go], steps[go : go + 1], wx[head], wr[head], -1.0, dense, tmp
                ):
                    _matvec(Vinv[go], b[go], theta[go])
                head = (head + 1) % cap
                count -= 1
            if ridge_apply(
                M[g], Vinv[g], b[g], steps[g : g + 1], x, out_reward[t], 1.0, dense, tmp
            ):
                _matvec(Vinv[g], b[g], theta[g])
            slot = (head + count) % cap
            wx[slot, :] = x
            wg[slot] = g
            wr[slot] = out_reward[t]
            wstate[0], wstate[1] = count + 1, head
