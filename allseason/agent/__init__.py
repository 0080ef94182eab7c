"""The agent a service embeds (issue 31): one decision at a time with its probability,
rewards as they come, the paper's batch update, and a state of plain data.

- :mod:`.core`: :class:`Agent`, :class:`Decision`, :class:`UnknownEvent`;
- :mod:`.draws`: the per-event random draws (a key per (seed, event id)).

The compiled single step is :mod:`allseason.kernels.agent`.
"""

from __future__ import annotations

from .core import Agent, Decision, UnknownEvent
from .records import COUNT_NAMES, PI_METHODS

__all__ = ["Agent", "Decision", "UnknownEvent", "PI_METHODS", "COUNT_NAMES"]
