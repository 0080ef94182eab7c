"""D-LinTS's ``covariance`` choice: "precision" samples N(mu, M^-1), "kim-tewari" samples
N(mu, M^-1 Mt M^-1) (Kim & Tewari's D-LinTS; the V^-1 V~ V^-1 of Russac et al.'s D-LinUCB),

    M = lam I + sum gamma^(t-s) x x^T / sigma2,   Mt = lam I + sum gamma^(2(t-s)) x x^T / sigma2.

Checked: plain and compiled paths decide alike, the covariance equals a fresh computation from
the raw history, sampling is a triangular map of z, a seed fixes the trace, and the plain
update factors nothing (O(d^2) per observation)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from conftest import linear_problem

from allseason import api
from allseason.envs.arms import BlockArms
from allseason.errors import SpecError
from allseason.policies import Policy, lints, make_policy, parameters

COVS = ("precision", "kim-tewari")
T, K, D, SIGMA2, LAM = 900, 5, 4, 0.1, 0.7


def _make(cov, seed=3, gamma=0.95, d=D):
    return make_policy("d-lints", d, rng=seed, gamma=gamma, covariance=cov, sigma2=SIGMA2, lam=LAM)


def _direct(xs, gamma, lam=LAM, sigma2=SIGMA2):
    """M and Mt from the raw history, observation s weighted gamma^(t-s), resp. its square."""
    n, d = xs.shape
    w = gamma ** np.arange(n - 1, -1, -1)
    M = lam * np.eye(d) + (xs.T * w) @ xs / sigma2
    Mt = lam * np.eye(d) + (xs.T * w**2) @ xs / sigma2
    return M, Mt


def test_declared_choice_default_and_validation():
    hp = parameters("d-lints")
    assert hp["covariance"].choices == COVS and hp["covariance"].default == "precision"
    with pytest.raises(SpecError, match="covariance"):
        make_policy("d-lints", 3, covariance="wide")


@pytest.mark.parametrize("cov", COVS)
@pytest.mark.parametrize("ends", ["batch1", "mixed"])
def test_compiled_run_chunk_matches_plain_loop(cov, ends):
    arms, expected, noise = linear_problem(T, K, D, SIGMA2, 5, switch_at=[300, 600])
    batch_end = (
        np.arange(T)
        if ends == "batch1"
        else np.unique(np.r_[np.cumsum(np.resize([3, 1, 7, 2, 10], 300)), T] - 1)
    )
    batch_end = batch_end[batch_end < T]
    fast = _make(cov).run_chunk(arms, expected, noise, batch_end)
    slow_pol = _make(cov)
    slow = Policy.run_chunk(slow_pol, arms, expected, noise, batch_end)
    np.testing.assert_array_equal(fast.arm, slow.arm)
    np.testing.assert_array_equal(fast.reward, slow.reward)


def test_compiled_block_arms_match_plain_loop():
    rng = np.random.default_rng(0)
    ctx = rng.standard_normal((400, 3))
    ctx /= np.linalg.norm(ctx, axis=1, keepdims=True)
    arms = BlockArms(ctx, 3)
    dense = np.stack([arms[t] for t in range(400)])
    theta = rng.standard_normal(9)
    expected, noise = dense @ theta, 0.3 * rng.standard_normal(400)
    ends = np.arange(3, 400, 4)
    fast = _make("kim-tewari", d=9).run_chunk(arms, expected, noise, ends)
    slow = Policy.run_chunk(_make("kim-tewari", d=9), arms, expected, noise, ends)
    np.testing.assert_array_equal(fast.arm, slow.arm)


def test_the_two_choices_differ_and_coincide_at_gamma_one():
    arms, expected, noise = linear_problem(T, K, D, SIGMA2, 2, switch_at=[450])
    ends = np.arange(T)
    a = {c: _make(c).run_chunk(arms, expected, noise, ends).arm for c in COVS}
    assert np.mean(a["precision"] != a["kim-tewari"]) > 0.01
    b = {c: _make(c, gamma=1.0).run_chunk(arms, expected, noise, ends).arm for c in COVS}
    np.testing.assert_array_equal(b["precision"], b["kim-tewari"])  # Mt = M when gamma = 1


@pytest.mark.parametrize("cov", COVS)
def test_covariance_equals_a_fresh_computation_from_the_history(cov):
    arms, expected, noise = linear_problem(300, K, D, SIGMA2, 1)
    ends = np.arange(4, 300, 5)
    fast = _make(cov)
    out = fast.run_chunk(arms, expected, noise, ends)
    xs = arms[np.arange(300), out.arm]
    M, Mt = _direct(xs, 0.95)
    S = np.linalg.inv(M)
    want = S if cov == "precision" else S @ Mt @ S
    plain = _make(cov)
    plain.update(xs, out.reward)
    np.testing.assert_allclose(plain.sampling_covariance(), want, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fast.kernel_state.M[0], M, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fast.kernel_state.L[0] @ fast.kernel_state.L[0].T, M, rtol=1e-10)
    if cov == "kim-tewari":
        np.testing.assert_allclose(fast.kernel_state.Mt[0], Mt, rtol=1e-10, atol=1e-12)
        Lt = fast.kernel_state.Lt[0]
        np.testing.assert_allclose(Lt @ Lt.T, Mt, rtol=1e-10)
        assert np.allclose(Lt, np.tril(Lt))
        # the sandwich is narrower than M^-1 (gamma^2 < gamma): S - want is PSD
        assert np.linalg.eigvalsh(S - want).min() > -1e-12


def test_sampling_is_a_triangular_map_of_z_with_the_right_covariance():
    """theta = mu + L^-T L^-1 Lt z: linear in z with A A^T = M^-1 Mt M^-1 exactly, and the
    plain path's draw is that map (no multivariate_normal anywhere)."""
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((60, D))
    pol = _make("kim-tewari")
    pol.update(xs, rng.standard_normal(60))
    M, Mt = _direct(xs, 0.95)
    L, Lt = np.linalg.cholesky(M), np.linalg.cholesky(Mt)
    A = np.linalg.solve(L.T, np.linalg.solve(L, Lt))
    S = np.linalg.inv(M)
    np.testing.assert_allclose(A @ A.T, S @ Mt @ S, rtol=1e-9)
    mu = pol.model.mean
    for k in range(D):  # arms = identity: the chosen arm is argmax of the sample itself
        z = np.zeros(D)
        z[k] = 50.0
        theta = mu + A @ z
        assert pol._select(np.eye(D), 0.0, z) == int(np.argmax(theta))
    assert "multivariate_normal" not in inspect.getsource(lints)


