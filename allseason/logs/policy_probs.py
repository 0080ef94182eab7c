"""pi_t(a | x_t): the probability that a contestant plays each arm at each event of a log,
given its state before the event.

- **random**: 1/K, exact.
- **Thompson sampling on disjoint per-arm models** (LinTS, SW-LinTS, D-LinTS and each of
  All-Season's bandits on a log: arm k is ``e_k (x) [c_t, 1]``, block k of theta is
  independent of the others): arm k's score ``<theta_k, c_t>`` is an independent Gaussian
  ``N(m_k, s_k^2)`` with ``m_k = <mu_k, c_t>``, ``s_k^2 = c_t^T Sigma_k c_t``, so
  ``pi(a) = integral phi_a(s) prod_{k != a} Phi_k(s) ds``, a one-dimensional integral:
  :func:`gaussian_argmax_probs`.
- **correlated Gaussian scores** (shared-parameter linear TS): Monte Carlo over the
  posterior, :func:`mc_argmax_probs` (a Generator passed in; vectorised).
- **All-Season**: it draws a bandit by its current normalised weights, then that bandit's
  Thompson step, so ``pi = sum_j w_j pi_j``.

:func:`posterior_state` is the ONE place that reads a policy's internal posterior (its
compiled state ``kernel_state``: M, L, mu per arm block, per bandit, All-Season's log-weights):
when the policies expose that state publicly, repoint this function alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def gaussian_argmax_probs(mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    """The probability that each of K independent Gaussian scores is the largest.

    Parameters
    ----------
    mean, var : ndarray, shape (R, K) or (K,)
        The scores' means and variances (variances > 0), one row per case.

    Returns
    -------
    ndarray, the shape of ``mean``: each row sums to 1. Accurate to about 1e-4 (checked
    against adaptive quadrature and the two-arm closed form in tests/logs/test_policy_probs.py).
    """
    mean = np.asarray(mean, dtype=float)
    var = np.asarray(var, dtype=float)
    one = mean.ndim == 1
    m2, v2 = np.atleast_2d(mean), np.atleast_2d(var)
    if m2.shape != v2.shape or np.any(~(v2 > 0)) or not np.all(np.isfinite(m2)):
        raise ValueError("mean, var: the same shape, finite means and positive variances")
    sd = np.sqrt(v2)
    if m2.shape[1] <= _DEDUPE:
        from ..kernels.argmax import QUAD_NODES as _Y  # scipy's tables: only when used
        from ..kernels.argmax import argmax_probs_rows as _argmax_probs_kernel

        out = np.empty_like(m2)
        _argmax_probs_kernel(np.ascontiguousarray(m2), sd, np.ones(m2.shape, np.int64), _Y, out)
    else:
        out = _deduped(m2, sd)
    return out[0] if one else out


_DEDUPE = 16  # above this many arms, arms with the same score distribution are merged


def _deduped(mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Rows whose arms share score distributions (e.g. every arm never yet observed) are
    integrated once per distinct (mean, sd), with its count."""
    from ..kernels.argmax import QUAD_NODES as _Y  # scipy's tables: only when used
    from ..kernels.argmax import argmax_probs_rows as _argmax_probs_kernel

    R, K = mean.shape
    um = np.zeros((R, K))
    us = np.ones((R, K))
    cnt = np.zeros((R, K), dtype=np.int64)
    inverse = np.empty((R, K), dtype=np.int64)
    for r in range(R):
        pairs, inv, c = np.unique(
            np.stack([mean[r], sd[r]], axis=1), axis=0, return_inverse=True, return_counts=True
        )
        u = len(pairs)
        um[r, :u], us[r, :u], cnt[r, :u] = pairs[:, 0], pairs[:, 1], c
        inverse[r] = inv.reshape(-1)
    width = int((cnt > 0).sum(axis=1).max())
    per = np.empty((R, width))
    _argmax_probs_kernel(
        np.ascontiguousarray(um[:, :width]),
        np.ascontiguousarray(us[:, :width]),
        np.ascontiguousarray(cnt[:, :width]),
        _Y,
        per,
    )
    return np.take_along_axis(per, inverse, axis=1)


