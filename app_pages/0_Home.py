"""Home: what a seasonal reward is and what All-Season does (the default page of ``app.py``).

Left, the idea (seasonal rewards, what All-Season does), the button that runs the paper's
synthetic experiment and the ways on; right, the paper's season pattern."""

import streamlit as st

from allseason.ui import frame, home

frame.page(
    "A recommender learns what people like, but what people like **changes with "
    "the season — and the seasons come back**.",
    heading="All-Season: a bandit that remembers the seasons",
)
with frame.guard("the home page"):
    frame.url_errors()
    left, right = st.columns([1, 1.2], gap="large")
    with left:
        home.seasonal_rewards()
        home.what_allseason_does()
        home.run_button()
        home.ways_on()
    with right:
        home.picture()
