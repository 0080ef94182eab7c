"""Outer-product actions (e_k (x) c_t, the paper's real-data setting): the compiled kernels keep
the precision block-diagonal, and that must equal the dense computation decision for decision."""

import numpy as np
import pytest

from allseason.envs.arms import BlockArms, as_blocks
from allseason.policies import Policy, make_policy, role

K_ARMS, P, T = 3, 4, 600


def _problem(seed=0, batch=5):
    rng = np.random.default_rng(seed)
    ctx = rng.standard_normal((T, P))
    ctx /= np.linalg.norm(ctx, axis=1, keepdims=True)
    arms = BlockArms(ctx, K_ARMS)
    thetas = rng.standard_normal((2, K_ARMS * P))
    state = (np.arange(T) // 150) % 2  # seasons A B A B
    dense = np.stack([arms[t] for t in range(T)])
    expected = np.einsum("tkd,td->tk", dense, thetas[state])
    noise = 0.3 * rng.standard_normal(T)
    return arms, dense, expected, noise, np.arange(batch - 1, T, batch)


def test_block_arms_index_like_the_dense_outer_product():
    arms, dense, *_ = _problem()
    assert arms.shape == dense.shape == (T, K_ARMS, K_ARMS * P)
    for t in (0, 17, T - 1):
        np.testing.assert_array_equal(arms[t], np.kron(np.eye(K_ARMS), arms.contexts[t]))
    rows, cols = np.array([3, 9]), np.array([2, 0])
    np.testing.assert_array_equal(arms[rows, cols], dense[rows, cols])
    ctx, block, cidx, G = as_blocks(arms)
    assert G == K_ARMS and ctx.shape == (T, 1, P)
    assert block.tolist() == [0, 1, 2] and cidx.tolist() == [0, 0, 0]


POLICIES = [
    ("lints", {}),
    ("sw-lints", {"tau": 30}),
    ("d-lints", {"gamma": 0.97}),
    ("allseason-sw", {"tau": 20, "n_max": 3, "weighting": "batch"}),
    ("allseason-sw", {"tau": 20, "n_max": 2, "share": 0.05}),
    ("allseason-sw", {"tau": 20, "n_max": 2, "share": 0.05, "spawn": "copy"}),
    ("allseason-disc", {"gamma": 0.9, "n_max": 3, "weighting": "batch"}),
    ("allseason-sw", {"tau": 20, "n_max": 3, "pruning": "mean", "weighting": "batch"}),
]


def _same(a, b):
    np.testing.assert_array_equal(a.arm, b.arm)
    np.testing.assert_array_equal(a.player, b.player)
    np.testing.assert_allclose(a.reward, b.reward)
    assert [(e.step, e.kind, e.bandit, e.other) for e in a.events] == [
        (e.step, e.kind, e.bandit, e.other) for e in b.events
    ]
    np.testing.assert_allclose([e.value for e in a.events], [e.value for e in b.events], rtol=1e-6)


@pytest.mark.parametrize("name, params", POLICIES)
def test_block_kernel_equals_dense_kernel_and_plain_loop(name, params):
    arms, dense, expected, noise, ends = _problem()
    make = lambda: make_policy(name, K_ARMS * P, rng=3, sigma2=0.09, **params)  # noqa: E731
    blocked = make().run_chunk(arms, expected, noise, ends)
    dense_out = make().run_chunk(dense, expected, noise, ends)
    plain = Policy.run_chunk(make(), arms, expected, noise, ends)
    _same(blocked, dense_out)
    _same(blocked, plain)
    if role(name).family == "allseason":
        assert any(e.kind == "prune" for e in blocked.events)
        np.testing.assert_allclose(blocked.weights, dense_out.weights, rtol=1e-7, atol=1e-12)


def test_block_state_stays_block_diagonal_and_positive_definite():
    arms, _, expected, noise, ends = _problem(seed=1)
    pol = make_policy("allseason-sw", K_ARMS * P, rng=0, tau=20, n_max=3)
    pol.run_chunk(arms, expected, noise, ends)
    assert pol.kernel_state.M.shape[1:] == (K_ARMS, P, P)
    assert pol.is_positive_definite()


def test_changing_the_structure_between_chunks_is_an_error():
    arms, dense, expected, noise, _ = _problem()
    pol = make_policy("lints", K_ARMS * P, rng=0)
    pol.run_chunk(dense[:10], expected[:10], noise[:10], np.arange(10))
    with pytest.raises(ValueError, match="arms"):
        pol.run_chunk(
            BlockArms(arms.contexts[10:20], K_ARMS), expected[10:20], noise[10:20], np.arange(10)
        )


# -- the plain-numpy LinUCB family (BoB, DenBand, dLinUCB): block-diagonal ridge models ------


def test_block_ridge_model_equals_the_dense_one():
    from allseason.policies.ridge import BlockRidgeModel, RidgeModel

    arms, dense, *_ = _problem()
    rng = np.random.default_rng(5)
    d = K_ARMS * P
    blocked, full = BlockRidgeModel(d, 0.7, K_ARMS), RidgeModel(d, 0.7)
    ks = rng.integers(0, K_ARMS, T)
    xs, rs = dense[np.arange(T), ks], rng.standard_normal(T)
    for i in range(T):  # > REFRESH updates per block, and a sliding window of 40
        blocked.update(xs[i], rs[i])
        full.update(xs[i], rs[i])
        if i >= 40:
            blocked.downdate(xs[i - 40], rs[i - 40])
            full.downdate(xs[i - 40], rs[i - 40])
    fresh = np.linalg.solve(full.M, full.b)
    np.testing.assert_allclose(blocked.theta, fresh, rtol=1e-9, atol=1e-12)
    for g in range(K_ARMS):
        sl = slice(g * P, (g + 1) * P)
        np.testing.assert_allclose(blocked.M[g], full.M[sl, sl], atol=1e-12)
    v = rng.standard_normal(d)
    np.testing.assert_allclose(blocked.solve(v), np.linalg.solve(full.M, v), rtol=1e-9)
    np.testing.assert_allclose(blocked.gram(v), full.gram(v), rtol=1e-12, atol=1e-12)
    probe = rng.standard_normal((7, d))  # any rows, not only outer products
    np.testing.assert_allclose(blocked.widths(probe), full.widths(probe), rtol=1e-9)
    assert blocked.n_obs == full.n_obs and blocked.is_positive_definite()
    with pytest.raises(ValueError, match="several blocks"):
        blocked.update(np.ones(d), 1.0)


LINUCB_FAMILY = [
    ("bob", {"horizon": T, "S": 1.0, "L": 1.0}),
    ("denband", {"tau": 50, "delta_l": 0.1}),
    ("dlinucb", {"tau": 30}),
]


@pytest.mark.parametrize("name, params", LINUCB_FAMILY)
def test_linucb_family_on_block_arms_decides_as_dense(name, params):
    arms, dense, expected, noise, ends = _problem(seed=2)
    make = lambda: make_policy(name, K_ARMS * P, rng=3, sigma2=0.09, **params)  # noqa: E731
    blocked_policy = make()
    blocked = blocked_policy.run_chunk(arms, expected, noise, ends)
    assert blocked_policy.blocks == K_ARMS
    dense_policy = make()
    dense_out = dense_policy.run_chunk(dense, expected, noise, ends)
    assert dense_policy.blocks == 1
    _same(blocked, dense_out)
    assert blocked_policy.is_positive_definite()


def test_linucb_family_refuses_block_arms_after_dense_ones():
    arms, dense, expected, noise, _ = _problem()
    pol = make_policy("bob", K_ARMS * P, rng=0, horizon=T)
    pol.run_chunk(dense[:10], expected[:10], noise[:10], np.arange(10))
    with pytest.raises(ValueError, match="arms"):
        pol.run_chunk(
            BlockArms(arms.contexts[10:20], K_ARMS), expected[10:20], noise[10:20], np.arange(10)
        )
