"""Your data, evaluated offline: replay against a hand computation, the fast replay decision
for decision against the step-by-step one, IPS unbiased on a log whose true value is known,
the OBD-shaped example and its sparsity warning."""

from __future__ import annotations

import numpy as np
import pytest

from allseason import api
from allseason.logs import examples, offline
from allseason.policies import RandomPolicy
from allseason.policies.base import Policy

from ..shared_results import log_digest, resume_from


def estimates(keep, log) -> dict:
    """The estimates of one run from its kept mask alone (a draw that matches the logged
    arm exactly on the kept events; pi: that draw's one-hot)."""
    drawn = np.where(keep, log.arm, (log.arm + 1) % log.n_arms)
    return offline.run_terms(log, keep, None, offline.reward_model(log), drawn)


def log_of(arms, rewards, propensity=None, context=None) -> offline.Log:
    lines = [
        "timestamp,arm,reward"
        + (",propensity" if propensity is not None else "")
        + "".join(f",x{j}" for j in range(0 if context is None else len(context[0])))
    ]
    for t, (a, r) in enumerate(zip(arms, rewards)):
        cells = [str(t), str(a), str(r)]
        if propensity is not None:
            cells.append(repr(float(propensity[t])))
        if context is not None:
            cells += [repr(float(c)) for c in context[t]]
        lines.append(",".join(cells))
    return offline.parse_log("\n".join(lines).encode())


class AlwaysOne(Policy):
    """A deterministic stub: always arm 1; counts its updates."""

    name = "stub-one"
    uses_normals = False
    deterministic = True

    def __init__(self, d, *, rng=None):
        super().__init__(d, rng=rng)
        self.seen = []

    def _select(self, arms, u, z):
        return 1

    def update(self, xs, rs):
        self.seen.extend(float(r) for r in rs)


class Greedy(Policy):
    """A learning stub: the arm with the highest mean of the rewards it was paid (an unseen
    arm counts 0.5; ties: the lowest index). Its decisions depend on which events were kept,
    so it checks that only kept events update it."""

    name = "stub-greedy"
    uses_normals = False
    deterministic = True

    def __init__(self, d, *, rng=None):
        super().__init__(d, rng=rng)
        self.sums, self.counts = np.zeros(d), np.zeros(d)

    def _select(self, arms, u, z):
        mean = np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), 0.5)
        return int(np.argmax(mean))

    def update(self, xs, rs):
        for x, r in zip(xs, rs):
            k = int(np.argmax(x))  # one-hot arms: the arm played
            self.sums[k] += r
            self.counts[k] += 1


@pytest.mark.parametrize("replay", [offline.replay_reference, offline.replay_fast])
def test_replay_matches_a_hand_computation(replay):
    # events:  arm   0  1  1  2  1  0
    #          r     1  0  1  1  0  1
    # always-1 keeps events 2, 3, 5 (1-based) with rewards 0, 1, 0 -> 1/3
    log = log_of([0, 1, 1, 2, 1, 0], [1, 0, 1, 1, 0, 1])
    policy = AlwaysOne(log.d)
    keep = replay(policy, log)
    assert keep.tolist() == [False, True, True, False, True, False]
    est = estimates(keep, log)
    assert est["kept"] == 3 and est["replay"] == pytest.approx(1 / 3)
    if replay is offline.replay_reference:
        return
    assert policy.seen == [0.0, 1.0, 0.0]  # updated on the kept events only, in order


@pytest.mark.parametrize("replay", [offline.replay_reference, offline.replay_fast])
def test_replay_of_a_learning_stub_by_hand(replay):
    # Greedy starts at arm 0 (all unseen, 0.5): event 1 (arm 0, r 0) kept -> mean0 = 0, so it
    # moves to arm 1: event 2 (arm 2) rejected; event 3 (arm 1, r 1) kept -> stays on 1;
    # event 4 (arm 0) rejected; event 5 (arm 1, r 0) kept -> mean1 = 0.5 ties unseen arm 2,
    # argmax picks 1; event 6 (arm 1, r 0) kept -> mean1 = 1/3 < 0.5: moves to arm 2;
    # event 7 (arm 2, r 1) kept. Kept 1, 3, 5, 6, 7: rewards 0, 1, 0, 0, 1 -> 2/5
    log = log_of([0, 2, 1, 0, 1, 1, 2], [0, 1, 1, 1, 0, 0, 1])
    keep = replay(Greedy(log.d), log)
    assert np.flatnonzero(keep).tolist() == [0, 2, 4, 5, 6]
    assert estimates(keep, log)["replay"] == pytest.approx(2 / 5)


