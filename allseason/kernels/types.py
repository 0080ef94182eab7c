"""The typed structures every compiled kernel reads: the rounds of a chunk, the ring buffer
of a sliding window, the event columns. They are ``NamedTuple`` s of numpy arrays (numba
passes them to a kernel as one argument and reads their fields by name at no cost)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# short-memory modes (LinTS family, All-Season's shadow)
PLAIN, WINDOW, DISCOUNT = 0, 1, 2
# event kinds: All-Season (spawn, prune), DenBand (create, discard)
SPAWN, PRUNE, CREATE, DISCARD = 1, 2, 3, 4
EVENT_NAMES = {SPAWN: "spawn", PRUNE: "prune", CREATE: "create", DISCARD: "discard"}


class Rounds(NamedTuple):
    """A chunk of whole batches as the kernels read it.

    Arms come as blocks (:func:`allseason.envs.arms.as_blocks`): arm k of step t is the
    context ``ctx[t, cidx[k]]`` in parameter block ``block[k]``. Dense arms are one block
    (G = 1, ``cidx = k``); outer-product arms e_k (x) c_t are K blocks with one shared
    context (``block = k``, ``cidx = 0``).

    Attributes
    ----------
    ctx : ndarray, shape (n, C, p)
        The contexts of each step.
    block : ndarray of int64, shape (K,)
        The parameter block of each arm.
    cidx : ndarray of int64, shape (K,)
        The context of each arm.
    expected : ndarray, shape (n, K)
        Expected reward of every arm at every step.
    noise : ndarray, shape (n,)
        The noise added to the reward of the arm played.
    batch_end : ndarray of int64, shape (n_batches,)
        Index (within the chunk) of each batch's last step; the last one is n - 1.
    """

    ctx: np.ndarray
    block: np.ndarray
    cidx: np.ndarray
    expected: np.ndarray
    noise: np.ndarray
    batch_end: np.ndarray


class Window(NamedTuple):
    """The ring buffer of a sliding window's last observations.

    Attributes
    ----------
    x : ndarray, shape (cap, p)
        The observations' contexts.
    g : ndarray of int64, shape (cap,)
        The parameter block of each.
    r : ndarray, shape (cap,)
        Their rewards.
    state : ndarray of int64
        ``[count, head, ...]``: how many are held and the oldest's slot; a third entry is
        the family's own (pushes since the last refactor for LinTS and All-Season, the window
        length for BoB).
    """

    x: np.ndarray
    g: np.ndarray
    r: np.ndarray
    state: np.ndarray


def new_window(cap: int, p: int, n_state: int = 3) -> Window:
    """An empty window of room ``cap`` for contexts of length ``p``.

    Parameters
    ----------
    cap : int
        Number of observations it can hold.
    p : int
        Length of a context.
    n_state : int, default 3
        Length of the ``state`` counters.

    Returns
    -------
    Window
    """
    return Window(
        np.zeros((cap, p)),
        np.zeros(cap, dtype=np.int64),
        np.zeros(cap),
        np.zeros(n_state, np.int64),
    )


class Events(NamedTuple):
    """Event columns a kernel appends to (its counters say how many are written).

    Attributes
    ----------
    step : ndarray of int64
        The step (from the start of the run) of the batch end that caused it.
    kind : ndarray of int64
        :data:`SPAWN`, :data:`PRUNE`, :data:`CREATE` or :data:`DISCARD`.
    bandit : ndarray of int64
        The id concerned.
    other : ndarray of int64
        A related id (the twin of a pruned bandit, the parent of a spawned one).
    value : ndarray
        A number (the distance of a pruned pair).
    """

    step: np.ndarray
    kind: np.ndarray
    bandit: np.ndarray
    other: np.ndarray
    value: np.ndarray


def new_events(n: int) -> Events:
    """Room for ``n`` events.

    Parameters
    ----------
    n : int
        How many events the columns can hold.

    Returns
    -------
    Events
    """
    step, kind, bandit, other = (np.empty(n, dtype=np.int64) for _ in range(4))
    return Events(step, kind, bandit, other, np.empty(n))


def plain(state):
    """The same fields as plain (nested) tuples, for a kernel call.

    numba's dispatcher types a plain tuple of arrays in C but a named tuple in Python (about
    4 us per call, which the offline replay, with its many short chunks, would feel); the
    kernels unpack their arguments by position, in the order of the named tuple's fields.

    Parameters
    ----------
    state : NamedTuple
        A kernel state, rounds, parameters or outputs.

    Returns
    -------
    tuple
        The same values, the same arrays (not copied).
    """
    return tuple(plain(v) if isinstance(v, tuple) else v for v in state)


def copy_state(state):
    """A deep copy of a kernel state: every array copied, nested named tuples included.

    Parameters
    ----------
    state : NamedTuple
        A kernel state (fields: arrays, numbers or named tuples of them).

    Returns
    -------
    NamedTuple
        The same type, sharing no array with ``state``.
    """
    return type(state)(
        *(
            v.copy() if isinstance(v, np.ndarray) else copy_state(v) if isinstance(v, tuple) else v
            for v in state
        )
    )
