"""The dense-arm Monte Carlo pi (allseason/kernels/agent_mc.py): the same counts as a plain
numpy Monte Carlo on the same normals, within 4 standard errors of the exact K = 2 formula and
of a large independent Monte Carlo, a standard error that matches its spread, sums to 1, the
same pi for the same key bit for bit, and through the agent the arm played never below
1 / (n_mc + 1)."""

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import solve_triangular

from allseason.agent import Agent
from allseason.kernels import agent as kagent
from allseason.kernels import agent_mc

MASK = (1 << 64) - 1


def _bank(S, p, K, seed, *, sandwich=False, weights=None, dead=()):
    """A random bank of S dense-arm bandits (G = 1), their weights, and K arms."""
    rng = np.random.default_rng(seed)
    L = np.empty((S, 1, p, p))
    mu = rng.standard_normal((S, 1, p)) * 0.5
    for s in range(S):
        B = rng.standard_normal((p, 2 * p)) / np.sqrt(p)
        L[s, 0] = np.linalg.cholesky(B @ B.T + 0.5 * np.eye(p))
    B = rng.standard_normal((p, 2 * p)) / np.sqrt(p)
    Lt = np.linalg.cholesky(B @ B.T + np.eye(p))[None]
    alive = np.ones(S, dtype=bool)
    alive[list(dead)] = False
    w = rng.dirichlet(np.ones(S)) if weights is None else np.asarray(weights, float)
    w = np.where(alive, w, 0.0)
    w /= w.sum()
    X = rng.standard_normal((K, p)) / np.sqrt(p)
    return dict(X=X, L=L, mu=mu, Lt=Lt, alive=alive, sandwich=sandwich, w=w)


def _pi_mc(b, key, n_mc):
    K, p = b["X"].shape
    pi = np.full(K, np.nan)
    se = agent_mc.pi_mc(
        b["X"], np.zeros(K, np.int64), np.arange(K, dtype=np.int64), b["L"], b["mu"], b["Lt"],
        b["alive"], b["sandwich"], b["w"], pi, key, n_mc, np.empty((1, p)), np.empty(p),
        np.empty(p),
    )  # fmt: skip
    return pi, se


def _sample_theta(b, s, z):
    """Thompson samples of bandit s for the rows of z, as the plain policies draw them:
    theta = mu + L^-T z, or mu + M^-1 Lt z (sandwich)."""
    L, mu = b["L"][s, 0], b["mu"][s, 0]
    if b["sandwich"]:
        y = z @ b["Lt"][0].T
        return mu + solve_triangular(L.T, solve_triangular(L, y.T, lower=True), lower=False).T
    return mu + solve_triangular(L.T, z.T, lower=False).T


def _reference(b, key, n_mc):
    """A plain numpy Monte Carlo on the module's normals: n_j by cumulative rounding, theta
    through the Cholesky factor, the argmax of X theta counted, mixed by the weights."""
    w, alive = b["w"], b["alive"]
    K, p = b["X"].shape
    keys = agent_mc.mc_keys(key, len(w))
    nj = np.zeros(len(w), int)
    on = alive & (w > 0)
    cum = np.floor(n_mc * np.cumsum(np.where(on, w, 0.0)) + 0.5).astype(int)
    nj[on] = np.maximum(1, np.diff(np.concatenate([[0], cum]))[on])
    pi, var = np.zeros(K), np.zeros(K)
    for s in np.flatnonzero(nj):
        z = np.empty(nj[s] * p)
        agent_mc.stream_normals(keys[s], 0, z)
        scores = _sample_theta(b, s, z.reshape(nj[s], p)) @ b["X"].T
        q = np.bincount(scores.argmax(axis=1), minlength=K) / nj[s]
        pi += w[s] * q
        v = q * (1 - q) * nj[s] / (nj[s] - 1) if nj[s] > 1 else np.full(K, 0.25)
        var += w[s] ** 2 * v / nj[s]
    return pi, np.sqrt(var.max()), nj


