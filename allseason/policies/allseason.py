"""All-Season (Di Benedetto, Bellini, Zappella), Algorithm 1, batch version.

Base bandits (long-term memory, LinTS on the steps they played) plus one shadow bandit
(short-term memory: a sliding window of tau observations, or discount gamma). Each batch:

1. every step, a bandit j is drawn with probability omega_j and plays a Thompson step;
2. if the shadow played, a new base bandit is spawned as a copy of the shadow;
3. the shadow learns the batch whoever played; base bandits learn the steps they played;
4. above ``n_max`` base bandits, the closest pair (symmetric KL, or distance of means) is
   found and the less certain one (larger tr(M^-1)) is pruned -- the paper's text; its
   Algorithm 4 prints an argmin that would drop the *more* certain one;
5. the weights are recomputed from the posterior predictive likelihood of the batch.

Where the text and the pseudo-code disagree we follow the text:
- scores use each bandit's posterior *before* the batch, p_j(r_t | x_t, D_{t-1}) (eq.
  postpred); Algorithm 1 computes them after the update, which would score a bandit on data
  it has just learnt;
- pruning drops the less certain bandit (above);
- the shadow window is the last tau observations, max(t - tau + 1, 1) .. t.

Weighting (``weighting``):
- ``"fixed-share"`` (the default): weights carried across batches, omega_j <- omega_j *
  prod_{t in batch} p_j(r_t|x_t), normalised, then mixed with the uniform distribution,
  omega <- (1 - alpha) omega + alpha / N (Herbster & Warmuth's fixed share, the simplest case
  of Adamskiy et al. 2012's mixing of past posteriors, which the paper cites). The paper is
  silent on how a newborn starts under carried weights: with ``spawn="handover"`` (default)
  the spawned copy takes the shadow's weight over (the shadow restarts from the share
  alpha / N) and is not a pruning candidate in the batch it is born, since it has not played
  yet; with ``"copy"`` it is Algorithm 1's plain copy: both keep the weight and it can be
  pruned at once. A pruned bandit's weight is dropped.
- ``"batch"``: **the paper's printed rule** (Alg. 3), omega_j proportional to
  prod_{t in batch} p_j(r_t|x_t), the last batch alone.

Why the default is not the printed rule: read literally at batch size 1 (the paper's section
5), the printed rule lets the top weight flip from step to step and spawns a base bandit on
most steps (about 2,000 per 10,000-step run, top weight above 0.9 in 0.1% of batches), and
All-Season falls behind SW-LinTS and D-LinTS. Carried weights are our reconstruction, not
the paper's text (whose displayed equation for omega is the same last-batch product as
Algorithm 3): the evidence is the description of the paper's section-5 figure (about 16
bandits, the top weight near 1, "theta*_4 learned by bandit 16"), which carried weights
reproduce and every literal variant we tried does not, at batch size 1. The handover
matters under carried weights: with plain copies the shadow keeps half its weight, plays
again, and once n_max confident bandits exist its copies are pruned in the batch they are
born (an uncertain newborn is "close" in KL to a confident bandit, and less certain), before
they play -- a trap that spawned a base bandit on every step of a new season in 1 run in 25. The
docs'
"The weighting evidence" (docs/weighting.md) has the sweep behind the default share.
All weights live in log space and are normalised with log-sum-exp.

Bandit ids are stable: the shadow is 0, base bandits are 1, 2, 3, ... in order of creation.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .. import kernels
from ..models import GaussianLinearPosterior, logsumexp, mean_distance, symmetric_kl
from .base import ChunkOutcome, Event, PosteriorBlocks, RngLike
from .compiled import Chunk, CompiledPolicy, events_of
from .params import BANDITS, NOISE, OPEN_UNIT, PRIOR, WINDOW, Options, Param

WEIGHTINGS = ("batch", "fixed-share")  # the kernel's codes: the index in these tuples
PRUNINGS = ("kl", "mean")
DEFAULT_SHARE = 1e-4  # chosen by examples/sweep_share.toml; docs/weighting.md


class AllSeason(CompiledPolicy):
    """All-Season with a sliding-window shadow (``allseason-sw``).

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    tau : int, default 10
        The shadow's window: how many recent observations the short-term memory sees.
    n_max : int, default 5
        Most base bandits (long-term memories) kept; the closest pair is pruned above it.
    lam : float, default 1.0
        λ, the prior precision of every bandit.
    sigma2 : float, default 1.0
        σ², the noise variance of the reward model.
    weighting : {"fixed-share", "batch"}, default "fixed-share"
        "fixed-share": weights carried from batch to batch, mixed with ``share`` of uniform
        weight (our reconstruction); "batch": the paper's printed rule (Alg. 3), the
        predictive likelihood of the last batch alone.
    share : float, default 1e-4
        α of fixed share, in (0, 1).
    spawn : {"handover", "copy"}, default "handover"
        Under fixed share, how a newborn starts: it takes the shadow's weight over and is not
        pruned before it has played ("handover"), or the paper's plain copy ("copy").
    pruning : {"kl", "mean"}, default "kl"
        The distance of the closest pair: symmetric KL between posteriors, or between means.
    rng : numpy.random.Generator, int or None
        Root of the random streams (u: which bandit plays; z: the Thompson samples).

    References
    ----------
    Di Benedetto, Bellini & Zappella, "A Linear Bandit for Seasonal Environments",
    Algorithms 1-4. Herbster & Warmuth, "Tracking the Best Expert", Machine Learning 1998
    (fixed share).

    Examples
    --------
    >>> import numpy as np
    >>> policy = AllSeason(2, tau=5, n_max=3, rng=0)
    >>> arm = policy.select(np.eye(2))
    >>> policy.update(np.eye(2)[[arm]], np.array([1.0]))
    >>> ids, weights = policy.weights()
    >>> ids.tolist(), round(float(weights.sum()), 12)
    ([0, 1], 1.0)
    """

    name = "allseason-sw"
    title = "All-Season (SW)"
    help = "All-Season, shadow with a sliding window (the paper's algorithm)"
    style = {"color": "blue", "dash": "solid", "symbol": "circle"}
    params = {
        "tau": Param(WINDOW, "Window: how many recent steps the short-term memory sees."),
        "n_max": Param(
            BANDITS,
            "Most base bandits (long-term memories) kept; the closest pair is pruned above it.",
        ),
        "lam": Param(PRIOR, "λ, the prior precision: larger means a stronger pull of θ towards 0."),
        "sigma2": Param(
            NOISE,
            "σ², the noise variance of the reward model (the app sets it to the scenario's).",
        ),
        "weighting": Param(
            Options("fixed-share", "batch"),
            "fixed-share (default): weights carried from batch to batch, mixed "
            "with a little uniform weight. batch: the paper's printed rule, the "
            "predictive likelihood of the last batch alone.",
        ),
        "share": Param(
            OPEN_UNIT,
            "Fixed-share mixing α: the share of weight spread uniformly after each batch.",
        ),
        "spawn": Param(
            Options("handover", "copy"),
            "Under fixed share, how a newborn base bandit starts. handover "
            "(default): it takes the shadow's weight over and is not pruned before "
            "it has played; copy: the paper's plain copy, both keep the weight.",
        ),
        "pruning": Param(
            Options(*PRUNINGS),
            "kl: closest pair by symmetric KL between posteriors; mean: by distance of means.",
        ),
    }
    family = "allseason"
    shallow_fork = True
    _shadow_mode = kernels.WINDOW

    def __init__(
        self,
        d: int,
        *,
        tau: int = 10,
        n_max: int = 5,
        lam: float = 1.0,
        sigma2: float = 1.0,
        weighting: str = "fixed-share",
        share: float = DEFAULT_SHARE,
        spawn: str = "handover",
        pruning: str = "kl",
        rng: RngLike = None,
    ) -> None:
        super().__init__(d, rng=rng)
        self._set_params(
            tau=tau,
            n_max=n_max,
            lam=lam,
            sigma2=sigma2,
            weighting=weighting,
            share=share,
            spawn=spawn,
            pruning=pruning,
        )
        self._shadow_gamma = 1.0  # the discounted variant sets its gamma here
        # slots: 0 is the shadow, 1..n_max+1 base bandits (None = empty); same order as the kernel
        n_slots = self.n_max + 2
        self.slots: list[GaussianLinearPosterior | None] = [None] * n_slots
        self.ids = np.full(n_slots, -1, dtype=np.int64)
        self.logw = np.full(n_slots, -np.inf)
        for s, bid in ((0, 0), (1, 1)):  # Alg. 1 init: S, L_1 = Init(empty); omega = 0.5, 0.5
            self.slots[s] = GaussianLinearPosterior(self.d, self.lam, self.sigma2)
            self.ids[s] = bid
            self.logw[s] = np.log(0.5)
        self.next_id = 2
        self._window: deque[tuple[np.ndarray, float]] = deque(maxlen=self.tau)  # (x, r)
        self._batch_slots: list[int] = []

    # -- plain path ---------------------------------------------------------------------------
    def _alive(self):
        return np.array([m is not None for m in self.slots])

    def _select(self, arms, u, z):
        if not self._batch_slots:  # the first step of a batch fixes the weights
            self._w = np.where(self._alive(), np.exp(self.logw - logsumexp(self.logw)), 0.0)
        cum = np.cumsum(self._w)
        alive = np.flatnonzero(self._alive())
        hits = np.flatnonzero((u < cum) & self._alive())
        j = int(hits[0]) if len(hits) else int(alive[-1])
        self._batch_slots.append(j)
        self.last_player = int(self.ids[j])
        return int(np.argmax(arms @ self.slots[j].sample(z)))

    def update(self, xs, rs):
        if self.kernel_state is not None:
            raise RuntimeError("this policy has been run with run_chunk; use one path only")
        xs, rs = np.atleast_2d(xs), np.atleast_1d(rs)
        step = self.t - 1
        played = self._batch_slots
        self._batch_slots = []
        ll = np.full(len(self.slots), -np.inf)
        for s, m in enumerate(self.slots):  # scores with the pre-batch posteriors
            if m is not None:
                ll[s] = m.log_predictive(xs, rs).sum()
        born = None
        if 0 in played:  # spawn a base bandit, copy of the shadow
            k = born = next(s for s in range(1, len(self.slots)) if self.slots[s] is None)
            self.slots[k] = self.slots[0].copy()
            self.ids[k], ll[k], self.logw[k] = self.next_id, ll[0], self.logw[0]
            self._events.append(Event(step, "spawn", self.next_id, 0))
            self.next_id += 1
        self._learn_shadow(xs, rs)
        for s, x, r in zip(played, xs, rs):
            if s > 0:
                self.slots[s].update(x, r)
        n_base = sum(m is not None for m in self.slots[1:])
        shielded = None  # handover: a newborn has not played yet; not a candidate this batch
        if self._handover and born is not None and n_base - 1 >= 2:
            shielded, self.slots[born] = self.slots[born], None
        while n_base > self.n_max:
            n_base -= 1
            drop, twin, dist = self._closest_pair()
            self._events.append(
                Event(step, "prune", int(self.ids[drop]), int(self.ids[twin]), dist)
            )
            self.slots[drop], self.ids[drop] = None, -1
        if shielded is not None:
            self.slots[born] = shielded
        alive = self._alive()
        self.logw = np.where(alive, ll if self.weighting == "batch" else self.logw + ll, -np.inf)
        if self._handover and 0 in played:  # the newborn takes the shadow's weight over
            self.logw[0] = -np.inf
        self.logw = self.logw - logsumexp(self.logw[alive])
        if self.weighting == "fixed-share":
            w = (1 - self.share) * np.exp(self.logw) + self.share / alive.sum()
            self.logw = np.where(alive, np.log(w), -np.inf)

    @property
    def _handover(self) -> bool:
        return self.weighting == "fixed-share" and self.spawn == "handover"

    def _learn_shadow(self, xs, rs):
        shadow = self.slots[0]
        for x, r in zip(xs, rs):
            if len(self._window) == self.tau:
                shadow.downdate(*self._window[0])
            shadow.update(x, r)
            self._window.append((x.copy(), float(r)))

    def _closest_pair(self):
        base = [s for s in range(1, len(self.slots)) if self.slots[s] is not None]
        dist_fn = symmetric_kl if self.pruning == "kl" else mean_distance
        best = (np.inf, -1, -1)
        for a, i in enumerate(base):
            for j in base[a + 1 :]:
                dist = dist_fn(self.slots[i], self.slots[j])
                if dist < best[0]:
                    best = (dist, i, j)
        dist, i, j = best
        tr_i, tr_j = self.slots[i].covariance_trace(), self.slots[j].covariance_trace()
        if tr_i > tr_j or (tr_i == tr_j and self.ids[i] > self.ids[j]):
            return i, j, dist
        return j, i, dist

    def weights(self):
        if self.kernel_state is not None:
            f = self.kernel_state
            return f.ids[f.alive].copy(), np.exp(f.logw[f.alive])
        alive = self._alive()
        return self.ids[alive].copy(), np.exp(self.logw[alive])

    def posteriors(self) -> dict[int, GaussianLinearPosterior]:
        """The live bandits' posteriors by id (plain path only)."""
        return {int(self.ids[s]): m for s, m in enumerate(self.slots) if m is not None}

    def posterior_blocks(self) -> list[PosteriorBlocks] | None:
        """The live bandits' posteriors block by block, in slot order (compiled path only)."""
        f = self.kernel_state
        if f is None:
            return None
        return [PosteriorBlocks(int(f.ids[s]), f.M[s], f.mu[s]) for s in np.flatnonzero(f.alive)]

    def is_positive_definite(self):
        if self.kernel_state is not None:
            Ms = self.kernel_state.M[self.kernel_state.alive]
        else:
            Ms = [m.M for m in self.slots if m is not None]
        return all(np.all(np.linalg.eigvalsh(M) > 0) for M in Ms)

    # -- compiled path ------------------------------------------------------------------------
    def _init_kernel_state(self, n_blocks: int, n_arms: int) -> None:
        if self.t or self.next_id != 2:
            raise RuntimeError("run_chunk must start from a fresh policy")
        self.kernel_state = kernels.new_allseason_state(
            self.ids, self.logw, self._alive(), n_blocks, self.d // n_blocks, self.lam, self.tau
        )

    def _kernel_params(self) -> kernels.AllSeasonParams:
        return kernels.AllSeasonParams(
            self._shadow_mode,
            self.tau,
            self._shadow_gamma,
            self.lam,
            self.sigma2,
            self.n_max,
            WEIGHTINGS.index(self.weighting),
            self.share,
            self._handover,
            PRUNINGS.index(self.pruning),
        )

    def _state_blocks(self) -> int:
        return self.kernel_state.M.shape[1]

    def _play(self, chunk: Chunk) -> ChunkOutcome:
        f, n, nb, S = self.kernel_state, chunk.n, chunk.n_batches, len(self.slots)
        out = kernels.AllSeasonOut(
            np.empty(n, dtype=np.int64),
            np.empty(n),
            np.empty(n, dtype=np.int64),
            np.empty((nb, S), dtype=np.int64),
            np.empty((nb, S)),
        )
        ev = kernels.new_events(2 * nb)
        f.counters[1] = 0
        state, params = self._kernel_args()
        args = chunk.kernel_rounds, chunk.u, chunk.z, chunk.t0, state, params
        kernels.allseason_chunk(*args, tuple(out), tuple(ev))
        self.last_player = int(out.player[-1])
        events = events_of(ev, int(f.counters[1]))
        ends = chunk.rounds.batch_end
        return ChunkOutcome(out.arm, out.reward, out.player, ends, out.wids, out.w, events)


