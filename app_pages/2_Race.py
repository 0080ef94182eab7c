"""Race: several policies on the scenario, live; cumulative reward and regret, leaderboard."""

import streamlit as st

from allseason.ui import forms, state, views

views.page(
    "Race",
    "Choose the contestants and run them on the scenario, each on the same arms and "
    "noise. The chart fills in while the race runs.",
    icon=":material/sports_score:",
)

with views.guard("the race"):
    views.url_errors()
    scenario = state.scenario()
    state.sync_url()
    st.markdown(views.scenario_line(scenario))
    st.page_link(
        "app_pages/1_Pattern_builder.py",
        label="Change the scenario",
        icon=":material/calendar_month:",
    )
    race = forms.race_settings()
    forms.race_upload()
    # the seasons the race is run on (drawn with the page, so the chart code is loaded
    # before the click, not after it)
    views.pattern_preview(scenario, st.container(), key="race_timeline", lane_px=22)
    # progress, chart, leaderboard, downloads: the Run button reruns only this section,
    # and the chart picker in it only the chart
    views.race_section(race)
    # outside the section: a fragment's rerun cannot check page links under AppTest
    st.page_link(
        "app_pages/3_Inside_All-Season.py",
        label="Next: look inside All-Season in your last race",
        icon=":material/troubleshoot:",
    )