def test_random_policy_replay_by_hand():
    # RandomPolicy plays floor(u K) with u from its first stream, one per event
    rng = np.random.default_rng(3)
    arms, rewards = rng.integers(0, 3, 200), rng.integers(0, 2, 200)
    log = log_of(arms, rewards)
    policy = RandomPolicy(log.d, rng=11)
    u = np.random.default_rng(11).spawn(2)[0].random(200)
    expect = np.minimum((u * 3).astype(int), 2) == arms
    assert np.array_equal(offline.replay_fast(policy, log), expect)
    assert estimates(expect, log)["replay"] == pytest.approx(rewards[expect].mean())
    # replayed in one chunk (it never learns), it ends with every event's draw spent and
    # the kept events counted as the steps it played
    spent = np.random.default_rng(11).spawn(2)[0]
    spent.random(200)
    assert policy.streams_state()[0] == spent.bit_generator.state
    assert policy.t == expect.sum()


def test_fast_replay_is_the_step_by_step_replay_for_every_default_contestant():
    rng = np.random.default_rng(0)
    n, K = 1200, 4
    arms = rng.integers(0, K, n)
    ctx = rng.normal(size=(n, 2))
    p = np.array([0.2, 0.5, 0.35, 0.6])
    rewards = (rng.random(n) < p[arms]).astype(int)
    log = log_of(arms, rewards, context=ctx)
    assert log.d == K * 3
    for spec in offline.offline_specs():
        a = offline.replay_reference(offline.build_policy(spec, log, 0, 1), log)
        b = offline.replay_fast(offline.build_policy(spec, log, 0, 1), log)
        assert np.array_equal(a, b), spec.label
        assert 0.15 * n < a.sum() < 0.4 * n


def test_ips_with_pi_covers_a_known_true_value():
    # logging policy: arm k with probability q_k (not uniform); rewards Bernoulli(mu_k);
    # the evaluated policy is uniform random (pi = 1/3 exactly), true value mean(mu) = 0.45
    q, mu = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.5, 0.65])
    truth = mu.mean()
    hits = {"ips": 0, "snips": 0, "dr": 0, "dm": 0}
    errors = []
    for rep in range(60):
        rng = np.random.default_rng(1000 + rep)
        arms = rng.choice(3, size=1500, p=q)
        rewards = (rng.random(1500) < mu[arms]).astype(int)
        log = log_of(arms, rewards, propensity=q[arms])
        result = api.evaluate(log, ["random"], n_seeds=1, seed=rep, workers=1)
        rows = {r["method"]: r for r in result.summary()}
        for m in hits:
            hits[m] += rows[m]["low"] <= truth <= rows[m]["high"]
        errors.append(rows["ips"]["estimate"] - truth)
        # pi = 1/3 at every event: IPS is exactly mean(r / (3 p))
        assert rows["ips"]["estimate"] == pytest.approx(np.mean(rewards / (3 * q[arms])))
    assert min(hits.values()) >= 53, hits  # >= 88% of 60
    assert abs(np.mean(errors)) <= 2.5 * np.std(errors, ddof=1) / np.sqrt(60)
    assert not log.uniform
    assert result.methods[0] == "ips" and result.methods[-1] == "replay"  # replay last
    assert [r for r in result.summary() if r["method"] == "replay"][0]["biased"]