class AllSeasonDiscounted(AllSeason):
    """All-Season with a discounted shadow (``allseason-disc``): the shadow weighs each
    observation by gamma^(age) instead of keeping a window.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    gamma : float, default 0.9
        The shadow's discount, in (0, 1).
    n_max : int, default 5
        Most base bandits kept.
    lam : float, default 1.0
        λ, the prior precision of every bandit.
    sigma2 : float, default 1.0
        σ², the noise variance of the reward model.
    weighting : {"fixed-share", "batch"}, default "fixed-share"
        "fixed-share": weights carried from batch to batch, mixed with ``share`` of uniform
        weight (our reconstruction); "batch": the paper's printed rule (Alg. 3), the
        predictive likelihood of the last batch alone.
    share : float, default 1e-4
        α of fixed share, in (0, 1).
    spawn : {"handover", "copy"}, default "handover"
        Under fixed share, how a newborn starts: it takes the shadow's weight over and is not
        pruned before it has played ("handover"), or the paper's plain copy ("copy").
    pruning : {"kl", "mean"}, default "kl"
        The distance of the closest pair: symmetric KL between posteriors, or between means.
    rng : numpy.random.Generator, int or None
        Root of the random streams (u: which bandit plays; z: the Thompson samples).

    References
    ----------
    Di Benedetto, Bellini & Zappella, "A Linear Bandit for Seasonal Environments",
    Algorithms 1-4. Herbster & Warmuth, "Tracking the Best Expert", Machine Learning 1998
    (fixed share).
    """

    name = "allseason-disc"
    title = "All-Season (Disc)"
    help = "All-Season, shadow with discounting"
    style = {"color": "vermillion", "dash": "solid", "symbol": "diamond"}
    params = {
        "gamma": Param(
            OPEN_UNIT,
            "Discount: the weight of an observation shrinks by gamma every step (0 < gamma < 1).",
        )
    }
    _shadow_mode = kernels.DISCOUNT

    def __init__(
        self,
        d: int,
        *,
        gamma: float = 0.9,
        n_max: int = 5,
        lam: float = 1.0,
        sigma2: float = 1.0,
        weighting: str = "fixed-share",
        share: float = DEFAULT_SHARE,
        spawn: str = "handover",
        pruning: str = "kl",
        rng: RngLike = None,
    ) -> None:
        super().__init__(
            d,
            tau=1,
            n_max=n_max,
            lam=lam,
            sigma2=sigma2,
            weighting=weighting,
            share=share,
            spawn=spawn,
            pruning=pruning,
            rng=rng,
        )
        self._set_params(gamma=gamma)
        self._shadow_gamma = self.gamma

    def _learn_shadow(self, xs, rs):
        for x, r in zip(xs, rs):
            self.slots[0].discount(self.gamma)
            self.slots[0].update(x, r)


