"""Ridge regression as the LinUCB family uses it (dLinUCB, DenBand, BoB's SW-UCB).

:class:`RidgeModel` keeps V = lam I + sum x x^T and its inverse up to date; its block-diagonal
twin :class:`BlockRidgeModel` serves outer-product actions; :class:`BlockAware` lets a policy
switch to it; :func:`confidence_radius` is the self-normalised width of Abbasi-Yadkori et al.

    >>> import numpy as np
    >>> m = RidgeModel(2, lam=1.0)
    >>> m.update(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([1.0, 1.0]))
    >>> m.theta  # V^-1 b = (1 / 3) * 2 on the first axis
    array([0.66666667, 0.        ])
    >>> m.widths(np.eye(2)).round(4)  # ||x||_{V^-1}: the seen axis is narrower
    array([0.5774, 1.    ])
"""

from __future__ import annotations

import math

import numpy as np

from ..envs.arms import BlockArms
from ..models import GaussianLinearPosterior


class RidgeModel(GaussianLinearPosterior):
    """Ridge regression with its inverse kept up to date: the model inside a LinUCB.

    V = lam I + sum x x^T (``self.M``: the parent's precision with sigma2 = 1),
    b = sum r x, theta = V^-1 b (``self.theta``, also ``self.mean``).

    V^-1 (``self.Vinv``) follows every update and downdate by a Sherman-Morrison rank-one
    step, O(d^2). Every ``REFRESH`` such steps it is recomputed from V, which stops
    rounding error from building up.
    """

    REFRESH = 256

    def __init__(self, d: int, lam: float = 1.0):
        super().__init__(d, lam, 1.0)
        self.Vinv: np.ndarray = np.eye(self.d) / self.lam
        self.theta = np.zeros(self.d)
        self._steps = 0

    def copy(self) -> RidgeModel:
        """An independent copy."""
        other = RidgeModel(self.d, self.lam)
        other.M, other.b, other.n_obs = self.M.copy(), self.b.copy(), self.n_obs
        other.Vinv, other.theta, other._steps = self.Vinv.copy(), self.theta.copy(), self._steps
        return other

    def update(self, xs: np.ndarray, rs: np.ndarray) -> None:
        """Add observations (x (d,) and r, or xs (n, d) and rs (n,)); same M, b, n_obs as the
        parent's update, plus V^-1 and theta."""
        self._apply(xs, rs, 1.0)

    def downdate(self, xs: np.ndarray, rs: np.ndarray) -> None:
        """Remove observations previously added (sliding window)."""
        self._apply(xs, rs, -1.0)

    def _apply(self, xs, rs, sign: float) -> None:
        xs = np.asarray(xs, dtype=float)
        rows = ((xs, float(np.reshape(rs, -1)[0])),) if xs.ndim == 1 else zip(xs, np.atleast_1d(rs))
        n = 0
        for x, r in rows:
            self.M += sign * (x[:, None] * x)
            self.b += (sign * r) * x
            v = self.Vinv @ x  # (V +- x x^T)^-1 = V^-1 -+ v v^T / (1 +- x^T v)
            self.Vinv -= (sign / (1.0 + sign * (x @ v))) * (v[:, None] * v)
            n += 1
        self.n_obs += sign * n
        self._done(n)

    def discount(self, gamma: float) -> None:
        """Discount every past observation by ``gamma``."""
        super().discount(gamma)
        self._steps = self.REFRESH
        self._done(0)

    def _done(self, n: int) -> None:
        self._steps += n
        if self._steps >= self.REFRESH:
            self.Vinv = np.linalg.inv(self.M)
            self.Vinv = 0.5 * (self.Vinv + self.Vinv.T)
            self._steps = 0
        self.theta = self.Vinv @ self.b

    @property
    def mean(self) -> np.ndarray:
        """The posterior mean."""
        return self.theta

    def widths(self, arms: np.ndarray) -> np.ndarray:
        """||x||_{V^-1} = sqrt(x^T V^-1 x) for each row of arms (K, d); shape (K,)."""
        arms = np.atleast_2d(arms)
        q = np.einsum("kd,kd->k", arms @ self.Vinv, arms)
        return np.sqrt(np.maximum(q, 0.0))

    def solve(self, v: np.ndarray) -> np.ndarray:
        """V^-1 v."""
        return self.Vinv @ v

    def gram(self, v: np.ndarray) -> np.ndarray:
        """(V - lam I) v = sum x x^T v."""
        return self.M @ v - self.lam * v

    def is_positive_definite(self) -> bool:
        """Whether the precision matrix is positive definite."""
        return bool(np.all(np.linalg.eigvalsh(self.M) > 0))


