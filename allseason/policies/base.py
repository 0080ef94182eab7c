"""The policy protocol shared by every bandit in the package.

A policy sees, at each step t, the contextualised action set ``A_t`` (an array of shape
``(K, d)``), picks one row, and later receives the rewards of the rows it picked, one batch
at a time::

    arm = policy.select(arms)          # per step
    policy.update(xs, rs)              # per batch: xs (n, d), rs (n,)

All randomness comes from the ``rng`` given at construction. A policy keeps two streams
spawned from it: ``u`` (one uniform per step: which bandit plays, or which arm for
``random``) and ``z`` (standard normals: the Thompson samples). Drawing them one step at a
time or a chunk at a time gives the same numbers, which is what lets a compiled
``run_chunk`` be checked decision for decision against the plain ``select``/``update`` loop.

Observability: ``last_player`` is the id of the internal bandit that played the last step
(``-1`` for single-model policies), ``weights()`` returns the current ``(ids, weights)`` of an
ensemble (or ``None``) and ``pop_events()`` hands over what happened since the last call
(spawned, pruned, window chosen, ...), as :class:`Event` rows.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import numpy as np

from ..kernels.types import copy_state, plain
from .params import Param, check_own

RngLike = np.random.Generator | int | None  # what a policy's ``rng`` may be


class Event(NamedTuple):
    """One thing that happened inside a policy.

    ``step`` is the 0-based step at which the batch that caused it ended; ``kind`` is e.g.
    ``"spawn"``, ``"prune"``; ``bandit`` is the id concerned; ``other`` a related id (the twin
    of a pruned bandit, the bandit a spawn was copied from; -1 if none); ``value`` a number
    (the symmetric KL of a pruned pair, the window chosen by BoB; NaN if none).
    """

    step: int
    kind: str
    bandit: int
    other: int = -1
    value: float = float("nan")


class PosteriorBlocks(NamedTuple):
    """One live bandit's Gaussian posterior, block by block (block-diagonal precision).

    Attributes
    ----------
    bandit : int
        Its id (-1 for a single-model policy).
    M : ndarray, shape (G, p, p)
        The precision of each parameter block.
    mu : ndarray, shape (G, p)
        The posterior mean of each block.
    """

    bandit: int
    M: np.ndarray
    mu: np.ndarray


class Role(NamedTuple):
    """What a policy is, as its class declares it (:func:`allseason.policies.role`).

    Attributes
    ----------
    family : str
        "allseason", "lints", "ucb", "denband", "random" or "oracle".
    oracle : bool
        Told the true states of every step (``observe_states``), which no policy in the wild
        knows.
    reference : bool
        Drawn and ranked apart from the contestants.
    ceiling : bool
        The reference that the share of the gap closed is measured against (perfect memory).
    """

    family: str
    oracle: bool
    reference: bool
    ceiling: bool = False


@dataclass
class ChunkOutcome:
    """What a policy did over a chunk of ``n`` steps made of whole batches.

    arm, reward, player: shape (n,). batch_end: shape (n_batches,), the index (within the
    chunk) of each batch's last step. weight_ids / weights: shape (n_batches, S), the ids and
    normalised weights of the live bandits after each batch (id -1 = empty slot), or ``None``
    for single-model policies. events: list of :class:`Event`, steps counted from the start
    of the run.
    """

    arm: np.ndarray
    reward: np.ndarray
    player: np.ndarray
    batch_end: np.ndarray
    weight_ids: np.ndarray | None = None
    weights: np.ndarray | None = None
    events: list[Event] = field(default_factory=list)


class Policy:
    """Base class: stores hyperparameters, owns the random streams, runs chunks step by step.

    A policy is one class that says what it is: its registry ``name``, a display ``title``,
    a one-line ``help``, whether it is ``deterministic``, a ``style`` preference for figures
    (``color``: an Okabe-Ito colour name such as "blue", ``dash``, ``symbol``; anything left
    out is picked from the palettes by registration order), ``params``, the declaration of
    its hyperparameters (:class:`~allseason.policies.params.Param`; the defaults are those
    of ``__init__``), and its role: ``family``, ``oracle``, ``reference`` (and ``ceiling``),
    read through :func:`allseason.policies.role`. ``__init__`` passes its hyperparameters to
    :meth:`_set_params`, which checks them against the declaration and stores them.

    Subclasses implement ``_select(arms, u, z) -> int`` and ``update(xs, rs)`` and may override
    :meth:`run_chunk` with a compiled loop that makes exactly the same decisions; such a
    policy keeps what the loop learns in :attr:`kernel_state`.

    Parameters
    ----------
    d : int
        Dimension of the arms' vectors.
    rng : numpy.random.Generator, int or None
        The root of the policy's random streams (``u``: one uniform per step; ``z``: the
        standard normals of the Thompson samples), stored unchanged as ``self.rng``.

    Attributes
    ----------
    kernel_state : NamedTuple or None
        The compiled path's state (e.g. :class:`~allseason.kernels.lints.LinTSState`),
        created by the first :meth:`run_chunk`; None before, and for a policy without a
        compiled loop. Read it, do not change it.
    t : int
        Steps played so far.
    last_player : int
        Id of the internal bandit that played the last step (-1 for single-model policies).
    """

    name: ClassVar[str] = "policy"
    title: ClassVar[str] = ""  # display name; "" = the registry name
    help: ClassVar[str] = ""  # one line: what it does
    style: ClassVar[dict] = {}  # preferred color / dash / symbol in figures
    params: ClassVar[dict[str, Param]] = {}  # declared hyperparameters
    uses_normals: ClassVar[bool] = True  # whether each step draws d standard normals
    deterministic: ClassVar[bool] = False  # True: decisions do not depend on the rng at all
    # the role (allseason.policies.role): every registered policy declares its family
    family: ClassVar[str] = ""
    oracle: ClassVar[bool] = False  # told the true states (observe_states), as none in the wild
    reference: ClassVar[bool] = False  # drawn and ranked apart from the contestants
    ceiling: ClassVar[bool] = False  # the reference the share of the gap closed is measured to
    # True: run_chunk changes nothing but kernel_state, t and last_player, so fork() may be
    # a shallow copy with a copied kernel_state (else it is a deep copy)
    shallow_fork: ClassVar[bool] = False
    # False: no reward changes a later decision (each is a function of the arms and the random
    # streams alone), so a replay may play every event of a log in one batch
    # (allseason.logs.replay.replay_fast)
    learns: ClassVar[bool] = True

    def __init__(self, d: int, *, rng: RngLike = None):
        if int(d) < 1:
            raise ValueError(f"d: must be a positive integer, got {d!r}")
        self.d = int(d)
        self.rng = rng
        self._rng_u, self._rng_z = np.random.default_rng(rng).spawn(2)
        self.last_player = -1
        self.t = 0  # steps played so far
        self._events: list[Event] = []
        self.kernel_state: Any = None

    def _set_params(self, **values) -> None:
        """Check hyperparameters against the declarations (SpecError naming the bad one,
        with its bounds and value) and store them, converted (ints, floats), as attributes."""
        for k, v in check_own(self, values).items():
            setattr(self, k, v)

    if TYPE_CHECKING:  # for the type checker: the hyperparameters stored by _set_params

        def __getattr__(self, name: str) -> Any: ...

    # -- the protocol --------------------------------------------------------------------
    def select(self, arms: np.ndarray) -> int:
        """Pick one arm (plain path).

        Parameters
        ----------
        arms : ndarray, shape (K, d)
            The contextualised action set of this step.

        Returns
        -------
        int
            The index of the row played.
        """
        u = self._rng_u.random()
        z = self._rng_z.standard_normal(self.d) if self.uses_normals else None
        arm = int(self._select(np.asarray(arms, dtype=float), u, z))
        self.t += 1
        return arm

    def _select(self, arms: np.ndarray, u: float, z: np.ndarray | None) -> int:
        raise NotImplementedError

    def update(self, xs: np.ndarray, rs: np.ndarray) -> None:
        """Learn from a batch (plain path).

        Parameters
        ----------
        xs : ndarray, shape (n, d)
            The rows played.
        rs : ndarray, shape (n,)
            Their rewards.
        """
        raise NotImplementedError

    def weights(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The current weights of an ensemble policy.

        Returns
        -------
        tuple of ndarray or None
            (ids, normalised weights) of the live bandits; None for a single-model policy.
        """
        return None

    def pop_events(self) -> list[Event]:
        """Events since the last call."""
        events, self._events = self._events, []
        return events

    def observe_states(self, states: np.ndarray) -> None:
        """Tell an oracle (``oracle``) the true states of the next chunk.

        Parameters
        ----------
        states : ndarray of int, shape (n,)
            The true state of each step, given by the runner just before :meth:`run_chunk`.

        Raises
        ------
        TypeError
            For any policy that is not an oracle.
        """
        raise TypeError(f"{type(self).__name__} is not an oracle: it is never told the states")

    def is_positive_definite(self) -> bool:
        """True if every posterior precision the policy holds is positive definite."""
        return True

    def posterior_blocks(self) -> list[PosteriorBlocks] | None:
        """The live bandits' Gaussian posteriors, block by block.

        Returns
        -------
        list of PosteriorBlocks or None
            One entry per live bandit (in slot order), or None for a policy that keeps no
            Gaussian posterior (UCB, DenBand, random, the oracles) or has not played yet.
        """
        return None

    # -- copies and streams (offline replay) -----------------------------------------------
    def streams_state(self) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        """The states of the two random streams (``u``, ``z``), for :meth:`restore_streams`."""
        return self._rng_u.bit_generator.state, self._rng_z.bit_generator.state

    def restore_streams(self, states: tuple[Mapping[str, Any], Mapping[str, Any]]) -> None:
        """Set the two random streams to ``states`` (from :meth:`streams_state`)."""
        self._rng_u.bit_generator.state, self._rng_z.bit_generator.state = states

    def _kernel_params(self) -> tuple:
        """A compiled policy's hyperparameters as its kernel reads them (a named tuple)."""
        raise NotImplementedError

    def _kernel_args(self) -> tuple[tuple, tuple]:
        """(kernel_state, _kernel_params()) as plain tuples for a kernel call (numba types a
        plain tuple in C, a named one in Python: about 4 us a call), kept while
        :attr:`kernel_state` is the same object (a fork or a regrown state gets its own)."""
        cached = self.__dict__.get("_kernel_args_cache")
        if cached is None or cached[0] is not self.kernel_state:
            state = self.kernel_state
            cached = (state, plain(state), plain(self._kernel_params()))
            self._kernel_args_cache = cached
        return cached[1], cached[2]

    def fork(self) -> Policy:
        """A copy to try the next steps on, which plays exactly as this policy would.

        It may share this policy's random streams (``shallow_fork``: a shallow copy whose
        :attr:`kernel_state` arrays are copied, about 10x faster than a deep copy): save them
        with :meth:`streams_state` before playing the copy and :meth:`restore_streams` after.
        Any other policy is deep-copied.

        Returns
        -------
        Policy
        """
        if not self.shallow_fork:
            return copy.deepcopy(self)
        twin = copy.copy(self)
        if self.kernel_state is not None:
            twin.kernel_state = copy_state(self.kernel_state)
        return twin

    def _prepare(self, arms) -> None:
        """Hook called by the plain :meth:`run_chunk` with each chunk's arms (e.g. to switch
        to block-diagonal models on :class:`~allseason.envs.arms.BlockArms`); nothing by default."""

    # -- the runner's entry point ---------------------------------------------------------
    def draw(self, n: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The next ``n`` steps' random numbers.

        Parameters
        ----------
        n : int
            How many steps.

        Returns
        -------
        u : ndarray, shape (n,)
            One uniform per step.
        z : ndarray, shape (n, d) or None
            The standard normals (None if the policy ``uses_normals`` not).
        """
        u = self._rng_u.random(n)
        z = self._rng_z.standard_normal((n, self.d)) if self.uses_normals else None
        return u, z

    def run_chunk(
        self, arms: np.ndarray, expected: np.ndarray, noise: np.ndarray, batch_end: np.ndarray
    ) -> ChunkOutcome:
        """Play a chunk of ``n`` steps made of whole batches.

        The plain Python loop over :meth:`_select` and :meth:`update`; compiled policies
        override it with a kernel that makes the same decisions.

        Parameters
        ----------
        arms : ndarray, shape (n, K, d), or BlockArms
            The action sets.
        expected : ndarray, shape (n, K)
            Expected reward of every arm.
        noise : ndarray, shape (n,)
            Noise added to the reward of the arm played.
        batch_end : ndarray of int, shape (n_batches,)
            Index of each batch's last step, strictly increasing, the last one n - 1.

        Returns
        -------
        ChunkOutcome
        """
        n = arms.shape[0]
        batch_end = check_batch_end(batch_end, n)
        self._prepare(arms)
        u, z = self.draw(n)
        arm = np.empty(n, dtype=np.int64)
        reward = np.empty(n)
        player = np.empty(n, dtype=np.int64)
        ids_rows, w_rows, events = [], [], []
        start = 0
        for end in batch_end:
            for t in range(start, end + 1):
                a = int(self._select(arms[t], u[t], None if z is None else z[t]))
                self.t += 1
                arm[t] = a
                reward[t] = expected[t, a] + noise[t]
                player[t] = self.last_player
            self.update(
                arms[np.arange(start, end + 1), arm[start : end + 1]], reward[start : end + 1]
            )
            w = self.weights()
            if w is not None:
                ids_rows.append(w[0])
                w_rows.append(w[1])
            events.extend(self.pop_events())
            start = end + 1
        weight_ids = weights = None
        if ids_rows:
            width = max(len(r) for r in ids_rows)
            weight_ids = np.full((len(ids_rows), width), -1, dtype=np.int64)
            weights = np.zeros((len(ids_rows), width))
            for i, (ids, row) in enumerate(zip(ids_rows, w_rows)):
                weight_ids[i, : len(ids)] = ids
                weights[i, : len(row)] = row
        return ChunkOutcome(
            arm, reward, player, np.asarray(batch_end, dtype=np.int64), weight_ids, weights, events
        )


def check_batch_end(batch_end, n: int) -> np.ndarray:
    """Validate the batch ends of a chunk.

    Parameters
    ----------
    batch_end : array_like of int
        Index of each batch's last step.
    n : int
        Steps in the chunk.

    Returns
    -------
    ndarray of int64

    Raises
    ------
    ValueError
        Unless strictly increasing, from 0 on, the last one n - 1.
    """
    ends = np.asarray(batch_end, dtype=np.int64)
    if (
        ends.ndim != 1
        or len(ends) == 0
        or ends[0] < 0
        or ends[-1] != n - 1
        or np.any(np.diff(ends) <= 0)
    ):
        raise ValueError(f"batch_end: must be strictly increasing indices ending at {n - 1}")
    return ends
