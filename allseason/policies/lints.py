"""Linear Thompson Sampling (Alg. 2) and its two forgetting variants.

- ``LinTS``: all the history.
- ``SWLinTS``: the last ``tau`` observations (sliding window).
- ``DLinTS``: every observation weighted by gamma^(age) (Russac et al. 2019's discounting,
  with Thompson sampling in place of UCB); the prior lam I is never discounted.

The plain path (``select``/``update``) uses :class:`allseason.models.GaussianLinearPosterior`;
``run_chunk`` uses the compiled kernel and makes the same decisions.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .. import _kernels as K
from ..models import GaussianLinearPosterior
from .base import ChunkOutcome, Policy, check_batch_end, check_positive


class LinTS(Policy):
    """Linear Thompson Sampling: theta ~ N(mu, M^-1), play argmax <theta, x>."""

    name = "lints"
    _mode = K.PLAIN

    def __init__(self, d, *, lam=1.0, sigma2=1.0, rng=None):
        super().__init__(d, rng=rng)
        self.lam = check_positive("lam", lam)
        self.sigma2 = check_positive("sigma2", sigma2)
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
    def _init_fast(self):
        d = self.d
        if self.model.n_obs:
            raise RuntimeError("run_chunk must start from a fresh policy")
        cap = max(self._window(), 1)
        self._fast = dict(M=self.lam * np.eye(d), L=np.sqrt(self.lam) * np.eye(d),
                          b=np.zeros(d), mu=np.zeros(d), wx=np.zeros((cap, d)),
                          wr=np.zeros(cap), wstate=np.zeros(3, dtype=np.int64))

    def _window(self):
        return 0

    def _gamma(self):
        return 1.0

    def run_chunk(self, arms, expected, noise, batch_end):
        batch_end = check_batch_end(batch_end, arms.shape[0])
        if self._fast is None:
            self._init_fast()
        f = self._fast
        n = arms.shape[0]
        _, z = self.draw(n)
        arm = np.empty(n, dtype=np.int64)
        reward = np.empty(n)
        K.lints_chunk(arms, expected, noise, batch_end, z,
                      f["M"], f["L"], f["b"], f["mu"], self._mode, max(self._window(), 1),
                      self._gamma(), self.lam, self.sigma2, f["wx"], f["wr"], f["wstate"],
                      arm, reward)
        self.t += n
        return ChunkOutcome(arm, reward, np.full(n, -1, dtype=np.int64),
                            np.asarray(batch_end, dtype=np.int64))


class SWLinTS(LinTS):
    """Sliding-window LinTS: the posterior of the last ``tau`` observations only."""

    name = "sw-lints"
    _mode = K.WINDOW

    def __init__(self, d, *, tau=100, lam=1.0, sigma2=1.0, rng=None):
        super().__init__(d, lam=lam, sigma2=sigma2, rng=rng)
        self.tau = check_positive("tau", tau, integer=True)
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
    """Discounted LinTS: M = lam I + sum gamma^(t-s) x_s x_s^T / sigma2."""

    name = "d-lints"
    _mode = K.DISCOUNT

    def __init__(self, d, *, gamma=0.99, lam=1.0, sigma2=1.0, rng=None):
        super().__init__(d, lam=lam, sigma2=sigma2, rng=rng)
        self.gamma = check_positive("gamma", gamma, upper=1.0)

    def _gamma(self):
        return self.gamma

    def update(self, xs, rs):
        self._require_plain()
        for x, r in zip(np.atleast_2d(xs), np.atleast_1d(rs)):
            self.model.discount(self.gamma)
            self.model.update(x, r)
