"""Numerical extremes: tiny and huge noise and prior precision, large d, very long stationary
periods (precision growing large), batches of 1 to 1,000. No NaN or infinity anywhere, the
weights of every batch sum to 1, every posterior precision stays positive definite."""

import itertools

import numpy as np
import pytest

from allseason.envs import LinearGaussianEnv, Pattern
from allseason.policies import REGISTRY, Policy, make_policy

COMPILED = [n for n in REGISTRY if REGISTRY[n].run_chunk is not Policy.run_chunk and n != "random"]
PARAMS = {
    "allseason-sw": dict(tau=10, n_max=3),
    "allseason-disc": dict(gamma=0.9, n_max=3),
    "sw-lints": dict(tau=10),
    "d-lints": dict(gamma=0.9),
}


def _float_arrays(state):
    """Every float array of a kernel state (nested named tuples included)."""
    for v in state:
        if isinstance(v, tuple):
            yield from _float_arrays(v)
        elif isinstance(v, np.ndarray) and v.dtype.kind == "f":
            yield v


def _check(name, T, d, batch, sigma2, lam, segments=None):
    pattern = Pattern(segments or ((0, T // 2), (1, T - T // 2)))
    env = LinearGaussianEnv(pattern, d, 5, sigma2, rng=1)
    rnd = env.next_round(T)
    ends = np.arange(batch - 1, T, batch)
    ends = np.append(ends[ends < T - 1], T - 1)
    policy = make_policy(name, d, rng=0, lam=lam, sigma2=sigma2, **PARAMS.get(name, {}))
    if policy.oracle:  # an oracle is told the true states, as the runner does
        policy.observe_states(rnd.state)
    out = policy.run_chunk(rnd.arms, rnd.expected, rnd.noise, ends)
    assert np.isfinite(out.reward).all()
    if policy.oracle:  # the oracles' inner LinTS models
        assert all(
            np.isfinite(m.kernel_state.mu).all() and np.isfinite(m.kernel_state.M).all()
            for m in policy.models.values()
        )
    elif policy.posterior_blocks() is not None:  # the LinTS family, All-Season
        f = policy.kernel_state
        assert np.isfinite(f.mu).all() and np.isfinite(f.M).all()
    else:  # DenBand, BoB: the compiled LinUCB-family state, every float array
        assert all(np.isfinite(v).all() for v in _float_arrays(policy.kernel_state))
    assert policy.is_positive_definite()
    if out.weights is not None:
        assert np.isfinite(out.weights).all() and (out.weights >= 0).all()
        np.testing.assert_allclose(out.weights.sum(axis=1), 1.0, atol=1e-9)
    return out


@pytest.mark.parametrize("name", COMPILED)
@pytest.mark.parametrize("sigma2, lam", list(itertools.product([1e-6, 1.0, 1e3], [1e-6, 1e3])))
def test_noise_and_prior_extremes(name, sigma2, lam):
    for batch in (1, 37):
        _check(name, 1_500, 5, batch, sigma2, lam)


@pytest.mark.parametrize("name", COMPILED)
def test_large_dimension_and_huge_batches(name):
    _check(name, 1_200, 120, 1000, 1e-6, 1.0)
    _check(name, 300, 120, 1, 0.1, 1e-6)


@pytest.mark.parametrize("name", COMPILED)
def test_hundred_thousand_stationary_steps(name):
    """One long stationary period: the precision grows to ~1e5 / sigma2."""
    _check(name, 100_000, 5, 1, 1e-3, 1e-6, segments=((0, 100_000),))


def test_d_500_runs_clean():
    _check("lints", 400, 500, 1, 0.1, 1e-6)
    _check("allseason-sw", 60, 500, 20, 0.1, 1.0)


@pytest.mark.parametrize("sigma2", [1e-6, 1e3])
@pytest.mark.parametrize("batch_size", [1, 1000])
def test_every_trace_column_stays_finite_through_the_runner(sigma2, batch_size):
    """The runner's tables (steps, weights, events, summary) of the default race at extreme
    noise: every number finite, the weights of every batch sum to 1."""
    from allseason import api

    sc = api.Scenario(
        segments=((0, 1500), (1, 1000), (0, 1500)),
        d=5,
        n_arms=5,
        sigma2=sigma2,
        batch_size=batch_size,
        seed=3,
    )
    result = api.run_race(api.Race(sc, api.default_specs(), 1))
    frames = result.to_frames()
    for name, df in frames.items():
        numeric = df.select_dtypes("number")
        if name == "events":  # value is NaN by definition where an event has none
            numeric = numeric.drop(columns=["value"], errors="ignore")
        if name == "summary":  # NaN by definition for the oracles, and when there is no gap
            assert df.set_index("policy")["gap_closed"][list(api.REFERENCES)].isna().all()
            numeric = numeric.drop(columns=["gap_closed"])
        assert np.isfinite(numeric.to_numpy(dtype=float)).all(), name
    w = frames["weights"]
    sums = w.groupby(["policy", "seed", "step"])["weight"].sum()
    np.testing.assert_allclose(sums.to_numpy(), 1.0, atol=1e-9)
