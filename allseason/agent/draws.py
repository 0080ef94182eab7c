"""The per-event random draws of the agent: one 64-bit key per (agent seed, event id).

``event_key(seed_text, event_id)`` is the first 8 bytes of BLAKE2b over the seed and the
event id (as text); the compiled counter generator (:func:`allseason.kernels.agent.fill_draws`:
splitmix64, Box-Muller) turns the key into the decision's uniform and normals. The same
seed and event id give the same numbers, without a generator object per decision.

``seed_text`` says what the seed is: an integer, or a numpy ``SeedSequence``'s entropy and
spawn key (the runner's policy streams), so two agents of the same seed agree.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ..errors import SpecError, show


def seed_text(seed) -> str:
    """The canonical text of an agent's seed (an int >= 0 or a numpy SeedSequence).

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence

    Returns
    -------
    str

    Raises
    ------
    SpecError
        For anything else (a bool, a negative number, a float, ...).
    """
    if isinstance(seed, np.random.SeedSequence):
        return f"ss:{seed.entropy}:{','.join(str(k) for k in seed.spawn_key)}"
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0:
        raise SpecError(
            "seed", f"must be an integer >= 0 or a numpy SeedSequence, got {show(seed)}"
        )
    return f"int:{int(seed)}"


def seed_from_text(text: str):
    """The seed :func:`seed_text` wrote (an int or a SeedSequence).

    Raises
    ------
    SpecError
        Text that :func:`seed_text` cannot have written.
    """
    try:
        kind, _, rest = text.partition(":")
        if kind == "int":
            return int(rest)
        if kind == "ss":
            entropy, _, keys = rest.partition(":")
            spawn_key = tuple(int(k) for k in keys.split(",") if k)
            return np.random.SeedSequence(int(entropy), spawn_key=spawn_key)
    except ValueError:
        pass
    raise SpecError("seed", f"not a seed this package wrote: {show(text)}")


def event_text(event_id) -> str:
    """An event id as the text it is keyed and stored by (a str, or an int as its digits).

    Raises
    ------
    SpecError
        Not a str or an int, empty, or longer than 200 characters.
    """
    if type(event_id) is int and -(10**18) < event_id < 10**18:
        return str(event_id)  # the common int first: at most 19 characters
    if isinstance(event_id, str):
        text = event_id
    elif isinstance(event_id, int | np.integer) and not isinstance(event_id, bool):
        text = str(int(event_id))
    else:
        raise SpecError("event_id", f"must be a str or an int, got {show(event_id)}")
    if not text or len(text) > 200:
        raise SpecError("event_id", f"must have 1 to 200 characters, got {show(event_id)}")
    return text


def key_prefix(seed: str) -> bytes:
    """The bytes an event's key hashes before the event's text: the seed text, a separator."""
    return f"{seed}\x1f".encode()


def key_hasher(seed: str):
    """BLAKE2b-64 fed with :func:`key_prefix`: :func:`event_key` copies it."""
    return hashlib.blake2b(key_prefix(seed), digest_size=8)


def event_key(seed, event: str) -> int:
    """The key of an event's draws: BLAKE2b-64 of the seed text, a separator and the event
    text, its top 63 bits (an int that numba always types int64).

    Parameters
    ----------
    seed : str or hashlib.blake2b
        :func:`seed_text` of the agent's seed, or its :func:`key_hasher`.
    event : str
        :func:`event_text` of the event id.

    Returns
    -------
    int
        In [0, 2^63).
    """
    h = key_hasher(seed) if isinstance(seed, str) else seed.copy()
    h.update(event.encode())
    return int.from_bytes(h.digest(), "little") >> 1


__all__ = ["seed_text", "seed_from_text", "event_text", "event_key", "key_hasher", "key_prefix"]