def mc_argmax_probs(
    mean: np.ndarray, cov: np.ndarray, rng: np.random.Generator, n_draws: int = 20_000
) -> np.ndarray:
    """Monte Carlo probability that each of K jointly Gaussian scores is the largest.

    Parameters
    ----------
    mean : ndarray, shape (K,)
        The scores' means.
    cov : ndarray, shape (K, K)
        Their covariance (e.g. ``X Sigma X^T`` for shared-parameter linear TS).
    rng : numpy.random.Generator
        The draws' stream.
    n_draws : int
        Draws; the standard error of each probability is ``sqrt(pi (1 - pi) / n_draws)``.
    """
    mean = np.asarray(mean, dtype=float)
    K = len(mean)
    L = np.linalg.cholesky(np.asarray(cov, dtype=float) + 1e-12 * np.eye(K))
    s = mean + rng.standard_normal((n_draws, K)) @ L.T
    return np.bincount(np.argmax(s, axis=1), minlength=K) / n_draws


@dataclass
class PosteriorState:
    """What a contestant's next draw depends on: ``kind`` "uniform" (random), "gaussian"
    (Thompson on per-arm blocks) or "unknown" (no pi: the realised draw is used). For
    "gaussian": ``weights`` (S,) (1 bandit, or All-Season's normalised weights), ``mu``
    (S, K, p) and ``cov`` (S, K, p, p), each arm block's sampling mean and covariance."""

    kind: str
    weights: np.ndarray | None = None
    mu: np.ndarray | None = None
    cov: np.ndarray | None = None


def _block_cov(L: np.ndarray, Lt: np.ndarray | None) -> np.ndarray:
    """The sampling covariance of theta = mu + L^-T z (M^-1), or with the Kim-Tewari sandwich
    theta = mu + M^-1 Lt z (M^-1 Mt M^-1); L, Lt (..., p, p) lower triangular."""
    M = L @ np.swapaxes(L, -1, -2)
    Minv = np.linalg.inv(M)
    if Lt is None:
        return Minv
    A = Minv @ Lt
    return A @ np.swapaxes(A, -1, -2)


def _blocks(model_mean: np.ndarray, cov: np.ndarray, n_arms: int, p: int):
    """A plain-path model's mean (d,) and covariance (d, d) as per-arm blocks (K, p),
    (K, p, p) (arm k is e_k (x) [c, 1]: block k)."""
    mu = model_mean.reshape(n_arms, p)
    idx = np.arange(n_arms)[:, None] * p + np.arange(p)
    return mu, cov[idx[:, :, None], idx[:, None, :]]


def posterior_state(policy, n_arms: int, p: int) -> PosteriorState:
    """THE adapter from a policy's state to :class:`PosteriorState` (the only function here
    that reads a policy's internals), for the compiled path (the policy's typed
    ``kernel_state``: Cholesky factors, means, All-Season's log-weights and live slots) and
    the plain one (``slots``, ``logw``, ``model``, ``inner``).
    """
    from ..policies import AllSeason, LinTS, RandomPolicy

    if isinstance(policy, RandomPolicy):
        return PosteriorState("uniform")
    f = policy.kernel_state
    if isinstance(policy, AllSeason):
        if f is not None:
            alive = np.flatnonzero(f.alive)
            mu, cov = f.mu[alive], _block_cov(f.L[alive], None)
            logw = f.logw[alive]
        else:
            live = [s for s, m in enumerate(policy.slots) if m is not None]
            parts = [
                _blocks(m.mean, m.covariance, n_arms, p) for m in policy.slots if m is not None
            ]
            mu = np.stack([m for m, _ in parts])
            cov = np.stack([c for _, c in parts])
            logw = policy.logw[live]
        w = np.exp(logw - logw.max())
        return PosteriorState("gaussian", w / w.sum(), mu, cov)
    if isinstance(policy, LinTS):
        if f is not None:
            cov = _block_cov(f.L, f.Lt if policy._sandwich() else None)
            return PosteriorState("gaussian", np.ones(1), f.mu[None], cov[None])
        inner = getattr(policy, "inner", None)
        S = policy.model.covariance
        mu, cov = _blocks(policy.model.mean, S if inner is None else S @ inner.M @ S, n_arms, p)
        return PosteriorState("gaussian", np.ones(1), mu[None], cov[None])
    return PosteriorState("unknown")


