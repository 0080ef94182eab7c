"""The agent's fast paths (issue 31's speed goals) against its general paths: the same
decisions, the same pi and the same state, whichever way the inputs come in; the packed
compiled call against the compiled step it wraps; the merged quadrature grid against the
sorted one; the memory of resolved events bounded in O(1) a step."""

import numpy as np
import pytest

from allseason import api
from allseason.agent import Agent, UnknownEvent
from allseason.errors import SpecError
from allseason.kernels import agent as kagent
from allseason.kernels.argmax import QUAD_NODES, argmax_probs_rows

NAMES = ["allseason-sw", "allseason-disc", "lints", "sw-lints", "d-lints"]


def _general(value, i):
    """The same numbers in a form the fast path does not take (a list, a Fortran-ordered or
    a strided copy, float32-exact values are not needed: float64 in every case)."""
    arr = np.asarray(value, dtype=float)
    if i % 4 == 0:
        return arr.tolist()
    if i % 4 == 1 and arr.ndim == 2:
        return np.asfortranarray(arr)
    if i % 4 == 2:  # C order but read-only: not the layout the compiled entry point takes
        ro = arr.copy()
        ro.flags.writeable = False
        return ro
    wide = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],))
    wide[..., ::2] = arr
    return wide[..., ::2]  # not contiguous


def _state_arrays(agent):
    return agent.to_state()[1]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("context", [True, False])
@pytest.mark.parametrize("pi", [True, False])
def test_fast_inputs_and_int_ids_are_the_general_path(name, context, pi):
    """float64 C-ordered inputs with int event ids (the fast path) and lists / Fortran /
    strided inputs with the ids as text (the general path) give the same decisions, the
    same pi, bit for bit, and the same state."""
    K, d = 4, 3
    kw = dict(d=d, seed=11, batch_size=2, propensities=pi, n_mc=256)
    if context:
        kw["n_arms"] = K
    fast, general = Agent(name, **kw), Agent(name, **kw)
    rng = np.random.default_rng(5)
    theta = rng.standard_normal((K, d))
    for i in range(60):
        if context:
            c = rng.standard_normal(d)
            ra = fast.decide(context=c, event_id=i, t=float(i))
            rb = general.decide(context=_general(c, i), event_id=str(i), t=float(i))
            r = float(theta[ra.arm] @ c)
        else:
            X = rng.standard_normal((K, d))
            ra = fast.decide(X, event_id=i, t=float(i))
            rb = general.decide(_general(X, i), event_id=str(i), t=float(i))
            r = float(X[ra.arm] @ theta[0])
        assert ra.to_dict() == rb.to_dict()
        if pi:
            assert np.array_equal(ra.propensities, rb.propensities)
        r += 0.1 * rng.standard_normal()
        assert fast.learn(i, r) == general.learn(str(i), np.float64(r)) == "learned"
    assert fast.learn(3, 0.0) == general.learn("3", 0.0) == "duplicate"
    assert fast.counts == general.counts
    sa, sb = _state_arrays(fast), _state_arrays(general)
    assert sa.keys() == sb.keys()
    for key in sa:
        assert np.array_equal(sa[key], sb[key]), key


@pytest.mark.parametrize("context", [True, False])
def test_the_inline_path_refuses_what_the_general_path_refuses(context):
    """decide's inline checks (type, dtype, layout, shape) let through only what the general
    checks would; a bad input is refused in one line, and nothing is decided."""
    K, d = 3, 4
    kw = dict(d=d, seed=0, propensities=False)
    if context:
        kw["n_arms"] = K
    a = Agent("allseason-sw", **kw)
    if context:
        bad = [np.zeros(d + 1), np.zeros((1, d)), np.full(d, np.nan), np.array(["a"] * d)]
        calls = [lambda v: a.decide(context=v, event_id="x") for _ in bad]
        calls.append(lambda v: a.decide(np.zeros((K, d)), event_id="x"))
        bad.append(None)
    else:
        bad = [np.zeros((0, d)), np.zeros((K, d + 1)), np.zeros(d), np.full((K, d), np.inf)]
        calls = [lambda v: a.decide(v, event_id="x") for _ in bad]
        calls.append(lambda v: a.decide(context=np.zeros(d), event_id="x"))
        bad.append(None)
    for call, value in zip(calls, bad):
        with pytest.raises(SpecError) as got:
            call(value)
        assert "\n" not in str(got.value)
    assert a.counts["decisions"] == 0 and a.n_open == 0 and a.policy.t == 0
    if not context:  # float32 is converted (a checked copy), as the general path does
        rec = a.decide(np.ones((K, d), dtype=np.float32), event_id="f32")
        assert rec.arm in range(K)
        one = Agent("lints", d=d, seed=0).decide(np.ones((1, d)), event_id=1)
        assert (one.arm, one.propensity, one.pi_method) == (0, 1.0, "deterministic")


