"""Linear Thompson Sampling (Alg. 2) and its two forgetting variants.

- ``LinTS``: all the history.
- ``SWLinTS``: the last ``tau`` observations (sliding window).
- ``DLinTS``: every observation weighted by gamma^(age) (Russac et al. 2019's discounting,
  with Thompson sampling in place of UCB); the prior lam I is never discounted. Its
  ``covariance`` says what it samples from: "precision", N(mu, M^-1), or "kim-tewari",
  N(mu, M^-1 Mt M^-1) (Kim & Tewari 2020's D-LinTS, the V^-1 V~ V^-1 of D-LinUCB).

The plain path (``select``/``update``) uses :class:`allseason.models.GaussianLinearPosterior`;
``run_chunk`` uses the compiled kernel and makes the same decisions.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from scipy.linalg import cho_solve

from .. import _kernels as kernels
from ..envs.arms import as_blocks
from ..models import GaussianLinearPosterior
from .base import ChunkOutcome, Policy, check_batch_end
from .params import NOISE, PRIOR, WINDOW, Interval, Options, Param, Real


class LinTS(Policy):
    """Linear Thompson Sampling: theta ~ N(mu, M^-1), play argmax <theta, x>."""

    name = "lints"
    title = "LinTS"
    help = "Linear Thompson sampling, never forgets"
    style = {"color": "orange", "dash": "longdash", "symbol": "square"}
    params = {
        "lam": Param(PRIOR, "λ, the prior precision: larger means a stronger pull of θ towards 0."),
        "sigma2": Param(
            NOISE,
            "σ², the noise variance of the reward model (the app sets it to the scenario's).",
        ),
    }
    _mode = kernels.PLAIN

    def __init__(self, d, *, lam=1.0, sigma2=1.0, rng=None):
        super().__init__(d, rng=rng)
        self._set_params(lam=lam, sigma2=sigma2)
        self.model = GaussianLinearPosterior(self.d, self.lam, self.sigma2)
        self._fast = None  # compiled state, created on the first run_chunk

    # -- plain path ---------------------------------------------------------------------------
    def _select(self, arms, u, z):
        return int(np.argmax(arms @ self.model.sample(z)))

    def update(self, xs, rs):
        self._require_plain()
        self.model.update(xs, rs)

    def _require_plain(self):
        if self._fast is not None:
            raise RuntimeError("this policy has been run with run_chunk; use one path only")

    def is_positive_definite(self):
        M = self._fast["M"] if self._fast is not None else self.model.M
        return bool(np.all(np.linalg.eigvalsh(M) > 0))

    # -- compiled path ------------------------------------------------------------------------
    def _init_fast(self, n_blocks):
        if self.model.n_obs:
            raise RuntimeError("run_chunk must start from a fresh policy")
        G, p = n_blocks, self.d // n_blocks
        cap = max(self._window(), 1)
        self._fast = dict(
            M=np.tile(self.lam * np.eye(p), (G, 1, 1)),
            L=np.tile(np.sqrt(self.lam) * np.eye(p), (G, 1, 1)),
            b=np.zeros((G, p)),
            mu=np.zeros((G, p)),
            wx=np.zeros((cap, p)),
            wg=np.zeros(cap, dtype=np.int64),
            wr=np.zeros(cap),
            wstate=np.zeros(3, dtype=np.int64),
        )
        sandwich = self._sandwich()  # Mt, Lt, bt: D-LinTS's Kim-Tewari factor, else dummies
        shape = (G, p) if sandwich else (1, 1)
        self._fast.update(
            Mt=np.tile(self.lam * np.eye(shape[1]), (shape[0], 1, 1)),
            Lt=np.tile(np.sqrt(self.lam) * np.eye(shape[1]), (shape[0], 1, 1)),
            bt=np.zeros(shape),
        )

    def _window(self):
        return 0

    def _gamma(self):
        return 1.0

    def _sandwich(self):
        return False

    def run_chunk(self, arms, expected, noise, batch_end):
        n = arms.shape[0]
        batch_end = check_batch_end(batch_end, n)
        ctx, block, cidx, G = as_blocks(arms)
        if self._fast is None:
            self._init_fast(G)
        f = self._fast
        if f["M"].shape[0] != G:
            raise ValueError("arms: the block structure changed between chunks")
        _, z = self.draw(n)
        arm = np.empty(n, dtype=np.int64)
        reward = np.empty(n)
        kernels.lints_chunk(
            ctx,
            block,
            cidx,
            expected,
            noise,
            batch_end,
            z.reshape(n, G, -1),
            f["M"],
            f["L"],
            f["b"],
            f["mu"],
            self._mode,
            max(self._window(), 1),
            self._gamma(),
            self.lam,
            self.sigma2,
            f["wx"],
            f["wg"],
            f["wr"],
            f["wstate"],
            arm,
            reward,
            self._sandwich(),
            f["Mt"],
            f["Lt"],
            f["bt"],
        )
        self.t += n
        return ChunkOutcome(arm, reward, np.full(n, -1, dtype=np.int64), batch_end)


class SWLinTS(LinTS):
    """Sliding-window LinTS: the posterior of the last ``tau`` observations only."""

    name = "sw-lints"
    title = "SW-LinTS"
    help = "LinTS on a sliding window of the last tau steps"
    style = {"color": "sky blue", "dash": "dashdot", "symbol": "triangle-up"}
    params = {"tau": Param(WINDOW, "Window: how many recent observations the posterior sees.")}
    _mode = kernels.WINDOW

    def __init__(self, d, *, tau=100, lam=1.0, sigma2=1.0, rng=None):
        super().__init__(d, lam=lam, sigma2=sigma2, rng=rng)
        self._set_params(tau=tau)
        self._window_obs = deque()

    def _window(self):
        return self.tau

    def update(self, xs, rs):
        self._require_plain()
        for x, r in zip(np.atleast_2d(xs), np.atleast_1d(rs)):
            if len(self._window_obs) == self.tau:  # s = t - tau leaves the window
                self.model.downdate(*self._window_obs.popleft())
            self.model.update(x, r)
            self._window_obs.append((x.copy(), float(r)))


class DLinTS(LinTS):
    """Discounted LinTS: M = lam I + sum gamma^(t-s) x_s x_s^T / sigma2, mu = M^-1 b.

    ``covariance`` chooses the sampling distribution:

    - "precision": theta ~ N(mu, M^-1), the posterior of the discounted likelihood;
    - "kim-tewari": theta ~ N(mu, M^-1 Mt M^-1) with
      Mt = lam I + sum gamma^(2(t-s)) x_s x_s^T / sigma2: the covariance of the weighted
      least-squares estimate, as in the D-LinUCB confidence set of Russac et al. (2019,
      Alg. 1: V_t = gamma V + x x^T + (1 - gamma) lam I, V~_t = gamma^2 V~ + x x^T +
      (1 - gamma^2) lam I, width ||x||_{V^-1 V~ V^-1}) and in Kim & Tewari (2020)'s D-LinTS.

    Scaling, our choice: with V = sigma2 M and V~ = sigma2 Mt (ridge lam' = sigma2 lam in
    both, undiscounted, as in Russac et al.), the estimate's covariance under noise sigma2 is
    sigma2 V^-1 V~ V^-1 = M^-1 Mt M^-1: with sigma2 = 1 it is the papers' V^-1 V~ V^-1
    exactly, and with gamma = 1 it is LinTS's M^-1. We leave out the papers' radius
    beta_t (Kim & Tewari's c beta_t) as LinTS here leaves it out of M^-1. Since
    gamma^2 <= gamma, Mt <= M and the Kim-Tewari covariance is the narrower one.

    Sampling goes through triangular factors: theta = mu + M^-1 Lt z = mu + L^-T L^-1 Lt z,
    with M = L L^T and Mt = Lt Lt^T (its covariance is M^-1 Lt Lt^T M^-1).
    """

    name = "d-lints"
    title = "D-LinTS"
    help = "LinTS discounting old steps by gamma"
    style = {"color": "bluish green", "dash": "longdashdot", "symbol": "triangle-down"}
    params = {
        "gamma": Param(
            Interval(Real, 0, 1, closed="right"),
            "Discount: the weight of an observation shrinks by gamma every "
            "step (1: never forgets).",
        ),
        "covariance": Param(
            Options("precision", "kim-tewari"),
            "What θ is sampled from: 'precision', N(μ, M⁻¹); "
            "'kim-tewari', N(μ, M⁻¹M̃M⁻¹) with M̃ discounted by γ² "
            "(Kim & Tewari's D-LinTS).",
        ),
    }
    _mode = kernels.DISCOUNT

    def __init__(self, d, *, gamma=0.99, covariance="precision", lam=1.0, sigma2=1.0, rng=None):
        super().__init__(d, lam=lam, sigma2=sigma2, rng=rng)
        self._set_params(gamma=gamma, covariance=covariance)
        # Mt: the same posterior class, discounted by gamma^2 (its b is not used)
        self.inner = (
            GaussianLinearPosterior(self.d, self.lam, self.sigma2) if self._sandwich() else None
        )

    def _gamma(self):
        return self.gamma

    def _sandwich(self):
        return self.covariance == "kim-tewari"

    def _select(self, arms, u, z):
        if self.inner is None:
            return super()._select(arms, u, z)
        L = self.model.chol
        theta = self.model.mean + cho_solve((L, True), self.inner.chol @ z)  # mu + M^-1 Lt z
        return int(np.argmax(arms @ theta))

    def sampling_covariance(self) -> np.ndarray:
        """The covariance theta is drawn from (plain path): M^-1, or M^-1 Mt M^-1."""
        S = self.model.covariance
        return S if self.inner is None else S @ self.inner.M @ S

    def update(self, xs, rs):
        self._require_plain()
        for x, r in zip(np.atleast_2d(xs), np.atleast_1d(rs)):
            self.model.discount(self.gamma)
            self.model.update(x, r)
            if self.inner is not None:
                self.inner.discount(self.gamma**2)
                self.inner.update(x, r)

    def is_positive_definite(self):
        if not super().is_positive_definite():
            return False
        Mt = (
            self._fast["Mt"]
            if self._fast is not None
            else None
            if self.inner is None
            else self.inner.M
        )
        return Mt is None or bool(np.all(np.linalg.eigvalsh(Mt) > 0))
