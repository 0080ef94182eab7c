"""LinTS, SW-LinTS and D-LinTS, compiled; and the short-memory models (sliding window,
discount) that All-Season's shadow shares.

A sliding window removes the oldest observation with a rank-one downdate and refactors from
the window every ``max(tau, REBUILD_EVERY)`` pushes, to stop rounding errors accumulating
(amortised O(d^2)); a discounted model refactors once per batch (O(d^3) per batch, as
gamma M + (1 - gamma) lam I is not a low-rank change).

D-LinTS with Kim & Tewari's covariance (``sandwich``) keeps a second precision Mt (discounted
by gamma^2) and its factor Lt, refactored with M once per batch, and samples
theta = mu + M^-1 Lt z (:func:`~allseason.kernels.linalg.best_arm_sandwich`, O(p^2) per block).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .linalg import (
    add_obs,
    best_arm,
    best_arm_sandwich,
    chol_factor,
    refresh_changed,
    refresh_means,
    remove_obs,
)
from .types import DISCOUNT, PLAIN, WINDOW, Rounds, Window, new_window

REBUILD_EVERY = 128  # a window is refactored from its data at least every tau and 128 pushes


class LinTSState(NamedTuple):
    """What a LinTS-family policy learns, as arrays the kernel changes in place.

    Attributes
    ----------
    M, L : ndarray, shape (G, p, p)
        Precision of each parameter block and its lower Cholesky factor.
    b, mu : ndarray, shape (G, p)
        ``b`` and the posterior mean ``mu = M^-1 b`` of each block.
    window : Window
        The last ``tau`` observations (sliding window; room 1 otherwise).
    Mt, Lt : ndarray, shape (G, p, p)
        D-LinTS with Kim & Tewari's covariance: the precision discounted by gamma^2 and its
        factor (shape (1, 1, 1) when unused).
    bt : ndarray, shape (G, p)
        Scratch that the discounting of Mt also scales.
    """

    M: np.ndarray
    L: np.ndarray
    b: np.ndarray
    mu: np.ndarray
    window: Window
    Mt: np.ndarray
    Lt: np.ndarray
    bt: np.ndarray


class LinTSParams(NamedTuple):
    """A LinTS-family policy's hyperparameters, as the kernel reads them.

    Attributes
    ----------
    mode : int
        :data:`~allseason.kernels.types.PLAIN`, ``WINDOW`` or ``DISCOUNT``.
    tau : int
        Window length (1 when there is none).
    gamma : float
        Discount (1 when there is none).
    lam : float
        Prior precision.
    sigma2 : float
        Noise variance.
    sandwich : bool
        Sample with covariance M^-1 Mt M^-1 (Kim & Tewari), DISCOUNT only.
    """

    mode: int
    tau: int
    gamma: float
    lam: float
    sigma2: float
    sandwich: bool


def new_lints_state(n_blocks: int, p: int, lam: float, tau: int, sandwich: bool) -> LinTSState:
    """The prior state: M = lam I, L = sqrt(lam) I, b = mu = 0, an empty window.

    Parameters
    ----------
    n_blocks : int
        G, the number of parameter blocks.
    p : int
        Length of a block.
    lam : float
        Prior precision.
    tau : int
        Room of the window (at least 1).
    sandwich : bool
        Whether Mt, Lt, bt are used (else they are (1, 1, 1) dummies).

    Returns
    -------
    LinTSState
    """
    G = n_blocks
    Gt, pt = (G, p) if sandwich else (1, 1)
    return LinTSState(
        M=np.tile(lam * np.eye(p), (G, 1, 1)),
        L=np.tile(np.sqrt(lam) * np.eye(p), (G, 1, 1)),
        b=np.zeros((G, p)),
        mu=np.zeros((G, p)),
        window=new_window(max(tau, 1), p),
        Mt=np.tile(lam * np.eye(pt), (Gt, 1, 1)),
        Lt=np.tile(np.sqrt(lam) * np.eye(pt), (Gt, 1, 1)),
        bt=np.zeros((Gt, pt)),
    )


# -- short memory ---------------------------------------------------------------------------
@njit(cache=True, nogil=True)
def discount_obs(M, b, x, r, gamma, lam, sigma2):
    """M = lam I + gamma (M - lam I) + x x^T / sigma2 ; b = gamma b + r x / sigma2.

    Parameters
    ----------
    M : ndarray, shape (d, d)
        Changed in place.
    b : ndarray, shape (d,)
        Changed in place.
    x : ndarray, shape (d,)
    r, gamma, lam, sigma2 : float
        Reward, discount, prior precision, noise variance.
    """
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


@njit(cache=True, nogil=True, inline="always")
def short_memory_learn(M, L, b, g, x, r, mode, tau, gamma, lam, sigma2, wx, wg, wr, wstate, tmp):
    """One observation (x in block g) into a short-memory model: M (G, p, p), L, b (G, p).

    Parameters
    ----------
    M, L : ndarray, shape (G, p, p)
        Precisions and their lower factors, changed in place.
    b : ndarray, shape (G, p)
        Changed in place.
    g : int
        The observation's block.
    x : ndarray, shape (p,)
    r : float
    mode : int
        WINDOW or DISCOUNT. DISCOUNT multiplies every block's data weight by gamma; the
        caller refactors L once the batch is in.
    tau : int
        The window.
    gamma : float
        The discount.
    lam, sigma2 : float
        Prior precision, noise variance.
    wx, wg, wr, wstate : ndarray
        WINDOW: the fields of the :class:`~allseason.kernels.types.Window` of the last tau
        observations, ``wstate = [count, head, pushes since the last rebuild]``. Unused by
        DISCOUNT. (Arrays, not the Window: a per-step helper takes arrays, which numba passes
        for less than a named tuple.)
    tmp : ndarray, shape (p,)
        Workspace.
    """
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


# -- LinTS, SW-LinTS, D-LinTS -----------------------------------------------------------------
@njit(cache=True, nogil=True, inline="always")
def lints_batch(M, L, b, mu, wx, wg, wr, wstate, Mt, Lt, bt, gs, xs, rs, params, tmp):
    """Learn one batch of resolved steps: the one batch update of the LinTS family, which
    :func:`lints_chunk` calls at each batch end and the agent (:mod:`allseason.agent`) when a
    batch of rewards has come in.

    Parameters
    ----------
    M, L, b, mu, wx, wg, wr, wstate, Mt, Lt, bt : ndarray
        The fields of :class:`LinTSState` (the window's unpacked), changed in place.
    gs : ndarray of int64, shape (n,)
        Each step's parameter block.
    xs : ndarray, shape (n, p)
        Each step's arm (its context in that block).
    rs : ndarray, shape (n,)
        The rewards.
    params : LinTSParams (plain tuple)
        The hyperparameters.
    tmp : ndarray, shape (p,)
        Workspace.
    """
    mode, tau, gamma, lam, sigma2, sandwich = params
    G = mu.shape[0]
    gamma2 = gamma * gamma
    # one observation (B = 1) changes one block, or two (a window's oldest leaves), unless
    # a window is refactored or a discount decays them all: only those means are refreshed
    one = rs.shape[0] == 1 and mode != DISCOUNT
    g_out = wg[wstate[1]] if one and mode == WINDOW and wstate[0] == tau else -1
    for t in range(rs.shape[0]):
        g, x, r = gs[t], xs[t], rs[t]
        if mode == PLAIN:
            add_obs(M[g], L[g], b[g], x, r, sigma2, tmp)
            continue
        short_memory_learn(M, L, b, g, x, r, mode, tau, gamma, lam, sigma2, wx, wg, wr, wstate, tmp)
        if sandwich:  # the same observation with the squared discount
            short_memory_learn(
                Mt, Lt, bt, g, x, r, mode, tau, gamma2, lam, sigma2, wx, wg, wr, wstate, tmp
            )
    if mode == DISCOUNT:  # O(p^3) per block and batch: gamma M + (1 - gamma) lam I is a
        for g in range(G):  # full-rank change, no rank-one update of L follows it
            chol_factor(M[g], L[g])
            if sandwich:
                chol_factor(Mt[g], Lt[g])
    if one and not (mode == WINDOW and wstate[2] == 0):  # (0: the window was refactored)
        refresh_changed(L, b, mu, tmp, gs[0], g_out)
    else:
        refresh_means(L, b, mu, tmp)


@njit(cache=True, nogil=True)
def lints_chunk(rounds, z, state, params, out_arm, out_reward):
    """Play a chunk with one Thompson-sampling posterior (mode PLAIN, WINDOW or DISCOUNT).

    Parameters
    ----------
    rounds : Rounds
        The chunk (contexts, arms' blocks, expected rewards, noise, batch ends).
    z : ndarray, shape (n, G, p)
        The standard normals of each step's Thompson sample.
    state : LinTSState
        The posterior, changed in place.
    params : LinTSParams
        The hyperparameters. With ``sandwich`` (DISCOUNT only) theta is sampled with
        covariance M^-1 Mt M^-1, Mt = lam I + sum gamma^(2(t-s)) x x^T / sigma2.
    out_arm : ndarray of int64, shape (n,)
        Written: the arm played at each step.
    out_reward : ndarray, shape (n,)
        Written: its reward, ``expected[t, a] + noise[t]``.

    Notes
    -----
    The named tuples are unpacked here, once: the helpers called every step take arrays
    (numba counts a reference to every array of a named tuple passed to a function, which
    costs more than the step itself). The batch update is :func:`lints_batch`.
    """
    ctx, block, cidx, expected, noise, batch_end = rounds
    M, L, b, mu, window, Mt, Lt, bt = state
    wx, wg, wr, wstate = window
    sandwich = params[5]
    G, p = mu.shape
    n = out_arm.shape[0]
    tmp = np.empty(p)
    tmp2 = np.empty(p)
    theta = np.empty((G, p))
    gs = np.empty(n, dtype=np.int64)
    xs = np.empty((n, p))
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
            gs[t] = block[a]
            xs[t] = ctx[t, cidx[a]]
        lints_batch(
            M, L, b, mu, wx, wg, wr, wstate, Mt, Lt, bt,
            gs[start : end + 1], xs[start : end + 1], out_reward[start : end + 1], params, tmp,
        )  # fmt: skip
        start = end + 1


__all__ = [
    "REBUILD_EVERY",
    "LinTSState",
    "LinTSParams",
    "new_lints_state",
    "lints_chunk",
    "lints_batch",
    "short_memory_learn",
    "discount_obs",
    "decay",
    "rebuild_window",
    "Rounds",
]
