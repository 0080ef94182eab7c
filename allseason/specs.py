"""Frozen, validated configuration: a scenario (pattern + environment + batches + seed), the
policies to race, and the race itself.

Every value a user sends (CLI flag, JSON file, upload, URL) enters through ``from_dict`` /
``parse_*`` here and is either accepted or rejected with a ``SpecError`` whose message names
the field. Nothing is evaluated; nothing is used as a path.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field

from .envs.patterns import PAPER_SYNTHETIC, PRESETS, Pattern, preset
from .policies import hyperparameters, policy_class

# bounds that keep one request from taking a machine down; the app may tighten them
LIMITS = dict(horizon=200_000, d=500, n_arms=100, n_states=50, n_segments=2_000, n_seeds=50,
              batch_size=10_000, n_policies=12)


class SpecError(ValueError):
    """A configuration value is invalid; ``field`` says which one."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


def _int(field, value, lo, hi):
    if isinstance(value, bool) or value is None:
        raise SpecError(field, f"must be an integer, got {value!r}")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise SpecError(field, f"must be an integer, got {value!r}") from None
    if not math.isfinite(f) or f != int(f):
        raise SpecError(field, f"must be an integer, got {value!r}")
    if not lo <= int(f) <= hi:
        raise SpecError(field, f"must be between {lo} and {hi}, got {int(f)}")
    return int(f)


def _float(field, value, lo, hi, *, lo_open=False):
    if isinstance(value, bool) or value is None:
        raise SpecError(field, f"must be a number, got {value!r}")
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise SpecError(field, f"must be a number, got {value!r}") from None
    if not math.isfinite(f) or f < lo or f > hi or (lo_open and f == lo):
        rng = f"({lo}, {hi}]" if lo_open else f"[{lo}, {hi}]"
        raise SpecError(field, f"must be a number in {rng}, got {value!r}")
    return f


