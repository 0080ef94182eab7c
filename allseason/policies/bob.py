"""BoB, Bandit-over-Bandits: Cheung, Simchi-Levi & Zhu, "Learning to Optimize under
Non-Stationarity" (AISTATS 2019). An EXP3 master picks, for each block of H steps, the
window size w of a sliding-window LinUCB (SW-UCB). The SW-UCB is restarted at every block.

Equations implemented (T = ``horizon``, R = sqrt(sigma2), delta = 1/T):

- Block length and window set (the paper's choice for linear bandits, which the
  All-Season paper cites as "equation (23)" of the BoB paper):

      H = ceil(d sqrt(T)),   Delta_H = ceil(ln H),
      J = { floor(H^(k / Delta_H)) : k = 0, 1, ..., Delta_H }   (from 1 up to H).

  The floor is taken of H^(k/Delta_H) + 1e-9, so that exact integer powers (H = 8, k = 1)
  are not lost to rounding. Repeated values are kept as separate EXP3 arms, as the
  formula gives them. H = 1 gives J = {1}.
- Base bandit in block i with window w (SW-UCB): with s_0 = max((i-1)H + 1, t - w), the
  observations of the current block inside the window are used:

      V_{t-1} = lam I + sum_{s=s_0}^{t-1} x_s x_s^T,
      theta_t = V_{t-1}^-1 sum_{s=s_0}^{t-1} r_s x_s,
      x_t = argmax_x  x^T theta_t + beta_w ||x||_{V_{t-1}^-1},
      beta_w = R sqrt(d ln((1 + w L^2 / lam) / delta)) + sqrt(lam) S.

- EXP3 master over the |J| windows (Auer et al. 2002, as used in BoB):

      gamma = min(1, sqrt(|J| ln|J| / ((e - 1) ceil(T/H)))),
      p_j   = (1 - gamma) s_j / sum_k s_k + gamma / |J|,
      block reward rescaled to [0, 1]:
          rhat = 1/2 + (sum of the block's rewards) / (2 (H L S + 2 R sqrt(H ln(T / sqrt H)))),
      s_j <- s_j exp(gamma rhat / (|J| p_j))   for the window j that was played.

  The weights s_j are kept as logs and normalised with log-sum-exp (max shift).

Choices, and what the paper leaves open:

- Base bandit: SW-UCB, as in the paper, not a Thompson variant. S and L (the paper's bounds
  on ||theta|| and ||x||, grid {0.1, 1, 10} in the All-Season paper) enter only through
  beta_w and the reward rescaling. A Thompson base would drop beta_w, and with it the
  role of S and L. ``lam`` is the ridge regulariser of the paper, and sigma2 sets R.
- rhat is clipped to [0, 1]. The paper's bound on a block's total reward holds only
  with high probability.
- A block whose rewards have not all arrived when the next block starts (a batch that
  spans the boundary) updates EXP3 when its last reward arrives, with the probability
  at which its window was drawn. Its late observations are not given to the new block's
  SW-UCB, which has been restarted.
- Runs longer than ``horizon`` go on with the same H, J and gamma. Every block has H
  steps. The paper's last, shorter block is simply the block during which the run ends;
  it never updates EXP3.
- Randomness: the window of a block is drawn by inverting EXP3's distribution at the
  ``u`` of the block's first step. The other steps' ``u`` are ignored. Arm ties go to the
  lowest index (up to rounding: :data:`~allseason.policies.ridge.TIE_RTOL`). This happens
  at each block start, where theta = 0 and all unit-norm arms score the same.
- The window is counted in observations (the last w of the block), as in the paper with
  one observation per step.

Two paths: the plain ``select``/``update`` loop, and a compiled ``run_chunk`` in which the
SW-UCB steps run in :func:`allseason.kernels.ridge.bob_chunk` while EXP3 (draws, updates) runs here,
between batches; same decisions (tests/policies/test_fast_paths.py). A policy uses one path only.

Ids: ``last_player`` is the index j of the window in J (0 .. |J|-1). ``weights()`` returns
these ids with EXP3's current probabilities p_j, the distribution from which the next block's
window will be drawn. Events: one "window" per block, stamped with the block's first step
(0-based), with bandit = j, other = the block index and value = the window w = J[j].
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from .. import kernels
from .base import ChunkOutcome, Event, RngLike
from .compiled import Chunk, CompiledPolicy
from .params import HORIZON, NOISE, PRIOR, SCALE, Param
from .ridge import TIE_RTOL, BlockAware, first_best


def block_length(d: int, horizon: int) -> int:
    """H = ceil(d sqrt(T)), the length of BoB's blocks.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    horizon : int
        T.

    Returns
    -------
    int
        At least 1.
    """
    return max(1, math.ceil(d * math.sqrt(horizon)))


def window_set(H: int) -> np.ndarray:
    """J = {floor(H^(k / ceil(ln H))) : k = 0 .. ceil(ln H)}, BoB's candidate windows.

    Parameters
    ----------
    H : int
        The block length.

    Returns
    -------
    ndarray of int64
        The windows, increasing (``[1]`` when H <= 1).
    """
    if H <= 1:
        return np.array([1], dtype=np.int64)
    n = math.ceil(math.log(H))
    return np.array([math.floor(H ** (k / n) + 1e-9) for k in range(n + 1)], dtype=np.int64)


class BoB(BlockAware, CompiledPolicy):
    """Bandit-over-Bandits (Cheung, Simchi-Levi & Zhu 2019): EXP3 over SW-UCB window sizes.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    horizon : int, default 10000
        T, the horizon: it fixes the block length H = ceil(d sqrt(T)), the window set J and
        EXP3's rate.
    S : float, default 1.0
        Bound on ||theta||.
    L : float, default 1.0
        Bound on ||x||.
    lam : float, default 1.0
        λ, the ridge regulariser.
    sigma2 : float, default 1.0
        σ², the noise variance (R = sqrt(sigma2)).
    rng : numpy.random.Generator, int or None
        Root of the random streams (u draws each block's window).

    References
    ----------
    Cheung, Simchi-Levi & Zhu, "Learning to Optimize under Non-Stationarity", AISTATS 2019.
    Auer, Cesa-Bianchi, Freund & Schapire, "The Nonstochastic Multiarmed Bandit Problem",
    SIAM J. Comput. 2002 (EXP3).

    Examples
    --------
    >>> policy = BoB(5, horizon=10_000)
    >>> policy.block, policy.windows.tolist()
    (500, [1, 2, 5, 14, 34, 84, 205, 500])
    """

    name = "bob"
    title = "BoB"
    help = "Bandit-over-bandits: learns the window size"
    style = {"color": "wine"}
    params = {
        "horizon": Param(
            HORIZON,
            "T, the horizon: it fixes the block length, the window set "
            "and EXP3's rate (the app sets it to the scenario's).",
        ),
        "S": Param(SCALE, "Bound on the norm of θ."),
        "L": Param(SCALE, "Bound on the norm of the arms."),
        "lam": Param(PRIOR, "λ, the ridge regulariser."),
        "sigma2": Param(NOISE, "σ², the noise variance (the app sets it to the scenario's)."),
    }
    uses_normals = False
    family = "ucb"

    def __init__(
        self,
        d: int,
        *,
        horizon: int = 10000,
        S: float = 1.0,
        L: float = 1.0,
        lam: float = 1.0,
        sigma2: float = 1.0,
        rng: RngLike = None,
    ) -> None:
        super().__init__(d, rng=rng)
        self._set_params(horizon=horizon, S=S, L=L, lam=lam, sigma2=sigma2)
        T, R = self.horizon, math.sqrt(self.sigma2)
        self.block = block_length(self.d, T)  # H
        self.windows = window_set(self.block)  # J
        n_w = len(self.windows)
        self.n_blocks = math.ceil(T / self.block)
        self.gamma = (
            min(1.0, math.sqrt(n_w * math.log(n_w) / ((math.e - 1) * self.n_blocks)))
            if n_w > 1
            else 0.0
        )
        self.delta = 1.0 / T
        self.reward_scale = 2.0 * (
            self.block * self.L * self.S
            + 2.0 * R * math.sqrt(self.block * max(math.log(T / math.sqrt(self.block)), 0.0))
        )
        self.logw = np.zeros(n_w)  # log s_j
        self.model = self._new_model()
        self._obs: deque = deque()
        self._current = -1  # index of the block being played
        self._w = 1
        self._beta = 0.0
        # block index -> [j, p_j, sum of rewards received, number received]
        self._pending: dict[int, list] = {}

    # -- EXP3 ---------------------------------------------------------------------------------
    def probabilities(self) -> np.ndarray:
        """p_j = (1 - gamma) s_j / sum s + gamma / |J|."""
        w = np.exp(self.logw - self.logw.max())  # log-sum-exp normalisation
        return (1.0 - self.gamma) * w / w.sum() + self.gamma / len(self.windows)

    def rescale(self, block_reward: float) -> float:
        """rhat = 1/2 + block_reward / (2 (H L S + 2 R sqrt(H ln(T / sqrt H)))), clipped."""
        return min(1.0, max(0.0, 0.5 + block_reward / self.reward_scale))

    def _exp3_update(self, j: int, p: float, block_reward: float) -> None:
        n_w = len(self.windows)
        self.logw[j] += self.gamma * self.rescale(block_reward) / (n_w * p)
        self.logw -= self.logw.max()  # keep the logs bounded; p is unchanged

    def _start_block(self, block: int, u: float) -> None:
        self._draw_window(block, u, self.t)
        self.model = self._new_model()  # SW-UCB restarts at every block
        self._obs.clear()

    def _draw_window(self, block: int, u: float, step: int) -> None:
        """EXP3 draws the window of a new block (at ``step``, with that step's u)."""
        p = self.probabilities()
        j = min(int(np.searchsorted(np.cumsum(p), u, side="right")), len(p) - 1)
        self._pending[block] = [j, float(p[j]), 0.0, 0]
        self._current = block
        self._w = int(self.windows[j])
        self._beta = (
            math.sqrt(self.sigma2)
            * math.sqrt(self.d * math.log((1.0 + self._w * self.L**2 / self.lam) / self.delta))
            + math.sqrt(self.lam) * self.S
        )
        self._events.append(Event(step, "window", j, block, float(self._w)))

    # -- the protocol -------------------------------------------------------------------------
    def _select(self, arms, u, z):
        self._require_plain()
        block = self.t // self.block
        if block != self._current:
            self._start_block(block, u)
        self.last_player = self._pending[block][0]
        m = self.model
        return int(first_best(arms @ m.theta + self._beta * m.widths(arms)))

    def update(self, xs, rs):
        self._require_plain()
        xs, rs = np.atleast_2d(np.asarray(xs, dtype=float)), np.atleast_1d(rs)
        first = self.t - len(rs)
        for i, (x, r) in enumerate(zip(xs, rs)):
            block = (first + i) // self.block
            entry = self._pending[block]
            entry[2] += float(r)
            entry[3] += 1
            if block == self._current:
                if len(self._obs) == self._w:
                    self.model.downdate(*self._obs.popleft())
                self.model.update(x, r)
                self._obs.append((x.copy(), float(r)))
            if entry[3] == self.block:
                self._exp3_update(entry[0], entry[1], entry[2])
                del self._pending[block]

    def weights(self):
        return np.arange(len(self.windows), dtype=np.int64), self.probabilities()

    def _reset_models(self) -> None:
        self.model = self._new_model()

    def is_positive_definite(self):
        if self.kernel_state is not None:
            return bool(np.all(np.linalg.eigvalsh(self.kernel_state.M) > 0))
        return self.model.is_positive_definite()

    # -- compiled path: SW-UCB in allseason.kernels.ridge.bob_chunk, EXP3 here -------------------
    def _require_plain(self):
        if self.kernel_state is not None:
            raise RuntimeError("this policy has been run with run_chunk; use one path only")

    def _count(self, first: int, rewards: np.ndarray) -> None:
        """EXP3's bookkeeping of the rewards of steps first, first + 1, ... (as update)."""
        for i, r in enumerate(rewards.tolist()):
            block = (first + i) // self.block
            entry = self._pending[block]
            entry[2] += float(r)
            entry[3] += 1
            if entry[3] == self.block:
                self._exp3_update(entry[0], entry[1], entry[2])
                del self._pending[block]

    def _init_kernel_state(self, n_blocks: int, n_arms: int) -> None:
        if self.t:
            raise RuntimeError("run_chunk must start from a fresh policy")
        self.kernel_state = kernels.new_bob_state(n_blocks, self.d // n_blocks)

    def _state_blocks(self) -> int:
        return self.kernel_state.b.shape[0]

    def _play(self, chunk: Chunk) -> ChunkOutcome:
        n, u, batch_end, rounds = chunk.n, chunk.u, chunk.rounds.batch_end, chunk.kernel_rounds
        p = self.d // self._state_blocks()
        t0, H, nb = chunk.t0, self.block, chunk.n_batches
        starts = np.concatenate([[0], batch_end[:-1] + 1])
        blk = (t0 + np.arange(n)) // H
        prev = np.concatenate([[self._current], blk[:-1]])
        new_block = np.flatnonzero(blk != prev)  # local steps at which a block starts
        last_of_block = np.flatnonzero((t0 + np.arange(n) + 1) % H == 0)
        special = np.zeros(nb, dtype=bool)  # batches that start or complete a block
        special[np.searchsorted(batch_end, new_block)] = True
        special[np.searchsorted(batch_end, last_of_block)] = True
        arm = np.empty(n, dtype=np.int64)
        reward = np.empty(n)
        player = np.empty(n, dtype=np.int64)
        ids, w_rows, events = np.arange(len(self.windows), dtype=np.int64), [], []
        no_reset = kernels.Resets(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
        bi = 0
        while bi < nb:
            if special[bi]:
                b1 = bi + 1
                rs = new_block[(new_block >= starts[bi]) & (new_block <= batch_end[bi])]
                ws, betas = [], []
                for t in rs:  # EXP3 draws each new block's window before the batch is played
                    self._draw_window(int(blk[t]), float(u[t]), t0 + int(t))
                    ws.append(self._w)
                    betas.append(self._beta)
                if len(rs):
                    self._window_room(max(1, min(max(ws), H)), p)
                resets = kernels.Resets(
                    np.asarray(rs, dtype=np.int64),
                    np.asarray(ws, dtype=np.int64),
                    np.asarray(betas, dtype=float),
                )
            else:
                b1 = bi + 1
                while b1 < nb and not special[b1]:
                    b1 += 1
                resets = no_reset
            state = kernels.plain(self.kernel_state)  # plain tuples: numba types them fast
            args = rounds, bi, b1, t0, state, self.lam, TIE_RTOL, kernels.plain(resets)
            kernels.bob_chunk(*args, arm, reward)
            lo, hi = int(starts[bi]), int(batch_end[b1 - 1]) + 1
            js = {int(k): self._pending[int(k)][0] for k in np.unique(blk[lo:hi])}
            player[lo:hi] = (
                [js[int(k)] for k in blk[lo:hi]] if len(js) > 1 else next(iter(js.values()))
            )
            self._count(t0 + lo, reward[lo:hi])
            probs = self.probabilities()
            w_rows.extend([probs] * (b1 - bi))
            events.extend(self.pop_events())
            bi = b1
        self.last_player = int(player[-1])
        self._mirror_model()
        return ChunkOutcome(
            arm, reward, player, batch_end, np.tile(ids, (nb, 1)), np.array(w_rows), events
        )

    def _window_room(self, cap: int, p: int) -> None:
        """A fresh (empty) window ring of room ``cap`` if the current one is smaller; the
        window's counters are kept (a new block resets them)."""
        f = self.kernel_state
        if f.window.x.shape[0] < cap:
            window = f.window._replace(
                x=np.zeros((cap, p)), g=np.zeros(cap, dtype=np.int64), r=np.zeros(cap)
            )
            self.kernel_state = f._replace(window=window)

    def _mirror_model(self) -> None:
        """self.model: a copy of the compiled path's SW-UCB, for inspection."""
        f, m = self.kernel_state, self._new_model()
        one = self.blocks == 1  # a dense RidgeModel: the single block's arrays
        m.M, m.Vinv = (f.M[0].copy(), f.Vinv[0].copy()) if one else (f.M.copy(), f.Vinv.copy())
        m.b = f.b[0].copy() if one else f.b.copy()
        m.theta = f.theta.reshape(-1).copy()
        m._steps = int(f.steps[0]) if one else f.steps.copy()
        m.n_obs = type(m.n_obs)(f.window.state[0])
        self.model = m
