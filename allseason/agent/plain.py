"""The agent's plain path: any registered contestant through its own ``_select`` and
``update`` (numpy), the draws given to it; the reference the compiled step is checked
against (tests/agent/test_agent.py). Functions of the agent (bound as its methods)."""

from __future__ import annotations

import math

import numpy as np

from ..kernels import agent as kagent
from ..policies import AllSeason, LinTS
from ..policies.random import RandomPolicy
from .draws import event_key


def dense_rows(self, ctx, K):
    """The policy's (K, D) rows: arms mode as given; context mode e_k (x) [c, 1]."""
    if not self.context_mode:
        return ctx
    rows = np.zeros((K, self.D))
    for k in range(K):
        rows[k, k * self.p : (k + 1) * self.p] = ctx[0]
    return rows


def decide_plain(self, ctx, event, K):
    """One decision by the policy's plain ``_select``, with pi where it can be had."""
    pol = self.policy
    rows = self._dense_rows(ctx, K)
    if self.draws == "event":
        key = event_key(self._hasher, event)
        u = kagent.fill_draws(np.uint64(key), self._zbuf)
        z = self._zbuf[0].copy() if pol.uses_normals else None
    else:
        key = 0
        u = pol._rng_u.random()
        z = pol._rng_z.standard_normal(self.D) if pol.uses_normals else None
    is_as = isinstance(pol, AllSeason)
    if self.propensities:
        pi, method, stderr = self._plain_probs(rows, ctx, K, key)
    arm = int(pol._select(rows, u, z))
    pol.t += 1
    bandit = int(pol.last_player) if is_as else -1
    if is_as:
        pol._batch_slots = []  # the agent keeps who played; weights change only at updates
    if not self.propensities:
        return arm, bandit, None, "skipped", 0.0
    return arm, bandit, pi, method, stderr


def plain_probs(self, rows, ctx, K, key):
    """pi on the plain path: random 1/K; deterministic policies one-hot (filled in after
    the choice); the LinTS family and All-Season from their posteriors (the compiled
    path's methods, in numpy); None for a policy whose pi is not known (BoB)."""
    pol = self.policy
    if isinstance(pol, RandomPolicy):
        return np.full(K, 1.0 / K), "exact-uniform", 0.0
    if pol.deterministic:
        return None, "deterministic", 0.0
    if not isinstance(pol, LinTS | AllSeason):
        return None, "unavailable", 0.0
    if isinstance(pol, AllSeason):
        alive = [s for s, m in enumerate(pol.slots) if m is not None]
        w = np.exp(pol.logw[alive] - np.max(pol.logw[alive]))
        w /= w.sum()
        models = [(pol.slots[s].mean, pol.slots[s].covariance) for s in alive]
    else:
        S = pol.model.covariance
        inner = getattr(pol, "inner", None)
        models = [(pol.model.mean, S if inner is None else S @ inner.M @ S)]
        w = np.ones(1)
    means = np.stack([rows @ m for m, _ in models])  # (S, K)
    if self.context_mode or K <= 2:
        if K == 1:
            return np.ones(1), "deterministic", 0.0
        if self.context_mode:
            from ..logs.policy_probs import gaussian_argmax_probs

            var = np.stack([np.einsum("kd,de,ke->k", rows, c, rows) for _, c in models])
            probs = gaussian_argmax_probs(means, np.maximum(var, 1e-300))
            pi = w @ np.atleast_2d(probs)
        else:
            from scipy.special import ndtr  # scipy.stats' norm.cdf

            dx = rows[0] - rows[1]
            p0 = np.array([ndtr((m @ dx) / np.sqrt(dx @ c @ dx)) for m, c in models])
            pi = np.array([w @ p0, w @ (1 - p0)])
        method = "exact-mixture" if isinstance(pol, AllSeason) else "exact-quadrature"
        return pi, method, 0.0
    from ..logs.policy_probs import mc_argmax_probs

    rng = np.random.default_rng(int(key))
    pi = sum(
        wi * mc_argmax_probs(rows @ m, rows @ c @ rows.T, rng, self.n_mc)
        for wi, (m, c) in zip(w, models)
    )
    return pi, "monte-carlo", float(np.sqrt(np.max(pi * (1 - pi)) / self.n_mc))


def update_plain(self, gs, xs, rs, bandits, step):
    """A batch update by the policy's plain ``update`` (context rows made dense first)."""
    pol = self.policy
    if self.context_mode:
        dense = np.zeros((len(rs), self.D))
        for i, g in enumerate(gs.tolist()):
            dense[i, g * self.p : (g + 1) * self.p] = xs[i]
    else:
        dense = xs
    if isinstance(pol, AllSeason):
        slots = []
        for bid in bandits.tolist():
            hit = [s for s, m in enumerate(pol.slots) if m is not None and pol.ids[s] == bid]
            slots.append(hit[0] if hit else -1)
        pol._batch_slots = slots
        t_saved = pol.t
        pol.t = step + 1  # events are stamped step = t - 1
        pol.update(dense, rs)
        pol.t = t_saved
    else:
        pol.update(dense, rs)
    out = []
    for ev in pol.pop_events():
        if ev.kind in ("spawn", "prune"):
            out.append(
                {
                    "kind": ev.kind,
                    "bandit": int(ev.bandit),
                    "other": int(ev.other),
                    "value": None if math.isnan(ev.value) else float(ev.value),
                }
            )
    return out
