"""The linear Gaussian seasonal environment (paper eq. (reward)).

At each step K arms are drawn as unit-norm Gaussian vectors in R^d; in state s the expected
reward of arm x is <theta_s, x>, and the observed reward adds N(0, sigma2) noise. The true
parameters theta_s are unit-norm Gaussian draws, one per state.

The environment hands the runner the whole round (every arm's expected reward, so regret is
exact); the policy only sees the reward of the arm it played. Every policy in a race sees the
same arms and the same noise (common random numbers). Arms and noise come from separate
streams and are drawn in order, so the result does not depend on the chunk size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .patterns import Pattern


@dataclass
class Round:
    """A chunk of n steps: arms (n, K, d), expected (n, K), noise (n,), state (n,)."""

    arms: np.ndarray
    expected: np.ndarray
    noise: np.ndarray
    state: np.ndarray


class LinearGaussianEnv:
    """Seasonal linear environment over a :class:`Pattern`.

    Parameters: pattern, d (dimension), n_arms (K), sigma2 (noise variance), rng.
    ``thetas`` (n_states, d) may be given; by default they are drawn from ``rng``.
    """

    def __init__(self, pattern: Pattern, d: int = 5, n_arms: int = 5, sigma2: float = 0.1,
                 rng=None, thetas: np.ndarray | None = None):
        self.pattern, self.d, self.n_arms, self.sigma2 = pattern, int(d), int(n_arms), sigma2
        rng_theta, self._rng_arms, self._rng_noise = np.random.default_rng(rng).spawn(3)
        if thetas is None:
            thetas = rng_theta.standard_normal((pattern.n_states, self.d))
            thetas /= np.linalg.norm(thetas, axis=1, keepdims=True)
        self.thetas = np.asarray(thetas, dtype=float)
        self._states = pattern.states()
        self.t = 0

    @property
    def horizon(self) -> int:
        return len(self._states)

    def next_round(self, n: int) -> Round:
        """The next n steps (n is cut at the horizon)."""
        n = min(int(n), self.horizon - self.t)
        arms = self._rng_arms.standard_normal((n, self.n_arms, self.d))
        arms /= np.linalg.norm(arms, axis=2, keepdims=True)
        state = self._states[self.t:self.t + n]
        expected = np.einsum("nkd,nd->nk", arms, self.thetas[state])
        noise = np.sqrt(self.sigma2) * self._rng_noise.standard_normal(n)
        self.t += n
        return Round(arms, expected, noise, state)
