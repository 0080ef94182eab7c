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

from .. import _kernels as kernels
from ..models import GaussianLinearPosterior
from ..envs.arms import as_blocks
from .base import ChunkOutcome, Policy, check_batch_end
from .params import COUNT, POSITIVE, Interval, Param, Real


class LinTS(Policy):
    """Linear Thompson Sampling: theta ~ N(mu, M^-1), play argmax <theta, x>."""

    name = "lints"
    title = "LinTS"
    help = "Linear Thompson sampling, never forgets"
    style = {"color": "orange", "dash": "longdash", "symbol": "square"}
    params = {
        "lam": Param(POSITIVE, "λ, the prior precision: larger means a stronger pull of θ "
                               "towards 0."),
        "sigma2": Param(POSITIVE, "σ², the noise variance of the reward model (the app sets "
                                  "it to the scenario's)."),
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
        self._fast = dict(M=np.tile(self.lam * np.eye(p), (G, 1, 1)),
                          L=np.tile(np.sqrt(self.lam) * np.eye(p), (G, 1, 1)),
                          b=np.zeros((G, p)), mu=np.zeros((G, p)), wx=np.zeros((cap, p)),
                          wg=np.zeros(cap, dtype=np.int64), wr=np.zeros(cap),
                          wstate=np.zeros(3, dtype=np.int64))

    def _window(self):
        return 0

    def _gamma(self):
        return 1.0

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
        kernels.lints_chunk(ctx, block, cidx, expected, noise, batch_end, z.reshape(n, G, -1),
                      f["M"], f["L"], f["b"], f["mu"], self._mode, max(self._window(), 1),
                      self._gamma(), self.lam, self.sigma2, f["wx"], f["wg"], f["wr"],
                      f["wstate"], arm, reward)
        self.t += n
        return ChunkOutcome(arm, reward, np.full(n, -1, dtype=np.int64), batch_end)


class SWLinTS(LinTS):
    """Sliding-window LinTS: the posterior of the last ``tau`` observations only."""

    name = "sw-lints"
    title = "SW-LinTS"
    help = "LinTS on a sliding window of the last tau steps"
    style = {"color": "sky blue", "dash": "dashdot", "symbol": "triangle-up"}
    params = {"tau": Param(COUNT, "Window: how many recent observations the posterior sees.")}
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
    """Discounted LinTS: M = lam I + sum gamma^(t-s) x_s x_s^T / sigma2."""

    name = "d-lints"
    title = "D-LinTS"
    help = "LinTS discounting old steps by gamma"
    style = {"color": "bluish green", "dash": "longdashdot", "symbol": "triangle-down"}
    params = {"gamma": Param(Interval(Real, 0, 1, closed="right"),
                             "Discount: the weight of an observation shrinks by gamma every "
                             "step (1: never forgets).")}
    _mode = kernels.DISCOUNT

    def __init__(self, d, *, gamma=0.99, lam=1.0, sigma2=1.0, rng=None):
        super().__init__(d, lam=lam, sigma2=sigma2, rng=rng)
        self._set_params(gamma=gamma)

    def _gamma(self):
        return self.gamma

    def update(self, xs, rs):
        self._require_plain()
        for x, r in zip(np.atleast_2d(xs), np.atleast_1d(rs)):
            self.model.discount(self.gamma)
            self.model.update(x, r)
