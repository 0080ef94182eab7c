"""The one error a bad configuration value raises, wherever it is checked.

:class:`SpecError` names the field at fault and says what is wrong; a value out of declared
bounds also carries the bounds and the value, so a front end can word its own message
without reading ours.

    >>> err = SpecError("tau", "must be an integer >= 1, got 0", bounds=(1, None), got=0)
    >>> err.field, err.bounds, err.got
    ('tau', (1, None), 0)
    >>> str(err.within("sw-lints"))
    'sw-lints.tau: must be an integer >= 1, got 0'
"""

from __future__ import annotations

import reprlib


class SpecError(ValueError):
    """A configuration value is invalid; ``field`` says which one, ``message`` what is wrong.

    A value out of range also carries ``bounds`` -- (lo, hi) of an interval (None: no
    bound), or the tuple of allowed choices -- and ``got`` (the value), so a front end with
    tighter limits can word its own message."""

    def __init__(
        self, field: str, message: str, *, bounds: tuple | None = None, got: object = None
    ):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.bounds, self.got = bounds, got

    def within(self, prefix: str) -> SpecError:
        """The same error with its field placed under ``prefix`` ("tau" -> "lints.tau")."""
        return SpecError(f"{prefix}.{self.field}", self.message, bounds=self.bounds, got=self.got)


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = 40
_REPR.maxlevel, _REPR.maxlist, _REPR.maxdict = 2, 4, 4


def show(value) -> str:
    """A short repr of a user's value for a message: long text, deep nesting and numbers of
    thousands of digits are cut (``repr`` of the last one even raises)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    try:
        return _REPR.repr(value)
    except Exception:
        return f"a {type(value).__name__}"


__all__ = ["SpecError", "show"]