MIXTURES = [  # (S, weights, dead slots, sandwich)
    (1, None, (), False),
    (3, None, (), False),
    (5, [0.9, 0.05, 0.03, 0.02, 1e-9], (), False),  # one bandit at a single draw
    (6, None, (2, 4), False),
    (4, None, (), True),
]


@pytest.mark.parametrize("S, weights, dead, sandwich", MIXTURES)
@pytest.mark.parametrize("p, K", [(5, 5), (7, 12)])
def test_pi_is_a_plain_monte_carlo_on_the_same_normals(S, weights, dead, sandwich, p, K):
    for seed in range(3):
        b = _bank(S, p, K, seed, sandwich=sandwich, weights=weights, dead=dead)
        key = 1234567 + 1000 * seed
        pi, se = _pi_mc(b, key, 1000)
        ref, ref_se, nj = _reference(b, key, 1000)
        np.testing.assert_allclose(pi, ref, rtol=0, atol=1e-13)
        assert se == pytest.approx(ref_se, rel=1e-9)
        assert abs(pi.sum() - 1.0) < 1e-12
        assert nj.sum() >= 1000 and (nj[b["alive"]] >= 1).all() and (nj[~b["alive"]] == 0).all()


def test_the_draws_are_the_agents_counter_generator_keyed_apart():
    """The copied splitmix64 and uniforms are the agent's; the slots' streams are
    splitmix64(mkey + (s + 1) * MC_SALT), mkey = splitmix64(key ^ MC_SALT)."""
    for x in (0, 1, 2**63 + 5, 0xDEADBEEF):
        assert int(agent_mc._mix(np.uint64(x))) == int(kagent.splitmix64(np.uint64(x)))
        assert agent_mc._unit(np.uint64(x), 3) == kagent._uniform(np.uint64(x), 3)
    salt = int(kagent.MC_SALT)
    key = 987654321
    mkey = int(kagent.splitmix64(np.uint64(key ^ salt)))
    want = [int(kagent.splitmix64(np.uint64((mkey + (s + 1) * salt) & MASK))) for s in range(4)]
    assert [int(k) for k in agent_mc.mc_keys(key, 4)] == want
    assert key not in want and mkey not in want


def test_the_normals_are_standard_normal_and_the_stream_reads_in_order():
    z = np.empty(400_000)
    agent_mc.stream_normals(np.uint64(11), 0, z)
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert abs(z.mean()) < 4 / np.sqrt(z.size) and abs(z.var() - 1) < 4 * np.sqrt(2 / z.size)
    tail = (np.abs(z) > 3.5).mean()  # the ziggurat's tail (beyond 3.44) is right
    want = 2 * stats.norm.sf(3.5)
    assert abs(tail - want) < 4 * np.sqrt(want / z.size)
    parts, c = [], 0
    for n in (7, 64, 1, 300):  # chunks read on from where the last stopped: the same normals
        part = np.empty(n)
        c = agent_mc.stream_normals(np.uint64(11), c, part)
        parts.append(part)
    np.testing.assert_array_equal(np.concatenate(parts), z[:372])


def _exact_k2(b):
    """K = 2: P(arm 0) = sum_j w_j Phi(<mu_j, x0 - x1> / sd_j of the difference)."""
    dx = b["X"][0] - b["X"][1]
    p0 = 0.0
    for s in np.flatnonzero(b["alive"]):
        L = b["L"][s, 0]
        Minv = np.linalg.inv(L @ L.T)
        cov = Minv @ (b["Lt"][0] @ b["Lt"][0].T) @ Minv if b["sandwich"] else Minv
        p0 += b["w"][s] * stats.norm.cdf(b["mu"][s, 0] @ dx / np.sqrt(dx @ cov @ dx))
    return np.array([p0, 1 - p0])


