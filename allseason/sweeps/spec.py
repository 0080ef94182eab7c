"""A sweep's specification: scenarios x the settings of each policy grid x seeds, validated
with errors naming the field (``policies[2].grid.tau: ...``), and its runs (:class:`Unit`),
each keyed by the sha256 of its full canonical configuration."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import NoReturn

import numpy as np

from ..envs.patterns import PRESETS
from ..files import read_text, safe_base_name
from ..limits import SWEEP_LIMITS
from ..policies import check_params, hyperparameters
from ..specs import PolicySpec, Scenario, SpecError

FORMAT = 1  # bump when the meaning of a stored row changes
METRICS = {  # name: (description, higher is better)
    "mean_reward": ("mean reward per step", True),
    "mean_expected_reward": ("mean expected reward per step", True),
    "cum_regret": ("cumulative pseudo-regret", False),
}

_SCENARIO_FIELDS = tuple(Scenario.__dataclass_fields__)
_SCENARIO_KEYS = _SCENARIO_FIELDS + ("horizon", "n_states", "grid")
_SCALAR = (int, float, str, bool, type(None))


def _engine_version() -> str:
    from .._version import __version__

    return __version__


def _reraise(prefix: str, e: SpecError) -> NoReturn:
    """Raise ``e`` again with its field under ``prefix`` (``scenarios[2]`` + ``horizon``)."""
    raise e.within(prefix) from None


def canonical_json(obj) -> str:
    """Sorted keys, no spaces, no NaN: the text that is hashed into a run key."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def _grid_items(where: str, grid, allowed, *, fixed=()) -> tuple[tuple[str, tuple], ...]:
    """Validate a grid {name: [values]}: known names, non-empty lists of scalars, no repeats."""
    if grid is None:
        return ()
    items = grid.items() if isinstance(grid, dict) else grid
    try:
        items = [(k, v) for k, v in items]
    except (TypeError, ValueError):
        raise SpecError(where, "must be a table {name = [values, ...]}") from None
    out = []
    for k, values in items:
        if not isinstance(k, str) or k not in allowed:
            raise SpecError(f"{where}.{k}", f"unknown field; known: {', '.join(sorted(allowed))}")
        if k in fixed:
            raise SpecError(f"{where}.{k}", "is also given as a fixed value; keep one")
        if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not values:
            raise SpecError(f"{where}.{k}", f"must be a non-empty list of values, got {values!r}")
        if len(values) > SWEEP_LIMITS["n_values"]:
            raise SpecError(f"{where}.{k}", f"at most {SWEEP_LIMITS['n_values']} values")
        values = [_plain(v) for v in values]
        seen = set()
        for v in values:
            tag = (type(v).__name__, json.dumps(v, sort_keys=True, default=repr))
            if tag in seen:
                raise SpecError(f"{where}.{k}", f"value {v!r} is listed twice")
            seen.add(tag)
        out.append((k, tuple(values)))
    return tuple(sorted(out))


def _plain(value):
    """numpy scalars as Python ones (the configuration goes through JSON)."""
    return value.item() if isinstance(value, np.generic) else value


def _product(grid: tuple[tuple[str, tuple], ...]):
    names = [k for k, _ in grid]
    for values in itertools.product(*(v for _, v in grid)):
        yield dict(zip(names, values))


