"""DenBand, a Dynamic Ensemble of Bandit experts: Wu, Wang, Li & Wang, "Dynamic Ensemble of
Contextual Bandits to Satisfy Users' Changing Interests" (WWW 2019). The issue credits it
to "Wu, Iyer, Wang"; those are the authors of dLinUCB.

DenBand extends dLinUCB (:mod:`.dlinucb`) to changes that depend on the context. Each
expert's badness is judged for the arm at hand, not over the whole stream. So an expert
can stay in use for the arms where the change did not reach it. Each expert is a LinUCB
(ridge regression) with an *auditor*: a linear model of the expert's reward-estimation
error as a function of the context. The auditor is fitted on the last ``tau``
observations.

What is implemented (R = sqrt(sigma2), S = L = 1):

- Expert m: A_m = lam I + sum_{i in I_m} x_i x_i^T, b_m = sum_{i in I_m} r_i x_i,
  theta_m = A_m^-1 b_m. Width CB_m(x) = alpha(|I_m|) ||x||_{A_m^-1}, where
  alpha(n) = R sqrt(d ln(1 + n/(d lam)) + 2 ln(1/delta)) + sqrt(lam).
- Auditor of expert m, over W_m, the last min(tau, age_m) observations (every
  observation, played by whichever expert):
      beta_m = (lam I + G_W)^-1 sum_{i in W_m} x_i (r_i - x_i^T theta_m)
             = (lam I + G_W)^-1 (c_W - G_W theta_m),   G_W = sum_W x x^T,  c_W = sum_W r x.
  The residuals are taken with the *current* theta_m. Every refit changes them; the
  closed form makes the refit O(d^2), however long the window. Width
  CB^a_m(x) = alpha(|W_m|) ||x||_{(lam I + G_W)^-1}.
- Admissibility of expert m for arm x: |x^T beta_m| < CB^a_m(x) + CB_m(x) + Delta_L.
- Creation: if some arm of A_t has no admissible expert, a new expert is created.
  Its theta and beta are 0 and its window is empty, so it is admissible for every arm.
- Expert selection, per arm: among the experts admissible for x, the one with the
  smallest lower confidence bound on its error, |x^T beta_m| - CB^a_m(x).
- Arm choice: argmax over arms of x^T theta_m(x) + CB_m(x)(x), where m(x) is the expert
  selected for arm x.
- Learning from (x_t, r_t): expert m absorbs it if m is admissible for x_t and
  |x_t^T theta_m - r_t| <= CB_m(x_t) + Delta_L. Then every expert's auditor adds
  (x_t, r_t) to its window (dropping the oldest past tau) and refits.

Choices the paper leaves open, or where we depart from the authors' code (HCDM/BanditLib,
lib/DenBand.py):

- Discarding. We could not find a discard rule in the paper, and the authors' code
  never discards an expert. It builds a removal list and never uses it. An unused
  expert is kept for re-use, which is the point of DenBand. By default
  (``max_idle=None``) nothing is discarded here either. With ``max_idle=n``, an expert
  that was admissible for none of the arms offered in the last n steps is discarded.
  This is our addition, a guard on the size of the pool, not the paper's.
- The authors' code shrinks the auditor's width by a factor 0.002. Here it is the same
  self-normalised bound as the expert's. The code also stops updating experts older than
  3000 steps; that is not done here. It writes the expert's width with sigma^2 in place
  of sigma; here it is sigma.
- The authors' code builds the admissible sets arm by arm and creates the new expert at
  the first arm with none, so arms examined earlier never see it. Here a new expert
  joins every arm's admissible set, so the result does not depend on the order of the
  arms. At most one expert is created per step.
- ``lam`` is the ridge regulariser for both the expert and the auditor. ``delta`` is the
  confidence level of both widths.
- Batches: admissibility at learning time is recomputed from the state at that time. With
  a batch size of 1 that state is the one the step was selected with. Within a batch,
  observations are processed in order. No randomness is used: ``u`` is drawn and
  ignored, and arm ties go to the lowest index, expert ties to the oldest expert. A tie is
  up to rounding: scores within a relative ``TIE_RTOL`` of the best one tie (unit-norm arms
  under theta = 0 score the same but for the last bits, which would otherwise decide).

Ids: experts are numbered 0, 1, 2, ... in order of creation. Expert 0 exists from the
start and gets no "create" event. Events: "create" (bandit = new id) is stamped with the
step whose selection created the expert. "discard" (bandit = id) is stamped with the last
step of the batch. ``weights()``: the live experts, each weighted by the share of the last
offered arms it was selected for.

Two paths: the plain one below (``select``/``update``, numpy, readable) and a compiled
``run_chunk`` (:func:`allseason.kernels.denband.denband_chunk`) that keeps the same state in arrays
and makes the same decisions (tests/policies/test_fast_paths.py,
tests/policies/test_block_structure.py); a policy uses one path only.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .. import kernels
from .base import ChunkOutcome, Event, RngLike
from .compiled import Chunk, CompiledPolicy
from .params import NOISE, OPEN_UNIT, PRIOR, SCALE, WINDOW, Param
from .ridge import TIE_RTOL, BlockAware, confidence_radius, first_best


class _Expert:
    """A LinUCB expert and its auditor (a ridge model of (x, r) over the expert's window)."""

    __slots__ = ("id", "model", "audit", "last_admissible")

    def __init__(self, bid: int, model, audit, step: int):
        self.id = bid
        self.model = model  # theta_m
        self.audit = audit  # lam I + G_W, c_W over the window W_m
        self.last_admissible = step

    def beta(self) -> np.ndarray:
        """beta_m = (lam I + G_W)^-1 (c_W - G_W theta_m)."""
        a, theta = self.audit, self.model.theta
        return a.solve(a.b.reshape(-1) - a.gram(theta))


class DenBand(BlockAware, CompiledPolicy):
    """DenBand (Wu et al. 2019): a dynamic ensemble of LinUCB experts with arm-level admission.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    tau : int, default 1000
        The auditors' window: how many recent observations they fit.
    delta_l : float, default 0.25
        Δ_L, the slack of the admission and absorption tests.
    delta : float, default 0.01
        δ, the confidence level of the widths, in (0, 1).
    max_idle : int or None, default None
        Discard an expert admissible for no offered arm in that many steps (None: never, as
        in the paper).
    lam : float, default 1.0
        λ, the ridge regulariser of experts and auditors.
    sigma2 : float, default 1.0
        σ², the noise variance (R = sqrt(sigma2)).
    rng : numpy.random.Generator, int or None
        Unused by the decisions (``u`` is drawn and ignored).

    References
    ----------
    Wu, Wang, Li & Wang, "Dynamic Ensemble of Contextual Bandits to Satisfy Users' Changing
    Interests", WWW 2019.
    """

    name = "denband"
    title = "DenBand"
    help = "A dynamic ensemble of LinUCB experts: detects changes and reuses old experts"
    params = {
        "tau": Param(WINDOW, "Window of the auditors: how many recent observations they fit."),
        "delta_l": Param(SCALE, "Δ_L, the slack of the admission and absorption tests."),
        "delta": Param(OPEN_UNIT, "δ, the confidence level of the widths."),
        "max_idle": Param(
            WINDOW,
            "Discard an expert admissible for no offered arm in that "
            "many steps (None: never, as in the paper).",
            none=True,
        ),
        "lam": Param(PRIOR, "λ, the ridge regulariser."),
        "sigma2": Param(NOISE, "σ², the noise variance (the app sets it to the scenario's)."),
    }
    deterministic = True
    uses_normals = False
    family = "denband"

    def __init__(
        self,
        d: int,
        *,
        tau: int = 1000,
        delta_l: float = 0.25,
        delta: float = 0.01,
        max_idle: int | None = None,
        lam: float = 1.0,
        sigma2: float = 1.0,
        rng: RngLike = None,
    ) -> None:
        super().__init__(d, rng=rng)
        self._set_params(
            tau=tau, delta_l=delta_l, delta=delta, max_idle=max_idle, lam=lam, sigma2=sigma2
        )
        self.sigma = float(np.sqrt(self.sigma2))
        self.experts: list[_Expert] = []
        self.next_id = 0
        self._window: deque = deque(maxlen=self.tau)  # the last tau observations (x, r)
        self._share: dict[int, float] = {}
        self._create(0)  # expert 0: no event

    # -- helpers ------------------------------------------------------------------------------
    def _create(self, step: int) -> _Expert:
        e = _Expert(self.next_id, self._new_model(), self._new_model(), step)
        self.experts.append(e)
        self.next_id += 1
        return e

    def _alpha(self, n: float) -> float:
        return confidence_radius(n, self.d, self.lam, self.sigma, self.delta)

    def _assess(self, e: _Expert, arms: np.ndarray):
        """For arms (K, d): predicted reward, CB_m, |x^T beta_m|, CB^a_m and admissibility."""
        mu = arms @ e.model.theta
        cb = self._alpha(e.model.n_obs) * e.model.widths(arms)
        err = np.abs(arms @ e.beta())
        cb_a = self._alpha(e.audit.n_obs) * e.audit.widths(arms)
        return mu, cb, err, cb_a, err < cb_a + cb + self.delta_l

    # -- the protocol -------------------------------------------------------------------------
    def _select(self, arms, u, z):
        self._require_plain()
        rows = [self._assess(e, arms) for e in self.experts]
        if not rows or not np.array([r[4] for r in rows]).any(axis=0).all():
            # an arm with no admissible expert: create one (admissible for every arm)
            e = self._create(self.t)
            self._events.append(Event(self.t, "create", e.id))
            rows.append(self._assess(e, arms))
        adm = np.array([r[4] for r in rows])
        mu = np.array([r[0] for r in rows])
        cb = np.array([r[1] for r in rows])
        lcb = np.array([r[2] - r[3] for r in rows])
        lcb = np.where(adm, lcb, np.inf)
        chosen = first_best(lcb, lowest=True)  # expert selected for each arm
        cols = np.arange(arms.shape[0])
        a = int(first_best(mu[chosen, cols] + cb[chosen, cols]))
        for i in np.flatnonzero(adm.any(axis=1)):
            self.experts[i].last_admissible = self.t
        self.last_player = self.experts[chosen[a]].id
        counts = np.bincount(chosen, minlength=len(rows)) / len(cols)
        self._share = {self.experts[i].id: float(c) for i, c in enumerate(counts) if c > 0}
        return a

    def update(self, xs, rs):
        self._require_plain()
        xs, rs = np.atleast_2d(np.asarray(xs, dtype=float)), np.atleast_1d(rs)
        for x, r in zip(xs, rs):
            xr = x[None, :]
            for e in self.experts:
                mu, cb, _, _, adm = self._assess(e, xr)
                if adm[0] and abs(mu[0] - r) <= cb[0] + self.delta_l:
                    e.model.update(x, r)
            oldest = self._window[0] if len(self._window) == self.tau else None
            for e in self.experts:
                e.audit.update(x, r)
                if e.audit.n_obs > self.tau:
                    e.audit.downdate(*oldest)
            self._window.append((x.copy(), float(r)))
        if self.max_idle is not None:
            step = self.t - 1
            for e in list(self.experts):
                if step - e.last_admissible >= self.max_idle:
                    self.experts.remove(e)
                    self._events.append(Event(step, "discard", e.id))

    def weights(self):
        if self.kernel_state is not None:
            f = self.kernel_state
            n = int(f.counters[0])
            ids, w = f.experts.eids[:n].copy(), f.experts.share[:n] / f.n_arms
        else:
            ids = np.array([e.id for e in self.experts], dtype=np.int64)
            w = np.array([self._share.get(int(i), 0.0) for i in ids])
        total = w.sum()
        w = w / total if total > 0 else np.full(len(ids), 1.0 / max(len(ids), 1))
        return ids, w

    def _reset_models(self) -> None:
        for e in self.experts:
            e.model, e.audit = self._new_model(), self._new_model()

    def is_positive_definite(self):
        if self.kernel_state is not None:
            n = int(self.kernel_state.counters[0])
            ex = self.kernel_state.experts
            return all(bool(np.all(np.linalg.eigvalsh(M[:n]) > 0)) for M in (ex.mM, ex.aM))
        return all(
            e.model.is_positive_definite() and e.audit.is_positive_definite() for e in self.experts
        )

    # -- compiled path ------------------------------------------------------------------------
    def _require_plain(self):
        if self.kernel_state is not None:
            raise RuntimeError("this policy has been run with run_chunk; use one path only")

    def _kernel_params(self) -> kernels.DenBandParams:
        return kernels.DenBandParams(
            self.d,
            self.tau,
            self.delta_l,
            self.delta,
            -1 if self.max_idle is None else self.max_idle,
            self.lam,
            self.sigma,
            TIE_RTOL,
        )

    def _init_kernel_state(self, n_blocks: int, n_arms: int) -> None:
        if self.t or self.next_id != 1:
            raise RuntimeError("run_chunk must start from a fresh policy")
        self.kernel_state = kernels.new_denband_state(
            n_blocks, self.d // n_blocks, n_arms, self.tau, self.lam
        )

    def _state_blocks(self) -> int:
        return self.kernel_state.experts.mb.shape[1]

    def _play(self, chunk: Chunk) -> ChunkOutcome:
        # u is drawn (by run_chunk) and ignored, as on the plain path
        f, n, nb, batch_end = self.kernel_state, chunk.n, chunk.n_batches, chunk.rounds.batch_end
        G = self._state_blocks()
        p = self.d // G
        arm = np.empty(n, dtype=np.int64)
        reward = np.empty(n)
        player = np.empty(n, dtype=np.int64)
        nw = np.zeros(nb, dtype=np.int64)
        rows = []  # (first batch, last batch + 1, wids, w) of each kernel call
        ev = kernels.new_events(2 * n + len(f.experts.eids))
        f.counters[2] = 0
        rounds, ev_args = chunk.kernel_rounds, tuple(ev)
        b0 = 0
        while b0 < nb:
            cap = len(f.experts.eids)
            start = 0 if b0 == 0 else int(batch_end[b0 - 1]) + 1
            need = int(f.counters[0]) + int(batch_end[b0]) - start + 1
            if need > cap:  # room for one new expert per step of the batch
                cap = max(2 * cap, need)
                experts = kernels.grow_experts(f.experts, int(f.counters[0]), cap, G, p)
                f = self.kernel_state = f._replace(experts=experts)
            wids = np.full((nb, cap), -1, dtype=np.int64)
            w = np.zeros((nb, cap))
            out = kernels.DenBandOut(arm, reward, player, wids, w, nw)
            state, params = self._kernel_args()  # plain tuples: numba types them fast
            b1 = kernels.denband_chunk(rounds, b0, chunk.t0, state, params, tuple(out), ev_args)
            rows.append((b0, b1, wids, w))
            b0 = b1
        width = int(nw.max())
        weight_ids = np.full((nb, width), -1, dtype=np.int64)
        weights = np.zeros((nb, width))
        for lo, hi, wids, w in rows:  # a call before the arrays grew has fewer columns
            k = min(width, wids.shape[1])
            weight_ids[lo:hi, :k] = wids[lo:hi, :k]
            weights[lo:hi, :k] = w[lo:hi, :k]
        names = kernels.EVENT_NAMES
        events = [
            Event(int(ev.step[j]), names[int(ev.kind[j])], int(ev.bandit[j]))
            for j in range(int(f.counters[2]))
        ]
        self.next_id = int(f.counters[1])
        self.last_player = int(player[-1])
        return ChunkOutcome(arm, reward, player, batch_end, weight_ids, weights, events)