@pytest.mark.parametrize("S, weights, dead, sandwich", MIXTURES)
def test_pi_agrees_with_the_exact_k2_formula_within_4_standard_errors(S, weights, dead, sandwich):
    for seed in range(4):
        b = _bank(S, 4, 2, 100 + seed, sandwich=sandwich, weights=weights, dead=dead)
        pi, se = _pi_mc(b, 55 + seed, 4096)
        exact = _exact_k2(b)
        assert np.all(np.abs(pi - exact) <= 4 * se + 1e-12), (pi, exact, se)


def _independent_mc(b, n, seed):
    """The mixture drawn plainly: bandit by weight, then a Thompson step (numpy's own draws)."""
    rng = np.random.default_rng(seed)
    K, p = b["X"].shape
    js = rng.choice(len(b["w"]), size=n, p=b["w"])
    counts = np.zeros(K)
    for s in np.unique(js):
        m = int((js == s).sum())
        theta = _sample_theta(b, s, rng.standard_normal((m, p)))
        counts += np.bincount((theta @ b["X"].T).argmax(axis=1), minlength=K)
    pi = counts / n
    return pi, np.sqrt(pi * (1 - pi) / n)


@pytest.mark.parametrize("S, weights, dead, sandwich", MIXTURES)
def test_pi_agrees_with_a_large_independent_monte_carlo(S, weights, dead, sandwich):
    for seed in range(3):
        b = _bank(S, 5, 6, 200 + seed, sandwich=sandwich, weights=weights, dead=dead)
        pi, se = _pi_mc(b, 77 + seed, 4096)
        ref, ref_se = _independent_mc(b, 400_000, seed)
        tol = 4 * np.sqrt(se**2 + ref_se**2)
        assert np.all(np.abs(pi - ref) <= tol), (pi, ref, se)


def test_the_standard_error_matches_the_spread_over_keys():
    """Over 400 keys, the largest standard deviation of pi over the arms is the stderr
    returned (within 15%), and below the unstratified binomial one."""
    b = _bank(4, 5, 5, 7, weights=[0.4, 0.3, 0.2, 0.1])
    runs = [_pi_mc(b, 10_000 + i, 512) for i in range(400)]
    pis = np.array([r[0] for r in runs])
    ses = np.array([r[1] for r in runs])
    spread = pis.std(axis=0, ddof=1).max()
    assert spread == pytest.approx(ses.mean(), rel=0.15)
    mean = pis.mean(axis=0)
    assert ses.mean() <= np.sqrt((mean * (1 - mean)).max() / 512)


def test_the_same_key_gives_the_same_pi_bit_for_bit():
    b = _bank(5, 5, 5, 3)
    a1, s1 = _pi_mc(b, 42, 4096)
    a2, s2 = _pi_mc(b, 42, 4096)
    assert a1.tobytes() == a2.tobytes() and s1 == s2
    a3, _ = _pi_mc(b, 43, 4096)
    assert a3.tobytes() != a1.tobytes()


def test_through_the_agent_the_arm_played_has_pi_at_least_one_over_n_mc_plus_one():
    """All-Season with a real mixture, dense arms K = 5: Monte Carlo pi, sums to 1, the arm
    played >= 1 / (n_mc + 1), and a copy of the agent gives the same pi for the same event."""
    rng = np.random.default_rng(5)
    theta = rng.standard_normal(4)
    agent = Agent("allseason-sw", d=4, seed=2, n_mc=64, batch_size=5, share=0.3)
    for i in range(60):
        X = rng.standard_normal((5, 4))
        rec = agent.decide(arms=X, event_id=f"e{i}")
        assert rec.pi_method == "monte-carlo"
        assert rec.propensity >= 1 / 65 - 1e-12
        assert abs(rec.propensities.sum() - 1) < 1e-12
        agent.learn(f"e{i}", float(X[rec.arm] @ theta + 0.1 * rng.standard_normal()))
    X = rng.standard_normal((5, 4))
    r1, r2 = agent.copy().decide(arms=X, event_id="p"), agent.copy().decide(arms=X, event_id="p")
    assert r1.propensities.tobytes() == r2.propensities.tobytes() and r1.arm == r2.arm
