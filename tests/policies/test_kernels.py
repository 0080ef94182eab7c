"""The numba kernels of allseason.kernels against numpy/scipy and allseason.models."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_spd, unit_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg import solve_triangular
from scipy.stats import norm

from allseason import kernels
from allseason.models import GaussianLinearPosterior, mean_distance, symmetric_kl

DIMS = [1, 2, 5, 20]


# -- Cholesky updates, factor, solves -------------------------------------------------------
@pytest.mark.parametrize("d", DIMS)
def test_chol_update_matches_numpy(d):
    rng = np.random.default_rng(d)
    for _ in range(30):
        M = random_spd(rng, d)
        x = rng.standard_normal(d) * rng.uniform(0.1, 3.0)
        L = np.linalg.cholesky(M)
        kernels.chol_update(L, x.copy())
        np.testing.assert_allclose(
            L, np.linalg.cholesky(M + np.outer(x, x)), rtol=1e-10, atol=1e-12
        )
        assert np.all(np.triu(L, 1) == 0)


@pytest.mark.parametrize("d", DIMS)
def test_chol_downdate_matches_numpy(d):
    rng = np.random.default_rng(100 + d)
    for _ in range(30):
        M = random_spd(rng, d)
        x = rng.standard_normal(d) * rng.uniform(0.1, 3.0)
        L = np.linalg.cholesky(M + np.outer(x, x))  # M + x x^T - x x^T = M stays PD
        kernels.chol_downdate(L, x.copy())
        np.testing.assert_allclose(L, np.linalg.cholesky(M), rtol=1e-8, atol=1e-10)
        assert np.all(np.triu(L, 1) == 0)


@pytest.mark.parametrize("d", DIMS)
def test_many_updates_then_downdates_return_to_start(d):
    rng = np.random.default_rng(200 + d)
    M = random_spd(rng, d)
    L = np.linalg.cholesky(M)
    xs = unit_rows(rng, (300, d))
    for x in xs:
        kernels.chol_update(L, x.copy())
    np.testing.assert_allclose(L @ L.T, M + xs.T @ xs, rtol=1e-10, atol=1e-10)
    for x in xs[::-1]:
        kernels.chol_downdate(L, x.copy())
    np.testing.assert_allclose(L @ L.T, M, rtol=1e-7, atol=1e-8)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), d=st.integers(1, 12), scale=st.floats(1e-3, 1e3))
def test_chol_update_property(seed, d, scale):
    rng = np.random.default_rng(seed)
    M = random_spd(rng, d, scale)
    x = np.sqrt(scale) * rng.standard_normal(d)
    L = np.linalg.cholesky(M)
    kernels.chol_update(L, x.copy())
    np.testing.assert_allclose(L @ L.T, M + np.outer(x, x), rtol=1e-10, atol=1e-12 * scale * d)


@pytest.mark.parametrize("d", DIMS)
def test_chol_factor_matches_numpy(d):
    rng = np.random.default_rng(300 + d)
    M = random_spd(rng, d)
    L = np.full((d, d), np.nan)  # garbage in the upper triangle must be cleared
    kernels.chol_factor(M, L)
    np.testing.assert_allclose(L, np.linalg.cholesky(M), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("d", DIMS)
def test_triangular_solves_match_scipy(d):
    rng = np.random.default_rng(400 + d)
    L = np.linalg.cholesky(random_spd(rng, d))
    x = rng.standard_normal(d)
    out = np.empty(d)
    kernels.forward_solve(L, x, out)
    np.testing.assert_allclose(out, solve_triangular(L, x, lower=True), rtol=1e-12, atol=1e-13)
    kernels.backward_solve(L, x, out)
    np.testing.assert_allclose(out, solve_triangular(L.T, x, lower=False), rtol=1e-12, atol=1e-13)
    b, mu, tmp = rng.standard_normal(d), np.empty(d), np.empty(d)
    kernels.refresh_mean(L, b, mu, tmp)
    np.testing.assert_allclose(mu, np.linalg.solve(L @ L.T, b), rtol=1e-10, atol=1e-12)


# -- what a bandit asks: predictive, Thompson step -----------------------------------------
@pytest.mark.parametrize("d", [1, 5])
@pytest.mark.parametrize("sigma2", [0.1, 1.0])
def test_log_predictive_kernel(d, sigma2):
    rng = np.random.default_rng(500 + d)
    post = GaussianLinearPosterior(d, 1.0, sigma2)
    post.update(rng.standard_normal((20, d)), rng.standard_normal(20))
    M = post.M
    mu, S, L = np.linalg.solve(M, post.b), np.linalg.inv(M), np.linalg.cholesky(M)
    tmp = np.empty(d)
    for _ in range(10):
        x, r = rng.standard_normal(d), rng.normal(0, 2)
        got = kernels.log_predictive(L, mu, x, r, sigma2, tmp)
        assert got == pytest.approx(norm.logpdf(r, mu @ x, np.sqrt(sigma2 + x @ S @ x)), rel=1e-10)
        assert got == pytest.approx(post.log_predictive(x, r)[0], rel=1e-10)


def test_best_arm_is_argmax_of_the_thompson_sample():
    rng = np.random.default_rng(6)
    d, n_arms = 4, 7
    L = np.linalg.cholesky(random_spd(rng, d))
    mu = rng.standard_normal(d)
    theta, tmp = np.empty((1, d)), np.empty(d)
    block, cidx = np.zeros(n_arms, dtype=np.int64), np.arange(n_arms, dtype=np.int64)
    for _ in range(50):
        arms, z = rng.standard_normal((n_arms, d)), rng.standard_normal(d)
        a = kernels.best_arm(arms, block, cidx, L[None], mu[None], z[None], theta, tmp)
        want = mu + solve_triangular(L.T, z, lower=False)
        np.testing.assert_allclose(theta[0], want, rtol=1e-12, atol=1e-13)
        assert a == int(np.argmax(arms @ want))


# -- learning one observation ---------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 5])
def test_add_and_remove_obs(d):
    rng = np.random.default_rng(700 + d)
    lam, sigma2 = 0.5, 0.2
    M, b = lam * np.eye(d), np.zeros(d)
    L, tmp = np.sqrt(lam) * np.eye(d), np.empty(d)
    xs, rs = rng.standard_normal((25, d)), rng.standard_normal(25)
    for x, r in zip(xs, rs):
        kernels.add_obs(M, L, b, x, r, sigma2, tmp)
    np.testing.assert_allclose(M, lam * np.eye(d) + xs.T @ xs / sigma2, rtol=1e-12)
    np.testing.assert_allclose(b, xs.T @ rs / sigma2, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(L, np.linalg.cholesky(M), rtol=1e-10, atol=1e-12)
    for x, r in zip(xs[:10], rs[:10]):
        kernels.remove_obs(M, L, b, x, r, sigma2, tmp)
    M2 = lam * np.eye(d) + xs[10:].T @ xs[10:] / sigma2
    np.testing.assert_allclose(M, M2, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(b, xs[10:].T @ rs[10:] / sigma2, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(L @ L.T, M2, rtol=1e-9, atol=1e-9)


def test_discount_obs():
    rng = np.random.default_rng(8)
    d, lam, sigma2, gamma = 3, 2.0, 0.5, 0.8
    M, b = lam * np.eye(d) + 0.0, np.zeros(d)
    xs, rs = rng.standard_normal((30, d)), rng.standard_normal(30)
    for x, r in zip(xs, rs):
        kernels.discount_obs(M, b, x, r, gamma, lam, sigma2)
    w = gamma ** (29 - np.arange(30))
    np.testing.assert_allclose(M, lam * np.eye(d) + (w * xs.T) @ xs / sigma2, rtol=1e-12)
    np.testing.assert_allclose(b, (w * xs.T) @ rs / sigma2, rtol=1e-12)


# -- short-memory models ---------------------------------------------------------------------
def _fresh_state(d, lam, tau):
    return (
        lam * np.eye(d),
        np.sqrt(lam) * np.eye(d),
        np.zeros(d),
        np.zeros((tau, d)),
        np.zeros(tau),
        np.zeros(3, dtype=np.int64),
        np.empty(d),
    )


def _learn(M, L, b, x, r, mode, tau, gamma, lam, sigma2, wx, wr, wstate, tmp):
    """short_memory_learn on a single block (G = 1): views of shape (1, ...)."""
    wg = np.zeros(len(wr), dtype=np.int64)
    kernels.short_memory_learn(
        M[None], L[None], b[None], 0, x, r, mode, tau, gamma, lam, sigma2, wx, wg, wr, wstate, tmp
    )


@pytest.mark.parametrize("tau", [1, 3, 10])
def test_short_memory_window_is_the_last_tau_observations(tau):
    d, lam, sigma2, n = 4, 1.0, 0.1, 1_200
    rng = np.random.default_rng(tau)
    xs = unit_rows(rng, (n, d))
    rs = xs @ unit_rows(rng, (d,)) + np.sqrt(sigma2) * rng.standard_normal(n)
    M, L, b, wx, wr, wstate, tmp = _fresh_state(d, lam, tau)
    for t in range(n):
        _learn(M, L, b, xs[t], rs[t], kernels.WINDOW, tau, 1.0, lam, sigma2, wx, wr, wstate, tmp)
        lo = max(t - tau + 1, 0)  # the window: max(t - tau + 1, 1) .. t, 1-based
        ref = GaussianLinearPosterior(d, lam, sigma2)
        ref.update(xs[lo : t + 1], rs[lo : t + 1])
        np.testing.assert_allclose(M, ref.M, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(b, ref.b, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(L @ L.T, ref.M, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(L, np.linalg.cholesky(ref.M), rtol=1e-8, atol=1e-9)
        assert wstate[0] == min(t + 1, tau)
    # the ring buffer holds exactly the window
    held = sorted(map(tuple, wx))
    assert held == sorted(map(tuple, xs[n - tau :]))


@pytest.mark.parametrize("gamma", [0.5, 0.9, 0.99])
def test_short_memory_discount_is_the_weighted_sum(gamma):
    d, lam, sigma2, n = 3, 1.5, 0.3, 400
    rng = np.random.default_rng(int(gamma * 100))
    xs, rs = unit_rows(rng, (n, d)), rng.standard_normal(n)
    M, L, b, wx, wr, wstate, tmp = _fresh_state(d, lam, 1)
    for t in range(n):
        _learn(M, L, b, xs[t], rs[t], kernels.DISCOUNT, 1, gamma, lam, sigma2, wx, wr, wstate, tmp)
        if t % 37 == 0 or t == n - 1:
            w = gamma ** (t - np.arange(t + 1))
            np.testing.assert_allclose(
                M, lam * np.eye(d) + (w * xs[: t + 1].T) @ xs[: t + 1] / sigma2, rtol=1e-10
            )
            np.testing.assert_allclose(
                b, (w * xs[: t + 1].T) @ rs[: t + 1] / sigma2, rtol=1e-10, atol=1e-12
            )
    # the caller refactors once per batch; L is left alone by the DISCOUNT branch
    np.testing.assert_array_equal(L, np.sqrt(lam) * np.eye(d))
    kernels.chol_factor(M, L)
    np.testing.assert_allclose(L @ L.T, M, rtol=1e-12)


# -- symmetric KL and pruning ---------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 3, 6])
def test_sym_kl_kernel_matches_models(d):
    rng = np.random.default_rng(900 + d)
    posts = []
    for n in (3, 15):
        p = GaussianLinearPosterior(d, 1.0, 0.5)
        p.update(rng.standard_normal((n, d)), rng.standard_normal(n))
        posts.append(p)
    p, q = posts
    # C order, as the kernels hold their covariances (the signature compiled for them)
    Sp, Sq = np.ascontiguousarray(p.covariance), np.ascontiguousarray(q.covariance)
    got = kernels.sym_kl(p.M, p.mean, Sp, q.M, q.mean, Sq, np.empty(d))
    assert got == pytest.approx(symmetric_kl(p, q), rel=1e-10)
    assert kernels.sym_kl(p.M, p.mean, Sp, p.M, p.mean, Sp, np.empty(d)) == pytest.approx(
        0.0, abs=1e-10
    )


def _bank(specs, ids, alive):
    """Slots from (mean, precision) pairs: M, L, mu arrays as the kernel keeps them."""
    M = np.array([P for _, P in specs], dtype=float)
    mu = np.array([m for m, _ in specs], dtype=float)
    L = np.linalg.cholesky(M)
    S, d = mu.shape
    return (
        M,
        L,
        mu,
        np.array(ids, dtype=np.int64),
        np.array(alive, dtype=np.bool_),
        np.empty((S, d, d)),
        np.empty(S),
    )


def _prune(M, L, mu, ids, alive, mode, work_S, work_tr):
    """prune_one on single-block banks (G = 1); work_tr is filled with each slot's trace."""
    S, d = mu.shape
    ws, wt = np.empty((S, 1, d, d)), np.zeros((S, 1))
    cache = kernels.PruneCache(
        ws,
        wt,
        np.ones((S, 1), dtype=np.bool_),
        np.zeros((S, S, 1)),
        np.zeros((S, S, 1), dtype=np.bool_),
    )
    # a plain tuple, as the kernels pass it (kernels.plain): the signature compiled for them
    out = kernels.prune_one(M[:, None], mu[:, None], ids, alive, mode, kernels.plain(cache))
    work_tr[:] = wt[:, 0]
    return out


