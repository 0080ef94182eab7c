"""DenBand (:mod:`allseason.policies.denband`), compiled: LinUCB experts with auditors on
block-diagonal ridge models; the same decisions as the policy's plain select/update loop
(tests/policies/test_denband_kernel.py).

Expert e (slots 0 .. n - 1, in order of creation) has a model (``mM``, ``mVinv``, ``mb``,
``mtheta``, ``msteps``, ``mn`` = its number of observations) and an auditor (``aM``,
``aVinv``, ``ab``, ``asteps``, ``an``) over the last tau observations; ``beta`` is the
auditor's estimate of the model's error, cached per block where ``beta_ok``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .ridge import _dot, _matvec, _quad, ridge_apply
from .types import CREATE, DISCARD, Window, new_window


class Experts(NamedTuple):
    """Per-expert arrays, room for ``cap`` experts (G blocks of length p).

    Attributes
    ----------
    mM, mVinv : ndarray, shape (cap, G, p, p)
        The expert's ridge matrix and its inverse.
    mb, mtheta : ndarray, shape (cap, G, p)
        sum r x and theta.
    msteps : ndarray of int64, shape (cap, G)
        Sherman-Morrison updates since the inverse was recomputed.
    mn : ndarray, shape (cap,)
        Observations absorbed.
    aM, aVinv, ab, asteps, an :
        The same for the auditor (over the window).
    beta : ndarray, shape (cap, G, p)
        The auditor's estimate of the expert's error, valid where ``beta_ok``.
    beta_ok : ndarray of bool, shape (cap, G)
    eids : ndarray of int64, shape (cap,)
        Expert ids.
    last_adm : ndarray of int64, shape (cap,)
        The last step at which the expert was admissible for some arm.
    share : ndarray of int64, shape (cap,)
        How many arms selected the expert at the last step.
    """

    mM: np.ndarray
    mVinv: np.ndarray
    mb: np.ndarray
    mtheta: np.ndarray
    msteps: np.ndarray
    mn: np.ndarray
    aM: np.ndarray
    aVinv: np.ndarray
    ab: np.ndarray
    asteps: np.ndarray
    an: np.ndarray
    beta: np.ndarray
    beta_ok: np.ndarray
    eids: np.ndarray
    last_adm: np.ndarray
    share: np.ndarray


class DenBandState(NamedTuple):
    """What DenBand learns, as arrays the kernel changes in place.

    Attributes
    ----------
    experts : Experts
        The pool (grown by the caller when full).
    counters : ndarray of int64, shape (3,)
        ``[number of experts, next id, events written in this chunk]``.
    window : Window
        The last tau observations; ``window.state = [count, head]``.
    n_arms : int
        K, the number of arms (for the weights).
    """

    experts: Experts
    counters: np.ndarray
    window: Window
    n_arms: int


class DenBandParams(NamedTuple):
    """DenBand's hyperparameters as the kernel reads them: d, tau, delta_l, delta, max_idle
    (< 0: never discard), lam, sigma (= sqrt(sigma2)) and tie (relative tolerance of ties)."""

    d: int
    tau: int
    delta_l: float
    delta: float
    max_idle: int
    lam: float
    sigma: float
    tie: float


class DenBandOut(NamedTuple):
    """What DenBand's kernel writes: per step arm, reward, player (shape (n,)); per batch
    wids, w (shape (n_batches, cap)) and nw (shape (n_batches,), live experts)."""

    arm: np.ndarray
    reward: np.ndarray
    player: np.ndarray
    wids: np.ndarray
    w: np.ndarray
    nw: np.ndarray


_EXPERT_RANK = {  # per-expert array -> rank of one expert's entry (2: (G, p, p) ... -1: scalar)
    "mM": 2,
    "mVinv": 2,
    "mb": 1,
    "mtheta": 1,
    "msteps": 0,
    "mn": -1,
    "aM": 2,
    "aVinv": 2,
    "ab": 1,
    "asteps": 0,
    "an": -1,
    "beta": 1,
    "beta_ok": 0,
    "eids": -1,
    "last_adm": -1,
    "share": -1,
}
_INTS = ("msteps", "asteps", "eids", "last_adm", "share")


def grow_experts(experts: Experts | None, n_live: int, cap: int, n_blocks: int, p: int) -> Experts:
    """Per-expert arrays with room for ``cap`` experts, the first ``n_live`` copied over.

    Parameters
    ----------
    experts : Experts or None
        The current arrays (None: none yet).
    n_live : int
        How many experts to keep.
    cap : int
        The new room.
    n_blocks, p : int
        G blocks of length p.

    Returns
    -------
    Experts
    """
    G = n_blocks
    arrays = []
    for k, rank in _EXPERT_RANK.items():
        shape = (cap,) + ((G, p, p), (G, p), (G,), ())[2 - rank if rank >= 0 else 3]
        dtype = np.bool_ if k == "beta_ok" else np.int64 if k in _INTS else float
        new = np.zeros(shape, dtype=dtype)
        if experts is not None:
            new[:n_live] = getattr(experts, k)[:n_live]
        arrays.append(new)
    return Experts(*arrays)


def new_denband_state(n_blocks: int, p: int, n_arms: int, tau: int, lam: float) -> DenBandState:
    """The initial pool: expert 0 at its prior (no event), room for 4.

    Parameters
    ----------
    n_blocks, p : int
        G blocks of length p.
    n_arms : int
        K.
    tau : int
        The auditors' window.
    lam : float
        Ridge regulariser.

    Returns
    -------
    DenBandState
    """
    state = DenBandState(
        grow_experts(None, 0, 4, n_blocks, p),
        np.array([0, 0, 0], dtype=np.int64),
        new_window(tau, p, n_state=2),
        n_arms,
    )
    init_expert(0, 0, 0, lam, state.experts)
    state.counters[:2] = 1, 1  # expert 0, as in the policy's __init__
    return state


@njit(cache=True, nogil=True)
def _radius(n, d, lam, sigma, delta):
    """confidence_radius with S = L = 1 (allseason.policies.ridge)."""
    return (
        sigma * math.sqrt(d * math.log1p(n * 1.0 * 1.0 / (d * lam)) + 2.0 * math.log(1.0 / delta))
        + math.sqrt(lam) * 1.0
    )


@njit(cache=True, nogil=True)
def _denband_beta(aM, aVinv, ab, theta, lam, out, tmp):
    """beta = (lam I + G_W)^-1 (c_W - G_W theta), G_W theta = (aM - lam I) theta."""
    p = theta.shape[0]
    _matvec(aM, theta, tmp)
    for i in range(p):
        tmp[i] = ab[i] - (tmp[i] - lam * theta[i])
    _matvec(aVinv, tmp, out)


@njit(cache=True, nogil=True)
def init_expert(e, step, bid, lam, ex):
    """Slot e: a new expert ``bid`` at its prior (theta = beta = 0, empty window).

    Parameters
    ----------
    e : int
        The slot.
    step : int
        The step it is created at (its last admissible step).
    bid : int
        Its id.
    lam : float
        Ridge regulariser.
    ex : Experts
        Changed in place.
    """
    mM, mVinv, mb, mtheta, msteps, mn, aM, aVinv, ab, asteps = ex[:10]
    an, beta, beta_ok, eids, last_adm, _ = ex[10:]
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
def _move_expert(src, dst, ex):
    mM, mVinv, mb, mtheta, msteps, mn, aM, aVinv, ab, asteps = ex[:10]
    an, beta, beta_ok, eids, last_adm, share = ex[10:]
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


# denband_chunk is called with plain tuples (:func:`~allseason.kernels.types.plain`; numba's
# dispatcher types a named tuple in Python, 4 us a call) and unpacks them once: numba counts a
# reference to every array of a tuple passed to a function, so the helpers called every step
# take arrays.
@njit(cache=True, nogil=True)
def _some_arm_uncovered(adm, n_exp, K):
    """True if some arm has no admissible expert among the first n_exp."""
    for k in range(K):
        anyk = False
        for f in range(n_exp):
            if adm[f, k]:
                anyk = True
                break
        if not anyk:
            return True
    return False


@njit(cache=True, nogil=True)
def _choose(n_exp, K, mu, cb, lcb, chosen, share, tie):
    """The expert of each arm (smallest lcb, ties to the oldest), then the arm (largest UCB
    of its expert, ties to the lowest index); ``share`` counts the arms of each expert."""
    for e in range(n_exp):
        share[e] = 0
    for k in range(K):
        low = lcb[0, k]
        for e in range(1, n_exp):
            low = min(low, lcb[e, k])
        best = 0
        while not lcb[best, k] <= low + tie * abs(low):
            best += 1
        chosen[k] = best
        share[best] += 1
    top = -np.inf
    for k in range(K):
        top = max(top, mu[chosen[k], k] + cb[chosen[k], k])
    a = 0
    while not mu[chosen[a], a] + cb[chosen[a], a] >= top - tie * abs(top):
        a += 1
    return a


@njit(cache=True, nogil=True)
def _create(ex, counters, step, lam, events):
    """A new expert in the next free slot (room is guaranteed by the caller), with its event."""
    n_exp = counters[0]
    init_expert(n_exp, step, counters[1], lam, ex)
    ev_step, ev_kind, ev_bandit, _, _ = events
    j = counters[2]
    ev_step[j], ev_kind[j], ev_bandit[j] = step, CREATE, counters[1]
    counters[2] = j + 1
    counters[1] += 1
    counters[0] = n_exp + 1


@njit(cache=True, nogil=True)
def _any_idle(last_adm, n_exp, step, max_idle):
    for e in range(n_exp):
        if step - last_adm[e] >= max_idle:
            return True
    return False


@njit(cache=True, nogil=True)
def _discard_idle(ex, counters, step, max_idle, events):
    """Discard the experts admissible for no arm in max_idle steps (the rest move down)."""
    eids, last_adm = ex[13], ex[14]
    ev_step, ev_kind, ev_bandit, _, _ = events
    n_exp, kept = counters[0], 0
    for e in range(n_exp):
        if step - last_adm[e] >= max_idle:
            j = counters[2]
            ev_step[j], ev_kind[j], ev_bandit[j] = step, DISCARD, eids[e]
            counters[2] = j + 1
            continue
        if kept != e:
            _move_expert(e, kept, ex)
        kept += 1
    counters[0] = kept


@njit(cache=True, nogil=True)
def _batch_weights(share, eids, n_exp, K, bi, out_wids, out_w, out_nw):
    """Each live expert weighted by the share of the last offered arms it was selected for."""
    total = 0.0
    for e in range(n_exp):
        total += share[e] / K
    out_nw[bi] = n_exp
    for e in range(n_exp):
        out_wids[bi, e] = eids[e]
        out_w[bi, e] = (share[e] / K) / total if total > 0 else 1.0 / max(n_exp, 1)


@njit(cache=True, nogil=True)
def denband_chunk(rounds, b0, step0, state, prm, out, events):
    """DenBand over batches b0 .. of a chunk: the same decisions as its plain loop.

    Parameters
    ----------
    rounds : Rounds
        The chunk.
    b0 : int
        The first batch to play.
    step0 : int
        Steps played before this chunk.
    state : DenBandState
        The pool, changed in place; ``counters[2]`` counts the events written.
    prm : DenBandParams
        The hyperparameters.
    out : DenBandOut
        Written per step and per batch.
    events : Events
        Appended to (step, kind, bandit) at ``counters[2]``.

    Returns
    -------
    int
        The first batch not played: a batch is only started with room for one new expert
        per step (the caller grows the arrays and calls again).

    Notes
    -----
    About 120 lines: assessing the experts and the learning loop (absorb, audit) run for
    every expert at every step and stay here, for speed (see the comment above: a helper
    would cost about 15% of the run); choosing the arm, creating, discarding and weighting
    are helpers.
    """
    ctx, block, cidx, expected, noise, batch_end = rounds
    ex, counters, window, _ = state
    mM, mVinv, mb, mtheta, msteps, mn, aM, aVinv, ab, asteps = ex[:10]
    an, beta, beta_ok, eids, last_adm, share = ex[10:]
    wx, wg, wr, wstate = window
    out_arm, out_reward, out_player, out_wids, out_w, out_nw = out
    d, tau, delta_l, delta, max_idle, lam, sigma, tie = prm
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
        if counters[0] + (end - start + 1) > cap:
            return bi
        for t in range(start, end + 1):
            n_exp = counters[0]
            for e in range(n_exp + 1):
                if e == n_exp:  # an arm with no admissible expert: create one
                    if not _some_arm_uncovered(adm, n_exp, K):
                        break
                    _create(ex, counters, step0 + t, lam, events)
                rm = _radius(mn[e], d, lam, sigma, delta)  # expert e on every arm
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
            n_exp = counters[0]
            a = _choose(n_exp, K, mu, cb, lcb, chosen, share, tie)
            for e in range(n_exp):
                for k in range(K):
                    if adm[e, k]:
                        last_adm[e] = step0 + t
                        break
            out_arm[t] = a
            out_reward[t] = expected[t, a] + noise[t]
            out_player[t] = eids[chosen[a]]
        for t in range(start, end + 1):  # learning, observation by observation
            a = out_arm[t]
            g = block[a]
            x = ctx[t, cidx[a]]
            r = out_reward[t]
            n_exp = counters[0]
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
                        aM[e, go], aVinv[e, go], ab[e, go], asteps[e, go : go + 1], wx[head],
                        wr[head], -1.0, dense, tmp,
                    ):  # fmt: skip
                        beta_ok[e, go] = False
            wx[head, :] = x
            wg[head] = g
            wr[head] = r
            wstate[1] = (head + 1) % tau
            if count < tau:
                wstate[0] = count + 1
        if max_idle >= 0 and _any_idle(last_adm, counters[0], step0 + end, max_idle):
            _discard_idle(ex, counters, step0 + end, max_idle, events)
        _batch_weights(share, eids, counters[0], K, bi, out_wids, out_w, out_nw)
    return batch_end.shape[0]


__all__ = [
    "Experts",
    "DenBandState",
    "DenBandParams",
    "DenBandOut",
    "grow_experts",
    "new_denband_state",
    "init_expert",
    "denband_chunk",
]
