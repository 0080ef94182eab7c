"""The Home page: what a seasonal reward is, what All-Season does, the button that runs the
paper's synthetic experiment, and the way on. Every number it quotes is the default race's
(``api.race_in_words``), never typed."""

from __future__ import annotations

import streamlit as st

from allseason import api

from . import frame, keys, state


def seasonal_rewards() -> None:
    st.subheader("Seasonal rewards")
    st.markdown(
        "Spooky tracks are played in late October, carols in December, calm music "
        "at night and upbeat music by day. Each of these is a **state** in which the "
        "reward of every choice (arm) follows its own rule, a linear one here: "
        "reward = ⟨θ, arm⟩ + noise. The state changes suddenly, without warning, and "
        "an old state often **returns**: Halloween every year, night every evening."
    )


def what_allseason_does() -> None:
    st.subheader("What All-Season does")
    st.markdown(
        "1. It keeps a few linear Thompson-sampling bandits, ideally one per season "
        "it has met (*base bandits*), plus a *shadow* bandit that only remembers the "
        "last few steps.\n"
        "2. After every batch of rewards it weighs each bandit by how well it "
        "predicted them.\n"
        "3. At every step a bandit is drawn by weight, and it picks the arm.\n"
        "4. When a known season returns, the bandit that learnt it predicts best and "
        "takes over; when a new season starts only the shadow keeps up, and each "
        "time it plays it is copied into a new base bandit.\n"
        "5. Above a maximum number of base bandits, the most similar pair is found "
        "and the less certain one is pruned.\n\n"
        "Here the weights are **carried** from batch to batch (fixed share): our "
        "reconstruction, from the paper's description of its own figure. The paper's "
        "printed rule weighs each bandit on the last batch alone; read literally it "
        "makes All-Season lose its own experiment, so it races beside the default as "
        "*All-Season (SW), printed rule*, and the Inside page compares the two."
    )


def run_button() -> None:
    """Run the paper's synthetic experiment: the default race, on the Race page."""
    words = api.race_in_words()
    st.button(
        "▶ Run the paper's synthetic experiment",
        type="primary",
        key="home_run",
        on_click=state.start_default_race,
        help=f"{words['scenario']}, {words['seeds']}. All-Season "
        "(carried weights, two shadows), All-Season with the paper's printed "
        "rule, and the baselines LinTS, SW-LinTS, D-LinTS and random, "
        "tuned on a validation seed. A few seconds.",
    )
    if st.session_state.get(keys.AUTORUN):
        st.switch_page("app_pages/2_Race.py")


def ways_on() -> None:
    st.markdown("**Or explore step by step:**")
    frame.page_link("app_pages/1_Pattern_builder.py", "Pattern builder: design the seasons")
    frame.page_link("app_pages/2_Race.py", "Race: All-Season against the baselines")
    frame.page_link("app_pages/3_Inside_All-Season.py", "Inside All-Season: how it decided")


def picture() -> None:
    """The paper's synthetic pattern: seasons that change suddenly and come back."""
    from allseason.viz import timeline

    sc = api.Scenario()
    pattern = sc.pattern
    n_states, n_changes = pattern.n_states, len(pattern.change_points())
    frame.chart(
        timeline.pattern_timeline(pattern, height=330),
        f"The paper's synthetic experiment: {n_states} states, {n_changes} change points. "
        "At each ▼ a state appears for the first time and All-Season must grow a new "
        "bandit; at each ○ a state comes back and it should recall the bandit that learnt it.",
        "paper-pattern",
        "home_pattern",
    )
