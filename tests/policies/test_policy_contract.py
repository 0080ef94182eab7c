"""One contract for every registered policy (baselines added later are covered automatically).

Policies are built with ``make_policy(name, d, rng=seed)``, plus ``sigma2=0.1`` for those
whose hyperparameters include it. What a policy declares (``deterministic``, ``params``) is
checked against what it does: bad values are made from each declared constraint.
An oracle (``oracle``) is told the true segment of every step (:func:`tell`), as the
runner tells it; every other policy is never told anything.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from conftest import linear_problem

from allseason.errors import SpecError
from allseason.policies import REGISTRY, describe, hyperparameters, make_policy
from allseason.policies.base import ChunkOutcome, Policy
from allseason.policies.params import Integral, Interval, Options

NAMES = sorted(REGISTRY)
LEARNERS = [n for n in NAMES if n != "random"]
SIGMA2 = 0.1
D, N_ARMS = 5, 5


def build(name, seed, d=D, **params):
    if "sigma2" in hyperparameters(name):
        params.setdefault("sigma2", SIGMA2)
    return make_policy(name, d, rng=seed, **params)


def tell(policy, T, switch_at=None):
    """Tell an oracle the true states of the next T steps: the segment of each step, as in
    ``linear_problem`` (one theta per segment); no-op for every other policy."""
    if policy.oracle:
        switches = [] if switch_at is None else sorted(np.atleast_1d(switch_at).astype(int))
        policy.observe_states(
            np.searchsorted(np.asarray(switches, dtype=int), np.arange(T), side="right")
        )
    return policy


def batches(n, size=7):
    ends = np.arange(size - 1, n, size, dtype=np.int64)
    return ends if len(ends) and ends[-1] == n - 1 else np.append(ends, n - 1)


def _run(name, seed, problem_seed=0, T=600, switch_at=300, plain=False):
    arms, expected, noise = linear_problem(T, N_ARMS, D, SIGMA2, problem_seed, switch_at=switch_at)
    policy = tell(build(name, seed), T, switch_at)
    runner = Policy.run_chunk if plain else type(policy).run_chunk
    return policy, runner(policy, arms, expected, noise, batches(T)), (arms, expected, noise)


PATHS = [pytest.param(False, id="run_chunk"), pytest.param(True, id="plain")]


@functools.cache
def _run_to_read(name, seed, plain):
    """:func:`_run` once per module, for the tests that only read its policy and outcome."""
    return _run(name, seed, plain=plain)


@pytest.mark.parametrize("plain", PATHS)
@pytest.mark.parametrize("name", NAMES)
def test_outcome_is_well_formed(name, plain):
    policy, out, (arms, expected, noise) = _run(name, 1, plain=plain)
    T = len(noise)
    assert isinstance(out, ChunkOutcome)
    assert out.arm.shape == out.reward.shape == out.player.shape == (T,)
    assert np.issubdtype(out.arm.dtype, np.integer)
    assert out.arm.min() >= 0 and out.arm.max() < N_ARMS
    np.testing.assert_array_equal(out.reward, expected[np.arange(T), out.arm] + noise)
    np.testing.assert_array_equal(out.batch_end, batches(T))
    assert policy.t == T
    for e in out.events:
        assert 0 <= e.step < T
        assert isinstance(e.kind, str) and e.kind


@pytest.mark.parametrize("name", NAMES)
def test_select_returns_a_valid_index(name):
    arms, expected, noise = linear_problem(60, N_ARMS, D, SIGMA2, 2)
    policy = tell(build(name, 2), 60)
    for t in range(60):
        a = policy.select(arms[t])
        assert isinstance(a, int) and 0 <= a < N_ARMS
        policy.update(arms[t, a][None], np.array([expected[t, a] + noise[t]]))
    assert policy.t == 60


def _same(a: ChunkOutcome, b: ChunkOutcome) -> bool:
    same = (
        np.array_equal(a.arm, b.arm)
        and np.array_equal(a.reward, b.reward)
        and np.array_equal(a.player, b.player)
        and len(a.events) == len(b.events)
    )
    if a.weights is not None:
        same = (
            same
            and np.array_equal(a.weight_ids, b.weight_ids)
            and np.array_equal(a.weights, b.weights)
        )
    for x, y in zip(a.events, b.events):
        same = (
            same
            and x[:4] == y[:4]
            and (x.value == y.value or (math.isnan(x.value) and math.isnan(y.value)))
        )
    return same


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_outcome(name):
    assert _same(_run(name, 3)[1], _run(name, 3)[1])
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)  # a Generator as rng
    arms, expected, noise = linear_problem(200, N_ARMS, D, SIGMA2, 0)
    out_a = tell(build(name, rng_a), 200).run_chunk(arms, expected, noise, batches(200))
    out_b = tell(build(name, rng_b), 200).run_chunk(arms, expected, noise, batches(200))
    assert _same(out_a, out_b)


@pytest.mark.parametrize("name", NAMES)
def test_different_seed_different_outcome(name):
    """The declared flag is true to the policy: the paper reproduction runs a deterministic
    policy once."""
    differs = not _same(_run(name, 3)[1], _run(name, 4)[1])
    assert differs != REGISTRY[name].deterministic


@pytest.mark.parametrize("plain", PATHS)
@pytest.mark.parametrize("name", NAMES)
def test_posteriors_stay_positive_definite(name, plain):
    policy, _, _ = _run(name, 5, T=800, switch_at=[200, 400, 600], plain=plain)
    assert policy.is_positive_definite()


@pytest.mark.parametrize("plain", PATHS)
@pytest.mark.parametrize("name", NAMES)
def test_weights_are_a_distribution_per_batch(name, plain):
    policy, out, _ = _run_to_read(name, 6, plain)  # the same run: computed once
    if out.weights is None:
        assert out.weight_ids is None
        assert policy.weights() is None
        return
    assert out.weights.shape[0] == out.weight_ids.shape[0] == len(out.batch_end)
    live = out.weight_ids != -1
    assert np.all(np.isfinite(out.weights))
    assert np.all(out.weights[live] >= 0)
    assert np.all(out.weights[~live] == 0)
    np.testing.assert_allclose(np.where(live, out.weights, 0).sum(axis=1), 1.0, rtol=1e-9)
    for ids in out.weight_ids:  # ids are unique within a batch
        assert len(set(ids[ids != -1])) == int((ids != -1).sum())


@pytest.mark.parametrize("plain", PATHS)
@pytest.mark.parametrize("name", NAMES)
def test_weights_method_reports_the_last_batch(name, plain):
    """``weights()`` is the current (ids, weights): after a run, the last batch's row."""
    policy, out, _ = _run_to_read(name, 6, plain)  # the same run: computed once
    current = policy.weights()
    if out.weights is None:
        assert current is None
        return
    live = out.weight_ids[-1] != -1
    want = dict(zip(out.weight_ids[-1][live].tolist(), out.weights[-1][live].tolist()))
    ids, w = current
    got = dict(zip(np.asarray(ids).tolist(), np.asarray(w).tolist()))
    assert got.keys() == want.keys()
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("name", LEARNERS)
def test_beats_random_on_a_stationary_problem(name):
    """K=5, d=5, sigma2=0.1, 2,000 steps: mean reward at least 0.2 above the random policy."""
    T, margins = 2_000, []
    for seed in (0, 1):
        arms, expected, noise = linear_problem(T, N_ARMS, D, SIGMA2, 100 + seed)
        ends = np.arange(T, dtype=np.int64)
        mine = tell(build(name, seed), T).run_chunk(arms, expected, noise, ends).reward.mean()
        rand = build("random", seed).run_chunk(arms, expected, noise, ends).reward.mean()
        margins.append(mine - rand)
    assert min(margins) >= 0.2, margins


