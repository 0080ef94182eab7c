"""reproduce.play_job's sigma2 / lambda / rng / label overrides: the same run as one built by
hand from the engine's pieces (paper_setup, PolicySpec, play), decision for decision. Real
data, 600 steps; skips (with the install command) where MNIST is not installed."""

import json

import numpy as np
import pytest

from allseason.envs.classification import paper_setup
from allseason.envs.datasets import DataUnavailable
from allseason.paper import protocol
from allseason.paper import reproduce as R
from allseason.sim.runner import play
from allseason.specs import PolicySpec

pytestmark = pytest.mark.usefixtures("private_data_cache")  # see conftest.py
N = 600


@pytest.fixture(scope="module")
def setup():
    try:
        return paper_setup("mnist", "2arm", "regular", n=N)
    except DataUnavailable as exc:
        pytest.skip(str(exc))


def _by_hand(setup, params, sigma2, lam, rng):
    spec = PolicySpec("allseason-sw", {**params, "sigma2": sigma2, "lam": lam})
    policy = spec.build(setup.d, rng=rng, horizon=setup.horizon)
    return play(setup.env(), policy, setup.batch_ends(), label="x", seed_index=0)


@pytest.mark.parametrize("sigma2, lam", [(0.05, 10.0), (1.0, 0.1)])
def test_overrides_equal_a_run_built_by_hand(setup, sigma2, lam):
    params = {"tau": 50, "n_max": 3}
    job = R.Job(
        "diagnosis",
        "mnist-2arm",
        "regular",
        "allseason-sw",
        json.dumps(params, sort_keys=True),
        0,
        N,
    )
    # a fresh SeedSequence each time: a policy may spawn child streams, which advances it
    trace, got_setup, _ = R.play_job(
        job, sigma2=sigma2, lam=lam, rng=np.random.default_rng(7), label="x"
    )
    want = _by_hand(setup, params, sigma2, lam, np.random.default_rng(7))
    assert got_setup.d == setup.d and trace.label == "x"
    np.testing.assert_array_equal(trace.arm, want.arm)
    np.testing.assert_array_equal(trace.reward, want.reward)


def test_no_override_is_the_protocols_run(setup):
    """Without overrides, play_job plays SIGMA2 and LAM on the job's own stream (protocol._rng)."""
    params = {"tau": 50, "n_max": 3}
    job = R.Job(
        "test", "mnist-2arm", "regular", "allseason-sw", json.dumps(params, sort_keys=True), 1, N
    )
    plain, _, _ = R.play_job(job)
    same, _, _ = R.play_job(job, sigma2=R.SIGMA2, lam=R.LAM, rng=protocol._rng(job))
    other, _, _ = R.play_job(job, sigma2=0.05)
    want = _by_hand(setup, params, R.SIGMA2, R.LAM, protocol._rng(job))
    np.testing.assert_array_equal(plain.arm, want.arm)
    np.testing.assert_array_equal(same.arm, plain.arm)
    assert plain.label == "allseason-sw"
    assert not np.array_equal(other.arm, plain.arm)  # the override does reach the model
