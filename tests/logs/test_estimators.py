"""The off-policy estimators with pi against a direct computation, the cross-fitted reward
model, Wilson and the block bootstrap against their formulas, the events that would decide,
and a small version of benchmarks/ope_coverage.py (coverage on sparse logs with a known
true value)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from allseason.logs import intervals
from allseason.logs.estimators import reward_model, run_terms
from allseason.logs.offline import Log

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import ope_coverage


def small_log(n=400, K=3, seed=0, uniform=False):
    rng = np.random.default_rng(seed)
    q = np.full(K, 1 / K) if uniform else np.array([0.6, 0.3, 0.1])
    arm = rng.choice(K, size=n, p=q)
    ctx = np.column_stack([rng.normal(size=n), np.ones(n)])
    r = (rng.random(n) < 0.2 + 0.2 * arm / K).astype(float)
    return Log(np.arange(n, dtype=float), arm, r, ctx, q[arm], np.arange(n) + 2, ("a", "b", "c"))


def test_estimators_match_a_direct_computation():
    log = small_log()
    n, K = log.n_events, log.n_arms
    rng = np.random.default_rng(1)
    pi = rng.dirichlet(np.ones(K), size=n)
    drawn = np.array([rng.choice(K, p=p) for p in pi])
    keep = drawn == log.arm
    rhat = rng.uniform(0, 1, (n, K))
    out = run_terms(log, keep, pi, rhat, drawn)
    t = np.arange(n)
    w = pi[t, log.arm] / log.propensity
    r = log.reward
    assert out["ips"] == pytest.approx(np.mean(w * r))
    assert out["snips"] == pytest.approx(np.sum(w * r) / np.sum(w))
    dm = np.mean([sum(pi[i, a] * rhat[i, a] for a in range(K)) for i in range(n)])
    assert out["dm"] == pytest.approx(dm)
    assert out["dr"] == pytest.approx(dm + np.mean(w * (r - rhat[t, log.arm])))
    assert out["ips_n"] == pytest.approx(w.sum() ** 2 / (w**2).sum())
    wd = keep / log.propensity
    assert out["ess_draw"] == pytest.approx(wd.sum() ** 2 / (wd**2).sum())
    assert out["replay"] == pytest.approx(r[keep].mean()) and out["kept"] == keep.sum()
    # the block sums add up to the totals the estimates are made of
    assert out["sums"]["wr"].sum() == pytest.approx(np.sum(w * r))
    assert out["sums"]["one"].sum() == n


def test_the_reward_model_is_cross_fitted():
    log = small_log(n=600)
    rhat = reward_model(log)
    flipped = Log(
        log.timestamp,
        log.arm,
        np.where(np.arange(600) < 300, 1 - log.reward, log.reward),  # change the FIRST half
        log.contexts,
        log.propensity,
        log.row,
        log.arm_names,
    )
    other = reward_model(flipped)
    assert np.array_equal(rhat[:300], other[:300])  # first half predicted from the second
    assert not np.array_equal(rhat[300:], other[300:])
    assert np.all((rhat >= 0) & (rhat <= 1))


def test_an_infinite_weight_is_an_error_naming_its_cause():
    """The reader refuses such a propensity (tests/test_reader.py's hostile files); a log built
    by hand around the reader is trusted, and its overflowing estimate is still an error."""
    log = small_log()
    bad = Log(
        log.timestamp,
        log.arm,
        log.reward,
        log.contexts,
        np.r_[5e-324, log.propensity[1:]],
        log.row,
        log.arm_names,
    )
    keep = np.zeros(log.n_events, bool)
    with pytest.raises(Exception, match="not a finite number .*check the propensities"):
        run_terms(bad, keep, None, reward_model(log), np.zeros(log.n_events, int))


def wilson_direct(k, n):
    z = norm.ppf(0.975)
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return c - h, c + h


@pytest.mark.parametrize("k, n", [(0, 134), (1, 134), (38, 10_000), (50, 50), (7, 20)])
def test_wilson_matches_its_formula_and_never_collapses(k, n):
    lo, hi = intervals.wilson(k / n, n)
    assert (lo, hi) == pytest.approx(wilson_direct(k, n), abs=1e-12)
    assert 0 <= lo < hi <= 1


def test_zero_clicks_get_a_wide_enough_interval_not_zero():
    lo, hi = intervals.wilson(0.0, 134)
    assert lo == 0 and hi > 0.02  # 0 clicks in 134 events: up to ~2.8% is plausible
    # and a weighted estimate with no rewarded block: the bootstrap alone would give [0, 0]
    num, den = np.zeros((1, 50)), np.ones((1, 50)) * 20
    boot = intervals.block_bootstrap(num, den, np.random.default_rng(0))
    assert boot == (0.0, 0.0)
    lo, hi = intervals.reported_interval(0.0, boot, 134)
    assert lo == 0 and hi == pytest.approx(intervals.wilson(0, 134)[1])


def test_block_bootstrap_against_a_direct_resampling():
    rng = np.random.default_rng(3)
    num, den = rng.poisson(1, (2, 30)).astype(float), rng.integers(5, 9, (2, 30)).astype(float)
    lo, hi = intervals.block_bootstrap(num, den, np.random.default_rng(7), n_boot=500)
    idx = np.random.default_rng(7).integers(0, 30, size=(500, 30))  # the same draws
    stats = [np.mean([num[s, i].sum() / den[s, i].sum() for s in range(2)]) for i in idx]
    assert (lo, hi) == pytest.approx(tuple(np.quantile(stats, [0.025, 0.975])))


def test_events_needed_matches_the_formula():
    p0, f = 0.0038, 0.034
    p1 = 1.2 * p0
    z = norm.ppf(0.975) + norm.ppf(0.8)
    direct = z**2 * (p0 * (1 - p0) + p1 * (1 - p1) / f) / (p1 - p0) ** 2
    assert intervals.events_needed(p0, f) == pytest.approx(direct)
    assert intervals.events_needed(0.0, f) == math.inf


def test_intervals_cover_the_truth_on_sparse_logs():
    """benchmarks/ope_coverage.py, small: 40 logs of 10,000 events, click rates 0.3-0.7%,
    uniform and Thompson-like logging, a fixed target policy with a known value."""
    table = ope_coverage.coverage(n_logs=40, n=10_000, seed=1)
    for (logging, method), r in table.items():
        if method == "replay" and logging != "uniform":
            continue  # biased there, and labelled so
        assert r["covered"] >= 0.85, (logging, method, r)  # 40 logs: 0.9 +- 0.05
        assert abs(r["bias"]) <= 3.5 * r["mc_se"], (logging, method, r)


def test_a_policy_with_no_reward_no_longer_hides_an_overlap():
    """0 rewards in a policy's kept events used to give [0, 0], which stopped the "every
    interval overlaps" rule; Wilson's [0, ~0.03] overlaps the others, and the rule fires."""
    from allseason.logs.evaluate import OfflineResult, offline_specs

    n = 600
    arm = np.arange(n) % 2
    r = ((np.arange(n) % 200) == 1).astype(float)  # rewards only on arm 1, 3 of them
    log = Log(
        np.arange(n, dtype=float), arm, r, np.ones((n, 1)), None, np.arange(n) + 2, ("a", "b")
    )
    specs = offline_specs(["lints", "random"])
    rhat = reward_model(log)
    runs = {}
    for spec, arm_drawn in zip(specs, (0, 1)):  # one always draws arm a, one arm b
        drawn = np.full(n, arm_drawn)
        pi = np.zeros((n, 2))
        pi[:, arm_drawn] = 1
        runs[spec.label, 0] = run_terms(log, drawn == log.arm, pi, rhat, drawn)
    result = OfflineResult(log, specs, 1, 0, runs)
    rows = {r["policy"]: r for r in result.summary() if r["method"] == "replay"}
    assert rows["lints"]["estimate"] == 0 and rows["lints"]["high"] > 0.01
    assert rows["random"]["low"] < rows["lints"]["high"]
    assert any("replay: every policy's 95% interval overlaps" in s for s in result.sparsity())
