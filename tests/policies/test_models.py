"""GaussianLinearPosterior, symmetric_kl and mean_distance against direct computations.

Every quantity is recomputed from scratch with numpy/scipy (explicit sums, inverses,
log-determinants, the joint Gaussian of the data) or estimated by Monte Carlo.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import unit_rows
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal, norm

from allseason.models import GaussianLinearPosterior, mean_distance, symmetric_kl


def _data(seed, n, d):
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((n, d))
    rs = xs @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    return xs, rs


def _fitted(seed, n, d, lam=1.0, sigma2=1.0):
    xs, rs = _data(seed, n, d)
    post = GaussianLinearPosterior(d, lam, sigma2)
    post.update(xs, rs)
    return post


def _direct(xs, rs, d, lam, sigma2, w=None):
    """M = lam I + sum_s w_s x_s x_s^T / sigma2, b = sum_s w_s r_s x_s / sigma2."""
    w = np.ones(len(rs)) if w is None else w
    M = lam * np.eye(d)
    b = np.zeros(d)
    for ws, x, r in zip(w, xs, rs):
        M = M + ws * np.outer(x, x) / sigma2
        b = b + ws * r * x / sigma2
    return M, b


# -- the posterior itself ---------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 3, 8])
@pytest.mark.parametrize("lam,sigma2", [(1.0, 1.0), (0.5, 0.1), (2.0, 2.5)])
def test_posterior_matches_direct_computation(d, lam, sigma2):
    xs, rs = _data(d, 40, d)
    post = GaussianLinearPosterior(d, lam, sigma2)
    for chunk in np.array_split(np.arange(40), [1, 7, 20]):  # batches of uneven sizes
        post.update(xs[chunk], rs[chunk])
    M, b = _direct(xs, rs, d, lam, sigma2)
    np.testing.assert_allclose(post.M, M, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(post.b, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(post.mean, np.linalg.solve(M, b), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(post.covariance, np.linalg.inv(M), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(post.chol @ post.chol.T, M, rtol=1e-12, atol=1e-12)
    assert np.allclose(np.triu(post.chol, 1), 0)
    assert post.covariance_trace() == pytest.approx(np.trace(np.linalg.inv(M)), rel=1e-10)
    assert post.n_obs == 40


def test_single_vector_update_and_prior():
    post = GaussianLinearPosterior(3, lam=2.0, sigma2=0.5)
    np.testing.assert_array_equal(post.mean, np.zeros(3))
    np.testing.assert_allclose(post.covariance, np.eye(3) / 2.0)
    x, r = np.array([1.0, -2.0, 0.5]), 0.7
    post.update(x, r)  # a single (d,) row and a scalar reward
    M, b = _direct([x], [r], 3, 2.0, 0.5)
    np.testing.assert_allclose(post.M, M)
    np.testing.assert_allclose(post.b, b)


def test_copy_is_independent():
    post = _fitted(0, 10, 3)
    twin = post.copy()
    post.update(np.ones(3), 1.0)
    post.discount(0.5)
    ref = _fitted(0, 10, 3)
    np.testing.assert_array_equal(twin.M, ref.M)
    np.testing.assert_array_equal(twin.b, ref.b)
    assert twin.n_obs == ref.n_obs


# -- Thompson samples ---------------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 4])
def test_sample_is_mean_plus_inverse_transpose_cholesky(d):
    post = _fitted(1, 15, d, lam=0.7, sigma2=0.2)
    L = np.linalg.cholesky(_direct(*_data(1, 15, d), d, 0.7, 0.2)[0])
    mu = np.linalg.solve(L @ L.T, post.b)
    rng = np.random.default_rng(5)
    for _ in range(20):
        z = rng.standard_normal(d)
        # theta = mu + L^-T z with M = L L^T  (so Cov = L^-T L^-1 = M^-1)
        np.testing.assert_allclose(
            post.sample(z) - mu, np.linalg.solve(L.T, z), rtol=1e-9, atol=1e-12
        )
    np.testing.assert_allclose(post.sample(np.zeros(d)), mu, rtol=1e-10, atol=1e-12)


def test_sample_monte_carlo_mean_and_covariance():
    d, n = 3, 20_000
    post = _fitted(2, 6, d, lam=1.0, sigma2=0.5)
    rng = np.random.default_rng(11)
    draws = np.array([post.sample(z) for z in rng.standard_normal((n, d))])
    mu, S = np.linalg.solve(post.M, post.b), np.linalg.inv(post.M)
    sd = np.sqrt(np.diag(S))
    assert np.all(np.abs(draws.mean(0) - mu) < 5 * sd / np.sqrt(n))
    # standard error of a sample covariance entry: sqrt((S_ii S_jj + S_ij^2) / n)
    se = np.sqrt((np.outer(np.diag(S), np.diag(S)) + S**2) / n)
    assert np.all(np.abs(np.cov(draws.T) - S) < 5 * se)


# -- posterior predictive -------------------------------------------------------------------
@pytest.mark.parametrize("sigma2", [0.1, 1.0, 3.0])
def test_log_predictive_matches_scipy_norm(sigma2):
    d = 4
    post = _fitted(3, 12, d, lam=1.5, sigma2=sigma2)
    M = _direct(*_data(3, 12, d), d, 1.5, sigma2)[0]
    mu, S = np.linalg.solve(M, post.b), np.linalg.inv(M)
    xs, rs = _data(4, 9, d)
    want = norm.logpdf(rs, xs @ mu, np.sqrt(sigma2 + np.einsum("ni,ij,nj->n", xs, S, xs)))
    np.testing.assert_allclose(post.log_predictive(xs, rs), want, rtol=1e-10)
    got_one = post.log_predictive(xs[0], rs[0])  # one (d,) row and a scalar
    assert got_one.shape == (1,)
    assert got_one[0] == pytest.approx(want[0], rel=1e-10)


@pytest.mark.parametrize("lam,sigma2", [(1.0, 1.0), (0.3, 0.2)])
def test_log_predictive_is_ratio_of_marginal_likelihoods(lam, sigma2):
    """p(r | x, D) = p(D, (x, r)) / p(D), each the joint Gaussian of the rewards under the
    prior: y ~ N(0, X X^T / lam + sigma2 I). Independent of M, mu and the Cholesky factor."""
    d, n = 3, 8
    xs, rs = _data(6, n + 1, d)
    post = GaussianLinearPosterior(d, lam, sigma2)
    post.update(xs[:n], rs[:n])

    def log_evidence(X, y):
        return multivariate_normal(
            np.zeros(len(y)), X @ X.T / lam + sigma2 * np.eye(len(y))
        ).logpdf(y)

    want = log_evidence(xs, rs) - log_evidence(xs[:n], rs[:n])
    assert post.log_predictive(xs[n], rs[n])[0] == pytest.approx(want, rel=1e-9)


def test_log_predictive_is_the_posterior_average_of_the_likelihood():
    """Monte Carlo: E_{theta ~ posterior} N(r; <theta, x>, sigma2), theta drawn by numpy's own
    multivariate normal from (solve(M, b), inv(M))."""
    d, sigma2 = 3, 0.4
    post = _fitted(7, 5, d, lam=1.0, sigma2=sigma2)
    rng = np.random.default_rng(8)
    thetas = rng.multivariate_normal(
        np.linalg.solve(post.M, post.b), np.linalg.inv(post.M), size=200_000
    )
    x = unit_rows(rng, (d,))
    for r in (-0.5, 0.2, 1.3):
        dens = norm.pdf(r, thetas @ x, np.sqrt(sigma2))
        se = dens.std() / np.sqrt(len(dens))
        assert abs(np.exp(post.log_predictive(x, r)[0]) - dens.mean()) < 5 * se


# -- forgetting: downdate, discount -------------------------------------------------------
def test_downdate_exactly_undoes_update():
    d = 4
    xa, ra = _data(9, 30, d)
    xb, rb = _data(10, 12, d)
    post = GaussianLinearPosterior(d, 0.8, 0.3)
    post.update(xa, ra)
    post.update(xb, rb)
    post.downdate(xa, ra)
    ref = GaussianLinearPosterior(d, 0.8, 0.3)
    ref.update(xb, rb)
    np.testing.assert_allclose(post.M, ref.M, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(post.b, ref.b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(post.mean, ref.mean, rtol=1e-10, atol=1e-12)
    assert post.n_obs == ref.n_obs == 12
    # one at a time, in any order, back to the prior
    for x, r in zip(xb[::-1], rb[::-1]):
        post.downdate(x, r)
    np.testing.assert_allclose(post.M, 0.8 * np.eye(d), atol=1e-12)
    np.testing.assert_allclose(post.b, 0, atol=1e-12)


@pytest.mark.parametrize("gamma", [0.5, 0.9, 0.99])
def test_discount_then_update_is_the_geometrically_weighted_sum(gamma):
    d, n, lam, sigma2 = 3, 60, 1.3, 0.25
    xs, rs = _data(12, n, d)
    post = GaussianLinearPosterior(d, lam, sigma2)
    for t in range(n):
        post.discount(gamma)
        post.update(xs[t], rs[t])
        w = gamma ** (t - np.arange(t + 1))  # gamma^(t - s), s = 0..t; the prior is not discounted
        M, b = _direct(xs[: t + 1], rs[: t + 1], d, lam, sigma2, w)
        np.testing.assert_allclose(post.M, M, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(post.b, b, rtol=1e-11, atol=1e-12)
        assert post.n_obs == pytest.approx(w.sum(), rel=1e-12)
    np.testing.assert_allclose(post.mean, np.linalg.solve(M, b), rtol=1e-9, atol=1e-12)


def test_discount_one_is_identity():
    post = _fitted(13, 10, 3, lam=2.0)
    M, b = post.M.copy(), post.b.copy()
    post.discount(1.0)
    np.testing.assert_allclose(post.M, M, rtol=1e-15)
    np.testing.assert_array_equal(post.b, b)


# -- symmetric KL and mean distance -------------------------------------------------------
def _kl_slow(mp, Sp, mq, Sq):
    """KL(N(mp, Sp) || N(mq, Sq)) with explicit inverses and log-determinants."""
    d = len(mp)
    Sq_inv = np.linalg.inv(Sq)
    dm = mq - mp
    return 0.5 * (
        np.trace(Sq_inv @ Sp)
        + dm @ Sq_inv @ dm
        - d
        + np.linalg.slogdet(Sq)[1]
        - np.linalg.slogdet(Sp)[1]
    )


def _moments(post):
    return np.linalg.solve(post.M, post.b), np.linalg.inv(post.M)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_symmetric_kl_matches_slow_closed_form(d):
    p = _fitted(20 + d, 10, d, lam=1.0, sigma2=0.5)
    q = _fitted(40 + d, 25, d, lam=2.0, sigma2=1.0)
    (mp, Sp), (mq, Sq) = _moments(p), _moments(q)
    want = _kl_slow(mp, Sp, mq, Sq) + _kl_slow(mq, Sq, mp, Sp)
    assert symmetric_kl(p, q) == pytest.approx(want, rel=1e-9)
    assert symmetric_kl(q, p) == pytest.approx(want, rel=1e-9)


def test_symmetric_kl_monte_carlo():
    """KL(p||q) = E_p[log p - log q], estimated with 200,000 draws from each side."""
    d, n = 2, 200_000
    p = _fitted(50, 4, d, lam=1.0, sigma2=0.5)
    q = _fitted(51, 9, d, lam=1.0, sigma2=0.5)
    (mp, Sp), (mq, Sq) = _moments(p), _moments(q)
    P, Q = multivariate_normal(mp, Sp), multivariate_normal(mq, Sq)
    rng = np.random.default_rng(52)
    tp = rng.multivariate_normal(mp, Sp, size=n)
    tq = rng.multivariate_normal(mq, Sq, size=n)
    lp = P.logpdf(tp) - Q.logpdf(tp)
    lq = Q.logpdf(tq) - P.logpdf(tq)
    est = lp.mean() + lq.mean()
    se = np.sqrt(lp.var() / n + lq.var() / n)
    assert abs(symmetric_kl(p, q) - est) < 5 * se


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31), d=st.integers(1, 6), n1=st.integers(0, 12), n2=st.integers(0, 12)
)
def test_symmetric_kl_properties(seed, d, n1, n2):
    p = _fitted(seed, n1, d, lam=1.0, sigma2=0.7)
    q = _fitted(seed + 1, n2, d, lam=1.0, sigma2=0.7)
    assert symmetric_kl(p, p) == pytest.approx(0.0, abs=1e-9)
    assert symmetric_kl(p, p.copy()) == pytest.approx(0.0, abs=1e-9)
    kl = symmetric_kl(p, q)
    assert kl >= -1e-9
    assert kl == pytest.approx(symmetric_kl(q, p), rel=1e-9, abs=1e-12)


def test_mean_distance():
    p, q = _fitted(60, 10, 4), _fitted(61, 3, 4)
    want = np.linalg.norm(np.linalg.solve(p.M, p.b) - np.linalg.solve(q.M, q.b))
    assert mean_distance(p, q) == pytest.approx(want, rel=1e-10)
    assert mean_distance(q, p) == pytest.approx(want, rel=1e-10)
    assert mean_distance(p, p) == 0.0


# -- the plain path's direct LAPACK calls and written-out logsumexp (issue 34): scipy's own
# numbers, bit for bit (the compiled kernels are checked against this plain path)
@pytest.mark.parametrize("seed", range(4))
def test_direct_lapack_calls_are_scipys_numbers_bit_for_bit(seed):
    from scipy.linalg import cho_solve, solve_triangular

    from allseason.models import _cho_solve, _solve_lower

    rng = np.random.default_rng(seed)
    for d in range(1, 9):
        A = rng.standard_normal((d, d))
        L = np.linalg.cholesky(A @ A.T + rng.choice([1e-3, 1.0, 10.0]) * np.eye(d))
        b, xs = rng.standard_normal(d), rng.standard_normal((rng.integers(1, 12), d))
        assert np.array_equal(_cho_solve(L, b), cho_solve((L, True), b))
        assert np.array_equal(_cho_solve(L, np.eye(d)), cho_solve((L, True), np.eye(d)))
        assert np.array_equal(_solve_lower(L, b, transposed=True), solve_triangular(L.T, b))
        assert np.array_equal(_solve_lower(L, xs.T), solve_triangular(L, xs.T, lower=True))


@pytest.mark.parametrize("seed", range(4))
def test_logsumexp_is_scipys_bit_for_bit(seed):
    from scipy.special import logsumexp as scipy_logsumexp

    from allseason.models import logsumexp

    rng = np.random.default_rng(seed)
    for _ in range(500):
        n = int(rng.integers(1, 8))
        a = rng.standard_normal(n) * rng.choice([1e-3, 1.0, 30.0, 800.0])
        if rng.random() < 0.3:  # a dead slot
            a[rng.integers(n)] = -np.inf
        if rng.random() < 0.2:  # ties at the maximum
            a[:] = a[0]
        if rng.random() < 0.05:  # nothing alive: scipy's own answer
            a[:] = -np.inf
        got, want = logsumexp(a), scipy_logsumexp(a)
        assert type(got) is type(want)
        assert got == want or (np.isnan(got) and np.isnan(want)), a


@pytest.mark.parametrize("where", ["row", "reward"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_observation_is_refused_before_it_enters_the_posterior(where, bad):
    """The plain path's solves call LAPACK without scipy's finite checks, so the model's
    update is where a NaN or an infinity fed by hand is refused (and M, b stay as they were);
    a policy's plain ``update`` reaches it."""
    from allseason.models import GaussianLinearPosterior
    from allseason.policies import make_policy

    post = GaussianLinearPosterior(3, lam=1.0, sigma2=0.5)
    post.update(np.ones((2, 3)), np.array([1.0, 0.0]))
    M, b = post.M.copy(), post.b.copy()
    xs, rs = np.ones((1, 3)), np.array([0.5])
    (xs[0] if where == "row" else rs)[0] = bad
    with pytest.raises(ValueError, match="finite"):
        post.update(xs, rs)
    assert np.array_equal(post.M, M) and np.array_equal(post.b, b)
    policy = make_policy("lints", 3, rng=0)
    with pytest.raises(ValueError, match="finite"):
        policy.update(xs, rs)
