"""Off-policy estimators with the policy's own probabilities pi_t(a | x_t) (Dudik, Langford
and Li 2011; OBP's ``obp/ope/estimators.py``), for one (policy, seed) run over a log.

With ``w_t = pi_t(a_t | x_t) / p_t`` (``a_t``, ``p_t``: the logged arm and propensity):

- IPS ``(1/n) sum_t w_t r_t``; self-normalised IPS ``sum_t w_t r_t / sum_t w_t``;
- DM ``(1/n) sum_t sum_a pi_t(a | x_t) r^(x_t, a)``, with a reward model r^ cross-fitted on
  the log (:func:`reward_model`);
- DR: DM plus ``(1/n) sum_t w_t (r_t - r^(x_t, a_t))``.

Why pi in place of the realised draw's indicator keeps IPS unbiased: given the history up to
event t (the log so far and the policy's own past draws), the policy's draw A_t has the
distribution pi_t(. | x_t), so ``E[1[A_t = a_t] | history] = pi_t(a_t | x_t)``; the
pi-weighted term is the conditional expectation of the realised-draw term, with the same
mean and a variance no larger (Rao-Blackwell). The policy still *learns* on the events where
its realised draw matched the logged arm, as in replay. ESS = ``(sum w)^2 / sum w^2``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import SpecError
from .intervals import block_ids, block_sums

RIDGE = 1.0  # the reward model's ridge (a prior of one pseudo-event at the half's mean)
#: per run, the block sums kept for the intervals: name -> (numerator, denominator)
RATIOS = {
    "replay": ("r_keep", "n_keep"),
    "ips": ("wr", "one"),
    "snips": ("wr", "w"),
    "dm": ("dm", "one"),
    "dr": ("dr", "one"),
}


def propensities(log) -> np.ndarray:
    """The logged propensities, or 1/K for every event when the log has none (uniform
    logging assumed, as the output says)."""
    if log.propensity is not None:
        return log.propensity
    return np.full(log.n_events, 1.0 / log.n_arms)


@dataclass(frozen=True)
class RewardModel:
    """The cross-fitted reward model, kept small: per half of the log (0: the first, 1: the
    second, each predicted from the model fitted on the other), ``base`` (2,) and ``theta``
    (2, K, p); ``split``: the first event of the second half."""

    base: np.ndarray
    theta: np.ndarray
    split: int

    def predict(self, contexts: np.ndarray, events: np.ndarray) -> np.ndarray:
        """r^(x_t, .) for the given events (indices) and their contexts, shape (m, K)."""
        h = (np.asarray(events) >= self.split).astype(np.int64)
        out = self.base[h][:, None] + np.einsum("mp,mkp->mk", contexts, self.theta[h])
        return np.clip(out, 0.0, 1.0)


def fit_reward_model(log, lam: float = RIDGE) -> RewardModel:
    """A ridge regression per arm on the context (with its constant), fitted on each half of
    the log in time and applied to the OTHER half (cross-fitting: an event's prediction
    never uses its own reward); each event weighted by 1/propensity (normalised to mean 1 per
    arm: an adaptive logger's per-arm means are otherwise biased low, measured in
    benchmarks/ope_coverage.py), shrunk towards that half's mean reward; clipped to [0, 1]."""
    n, K = log.n_events, log.n_arms
    X, r, arm = log.contexts, log.reward, log.arm
    iw = 1.0 / propensities(log)
    split = n // 2
    second = np.arange(n) >= split
    p = X.shape[1]
    base, theta = np.zeros(2), np.zeros((2, K, p))
    for h in (0, 1):
        fit = second != bool(h)  # half h is predicted from the other half
        if not fit.any():
            fit = ~fit
        base[h] = float(r[fit].mean())
        for a in range(K):
            sel = fit & (arm == a)
            Xa, ya = X[sel], r[sel] - base[h]
            wa = iw[sel] / iw[sel].mean() if sel.any() else iw[sel]
            theta[h, a] = np.linalg.solve((Xa.T * wa) @ Xa + lam * np.eye(p), (Xa.T * wa) @ ya)
    return RewardModel(base, theta, split)


def reward_model(log, lam: float = RIDGE) -> np.ndarray:
    """r^(x_t, a) for every event and arm, shape (n, K): :func:`fit_reward_model` applied to
    the whole log."""
    model = fit_reward_model(log, lam)
    return model.predict(log.contexts, np.arange(log.n_events))