@dataclass(frozen=True)
class PolicyGrid:
    """One algorithm of a sweep: a registered policy ``name``, fixed ``params``, a ``grid``
    {hyperparameter: [values]} whose product gives the settings, and a ``label`` (default:
    the name) shared by every setting (it names the algorithm and its random stream)."""

    name: str
    grid: tuple[tuple[str, tuple], ...] = ()
    params: tuple[tuple[str, object], ...] = ()
    label: str = ""

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        if not isinstance(self.name, str) or not self.name:
            raise SpecError("name", "must be a registered policy name (see `policies`)")
        try:
            allowed = hyperparameters(self.name)
        except SpecError as e:
            raise SpecError("name", e.message, bounds=e.bounds, got=e.got) from None
        params = self.params
        if params is None:
            params = {}
        if not isinstance(params, dict):
            try:
                params = dict(params)
            except (TypeError, ValueError):
                raise SpecError("params", "must be a table {name = value}") from None
        params = {k: _plain(v) for k, v in params.items()}
        for k, v in params.items():
            if k not in allowed:
                raise SpecError(
                    f"params.{k}",
                    f"unknown hyperparameter; {self.name} takes "
                    f"{', '.join(sorted(allowed)) or 'none'}",
                )
            if not isinstance(v, _SCALAR):
                raise SpecError(f"params.{k}", f"must be a number, string or boolean, got {v!r}")
        set_("params", tuple(sorted(params.items())))
        grid = _grid_items("grid", self.grid, allowed, fixed=params)
        for k, values in grid:
            for v in values:
                if not isinstance(v, _SCALAR):
                    raise SpecError(
                        f"grid.{k}", f"values must be numbers, strings or booleans, got {v!r}"
                    )
        set_("grid", grid)
        if not isinstance(self.label, str):
            raise SpecError("label", f"must be a string, got {self.label!r}")
        set_("label", self.label.strip() or self.name)
        n = math.prod(len(v) for _, v in grid)
        if n > SWEEP_LIMITS["n_runs"]:
            raise SpecError("grid", f"{n} settings; at most {SWEEP_LIMITS['n_runs']}")
        for point in _product(grid):  # every setting against the declaration: bad values fail now
            try:
                check_params(self.name, {**params, **point})
            except SpecError as e:
                where = "grid" if e.field in point else "params"
                raise SpecError(
                    f"{where}.{e.field}",
                    e.message + (f" (setting {point})" if point else ""),
                    bounds=e.bounds,
                    got=e.got,
                ) from None

    @property
    def n_settings(self) -> int:
        """The number of hyperparameter settings in the grid."""
        return math.prod(len(v) for _, v in self.grid)

    def specs(self) -> tuple[PolicySpec, ...]:
        """One PolicySpec per point of the grid (all with this entry's label)."""
        return tuple(
            PolicySpec(self.name, {**dict(self.params), **point}, self.label)
            for point in _product(self.grid)
        )

    def to_dict(self) -> dict:
        """The grid as plain data (JSON-ready)."""
        return {
            "name": self.name,
            "label": self.label,
            "params": dict(self.params),
            "grid": {k: list(v) for k, v in self.grid},
        }

    @classmethod
    def from_dict(cls, data, where: str = "policy") -> PolicyGrid:
        """The grid from plain data (a name alone, or a table); a SpecError naming ``where``."""
        if isinstance(data, str):
            data = {"name": data}
        if not isinstance(data, dict):
            raise SpecError(where, "must be a table with a name (and params, grid, label)")
        known = ("name", "label", "params", "grid")
        for k in data:
            if k not in known:
                raise SpecError(
                    f"{where}.{k}",
                    f"unknown field; known: {', '.join(known)} "
                    "(hyperparameters go in params or grid)",
                )
        if "name" not in data:
            raise SpecError(f"{where}.name", "required: a registered policy name")
        try:
            return cls(
                data["name"],
                data.get("grid") or (),
                data.get("params") or (),
                data.get("label", ""),
            )
        except SpecError as e:
            _reraise(where, e)


def _scenario_point(where: str, data: dict) -> Scenario:
    """Build one Scenario from a scenario table without a grid."""
    data = dict(data)
    horizon, n_states = data.pop("horizon", None), data.pop("n_states", None)
    try:
        if "segments" in data:
            for k, v in (("horizon", horizon), ("n_states", n_states)):
                if v is not None:
                    raise SpecError(k, "comes from the segments; drop it or drop segments")
            data.setdefault("preset", "custom")
            return Scenario.from_dict(data)
        name = data.pop("preset", "paper-synthetic")
        if name == "custom":
            raise SpecError("segments", 'required with preset = "custom": [[state, length], ...]')
        if name not in PRESETS:
            raise SpecError(
                "preset", f"unknown preset {name!r}; known: {', '.join(PRESETS)} (or give segments)"
            )
        kw = {} if n_states is None else {"n_states": n_states}
        return Scenario.from_preset(name, horizon=horizon, **kw, **data)
    except SpecError as e:
        _reraise(where, e)
    except TypeError as e:  # e.g. a non-string preset
        raise SpecError(where, str(e)) from None


def scenarios_from_dict(data, where: str = "scenarios[1]") -> list[Scenario]:
    """The scenarios of one ``[[scenarios]]`` table: its fields, times its ``grid``.

    Fields: those of :class:`Scenario` (segments, d, n_arms, sigma2, batch_size, seed,
    preset) plus ``horizon`` and ``n_states`` for presets, and ``grid``."""
    if isinstance(data, Scenario):
        return [data]
    if not isinstance(data, dict):
        raise SpecError(where, "must be a table of scenario fields")
    for k in data:
        if k not in _SCENARIO_KEYS:
            raise SpecError(f"{where}.{k}", f"unknown field; known: {', '.join(_SCENARIO_KEYS)}")
    fixed = {k: v for k, v in data.items() if k != "grid"}
    grid = _grid_items(
        f"{where}.grid", data.get("grid"), [k for k in _SCENARIO_KEYS if k != "grid"], fixed=fixed
    )
    return [_scenario_point(where, {**fixed, **point}) for point in _product(grid)]


