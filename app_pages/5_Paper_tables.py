"""Paper tables: the real-data experiments of the paper's section 6, ours beside theirs.

Four tabs: our tables against the paper's, LinTS's convergence (both read from stored
results), All-Season looked inside on real data, and a small race on real data (both run
now)."""

import streamlit as st

from allseason.ui import frame, paper, paper_runs

frame.page(
    "Does All-Season beat the baselines on real data, as the paper says? Images of "
    "digits (MNIST) and clothes (Fashion-MNIST) become a bandit: the algorithm sees an "
    "image and picks an answer (two-arm: e.g. *even or odd*; ten-arm: the class), and "
    "**the task changes with the seasons**. Reward 1 for a right answer."
)

tab_tables, tab_conv, tab_inside, tab_live = st.tabs(
    [
        "Our tables vs the paper's",
        "LinTS convergence",
        "Inside All-Season on real data",
        "Run a small race on real data",
    ]
)
with tab_tables:
    with frame.guard("the paper tables"):
        paper.tables()
with tab_conv:
    with frame.guard("the LinTS convergence figure"):
        paper.convergence()
with tab_inside:
    with frame.guard("All-Season on real data"):
        paper_runs.inside_real()
with tab_live:
    with frame.guard("the real-data race"):
        paper_runs.live_race()