def _posterior(mean, P):
    post = GaussianLinearPosterior(len(mean), 1.0, 1.0)
    post.M, post.b = np.array(P, dtype=float), np.array(P, dtype=float) @ mean
    return post


I2 = np.eye(2)
# slot 0: the shadow (a copy of slot 1: must be ignored); slots 1, 2: close means but very
# different precisions (the closest pair by mean distance); slots 3, 4: means 0.3 apart with
# similar precisions (the closest pair by symmetric KL); slot 5: dead, equal to slot 3.
PRUNE_SPECS = [
    ((0.0, 0.0), 100 * I2),
    ((0.0, 0.0), 100 * I2),
    ((0.05, 0.0), 1 * I2),
    ((3.0, 0.0), 5 * I2),
    ((3.3, 0.0), 4 * I2),
    ((3.0, 0.0), 5 * I2),
]
PRUNE_ALIVE = [True, True, True, True, True, False]
PRUNE_IDS = [0, 1, 4, 2, 7, -1]


@pytest.mark.parametrize("mode,drop,twin", [(0, 4, 3), (1, 2, 1)])
def test_prune_one_drops_the_less_certain_of_the_closest_pair(mode, drop, twin):
    """The text: of the closest pair, discard the one with the larger tr(M^-1).
    KL: pair (3, 4), traces 0.4 vs 0.5 -> drop 4. Means: pair (1, 2), traces 0.02 vs 2 -> drop 2."""
    M, L, mu, ids, alive, work_S, work_tr = _bank(PRUNE_SPECS, PRUNE_IDS, PRUNE_ALIVE)
    got_drop, got_twin, dist = _prune(M, L, mu, ids, alive, mode, work_S, work_tr)
    assert (got_drop, got_twin) == (drop, twin)
    assert not alive[drop]
    assert alive.tolist() == [s not in (drop, 5) for s in range(6)]
    p = _posterior(mu[drop], M[drop])
    q = _posterior(mu[twin], M[twin])
    want = symmetric_kl(q, p) if mode == 0 else mean_distance(q, p)
    assert dist == pytest.approx(want, rel=1e-10)
    for s in range(1, 5):  # traces of the live base slots, as computed for the decision
        assert work_tr[s] == pytest.approx(np.trace(np.linalg.inv(M[s])), rel=1e-10)


