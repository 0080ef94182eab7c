"""Outer-product actions (e_k (x) c_t, the paper's real-data setting): the compiled kernels keep
the precision block-diagonal, and that must equal the dense computation decision for decision."""

import numpy as np
import pytest

from allseason.policies import Policy, make_policy
from allseason.policies.base import BlockArms, as_blocks

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


POLICIES = [("lints", {}), ("sw-lints", {"tau": 30}), ("d-lints", {"gamma": 0.97}),
            ("allseason-sw", {"tau": 20, "n_max": 3}),
            ("allseason-sw", {"tau": 20, "n_max": 3, "weighting": "fixed-share"}),
            ("allseason-disc", {"gamma": 0.9, "n_max": 3}),
            ("allseason-sw", {"tau": 20, "n_max": 3, "pruning": "mean"})]


def _same(a, b):
    np.testing.assert_array_equal(a.arm, b.arm)
    np.testing.assert_array_equal(a.player, b.player)
    np.testing.assert_allclose(a.reward, b.reward)
    assert [(e.step, e.kind, e.bandit, e.other) for e in a.events] == \
        [(e.step, e.kind, e.bandit, e.other) for e in b.events]
    np.testing.assert_allclose([e.value for e in a.events], [e.value for e in b.events],
                               rtol=1e-6)


@pytest.mark.parametrize("name, params", POLICIES)
def test_block_kernel_equals_dense_kernel_and_plain_loop(name, params):
    arms, dense, expected, noise, ends = _problem()
    make = lambda: make_policy(name, K_ARMS * P, rng=3, sigma2=0.09, **params)  # noqa: E731
    blocked = make().run_chunk(arms, expected, noise, ends)
    dense_out = make().run_chunk(dense, expected, noise, ends)
    plain = Policy.run_chunk(make(), arms, expected, noise, ends)
    _same(blocked, dense_out)
    _same(blocked, plain)
    if name.startswith("allseason"):
        assert any(e.kind == "prune" for e in blocked.events)
        np.testing.assert_allclose(blocked.weights, dense_out.weights, rtol=1e-7, atol=1e-12)


def test_block_state_stays_block_diagonal_and_positive_definite():
    arms, _, expected, noise, ends = _problem(seed=1)
    pol = make_policy("allseason-sw", K_ARMS * P, rng=0, tau=20, n_max=3)
    pol.run_chunk(arms, expected, noise, ends)
    assert pol._fast["M"].shape[1:] == (K_ARMS, P, P)
    assert pol.is_positive_definite()


def test_changing_the_structure_between_chunks_is_an_error():
    arms, dense, expected, noise, _ = _problem()
    pol = make_policy("lints", K_ARMS * P, rng=0)
    pol.run_chunk(dense[:10], expected[:10], noise[:10], np.arange(10))
    with pytest.raises(ValueError, match="arms"):
        pol.run_chunk(BlockArms(arms.contexts[10:20], K_ARMS), expected[10:20], noise[10:20],
                      np.arange(10))
