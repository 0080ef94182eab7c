"""The agent's hot path (:mod:`allseason.kernels.agent_hot`: a decision without pi, a reward,
each one call holding the GIL, flat packs, the weights kept between decisions) against the
general compiled calls and the plain path, decision for decision and state bit for bit.

The general learn calls are the reference below (``_lints_learn``, ``_allseason_learn``: the
agent's learn kernels as they were before the hot path, tuple-packed, written out in this test
since nothing else calls them): Python around the same compiled batch updates
(``allseason_batch``, ``lints_batch``: loaded from numba's cache, compiled by the warm-up for the
hot path). Compiled, they would be compiled in the test (about 25 s of CPU on a fresh clone:
each links and optimises the batch update again) for no other caller; interpreted, they do
the same steps on the same arrays, so the state must still agree bit for bit."""

import types

import numpy as np
import pytest

import allseason.agent.compiled as compiled_mod
from allseason.agent import Agent
from allseason.kernels.agent_hot import unpack_decision
from allseason.kernels.allseason import allseason_batch
from allseason.kernels.lints import lints_batch

NAMES = ["allseason-sw", "allseason-disc", "allseason-sw-printed", "lints", "sw-lints", "d-lints"]


def _append(x, g, bandit, r, buf):
    """Append one resolved decision to the batch buffer; returns how many wait."""
    bx, bg, br, bb, bs, cnt = buf[:6]
    n = cnt[0]
    if g >= 0 and n < bx.shape[0]:  # the caller grows a full buffer first
        bx[n] = x
        bg[n] = g
        br[n] = r
        bb[n] = bandit
        n += 1
        cnt[0] = n
    return n


def _lints_learn(x, g, bandit, r, B, step, pack, ty=None):
    """A reward of the LinTS family's agent: into the buffer (``g`` < 0: a flush);
    ``lints_batch`` once ``B`` wait (``B`` = 0: whatever waits). -1 (no update) or 0."""
    buf = pack.buf
    n = _append(buf[6][x], g, bandit, r, buf)  # x: the row's slot
    if n == 0 or (B > 0 and n < B):
        return -1
    bx, bg, br, bb, bs, cnt = buf[:6]
    M, L, b, mu, window, Mt, Lt, bt = pack.state
    wx, wg, wr, wst = window
    lints_batch(M, L, b, mu, wx, wg, wr, wst, Mt, Lt, bt, bg[:n], bx[:n], br[:n], pack.params,
                pack.work)  # fmt: skip
    cnt[0] = 0
    return 0


def _allseason_learn(x, g, bandit, r, B, step, pack, ty=None):
    """A reward of All-Season's agent: into the buffer (``g`` < 0: a flush); ``allseason_batch``
    once ``B`` wait, each decision learnt by the slot of the bandit that played it if it is
    still alive (else by the shadow alone); the bandits' bookkeeping ``track`` = (n_obs (S,),
    born (S,), [version, window]). -1 (no update) or the number of events written."""
    buf = pack.buf
    n = _append(buf[6][x], g, bandit, r, buf)  # x: the row's slot
    if n == 0 or (B > 0 and n < B):
        return -1
    bx, bg, br, bb, bs, cnt = buf[:6]
    M, L, b, mu, ids, logw, alive, counters, window, cache = pack.state
    wx, wg, wr, wst = window
    nobs, born, info = pack.track
    ll, tmp = pack.work
    S = ids.shape[0]
    for t in range(n):
        bs[t] = -1
        for s in range(S):
            if alive[s] and ids[s] == bb[t]:
                bs[t] = s
                break
    next_id, n0 = counters[0], nobs[0]
    counters[1] = 0
    allseason_batch(
        M, L, b, mu, ids, logw, alive, counters, wx, wg, wr, wst, cache, pack.events,
        bg[:n], bx[:n], br[:n], bs[:n], step, pack.params, ll, tmp,
    )  # fmt: skip
    if counters[0] > next_id:  # a spawn: the newborn has the shadow's observations
        for s in range(S):
            if alive[s] and ids[s] == next_id:
                nobs[s] = n0
                born[s] = info[0] + 1
    for t in range(n):
        s = bs[t]
        if s > 0 and alive[s] and ids[s] == bb[t]:
            nobs[s] += 1
    nobs[0] = n0 + n if info[1] <= 0 else min(n0 + n, info[1])
    info[0] += 1  # the model version after this update
    cnt[0] = 0
    return counters[1]


def _learn_pack(buf, state, params, events, track, work):
    """The reference learn calls' fixed arguments, as attributes of a plain object."""
    return types.SimpleNamespace(
        buf=buf, state=state, params=params, events=events, track=track, work=work
    )


def _tuple_learn_entry(self):
    """The learn call as it was before the hot path: the tuple-packed reference above (nested
    tuples; interpreted, see the module docstring)."""
    f, buf = self.policy.kernel_state, self._buf
    state = self._state_tuple
    if self._is_allseason:
        fields = (self._tuple_params, self._events, self._track_arrays, self._lwork)
        fn = _allseason_learn
    else:
        fields = (self._tuple_params, 0, 0, self._tmp)
        fn = _lints_learn
    pack = _learn_pack(buf, state, *fields)  # in the place of the address (ty unused)
    got = self._learn_ep = (f, buf, fn, pack, None, pack)
    return got


