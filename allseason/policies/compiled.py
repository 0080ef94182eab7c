"""The compiled policies' one opening: :class:`CompiledPolicy` runs a chunk through a family's
numba kernel.

Every compiled family (All-Season, the LinTS family, BoB, DenBand) opens a chunk the same way:
the batch ends are checked, the arms become blocks (:func:`~allseason.envs.arms.as_blocks`),
the kernel state is made on the first chunk and must keep its block structure, the chunk's
random numbers are drawn, and the kernels' typed :class:`~allseason.kernels.types.Rounds` is
built. :meth:`CompiledPolicy.run_chunk` does that once; a family says only what differs:

- ``_init_kernel_state(n_blocks, n_arms)``: its fresh kernel state (refusing a policy that
  has already played on the plain path);
- ``_state_blocks()``: the number of parameter blocks its state was made for;
- ``_play(chunk)``: its kernel call(s) on a :class:`Chunk`, and the :class:`ChunkOutcome`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..envs.arms import as_blocks
from ..kernels import EVENT_NAMES, Rounds
from .base import ChunkOutcome, Event, Policy, check_batch_end


class Chunk(NamedTuple):
    """A chunk of whole batches as a compiled family plays it.

    Attributes
    ----------
    rounds : Rounds
        The arms as blocks, the expected rewards, the noise and the batch ends (checked).
    u : ndarray, shape (n,)
        One uniform per step.
    z : ndarray, shape (n, G, p) or None
        The standard normals of the Thompson samples, block by block (None for a policy that
        draws none).
    t0 : int
        Steps played before the chunk.
    """

    rounds: Rounds
    u: np.ndarray
    z: np.ndarray | None
    t0: int

    @property
    def n(self) -> int:
        """Steps in the chunk."""
        return len(self.rounds.noise)

    @property
    def n_batches(self) -> int:
        """Batches in the chunk."""
        return len(self.rounds.batch_end)

    @property
    def kernel_rounds(self) -> tuple:
        """:attr:`rounds` as a plain tuple: numba types a plain tuple in C, a named one in
        Python (about 4 us a call)."""
        return tuple(self.rounds)


class CompiledPolicy(Policy):
    """A policy whose chunks run in a compiled kernel that makes exactly the decisions of its
    plain ``select``/``update`` (the contract test checks it, decision for decision).

    Subclasses implement ``_init_kernel_state``, ``_state_blocks`` and ``_play``; see the
    module's docstring."""

    def _init_kernel_state(self, n_blocks: int, n_arms: int) -> None:
        raise NotImplementedError

    def _state_blocks(self) -> int:
        raise NotImplementedError

    def _play(self, chunk: Chunk) -> ChunkOutcome:
        raise NotImplementedError

    def run_chunk(
        self, arms: np.ndarray, expected: np.ndarray, noise: np.ndarray, batch_end: np.ndarray
    ) -> ChunkOutcome:
        """:meth:`Policy.run_chunk` (the same parameters and outcome), played in the
        family's kernel.

        Raises
        ------
        ValueError
            Bad batch ends, or arms whose block structure changed since the first chunk.
        """
        n = arms.shape[0]
        batch_end = check_batch_end(batch_end, n)
        self._prepare(arms)
        ctx, block, cidx, n_blocks = as_blocks(arms)
        if self.kernel_state is None:
            self._init_kernel_state(n_blocks, len(block))
        if self._state_blocks() != n_blocks:
            raise ValueError("arms: the block structure changed between chunks")
        u, z = self.draw(n)
        z = None if z is None else z.reshape(n, n_blocks, -1)
        chunk = Chunk(Rounds(ctx, block, cidx, expected, noise, batch_end), u, z, self.t)
        out = self._play(chunk)
        self.t += n
        return out


def events_of(ev, m: int) -> list[Event]:
    """The first ``m`` rows of a kernel's event arrays (:func:`allseason.kernels.new_events`)
    as :class:`Event` rows (built from lists: the printed rule makes thousands)."""
    step, kind, a, b, v = (x[:m].tolist() for x in ev)
    return [Event(s, EVENT_NAMES[k], i, j, x) for s, k, i, j, x in zip(step, kind, a, b, v)]


__all__ = ["Chunk", "CompiledPolicy", "events_of"]
