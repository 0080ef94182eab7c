"""A new policy is one class: declared here, registered, and nothing else touched, it is in the
CLI's ``policies`` listing, in a race, in a sweep file, in the app's policy picker (with its
hyperparameter inputs), in figures with a style of its own, and its values are checked from
its declaration.

The class is registered by a fixture and removed afterwards, so other test modules (which
loop over the registry) never see it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from allseason import api
from allseason.cli import main
from allseason.policies import REGISTRY, Policy, register
from allseason.policies.params import COUNT, Interval, Options, Param, Real

ROOT = Path(__file__).resolve().parents[2]


class EpsilonGreedy(Policy):
    """Plays the arm with the best ridge estimate <theta_hat, x>; with probability epsilon (and
    for the first ``warm`` steps) a uniformly random one."""

    name = "eps-greedy"
    title = "ε-greedy"
    help = "The greedy ridge estimate, a random arm with probability epsilon"
    params = {
        "epsilon": Param(Interval(Real, 0, 1, closed="both"), "Probability of a random arm."),
        "warm": Param(COUNT, "Steps played at random at the start."),
        "tie": Param(Options("first", "last"), "Which arm wins a tie."),
    }
    uses_normals = False

    def __init__(self, d, *, epsilon=0.1, warm=5, tie="first", rng=None):
        super().__init__(d, rng=rng)
        self._set_params(epsilon=epsilon, warm=warm, tie=tie)
        self.A, self.b = np.eye(self.d), np.zeros(self.d)

    def _select(self, arms, u, z):
        n_arms = arms.shape[0]
        if self.t < self.warm:
            return min(int(u * n_arms), n_arms - 1)
        if u < self.epsilon:  # u / epsilon is uniform on [0, 1) here
            return min(int(u / self.epsilon * n_arms), n_arms - 1)
        scores = arms @ np.linalg.solve(self.A, self.b)
        return int(
            np.argmax(scores) if self.tie == "first" else n_arms - 1 - np.argmax(scores[::-1])
        )

    def update(self, xs, rs):
        xs = np.atleast_2d(xs)
        self.A += xs.T @ xs
        self.b += xs.T @ np.atleast_1d(rs)


@pytest.fixture
def registered():
    register(EpsilonGreedy)
    yield EpsilonGreedy
    del REGISTRY[EpsilonGreedy.name]


def test_the_cli_lists_it_with_its_declaration(registered, capsys):
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    assert "eps-greedy" in out and "ε-greedy" in out and "a random arm with probability" in out
    assert "epsilon=0.1" in out and "a number in [0, 1]" in out
    assert "tie='first'" in out and "one of 'first', 'last'" in out


def test_it_races(registered):
    scenario = api.Scenario(segments=((0, 150), (1, 150)), batch_size=5, preset="custom")
    race = api.Race(scenario, api.policy_specs(["eps-greedy", "lints"]), n_seeds=2)
    summary = api.run_race(race).summary()
    assert set(summary) == {"eps-greedy", "lints"}
    assert np.isfinite(summary["eps-greedy"]["mean_reward"])


def test_its_values_are_checked_from_the_declaration(registered):
    with pytest.raises(api.SpecError) as err:
        api.PolicySpec("eps-greedy", {"epsilon": 1.5})
    e = err.value
    assert e.field == "eps-greedy.epsilon" and e.bounds == (0, 1) and e.got == 1.5
    assert str(e) == "eps-greedy.epsilon: must be a number in [0, 1], got 1.5"
    with pytest.raises(
        api.SpecError, match="unknown hyperparameter; eps-greedy takes epsilon, tie, warm"
    ):
        api.PolicySpec("eps-greedy", {"tau": 3})


def test_a_sweep_file_takes_it(registered, tmp_path):
    from allseason import sweeps

    path = tmp_path / "eps.toml"
    path.write_text(
        'seeds = 2\n[[scenarios]]\npreset = "regular"\nhorizon = 200\n'
        '[[policies]]\nname = "eps-greedy"\ngrid = { epsilon = [0.05, 0.2], '
        'tie = ["first", "last"] }\n'
    )
    spec = sweeps.SweepSpec.from_file(path)
    assert spec.n_runs == 8
    path.write_text(path.read_text().replace('"last"', '"middle"'))
    with pytest.raises(api.SpecError) as err:
        sweeps.SweepSpec.from_file(path)
    assert err.value.field.endswith("grid.tie") and "one of 'first', 'last'" in str(err.value)


def test_the_app_offers_it(registered):
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.switch_page("app_pages/2_Race.py")  # opened by its link: Home is not what is checked
    at.run()
    picker = at.multiselect(key="race_policies")
    assert "ε-greedy" in picker.options
    picker.set_value(["eps-greedy", "lints"]).run()
    assert not at.exception
    # its hyperparameters get inputs built from the declaration
    assert at.selectbox(key="hp_eps-greedy_tie").options == ["first", "last"]
    assert at.number_input(key="hp_eps-greedy_warm").value == 5
    at.number_input(key="hp_eps-greedy_epsilon").set_value(3.0).run()
    # the message is escaped for Markdown (outside text: viz.text.md); it reads the same
    assert any("must be a number in [0, 1], got 3.0" in e.value.replace("\\", "") for e in at.error)


def test_it_gets_a_style_of_its_own(registered):
    pytest.importorskip("plotly")
    from allseason.viz import style

    names = list(REGISTRY)
    colours = style.policy_colors(names)
    assert len(set(colours.values())) == len(names)
    assert len({style.policy_symbol(n) for n in names}) == len(names)
    assert style.policy_name("eps-greedy") == "ε-greedy"
    # the default race keeps its looks
    assert colours["allseason-sw"] == style.OKABE_ITO["blue"]


def test_an_undeclared_hyperparameter_is_refused_at_registration():
    class Sloppy(Policy):
        name = "sloppy"

        def __init__(self, d, *, alpha=1.0, rng=None):
            super().__init__(d, rng=rng)

    with pytest.raises(TypeError, match="'alpha' is not declared"):
        register(Sloppy)
    assert "sloppy" not in REGISTRY


def test_the_race_json_names_it(registered):
    race = api.Race(api.Scenario(), api.policy_specs(["eps-greedy"]), 1)
    assert json.loads(race.to_json())["policies"][0]["name"] == "eps-greedy"