@pytest.mark.parametrize("mode", [0, 1])
def test_prune_one_order_of_slots_does_not_matter(mode):
    """Same bank, the less certain bandit placed first this time."""
    specs = [PRUNE_SPECS[0], PRUNE_SPECS[4], PRUNE_SPECS[2], PRUNE_SPECS[3], PRUNE_SPECS[1]]
    M, L, mu, ids, alive, work_S, work_tr = _bank(specs, [0, 7, 4, 2, 1], [True] * 5)
    drop, twin, _ = _prune(M, L, mu, ids, alive, mode, work_S, work_tr)
    assert (drop, twin) == ((1, 3) if mode == 0 else (2, 4))


@pytest.mark.parametrize("mode", [0, 1])
def test_prune_one_equal_traces_drop_the_younger(mode):
    """Equal traces: drop the larger id (the younger bandit)."""
    specs = [((0.0, 0.0), I2), ((1.0, 0.0), 2 * I2), ((1.1, 0.0), 2 * I2), ((9.0, 9.0), I2)]
    M, L, mu, ids, alive, work_S, work_tr = _bank(specs, [0, 8, 3, 5], [True] * 4)
    drop, twin, _ = _prune(M, L, mu, ids, alive, mode, work_S, work_tr)
    assert (drop, twin) == (1, 2)