class BlockRidgeModel:
    """:class:`RidgeModel` for outer-product actions x = e_k (x) c (d = G p): V stays
    block-diagonal (G blocks of p x p), so an update is O(p^2) and a width O(G p^2) instead
    of O(d^2). Same attributes as RidgeModel where it matters (``theta`` (d,), ``n_obs``,
    ``lam``, ``widths``, ``solve``, ``gram``); ``M``, ``Vinv`` are (G, p, p) and ``b`` (G, p).

    Every observation must lie in one block (ValueError otherwise): that is what keeps V
    block-diagonal. ``tests/policies/test_block_structure.py`` checks it against the dense model."""

    REFRESH = RidgeModel.REFRESH

    def __init__(self, d: int, lam: float = 1.0, blocks: int = 1):
        self.d, self.lam, self.G = int(d), float(lam), int(blocks)
        if self.G < 1 or self.d % self.G:
            raise ValueError(f"blocks: must divide d={self.d}, got {blocks!r}")
        self.p = self.d // self.G
        eye = np.eye(self.p)
        self.M = np.repeat(self.lam * eye[None], self.G, axis=0)
        self.Vinv = np.repeat(eye[None] / self.lam, self.G, axis=0)
        self.b = np.zeros((self.G, self.p))
        self.theta = np.zeros(self.d)
        self.n_obs: float = 0  # a count (a float once updated, as the dense model keeps it)
        self._steps = np.zeros(self.G, dtype=np.int64)

    @property
    def mean(self) -> np.ndarray:
        """The posterior mean."""
        return self.theta

    def update(self, xs, rs) -> None:
        """Add observations (x (d,) and r, or xs (n, d) and rs (n,))."""
        self._apply(xs, rs, 1.0)

    def downdate(self, xs, rs) -> None:
        """Remove observations previously added (sliding window)."""
        self._apply(xs, rs, -1.0)

    def _apply(self, xs, rs, sign: float) -> None:
        xs = np.atleast_2d(np.asarray(xs, dtype=float))
        rs = np.atleast_1d(np.asarray(rs, dtype=float)).reshape(-1)
        p = self.p
        for x, r in zip(xs, rs):
            nz = np.flatnonzero(x)
            self.n_obs += sign
            if not len(nz):
                continue  # x = 0 changes nothing but the count, as in the dense model
            k = nz[0] // p
            if nz[-1] // p != k:
                raise ValueError("x: an observation spans several blocks; use RidgeModel")
            c = x[k * p : (k + 1) * p]
            self.M[k] += sign * (c[:, None] * c)
            self.b[k] += (sign * r) * c
            v = self.Vinv[k] @ c
            self.Vinv[k] -= (sign / (1.0 + sign * (c @ v))) * (v[:, None] * v)
            self._steps[k] += 1
            if self._steps[k] >= self.REFRESH:  # stop rounding error building up
                inv = np.linalg.inv(self.M[k])
                self.Vinv[k] = 0.5 * (inv + inv.T)
                self._steps[k] = 0
            self.theta[k * p : (k + 1) * p] = self.Vinv[k] @ self.b[k]

    _PATHS: dict = {}  # einsum's contraction order, by shapes: the search costs more than the sum

    def widths(self, arms: np.ndarray) -> np.ndarray:
        """||x||_{V^-1} for each row of arms (K, d), summed over blocks; shape (K,)."""
        a = np.atleast_2d(arms).reshape(-1, self.G, self.p)
        key = (a.shape, self.Vinv.shape)
        path = self._PATHS.get(key)
        if path is None:  # the path optimize=True would find (greedy), found once per shape
            path = self._PATHS[key] = np.einsum_path(
                "kgp,gpq,kgq->k", a, self.Vinv, a, optimize="greedy"
            )[0]
        q = np.einsum("kgp,gpq,kgq->k", a, self.Vinv, a, optimize=path)
        return np.sqrt(np.maximum(q, 0.0))

    def solve(self, v: np.ndarray) -> np.ndarray:
        """V^-1 v."""
        return np.einsum("gpq,gq->gp", self.Vinv, v.reshape(self.G, self.p)).reshape(-1)

    def gram(self, v: np.ndarray) -> np.ndarray:
        """(V - lam I) v = sum x x^T v."""
        return np.einsum("gpq,gq->gp", self.M, v.reshape(self.G, self.p)).reshape(-1) - self.lam * v

    def is_positive_definite(self) -> bool:
        """Whether the precision matrix is positive definite."""
        return bool(np.all(np.linalg.eigvalsh(self.M) > 0))


def ridge_model(d: int, lam: float, blocks: int = 1):
    """A fresh ridge model: dense (blocks = 1) or block-diagonal."""
    return RidgeModel(d, lam) if blocks == 1 else BlockRidgeModel(d, lam, blocks)


class BlockAware:
    """Mixin for the plain-numpy LinUCB-family policies: when a chunk of outer-product
    actions (:class:`BlockArms`) arrives before anything was learned, every ridge model the
    policy makes from then on is block-diagonal (``self.blocks`` = K). Decisions are the
    dense ones up to rounding; the cost of a step drops from O(d^2) to O(K p^2)."""

    blocks = 1
    # the policy's, set by its __init__
    t: int
    d: int
    lam: float

    def _prepare(self, arms) -> None:
        if isinstance(arms, BlockArms) and arms.n_arms != self.blocks:
            if self.t:
                raise ValueError("arms: outer-product actions must be given from the first step on")
            self.blocks = arms.n_arms
            self._reset_models()

    def _new_model(self):
        return ridge_model(self.d, self.lam, self.blocks)

    def _reset_models(self) -> None:
        raise NotImplementedError


TIE_RTOL = 1e-12  # scores this close (relatively) to the best one are ties (DenBand, BoB)


def first_best(scores: np.ndarray, axis: int = 0, lowest: bool = False) -> np.ndarray:
    """Index of the first maximum (``lowest``: minimum) along ``axis``, ties up to TIE_RTOL."""
    if lowest:
        best = scores.min(axis=axis, keepdims=True)
        return np.argmax(scores <= best + TIE_RTOL * np.abs(best), axis=axis)
    best = scores.max(axis=axis, keepdims=True)
    return np.argmax(scores >= best - TIE_RTOL * np.abs(best), axis=axis)


def confidence_radius(
    n: float, d: int, lam: float, sigma: float, delta: float, S: float = 1.0, L: float = 1.0
) -> float:
    """Abbasi-Yadkori et al. (2011), Thm 2 with the determinant bound:
    sigma sqrt(d ln(1 + n L^2 / (d lam)) + 2 ln(1/delta)) + sqrt(lam) S."""
    return (
        sigma * math.sqrt(d * math.log1p(n * L * L / (d * lam)) + 2.0 * math.log(1.0 / delta))
        + math.sqrt(lam) * S
    )
