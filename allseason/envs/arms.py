"""How arms reach a policy: a dense array of shape (n, K, d), or outer-product actions.

The linear environment hands a policy dense arms, ``arms[t]`` of shape (K, d). The
real-data experiments use outer-product actions, x_{t,k} = e_k (x) c_t (:class:`BlockArms`),
which the compiled kernels and the ridge models keep block-diagonal. :func:`as_blocks` turns
either kind into what the kernels read.

    >>> import numpy as np
    >>> arms = BlockArms(np.array([[1.0, 2.0], [3.0, 4.0]]), n_arms=3)
    >>> arms.shape
    (2, 3, 6)
    >>> arms[0]
    array([[1., 2., 0., 0., 0., 0.],
           [0., 0., 1., 2., 0., 0.],
           [0., 0., 0., 0., 1., 2.]])
    >>> arms[[1], [2]]
    array([[0., 0., 0., 0., 3., 4.]])
"""

from __future__ import annotations

import numpy as np


class BlockArms:
    """Outer-product actions: arm k at step t is x_{t,k} = e_k (x) c_t, the context c_t placed
    in the k-th block of a vector of dimension d = K p (the paper's real-data experiments).

    Behaves like the dense array of shape (n, K, d) for indexing (``arms[t]`` is (K, d);
    ``arms[rows, cols]`` is (len(rows), d)), while the compiled kernels use the contexts
    directly and keep the precision block-diagonal (K blocks of p x p)."""

    def __init__(self, contexts: np.ndarray, n_arms: int):
        self.contexts = np.ascontiguousarray(contexts, dtype=float)  # (n, p)
        self.n_arms = int(n_arms)
        n, p = self.contexts.shape
        self.shape = (n, self.n_arms, self.n_arms * p)

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, key):
        n, K, d = self.shape
        p = d // K
        if isinstance(key, slice):  # a range of steps: still outer-product arms
            return BlockArms(self.contexts[key], K)
        if isinstance(key, tuple):  # (rows, arms): the played vectors
            rows, arms = (np.atleast_1d(k) for k in key)
            out = np.zeros((len(rows), d))
            for i, (t, k) in enumerate(zip(rows, arms)):
                out[i, k * p : (k + 1) * p] = self.contexts[t]
            return out
        out = np.zeros((K, d))
        for k in range(K):
            out[k, k * p : (k + 1) * p] = self.contexts[key]
        return out


def as_blocks(arms) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(ctx (n, C, p), block (K,), cidx (K,), G) for the kernels; see kernels.linalg.best_arm."""
    if isinstance(arms, BlockArms):
        K = arms.n_arms
        return (
            arms.contexts[:, None, :],
            np.arange(K, dtype=np.int64),
            np.zeros(K, dtype=np.int64),
            K,
        )
    arms = np.ascontiguousarray(arms, dtype=float)
    K = arms.shape[1]
    return arms, np.zeros(K, dtype=np.int64), np.arange(K, dtype=np.int64), 1