@dataclass(frozen=True)
class Scenario:
    """A seasonal problem: the pattern, the linear environment, how rewards are batched, seed.

    segments: ((state, length), ...); d: dimension; n_arms: K; sigma2: reward noise variance;
    batch_size: B, or a tuple of batch sizes repeated in turn (inhomogeneous batches);
    seed: root of every random stream; preset: the preset name it came from, if any.
    """

    segments: tuple[tuple[int, int], ...] = PAPER_SYNTHETIC
    d: int = 5
    n_arms: int = 5
    sigma2: float = 0.1
    batch_size: int | tuple[int, ...] = 1
    seed: int = 0
    preset: str = "paper-synthetic"

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731
        segs = self.segments
        if not isinstance(segs, (list, tuple)) or not segs:
            raise SpecError("segments", "must be a non-empty list of [state, length] pairs")
        if len(segs) > LIMITS["n_segments"]:
            raise SpecError("segments", f"at most {LIMITS['n_segments']} segments")
        clean = []
        for i, seg in enumerate(segs):
            if not isinstance(seg, (list, tuple)) or len(seg) != 2:
                raise SpecError("segments", f"segment {i + 1} must be a [state, length] pair")
            clean.append((_int(f"segments[{i + 1}].state", seg[0], 0, LIMITS["n_states"] - 1),
                          _int(f"segments[{i + 1}].length", seg[1], 1, LIMITS["horizon"])))
        set_("segments", tuple(clean))
        if self.horizon > LIMITS["horizon"]:
            raise SpecError("segments", f"the horizon (sum of lengths) must be at most "
                                        f"{LIMITS['horizon']}, got {self.horizon}")
        set_("d", _int("d", self.d, 1, LIMITS["d"]))
        set_("n_arms", _int("n_arms", self.n_arms, 2, LIMITS["n_arms"]))
        set_("sigma2", _float("sigma2", self.sigma2, 0.0, 1e6, lo_open=True))
        bs = self.batch_size
        if isinstance(bs, (list, tuple)):
            if not bs or len(bs) > 1000:
                raise SpecError("batch_size", "a list of batch sizes must have 1 to 1000 items")
            set_("batch_size", tuple(_int("batch_size", b, 1, LIMITS["batch_size"]) for b in bs))
        else:
            set_("batch_size", _int("batch_size", bs, 1, LIMITS["batch_size"]))
        set_("seed", _int("seed", self.seed, 0, 2**63 - 1))
        if self.preset not in PRESETS + ("custom",):
            raise SpecError("preset", f"must be one of {PRESETS + ('custom',)}, got {self.preset!r}")

    @property
    def pattern(self) -> Pattern:
        return Pattern(self.segments)

    @property
    def horizon(self) -> int:
        return sum(n for _, n in self.segments)

    def batch_ends(self):
        """Index of the last step of every batch, shape (n_batches,)."""
        import numpy as np

        sizes = self.batch_size if isinstance(self.batch_size, tuple) else (self.batch_size,)
        reps = -(-self.horizon // sum(sizes))
        ends = np.cumsum(np.tile(sizes, reps)) - 1
        ends = ends[ends < self.horizon - 1]
        return np.append(ends, self.horizon - 1).astype(np.int64)

    @classmethod
    def from_preset(cls, name: str, *, horizon: int | None = None, n_states: int = 3,
                    **kw) -> "Scenario":
        """A scenario on a preset pattern (see :func:`allseason.envs.preset`)."""
        if name not in PRESETS:
            raise SpecError("preset", f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
        if horizon is not None:
            horizon = _int("horizon", horizon, 1, LIMITS["horizon"])
        n_states = _int("n_states", n_states, 1, LIMITS["n_states"])
        try:
            pattern = preset(name, horizon, n_states)
        except ValueError as e:
            raise SpecError("horizon", str(e).split(": ", 1)[-1]) from None
        return cls(segments=pattern.segments, preset=name, **kw)

    def to_dict(self) -> dict:
        out = asdict(self)
        out["segments"] = [list(s) for s in self.segments]
        if isinstance(self.batch_size, tuple):
            out["batch_size"] = list(self.batch_size)
        return out

    @classmethod
    def from_dict(cls, data) -> "Scenario":
        """Validate a plain dict (e.g. parsed JSON); unknown keys are an error."""
        if not isinstance(data, dict):
            raise SpecError("scenario", "must be a JSON object")
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(data) - known
        if unknown:
            name = sorted(map(str, unknown))[0]
            raise SpecError(name[:40] if name.strip() else "scenario",
                            f"unknown field {name[:40]!r}; known: {', '.join(sorted(known))}")
        return cls(**data)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys): the cache key of a scenario."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> "Scenario":
        try:
            data = json.loads(text)
        except (ValueError, TypeError) as e:
            raise SpecError("file", f"not valid JSON ({e})") from None
        return cls.from_dict(data)


@dataclass(frozen=True)
class PolicySpec:
    """One contestant: a registered policy name, its hyperparameters, a display label.

    sigma2 defaults to the scenario's noise variance (the paper's 'correct specification')."""

    name: str
    params: tuple[tuple[str, object], ...] = ()
    label: str = ""

    def __post_init__(self):
        try:
            policy_class(self.name)
        except ValueError as e:
            raise SpecError("policies", str(e).split(": ", 1)[-1]) from None
        params = dict(self.params.items() if isinstance(self.params, dict) else self.params)
        allowed = hyperparameters(self.name)
        for k in params:
            if k not in allowed:
                raise SpecError(f"{self.name}.{k}", f"unknown hyperparameter; {self.name} "
                                                   f"takes {', '.join(sorted(allowed)) or 'none'}")
        object.__setattr__(self, "params", tuple(sorted(params.items())))
        if not self.label:
            object.__setattr__(self, "label", self.name)
        # build once to validate values now rather than mid-race
        try:
            self.build(1, rng=0)
        except ValueError as e:
            raise SpecError(f"{self.name}.{str(e).split(':', 1)[0]}",
                            str(e).split(": ", 1)[-1]) from None

    def build(self, d: int, *, rng=None, sigma2: float | None = None,
              horizon: int | None = None):
        """Instantiate the policy for dimension d; sigma2 and horizon (BoB needs T) fill in
        the hyperparameters of those names that the spec leaves unset."""
        params = dict(self.params)
        for key, value in (("sigma2", sigma2), ("horizon", horizon)):
            if value is not None and key in hyperparameters(self.name):
                params.setdefault(key, value)
        return policy_class(self.name)(d, rng=rng, **params)

    def to_dict(self) -> dict:
        return {"name": self.name, "params": dict(self.params), "label": self.label}


def policy_specs(names_or_dicts, **shared) -> tuple[PolicySpec, ...]:
    """Build specs from names (sharing the hyperparameters each one takes) or dicts."""
    specs = []
    for item in names_or_dicts:
        if isinstance(item, PolicySpec):
            specs.append(item)
            continue
        if isinstance(item, dict):
            specs.append(PolicySpec(item.get("name", ""), item.get("params", {}),
                                    item.get("label", "")))
            continue
        name = str(item).strip()
        try:
            allowed = hyperparameters(name)
        except ValueError as e:
            raise SpecError("policies", str(e).split(": ", 1)[-1]) from None
        specs.append(PolicySpec(name, {k: v for k, v in shared.items()
                                       if k in allowed and v is not None}))
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise SpecError("policies", f"labels must be unique, got {labels}")
    if not specs:
        raise SpecError("policies", "choose at least one policy")
    if len(specs) > LIMITS["n_policies"]:
        raise SpecError("policies", f"at most {LIMITS['n_policies']} policies")
    return tuple(specs)


@dataclass(frozen=True)
class Race:
    """Several policies on one scenario over ``n_seeds`` independent seeds."""

    scenario: Scenario = field(default_factory=Scenario)
    policies: tuple[PolicySpec, ...] = ()
    n_seeds: int = 1

    def __post_init__(self):
        object.__setattr__(self, "policies", policy_specs(self.policies))
        object.__setattr__(self, "n_seeds", _int("n_seeds", self.n_seeds, 1, LIMITS["n_seeds"]))

    def to_dict(self) -> dict:
        return {"scenario": self.scenario.to_dict(), "n_seeds": self.n_seeds,
                "policies": [p.to_dict() for p in self.policies]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data) -> "Race":
        if not isinstance(data, dict):
            raise SpecError("race", "must be a JSON object")
        return cls(Scenario.from_dict(data.get("scenario", {})),
                   policy_specs(data.get("policies", [])), data.get("n_seeds", 1))