def test_obd_example_kept_events_and_the_sparsity_warning(shared_obd_runs):
    """The OBD-shaped example (20,000 events), every offline contestant over 2 seeds (each
    seed is a full replay of every contestant: the claims hold per seed's mean).

    The replays are ``api.evaluate(log, n_seeds=2)``'s own, made once per session
    (``tests/shared_results.py``: the Your data page's test reads the same ones) and handed
    back as ``done_runs``; the table, the intervals and the warning are computed here."""
    log = api.read_user_file(examples.obd_log())
    assert (log.n_events, log.n_arms) == (examples.OBD_ROWS, examples.N_ITEMS)
    assert log.ignored == ("position", "user_feature_0") and log.uniform
    assert 0.003 < log.reward.mean() < 0.007  # sparse clicks, as in the OBD
    digest, runs = shared_obd_runs
    assert digest == log_digest(log)  # the runs are this log's
    result = api.evaluate(log, n_seeds=2, done_runs=resume_from(runs))
    rows = result.summary()
    assert rows[0]["policy"] == offline.LOGGER and rows[0]["method"] == "logged"
    assert rows[0]["estimate"] == pytest.approx(log.reward.mean())
    assert rows[0]["low"] < rows[0]["estimate"] < rows[0]["high"]
    replay = [r for r in rows if r["method"] == "replay"]
    assert len(replay) == len(api.OFFLINE_POLICIES)
    for r in replay:  # uniform logging over 10 items: about a tenth of the events kept
        assert 1800 < r["events"] < 2200
        assert r["low"] <= r["estimate"] <= r["high"]
    reasons = result.sparsity()
    assert any("no policy can be told from another" in r for r in reasons)
    # with pi in place of the realised draw, the ESS grows from the kept count
    for r in rows:
        if r["method"] in ("ips", "snips", "dr"):
            assert r["events"] > 2 * r["ess_draw"], r
        if r["method"] != "logged":
            assert 0 <= r["low"] < r["high"] <= 1, r  # never zero width, never outside [0, 1]


def test_a_small_log_is_too_sparse_and_a_clear_one_is_not():
    log = api.read_user_file(examples.obd_log(n_rows=2000))
    result = api.evaluate(log, ["lints", "random"], n_seeds=2)
    assert any(f"fewer than {offline.MIN_EVENTS} kept events" in r for r in result.sparsity())
    # dense rewards, one clearly best arm, many events: the learners beat random, no warning
    rng = np.random.default_rng(5)
    arms = rng.integers(0, 3, 9000)
    rewards = (rng.random(9000) < np.array([0.1, 0.2, 0.9])[arms]).astype(int)
    result = api.evaluate(log_of(arms, rewards), ["lints", "random"], n_seeds=2)
    assert result.sparsity() == []
    est = {r["policy"]: r["estimate"] for r in result.summary()}
    assert est["lints"] > est["random"] + 0.3


def test_results_do_not_depend_on_the_number_of_threads():
    log = api.read_user_file(examples.obd_log(n_rows=3000))
    a = api.evaluate(log, ["allseason-sw", "random"], n_seeds=2, workers=1).frame()
    b = api.evaluate(log, ["allseason-sw", "random"], n_seeds=2, workers=2).frame()
    assert a.equals(b)


def test_oracles_are_refused_offline():
    with pytest.raises(api.SpecError, match="oracle"):
        api.offline_specs(["lints", "oracle-state"])


def test_nanosecond_timestamps_stay_distinct_and_events_are_sorted():
    log = offline.parse_log(
        b"timestamp,arm,reward\n1700000000000000002,1,0\n1700000000000000001,0,1\n"
    )
    assert log.timestamp.tolist() == [1700000000000000001, 1700000000000000002]
    assert log.arm.tolist() == [0, 1] and log.row.tolist() == [3, 2]
    assert any("events sorted by timestamp" in n for n in log.notes)


def test_results_do_not_depend_on_the_executor():
    """Threads in this process, or the sweep engine's local process pool: the same table."""
    log = api.read_user_file(examples.obd_log(n_rows=1500))
    a = api.evaluate(log, ["allseason-sw", "random"], n_seeds=2, workers=1).frame()
    b = api.evaluate(log, ["allseason-sw", "random"], n_seeds=2, processes=2).frame()
    assert a.equals(b)
