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

import numpy as np

from .patterns import Pattern
from .round import Round


class LinearGaussianEnv:
    """Seasonal linear environment over a :class:`Pattern`.

    Parameters: pattern, d (dimension), n_arms (K), sigma2 (noise variance), rng.
    ``thetas`` (n_states, d) may be given; by default they are drawn from ``rng``.

    ``next_round(n, states=...)`` plays given states instead of the pattern's (a live run,
    where the state is chosen as it goes); a state never seen gets its theta from the same
    stream, so the thetas do not depend on when a state first appears: state s always has
    the (s+1)-th unit-norm draw, as if ``pattern.n_states`` had been large enough.
    """

    def __init__(
        self,
        pattern: Pattern,
        d: int = 5,
        n_arms: int = 5,
        sigma2: float = 0.1,
        rng=None,
        thetas: np.ndarray | None = None,
    ):
        self.pattern, self.d, self.n_arms, self.sigma2 = pattern, int(d), int(n_arms), sigma2
        self._rng_theta, self._rng_arms, self._rng_noise = np.random.default_rng(rng).spawn(3)
        self._fixed_thetas = thetas is not None
        self.thetas = np.zeros((0, self.d))
        if thetas is None:
            self.ensure_states(pattern.n_states)
        else:
            self.thetas = np.asarray(thetas, dtype=float)
        self._states = pattern.states()
        self.t = 0

    def ensure_states(self, n_states: int) -> np.ndarray:
        """Draw the thetas of states up to ``n_states - 1`` if not drawn yet; returns thetas.

        Row by row from one stream: drawing (n, d) normals at once or in parts gives the same
        numbers (tests/sim/test_worlds.py checks it), so a state's theta is the same either way."""
        missing = int(n_states) - len(self.thetas)
        if missing > 0:
            if self._fixed_thetas:
                raise ValueError(
                    f"states: only {len(self.thetas)} thetas were given, "
                    f"state {n_states - 1} needs more"
                )
            new = self._rng_theta.standard_normal((missing, self.d))
            new /= np.linalg.norm(new, axis=1, keepdims=True)
            self.thetas = np.vstack([self.thetas, new])
        return self.thetas

    @property
    def horizon(self) -> int:
        """The number of steps."""
        return len(self._states)

    def next_round(self, n: int, states: np.ndarray | None = None) -> Round:
        """The next n steps: on the pattern (n is cut at the horizon), or, with ``states``
        (shape (n,), ints >= 0), in those states whatever the pattern says (no horizon)."""
        if states is None:
            n = min(int(n), self.horizon - self.t)
            state = self._states[self.t : self.t + n]
        else:
            state = np.asarray(states, dtype=np.int64)
            if state.shape != (int(n),) or (n and state.min() < 0):
                raise ValueError(f"states: {n} states >= 0 expected")
            self.ensure_states(int(state.max()) + 1 if n else 0)
        arms = self._rng_arms.standard_normal((n, self.n_arms, self.d))
        arms /= np.linalg.norm(arms, axis=2, keepdims=True)
        expected = np.einsum("nkd,nd->nk", arms, self.thetas[state])
        noise = np.sqrt(self.sigma2) * self._rng_noise.standard_normal(n)
        self.t += n
        return Round(arms, expected, noise, state)
