"""The ridge (LinUCB) family, compiled: one ridge block's rank-one update with
Sherman-Morrison (:func:`ridge_apply`, the same arithmetic as
:class:`allseason.policies.ridge.RidgeModel`), and BoB's SW-UCB base bandit
(:func:`bob_chunk`; EXP3 stays in Python, :mod:`allseason.policies.bob`). DenBand's experts
(:mod:`~allseason.kernels.denband`) are built on the same update. D-LinUCB has no compiled
path.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .types import Window, new_window

REFRESH = 256  # RidgeModel.REFRESH: V^-1 is recomputed from M every REFRESH updates


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
def _quad(V, x, tmp):
    """x^T V x for a symmetric V."""
    _matvec(V, x, tmp)
    return _dot(x, tmp)


@njit(cache=True, nogil=True)
def ridge_apply(M, Vinv, b, steps, x, r, sign, dense, tmp):
    """RidgeModel._apply on one block: M += sign x x^T, b += sign r x, V^-1 by Sherman-Morrison,
    refreshed from M every RidgeModel.REFRESH steps. An all-zero x changes nothing in a
    block model (not even its step count); in a dense model (``dense``) it counts a step.

    Parameters
    ----------
    M, Vinv : ndarray, shape (p, p)
        V and V^-1, changed in place.
    b : ndarray, shape (p,)
        Changed in place.
    steps : ndarray of int64, shape (1,)
        Updates since V^-1 was recomputed.
    x : ndarray, shape (p,)
    r : float
    sign : float
        +1 to add (x, r), -1 to remove it.
    dense : bool
        A dense model counts an all-zero x as a step.
    tmp : ndarray, shape (p,)
        Workspace.

    Returns
    -------
    bool
        True if anything was applied (the caller refreshes what depends on V^-1 or b).
    """
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
    if steps[0] >= REFRESH:  # stop rounding error building up
        inv = np.linalg.inv(M)
        for i in range(p):
            for j in range(p):
                Vinv[i, j] = 0.5 * (inv[i, j] + inv[j, i])
        steps[0] = 0
    return True


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


# -- BoB's SW-UCB -------------------------------------------------------------------------------
class BoBState(NamedTuple):
    """BoB's current SW-UCB base bandit, as arrays the kernel changes in place.

    Attributes
    ----------
    M, Vinv : ndarray, shape (G, p, p)
        Ridge matrix V = lam I + sum x x^T of each block and its inverse.
    b, theta : ndarray, shape (G, p)
        sum r x and theta = V^-1 b.
    steps : ndarray of int64, shape (G,)
        Sherman-Morrison updates since V^-1 was last recomputed.
    window : Window
        The current block's last w observations; ``window.state = [count, head, w]``.
    params : ndarray, shape (2,)
        ``[beta, global step at which the current block started]``.
    """

    M: np.ndarray
    Vinv: np.ndarray
    b: np.ndarray
    theta: np.ndarray
    steps: np.ndarray
    window: Window
    params: np.ndarray


class Resets(NamedTuple):
    """Where new BoB blocks start in a call: at local step ``t[i]`` the model and window
    restart with window ``w[i]`` and width factor ``beta[i]``."""

    t: np.ndarray
    w: np.ndarray
    beta: np.ndarray


def new_bob_state(n_blocks: int, p: int) -> BoBState:
    """An empty SW-UCB (all zeros: the first block's reset initialises it).

    Parameters
    ----------
    n_blocks : int
        G, the number of parameter blocks.
    p : int
        Length of a block.

    Returns
    -------
    BoBState
    """
    G = n_blocks
    return BoBState(
        M=np.zeros((G, p, p)),
        Vinv=np.zeros((G, p, p)),
        b=np.zeros((G, p)),
        theta=np.zeros((G, p)),
        steps=np.zeros(G, dtype=np.int64),
        window=new_window(1, p),
        params=np.zeros(2),
    )


@njit(cache=True, nogil=True)
def bob_chunk(rounds, b0, b1, step0, state, lam, tie, resets, out_arm, out_reward):
    """Batches b0 .. b1 - 1 of a chunk with SW-UCB.

    Parameters
    ----------
    rounds : Rounds
        The chunk.
    b0, b1 : int
        The batches to play.
    step0 : int
        Steps played before this chunk.
    state : BoBState
        The SW-UCB, changed in place.
    lam : float
        Ridge regulariser.
    tie : float
        Relative tolerance under which two scores tie (to the lowest index).
    resets : Resets
        Where new blocks start within these batches.
    out_arm, out_reward : ndarray, shape (n,)
        Written: the arm played and its reward. Each batch learns its observations of the
        current block, the last w of them.
    """
    ctx, block, cidx, expected, noise, batch_end = rounds
    M, Vinv, b, theta, steps, window, params = state
    wx, wg, wr, wstate = window
    reset_t, reset_w, reset_beta = resets
    G, p = b.shape
    dense = G == 1
    tmp = np.empty(p)
    K = block.shape[0]
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
            beta, top = params[0], -np.inf  # x^T theta + beta ||x||_{V^-1}, ties to the lowest
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


__all__ = [
    "REFRESH",
    "ridge_apply",
    "BoBState",
    "Resets",
    "new_bob_state",
    "bob_chunk",
]