def bad_values(param) -> list:
    """Values the declaration refuses: past each bound, a fraction for an integer, text."""
    c = param.constraint
    if isinstance(c, Options):
        return ["no-such-choice", 1]
    lo, hi = c.low, c.high  # a bound naming another hyperparameter is left out
    out = ["x"]
    if isinstance(lo, (int, float)):
        out += [lo - 1, lo] if c.closed in ("right", "neither") else [lo - 1]
    if isinstance(hi, (int, float)):
        out += [hi + 1, hi] if c.closed in ("left", "neither") else [hi + 1]
    if c.type is Integral:
        out.append(2.5)
    return out


BAD_CASES = [
    pytest.param(name, param, value, id=f"{name}-{param}={value}")
    for name in NAMES
    for param, decl in describe(name).params.items()
    if isinstance(decl.constraint, (Interval, Options))
    for value in bad_values(decl)
]


@pytest.mark.parametrize("name,param,value", BAD_CASES)
def test_invalid_hyperparameter_raises_naming_it(name, param, value):
    with pytest.raises(SpecError) as err:
        make_policy(name, D, rng=0, **{param: value})
    assert err.value.field == param and str(err.value).startswith(f"{param}: ")
    assert err.value.got == value
    with pytest.raises(SpecError) as built:  # the class itself checks the same declaration
        REGISTRY[name](D, rng=0, **{param: value})
    assert str(built.value) == str(err.value)


@pytest.mark.parametrize("name", NAMES)
def test_the_declaration_is_complete(name):
    info = describe(name)
    assert info.title and info.help, "a title and a one-line help"
    assert list(info.params) == list(hyperparameters(name))
    for param, decl in info.params.items():
        assert decl.help, f"{name}.{param}: no help"
        if decl.default is not None:  # the defaults pass their own declaration
            make_policy(name, D, rng=0, **{param: decl.default})


@pytest.mark.parametrize("name", NAMES)
def test_unknown_hyperparameter_and_bad_dimension_raise(name):
    with pytest.raises(ValueError, match="unknown hyperparameter"):
        make_policy(name, D, rng=0, no_such_parameter=1)
    with pytest.raises(ValueError) as err:
        make_policy(name, 0, rng=0)
    assert str(err.value).startswith("d")


@pytest.mark.parametrize("name", NAMES)
def test_hyperparameters_are_stored_unchanged(name):
    policy = build(name, 0)
    for key, default in hyperparameters(name).items():
        if hasattr(policy, key) and default is not None:
            assert getattr(policy, key) == default or key == "sigma2"
    assert policy.rng == 0
