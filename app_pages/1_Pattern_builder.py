"""Pattern builder: design the seasons and the environment; keep, download, share them.

From the top: the seasons (preset, states, horizon, the segment table) beside their timeline,
the environment, then the scenario's files and its link."""

import streamlit as st

from allseason.ui import frame, pattern, state

frame.page(
    "Design the **seasons** (which state is in force, and for how long) and the "
    "**environment** the bandits play in. The scenario is kept when you change "
    "page, and this page's address is a link that reproduces it."
)

with frame.guard("the pattern builder"):
    frame.url_errors()
    scenario, preview = pattern.scenario_builder()
    state.sync_url()  # the link holds the scenario in force
    frame.pattern_preview(scenario, preview)
    st.subheader("3 · Save, load, share")
    pattern.scenario_files(scenario)
    st.divider()
    frame.page_link("app_pages/2_Race.py", "Next: race the policies on this scenario")
