"""Declared hyperparameters: what a policy takes, in which range, and what it means.

Each policy class declares, beside its ``__init__``, a dict ``params`` from hyperparameter
name to :class:`Param` (scikit-learn's ``_parameter_constraints`` is the model): a
constraint -- an :class:`Interval` of integers or reals, or :class:`Options` -- and a one-line
help. The defaults stay in the ``__init__`` signature. One validator, :func:`check_values`,
reads the declaration and words every error from it, as a
:class:`~allseason.errors.SpecError` carrying the field, the bounds and the value; the
registry, the configuration checks, the CLI and the app's forms read the same declaration.

    >>> from numbers import Integral, Real
    >>> params = {"tau": Param(Interval(Integral, 1, None, closed="left"), "window"),
    ...           "gamma": Param(Interval(Real, 0, 1, closed="right"), "discount")}
    >>> check_values(params, {"tau": 10.0, "gamma": 1})
    {'tau': 10, 'gamma': 1.0}
    >>> check_values(params, {"gamma": 1.5})
    Traceback (most recent call last):
    ...
    allseason.errors.SpecError: gamma: must be a number in (0, 1], got 1.5

A bound may name another hyperparameter: ``Interval(Real, 0, "delta1", closed="both")``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from numbers import Integral, Real

from ..errors import SpecError, show
from ..limits import LIMITS, MAX_BANDITS, MAX_WINDOW, NOISE_RANGE, PRIOR_RANGE, SCALE_RANGE

_CLOSED = ("left", "right", "both", "neither")


def _fmt(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class Interval:
    """Numbers of ``type`` (``Integral`` or ``Real``) between ``low`` and ``high`` (None: no
    bound; a string: the value of that other hyperparameter); ``closed`` says which ends
    belong: "left", "right", "both" or "neither"."""

    type: type
    low: float | str | None
    high: float | str | None
    closed: str

    def __post_init__(self):
        if self.type not in (Integral, Real) or self.closed not in _CLOSED:
            raise TypeError(
                f"Interval: type must be Integral or Real and closed one of "
                f"{_CLOSED}, got {self.type!r}, {self.closed!r}"
            )

    @property
    def relational(self) -> bool:
        """Whether a bound names another hyperparameter (it is read from the context)."""
        return any(isinstance(b, str) for b in (self.low, self.high))

    def bounds(self, context: Mapping | None = None) -> tuple:
        """(low, high) with bounds that name another hyperparameter resolved in ``context``."""
        return tuple(
            context[b] if isinstance(b, str) and context is not None else b
            for b in (self.low, self.high)
        )

    def describe(self, context: Mapping | None = None) -> str:
        """E.g. 'an integer >= 1', 'a number in (0, 1]', 'a number in [0, delta1 = 0.01]'."""
        kind = "an integer" if self.type is Integral else "a number"
        lo_in, hi_in = self.closed in ("left", "both"), self.closed in ("right", "both")

        def text(b):
            if isinstance(b, str):
                return f"{b} = {_fmt(context[b])}" if context and b in context else b
            return _fmt(b)

        if self.low is not None and self.high is not None:
            return (
                f"{kind} in {'[' if lo_in else '('}{text(self.low)}, "
                f"{text(self.high)}{']' if hi_in else ')'}"
            )
        if self.low is not None:
            return f"{kind} {'>=' if lo_in else '>'} {text(self.low)}"
        if self.high is not None:
            return f"{kind} {'<=' if hi_in else '<'} {text(self.high)}"
        return kind

    def check(self, field: str, value, context: Mapping | None = None):
        """The value as an int or a float; SpecError naming ``field`` if it is not one, or
        out of bounds. Text that reads as a number is taken (a link, a CLI flag)."""
        kind = "an integer" if self.type is Integral else "a number"
        if isinstance(value, bool) or value is None:
            raise SpecError(field, f"must be {kind}, got {show(value)}", got=value)
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError):
            raise SpecError(field, f"must be {kind}, got {show(value)}", got=value) from None
        lo, hi = self.bounds(context)
        out = (
            not math.isfinite(v)
            or (lo is not None and (v < lo or (v == lo and self.closed in ("right", "neither"))))
            or (hi is not None and (v > hi or (v == hi and self.closed in ("left", "neither"))))
        )
        if out:
            raise SpecError(
                field,
                f"must be {self.describe(context)}, got {show(value)}",
                bounds=(lo, hi),
                got=value,
            )
        if self.type is Real:
            return v
        if isinstance(value, Integral):
            return int(value)
        if v != int(v):
            raise SpecError(field, f"must be an integer, got {show(value)}", got=value)
        return int(v)


@dataclass(frozen=True)
class Options:
    """One of a few values (strings): ``Options("fixed-share", "batch")``."""

    values: tuple

    def __init__(self, *values):
        object.__setattr__(self, "values", tuple(values))

    def describe(self, context: Mapping | None = None) -> str:
        """The allowed values in words."""
        return "one of " + ", ".join(repr(v) for v in self.values)

    def check(self, field: str, value, context: Mapping | None = None):
        """The value, if it is one of the allowed ones; else a SpecError naming ``field``."""
        if not isinstance(value, str) or value not in self.values:
            raise SpecError(
                field,
                f"must be {self.describe()}, got {show(value)}",
                bounds=self.values,
                got=value,
            )
        return value


@dataclass(frozen=True)
class Param:
    """One hyperparameter: its constraint, a one-line help, whether None is allowed (an
    option left unset), and its default (filled from the ``__init__`` signature by
    :func:`declared`)."""

    constraint: Interval | Options
    help: str = ""
    none: bool = False
    default: object = inspect.Parameter.empty

    def check(self, field: str, value, context: Mapping | None = None):
        """The value, converted, if it is within bounds; else a SpecError naming ``field``."""
        if value is None and self.none:
            return None
        return self.constraint.check(field, value, context)

    def describe(self, context: Mapping | None = None) -> str:
        """The accepted values in words ('an integer >= 1', "one of 'kl', 'mean'")."""
        text = self.constraint.describe(context)
        return text + " or None" if self.none else text

    @property
    def choices(self) -> tuple | None:
        """The allowed values of an :class:`Options` parameter, else None."""
        return self.constraint.values if isinstance(self.constraint, Options) else None

    @property
    def low(self) -> float | None:
        """The numeric lower bound of an :class:`Interval` parameter (None if it has none
        or it names another hyperparameter)."""
        low = getattr(self.constraint, "low", None)
        return None if isinstance(low, str) else low


# common constraints; every number has an upper bound that memory and arithmetic can bear
# (the reasons are in allseason/limits.py)
POSITIVE = Interval(Real, 0, None, closed="neither")
COUNT = Interval(Integral, 1, None, closed="left")
OPEN_UNIT = Interval(Real, 0, 1, closed="neither")
WINDOW = Interval(Integral, 1, MAX_WINDOW, closed="both")  # tau x d floats are kept
BANDITS = Interval(Integral, 1, MAX_BANDITS, closed="both")  # (n_max + 2)^2 KL table
NOISE = Interval(Real, *NOISE_RANGE, closed="both")  # sigma2: 1 / sigma2 must stay finite
PRIOR = Interval(Real, *PRIOR_RANGE, closed="both")  # lam: 1 / lam must stay finite
SCALE = Interval(Real, *SCALE_RANGE, closed="both")  # norms and slacks, squared and summed
HORIZON = Interval(Integral, 1, LIMITS["horizon"], closed="both")  # the longest race


def check_values(
    params: Mapping[str, Param],
    values: Mapping,
    *,
    defaults: Mapping | None = None,
    owner: str = "",
) -> dict:
    """Check ``values`` against the declarations ``params``; return them converted (ints,
    floats), in the order given. A name not declared, or a bad value, raises SpecError
    naming it. Bounds that name another hyperparameter read it from ``values``, else from
    ``defaults``."""
    unknown = [k for k in values if k not in params]
    if unknown:
        takes = ", ".join(sorted(params)) or "none"
        raise SpecError(str(unknown[0]), f"unknown hyperparameter; {owner or 'it'} takes {takes}")
    context = dict(defaults or {})
    context.update(values)
    relational = [
        k
        for k in values
        if isinstance(constraint := params[k].constraint, Interval) and constraint.relational
    ]
    out = {}
    for k in [k for k in values if k not in relational] + relational:
        out[k] = context[k] = params[k].check(k, values[k], context)
    return {k: out[k] for k in values}


def _merged(cls) -> dict[str, Param]:
    """Every declaration of ``cls`` and its bases (a subclass's own win)."""
    out: dict[str, Param] = {}
    for klass in reversed(cls.__mro__):
        out.update(vars(klass).get("params", {}))
    return out


def declared(cls) -> dict[str, Param]:
    """The hyperparameters ``cls.__init__`` takes (keyword-only, but ``rng``), in signature
    order, each with its declaration and its default. TypeError if one is not declared."""
    return dict(_declared(cls))  # a copy: the caller may change it


@functools.cache
def _declared(cls) -> dict[str, Param]:
    # once per class: every policy built checks its values against these, and
    # inspect.signature took 17 ms of the default race's 45 builds
    merged = _merged(cls)
    out = {}
    for k, p in inspect.signature(cls.__init__).parameters.items():
        if p.kind is not p.KEYWORD_ONLY or k == "rng":
            continue
        if k not in merged:
            raise TypeError(
                f"{cls.__name__}: hyperparameter {k!r} is not declared in {cls.__name__}.params"
            )
        out[k] = replace(merged[k], default=p.default)
    return out


# True while a policy is built from values already checked (a PolicySpec's): scikit-learn's
# ``skip_parameter_validation``. A context variable, so each thread sees its own.
_CHECKED = contextvars.ContextVar("allseason_values_checked", default=False)


@contextlib.contextmanager
def values_checked() -> Iterator[None]:
    """Within this block, policy constructors trust their hyperparameters and check none.

    For the one checker's callers alone (:class:`~allseason.specs.PolicySpec`'s ``build``,
    :func:`~allseason.policies.make_policy`): every value they pass was checked against the
    same declaration, and converted, already. The defaults of ``__init__`` need no check (a
    contract test checks every declared default once).

    Examples
    --------
    >>> from allseason.policies import make_policy
    >>> with values_checked():
    ...     make_policy("sw-lints", 3, tau=10).tau
    10
    """
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def check_own(obj, values: Mapping) -> dict:
    """Check the values a constructor was given against the declarations of its class and
    bases (not only of the signature: a subclass may fix a base's hyperparameter); inside
    :func:`values_checked`, the values as given."""
    if _CHECKED.get():
        return dict(values)
    cls = type(obj)
    defaults = {k: p.default for k, p in declared(cls).items()}
    return check_values(_merged(cls), values, defaults=defaults, owner=cls.name)


__all__ = [
    "Interval",
    "Options",
    "Param",
    "POSITIVE",
    "COUNT",
    "OPEN_UNIT",
    "WINDOW",
    "BANDITS",
    "NOISE",
    "PRIOR",
    "SCALE",
    "HORIZON",
    "check_values",
    "declared",
    "check_own",
    "values_checked",
    "Integral",
    "Real",
]