def test_same_seed_same_trace_and_another_seed_differs():
    sc = api.Scenario.from_preset("paper-synthetic", horizon=2000)
    spec = (api.PolicySpec("d-lints", {"gamma": 0.9, "covariance": "kim-tewari"}, "x"),)
    a, b = (api.run_race(api.Race(sc, spec, 2)) for _ in range(2))
    for k in range(2):
        np.testing.assert_array_equal(a.traces["x", k].arm, b.traces["x", k].arm)
        np.testing.assert_array_equal(a.traces["x", k].reward, b.traces["x", k].reward)
    assert np.any(a.traces["x", 0].arm != a.traces["x", 1].arm)


def test_plain_update_factors_nothing(monkeypatch):
    """Learning is O(d^2) per observation: the update only scales and adds rank-one terms
    (no Cholesky, no inverse); the factorisations happen when a sample is drawn (plain) or
    once per batch (compiled: gamma M + (1 - gamma) lam I is a full-rank change, so no
    rank-one update of L exists: O(d^3) per batch, unavoidable)."""
    pol = _make("kim-tewari")
    rng = np.random.default_rng(0)

    def boom(*a, **k):
        raise AssertionError("a factorisation in update")

    for name in ("cholesky", "inv", "solve", "eigh"):
        monkeypatch.setattr(np.linalg, name, boom)
    pol.update(rng.standard_normal((20, D)), rng.standard_normal(20))
    monkeypatch.undo()
    assert pol.is_positive_definite()


def test_the_rule_crosses_the_grid_with_both_covariances():
    """defaults.tune scores each covariance on the paper's grid; the default race runs the
    winner (recomputed in full by tests/sim/test_defaults.py)."""
    from allseason import defaults
    from allseason.paper import tuning

    sc = api.Scenario.from_preset("paper-synthetic", horizon=1500)
    best, scores = tuning.tune("d-lints", sc, 1)
    assert [p["covariance"] for p, _ in scores] == ["precision"] * 4 + ["kim-tewari"] * 4
    assert (
        max(s for _, s in scores)
        == dict((str(sorted(p.items())), s) for p, s in scores)[str(sorted(best.items()))]
    )
    one, only = tuning.tune("d-lints", sc, 1, fixed={"covariance": "precision"})
    assert only == scores[:4] and one["covariance"] == "precision"
    assert api.default_params("d-lints") == defaults.TUNED["d-lints"]
