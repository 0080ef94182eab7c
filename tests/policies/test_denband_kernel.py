"""DenBand's compiled run_chunk (allseason.kernels.denband.denband_chunk) against its plain numpy
select/update loop, decision for decision: on outer-product actions of the paper's ten-arm
size (d = 10 x 44), and on a stream where experts are created and discarded."""

from __future__ import annotations

import numpy as np
import pytest

from allseason.envs.arms import BlockArms
from allseason.policies import Policy, make_policy
from allseason.policies.denband import first_best

K, P = 10, 44


def _block_problem(T, seed):
    """Ten arms e_k (x) c_t, p = 44 (the paper's ten-arm tables); theta changes twice."""
    rng = np.random.default_rng(seed)
    ctx = rng.standard_normal((T, P)) * np.linspace(1.0, 0.1, P)
    ctx /= np.linalg.norm(ctx, axis=1, keepdims=True)
    thetas = 3.0 * rng.standard_normal((2, K, P))
    state = np.minimum(np.arange(T) // (T // 3), 2) % 2
    expected = np.einsum("tp,tkp->tk", ctx, thetas[state])
    noise = 0.1 * rng.standard_normal(T)
    return BlockArms(ctx, K), expected, noise, np.arange(9, T, 10)


def _same(fast, slow):
    np.testing.assert_array_equal(fast.arm, slow.arm)
    np.testing.assert_array_equal(fast.player, slow.player)
    np.testing.assert_array_equal(fast.reward, slow.reward)
    assert fast.events == slow.events
    np.testing.assert_array_equal(fast.weight_ids, slow.weight_ids)
    np.testing.assert_allclose(fast.weights, slow.weights, rtol=1e-12)


@pytest.mark.parametrize(
    "params",
    [
        {"tau": 1000, "delta_l": 0.25, "sigma2": 0.25},
        {"tau": 300, "delta_l": 0.05, "sigma2": 0.01, "lam": 0.05},
        {"tau": 200, "delta_l": 0.02, "sigma2": 0.001, "lam": 0.02, "max_idle": 40},
    ],
)
def test_compiled_denband_decides_as_plain_on_ten_arm_blocks(params):
    arms, expected, noise, ends = _block_problem(900, seed=4)
    make = lambda: make_policy("denband", K * P, rng=1, **params)  # noqa: E731
    fast_policy = make()
    fast = fast_policy.run_chunk(arms, expected, noise, ends)
    slow = Policy.run_chunk(make(), arms, expected, noise, ends)
    _same(fast, slow)
    assert fast_policy.blocks == K and fast_policy.is_positive_definite()
    ids, w = fast_policy.weights()
    assert w.sum() == pytest.approx(1.0) and len(ids) == (fast.weight_ids[-1] >= 0).sum()
    if params["sigma2"] < 0.1:
        assert any(e.kind == "create" for e in slow.events), "should create experts"


def test_compiled_denband_creates_and_discards_as_plain():
    """d = 1, theta flips sign twice: an expert is created after each flip and (max_idle)
    the unused one discarded; chunks cut anywhere on batch boundaries."""
    T = 600
    arms = np.tile(np.array([[1.0], [0.5]])[None], (T, 1, 1))
    theta = np.where((np.arange(T) // 200) % 2 == 0, 1.0, -1.0)
    expected, noise = arms[..., 0] * theta[:, None], np.zeros(T)
    ends = np.arange(2, T, 3)

    def make():
        return make_policy("denband", 1, rng=0, tau=20, delta_l=0.1, max_idle=10, sigma2=0.01)

    slow = Policy.run_chunk(make(), arms, expected, noise, ends)
    assert [e.kind for e in slow.events].count("discard") >= 2
    fast = make()
    parts = [
        fast.run_chunk(
            arms[lo:hi], expected[lo:hi], noise[lo:hi], ends[(ends >= lo) & (ends < hi)] - lo
        )
        for lo, hi in ((0, 150), (150, 420), (420, T))
    ]
    np.testing.assert_array_equal(np.concatenate([p.arm for p in parts]), slow.arm)
    np.testing.assert_array_equal(np.concatenate([p.player for p in parts]), slow.player)
    assert [e for p in parts for e in p.events] == slow.events


def test_one_path_only():
    pol = make_policy("denband", 2, rng=0)
    arms = np.eye(2)[None].repeat(4, axis=0)
    pol.run_chunk(arms, np.zeros((4, 2)), np.zeros(4), np.arange(4))
    with pytest.raises(RuntimeError, match="one path"):
        pol.select(arms[0])


def test_ties_up_to_rounding_go_to_the_lowest_index():
    s = np.array([1.0, 1.0 + 1e-15, 0.5, 1.0 + 2e-15])
    assert first_best(s) == 0
    assert first_best(np.array([0.5, 1.0, 1.0 - 1e-9])) == 1
    assert first_best(-s, lowest=True) == 0
    lcb = np.array([[np.inf, 0.2], [np.inf, 0.2 - 1e-16]])
    assert first_best(lcb, lowest=True).tolist() == [0, 0]


SEGMENT = 40  # steps per value of theta (twice the auditors' window, tau = 20)


def test_compiled_denband_weights_when_the_expert_arrays_grow_within_a_chunk():
    """More than 4 experts (the compiled path's first room) in one chunk: the weights of the
    batches played before the arrays grew have fewer columns, padded as the plain path's."""
    T = 7 * SEGMENT
    arms = np.tile(np.array([[1.0], [0.5]])[None], (T, 1, 1))
    theta = np.array([1.0, -1.0, 3.0, -3.0, 6.0, -6.0, 10.0])[np.arange(T) // SEGMENT]
    expected, noise = arms[..., 0] * theta[:, None], np.zeros(T)
    ends = np.arange(T)

    def make():
        return make_policy("denband", 1, rng=0, tau=20, delta_l=0.1, sigma2=0.01)

    slow = Policy.run_chunk(make(), arms, expected, noise, ends)
    assert [e.kind for e in slow.events].count("create") >= 4, "should outgrow 4 experts"
    fast = make().run_chunk(arms, expected, noise, ends)
    _same(fast, slow)
