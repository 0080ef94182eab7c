"""The agent's records and checks: :class:`Decision`, :class:`UnknownEvent`, the names of
the counts and of the ways pi is obtained, and the checks of the agent's inputs."""

from __future__ import annotations

import math
from operator import itemgetter

import numpy as np

from ..errors import SpecError, show

FORMAT = "allseason-agent"
FORMAT_VERSION = [1, 0]
PI_METHODS = (
    "exact-uniform",
    "exact-quadrature",
    "exact-mixture",
    "deterministic",
    "monte-carlo",
    "skipped",
    "unavailable",
)
COUNT_NAMES = (
    "decisions",
    "learned",
    "duplicates",
    "unknown",
    "expired",
    "dropped",
    "batches",
    "spawned",
    "pruned",
)
N_MC = 4096  # Monte Carlo draws of pi (dense arms, K > 2): standard error <= 0.0079


class UnknownEvent(SpecError):
    """A reward for an event id the agent never decided (or forgot long ago)."""

    def __init__(self, event: str):
        super().__init__("event_id", f"no decision is open for {show(event)}")


_tuple_new = tuple.__new__
#: the record's fields, in order (a Decision is a tuple of them)
DECISION_FIELDS = (
    "event_id",
    "arm",
    "label",
    "propensity",
    "propensities",
    "pi_method",
    "pi_stderr",
    "model_version",
    "bandit",
    "t",
)


class Decision(tuple):
    """One decision of the agent (a tuple of :data:`DECISION_FIELDS`, read by name: made by
    one C call on the hot path, ``Decision._make((event_id, arm, ...))``).

    Attributes
    ----------
    event_id : str
    arm : int
        Index of the arm played (a row of ``arms``, or an arm of context mode).
    label : str
        Its label (context mode: the agent's arm labels; arms mode: the index as text).
    propensity : float or None
        pi of the arm played (None: not computed, ``pi_method`` says why).
    propensities : ndarray of shape (K,) or None
        pi of every arm.
    pi_method : str
        One of :data:`PI_METHODS`: how pi was obtained.
    pi_stderr : float
        Monte Carlo's standard error (largest over the arms); 0 when exact.
    model_version : int
        The version of the state that decided (+1 at every batch update).
    bandit : int
        Who played: 0 the shadow, >= 1 a base bandit (All-Season); -1 a single-model policy.
    t : float
        Decision time (Unix seconds; the caller's, or the clock's).
    """

    __slots__ = ()

    def __new__(
        cls,
        event_id: str,
        arm: int,
        label: str,
        propensity: float | None,
        propensities: np.ndarray | None,
        pi_method: str,
        pi_stderr: float,
        model_version: int,
        bandit: int,
        t: float,
    ):
        """The record of these fields."""
        return _tuple_new(
            cls,
            (event_id, arm, label, propensity, propensities, pi_method, pi_stderr,
             model_version, bandit, t),
        )  # fmt: skip

    @classmethod
    def _make(cls, values: tuple) -> Decision:
        """The record of a tuple of the fields in order (no checks)."""
        return _tuple_new(cls, values)

    event_id = property(itemgetter(0))
    arm = property(itemgetter(1))
    label = property(itemgetter(2))
    propensity = property(itemgetter(3))
    propensities = property(itemgetter(4))
    pi_method = property(itemgetter(5))
    pi_stderr = property(itemgetter(6))
    model_version = property(itemgetter(7))
    bandit = property(itemgetter(8))
    t = property(itemgetter(9))

    def __repr__(self) -> str:
        """``Decision(event_id=..., arm=..., ...)``."""
        body = ", ".join(f"{k}={v!r}" for k, v in zip(DECISION_FIELDS, self))
        return f"Decision({body})"

    def __getnewargs__(self):
        """The fields (copy.copy and copy.deepcopy rebuild the record from them)."""
        return tuple(self)

    def to_dict(self) -> dict:
        """The record as JSON-able plain data."""
        d = dict(zip(DECISION_FIELDS, self))
        pis = d["propensities"]
        d["propensities"] = None if pis is None else pis.tolist()
        return d


def _positive_int(name, value, lo=1, hi=10**9):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not lo <= value <= hi:
        raise SpecError(name, f"must be an integer in [{lo}, {hi}], got {show(value)}")
    return int(value)


def _finite_array(name, value, shape_text, ndim):
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise SpecError(name, f"must be numbers of shape {shape_text}, got {show(value)}") from None
    if a.ndim != ndim:
        raise SpecError(name, f"must have shape {shape_text}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise SpecError(name, "must be finite numbers (no NaN, no inf)")
    return a


def _reward(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise SpecError("reward", f"must be a finite number, got {show(value)}")
    return float(value)


def check_expiry(horizon, on_expire, default_reward) -> tuple:
    """(horizon, on_expire, default_reward), checked: seconds > 0 or None; "drop" or
    "default"; a finite number."""
    if horizon is not None:
        if isinstance(horizon, bool) or not isinstance(horizon, int | float):
            raise SpecError("horizon", f"must be seconds > 0 or None, got {show(horizon)}")
        if not (math.isfinite(horizon) and horizon > 0):
            raise SpecError("horizon", f"must be seconds > 0 or None, got {show(horizon)}")
        horizon = float(horizon)
    if on_expire not in ("drop", "default"):
        raise SpecError("on_expire", f"must be 'drop' or 'default', got {show(on_expire)}")
    if (
        isinstance(default_reward, bool)
        or not isinstance(default_reward, int | float)
        or not math.isfinite(default_reward)
    ):
        raise SpecError("default_reward", f"must be a finite number, got {show(default_reward)}")
    return horizon, on_expire, float(default_reward)


def check_labels(n_arms, arms) -> list[str] | None:
    """The arm labels of context mode (None: arms mode)."""
    if arms is not None and n_arms is not None:
        raise SpecError("arms", "give n_arms or arms (their labels), not both")
    if arms is not None:
        if isinstance(arms, str) or not hasattr(arms, "__len__"):
            raise SpecError("arms", f"must be a list of labels, got {show(arms)}")
        labels = [str(a) for a in arms]
        if len(labels) < 1 or len(set(labels)) != len(labels):
            raise SpecError("arms", "must be at least one label, each once")
        return labels
    if n_arms is not None:
        return [str(k) for k in range(_positive_int("n_arms", n_arms, 1, 100_000))]
    return None


__all__ = [
    "Decision",
    "DECISION_FIELDS",
    "UnknownEvent",
    "PI_METHODS",
    "COUNT_NAMES",
    "FORMAT",
    "FORMAT_VERSION",
    "N_MC",
    "check_expiry",
    "check_labels",
]
