"""What an environment hands the runner for a chunk of steps (one module of its own, so any
world can build one without importing another world)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .arms import BlockArms


@dataclass
class Round:
    """A chunk of n steps: arms (n, K, d), expected (n, K), noise (n,), state (n,).

    ``outcome`` (n, K), optional: the reward each arm WOULD pay at each step, for worlds whose
    rewards are not ``expected + noise`` (e.g. 0/1 sales drawn with probability ``expected``);
    then ``noise`` is zeros. Policies are paid from :attr:`payoff`; regret always uses
    ``expected``. One draw per (step, arm) keeps common random numbers across contestants."""

    arms: np.ndarray | BlockArms  # dense, or outer-product actions
    expected: np.ndarray
    noise: np.ndarray
    state: np.ndarray
    outcome: np.ndarray | None = None

    @cached_property
    def best(self) -> np.ndarray:
        """(n,) the best expected reward at each step (computed once per round: every
        contestant's trace records it)."""
        return self.expected.max(axis=1)

    @property
    def payoff(self) -> np.ndarray:
        """What the policies are paid from: ``outcome`` if the world has one, else
        ``expected`` (plus ``noise``)."""
        return self.expected if self.outcome is None else self.outcome
