"""The agent's compiled single step (:mod:`allseason.agent`): one decision with its
probability, and the per-event random draws.

Draws: a decision's uniform ``u`` (which bandit plays) and its standard normals ``z`` (the
Thompson sample) come from a counter-based generator keyed by one 64-bit number per event
(the agent derives it from its seed and the event id with BLAKE2b): splitmix64 over the
counter ``key + i * golden``, uniforms from the top 53 bits, normals by Box-Muller. No
generator object is built per decision (a numpy ``Generator`` costs about 20 us). The draws
are bit-identical wherever the same numpy/numba build runs (``math.log``, ``cos``, ``sin``
and ``sqrt`` of the same libm); across builds they may differ in the last bit of a normal.

The decision itself is the runner's own step: :func:`~.allseason.batch_weights`,
:func:`~.allseason.choose_slot` and :func:`~.linalg.best_arm` (or
:func:`~.linalg.best_arm_sandwich`), the functions :func:`~.allseason.allseason_chunk` and
:func:`~.lints.lints_chunk` call, so a decision made here is the decision the race makes on
the same numbers.

Probabilities (``pi_mode``): 1, every arm in its own parameter block (context mode,
``x = e_k (x) [c, 1]``): the scores are independent Gaussians, pi of each bandit is the
one-dimensional integral of :func:`~.argmax.argmax_probs_rows_table`, mixed by the bandits'
weights (a bandit of small weight on fewer nodes: :data:`PI_LEVEL_NODES`); 2, dense arms (one
shared theta), K = 2: the normal CDF of the difference, mixed; 3, dense arms, K > 2: Monte
Carlo, stratified over the bandits (:mod:`.agent_mc`: ``n_mc`` draws in all, from the counter
generator with another key), its standard error returned.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types
from numba.experimental import structref
from scipy.special import ndtri

from .agent_mc import pi_mc
from .allseason import batch_weights, choose_slot
from .argmax import QUAD_NODES, argmax_probs_rows_table
from .linalg import backward_solve, best_arm, best_arm_sandwich, forward_solve

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2^-53
_TWO_PI = 2.0 * math.pi
MC_SALT = np.uint64(
    0xD1B54A32D192ED03
)  # keys the Monte Carlo draws of pi apart from the decision's

PI_NONE, PI_DISJOINT, PI_DENSE2, PI_MC = 0, 1, 2, 3


def quad_nodes(n: int) -> np.ndarray:
    """The quadrature's nodes of one arm (in standard deviations): the ``n`` quantiles
    Phi^-1((j + 1/2) / n) and the two ends at +-8.5 (n = 32: :data:`.argmax.QUAD_NODES`)."""
    tail = float(QUAD_NODES[-1])
    return np.concatenate([[-tail], ndtri((np.arange(n) + 0.5) / n), [tail]])


#: A mixture's pi_j with fewer nodes where its weight allows (_pi_disjoint): the node counts
#: tried, fewest first, and a bound on each one's error max_a |pi_j(a) - pi_j*(a)| against a
#: reference (tests/agent/test_pi_quadrature.py checks every bound on random cases).
PI_LEVEL_NODES = (4, 8, 16)
PI_LEVEL_ERR = (2.5e-2, 7e-3, 2e-3)
#: the error a bandit of weight w_j may add: the fewest nodes with w_j * bound <= this (the
#: 32-node quadrature's own error reaches 3e-4 on hard cases: see the test)
PI_LEVEL_BUDGET = 1e-6
_Y4, _Y8, _Y16 = quad_nodes(4), quad_nodes(8), quad_nodes(16)
_E4, _E8, _E16 = PI_LEVEL_ERR


@njit(cache=True, nogil=True, inline="always")
def splitmix64(x):
    """The splitmix64 finaliser of a 64-bit counter (Steele, Lea & Flood 2014)."""
    z = x
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, nogil=True, inline="always")
def _uniform(key, i):
    """The i-th uniform in [0, 1) of the stream ``key``."""
    return float(splitmix64(key + np.uint64(i + 1) * GOLDEN) >> _S11) * _TO_UNIT


@njit(cache=True, nogil=True, inline="always")
def fill_draws(key, z):
    """The draws of one decision: returns u; fills ``z`` (any shape, C order) with normals.

    Parameters
    ----------
    key : uint64
        The event's key.
    z : ndarray
        Written: standard normals (Box-Muller on the stream's uniforms 1, 2, ...).

    Returns
    -------
    float
        The uniform (the stream's uniform 0).
    """
    u = _uniform(key, 0)
    flat = z.reshape(-1)
    n = flat.shape[0]
    i = 0
    c = 1
    while i < n:
        u1 = 1.0 - _uniform(key, c)  # in (0, 1]: log is finite
        u2 = _uniform(key, c + 1)
        c += 2
        r = math.sqrt(-2.0 * math.log(u1))
        flat[i] = r * math.cos(_TWO_PI * u2)
        if i + 1 < n:
            flat[i + 1] = r * math.sin(_TWO_PI * u2)
        i += 2
    return u


@njit(cache=True, nogil=True)
def _score_var(L, Lt, sandwich, x, tmp, tmp2):
    """x^T Sigma x: Sigma = M^-1 (``||L^-1 x||^2``), or M^-1 Mt M^-1 (``||Lt^T M^-1 x||^2``)."""
    p = x.shape[0]
    forward_solve(L, x, tmp)
    if not sandwich:
        v = 0.0
        for i in range(p):
            v += tmp[i] * tmp[i]
        return v
    backward_solve(L, tmp, tmp2)  # tmp2 = M^-1 x
    v = 0.0
    for i in range(p):  # (Lt^T tmp2)_i = sum_{k >= i} Lt[k, i] tmp2[k]
        s = 0.0
        for k in range(i, p):
            s += Lt[k, i] * tmp2[k]
        v += s * s
    return v


@njit(cache=True, nogil=True)
def _ndtr(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


@njit(cache=True, nogil=True)
def _pi_disjoint(
    ctx, block, cidx, L, mu, Lt, alive, sandwich, w, pi, mean, sd, count, out, tmp, tmp2
):
    """Every arm in its own block: independent Gaussian scores; each bandit's pi is the 1-D
    integral (:func:`~.argmax.argmax_probs_rows_table`: log Phi interpolated, within 1e-10),
    mixed by the weights (exact up to the quadrature's 1e-4).

    A bandit of small weight w_j takes the fewest nodes (:data:`PI_LEVEL_NODES`) whose
    error bound e keeps w_j e <= :data:`PI_LEVEL_BUDGET`; the others the full 32. The
    mixture's error is then at most the 32-node quadrature's plus S x the budget (S the
    bandits: 7 slots by default, 7e-6)."""
    S, G, p = mu.shape
    K = block.shape[0]
    for s in range(S):
        if not alive[s] or w[s] == 0.0:
            continue
        for k in range(K):
            g, x = block[k], ctx[cidx[k]]
            m = 0.0
            for i in range(p):
                m += mu[s, g, i] * x[i]
            mean[0, k] = m
            v = _score_var(L[s, g], Lt[g], sandwich, x, tmp, tmp2)
            sd[0, k] = math.sqrt(max(v, 1e-300))
            count[0, k] = 1
        ws = w[s]
        if ws * _E4 <= PI_LEVEL_BUDGET:
            argmax_probs_rows_table(mean, sd, count, _Y4, out)
        elif ws * _E8 <= PI_LEVEL_BUDGET:
            argmax_probs_rows_table(mean, sd, count, _Y8, out)
        elif ws * _E16 <= PI_LEVEL_BUDGET:
            argmax_probs_rows_table(mean, sd, count, _Y16, out)
        else:
            argmax_probs_rows_table(mean, sd, count, QUAD_NODES, out)
        for k in range(K):
            pi[k] += w[s] * out[0, k]


@njit(cache=True, nogil=True)
def _pi_dense2(ctx, cidx, L, mu, Lt, alive, sandwich, w, pi, theta, tmp, tmp2):
    """Two dense arms: P(arm 0) = Phi(<mu, x0 - x1> / sd of the difference), mixed (exact)."""
    S, G, p = mu.shape
    x0, x1 = ctx[cidx[0]], ctx[cidx[1]]
    for i in range(p):
        theta[0, i] = x0[i] - x1[i]  # theta: workspace for the difference
    for s in range(S):
        if not alive[s] or w[s] == 0.0:
            continue
        m = 0.0
        for i in range(p):
            m += mu[s, 0, i] * theta[0, i]
        v = _score_var(L[s, 0], Lt[0], sandwich, theta[0], tmp, tmp2)
        p0 = _ndtr(m / math.sqrt(v)) if v > 0.0 else (1.0 if m >= 0.0 else 0.0)
        pi[0] += w[s] * p0
        pi[1] += w[s] * (1.0 - p0)


@njit(cache=True, nogil=True)
def decide_step(ctx, block, cidx, bank, key, u, pi_mode, n_mc, work):
    """One decision of the agent, and (``pi_mode`` > 0) the probability of every arm.

    Parameters
    ----------
    ctx : ndarray, shape (C, p)
        The contexts (dense arms: the K rows; context mode: one row ``[c, 1]``).
    block, cidx : ndarray of int64, shape (K,)
        Each arm's parameter block and context (:func:`allseason.envs.arms.as_blocks`).
    bank : tuple
        ``(L (S, G, p, p), mu (S, G, p), Lt (G, p, p), logw (S,), alive (S,), sandwich)``:
        a single-model policy is one slot (S = 1); ``Lt`` is read when ``sandwich``.
    key : int
        The event's key, 63 bits (used when ``u`` < 0).
    u : float
        The uniform to use; negative: draw u and z from ``key``, else z is read from
        ``work``'s z (the runner's streams).
    pi_mode : int
        0: no probabilities; 1, 2, 3: see the module's docstring (1, 2: pi clamped to 1).
    n_mc : int
        Monte Carlo draws (pi_mode 3).
    work : tuple
        ``(z (G, p), theta (G, p), tmp (p,), tmp2 (p,), w (S,), pi (K,), mean (1, K),
        sd (1, K), count (1, K), out (1, K))``; pi is written.

    Returns
    -------
    arm : int
        -1 if ``ctx`` holds a NaN or an infinity (nothing is drawn).
    slot : int
        The slot that played.
    stderr : float
        The largest standard error of pi (Monte Carlo), else 0.
    """
    L, mu, Lt, logw, alive, sandwich = bank
    z, theta, tmp, tmp2, w, pi, mean, sd, count, out = work
    for c in range(ctx.shape[0]):  # the input's check, here: no pass over it in Python
        for i in range(ctx.shape[1]):
            if not math.isfinite(ctx[c, i]):
                return -1, -1, 0.0
    if u < 0.0:
        u = fill_draws(np.uint64(key), z)
    batch_weights(logw, alive, w)
    j = choose_slot(u, w, alive)
    if sandwich:
        a = best_arm_sandwich(ctx, block, cidx, L[j], Lt, mu[j], z, theta, tmp, tmp2)
    else:
        a = best_arm(ctx, block, cidx, L[j], mu[j], z, theta, tmp)
    stderr = 0.0
    K = block.shape[0]
    S, G, p = mu.shape
    if pi_mode == 0:
        return a, j, stderr
    for k in range(K):
        pi[k] = 0.0
    if pi_mode == PI_DISJOINT:
        _pi_disjoint(
            ctx, block, cidx, L, mu, Lt, alive, sandwich, w, pi, mean, sd, count, out, tmp, tmp2
        )
    elif pi_mode == PI_DENSE2:
        _pi_dense2(ctx, cidx, L, mu, Lt, alive, sandwich, w, pi, theta, tmp, tmp2)
    else:
        stderr = pi_mc(  # stratified over the bandits (.agent_mc)
            ctx, block, cidx, L, mu, Lt, alive, sandwich, w, pi, key, n_mc, theta, tmp, tmp2
        )
        return a, j, stderr  # (the caller counts the decision as one more draw, then clamps)
    for k in range(K):  # the weights sum to 1 up to rounding: keep pi <= 1
        if pi[k] > 1.0:
            pi[k] = 1.0
    return a, j, stderr


__all__ = [
    "GOLDEN",
    "MC_SALT",
    "PI_NONE",
    "PI_DISJOINT",
    "PI_DENSE2",
    "PI_MC",
    "PI_LEVEL_NODES",
    "PI_LEVEL_ERR",
    "PI_LEVEL_BUDGET",
    "quad_nodes",
    "splitmix64",
    "fill_draws",
    "decide_step",
    "DecidePack",
    "decide_pack",
    "decide_packed",
]


# -- the packed calls: one boxed object for the fixed arguments ----------------------------
# A compiled call unboxes each array it is passed (about 0.07 us each, and a decision passes
# about 20 of them in the tuples above). The fixed arguments are packed once into
# a numba struct (a StructRef, unboxed as one pointer, its arrays referenced, never copied):
# a call then passes the row, a few scalars and the pack.
@structref.register
class DecidePackType(types.StructRef):
    """numba's type of a :class:`DecidePack`."""

    def preprocess_fields(self, fields):
        """Fields as their plain types."""
        return tuple((n, types.unliteral(t)) for n, t in fields)


class DecidePack(structref.StructRefProxy):
    """The fixed arguments of :func:`decide_packed`: ``block``, ``cidx``, ``bank``, ``work``
    (as :func:`decide_step` takes them) and ``ids`` (the bandit id of each slot; [-1] for a
    single-model policy)."""


structref.define_proxy(DecidePack, DecidePackType, ["block", "cidx", "bank", "work", "ids"])


@njit(cache=True)
def decide_pack(block, cidx, bank, work, ids):
    """A :class:`DecidePack` of these arrays (referenced, not copied)."""
    return DecidePack(block, cidx, bank, work, ids)


@njit(cache=True, nogil=True)
def decide_packed(ctx, key, u, pi_mode, n_mc, pack):
    """:func:`decide_step` with the fixed arguments of ``pack``; returns (arm, the id of the
    bandit that played, stderr); arm -1 for a NaN or an infinity in ``ctx``."""
    a, j, stderr = decide_step(
        ctx, pack.block, pack.cidx, pack.bank, key, u, pi_mode, n_mc, pack.work
    )
    if a < 0:
        return a, -1, stderr
    return a, pack.ids[j], stderr