class AllSeasonPrinted(AllSeason):
    """All-Season (SW) with **the paper's printed rule** (``allseason-sw-printed``): the
    weights of Algorithm 3, the predictive likelihood of the last batch alone. The same as
    ``allseason-sw`` with ``weighting="batch"``; registered on its own so that a race can hold
    it beside the default (carried weights) as a contestant of its own.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    tau : int, default 10
        The shadow's window.
    n_max : int, default 5
        Most base bandits kept.
    lam : float, default 1.0
        λ, the prior precision.
    sigma2 : float, default 1.0
        σ², the noise variance.
    pruning : {"kl", "mean"}, default "kl"
        The distance of the closest pair.
    rng : numpy.random.Generator, int or None
        Root of the random streams.

    References
    ----------
    Di Benedetto, Bellini & Zappella, "A Linear Bandit for Seasonal Environments", Alg. 3.
    """

    name = "allseason-sw-printed"
    title = "All-Season (SW), printed rule"
    help = (
        "All-Season (SW) with the paper's printed rule: weights from the last batch alone "
        "(Algorithm 3)"
    )
    style = {"color": "reddish purple", "dash": "dash", "symbol": "x"}

    def __init__(
        self,
        d: int,
        *,
        tau: int = 10,
        n_max: int = 5,
        lam: float = 1.0,
        sigma2: float = 1.0,
        pruning: str = "kl",
        rng: RngLike = None,
    ) -> None:
        super().__init__(
            d,
            tau=tau,
            n_max=n_max,
            lam=lam,
            sigma2=sigma2,
            weighting="batch",
            pruning=pruning,
            rng=rng,
        )