def _seeds(value) -> tuple[int, ...]:
    if isinstance(value, bool) or value is None:
        raise SpecError(
            "seeds",
            "required: a number of seeds (seeds = 5) or a list of seed indices (seeds = [0, 1, 2])",
        )
    if isinstance(value, int):
        if not 1 <= value <= SWEEP_LIMITS["n_seeds"]:
            raise SpecError(
                "seeds", f"must be between 1 and {SWEEP_LIMITS['n_seeds']}, got {value}"
            )
        return tuple(range(value))
    if isinstance(value, (list, tuple)) and value:
        if len(value) > SWEEP_LIMITS["n_seeds"]:
            raise SpecError("seeds", f"at most {SWEEP_LIMITS['n_seeds']} seeds")
        for v in value:
            if (
                isinstance(v, bool)
                or not isinstance(v, int)
                or not 0 <= v <= SWEEP_LIMITS["seed_index"]
            ):
                raise SpecError("seeds", f"seed indices must be integers >= 0, got {v!r}")
        if len(set(value)) != len(value):
            raise SpecError("seeds", "a seed index is listed twice")
        return tuple(value)
    raise SpecError(
        "seeds", f"must be a number of seeds or a non-empty list of seed indices, got {value!r}"
    )


@dataclass(frozen=True)
class Unit:
    """One run: a scenario, one policy setting, one seed index."""

    scenario: Scenario
    policy: PolicySpec
    seed_index: int

    @cached_property
    def config(self) -> dict:
        """The full configuration: every default filled in, as the policy is built."""
        sc, spec = self.scenario, self.policy
        params = dict(hyperparameters(spec.name))
        for key, value in (("sigma2", sc.sigma2), ("horizon", sc.horizon)):
            if key in params:
                params[key] = value  # spec.build fills these from the scenario
        params.update(spec.params)
        return {
            "format": FORMAT,
            "engine": _engine_version(),
            "scenario": sc.to_dict(),
            "policy": {"name": spec.name, "label": spec.label, "params": params},
            "seed_index": self.seed_index,
        }

    @cached_property
    def key(self) -> str:
        """sha256 of the canonical JSON configuration: the run's primary key."""
        return hashlib.sha256(canonical_json(self.config).encode()).hexdigest()

    @cached_property
    def scenario_key(self) -> str:
        """A short hash of the scenario's JSON."""
        return hashlib.sha256(self.scenario.to_json().encode()).hexdigest()[:16]


