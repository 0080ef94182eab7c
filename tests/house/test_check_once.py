"""Each value checked once: a Race click under AppTest counts every hyperparameter check
(:meth:`Param.check`, the one validator of a value) and every :class:`PolicySpec` built, and
finds each of the race's hyperparameter values checked once, no policy built re-checking."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.policies import params as params_mod
from allseason.specs import race as race_mod
from allseason.ui import keys, runcache

ROOT = Path(__file__).resolve().parents[2]
SMALL = api.Scenario(
    segments=((0, 400), (1, 300), (0, 300)), d=2, n_arms=4, sigma2=0.1, batch_size=5, seed=3
)


def _counting(monkeypatch) -> Counter:
    """Count, outside the warm-up threads, each value's check and each spec and race built."""
    counts: Counter = Counter()

    def counted(kind, fn):
        def wrapper(*args, **kwargs):
            if "warm-up" not in threading.current_thread().name:  # the process's own
                counts[kind] += 1
            return fn(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(params_mod.Param, "check", counted("value", params_mod.Param.check))
    spec_init = race_mod.PolicySpec.__post_init__
    monkeypatch.setattr(race_mod.PolicySpec, "__post_init__", counted("spec", spec_init))
    race_init = race_mod.Race.__post_init__
    monkeypatch.setattr(race_mod.Race, "__post_init__", counted("race", race_init))
    checked = race_mod.Race.checked.__func__
    monkeypatch.setattr(race_mod.Race, "checked", classmethod(counted("race", checked)))
    return counts


def click_counts(monkeypatch) -> tuple[Counter, api.Race]:
    """The checks of opening the Race page and one click on Run (the default contestants and seeds,
    on a small scenario), and the race it ran."""
    runcache.store().clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.session_state[keys.SCENARIO] = SMALL
    at.run()
    runcache.warm_up(wait=True)
    counts = _counting(monkeypatch)
    at.switch_page("app_pages/2_Race.py")
    at.run()  # the settings read, the race built
    at.button(key="race_run").click()
    at.run()  # the race run
    assert not at.exception, [e.value for e in at.exception]
    counts = Counter(counts)  # what the page did, not the look-up below
    race = at.session_state[keys.LAST_RACE]  # the api.Race the page ran
    return counts, race


def test_a_race_click_checks_each_value_once(monkeypatch):
    counts, race = click_counts(monkeypatch)
    n_values = sum(len(p.params) for p in race.policies)
    print(
        f"\nper Race click ({len(race.policies)} policies x {race.n_seeds} seeds, "
        f"{n_values} hyperparameter values): {dict(counts)}"
    )
    assert counts["spec"] == len(race.policies)  # one PolicySpec per contestant
    assert counts["value"] == n_values  # each value checked once, none at the builds
    assert counts["race"] <= 1


def test_declared_defaults_are_valid_and_already_converted():
    """A policy built from a checked spec trusts its ``__init__`` defaults: each one passes its
    declaration and keeps its type (an int for an integer, a float for a number)."""
    from allseason.policies import REGISTRY, check_params, declared

    for name, cls in REGISTRY.items():
        defaults = {k: p.default for k, p in declared(cls).items() if p.default is not None}
        converted = check_params(name, defaults)
        assert {k: (v, type(v)) for k, v in converted.items()} == {
            k: (v, type(v)) for k, v in defaults.items()
        }, name


def test_a_spec_keeps_its_values_converted_and_its_policy_checks_none(monkeypatch):
    spec = api.PolicySpec("sw-lints", {"tau": 10.0, "lam": 2})
    assert dict(spec.params) == {"tau": 10, "lam": 2.0}
    assert isinstance(dict(spec.params)["tau"], int)
    counts = _counting(monkeypatch)
    policy = spec.build_for(SMALL, rng=0)
    assert (policy.tau, policy.lam, policy.sigma2) == (10, 2.0, SMALL.sigma2)
    assert counts["value"] == 0
    # what the spec does not hold and the caller gives is checked, once
    policy = spec.build(2, sigma2=0.5, rng=0)
    assert counts["value"] == 1 and policy.sigma2 == 0.5
    with pytest.raises(api.SpecError, match="sigma2"):
        spec.build(2, sigma2=-1.0)


def test_a_scenario_bounds_its_noise_and_horizon_as_the_policies_do():
    """build_for trusts a scenario's sigma2 and horizon: the scenario's bounds are the
    policies' declared ones."""
    from allseason.limits import LIMITS, NOISE_RANGE
    from allseason.policies import parameters

    for value in NOISE_RANGE:
        assert parameters("lints")["sigma2"].check("sigma2", value) == value
    for bad in (NOISE_RANGE[0] / 2, NOISE_RANGE[1] * 2):
        with pytest.raises(api.SpecError):
            api.Scenario(sigma2=bad)
    assert parameters("bob")["horizon"].constraint.high == LIMITS["horizon"]


def test_the_engine_alone_builds_a_race_checking_each_value_once(monkeypatch):
    counts = _counting(monkeypatch)
    specs = [{"name": "sw-lints", "params": {"tau": 50}}, {"name": "bob", "params": {"S": 0.5}}]
    race = api.Race(SMALL, api.policy_specs(specs), n_seeds=2)
    api.run_race(race)
    assert counts["value"] == sum(len(p.params) for p in race.policies)


# Module-level MAX_/MIN_ numbers that are not limits on what a user may ask: how much a figure
# or a message shows, the server's own resources, a statistical threshold, bundled data.
NOT_LIMITS = {
    "allseason/viz/live.py": {"MAX_POINTS"},
    "allseason/viz/deployed.py": {"MAX_MARKS"},
    "allseason/viz/paper.py": {"MAX_CHANGE_LINES"},
    "allseason/viz/timeline.py": {"MAX_LANES", "MAX_STATE_LEGEND"},
    "allseason/ui/tour_steps.py": {"MAX_POINTS"},
    "allseason/ui/keygate.py": {"MAX_WAIT_MS"},
    "allseason/ui/runcache.py": {"MAX_ENTRIES", "MAX_BYTES", "MAX_CONCURRENT"},
    "allseason/logs/problems.py": {"MAX_PROBLEMS"},
    "allseason/logs/obd.py": {"MAX_MEMBER"},
    "allseason/logs/evaluate.py": {"MIN_EVENTS"},
}


def test_every_limit_is_defined_once_in_limits_py():
    """No module but allseason/limits.py gives a MAX_/MIN_ or *_LIMITS name a number of its own
    (a name bound to limits.py's value, ``MAX_CELLS = MAX_MAP_CELLS``, is a use, not a
    definition)."""
    import ast
    import re

    name = re.compile(r"^(MAX|MIN)_|_LIMITS$")
    own = []
    for path in sorted((ROOT / "allseason").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "allseason/limits.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.Assign):
                continue
            numbers = [n for n in ast.walk(node.value) if isinstance(n, ast.Constant)]
            literal = numbers and all(isinstance(n.value, int | float) for n in numbers)
            for target in node.targets:
                if (
                    isinstance(target, ast.Name)
                    and name.search(target.id)
                    and literal
                    and target.id not in NOT_LIMITS.get(rel, ())
                    and not isinstance(node.value, ast.IfExp)
                ):
                    own.append(f"{rel}: {target.id}")
    assert not own, "define these in allseason/limits.py: " + ", ".join(own)
