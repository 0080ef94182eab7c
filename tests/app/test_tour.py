"""The guided tour under ``streamlit.testing.v1.AppTest``: every step opened from its link
(``?step=k``), Next, Back and the step picker moving the step and the URL, bad step values
answered with a message (never an exception), one figure and at most three sentences per
step, and the numbers of the texts equal to those computed here from the engine.

The tour is opened through ``app.py`` and ``switch_page``: ``app.py`` registers the pages
(``st.navigation``) that the tour's links point to, so a page file cannot be the entry point
of an AppTest on its own.
"""

from __future__ import annotations

import json
import re
import statistics

import pytest

pytest.importorskip("streamlit")
pytest.importorskip("plotly")

from conftest import open_app_page
from streamlit.testing.v1 import AppTest

from allseason import api
from allseason.paper import mnist_snapshot as snapshot

TOUR = "app_pages/6_Guided_tour.py"
N_STEPS = 7
TITLES = (
    "The seasons",
    "The race",
    "Who holds the weight",
    "Births and prunings",
    "A season returns",
    "The printed rule",
    "Real data",
)
TIMEOUT = 180  # the first run warms the kernels up and runs the default race


# --- helpers --------------------------------------------------------------------------------
def open_tour(step: str | None = None) -> AppTest:
    return open_app_page(TOUR, query=None if step is None else {"step": step}, timeout=TIMEOUT)


def qstep(at: AppTest) -> str:
    """The ``step`` of the page URL (AppTest gives a string, or a list for a repeated key)."""
    v = at.query_params.get("step")
    return v[-1] if isinstance(v, list) else v


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def title(at: AppTest) -> str:
    return at.title[0].value


def body_texts(at: AppTest) -> list[str]:
    """The markdown of the main column but the page's one-line purpose."""
    return [m.value for m in at.main.markdown if not m.value.startswith("**Guided tour**")]


def step_text(at: AppTest) -> str:
    texts = body_texts(at)
    assert len(texts) == 1, texts
    return texts[0]


def sentences(text: str) -> list[str]:
    """Sentences of a Markdown text: split after . ! ? followed by a space or the end (so
    numbers like 0.733 do not split)."""
    plain = re.sub(r"[*_`]", "", text).strip()
    return [s for s in re.split(r"(?<=[.!?])\s+", plain) if s.strip()]


def figures(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def fig_title(fig: dict) -> str:
    t = fig["layout"].get("title", {})
    return t.get("text", "") if isinstance(t, dict) else str(t)


def pct(x: float) -> str:
    """A share as the tour writes it (one decimal; two below 1%)."""
    if x == 0 or x >= 0.01:
        return f"{100 * x:.1f}%"
    return f"{100 * x:.2f}%" if x >= 0.0001 else "less than 0.01%"


@pytest.fixture(scope="module")
def engine():
    """The default race computed here, directly with the engine (not through the app)."""
    race = api.default_race()
    return race, api.run_race(race)


# --- every step -----------------------------------------------------------------------------
@pytest.mark.parametrize("k", range(1, N_STEPS + 1))
def test_each_step_opens_from_its_link(k):
    at = open_tour(str(k))
    assert_clean(at)
    assert not at.warning
    assert title(at) == f"Step {k} of {N_STEPS} · {TITLES[k - 1]}"
    assert qstep(at) == str(k)
    figs = figures(at)
    assert len(figs) == 1, f"step {k}: {len(figs)} figures"
    assert 380 <= figs[0]["layout"]["height"] <= 420
    assert fig_title(figs[0])
    text = step_text(at)
    assert 1 <= len(sentences(text)) <= 3, sentences(text)
    captions = [c.value for c in at.main.caption]
    assert len(captions) == 1 and 20 <= len(captions[0]) <= 320, captions
    assert at.segmented_control(key="tour_pick").value == k
    assert at.button(key="tour_back").disabled == (k == 1)
    assert at.button(key="tour_next").disabled == (k == N_STEPS)


def test_no_step_in_the_link_is_step_one():
    at = open_tour()
    assert_clean(at)
    assert not at.warning
    assert title(at).startswith("Step 1 of 7")
    assert qstep(at) == "1"


@pytest.mark.parametrize("bad", ["abc", "99", "0", "-1", "2.5", "8", "1e3", "３"])
def test_a_bad_step_gets_a_message_and_step_one(bad):
    at = open_tour(bad)
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.warning) == 1
    message = at.warning[0].value
    assert f"“{bad}”" in message and "1 to 7" in message and "step 1" in message
    assert title(at).startswith("Step 1 of 7")
    assert len(at.get("plotly_chart")) == 1
    assert qstep(at) == "1"  # the link is mended


def test_next_and_back_move_the_step_and_the_url():
    at = open_tour("3")
    at.button(key="tour_next").click().run()
    assert_clean(at)
    assert title(at).startswith("Step 4 of 7") and qstep(at) == "4"
    for want in (3, 2, 1):
        at.button(key="tour_back").click().run()
        assert_clean(at)
        assert title(at).startswith(f"Step {want} of 7")
        assert qstep(at) == str(want)
    assert at.button(key="tour_back").disabled
    for want in range(2, N_STEPS + 1):  # walk to the end with Next
        at.button(key="tour_next").click().run()
        assert_clean(at)
        assert title(at) == f"Step {want} of 7 · {TITLES[want - 1]}"
        assert qstep(at) == str(want)
        assert len(at.get("plotly_chart")) == 1
    assert at.button(key="tour_next").disabled


