"""Shared helpers for the engine tests: a linear bandit problem and random SPD matrices.

Import the helpers directly (``from conftest import linear_problem``): pytest puts this
folder on ``sys.path`` (rootdir-relative, no ``__init__.py``).
"""

from __future__ import annotations

import numpy as np
import pytest


def unit_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Gaussian vectors normalised to unit length along the last axis."""
    v = rng.standard_normal(shape)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def linear_problem(T: int, K: int, d: int, sigma2: float, seed, thetas=None, switch_at=None):
    """A linear bandit: r_t = <theta_t, x> + eps_t, eps_t ~ N(0, sigma2).

    Parameters
    ----------
    T, K, d : steps, arms per step, dimension.
    sigma2 : noise variance.
    seed : anything ``np.random.default_rng`` takes.
    thetas : array (n, d) or (d,), optional. The season parameters; season i uses row
        ``i % n`` (so fewer rows than segments makes seasons come back). Default: one random
        unit vector per segment.
    switch_at : int or sequence of int, optional. Steps at which a new segment starts.

    Returns
    -------
    arms : (T, K, d), unit-norm Gaussian rows.
    expected : (T, K), <theta_t, arms[t, k]>.
    noise : (T,), sqrt(sigma2) * N(0, 1).
    """
    rng = np.random.default_rng(seed)
    switches = [] if switch_at is None else sorted(np.atleast_1d(switch_at).astype(int))
    arms = unit_rows(rng, (T, K, d))
    if thetas is None:
        thetas = unit_rows(rng, (len(switches) + 1, d))
    thetas = np.atleast_2d(np.asarray(thetas, dtype=float))
    segment = np.searchsorted(np.asarray(switches, dtype=int), np.arange(T), side="right")
    theta_t = thetas[segment % len(thetas)]
    expected = np.einsum("tkd,td->tk", arms, theta_t)
    noise = np.sqrt(sigma2) * rng.standard_normal(T)
    return arms, expected, noise


def random_spd(rng: np.random.Generator, d: int, scale: float = 1.0) -> np.ndarray:
    """A well-conditioned symmetric positive definite (d, d) matrix."""
    A = rng.standard_normal((d, d))
    return scale * (A @ A.T / d + np.eye(d))


@pytest.fixture(scope="module")
def private_data_cache(tmp_path_factory):
    """Keep the tests' data cache (MNIST .npz) out of the user's ~/.cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("ALLSEASON_CACHE", str(tmp_path_factory.mktemp("allseason-cache")))
    yield
    mp.undo()