@pytest.mark.parametrize("name", ["allseason-sw", "lints", "sw-lints"])
@pytest.mark.parametrize("context", [True, False])
def test_the_packed_call_is_the_compiled_step(name, context):
    """decide_packed (one boxed pack) returns what decide_step returns on the same
    arguments, pi included, and maps the slot to its bandit id."""
    K, d = 4, 3
    kw = dict(d=d, seed=2, batch_size=3, n_mc=512)
    if context:
        kw["n_arms"] = K
    a = Agent(name, **kw)
    rng = np.random.default_rng(0)
    for i in range(40):  # a state with a few bandits
        if context:
            rec = a.decide(context=rng.standard_normal(d), event_id=i)
        else:
            rec = a.decide(rng.standard_normal((K, d)), event_id=i)
        a.learn(i, rng.standard_normal() + rec.arm)
    pack, work, pi_mode = a._work(K)
    ids = a.policy.kernel_state.ids if api.role(name).family == "allseason" else None
    for _trial in range(30):
        if context:
            ctx = a._ctx1
            ctx[0, :d] = rng.standard_normal(d)
            block, cidx = a._block, a._cidx
        else:
            ctx = rng.standard_normal((K, d))
            block, cidx = np.zeros(K, dtype=np.int64), np.arange(K, dtype=np.int64)
        key = int(rng.integers(0, 2**63 - 1))
        arm, bandit, se = kagent.decide_packed(ctx, key, -1.0, pi_mode, 512, pack)
        pi_packed = work[5].copy()
        arm2, slot, se2 = kagent.decide_step(
            ctx, block, cidx, a._bank, key, -1.0, pi_mode, 512, work
        )
        assert (arm, se) == (arm2, se2)
        assert bandit == (int(ids[slot]) if ids is not None else -1)
        assert np.array_equal(pi_packed, work[5])
        assert abs(pi_packed.sum() - 1.0) < 1e-9


@pytest.mark.parametrize("K, R, nodes", [(5, 40, 32), (20, 4, 32), (13, 6, 8), (2, 10, 4)])
def test_merged_grid_is_the_sorted_grid(K, R, nodes):
    """The quadrature's grid made by merging each arm's sorted nodes (a heap of the arms'
    next nodes) and its sums taken arm by arm give the probabilities of the grid made by
    sorting them all, summed node by node (the reference, written out here), bit for bit."""
    rng = np.random.default_rng(3 + K)
    y = QUAD_NODES if nodes == 32 else kagent.quad_nodes(nodes)
    mean = rng.standard_normal((R, K))
    sd = np.exp(rng.standard_normal((R, K)) - 1.0)
    count = rng.integers(0, 3, size=(R, K))
    count[:, 0] = 1
    out = np.empty((R, K))
    argmax_probs_rows(mean, sd, count, y, out)
    tail = 8.5
    for r in range(R):  # the reference: sort every arm's nodes within (lo, hi)
        live = count[r] > 0
        lo = np.max((mean[r] - tail * sd[r])[live])
        hi = np.max((mean[r] + tail * sd[r])[live])
        nodes = (mean[r][live, None] + sd[r][live, None] * y[None]).ravel()
        nodes = np.sort(nodes[(nodes > lo) & (nodes < hi)])
        grid = np.concatenate([[lo], nodes, [hi]])
        ref = np.empty((1, K))
        _one_row_reference(mean[r], sd[r], count[r], grid, ref[0])
        assert np.array_equal(ref[0], out[r]), r


