"""Conjugate Gaussian linear posteriors: the model inside every LinTS-style bandit.

Model (paper eq. (model)): theta ~ N(0, lam^-1 I), r | theta, x ~ N(<theta, x>, sigma2).
After observations (x_s, r_s) the posterior is N(mu, M^-1) with

    M = lam I + sum_s w_s x_s x_s^T / sigma2,   b = sum_s w_s r_s x_s / sigma2,   mu = M^-1 b,

where w_s = 1 (plain), 1 on the last tau observations and 0 before (sliding window), or
gamma^(t-s) (discounted). The paper writes M = lam I + sum x x^T, i.e. sigma2 = 1 in the
precision; we keep sigma2 in both the precision and the predictive so that the model is the
exact conjugate one for the stated likelihood (with sigma2 = 1 the two coincide).

The posterior predictive of a reward (eq. (postpred)) is N(<mu, x>, sigma2 + x^T M^-1 x).

This module is the plain, readable numpy implementation: it keeps M and b and factors
M = L L^T when asked. The compiled kernels in :mod:`allseason.kernels` keep the Cholesky
factor up to date with O(d^2) rank-one updates instead; tests check the two agree.
"""

from __future__ import annotations

import numpy as np

LOG_2PI = float(np.log(2.0 * np.pi))


def _lapack():
    """LAPACK's potrs and trtrs for float64, the routines scipy's ``cho_solve`` and
    ``solve_triangular`` call, taken once (scipy is slow to import: only when used). Called
    directly they give the same numbers, bit for bit, without scipy's per-call batching and
    finiteness checks: half the plain path's CPU (issue 34); M and b are finite by
    construction (:meth:`GaussianLinearPosterior.update` refuses a non-finite observation)."""
    if not _LAPACK:
        from scipy.linalg import lapack

        _LAPACK.extend([lapack.dpotrs, lapack.dtrtrs])
    return _LAPACK


_LAPACK: list = []