def test_the_picker_jumps_to_a_step():
    at = open_tour("2")
    at.segmented_control(key="tour_pick").set_value(6).run()
    assert_clean(at)
    assert title(at).startswith("Step 6 of 7") and qstep(at) == "6"
    at.segmented_control(key="tour_pick").set_value(None).run()  # click on the current one
    assert_clean(at)
    assert title(at).startswith("Step 6 of 7")


# --- the numbers are the engine's -----------------------------------------------------------
def texts_of(*steps: int) -> dict[int, tuple[str, str, dict]]:
    """{step: (text, caption, figure)} of the given steps, one session."""
    at = open_tour(str(steps[0]))
    out = {}
    for k in steps:
        if k != steps[0]:
            at.segmented_control(key="tour_pick").set_value(k).run()
        assert_clean(at)
        out[k] = (step_text(at), at.main.caption[0].value, figures(at)[0])
    return out


def test_numbers_in_the_texts_are_the_engines(engine):
    race, result = engine
    pattern = race.scenario.pattern
    new = pattern.first_seen()
    summary = result.summary()
    carried = api.ensemble_summary(result.traces["allseason-sw", 0], pattern)
    printed = api.ensemble_summary(result.traces["allseason-sw-printed", 0], pattern)
    shown = {
        lab: s
        for lab, s in summary.items()  # the oracles are not in the tour's story
        if lab not in ("random", "allseason-sw-printed", *api.REFERENCES)
    }
    best = min(
        (lab for lab in shown if api.role(lab).family != "allseason"),
        key=lambda lab: shown[lab]["cum_regret"],
    )
    t = texts_of(1, 2, 3, 4, 5, 6)

    one = t[1][0]
    assert f"{pattern.n_states} seasons" in one and f"{race.scenario.horizon:,} steps" in one
    assert f"changes {len(new)} times" in one and f"{int((~new).sum())} of these" in one

    two, cap2, fig2 = t[2]
    assert f"{race.n_seeds} times each" in two
    for lab in ("allseason-sw", "allseason-disc", best):
        assert f"{summary[lab]['cum_regret']:,.0f}" in two, lab
    assert "SW-LinTS" in two or "D-LinTS" in two or "LinTS" in two
    assert f"{summary['random']['cum_regret']:,.0f}" in cap2
    names = [
        d["name"]
        for d in fig2["data"]
        if d.get("showlegend", True) is not False and d.get("legendgroup") != "seasons"
    ]
    assert names[:2] and all(n.startswith("All-Season") for n in names[:2]), names
    assert not any(n.startswith(("Random", "All-Season (SW), printed")) for n in names)

    three, cap3, fig3 = t[3]
    assert f"after {pct(carried['top_share'])} of the steps" in three
    learnt = api.learnt_by(result.traces["allseason-sw", 0], pattern)
    for state, ids in learnt.items():
        assert f"state {state} by bandit" in three and str(ids[0]) in three
    assert api.learnt_by_text(learnt).replace("*", "\\*") in cap3
    assert "All-Season (SW)" in fig_title(fig3) and "printed" not in fig_title(fig3)

    four = t[4][0]
    events = result.traces["allseason-sw", 0].events
    assert f"created {carried['bandits_created']:,} base bandits" in four
    prunes = sum(e.kind in ("prune", "discard") for e in events)
    assert f"pruned {prunes:,}" in four if prunes else "pruned none" in four

    five = t[5][0]
    delays = [d for d in carried["recall_delays"] if d == d]
    assert f"came back {len(carried['recall_delays'])} times" in five
    assert f"median {statistics.median(delays):,.0f}" in five
    assert f"{min(delays):,.0f}" in five and f"{max(delays):,.0f}" in five

    six, _, fig6 = t[6]
    assert (
        f"created {printed['bandits_created']:,} base bandits against "
        f"{carried['bandits_created']:,} with carried weights" in six
    )
    assert (
        f"after {pct(printed['top_share'])} of the steps against {pct(carried['top_share'])}" in six
    )
    assert f"{printed['mean_reward']:.3f}" in six and f"{carried['mean_reward']:.3f}" in six
    assert "printed rule" in fig_title(fig6)


def test_real_data_numbers_are_the_snapshots():
    snap = snapshot.load()
    pols = snap["policies"]
    text, caption, fig = texts_of(7)[7]
    assert f"{snap['n']:,} handwritten digits" in text and "10 arms" in text
    assert f"changes {len(snap['change_points'])} times" in text
    assert f"{pols['allseason-sw']['mean_reward']:.3f}" in text
    assert f"{pols['allseason-sw-printed']['mean_reward']:.3f}" in text
    best = max(
        (lab for lab in pols if api.role(pols[lab]["policy"]).family != "allseason"),
        key=lambda lab: pols[lab]["mean_reward"],
    )
    assert f"{pols[best]['mean_reward']:.3f}" in text
    lines = [d for d in fig["data"] if d.get("mode") == "lines"]
    assert lines[0]["name"] == "All-Season (SW)"  # best first
    assert {d["name"] for d in lines} >= {
        "All-Season (SW)",
        "All-Season (SW), printed rule",
        "D-LinTS",
        "SW-LinTS",
        "LinTS",
    }
    vlines = [s for s in fig["layout"].get("shapes", []) if s.get("type") == "line"]
    assert sorted(s["x0"] for s in vlines) == snap["change_points"]