def test_prune_one_tie_between_identical_posteriors_is_broken_by_id():
    """Two base bandits with bitwise-identical M and b (a base bandit that learnt one step,
    and a copy of a shadow that learnt the same step) are an exact tie: drop the younger
    (larger id), as the plain path does. Their L differ by rounding only (one came from a
    rank-one update, the other from a refactor), which must not decide the tie."""
    rng = np.random.default_rng(0)
    d, lam, sigma2 = 1, 1.0, 0.1
    wrong = []
    for _ in range(100):
        x, r = rng.standard_normal(d), rng.standard_normal()
        M = np.tile(lam * np.eye(d), (3, 1, 1))
        L = np.tile(np.sqrt(lam) * np.eye(d), (3, 1, 1))
        b, mu, tmp = np.zeros((3, d)), np.empty((3, d)), np.empty(d)
        kernels.add_obs(M[1], L[1], b[1], x, r, sigma2, tmp)  # a base bandit: rank-one update
        kernels.add_obs(M[2], L[2], b[2], x, r, sigma2, tmp)  # the copied shadow: refactored
        kernels.chol_factor(M[2], L[2])
        assert np.array_equal(M[1], M[2]) and np.array_equal(b[1], b[2])
        for s in range(3):
            kernels.refresh_mean(L[s], b[s], mu[s], tmp)
        ids, alive = np.array([0, 1, 2]), np.ones(3, dtype=np.bool_)
        drop, _, _ = _prune(M, L, mu, ids, alive, 0, np.empty((3, d, d)), np.empty(3))
        if drop != 2:
            wrong.append(float(x[0]))
    assert not wrong, f"{len(wrong)}/100 ties decided by rounding, e.g. x = {wrong[0]!r}"
