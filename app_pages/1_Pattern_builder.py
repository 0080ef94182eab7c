"""Pattern builder: design the seasons and the environment; keep, download, share them."""

import streamlit as st

from allseason.ui import forms, views

views.page(
    "Pattern builder",
    "Design the **seasons** (which state is in force, and for how long) and the "
    "**environment** the bandits play in. The scenario is kept when you change "
    "page, and this page's address is a link that reproduces it.",
    icon=":material/calendar_month:",
)

with views.guard("the pattern builder"):
    views.url_errors()
    scenario, preview = forms.scenario_builder()
    views.pattern_preview(scenario, preview)
    st.subheader("3 · Save, load, share")
    forms.scenario_files(scenario)
    st.divider()
    st.page_link(
        "app_pages/2_Race.py",
        label="Next: race the policies on this scenario",
        icon=":material/sports_score:",
    )
