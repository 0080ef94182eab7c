"""Oracle references: LinTS told the true state of every step (issue 20).

Two bounds on what a policy that has to *find* the seasons can hope for:

- ``oracle-state`` (**perfect memory**): one LinTS per true state s, told s; the model of
  state s plays, and learns from, exactly the steps in state s. A season that comes back finds
  its model where it left it.
- ``oracle-restart`` (**perfect detection, no memory**): a fresh LinTS at every true change
  point (a step whose state differs from the previous step's); a season that comes back is
  learned again from the prior.

Both are *references*, not contestants (``reference = True``): views draw them apart and the
race summary ranks them apart (:func:`allseason.sim.trace.is_reference`). They are the only
policies with ``oracle``: the runner (:func:`allseason.sim.runner.play_round`) tells them
the true states of a round before they play it; no other policy is ever told.

Feedback: rewards arrive at batch ends, as for every other policy. Within a batch each inner
model plays its own steps with its posterior as of the last batch end, and at the batch end
each inner model that played learns from its own steps (the batch is split by state; nothing
is learned mid-batch, even at a change point: that would give the oracle feedback the
contestants do not get). So the inner model of key k (state s, or segment j) sees exactly the
run ``LinTS.run_chunk`` on its own steps with batch ends at the last of its steps in each
batch. Chunks are whole batches, so the decisions do not depend on how the horizon is cut
into chunks (the runner's, a sweep's or one step at a time; tests/policies/test_oracles.py).

Streams: the oracle's ``rng`` gives, as every policy, children 0 and 1 (``u``, ``z``;
unused) and child 2, the root of the inner models: the model of key k (state s for
``oracle-state``, segment j = 0, 1, ... for ``oracle-restart``) gets child k of that root
(``SeedSequence.spawn`` order), whenever it is first needed.

``ChunkOutcome.player`` (and ``last_player``) is the key of the inner model that played the
step: the true state for ``oracle-state``, the segment number for ``oracle-restart``.
"""

from __future__ import annotations

import numpy as np

from ..envs.arms import BlockArms
from .base import ChunkOutcome, Policy, RngLike, check_batch_end
from .lints import LinTS
from .params import values_checked


def _take(arms, idx: np.ndarray):
    """The steps ``idx`` of a chunk's arms (dense (n, K, d) or :class:`BlockArms`)."""
    if isinstance(arms, BlockArms):
        return BlockArms(arms.contexts[idx], arms.n_arms)
    return np.ascontiguousarray(np.asarray(arms)[idx])


