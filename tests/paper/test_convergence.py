"""Section 6's LinTS convergence figure (allseason/paper/convergence.py): the "learnt" rule against
a
direct computation, the stationary setup, the tracked snapshot recomputed for one seed, the
figure, and the Paper tables page showing it without an exception."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from allseason.envs.datasets import DataUnavailable
from allseason.paper import convergence as conv

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _direct_learnt(per_batch, b, window, level, plateau_from):
    plateau = per_batch[plateau_from // b :].mean()
    wb = window // b
    for i in range(wb - 1, len(per_batch)):
        if per_batch[i - wb + 1 : i + 1].mean() >= level * plateau:
            return (i + 1) * b, plateau
    return -1, plateau


def test_trailing_mean_equals_a_loop():
    x = np.random.default_rng(0).random(37)
    want = [x[max(0, i - 5 + 1) : i + 1].mean() for i in range(37)]
    np.testing.assert_allclose(conv.trailing_mean(x, 5), want)


@pytest.mark.parametrize("seed", range(4))
def test_learnt_at_equals_a_direct_computation(seed):
    rng = np.random.default_rng(seed)
    n = 3000  # batches
    curve = 0.9 * (1 - np.exp(-np.arange(n) / rng.uniform(50, 400))) + 0.05 * rng.random(n)
    got = conv.learnt_at(curve, 10)
    want = _direct_learnt(curve, 10, conv.WINDOW, conv.LEVEL, conv.PLATEAU_FROM)
    assert got[0] == want[0] and got[1] == pytest.approx(want[1])
    assert got[0] > conv.WINDOW - 10  # only full windows count


def test_learnt_at_a_step_and_at_once():
    step = np.r_[np.zeros(1000), np.ones(2000)]  # learns at once after 10,000 observations
    assert conv.learnt_at(step) == (10_480, 1.0)  # 48 of the 50 batches right: 0.96 >= 0.95
    flat = np.full(3000, 0.8)
    assert conv.learnt_at(flat)[0] == conv.WINDOW  # the first full window


def test_snapshot_is_small_and_consistent():
    assert conv.PATH.stat().st_size < 8_000
    snap = conv.load()
    assert snap["n"] == conv.N and snap["seeds"] == conv.SEEDS == len(snap["learnt_at"])
    assert snap["median_learnt_at"] == float(np.median(snap["learnt_at"]))
    assert len(snap["curve"]) == len(snap["curve_steps"]) == conv.N // 10 // 10
    assert all(0 < a < conv.N for a in snap["learnt_at"])
    assert snap["paper_claim"] == 2000 and "2000 observations" in conv.PAPER_QUOTE


@pytest.fixture(scope="module")
def seed0(private_data_cache):
    try:
        setup = conv.stationary_setup()
    except DataUnavailable as exc:
        pytest.skip(str(exc))
    return setup, conv.batch_rewards(0, setup=setup)


def test_stationary_setup_is_one_state_the_identity_task(seed0):
    setup, _ = seed0
    assert setup.pattern.n_states == 1 and setup.pattern.horizon == conv.N
    assert (setup.n_arms, setup.p, setup.batch_size) == (10, 44, 10)
    env = setup.env()
    np.testing.assert_array_equal(env.correct, env.labels)  # arm k is right for digit k


def test_snapshot_recomputed_for_seed_0(seed0):
    """The tracked numbers of seed 0 equal a fresh run, so the snapshot cannot drift."""
    setup, per_batch = seed0
    snap = conv.load()
    at, plateau = conv.learnt_at(per_batch, setup.batch_size)
    assert at == snap["learnt_at"][0]
    assert round(plateau, 6) == snap["plateau"][0]
    assert conv.learnt_at(per_batch, setup.batch_size, level=0.9)[0] == snap["learnt_at_90"][0]
    assert per_batch[:5].mean() < 0.3 < 0.8 < plateau  # it starts near random, then learns


def test_seed_streams():
    rng_a, rng_b = conv._rng(3), conv._rng(3)
    np.testing.assert_array_equal(rng_a.standard_normal(5), rng_b.standard_normal(5))
    assert not np.array_equal(conv._rng(3).random(3), conv._rng(4).random(3))


def test_figure_from_the_snapshot():
    from allseason.viz.convergence import convergence_figure

    snap = conv.load()
    fig = convergence_figure(snap)
    assert len(fig.data) == 3  # the curve, the plateau and its 95% line
    plateau = np.mean(snap["plateau"])
    assert fig.data[1].y[0] == pytest.approx(plateau)
    assert fig.data[2].y[0] == pytest.approx(conv.LEVEL * plateau)
    np.testing.assert_allclose(fig.data[0].y, snap["curve"])
    xs = {round(s.x0) for s in fig.layout.shapes if s.type == "line" and s.x0 == s.x1}
    assert {int(snap["median_learnt_at"]), 2000} <= xs
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "paper: about 2,000" in texts and f"measured: {snap['median_learnt_at']:,.0f}" in texts


def test_paper_page_shows_the_figure():
    pytest.importorskip("streamlit")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("app_pages/5_Paper_tables.py")
    at.run()
    assert not at.exception
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert "LinTS on stationary MNIST: reward per batch" in titles
    text = " ".join(m.value for m in at.markdown)
    assert "about 2000 observations" in text and "We measured" in text


def test_the_snapshot_ships_with_the_package():
    import tomllib

    meta = tomllib.loads((Path(APP).parent / "pyproject.toml").read_text(encoding="utf-8"))
    assert conv.PATH.name in meta["tool"]["setuptools"]["package-data"]["allseason.paper"]