def _one_row_reference(mean, sd, count, grid, out):
    """The kernel's integration on a given grid, in plain Python (math, as the kernel)."""
    import math

    from allseason.kernels.argmax import log_ndtr

    K = mean.shape[0]
    logF, prevF = np.zeros(K), np.zeros(K)
    out[:] = 0.0
    prev_logP = 0.0
    for k in range(K):
        prevF[k] = log_ndtr((grid[0] - mean[k]) / sd[k]) if count[k] > 0 else 0.0
        prev_logP += count[k] * prevF[k]
    for i in range(1, grid.shape[0]):
        logP = 0.0
        for k in range(K):
            z = (grid[i] - mean[k]) / sd[k]
            logF[k] = 0.0 if (count[k] == 0 or z > 9.0) else log_ndtr(z)
            logP += count[k] * logF[k]
        dd = logP - prev_logP
        P1, P0 = math.exp(logP), math.exp(prev_logP)
        lm = (P1 - P0) / dd if dd > 1e-12 else P1
        if lm > 0.0:
            for k in range(K):
                out[k] += (logF[k] - prevF[k]) * lm
        prevF[:] = logF
        prev_logP = logP
    total = 0.0
    for k in range(K):  # in order, as the kernel (numpy's sum is pairwise beyond 8 terms)
        total += count[k] * out[k]
    out /= total


@pytest.mark.parametrize("name", ["allseason-sw", "lints"])
def test_numpy_float_rewards_are_the_float_rewards(name):
    """A reward as np.float64 (which the hot path passes on as it is) learns what the same
    float does, state bit for bit; a non-finite one is refused as a float is."""
    a, b = Agent(name, d=3, seed=2), Agent(name, d=3, seed=2)
    rng = np.random.default_rng(1)
    for i in range(30):
        X = rng.standard_normal((4, 3))
        assert a.decide(X, event_id=i).arm == b.decide(X, event_id=i).arm
        r = float(rng.standard_normal())
        assert a.learn(i, np.float64(r)) == b.learn(i, r) == "learned"
        if i % 10 == 0:
            for bad in (np.float64("nan"), float("inf")):
                with pytest.raises(SpecError, match="reward"):
                    a.learn(i + 1000, bad)
    assert a.counts == b.counts
    sa, sb = _state_arrays(a), _state_arrays(b)
    for key in sb:
        assert np.array_equal(sa[key], sb[key]), key


def test_resolved_events_are_bounded_and_recent_ones_remembered():
    """The memory of resolved events keeps the last max_open (duplicates of those are
    counted), forgets the oldest, and stays O(1) a step (an OrderedDict, not a dict scanned
    from its front)."""
    a = Agent("lints", d=2, n_arms=2, seed=0, max_open=50)
    for i in range(400):
        a.decide(context=[0.1, 0.2], event_id=i)
        a.learn(i, 0.5)
    assert len(a._resolved) == 50
    assert a.learn(399, 1.0) == "duplicate" and a.learn(350, 1.0) == "duplicate"
    with pytest.raises(UnknownEvent):
        a.learn(349, 1.0)
    b = Agent.from_state(*a.to_state())
    assert list(b._resolved) == list(a._resolved)
    assert b.learn(360, 1.0) == "duplicate"


@pytest.mark.parametrize("name", ["allseason-sw", "allseason-disc", "lints", "sw-lints", "d-lints"])
def test_means_refreshed_by_block_are_the_full_refresh(name):
    """After each reward at B = 1 only the changed blocks' means are refreshed (one, or two
    when a window's oldest observation leaves; all at a window's refactoring or under
    discounting): every live slot's means equal a refresh of every block, bit for bit."""
    from allseason.kernels.linalg import refresh_means

    tau = {"allseason-sw": {"tau": 3}, "sw-lints": {"tau": 3}}.get(name, {})
    K, d = 4, 3
    a = Agent(name, d=d, n_arms=K, seed=1, propensities=False, **tau)
    rng = np.random.default_rng(2)
    theta = rng.standard_normal((K, d))
    for i in range(300):
        c = rng.standard_normal(d)
        rec = a.decide(context=c, event_id=i)
        a.learn(i, float(theta[rec.arm] @ c) + 0.1 * rng.standard_normal())
        f = a.policy.kernel_state
        if api.role(name).family == "allseason":
            slots = [(f.L[s], f.b[s], f.mu[s]) for s in np.flatnonzero(f.alive)]
        else:
            slots = [(f.L, f.b, f.mu)]
        for L, b, mu in slots:
            full = np.empty_like(mu)
            refresh_means(L, b, full, np.empty(mu.shape[1]))
            assert full.tobytes() == mu.tobytes(), (name, i)


