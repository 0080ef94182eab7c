"""Home: what a seasonal reward is and what All-Season does (the default page of ``app.py``)."""

import streamlit as st

from allseason.ui import state, views

views.page(
    "All-Season: a bandit that remembers the seasons",
    "A recommender learns what people like, but what people like **changes with "
    "the season — and the seasons come back**.",
    icon=":material/eco:",
)
with views.guard("the home page"):
    views.url_errors()
    left, right = st.columns([1, 1.2], gap="large")
    with left:
        st.subheader("Seasonal rewards")
        st.markdown(
            "Spooky tracks are played in late October, carols in December, calm music "
            "at night and upbeat music by day. Each of these is a **state** in which the "
            "reward of every choice (arm) follows its own rule, a linear one here: "
            "reward = ⟨θ, arm⟩ + noise. The state changes suddenly, without warning, and "
            "an old state often **returns**: Halloween every year, night every evening."
        )
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
        st.button(
            "▶ Run the paper's synthetic experiment",
            type="primary",
            key="home_run",
            on_click=state.start_default_race,
            help="10,000 steps, 4 seasons, 8 change points, 5 seeds. All-Season "
            "(carried weights, two shadows), All-Season with the paper's printed "
            "rule, and the baselines LinTS, SW-LinTS, D-LinTS and random, "
            "tuned on a validation seed. A few seconds.",
        )
        if st.session_state.get(state.AUTORUN):
            st.switch_page("app_pages/2_Race.py")
        st.markdown("**Or explore step by step:**")
        st.page_link(
            "app_pages/1_Pattern_builder.py",
            icon=":material/calendar_month:",
            label="Pattern builder: design the seasons",
        )
        st.page_link(
            "app_pages/2_Race.py",
            icon=":material/sports_score:",
            label="Race: All-Season against the baselines",
        )
        st.page_link(
            "app_pages/3_Inside_All-Season.py",
            icon=":material/troubleshoot:",
            label="Inside All-Season: how it decided",
        )
    with right:
        views.home_picture()
