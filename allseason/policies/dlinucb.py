"""dLinUCB: Wu, Iyer & Wang, "Learning Contextual Bandits in a Non-stationary Environment"
(SIGIR 2018). A master chooses among slave LinUCB models. It scores each slave by how
often the slave's reward estimates were wrong over a sliding window. It creates a slave
when no slave is good enough and discards a slave that has become bad.

What is implemented (the paper's Algorithm 1, one observation at a time):

Slave m is a ridge regression on the observations it has absorbed, I_m:

    A_m = lam I + sum_{i in I_m} x_i x_i^T,   b_m = sum_{i in I_m} r_i x_i,   theta_m = A_m^-1 b_m

with the confidence width (Abbasi-Yadkori et al. 2011, Thm 2, with ||theta|| <= 1, ||x|| <= 1)

    CB_m(x) = alpha_m ||x||_{A_m^-1},
    alpha_m = sigma sqrt(d ln(1 + |I_m| / (d lam)) + 2 ln(1 / delta1)) + sqrt(lam).

- Arm choice (Alg. 1, line 6): the selected slave plays argmax_x  x^T theta_m + CB_m(x).
- Error indicator (line 10): after reward r_t for arm x_t, every slave m records
  e_m(t) = 1{ |x_t^T theta_m - r_t| > CB_m(x_t) + eps },  eps = sqrt(2) sigma erfinv(1 - delta1),
  so that P(|noise| > eps) = delta1 for Gaussian noise of variance sigma2.
- Badness (lines 13-15): over the slave's last n_m = min(t - t_m, tau) indicators,
  e_hat_m = (1 / n_m) sum e_m(i),   d_m = sqrt(ln(1 / delta2) / (2 n_m)).
- Master (line 4): play the slave with the smallest lower confidence bound on its badness,
  argmin_m  e_hat_m - sqrt(ln tau) d_m.
- Update (lines 11-12): slave m absorbs (x_t, r_t) only if e_m(t) = 0.
- Discard (line 18): slave m is discarded if e_hat_m > delta1 + d_m.
- Create (lines 16-17, 20-22): if no slave has e_hat_m <= tilde_delta1 + d_m (or none is
  left), a new slave (A = lam I, b = 0, empty window) is created.

Choices the paper leaves open, and how they are made here:

- The order within a step follows the authors' code (NonstationaryBanditLib, lib/dLinUCB.py).
  All indicators are computed with the slaves' models from *before* the observation. Then
  discards happen, then a creation if needed, then the surviving good slaves absorb the
  observation. A slave created at step t does not learn from observation t.
- A slave with no indicators yet (n_m = 0) has badness 0 and d_m = +inf. So it is never
  discarded, it always counts as good (no creation), and its LCB is -inf: the master plays
  a new slave at once. The authors' code instead uses a +1 in the denominator and starts
  d_m at 0.5. Ties in the LCB go to the oldest slave.
- The sqrt(ln tau) factor in the master's LCB is the one in the authors' code. The
  comparisons are "<=" for admissible and ">" for discard, also as in the authors' code.
- The bounds on ||theta|| and ||x|| in alpha_m are both 1. The paper's experiments use
  unit-norm vectors, and so does this package's linear environment. sigma = sqrt(sigma2)
  is the noise level. ``lam`` is the ridge regulariser of the papers, not a prior
  precision: the slave models are ridge regressions, not posteriors with noise sigma2.
- Batches: ``select`` uses the state left by the last ``update``. ``update`` processes
  the batch's observations in order, exactly as the sequential algorithm would. With a
  batch size of 1 this is the paper's algorithm.
- Arms are chosen by argmax with ties going to the lowest index. No randomness is used:
  the per-step uniform ``u`` is drawn (the base class does so) and ignored.

Ids: slaves are numbered 0, 1, 2, ... in order of creation. Slave 0 exists from the
start and gets no "create" event. Events: "create" (bandit = new id) and "discard"
(bandit = id, value = its badness e_hat at discard), stamped with the last step of the
batch that caused them. ``weights()`` lists the live slaves with weight 1 on the slave
the master would pick now: the master's choice is deterministic.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from .base import Event, Policy, RngLike
from .params import NOISE, OPEN_UNIT, PRIOR, WINDOW, Interval, Param, Real
from .ridge import BlockAware, confidence_radius


class _Slave:
    """One slave LinUCB and its window of error indicators."""

    __slots__ = ("id", "model", "errors", "n_errors")

    def __init__(self, bid: int, model, tau: int):
        self.id = bid
        self.model = model
        self.errors: deque[int] = deque(maxlen=tau)
        self.n_errors = 0

    def record(self, e: int) -> None:
        if len(self.errors) == self.errors.maxlen:
            self.n_errors -= self.errors[0]
        self.errors.append(e)
        self.n_errors += e

    def badness(self, delta2: float) -> tuple[float, float]:
        """(e_hat, d_m): mean error over the window and its Hoeffding radius."""
        n = len(self.errors)
        if n == 0:
            return 0.0, math.inf
        return self.n_errors / n, math.sqrt(math.log(1.0 / delta2) / (2.0 * n))


class DLinUCB(BlockAware, Policy):
    """dLinUCB (Wu, Iyer & Wang 2018): a master LinUCB over dynamically created slaves.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    tau : int, default 200
        Window of the badness estimate.
    delta1 : float, default 0.01
        δ1, the confidence level of the reward bound, and the discard threshold.
    delta2 : float, default 0.1
        δ2, the confidence level of the badness bound.
    tilde_delta1 : float, default 0.002
        The creation threshold, 0 <= tilde_delta1 <= delta1.
    lam : float, default 1.0
        λ, the ridge regulariser.
    sigma2 : float, default 1.0
        σ², the noise variance.
    rng : numpy.random.Generator, int or None
        Unused by the decisions (``u`` is drawn and ignored).

    References
    ----------
    Wu, Iyer & Wang, "Learning Contextual Bandits in a Non-stationary Environment", SIGIR 2018.
    """

    name = "dlinucb"
    title = "dLinUCB"
    help = "Dynamic LinUCB: a committee of ridge models"
    params = {
        "tau": Param(WINDOW, "Window of the badness estimate."),
        "delta1": Param(
            OPEN_UNIT, "δ1, the confidence level of the reward bound, and the discard threshold."
        ),
        "delta2": Param(OPEN_UNIT, "δ2, the confidence level of the badness bound."),
        "tilde_delta1": Param(
            Interval(Real, 0, "delta1", closed="both"), "The creation threshold, between 0 and δ1."
        ),
        "lam": Param(PRIOR, "λ, the ridge regulariser."),
        "sigma2": Param(NOISE, "σ², the noise variance (the app sets it to the scenario's)."),
    }
    deterministic = True
    uses_normals = False
    family = "ucb"

    def __init__(
        self,
        d: int,
        *,
        tau: int = 200,
        delta1: float = 0.01,
        delta2: float = 0.1,
        tilde_delta1: float = 0.002,
        lam: float = 1.0,
        sigma2: float = 1.0,
        rng: RngLike = None,
    ) -> None:
        super().__init__(d, rng=rng)
        self._set_params(
            tau=tau, delta1=delta1, delta2=delta2, tilde_delta1=tilde_delta1, lam=lam, sigma2=sigma2
        )
        from scipy.special import erfinv  # slow to import: only when used

        self.sigma = math.sqrt(self.sigma2)
        self.eps = math.sqrt(2.0) * self.sigma * float(erfinv(1.0 - self.delta1))  # line 10
        self._lcb_scale = math.sqrt(math.log(self.tau))
        self.slaves: list[_Slave] = []
        self.next_id = 0
        self._create()  # slave 0: no event

    # -- helpers ------------------------------------------------------------------------------
    def _create(self) -> int:
        bid = self.next_id
        self.slaves.append(_Slave(bid, self._new_model(), self.tau))
        self.next_id += 1
        return bid

    def _alpha(self, slave: _Slave) -> float:
        return confidence_radius(slave.model.n_obs, self.d, self.lam, self.sigma, self.delta1)

    def _lcbs(self) -> np.ndarray:
        out = np.empty(len(self.slaves))
        for i, s in enumerate(self.slaves):
            e_hat, dm = s.badness(self.delta2)
            out[i] = e_hat - self._lcb_scale * dm if math.isfinite(dm) else -math.inf
        return out

    # -- the protocol -------------------------------------------------------------------------
    def _select(self, arms, u, z):
        s = self.slaves[int(np.argmin(self._lcbs()))]  # Alg. 1, line 4
        self.last_player = s.id
        ucb = arms @ s.model.theta + self._alpha(s) * s.model.widths(arms)  # line 6
        return int(np.argmax(ucb))

    def update(self, xs, rs):
        xs, rs = np.atleast_2d(np.asarray(xs, dtype=float)), np.atleast_1d(rs)
        step = self.t - 1
        for x, r in zip(xs, rs):
            create, good, bad = True, [], []
            for s in self.slaves:
                pred = float(x @ s.model.theta)
                cb = self._alpha(s) * float(s.model.widths(x)[0])
                e = int(abs(pred - r) > cb + self.eps)  # line 10
                s.record(e)
                if not e:
                    good.append(s)
                e_hat, dm = s.badness(self.delta2)
                if e_hat <= self.tilde_delta1 + dm:  # line 16
                    create = False
                elif e_hat > self.delta1 + dm:  # line 18
                    bad.append((s, e_hat))
            for s, e_hat in bad:
                self.slaves.remove(s)
                self._events.append(Event(step, "discard", s.id, -1, e_hat))
            if create or not self.slaves:  # lines 20-22
                self._events.append(Event(step, "create", self._create()))
            for s in good:  # lines 11-12
                if s in self.slaves:
                    s.model.update(x, r)

    def weights(self):
        ids = np.array([s.id for s in self.slaves], dtype=np.int64)
        w = np.zeros(len(ids))
        w[int(np.argmin(self._lcbs()))] = 1.0
        return ids, w

    def _reset_models(self) -> None:
        for s in self.slaves:
            s.model = self._new_model()

    def is_positive_definite(self):
        return all(s.model.is_positive_definite() for s in self.slaves)