def _agent(name, context, batch_size, **kw):
    hyper = {"n_max": 2, "tau": 6} if name == "allseason-sw-printed" else {}
    if context:
        kw["n_arms"] = 4
    return Agent(name, d=3, seed=5, batch_size=batch_size, propensities=False, **hyper, **kw)


def _drive(agent, n, *, context, load_at=None):
    """n decisions (arms mode: K of 1, 2 and 5 in turn), rewards two steps late; a
    to_state/from_state at ``load_at``. Returns the agent and its (arm, bandit) list."""
    rng = np.random.default_rng(9)
    theta = rng.standard_normal((4, 3))
    out, waiting = [], []
    for i in range(n):
        if i == load_at:
            fresh = Agent.from_state(*agent.to_state())
            fresh._event_fast = agent._event_fast
            agent = fresh
        if context:
            c = rng.standard_normal(3)
            rec = agent.decide(context=c, event_id=i, t=float(i))
            r = float(theta[rec.arm] @ c)
        else:
            X = rng.standard_normal(((1, 2, 5)[i % 3], 3))
            rec = agent.decide(X, event_id=f"e{i}", t=float(i))
            r = float(X[rec.arm] @ theta[0]) + (i // 40) % 2  # seasons: a spawn now and then
        out.append((rec.arm, rec.bandit, rec.model_version))
        waiting.append((rec.event_id, r + 0.3 * rng.standard_normal()))
        if len(waiting) > 2:
            agent.learn(*waiting.pop(0))
    for e, r in waiting:
        agent.learn(e, r)
    return agent, out


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("context", [True, False])
@pytest.mark.parametrize("batch_size", [1, 3])
def test_the_hot_path_is_the_general_path(name, context, batch_size, monkeypatch):
    """Hot decisions and rewards make the decisions of the general calls (decide_packed,
    compiled; the tuple-packed learn kernels, interpreted around the compiled batch updates),
    bit for bit in the state, and of the plain path (Policy._select / update)."""
    hot, got = _drive(_agent(name, context, batch_size), 150, context=context, load_at=70)
    plain, got_plain = _drive(
        _agent(name, context, batch_size, engine="plain"), 150, context=context
    )
    assert got == got_plain
    monkeypatch.setattr(compiled_mod, "_learn_entry", _tuple_learn_entry)
    general = _agent(name, context, batch_size)
    general._event_fast = False  # decide_compiled -> decide_packed, without pi
    general, got_general = _drive(general, 150, context=context, load_at=70)
    assert got == got_general
    assert hot.counts == general.counts == plain.counts
    if name == "allseason-sw-printed":  # the hot learn met spawns and prunings
        assert hot.counts["spawned"] > 2 and hot.counts["pruned"] > 0, hot.counts
    sa, sb = hot.to_state()[1], general.to_state()[1]
    assert sa.keys() == sb.keys()
    for key in sa:
        assert sa[key].tobytes() == sb[key].tobytes(), key


def test_kept_weights_follow_any_change_of_the_log_weights():
    """The weights a hot decision keeps from the last are recomputed when the log weights or
    the live slots changed, whoever changed them (here: in place, by hand)."""
    a = _agent("allseason-sw-printed", False, 1)
    a, _ = _drive(a, 120, context=False)
    b = Agent.from_state(*a.to_state())
    b._event_fast = False
    X = np.random.default_rng(1).standard_normal((5, 3))
    for i, change in enumerate([None, "swap", "kill", None]):
        for agent in (a, b):
            f = agent.policy.kernel_state
            live = np.flatnonzero(f.alive)
            if change == "swap":
                f.logw[live] = f.logw[live][::-1].copy()
            elif change == "kill" and len(live) > 2:
                f.alive[live[-1]] = False
                f.logw[live[-1]] = -np.inf
        for j in range(20):
            ra = a.decide(X, event_id=f"k{i}-{j}")
            rb = b.decide(X, event_id=f"k{i}-{j}")
            assert (ra.arm, ra.bandit) == (rb.arm, rb.bandit)
        assert np.array_equal(a._w, b._w)


@pytest.mark.parametrize("arm, bandit", [(0, -1), (4, 0), (99_999, 7), (3, 2**30)])
def test_a_decision_int_unpacks(arm, bandit):
    """decide_hot's int: arm + (bandit id + 1) << 32, read back."""
    assert unpack_decision(arm + ((bandit + 1) << 32)) == (arm, bandit)


@pytest.mark.parametrize("context", [True, False])
def test_pi_switched_on_after_hot_decisions_is_computed(context):
    """An agent whose decisions took the hot path (no pi) computes pi again once
    ``propensities`` is switched on (the hot pack of a K is not taken then)."""
    a = _agent("allseason-sw", context, 1)
    a, _ = _drive(a, 10, context=context)
    probe = {"context": np.zeros(3)} if context else {"arms": np.ones((5, 3))}
    assert a.decide(**probe, event_id="off").pi_method == "skipped"
    a.propensities = True
    rec = a.decide(**probe, event_id="on")
    assert rec.pi_method in ("exact-mixture", "monte-carlo") and rec.propensity > 0
