"""pi_t(a | x_t): the 1-D Gaussian integral against the two-arm closed form and adaptive
quadrature, Monte Carlo against the exact one, every contestant's pi against the
frequencies of its own draws from a frozen state, and the fast replay's pi against the
step-by-step one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from allseason.logs import offline
from allseason.logs.policy_probs import (
    ProbRecorder,
    gaussian_argmax_probs,
    mc_argmax_probs,
    posterior_state,
    state_probs,
)
from tests.logs.test_replay import log_of

SQRT_2, SQRT_2PI = math.sqrt(2), math.sqrt(2 * math.pi)


def test_two_arms_match_the_closed_form():
    rng = np.random.default_rng(0)
    for _ in range(300):
        m = rng.normal(0, 1, 2)
        v = np.exp(rng.uniform(-10, 2, 2))
        p = gaussian_argmax_probs(m, v)
        exact = stats.norm.cdf((m[0] - m[1]) / np.sqrt(v.sum()))  # P(X1 > X2)
        assert p[0] == pytest.approx(exact, abs=5e-4)
        assert p.sum() == pytest.approx(1.0, abs=1e-12)


def quad_probs(m, v):
    """pi(a) = integral phi_a(s) prod_{k != a} Phi_k(s) ds by scipy's adaptive quadrature, the
    integrand in plain floats (Phi(x) = erfc(-x / sqrt 2) / 2): scipy.stats' calls cost about
    50 times more per point, and quad takes thousands of points when a variance is small."""
    sd = np.sqrt(v)
    mf, sf = [float(x) for x in m], [float(x) for x in sd]
    out = []
    for a in range(len(m)):
        others = [(mf[k], sf[k] * SQRT_2) for k in range(len(m)) if k != a]

        def f(s, a=a, others=others):
            z = (s - mf[a]) / sf[a]
            p = math.exp(-0.5 * z * z) / (sf[a] * SQRT_2PI)
            for mk, sk in others:
                p *= 0.5 * math.erfc((mk - s) / sk)
            return p

        lo, hi = min(m - 12 * sd), max(m + 12 * sd)
        out.append(integrate.quad(f, lo, hi, points=list(m), limit=500, epsabs=1e-12)[0])
    return np.array(out)


def test_many_arms_match_adaptive_quadrature():
    rng = np.random.default_rng(1)
    for _ in range(25):
        K = int(rng.integers(3, 7))
        m, v = rng.normal(0, 1, K), np.exp(rng.uniform(-8, 1, K))
        assert gaussian_argmax_probs(m, v) == pytest.approx(quad_probs(m, v), abs=1e-3)


def test_many_identical_arms_are_merged_without_changing_the_answer():
    rng = np.random.default_rng(2)
    m = np.r_[rng.normal(0, 0.3, 5), np.zeros(30)]  # 30 arms still at the prior
    v = np.r_[np.exp(rng.uniform(-4, 0, 5)), np.ones(30)]
    merged = gaussian_argmax_probs(m, v)  # 35 arms > the merging threshold
    assert merged.sum() == pytest.approx(1.0)
    assert np.ptp(merged[5:]) < 1e-12  # identical arms, identical probabilities
    # against simulation (independent of the merging code)
    sd = np.sqrt(v)
    s = m + sd * np.random.default_rng(3).standard_normal((200_000, 35))
    freq = np.bincount(s.argmax(1), minlength=35) / 200_000
    assert merged == pytest.approx(freq, abs=4e-3)


def test_monte_carlo_matches_the_exact_probabilities():
    rng = np.random.default_rng(4)
    m, v = rng.normal(0, 0.5, 6), np.exp(rng.uniform(-3, 0, 6))
    exact = gaussian_argmax_probs(m, v)
    mc = mc_argmax_probs(m, np.diag(v), np.random.default_rng(5), n_draws=400_000)
    se = np.sqrt(exact * (1 - exact) / 400_000)
    assert np.all(np.abs(mc - exact) <= 4 * se + 1e-6)


def busy_log(n=600, K=4, seed=0):
    rng = np.random.default_rng(seed)
    arms = rng.integers(0, K, n)
    ctx = rng.normal(size=(n, 2))
    rewards = (rng.random(n) < np.array([0.2, 0.5, 0.35, 0.6])[arms]).astype(int)
    return log_of(arms, rewards, context=ctx)


@pytest.mark.parametrize("name", offline.OFFLINE_POLICIES)
def test_pi_is_the_frequency_of_the_policys_own_draws(name):
    """A copy of the policy, mid-replay, plays 20,000 copies of one event as ONE batch (so
    every draw uses the same state): the arms' frequencies must match pi."""
    log = busy_log()
    spec = offline.offline_specs([name])[0]
    policy = offline.build_policy(spec, log, 0, 0)
    offline.replay_fast(policy, log)  # learn on the whole log
    c = log.contexts[7]
    state = posterior_state(policy, log.n_arms, log.contexts.shape[1])
    pi = (
        np.full(log.n_arms, 1 / log.n_arms)
        if state.kind == "uniform"
        else state_probs(state, c[None])[0]
    )
    m = 20_000
    trial = policy.fork()
    ctx = np.tile(c, (m, 1))
    from allseason.envs.arms import BlockArms

    out = trial.run_chunk(
        BlockArms(ctx, log.n_arms), np.zeros((m, log.n_arms)), np.zeros(m), np.array([m - 1])
    )
    freq = np.bincount(out.arm, minlength=log.n_arms) / m
    se = np.sqrt(pi * (1 - pi) / m)
    assert np.all(np.abs(freq - pi) <= 4.5 * se + 1e-4), (freq, pi)


def test_fast_and_step_by_step_replays_record_the_same_pi():
    log = busy_log(n=300)
    for spec in offline.offline_specs():
        recs = []
        for replay in (offline.replay_reference, offline.replay_fast):
            rec = ProbRecorder(log)
            drawn = np.zeros(log.n_events, dtype=np.int64)
            replay(offline.build_policy(spec, log, 0, 1), log, on_state=rec.segment, drawn=drawn)
            recs.append((rec.result(), drawn))
        (pa, da), (pb, db) = recs
        assert np.array_equal(da, db), spec.label
        assert np.allclose(pa, pb, atol=1e-9), spec.label
        assert np.allclose(pa.sum(1), 1.0)


def test_the_compact_recorder_gives_the_estimates_of_the_full_pi():
    """run_one keeps pi_t(a_t) and sum_a pi r^ per event (memory O(n)); the same estimates
    as run_terms on the full (n, K) pi and reward model."""
    from allseason.logs import evaluate

    log = busy_log(n=400)
    for spec in offline.offline_specs(["allseason-sw", "lints", "random"]):
        compact = evaluate.run_one(log, spec, 0, 1)
        rec = ProbRecorder(log)
        drawn = np.zeros(log.n_events, dtype=np.int64)
        policy = offline.build_policy(spec, log, 0, 1)
        keep = offline.replay_fast(policy, log, on_state=rec.segment, drawn=drawn)
        full = offline.run_terms(log, keep, rec.result(), offline.reward_model(log), drawn)
        for key in ("ips", "snips", "dm", "dr", "replay", "ips_n", "ess_draw"):
            assert compact[key] == pytest.approx(full[key], rel=1e-12), (spec.label, key)