class _Oracle(Policy):
    """Base of the oracles: inner LinTS models keyed by ``_keys(states)``."""

    family = "oracle"
    oracle = True  # told the true states
    reference = True  # drawn and ranked apart from the contestants
    params = LinTS.params
    style = {"color": "#484848", "dash": "12px,6px", "symbol": "circle-x"}  # grey, dashed

    def __init__(
        self, d: int, *, lam: float = 1.0, sigma2: float = 1.0, rng: RngLike = None
    ) -> None:
        root = np.random.default_rng(rng)
        super().__init__(d, rng=root)  # children 0 and 1 (u, z), as every policy
        self.rng = rng  # stored unchanged
        self._set_params(lam=lam, sigma2=sigma2)
        model_seq = root.spawn(1)[0].bit_generator.seed_seq  # child 2
        assert isinstance(model_seq, np.random.SeedSequence)  # what spawn() gives a child
        self._model_seq = model_seq
        self.models: dict[int, LinTS] = {}
        self._pending = np.zeros(0, dtype=np.int64)  # told states not played yet
        self._unlearned: list[int] = []  # plain path: keys of the steps since the last update
        self._last_state: int | None = None

    # -- streams and models ---------------------------------------------------------------
    def _model(self, key: int) -> LinTS:
        m = self.models.get(key)
        if m is None:
            seq = np.random.SeedSequence(
                self._model_seq.entropy,
                spawn_key=self._model_seq.spawn_key + (int(key),),
                pool_size=self._model_seq.pool_size,
            )
            with values_checked():  # its own lam and sigma2, checked when it was built
                m = self.models[key] = LinTS(
                    self.d, lam=self.lam, sigma2=self.sigma2, rng=np.random.default_rng(seq)
                )
        return m

    def _keys(self, states: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _forget(self, live: set) -> None:
        """Drop inner models that can never play again (none by default)."""

    # -- being told the states ------------------------------------------------------------
    def observe_states(self, states) -> None:
        """Queue the true states of the next steps (shape (n,), ints >= 0)."""
        s = np.asarray(states, dtype=np.int64).ravel()
        if len(s) and s.min() < 0:
            raise ValueError("states: must be integers >= 0")
        self._pending = np.concatenate([self._pending, s])

    def _next_states(self, n: int) -> np.ndarray:
        if len(self._pending) < n:
            raise RuntimeError(
                f"{self.name}: an oracle must be told the true state of every "
                f"step before it plays (observe_states); {n} steps to play, "
                f"{len(self._pending)} states told"
            )
        s, self._pending = self._pending[:n], self._pending[n:]
        return s

    # -- compiled path ----------------------------------------------------------------------
    def run_chunk(self, arms, expected, noise, batch_end):
        """Split the chunk by key and let each inner LinTS play its steps (compiled), with
        batch ends at the last of its steps in each batch."""
        n = arms.shape[0]
        batch_end = check_batch_end(batch_end, n)
        keys = self._keys(self._next_states(n))
        batch = np.searchsorted(batch_end, np.arange(n))  # batch of each step
        arm = np.empty(n, dtype=np.int64)
        reward = np.empty(n)
        for key in dict.fromkeys(keys.tolist()):  # in order of first appearance
            idx = np.flatnonzero(keys == key)
            b = batch[idx]
            ends = np.append(np.flatnonzero(np.diff(b) != 0), len(idx) - 1)
            out = self._model(key).run_chunk(_take(arms, idx), expected[idx], noise[idx], ends)
            arm[idx], reward[idx] = out.arm, out.reward
        self._forget({int(keys[-1])})
        self.t += n
        self.last_player = int(keys[-1])
        return ChunkOutcome(arm, reward, keys.copy(), batch_end)

    # -- plain path (select / update) -------------------------------------------------------
    def _select(self, arms, u, z):
        key = int(self._keys(self._next_states(1))[0])
        self._unlearned.append(key)
        self.last_player = key
        return self._model(key).select(arms)  # the inner model's own streams

    def update(self, xs, rs):
        xs, rs = np.atleast_2d(xs), np.atleast_1d(rs)
        if len(rs) != len(self._unlearned):
            raise ValueError(
                f"update: {len(self._unlearned)} steps played since the last "
                f"update, {len(rs)} rewards given"
            )
        keys = np.asarray(self._unlearned, dtype=np.int64)
        self._unlearned = []
        for key in dict.fromkeys(keys.tolist()):
            idx = keys == key
            self._model(key).update(xs[idx], rs[idx])
        self._forget({int(keys[-1])} if len(keys) else set())

    def is_positive_definite(self) -> bool:
        return all(m.is_positive_definite() for m in self.models.values())


class OracleState(_Oracle):
    """Perfect memory: one LinTS per true state, told the state (key = the state).

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    lam : float, default 1.0
        λ, the prior precision of every inner LinTS.
    sigma2 : float, default 1.0
        σ², the noise variance.
    rng : numpy.random.Generator, int or None
        Root of the streams; the inner model of key k gets child k of its child 2.

    Examples
    --------
    >>> from allseason.policies import role
    >>> role("oracle-state").ceiling
    True
    """

    name = "oracle-state"
    ceiling = True  # perfect memory: the share of the gap closed is measured to it
    title = "Oracle: per-state LinTS"
    help = "Reference: one LinTS per true state, told the state (perfect memory)"

    def _keys(self, states):
        return states


class OracleRestart(_Oracle):
    """Perfect detection, no memory: a fresh LinTS at every true change point (key = the
    segment number 0, 1, ...; a change point is a step whose state differs from the last).

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    lam : float, default 1.0
        λ, the prior precision of every inner LinTS.
    sigma2 : float, default 1.0
        σ², the noise variance.
    rng : numpy.random.Generator, int or None
        Root of the streams; the inner model of key k gets child k of its child 2.
    """

    name = "oracle-restart"
    title = "Oracle: LinTS restarted"
    help = "Reference: LinTS restarted at every true change point (perfect detection, no memory)"
    style = {"color": "#686868", "dash": "5px,5px", "symbol": "square-x"}

    def __init__(
        self, d: int, *, lam: float = 1.0, sigma2: float = 1.0, rng: RngLike = None
    ) -> None:
        super().__init__(d, lam=lam, sigma2=sigma2, rng=rng)
        self._segment = -1

    def _keys(self, states):
        if len(states) == 0:
            return states
        prev = np.concatenate([[-1 if self._last_state is None else self._last_state], states[:-1]])
        seg = self._segment + np.cumsum(states != prev)
        self._segment, self._last_state = int(seg[-1]), int(states[-1])
        return seg.astype(np.int64)

    def _forget(self, live):
        live = live | set(self._unlearned)
        for key in [k for k in self.models if k not in live]:
            del self.models[key]


__all__ = ["OracleState", "OracleRestart"]