def run_terms(
    log, keep: np.ndarray, pi: np.ndarray | None, rhat: np.ndarray, drawn: np.ndarray | None
) -> dict:
    """One run's estimates, ESS and block sums.

    Parameters
    ----------
    log : Log
        The log.
    keep : ndarray of bool, shape (n,)
        The events the policy kept (its realised draw matched the logged arm).
    pi : ndarray, shape (n, K), or None
        pi_t(. | x_t); None: the realised draw's one-hot (``drawn``).
    rhat : ndarray, shape (n, K)
        The reward model (:func:`reward_model`).
    drawn : ndarray of int, shape (n,), or None
        The arm the policy drew at every event.

    Returns
    -------
    dict: ``kept``; per method (replay, ips, snips, dm, dr) its estimate, its ``_n`` (kept
    events, or the ESS of w, also for DM) and ``sums`` (name -> block sums, for the intervals);
    ``ess_draw``: the ESS of IPS on the realised draw (what it was before pi); ``pi_known``.
    """
    n, K = log.n_events, log.n_arms
    if pi is None and drawn is None:
        raise ValueError("run_terms needs pi or the realised draws")
    known = pi is not None
    if pi is None:
        pi = np.zeros((n, K))
        pi[np.arange(n), drawn] = 1.0
    t = np.arange(n)
    return event_terms(log, keep, pi[t, log.arm], (pi * rhat).sum(axis=1), rhat[t, log.arm], known)


def event_terms(
    log, keep: np.ndarray, pi_a: np.ndarray, dm: np.ndarray, rhat_a: np.ndarray, pi_known: bool
) -> dict:
    """:func:`run_terms` from per-event arrays, shape (n,) each: ``pi_a`` = pi_t(a_t | x_t),
    ``dm`` = sum_a pi_t(a | x_t) r^(x_t, a), ``rhat_a`` = r^(x_t, a_t) (memory O(n), not
    O(n K))."""
    n = log.n_events
    r = log.reward
    prop = propensities(log)
    inv = 1.0 / prop  # finite: the reader keeps propensities in [MIN_PROPENSITY, 1]
    w = pi_a * inv
    w_draw = keep * inv
    dr = dm + w * (r - rhat_a)
    values = dict(
        r_keep=r * keep, n_keep=keep.astype(float), wr=w * r, w=w, one=np.ones(n), dm=dm, dr=dr
    )
    blocks = block_ids(n)
    nb = int(blocks[-1]) + 1
    names = list(values)
    sums = dict(zip(names, block_sums(np.stack([values[k] for k in names]), blocks, nb)))
    kept = int(keep.sum())
    estimates: dict[str, float] = {}
    for method, (top, bottom) in RATIOS.items():
        den = float(sums[bottom].sum())
        estimates[method] = float(sums[top].sum()) / den if den > 0 else math.nan
    out = dict(kept=kept, sums=sums, pi_known=pi_known, **estimates)
    out["replay_n"] = float(kept)
    out["ips_n"] = out["snips_n"] = out["dr_n"] = _ess(w)
    out["dm_n"] = out["ips_n"]  # DM's variance is that of a mean over the same weights
    out["ess_draw"] = _ess(w_draw)
    for method, v in estimates.items():
        if method != "replay" and not math.isfinite(v):
            raise SpecError(
                "reward",
                f"{method}: the estimate is not a finite number (the rewards or the "
                f"weights overflow); rescale the rewards or check the propensities",
            )
    return out


def model_at(model: RewardModel, log, arms: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    """r^(x_t, arms[t]) for every event, shape (n,), computed by chunks (memory O(chunk K))."""
    out = np.empty(log.n_events)
    for s in range(0, log.n_events, chunk):
        idx = np.arange(s, min(s + chunk, log.n_events))
        pred = model.predict(log.contexts[idx], idx)
        out[idx] = pred[np.arange(len(idx)), arms[idx]]
    return out


def _ess(w: np.ndarray) -> float:
    sw, sw2 = float(w.sum()), float((w * w).sum())
    return sw * sw / sw2 if sw2 > 0 else 0.0


__all__ = [
    "RewardModel",
    "fit_reward_model",
    "reward_model",
    "run_terms",
    "event_terms",
    "model_at",
    "propensities",
    "RATIOS",
    "RIDGE",
]
