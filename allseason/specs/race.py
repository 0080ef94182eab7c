"""The policies to race (:class:`PolicySpec`, :func:`policy_specs`) and the race itself
(:class:`Race`): frozen, validated."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import SpecError
from ..limits import LIMITS, Limits
from ..policies import check_params, hyperparameters, parameters, policy_class, values_checked
from .scenario import Scenario, _int, _said_within, check_limits


@dataclass(frozen=True, init=False)
class PolicySpec:
    """One contestant: a registered policy name, its hyperparameters, a display label.

    The one check of a policy's hyperparameters: they are checked against its declaration
    here, once, and kept converted (ints, floats); a policy built from the spec
    (:meth:`build`, :meth:`build_for`) trusts them. sigma2 defaults to the scenario's noise
    variance (the paper's 'correct specification')."""

    name: str
    params: tuple[tuple[str, object], ...] = ()
    label: str = ""

    def __init__(
        self,
        name: str,
        params: Mapping[str, object] | Iterable[tuple[str, object]] = (),
        label: str = "",
    ) -> None:
        # the dataclass's own __init__, but typed for what it takes (a mapping or pairs),
        # not for what it keeps (the checked pairs, sorted)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "label", label)
        self.__post_init__()

    def __post_init__(self) -> None:
        try:
            policy_class(self.name)
        except SpecError as e:
            raise SpecError("policies", e.message, bounds=e.bounds, got=e.got) from None
        params = dict(self.params.items() if isinstance(self.params, Mapping) else self.params)
        try:  # the policy's declaration: values are checked now rather than mid-race
            params = check_params(self.name, params)
        except SpecError as e:
            raise e.within(self.name) from None
        object.__setattr__(self, "params", tuple(sorted(params.items())))
        if not self.label:
            object.__setattr__(self, "label", self.name)

    def build(self, d: int, *, rng=None, sigma2: float | None = None, horizon: int | None = None):
        """Instantiate the policy for dimension d; sigma2 and horizon (BoB needs T) fill in
        the hyperparameters of those names that the spec leaves unset, checked against the
        policy's declaration (they come from outside the spec); the spec's own values are
        not checked again."""
        declared = parameters(self.name)
        filled = {
            key: declared[key].check(key, value)
            for key, value in (("sigma2", sigma2), ("horizon", horizon))
            if value is not None and key in declared and key not in dict(self.params)
        }
        return self._build(d, rng, filled)

    def build_for(self, scenario: Scenario, *, rng=None):
        """Instantiate the policy for a scenario: its d, and its sigma2 and horizon for the
        hyperparameters of those names the spec leaves unset. Nothing is checked again: the
        scenario checked its noise and horizon against the same bounds
        (``limits.NOISE_RANGE``, ``LIMITS["horizon"]``) as the policies declare."""
        declared = parameters(self.name)
        filled = {
            key: value
            for key, value in (("sigma2", scenario.sigma2), ("horizon", scenario.horizon))
            if key in declared and key not in dict(self.params)
        }
        return self._build(scenario.d, rng, filled)

    def _build(self, d: int, rng, filled: dict):
        with values_checked():  # the spec's values and the filled ones are checked
            return policy_class(self.name)(d, rng=rng, **dict(self.params), **filled)

    def to_dict(self) -> dict:
        """The spec as plain data (JSON-ready)."""
        return {"name": self.name, "params": dict(self.params), "label": self.label}


def policy_specs(names_or_dicts, **shared) -> tuple[PolicySpec, ...]:
    """Build specs from names (sharing the hyperparameters each one takes) or dicts."""
    specs = []
    for item in names_or_dicts:
        if isinstance(item, PolicySpec):
            specs.append(item)
            continue
        if isinstance(item, dict):
            specs.append(
                PolicySpec(item.get("name", ""), item.get("params", {}), item.get("label", ""))
            )
            continue
        name = str(item).strip()
        try:
            allowed = hyperparameters(name)
        except SpecError as e:
            raise SpecError("policies", e.message, bounds=e.bounds, got=e.got) from None
        specs.append(
            PolicySpec(name, {k: v for k, v in shared.items() if k in allowed and v is not None})
        )
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise SpecError("policies", f"labels must be unique, got {labels}")
    if not specs:
        raise SpecError("policies", "choose at least one policy")
    if len(specs) > LIMITS["n_policies"]:
        raise SpecError(
            "policies",
            f"at most {LIMITS['n_policies']} policies, got {len(specs)}",
            bounds=(1, LIMITS["n_policies"]),
            got=len(specs),
        )
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

    @classmethod
    def _of_checked(cls, scenario: Scenario, policies: tuple[PolicySpec, ...], n_seeds: int):
        """The race of settings :meth:`checked` has just checked, not checked again."""
        race = object.__new__(cls)
        for name, value in (("scenario", scenario), ("policies", policies), ("n_seeds", n_seeds)):
            object.__setattr__(race, name, value)
        return race

    @classmethod
    def checked(
        cls, scenario: Scenario, policies, n_seeds: int = 1, limits: Limits = LIMITS
    ) -> Race:
        """The race of these settings within ``limits``: the one check of a race's settings
        (the app's forms and links collect values and show its message).

        Parameters
        ----------
        scenario
            A valid scenario.
        policies
            PolicySpecs, policy names or dicts (as :func:`policy_specs` takes them).
        n_seeds
            Independent seeds.
        limits
            The bounds, e.g. the app's :data:`APP_LIMITS`.

        Raises
        ------
        SpecError
            For the first setting that is not valid: ``policies`` (none, or too many),
            ``n_seeds`` (out of range, or over the budget of horizon x seeds x policies), a
            hyperparameter (``"<policy>.<name>"``) or a field of the scenario.

            >>> from allseason.limits import APP_LIMITS
            >>> Race.checked(Scenario(), ["lints"], 12, APP_LIMITS)
            Traceback (most recent call last):
            ...
            allseason.errors.SpecError: n_seeds: must be between 1 and 10, got 12
        """
        policies = tuple(policies)
        if not policies:
            raise SpecError("policies", "choose at least one policy")
        if len(policies) > limits["n_policies"]:
            raise SpecError("policies", f"at most {limits['n_policies']} policies{limits.where}")
        n_seeds = _int("n_seeds", n_seeds, 1, min(limits["n_seeds"], LIMITS["n_seeds"]))
        # policy_specs checks each contestant not yet a PolicySpec, and the engine's bounds
        race = cls._of_checked(check_limits(scenario, limits), policy_specs(policies), n_seeds)
        budget = limits.get("budget")
        work = scenario.horizon * n_seeds * len(race.policies)
        if budget is not None and work > budget:
            raise SpecError(
                "n_seeds",
                f"horizon × seeds × policies is {work:,}; at most {budget:,}{limits.where}. "
                f"Use fewer seeds or policies, or a shorter horizon",
            )
        return race

    def to_dict(self) -> dict:
        """The race as plain data (JSON-ready)."""
        return {
            "scenario": self.scenario.to_dict(),
            "n_seeds": self.n_seeds,
            "policies": [p.to_dict() for p in self.policies],
        }

    def to_json(self) -> str:
        """The race's canonical JSON (sorted keys, no spaces): its identity."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data, limits: Limits = LIMITS) -> Race:
        """The race of a plain dict (``to_dict``'s, e.g. a race JSON sent back), checked
        within ``limits`` (:meth:`checked`)."""
        if not isinstance(data, dict):
            raise SpecError("race", "must be a JSON object")
        try:
            scenario = Scenario.from_dict(data.get("scenario", {}))
        except SpecError as e:
            raise _said_within(e, limits) from None
        return cls.checked(scenario, data.get("policies", []), data.get("n_seeds", 1), limits)