@pytest.mark.parametrize("name", ["allseason-sw", "lints"])
@pytest.mark.parametrize("on_expire", ["drop", "default"])
def test_open_rows_in_slots_and_compiled_keys_are_the_general_path(name, on_expire):
    """The hot path keeps an open decision's row in a slot of one array (no copy; the slots
    doubled when all are taken) and keys its draws in the compiled call (an ASCII event id;
    beyond ASCII, hashlib and the general step): against the general path (rows of their
    own, hashlib's keys), with more decisions open than the first slots, some expired, a
    save and load while they are open, rewards out of order, the same decisions and pi, bit
    for bit, and the same state."""
    kw = dict(d=3, seed=4, batch_size=3, propensities=False, horizon=50.0, on_expire=on_expire)
    fast, general = Agent(name, **kw), Agent(name, **kw)
    general._event_fast = False  # the general compiled step, every decision
    rng = np.random.default_rng(8)
    theta = rng.standard_normal(3)
    n = 1300  # more than the 1024 slots at first
    ids = [f"é{i}" if i % 97 == 0 else f"ev-{i}" for i in range(n)]
    rewards = {}
    for i, e in enumerate(ids):
        X = rng.standard_normal((4, 3))
        ra = fast.decide(X, event_id=e, t=float(i))
        rb = general.decide(X.copy(), event_id=e, t=float(i))
        assert ra.to_dict() == rb.to_dict()
        rewards[e] = float(X[ra.arm] @ theta)
        if i == 1100:  # 1100 open: a save and a load of both
            fast = Agent.from_state(*fast.to_state())
            general = Agent.from_state(*general.to_state())
            general._event_fast = False
    assert fast.n_open == general.n_open == n
    assert fast.expire(1240.0) == general.expire(1240.0) > 1000  # before t = 1190: expired
    order = rng.permutation(n)
    for j in order:
        e = ids[j]
        ga, gb = 0, 0
        try:
            ga = fast.learn(e, rewards[e])
        except UnknownEvent:
            ga = -1
        try:
            gb = general.learn(e, rewards[e])
        except UnknownEvent:
            gb = -1
        assert ga == gb
    for i in range(200):  # and the slots freed are taken again
        X = rng.standard_normal((4, 3))
        ra = fast.decide(X, event_id=f"again-{i}", t=2000.0 + i)
        rb = general.decide(X.copy(), event_id=f"again-{i}", t=2000.0 + i)
        assert ra.to_dict() == rb.to_dict()
        fast.learn(f"again-{i}", 0.5 + ra.arm)
        general.learn(f"again-{i}", 0.5 + rb.arm)
    assert fast.counts == general.counts
    sa, sb = _state_arrays(fast), _state_arrays(general)
    assert sa.keys() == sb.keys()
    for key in sa:
        assert np.array_equal(sa[key], sb[key]), key


def test_open_rows_in_slots_grow_and_save():
    """More hot-path decisions open than slots: the slots double, the rows already there
    stay, and a saved state holds each open decision's own row (that of the arm played)."""
    a = Agent("lints", d=2, seed=1, propensities=False)
    rng = np.random.default_rng(2)
    rows = {}
    for i in range(2500):
        X = rng.standard_normal((3, 2))
        rows[i] = X[a.decide(X, event_id=i).arm].copy()
    manifest, arrays = a.to_state()
    got = {int(r["event_id"]): x for r, x in zip(manifest["open"], arrays["open.x"])}
    assert got.keys() == rows.keys()
    for i, x in rows.items():
        assert np.array_equal(got[i], x)
