"""The uniform random policy: a floor on what any learner should beat."""

from __future__ import annotations

import numpy as np

from .base import ChunkOutcome, Policy, RngLike, check_batch_end


class RandomPolicy(Policy):
    """Plays arm floor(u K), u ~ U(0, 1): each arm with probability 1/K.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    rng : numpy.random.Generator, int or None
        Root of the random streams (u: the arm).

    Examples
    --------
    >>> import numpy as np
    >>> RandomPolicy(2, rng=0).select(np.eye(4, 2)) in range(4)
    True
    """

    name = "random"
    title = "Random"
    help = "A random arm every step (the floor)"
    style = {"color": "grey", "dash": "dot", "symbol": "cross"}
    uses_normals = False
    family = "random"
    shallow_fork = True
    learns = False

    def __init__(self, d: int, *, rng: RngLike = None) -> None:
        super().__init__(d, rng=rng)

    def _select(self, arms, u, z):
        return min(int(u * arms.shape[0]), arms.shape[0] - 1)

    def update(self, xs, rs):
        pass

    def run_chunk(self, arms, expected, noise, batch_end):
        n, n_arms = expected.shape
        batch_end = check_batch_end(batch_end, n)
        u, _ = self.draw(n)
        arm = np.minimum((u * n_arms).astype(np.int64), n_arms - 1)
        reward = expected[np.arange(n), arm] + noise
        self.t += n
        return ChunkOutcome(arm, reward, np.full(n, -1, dtype=np.int64), batch_end)