def state_probs(state: PosteriorState, contexts: np.ndarray) -> np.ndarray:
    """pi(. | c) for each context row under one state.

    Parameters
    ----------
    state : PosteriorState
        "uniform" or "gaussian".
    contexts : ndarray, shape (n, p)
        The events' contexts (with the constant 1).

    Returns
    -------
    ndarray, shape (n, K)
    """
    n = len(contexts)
    if state.kind == "uniform":
        raise ValueError("a uniform state needs K: use 1/K")
    if state.weights is None or state.mu is None or state.cov is None:
        raise ValueError(f"pi needs a gaussian state, got {state.kind!r}")
    S, K, p = state.mu.shape
    mean = np.einsum("np,skp->snk", contexts, state.mu)  # every bandit at once
    var = np.einsum("np,skpq,nq->snk", contexts, state.cov, contexts)
    probs = gaussian_argmax_probs(mean.reshape(S * n, K), np.maximum(var, 1e-300).reshape(S * n, K))
    return np.einsum("s,snk->nk", state.weights, probs.reshape(S, n, K))


class ProbRecorder:
    """Collects pi_t(. | x_t) during a replay: :meth:`segment` is called with the policy and
    the events [start, stop) that it decides with its current state; contexts repeated
    within a segment are computed once.

    Without ``model``, :attr:`pi` holds pi, shape (n, K). With a reward model
    (:class:`~allseason.logs.estimators.RewardModel`) only what the estimators need is kept,
    memory O(n): :attr:`pi_a` = pi_t(a_t | x_t) and :attr:`dm` = sum_a pi_t(a) r^(x_t, a).
    :attr:`known` is False for a policy whose pi is unknown (its realised draw is used)."""

    def __init__(self, log, model=None):
        self.log = log
        self.K = log.n_arms
        self.p = log.contexts.shape[1]
        self.uniq, self.code = np.unique(log.contexts, axis=0, return_inverse=True)
        self.code = self.code.reshape(-1)
        self.model = model
        n = log.n_events
        if model is None:
            self.pi = np.empty((n, self.K))
        else:
            self.pi_a, self.dm = np.empty(n), np.empty(n)
        self.known = True

    def segment(self, policy, start: int, stop: int) -> None:
        """Record ``policy``'s probabilities of the logged arms for steps ``start:stop``."""
        if stop <= start or not self.known:
            return
        state = posterior_state(policy, self.K, self.p)
        if state.kind == "unknown":
            self.known = False
            return
        if state.kind == "uniform":
            self._store(start, stop, np.full((1, self.K), 1.0 / self.K))
        elif len(self.uniq) == 1:  # no context: one distribution for the whole segment
            self._store(start, stop, state_probs(state, self.uniq))
        else:
            codes, inv = np.unique(self.code[start:stop], return_inverse=True)
            self._store(start, stop, state_probs(state, self.uniq[codes])[inv.reshape(-1)])

    def _store(self, start: int, stop: int, rows: np.ndarray) -> None:
        """rows: pi of the events [start, stop), shape (stop - start, K) or (1, K)."""
        m = stop - start
        rows = np.broadcast_to(rows, (m, self.K))
        if self.model is None:
            self.pi[start:stop] = rows
            return
        self.pi_a[start:stop] = rows[np.arange(m), self.log.arm[start:stop]]
        rhat = self.model.predict(self.log.contexts[start:stop], np.arange(start, stop))
        self.dm[start:stop] = (rows * rhat).sum(axis=1)

    def result(self) -> np.ndarray | None:
        """pi, shape (n, K) (no model), or None when it is unknown."""
        return self.pi if self.known else None


__all__ = [
    "gaussian_argmax_probs",
    "mc_argmax_probs",
    "PosteriorState",
    "posterior_state",
    "state_probs",
    "ProbRecorder",
]
