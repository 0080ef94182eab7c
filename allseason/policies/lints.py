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

from .. import kernels
from ..models import GaussianLinearPosterior
from .base import ChunkOutcome, PosteriorBlocks, RngLike
from .compiled import Chunk, CompiledPolicy
from .params import NOISE, PRIOR, WINDOW, Interval, Options, Param, Real


class LinTS(CompiledPolicy):
    """Linear Thompson Sampling: theta ~ N(mu, M^-1), play argmax <theta, x> (Alg. 2).

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    lam : float, default 1.0
        λ, the prior precision (M starts at λ I).
    sigma2 : float, default 1.0
        σ², the noise variance of the reward model.
    rng : numpy.random.Generator, int or None
        Root of the random streams (the Thompson samples' normals).

    References
    ----------
    Agrawal & Goyal, "Thompson Sampling for Contextual Bandits with Linear Payoffs", ICML 2013.
    Di Benedetto, Bellini & Zappella, "A Linear Bandit for Seasonal Environments", Alg. 2.

    Examples
    --------
    >>> import numpy as np
    >>> policy = LinTS(3, rng=0)
    >>> arm = policy.select(np.eye(3))
    >>> policy.update(np.eye(3)[[arm]], np.array([1.0]))
    """

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
    family = "lints"
    shallow_fork = True
    _mode = kernels.PLAIN

    def __init__(
        self, d: int, *, lam: float = 1.0, sigma2: float = 1.0, rng: RngLike = None
    ) -> None:
        super().__init__(d, rng=rng)
        self._set_params(lam=lam, sigma2=sigma2)
        self.model = GaussianLinearPosterior(self.d, self.lam, self.sigma2)

    # -- plain path ---------------------------------------------------------------------------
    def _select(self, arms, u, z):
        return int(np.argmax(arms @ self.model.sample(z)))

    def update(self, xs, rs):
        self._require_plain()
        self.model.update(xs, rs)

    def _require_plain(self):
        if self.kernel_state is not None:
            raise RuntimeError("this policy has been run with run_chunk; use one path only")

    def is_positive_definite(self) -> bool:
        M = self.kernel_state.M if self.kernel_state is not None else self.model.M
        return bool(np.all(np.linalg.eigvalsh(M) > 0))

    def posterior_blocks(self) -> list[PosteriorBlocks] | None:
        """The posterior, block by block: one entry, bandit -1 (compiled path only)."""
        f = self.kernel_state
        return None if f is None else [PosteriorBlocks(-1, f.M, f.mu)]

    # -- compiled path ------------------------------------------------------------------------
    def _init_kernel_state(self, n_blocks: int, n_arms: int) -> None:
        if self.model.n_obs:
            raise RuntimeError("run_chunk must start from a fresh policy")
        self.kernel_state = kernels.new_lints_state(
            n_blocks, self.d // n_blocks, self.lam, self._window(), self._sandwich()
        )

    def _window(self):
        return 0

    def _gamma(self):
        return 1.0

    def _sandwich(self):
        return False

    def _kernel_params(self) -> kernels.LinTSParams:
        return kernels.LinTSParams(
            self._mode,
            max(self._window(), 1),
            self._gamma(),
            self.lam,
            self.sigma2,
            self._sandwich(),
        )

    def _state_blocks(self) -> int:
        return self.kernel_state.M.shape[0]

    def _play(self, chunk: Chunk) -> ChunkOutcome:
        n = chunk.n
        arm = np.empty(n, dtype=np.int64)
        reward = np.empty(n)
        state, params = self._kernel_args()
        kernels.lints_chunk(chunk.kernel_rounds, chunk.z, state, params, arm, reward)
        return ChunkOutcome(arm, reward, np.full(n, -1, dtype=np.int64), chunk.rounds.batch_end)


class SWLinTS(LinTS):
    """Sliding-window LinTS: the posterior of the last ``tau`` observations only.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    tau : int, default 100
        The window: how many recent observations the posterior sees.
    lam : float, default 1.0
        λ, the prior precision.
    sigma2 : float, default 1.0
        σ², the noise variance of the reward model.
    rng : numpy.random.Generator, int or None
        Root of the random streams.

    References
    ----------
    Garivier & Moulines, "On Upper-Confidence Bound Policies for Switching Bandit Problems",
    ALT 2011 (sliding windows); Cheung, Simchi-Levi & Zhu, "Learning to Optimize under
    Non-Stationarity", AISTATS 2019 (SW-LinUCB).

    Examples
    --------
    >>> SWLinTS(3, tau=50, rng=0).tau
    50
    """

    name = "sw-lints"
    title = "SW-LinTS"
    help = "LinTS on a sliding window of the last tau steps"
    style = {"color": "sky blue", "dash": "dashdot", "symbol": "triangle-up"}
    params = {"tau": Param(WINDOW, "Window: how many recent observations the posterior sees.")}
    _mode = kernels.WINDOW

    def __init__(
        self,
        d: int,
        *,
        tau: int = 100,
        lam: float = 1.0,
        sigma2: float = 1.0,
        rng: RngLike = None,
    ) -> None:
        super().__init__(d, lam=lam, sigma2=sigma2, rng=rng)
        self._set_params(tau=tau)
        self._window_obs: deque[tuple[np.ndarray, float]] = deque()  # (x, r) in the window

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

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    gamma : float, default 0.99
        The discount, in (0, 1]: an observation's weight shrinks by gamma every step.
    covariance : {"precision", "kim-tewari"}, default "precision"
        What theta is sampled from (above).
    lam : float, default 1.0
        λ, the prior precision (never discounted).
    sigma2 : float, default 1.0
        σ², the noise variance of the reward model.
    rng : numpy.random.Generator, int or None
        Root of the random streams.

    References
    ----------
    Russac, Vernade & Cappé, "Weighted Linear Bandits for Non-Stationary Environments",
    NeurIPS 2019. Kim & Tewari, "Randomized Exploration for Non-Stationary Stochastic Linear
    Bandits", UAI 2020.

    Examples
    --------
    >>> DLinTS(3, gamma=0.95, covariance="kim-tewari", rng=0).covariance
    'kim-tewari'
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

    def __init__(
        self,
        d: int,
        *,
        gamma: float = 0.99,
        covariance: str = "precision",
        lam: float = 1.0,
        sigma2: float = 1.0,
        rng: RngLike = None,
    ) -> None:
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
        from scipy.linalg import cho_solve  # slow to import: only when used

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
            self.kernel_state.Mt
            if self.kernel_state is not None
            else None
            if self.inner is None
            else self.inner.M
        )
        return Mt is None or bool(np.all(np.linalg.eigvalsh(Mt) > 0))