@dataclass(frozen=True)
class SweepSpec:
    """A sweep: ``scenarios`` x the settings of each of ``policies`` x ``seeds``.

    scenarios: Scenario objects (or scenario tables, see :func:`scenarios_from_dict`);
    policies: PolicyGrid objects (or PolicySpec / dicts / names); seeds: a count n (seed
    indices 0..n-1) or a list of seed indices; metric: one of ``METRICS``; name: a short
    identifier (letters, digits, ``-_.``)."""

    scenarios: tuple[Scenario, ...] = ()
    policies: tuple[PolicyGrid, ...] = ()
    seeds: tuple[int, ...] = (0,)  # given as a count n (0..n-1) or a list of indices
    metric: str = "mean_reward"
    name: str = "sweep"
    description: str = ""

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        name_ok = isinstance(self.name, str) and re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", self.name)
        if not name_ok:
            raise SpecError(
                "name", f"must be 1-64 letters, digits, '-', '_' or '.', got {self.name!r}"
            )
        if not isinstance(self.description, str):
            raise SpecError("description", "must be a string")
        if self.metric not in METRICS:
            raise SpecError("metric", f"must be one of {', '.join(METRICS)}, got {self.metric!r}")
        set_("seeds", _seeds(list(self.seeds) if isinstance(self.seeds, tuple) else self.seeds))
        scen = self.scenarios
        if isinstance(scen, (Scenario, dict)):
            scen = [scen]
        if not isinstance(scen, (list, tuple)) or not scen:
            raise SpecError("scenarios", "give at least one scenario ([[scenarios]] tables)")
        out = []
        for i, s in enumerate(scen):
            out.extend(scenarios_from_dict(s, f"scenarios[{i + 1}]"))
        if len(out) > SWEEP_LIMITS["n_scenarios"]:
            raise SpecError(
                "scenarios", f"{len(out)} scenarios; at most {SWEEP_LIMITS['n_scenarios']}"
            )
        set_("scenarios", tuple(dict.fromkeys(out)))
        pols = self.policies
        if isinstance(pols, (PolicyGrid, PolicySpec, dict, str)):
            pols = [pols]
        if not isinstance(pols, (list, tuple)) or not pols:
            raise SpecError("policies", "give at least one policy ([[policies]] tables)")
        if len(pols) > SWEEP_LIMITS["n_policies"]:
            raise SpecError("policies", f"at most {SWEEP_LIMITS['n_policies']} entries")
        grids, labels = [], {}
        for i, p in enumerate(pols):
            where = f"policies[{i + 1}]"
            if isinstance(p, PolicySpec):
                p = PolicyGrid(p.name, (), dict(p.params), p.label)
            elif not isinstance(p, PolicyGrid):
                p = PolicyGrid.from_dict(p, where)
            if p.label in labels:
                raise SpecError(
                    f"{where}.label",
                    f"{p.label!r} is already the label of "
                    f"policies[{labels[p.label]}]; give each "
                    "entry its own label",
                )
            labels[p.label] = i + 1
            grids.append(p)
        set_("policies", tuple(grids))
        if self.n_runs > SWEEP_LIMITS["n_runs"]:
            raise SpecError(
                "seeds", f"the sweep has {self.n_runs} runs; at most {SWEEP_LIMITS['n_runs']}"
            )

    @property
    def n_settings(self) -> int:
        """The number of policy settings."""
        return sum(p.n_settings for p in self.policies)

    @property
    def n_runs(self) -> int:
        """The number of runs: scenarios x settings x seeds."""
        return len(self.scenarios) * self.n_settings * len(self.seeds)

    def units(self) -> list[Unit]:
        """Every run, seed by seed (so a partial sweep has every setting at fewer seeds),
        duplicates (same key) removed."""
        specs = [s for p in self.policies for s in p.specs()]
        out: dict[str, Unit] = {}
        for k in self.seeds:
            for sc in self.scenarios:
                for spec in specs:
                    u = Unit(sc, spec, k)
                    out.setdefault(u.key, u)
        return list(out.values())

    def to_dict(self) -> dict:
        """The sweep as plain data (JSON-ready)."""
        return {
            "name": self.name,
            "description": self.description,
            "metric": self.metric,
            "seeds": list(self.seeds),
            "scenarios": [s.to_dict() for s in self.scenarios],
            "policies": [p.to_dict() for p in self.policies],
        }

    def to_json(self) -> str:
        """The sweep as JSON."""
        return json.dumps(self.to_dict(), indent=1, sort_keys=True)

    @classmethod
    def from_dict(cls, data, *, name: str | None = None) -> SweepSpec:
        """Validate a parsed file; errors name the field (``policies[2].grid.tau: ...``)."""
        if not isinstance(data, dict):
            raise SpecError("sweep", "must be a table (TOML) or an object (JSON)")
        known = ("name", "description", "seeds", "metric", "scenario", "scenarios", "policies")
        for k in data:
            if k not in known:
                raise SpecError(k, f"unknown field; known: {', '.join(known)}")
        if "scenario" in data and "scenarios" in data:
            raise SpecError("scenario", "give either [scenario] or [[scenarios]], not both")
        if "seeds" not in data:
            raise SpecError(
                "seeds", "required: a number of seeds (seeds = 5) or a list of seed indices"
            )
        scen = data.get("scenarios", data.get("scenario"))
        if scen is None:
            raise SpecError("scenarios", "required: at least one [[scenarios]] table")
        if isinstance(scen, dict):
            scen = [scen]
        if not isinstance(scen, list):
            raise SpecError("scenarios", "must be a list of tables ([[scenarios]])")
        pols = data.get("policies")
        if pols is None:
            raise SpecError("policies", "required: at least one [[policies]] table")
        if not isinstance(pols, list):
            raise SpecError("policies", "must be a list of tables ([[policies]])")
        return cls(
            scenarios=tuple(scen),
            policies=tuple(pols),
            seeds=data["seeds"],
            metric=data.get("metric", "mean_reward"),
            name=data.get("name", name or "sweep"),
            description=data.get("description", ""),
        )

    @classmethod
    def from_file(cls, path) -> SweepSpec:
        """Read a ``.toml`` or ``.json`` sweep file (the name defaults to the file's stem)."""
        path = Path(path)
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        # a regular file (no FIFO, no device), its size, UTF-8: the words of every user file
        text = read_text(path, "file", SWEEP_LIMITS["file_bytes"], kind)
        if path.suffix.lower() == ".json":
            try:
                data = json.loads(text)
            except ValueError as e:
                raise SpecError("file", f"{str(path)!r} is not valid JSON ({e})") from None
            except RecursionError:
                raise SpecError("file", f"{str(path)!r}: JSON nested too deeply") from None
        elif path.suffix.lower() == ".toml":
            try:
                data = tomllib.loads(text)
            except tomllib.TOMLDecodeError as e:
                raise SpecError("file", f"{str(path)!r} is not valid TOML ({e})") from None
            except RecursionError:
                raise SpecError("file", f"{str(path)!r}: TOML nested too deeply") from None
        else:
            raise SpecError("file", f"{str(path)!r}: use a .toml or .json file")
        stem = safe_base_name(path.stem, "sweep")
        return cls.from_dict(data, name=stem)