def _cho_solve(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``scipy.linalg.cho_solve((L, True), b)`` for a lower factor ``L`` of float64."""
    potrs = _lapack()[0]
    x, info = potrs(L, b, lower=1)
    if info != 0:
        raise ValueError(f"illegal value in {-info}th argument of internal potrs")
    return x


def _solve_lower(L: np.ndarray, b: np.ndarray, *, transposed: bool = False) -> np.ndarray:
    """``scipy.linalg.solve_triangular``: solve L x = b (or L^T x = b with ``transposed``)
    for the C-ordered lower factor ``L`` of ``np.linalg.cholesky``, as scipy does it: LAPACK
    is handed the F-ordered ``L.T`` (upper), with the transposition flag to match."""
    trtrs = _lapack()[1]
    x, info = trtrs(L.T, b, lower=0, trans=0 if transposed else 1)
    if info != 0:
        raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
    return x


def logsumexp(a: np.ndarray) -> float:
    """``scipy.special.logsumexp(a)`` of a 1-d float64 array, written out with scipy's own
    steps (so the same number, bit for bit): the maxima are kept out of the sum for
    precision, log(sum) = log1p(s / m) + log(m) + max, with m the number of maxima and s the
    sum of exp(a - max) over the other entries. scipy's array-API wrapper costs 20 times the
    arithmetic on the plain path's few-entry arrays (issue 34). A non-finite maximum (every
    entry -inf, an inf, a NaN) is handed to scipy itself."""
    a = np.asarray(a, dtype=float)
    a_max = np.max(a) if a.size else np.nan
    if not np.isfinite(a_max):
        from scipy.special import logsumexp as scipy_logsumexp

        return scipy_logsumexp(a)
    mask = a == a_max
    m = np.sum(mask, dtype=a.dtype)
    s = np.sum(np.exp(np.where(mask, -np.inf, a) - a_max))
    s = s if s == 0 else s / m
    return np.log1p(s) + np.log(m) + a_max


class GaussianLinearPosterior:
    """Posterior N(mu, M^-1) of a Bayesian linear regression with known noise sigma2.

    Parameters
    ----------
    d : int, dimension.
    lam : float, prior precision (theta ~ N(0, lam^-1 I)).
    sigma2 : float, noise variance of the rewards.

    Examples
    --------
    >>> import numpy as np
    >>> post = GaussianLinearPosterior(2, lam=1.0, sigma2=1.0)
    >>> post.update(np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), np.array([2.0, 2.0, -1.0]))
    >>> post.mean  # M = diag(3, 2), b = (4, -1)
    array([ 1.33333333, -0.5       ])
    >>> post.sample(np.zeros(2))  # theta = mu + L^-T z: z = 0 gives the mean
    array([ 1.33333333, -0.5       ])
    >>> float(symmetric_kl(post, post))
    0.0
    """

    def __init__(self, d: int, lam: float = 1.0, sigma2: float = 1.0):
        self.d, self.lam, self.sigma2 = int(d), float(lam), float(sigma2)
        self.M = self.lam * np.eye(self.d)
        self.b = np.zeros(self.d)
        self.n_obs = 0.0  # effective number of observations (discounted sum of weights)

    def copy(self) -> GaussianLinearPosterior:
        """An independent copy."""
        other = GaussianLinearPosterior(self.d, self.lam, self.sigma2)
        other.M, other.b, other.n_obs = self.M.copy(), self.b.copy(), self.n_obs
        return other

    # -- learning ---------------------------------------------------------------------------
    def update(self, xs: np.ndarray, rs: np.ndarray) -> None:
        """Add observations: xs (n, d), rs (n,).

        Raises
        ------
        ValueError
            A NaN or an infinity among them (the solves below no longer check: see
            :func:`_lapack`).
        """
        xs, rs = np.atleast_2d(xs), np.atleast_1d(rs)
        if not (np.isfinite(xs).all() and np.isfinite(rs).all()):
            raise ValueError("observations must be finite numbers (no NaN, no inf)")
        self.M += xs.T @ xs / self.sigma2
        self.b += xs.T @ rs / self.sigma2
        self.n_obs += len(rs)

    def downdate(self, xs: np.ndarray, rs: np.ndarray) -> None:
        """Remove observations previously added (sliding window)."""
        xs, rs = np.atleast_2d(xs), np.atleast_1d(rs)
        self.M -= xs.T @ xs / self.sigma2
        self.b -= xs.T @ rs / self.sigma2
        self.n_obs -= len(rs)

    def discount(self, gamma: float) -> None:
        """Multiply the weight of every past observation by gamma (the prior stays)."""
        self.M = self.lam * np.eye(self.d) + gamma * (self.M - self.lam * np.eye(self.d))
        self.b = gamma * self.b
        self.n_obs *= gamma

    # -- what the bandits ask ---------------------------------------------------------------
    @property
    def chol(self) -> np.ndarray:
        """Lower Cholesky factor L of M = L L^T (read-only).

        Kept for as long as M holds the same numbers (its bytes are the key): the plain path
        asks for it several times per step (the mean, a sample, the predictive, a KL) of an
        unchanged M, and it was a fifth of that path's CPU (issue 34). The same numbers as a
        new factorisation, since a factorisation of the same M is deterministic."""
        key = self.M.tobytes()
        cached = self.__dict__.get("_chol")
        if cached is None or cached[0] != key or cached[1].shape != self.M.shape:
            L = np.linalg.cholesky(self.M)
            L.flags.writeable = False  # shared by every caller until M changes
            cached = self.__dict__["_chol"] = (key, L)
        return cached[1]

    @property
    def mean(self) -> np.ndarray:
        """mu = M^-1 b."""
        return _cho_solve(self.chol, self.b)

    @property
    def covariance(self) -> np.ndarray:
        """Sigma = M^-1."""
        return _cho_solve(self.chol, np.eye(self.d))

    def sample(self, z: np.ndarray) -> np.ndarray:
        """Thompson sample theta = mu + L^-T z ~ N(mu, M^-1), from z ~ N(0, I_d)."""
        L = self.chol
        return _cho_solve(L, self.b) + _solve_lower(L, z, transposed=True)

    def log_predictive(self, xs: np.ndarray, rs: np.ndarray) -> np.ndarray:
        """log N(r; <mu, x>, sigma2 + x^T M^-1 x) for each row; shape (n,)."""
        xs, rs = np.atleast_2d(xs), np.atleast_1d(rs)
        L = self.chol
        mean = xs @ _cho_solve(L, self.b)
        v = _solve_lower(L, xs.T)
        var = self.sigma2 + np.sum(v * v, axis=0)
        return -0.5 * (LOG_2PI + np.log(var) + (rs - mean) ** 2 / var)

    def covariance_trace(self) -> float:
        """tr(M^-1): how uncertain the posterior is (used to choose whom to prune)."""
        return float(np.trace(self.covariance))


def symmetric_kl(p: GaussianLinearPosterior, q: GaussianLinearPosterior) -> float:
    """KL(p||q) + KL(q||p) between N(mu_p, M_p^-1) and N(mu_q, M_q^-1).

    = 0.5 [tr(M_q S_p) + tr(M_p S_q) - 2d] + 0.5 (mu_q - mu_p)^T (M_p + M_q) (mu_q - mu_p).
    The paper's printed eq. (KL) drops the 1/2 on the second quadratic term and the -2d; this
    is the correct closed form (checked against Monte Carlo in the tests).
    """
    dm = q.mean - p.mean
    tr = np.trace(q.M @ p.covariance) + np.trace(p.M @ q.covariance) - 2 * p.d
    return float(0.5 * tr + 0.5 * dm @ (p.M + q.M) @ dm)


def mean_distance(p: GaussianLinearPosterior, q: GaussianLinearPosterior) -> float:
    """Euclidean distance between posterior means (the paper's cheaper pruning criterion)."""
    return float(np.linalg.norm(p.mean - q.mean))
