"""Frozen, validated configuration: a scenario (pattern + environment + batches + seed), the
policies to race, and the race itself.

Every value a user sends (CLI flag or file, JSON or CSV upload, URL) enters through ONE entry
point, :func:`parse_scenario`, and is either accepted as a valid :class:`Scenario` or rejected
with a ``SpecError`` whose ``field`` names the input. Text is size-checked before it is read
(``MAX_INPUT_BYTES``), parsed with ``json`` / ``csv`` only, and never evaluated; nothing a
user sends is used as a path.

    >>> sc = parse_scenario('{"segments": [[0, 500], [1, 300]], "d": 3}')
    >>> sc.horizon, sc.d, sc.preset
    (800, 3, 'custom')
    >>> parse_scenario({"segments": [[0, 500], [1, -3]]}, "dict")
    Traceback (most recent call last):
    ...
    allseason.errors.SpecError: segments[2].length: must be between 1 and 200000, got -3
    >>> PolicySpec("allseason-sw", {"tau": 20}).params
    (('tau', 20),)
"""

from ..errors import SpecError
from ..limits import LIMITS, MAX_INPUT_BYTES
from .race import PolicySpec, Race, policy_specs
from .readers import CSV_COLUMNS
from .scenario import (
    ENVIRONMENT_FIELDS,
    INPUT_KINDS,
    Rejected,
    Scenario,
    check_limits,
    file_kind,
    parse_scenario,
)

__all__ = [
    "Scenario",
    "PolicySpec",
    "Race",
    "policy_specs",
    "parse_scenario",
    "check_limits",
    "file_kind",
    "Rejected",
    "SpecError",
    "LIMITS",
    "MAX_INPUT_BYTES",
    "INPUT_KINDS",
    "ENVIRONMENT_FIELDS",
    "CSV_COLUMNS",
]
